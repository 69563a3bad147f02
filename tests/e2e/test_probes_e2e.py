"""The envelope, header and channel probes of issue 4 against real servers over real sockets and pipes.

* ``tests/peers/sdk_param_server.py`` — the official Python SDK with a tool whose parameters are
  mirrored into ``Mcp-Param-*`` headers (``x-mcp-header``), a strict schema and a tool that fails;
* ``tests/peers/ts_param_server.mjs`` — the TypeScript SDK v2 with the same kind of tools;
* ``tests/peers/broken_probes.py`` — the probe server with one deliberate bug, under uvicorn.

MUST-level findings of the SDK peer are pinned in ``suite_expected.yaml`` like the other targets.
The Python SDK fixture server, the TypeScript SDK v2 server and server-everything are run by
``test_suite_e2e.py`` with the same probes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_suite_e2e import NODE_MODULES, ROOT, assert_expected, must_failures, node_peer, run
from tests.peers.process import HERE, PYTHON, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

PARAM_SERVER = str(HERE / "sdk_param_server.py")
PARAM_ARGS = ["--tool-args", '{"lookup": {"region": "eu", "limit": 42}, "echo": {"text": "hi"}}',
              "--failing-tool", "explode"]  # fmt: skip
PROBE_ARGS = ["--tool-args", '{"echo": {"message": "hi"}, "ask": {}, "lookup": {"region": "eu", "limit": 42}}',
              "--prompt-args", '{"greet": {"who": "x"}}', "--failing-tool", "explode"]  # fmt: skip


def result(report: dict[str, Any], check: str) -> dict[str, Any]:
    """The check's 2026-07-28 result (these probes are 2026's; a default run tests 2025-11-25 too)."""
    return next(item for item in report["results"] if item["check"] == check and item["revision"] == "2026-07-28")


@contextmanager
def param_server() -> Iterator[str]:
    port = free_port()
    with http_server([PYTHON, PARAM_SERVER, "http", str(port)], port) as server:
        yield server.url


@contextmanager
def broken_probe_server(bug: str) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "tests.peers.broken_probes", "http", str(port), bug]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as server:
        yield server.url


def test_the_python_sdk_answers_every_header_probe_as_the_spec_asks(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (HTTP-16, HTTP-17, HTTP-19..21, BEH-02): the SDK checks Mcp-Param headers; channels are named."""
    with param_server() as url:
        report = run(spec_path, tmp_path, "-u", url, *PARAM_ARGS)
    assert_expected(report, "python-sdk-params-http")
    for check in (
        "missing_or_mismatched_parameter_headers_are_rejected",
        "absent_arguments_need_no_parameter_header",
        "integer_parameter_headers_compare_numerically",
        "sentinel_values_are_decoded_before_comparison",
        "header_values_with_invalid_characters_are_rejected",
        "mismatched_routing_headers_are_rejected",
        "hostile_input_leaves_the_server_serving",
    ):
        assert result(report, check)["outcome"] == "passed", check
    unknown = result(report, "unknown_tools_get_invalid_params")
    assert unknown["outcome"] == "failed" and "tool result with isError: true (HTTP 200)" in unknown["reason"]
    assert "tool result with isError: true" in result(report, "invalid_arguments_come_back_as_tool_errors")["reason"]
    failure = result(report, "tool_failures_are_results_with_is_error")
    assert failure["outcome"] == "passed" and "'explode'" in failure["reason"]
    assert any("Accept: text/html only was answered HTTP 406" in note for note in report["notes"])


