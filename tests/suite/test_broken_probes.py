"""The envelope, header and channel probes catch each deliberate bug of the probe server, with its IDs.

The server (:mod:`tests.peers.broken_probes`) runs in process behind httpx.MockTransport here;
``tests/e2e/test_probes_e2e.py`` runs a few of the same bugs, and the real SDK servers, over sockets.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Verdict
from mcp_assay.wire.model import HttpExchange
from mcp_assay.wire.traffic import ExchangeLog
from tests.peers.broken_probes import BUGS, ProbeServer
from tests.suite.scripted import mock, respond
from tests.suite.test_run_scripted import RULE_CONFLICTS

TOOL_ARGS = {"echo": {"message": "hi"}, "ask": {}, "lookup": {"region": "eu", "limit": 42}}

EXPECTED: dict[str, set[str]] = {
    # bug: requirement IDs that must fail (at their catalogue severity)
    "routing-headers-ignored": {"BEH-02", "HTTP-12", "HTTP-13"},
    "unknown-tool-success": {"BEH-01", "TOOL-12"},
    "unknown-tool-500": {"BEH-01", "TOOL-12"},
    "arguments-unvalidated": {"TOOL-14", "BEH-03"},
    "arguments-as-protocol-error": {"BEH-03"},
    "failure-as-protocol-error": {"TOOL-15"},
    "param-headers-ignored": {"HTTP-19", "HTTP-16", "HTTP-17"},
    "param-integers-as-text": {"HTTP-21"},
    "param-absent-demanded": {"HTTP-20"},
    "hostile-input-breaks": {"BEH-09"},
}


def run(spec: SpecSet, bug: str | None, *, failing_tool: str | None = "explode", **extra: object) -> Report:
    handshake = bool(extra.pop("handshake", True))
    config = SuiteConfig(
        url="http://127.0.0.1:9/mcp",
        tool_args=extra.pop("tool_args", TOOL_ARGS),  # type: ignore[arg-type]
        prompt_args={"greet": {"who": "x"}},
        failing_tool=failing_tool,
        timeout=2.0,
        stream_budget_ms=300,
        **extra,  # type: ignore[arg-type]
    )
    return asyncio.run(arun(config, spec, mock=mock(respond(ProbeServer(bug, handshake=handshake)))))


def failed_requirements(report: Report) -> set[str]:
    return {
        requirement
        for verdict in report.results
        if verdict.outcome is Outcome.FAILED and verdict.check not in RULE_CONFLICTS
        for requirement in verdict.requirements
    }


def verdict(report: Report, check: str) -> Verdict:
    return next(item for item in report.results if item.check == check)


def test_every_bug_of_the_probe_server_has_an_expectation() -> None:
    """Tool-defined: one expectation per bug, none left unchecked."""
    assert set(EXPECTED) == set(BUGS)


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_each_bug_is_reported_failed_with_its_requirements(spec: SpecSet, bug: str) -> None:
    """Spec-mandated (per bug, see BUGS): the probe that targets the deviation fails it under its IDs."""
    report = run(spec, bug)
    failed = failed_requirements(report)
    assert EXPECTED[bug] <= failed, f"{bug}: {sorted(EXPECTED[bug] - failed)} not failed; failed: {sorted(failed)}"


def test_the_unbroken_probe_server_draws_no_failure(spec: SpecSet) -> None:
    """Tool-defined: without a bug nothing fails, so each failure above is its bug's alone."""
    report = run(spec, None)
    assert failed_requirements(report) == set()
    assert not [note for note in report.notes if note.startswith("harness self-check")]


def test_channel_verdicts_name_the_channel_on_a_pass(spec: SpecSet) -> None:
    """Tool-defined: the reasons of the channel checks say which channel the server used, passes included."""
    report = run(spec, None)
    unknown = verdict(report, "unknown_tools_get_invalid_params")
    assert unknown.outcome is Outcome.PASSED and "protocol error -32602 (HTTP 400)" in unknown.reason
    assert "explain" in unknown.tags
    channel = verdict(report, "invalid_arguments_come_back_as_tool_errors")
    assert channel.outcome is Outcome.PASSED and "tool result with isError: true (HTTP 200)" in channel.reason
    failure = verdict(report, "tool_failures_are_results_with_is_error")
    assert failure.outcome is Outcome.PASSED and "'explode' (--failing-tool)" in failure.reason


