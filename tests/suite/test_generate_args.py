"""--generate-args: tools the user allows are called with arguments drawn from their inputSchema, and no other.

The broken-suite server runs in process (httpx.MockTransport): ``echo`` (annotated read-only) needs
a string ``message``; ``tests/e2e/test_generate_args_e2e.py`` drives the SDK peer whose marked tool
feeds the ``Mcp-Param-*`` rules.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_assay.report.brief import render_brief
from mcp_assay.report.model import Report
from mcp_assay.report.untried import EXPLORE_STEP
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import mock, respond

GENERATED = "tools called with arguments generated from their inputSchema: "


def run(spec: SpecSet, **settings: Any) -> tuple[Report, list[dict[str, Any]]]:
    """The report and the arguments of every tools/call the run sent."""
    config = SuiteConfig(url="http://127.0.0.1:9/mcp", timeout=2.0, stream_budget_ms=300, only="tools", **settings)
    calls: list[dict[str, Any]] = []
    server = Server()
    handler = respond(server)

    async def watching(request: Any) -> Any:
        body = json.loads(request.content or b"null")
        if isinstance(body, dict) and body.get("method") == "tools/call":
            calls.append(body.get("params") or {})
        return await handler(request)

    return asyncio.run(arun(config, spec, mock=mock(watching))), calls


def called(calls: list[dict[str, Any]], name: str) -> list[Any]:
    return [params.get("arguments") for params in calls if params.get("name") == name]


def test_a_named_tool_is_called_with_valid_generated_arguments_and_the_report_says_so(spec: SpecSet) -> None:
    """Tool-defined (issue 13 §4): the tool's call cases run, and the report names it with its arguments."""
    report, calls = run(spec, generate_args=("echo",), generate_args_read_only=False)
    assert {"message": "mcp-assay"} in called(calls, "echo")
    assert any(note.endswith(f'{GENERATED}echo {{"message": "mcp-assay"}}') for note in report.notes), report.notes
    bad = [arguments for arguments in called(calls, "echo") if arguments == {}]
    assert bad, "the bad-arguments case (required property left out) runs on the allowed tool"


def test_with_no_generate_args_read_only_a_tool_with_required_arguments_is_never_called_with_invented_ones(
    spec: SpecSet,
) -> None:
    """Tool-defined (issue 27): --no-generate-args-read-only: never for a tool the user has not named, and the
    report's first lines say which tool was not tried and the flag that tries it."""
    report, calls = run(spec, generate_args_read_only=False)
    assert not [arguments for arguments in called(calls, "echo") if arguments]
    assert not [note for note in report.notes if GENERATED in note] and not report.generated
    (echo,) = [item for item in report.untried if "echo" in item.names]
    assert echo.kind == "tools" and echo.step == "--generate-args-read-only draws them for read-only tools"


def test_by_default_every_read_only_tool_is_called_with_plain_valid_arguments_and_nothing_else(spec: SpecSet) -> None:
    """Issue 27: a plain run trusts readOnlyHint (docs/run.md says why); `ask` carries no such hint and is not called
    with generated arguments, and the report names each generated call with the flag that turns it off."""
    report, calls = run(spec)
    assert {"message": "mcp-assay"} in called(calls, "echo")
    assert any(f"{GENERATED}echo " in note for note in report.notes)
    assert not any("ask" in note for note in report.notes if GENERATED in note)
    assert [(item.tool, item.arguments, item.because) for item in report.generated if item.tool == "echo"] == [
        ("echo", '{"message": "mcp-assay"}', "readOnlyHint")
    ]
    assert "--no-generate-args-read-only turns this off" in render_brief(report)


def test_a_read_only_tool_called_once_is_named_with_the_step_that_explores_it(spec: SpecSet) -> None:
    """Issue 27: the one plain call is not the whole story; the header names --explore as the step that tries many
    (no requirements counted: what exploring finds is not known before it runs). `ask` was not called plainly."""
    report, _ = run(spec)
    (echo,) = [item for item in report.untried if "echo" in item.names]
    assert (echo.why, echo.step, echo.requirements) == ("had one plain call, not explored", EXPLORE_STEP, ())
    assert "ask" not in echo.names
    brief = " ".join(render_brief(report).split())
    assert "drawn from the inputSchema (--explore tries many); --no-generate-args-read-only turns this off" in brief
    assert "not explored" not in brief, "the generated line says it; no not-tried row repeats it"
    explored, _ = run(spec, explore=True)
    assert not [item for item in explored.untried if item.step == EXPLORE_STEP]