def test_generated_arguments_give_the_parameter_header_rules_their_traffic(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 13 §4, --generate-args): with no --tool-args, naming the marked tool is enough for the
    Mcp-Param cases (HTTP-16, HTTP-19) to be judged instead of not verified; echo, not named, is not called with
    invented arguments, and the report names the tool called with generated arguments."""
    with param_server() as url:
        without = run(spec_path, tmp_path, "-u", url, "--only", "HTTP-19")
        report = run(spec_path, tmp_path, "-u", url, "--generate-args", "lookup", "--only", "HTTP-1,tools")
    assert result(without, "missing_or_mismatched_parameter_headers_are_rejected")["outcome"] == "not_verified"
    for check in ("missing_or_mismatched_parameter_headers_are_rejected",
                  "sentinel_values_are_decoded_before_comparison"):  # fmt: skip
        assert result(report, check)["outcome"] == "passed", check
    assert any('tools called with arguments generated from their inputSchema: lookup {"limit": 10, '
               '"region": "mcp-assay"}' in note for note in report["notes"]), report["notes"]  # fmt: skip
    calls = {line["tool"] for line in report["audit"] if line["method"] == "tools/call"}
    assert "lookup" in calls and "echo" not in calls


def test_the_python_sdk_channels_over_stdio(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (BEH-01, BEH-03, TOOL-15 over stdio): the same channels, named as stdio."""
    report = run(spec_path, tmp_path, "-c", f"{PYTHON} {PARAM_SERVER} stdio", *PARAM_ARGS)
    assert report["target"]["transport"] == "stdio"
    assert_expected(report, "python-sdk-params-stdio")
    assert "tool result with isError: true (stdio)" in result(report, "unknown_tools_get_invalid_params")["reason"]
    assert result(report, "tool_failures_are_results_with_is_error")["outcome"] == "passed"
    assert any("written to stdin" in note for note in report["notes"])


def test_the_typescript_sdk_answers_the_header_probes_and_names_its_channels(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (HTTP-19..21, BEH-01, BEH-03, TOOL-15): a second implementation of the same cases."""
    node_peer(NODE_MODULES / "@modelcontextprotocol" / "server")
    port = free_port()
    with http_server(["node", str(HERE / "ts_param_server.mjs"), str(port)], port) as server:
        report = run(spec_path, tmp_path, "-u", server.url, "--tool-args", '{"lookup": {"region": "eu", "limit": 42}}',
                     "--failing-tool", "explode")  # fmt: skip
    assert_expected(report, "ts-sdk-v2-params-http")
    for check in (
        "missing_or_mismatched_parameter_headers_are_rejected",
        "absent_arguments_need_no_parameter_header",
        "integer_parameter_headers_compare_numerically",
        "tool_failures_are_results_with_is_error",
        "invalid_arguments_come_back_as_tool_errors",
    ):
        assert result(report, check)["outcome"] == "passed", check
    unknown = result(report, "unknown_tools_get_invalid_params")
    assert unknown["outcome"] == "passed" and "protocol error -32602 (HTTP 200)" in unknown["reason"]


@pytest.mark.parametrize(
    ("bug", "requirements"),
    [("routing-headers-ignored", {"BEH-02", "HTTP-12", "HTTP-13"}), ("param-headers-ignored", {"HTTP-19"})],
)
def test_a_server_that_ignores_headers_is_caught_over_a_socket(
    spec_path: Path, tmp_path: Path, bug: str, requirements: set[str]
) -> None:
    """Spec-mandated (BEH-02 / HTTP-19): the bug is failed with its MUST requirements over real HTTP."""
    with broken_probe_server(bug) as url:
        report = run(spec_path, tmp_path, "-u", url, *PROBE_ARGS)
    assert requirements <= must_failures(report)


def test_an_unknown_tool_answered_500_is_caught_over_a_socket(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (BEH-01, a SHOULD): the 500 is named a server error in the reason."""
    with broken_probe_server("unknown-tool-500") as url:
        report = run(spec_path, tmp_path, "-u", url, *PROBE_ARGS)
    unknown = result(report, "unknown_tools_get_invalid_params")
    assert unknown["outcome"] == "failed" and "HTTP 500" in unknown["reason"]
    assert result(report, "hostile_input_leaves_the_server_serving")["outcome"] == "passed"