def test_a_protocol_error_for_invalid_arguments_is_a_should_finding_only(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-14 with A4, BEH-03): -32602 passes the MUST and fails the SHOULD channel check."""
    report = run(spec, "arguments-as-protocol-error")
    must = verdict(report, "invalid_tool_arguments_never_succeed")
    should = verdict(report, "invalid_arguments_come_back_as_tool_errors")
    assert must.outcome is Outcome.PASSED and "protocol error -32602 (HTTP 400)" in must.reason
    assert should.outcome is Outcome.FAILED and should.severity is Severity.SHOULD
    assert "protocol error -32602 (HTTP 400)" in should.reason


def test_an_unknown_tool_answered_500_is_named_a_server_error(spec: SpecSet) -> None:
    """Spec-mandated (BEH-01): a 5xx is neither channel."""
    report = run(spec, "unknown-tool-500")
    unknown = verdict(report, "unknown_tools_get_invalid_params")
    assert unknown.outcome is Outcome.FAILED and "protocol error -32603 (HTTP 500)" in unknown.reason
    assert "server error" in unknown.reason


def test_without_failing_tool_the_failure_channel_is_not_verified(spec: SpecSet) -> None:
    """Tool-defined: the suite never guesses which tool fails; TOOL-15 says how to tell it."""
    report = run(spec, None, failing_tool=None)
    failure = verdict(report, "tool_failures_are_results_with_is_error")
    assert failure.outcome is Outcome.NOT_VERIFIED and "--failing-tool" in failure.reason


def test_without_tool_args_for_a_marked_tool_the_param_cases_are_not_verified(spec: SpecSet) -> None:
    """Tool-defined: lookup marks parameters but the suite may not call it (--no-generate-args-read-only), so
    nothing is sent and it says why."""
    report = run(spec, None, tool_args={"echo": {"message": "hi"}}, generate_args_read_only=False)
    checks = ("missing_or_mismatched_parameter_headers_are_rejected", "integer_parameter_headers_compare_numerically")
    for check in checks:
        item = verdict(report, check)
        assert item.outcome is Outcome.NOT_VERIFIED and "lookup" in item.reason and "--tool-args" in item.reason


def test_the_routing_header_mismatch_names_a_listed_tool(spec: SpecSet) -> None:
    """Spec-mandated (BEH-02): the header names a real tool, the body one that does not exist."""
    report = run(spec, "routing-headers-ignored")
    mismatch = verdict(report, "mismatched_routing_headers_are_rejected")
    assert mismatch.outcome is Outcome.FAILED and "BEH-02" in mismatch.requirements
    assert "Mcp-Name 'echo' differs" in " ".join(item.detail for item in mismatch.evidence) + mismatch.reason


def test_the_new_probes_are_tagged_and_shaped_as_documented(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: malformed probes say invalid (and skip outgoing validation); the others were validated."""
    record = tmp_path / "run.jsonl"
    report = run(spec, None, record=str(record))
    log = ExchangeLog()
    read_recording(record, log)
    probes: dict[str, list[HttpExchange]] = {}
    for exchange in log.http_exchanges():
        if exchange.probe is not None:
            probes.setdefault(exchange.probe.name, []).append(exchange)
    invalid = {"param-missing", "param-mismatch", "param-invalid-characters", "param-base64-mismatch",
               "param-numeric", "client-response", "wrong-accept", "mcp-name-mismatch", "foreign-origin"}  # fmt: skip
    valid = {"param-base64", "param-absent", "mcp-name-needs-sentinel", "origin-control", "failing-tool"}
    for name in invalid | valid:
        assert name in probes, name
        assert all(bool(item.probe and item.probe.invalid) is (name in invalid) for item in probes[name]), name
    headers = probes["param-numeric"][0].request.headers
    assert headers.get("mcp-param-limit") == "42.0"
    assert "mcp-param-region" not in probes["param-missing"][0].request.headers
    sentinel = probes["mcp-name-needs-sentinel"][0].request.headers.get("mcp-name") or ""
    assert sentinel.startswith("=?base64?") and sentinel.endswith("?=")
    assert "mcp-param-limit" not in probes["param-absent"][0].request.headers
    assert {item.request.headers.get("accept") for item in probes["wrong-accept"]} == {"application/json", "text/html"}
    response = probes["client-response"][0].request_message
    assert response is not None and response.kind.is_response
    observed = "observation (no server requirement applies): a JSON-RPC response"
    assert any(observed in note for note in report.notes)


def test_initialize_is_judged_only_on_a_modern_only_endpoint(spec: SpecSet) -> None:
    """Spec-mandated (VER-15, VER-21 with A6/A21): a modern-only server refuses initialize naming its versions;
    a dual-era server may serve it, so no initialize probe is judged there."""
    modern_only = run(spec, None, handshake=False)
    assert failed_requirements(modern_only) == set()
    assert verdict(modern_only, "refused_initialize_names_supported_versions").outcome is Outcome.PASSED
    assert verdict(modern_only, "removed_methods_are_unknown_to_modern_requests").outcome is Outcome.PASSED
    dual = run(spec, None)
    assert verdict(dual, "refused_initialize_names_supported_versions").outcome is not Outcome.FAILED
    assert verdict(dual, "refused_initialize_names_supported_versions").judged == 0


def test_a_2025_call_whose_stream_the_suite_closes_is_cancelled_with_a_notification(spec: SpecSet) -> None:
    """Spec-mandated (CAN-12, 2025-11-25): a disconnect is no cancellation, so the suite also sends one."""
    inner = respond(ProbeServer(None))

    async def slow_echo(request: httpx.Request) -> httpx.Response:
        if b'"tools/call"' in request.content and b'"echo"' in request.content:
            await asyncio.sleep(0.2)
        return await inner(request)

    config = SuiteConfig(
        url="http://127.0.0.1:9/mcp", spec_version="2025-11-25", tool_args=TOOL_ARGS, timeout=2.0, only="tools,CAN-12"
    )
    report = asyncio.run(arun(config, spec, mock=mock(slow_echo)))
    assert not [note for note in report.notes if note.startswith("harness self-check")], report.notes