def test_a_tool_annotated_destructive_is_never_called_with_generated_arguments_though_read_only(
    spec: SpecSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: readOnlyHint with destructiveHint is a contradiction the run does not resolve in its favour."""
    from tests.peers.broken_suite import core

    both = {**core.TOOLS[0], "annotations": {"readOnlyHint": True, "destructiveHint": True}}
    monkeypatch.setattr(core, "TOOLS", [both, *core.TOOLS[1:]])
    report, calls = run(spec)
    assert not [arguments for arguments in called(calls, "echo") if arguments]
    (echo,) = [item for item in report.untried if "echo" in item.names]
    assert echo.why == "annotated destructiveHint" and "--tool-args" in echo.step


def test_the_opt_out_is_a_flag_its_twin_and_a_config_key() -> None:
    """Issue 27: on by default; --no-generate-args-read-only, MCP_ASSAY_GENERATE_ARGS_READ_ONLY=false and
    `generate-args-read-only: false` turn it off."""
    assert SuiteConfig(url="http://127.0.0.1:9/mcp").generate_args_read_only is True
    off = SuiteConfig.from_options({"url": "http://127.0.0.1:9/mcp"}, {"generate_args_read_only": False})
    assert off.generate_args_read_only is False


def test_arguments_given_win_over_generated_ones_and_unknown_names_are_noted(spec: SpecSet) -> None:
    """Tool-defined: --tool-args is used as given; a name the server does not list is said, not guessed at."""
    report, calls = run(spec, generate_args=("echo", "nope"), tool_args={"echo": {"message": "given"}})
    assert {"message": "given"} in called(calls, "echo") and {"message": "mcp-assay"} not in called(calls, "echo")
    assert any(note.endswith("--generate-args names tools the server does not list: nope") for note in report.notes)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("echo, add  lookup", ("echo", "add", "lookup")), (["echo", "echo"], ("echo",)), ((), ())],
)
def test_generate_args_takes_names_separated_by_commas_or_spaces(value: Any, expected: tuple[str, ...]) -> None:
    """Tool-defined: the environment twin is one string; a config file gives a list."""
    config = SuiteConfig.from_options({"url": "http://127.0.0.1:9/mcp", "generate_args": value})
    assert config.generate_args == expected


def test_generate_args_refuses_what_is_not_names() -> None:
    """Tool-defined: checked before any request."""
    with pytest.raises(ConfigError, match="generate-args: expected a list of tool names"):
        SuiteConfig.from_options({"url": "http://127.0.0.1:9/mcp", "generate_args": [3]})


def test_a_read_only_tool_still_running_after_the_timeout_is_cancelled_and_noted_not_failed(spec: SpecSet) -> None:
    """Issue 27: server-everything's read-only trigger-long-running-operation runs 10 s, as long as --timeout.
    Called by default now, it must not become an unanswered request (RPC-05, a false verdict: the spec leaves
    the timeout to the caller and asks it to cancel), and the tools after it are still called."""
    config = SuiteConfig(url="http://127.0.0.1:9/mcp", timeout=1.0, stream_budget_ms=300, only="tools,RPC-05")
    bodies: list[dict[str, Any]] = []
    handler = respond(Server())

    async def slow_echo(request: Any) -> Any:
        body = json.loads(request.content or b"null")
        if isinstance(body, dict):
            bodies.append(body)
            params = body.get("params") or {}
            if body.get("method") == "tools/call" and params.get("name") == "echo" and params.get("arguments"):
                await asyncio.sleep(5)
        return await handler(request)

    report = asyncio.run(arun(config, spec, mock=mock(slow_echo)))
    assert any(note.endswith("tools/call echo was still running after --timeout 1 s: the run cancelled it and went "
                             "on (a long-running tool is no violation; a longer --timeout waits it out)")
               for note in report.notes), report.notes  # fmt: skip
    unanswered = [r for r in report.results if r.check == "requests_get_an_answer_within_the_timeout"]
    assert unanswered and all(result.outcome is not Outcome.FAILED for result in unanswered)
    calls = [body["params"].get("name") for body in bodies if body.get("method") == "tools/call"]
    assert calls.index("now") > calls.index("echo")  # the run went on to the next read-only tool
    cancelled = [body for body in bodies if body.get("method") == "notifications/cancelled"]
    assert any("--timeout" in body["params"]["reason"] for body in cancelled)  # 2025-11-25: a disconnect is no cancel
