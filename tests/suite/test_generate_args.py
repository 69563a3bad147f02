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

from mcp_assay.errors import ConfigError
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
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
    report, calls = run(spec, generate_args=("echo",))
    assert {"message": "mcp-assay"} in called(calls, "echo")
    assert any(note.endswith(f'{GENERATED}echo {{"message": "mcp-assay"}}') for note in report.notes), report.notes
    bad = [arguments for arguments in called(calls, "echo") if arguments == {}]
    assert bad, "the bad-arguments case (required property left out) runs on the allowed tool"


def test_without_generate_args_a_tool_with_required_arguments_is_never_called_with_invented_ones(
    spec: SpecSet,
) -> None:
    """Tool-defined: never for a tool the user has not allowed (the default)."""
    report, calls = run(spec)
    assert not [arguments for arguments in called(calls, "echo") if arguments]
    assert not [note for note in report.notes if GENERATED in note]


def test_trusting_read_only_hints_allows_every_read_only_tool_and_nothing_else(spec: SpecSet) -> None:
    """Tool-defined: --generate-args-read-only trusts readOnlyHint; `ask` carries no such hint and is not called
    with generated arguments."""
    report, calls = run(spec, generate_args_read_only=True)
    assert {"message": "mcp-assay"} in called(calls, "echo")
    assert any(f"{GENERATED}echo " in note for note in report.notes)
    assert not any("ask" in note for note in report.notes if GENERATED in note)


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
