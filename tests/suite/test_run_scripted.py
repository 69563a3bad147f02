"""Whole suite runs against scripted servers behind httpx.MockTransport: selection, rate limits,
refused credentials, missing prerequisites and silence are reported as what they are."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_assay.cases import tools as tool_cases
from mcp_assay.recording.records import read_recording
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import select_checks
from mcp_assay.suite import plan
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.events import Event, RunFinished
from mcp_assay.suite.runner import arun, judge_suite_log
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.jsonrpc import Kind
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import Handler, mock, respond, silent

URL = "http://127.0.0.1:9/mcp"
TOKEN = "suite-token-9c41e07b"
ARGS: dict[str, Any] = {"tool_args": {"echo": {"message": "hi"}}, "prompt_args": {"greet": {"who": "x"}}}
RULE_CONFLICTS: set[str] = set()
"""Failures the conformant scripted server would draw because two rules disagree: none any more (RPC-05
once failed the -32600 that repeats the id of the suite's stray client response, which RPC-09 asks for;
both now ask the log's one correlation)."""


def run_suite(spec: SpecSet, handler: Handler, **settings: Any) -> tuple[Report, list[Event]]:
    events: list[Event] = []
    config = SuiteConfig(url=URL, **{"timeout": 2.0, "stream_budget_ms": 300, **ARGS, **settings})
    report = asyncio.run(arun(config, spec, events.append, mock=mock(handler)))
    return report, events


def failures(report: Report) -> set[str]:
    return {verdict.check for verdict in report.results if verdict.outcome is Outcome.FAILED}


def verdict(report: Report, check: str) -> Any:
    return next(item for item in report.results if item.check == check)


def test_a_conformant_dual_era_server_is_tested_in_every_revision_it_serves(spec: SpecSet) -> None:
    """Tool-defined (issue 13): discover lists 2026-07-28 and initialize negotiates 2025-11-25, so one run tests
    both, newest first, says where each came from, and every verdict names its revision."""
    report, events = run_suite(spec, respond(Server()))
    assert report.tested == ["2026-07-28", "2025-11-25"]
    assert "2026-07-28 (per server/discover) and 2025-11-25 (per initialize)" in report.revision_note
    assert report.window == ["2026-07-28", "2025-11-25"]
    assert failures(report) <= RULE_CONFLICTS
    assert {result.revision for result in report.results} == {"2026-07-28", "2025-11-25"}
    assert verdict(report, "discover_is_implemented").outcome is Outcome.PASSED  # 2026 era
    legacy = [result for result in report.results if result.revision == "2025-11-25"]
    handshake = next(
        result for result in legacy if result.check == "initialize_results_name_version_capabilities_and_server"
    )
    assert handshake.outcome is Outcome.PASSED
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is None


def test_spec_version_always_wins_and_runs_the_handshake_era(spec: SpecSet) -> None:
    """Tool-defined: --spec-version 2025-11-25 tests the handshake era even where 2026 is served."""
    report, _ = run_suite(spec, respond(Server()), spec_version="2025-11-25")
    assert report.revision == "2025-11-25"
    assert "--spec-version" in report.revision_note
    assert verdict(report, "initialize_results_name_version_capabilities_and_server").outcome is Outcome.PASSED
    assert verdict(report, "discover_is_implemented").outcome is Outcome.NOT_APPLICABLE
    assert failures(report) <= RULE_CONFLICTS


def test_a_server_without_discover_that_serves_2026_is_tested_on_2026(spec: SpecSet) -> None:
    """Tool-defined: discover refused (-32601), but a 2026 request is served -> 2026-07-28 (not a fallback to
    the handshake era that would hide the missing discover), and the note says why."""
    report, _ = run_suite(spec, respond(Server("no-discover")))
    assert report.tested == ["2026-07-28", "2025-11-25"], report.tested
    assert "tools/list it served" in report.revision_note and "-32601" in report.revision_note
    assert "2025-11-25 (per initialize)" in report.revision_note


def test_without_discover_the_capability_cases_are_blocked_not_failed(spec: SpecSet) -> None:
    """Tool-defined: one root cause, one finding — VER-06 fails once, the tools cases are blocked by it."""
    report, _ = run_suite(spec, respond(Server("no-discover")), spec_version="2026-07-28")
    assert verdict(report, "discover_is_implemented").outcome is Outcome.FAILED
    assert failures(report) - RULE_CONFLICTS <= {"discover_is_implemented", "unknown_methods_get_method_not_found"}
    blocked = verdict(report, "tool_results_match_the_schema")
    assert blocked.outcome is Outcome.NOT_VERIFIED
    assert blocked.blocked_by == "discover_is_implemented"
    assert "capabilities are unknown" in blocked.reason


def test_a_rate_limit_is_waited_out_and_never_judged(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: 429 + Retry-After is waited for; the 429s are not traffic the rules see."""
    inner = respond(Server())
    limited = {"count": 0}

    async def handler(request: httpx.Request) -> httpx.Response:
        if limited["count"] < 4:  # the first answers the sign-in check of a run given no credential (not a 401)
            limited["count"] += 1
            return httpx.Response(429, headers={"retry-after": "0"}, text="slow down")
        return await inner(request)

    record = tmp_path / "run.jsonl"
    report, _ = run_suite(spec, handler, record=str(record))
    assert report.tested == ["2026-07-28", "2025-11-25"]
    assert any("rate-limited the run 3 time(s)" in note for note in report.notes)
    assert failures(report) <= RULE_CONFLICTS
    recording = read_recording(record)
    statuses = [item.response.status for item in recording.log.http_exchanges() if item.response is not None]
    assert 429 not in statuses
    assert len(recording.log.observations("rate-limited")) == 3


def test_a_rate_limit_past_the_budget_leaves_the_run_unverified_and_says_so(spec: SpecSet) -> None:
    """Tool-defined: a limit that outlasts --retry-budget-ms resolves to neither revision, naming the limit."""

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"retry-after": "120"})

    report, events = run_suite(spec, handler, retry_budget_ms=1000)
    assert report.revision is None
    assert "rate-limited" in report.revision_note
    assert not failures(report)
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is not None
    reasons = {item.reason for item in report.results if item.outcome is Outcome.NOT_VERIFIED}
    assert any("rate-limited" in reason for reason in reasons)
    assert "429" in report.revision_note


def test_refused_credentials_make_cases_unverified_with_the_servers_answer(spec: SpecSet) -> None:
    """Tool-defined: 401 on everything is the server's answer, not a wall of failures; the token stays hidden."""

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401, headers={"www-authenticate": 'Bearer error="invalid_token"'}, text="token not accepted"
        )

    report, events = run_suite(spec, handler, token=TOKEN)
    assert not failures(report)
    assert "HTTP 401" in report.revision_note and "token not accepted" in report.revision_note
    reasons = {item.reason for item in report.results if item.outcome is Outcome.NOT_VERIFIED}
    assert reasons and all("HTTP 401" in reason for reason in reasons)
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is not None
    assert TOKEN not in json.dumps(report.to_json())


def test_only_takes_families_in_lower_case_and_requirements_in_upper_case() -> None:
    """Issue 28: --only VER picks checks by requirement-ID prefix (and the families feeding them), --only tools
    names a family, which sends only its probes and judges them with every check; a check name picks that check."""
    checks = select_checks("VER")
    assert checks and all(any(r.startswith("VER") for r in check.requirements) for check in checks)
    assert [family.name for family in plan.select_families(["tools"], None)] == ["tools"]
    assert select_checks("tools") is None and select_checks(None) is None
    assert [check.name for check in select_checks("invalid_tool_arguments_never_succeed") or []] == [
        "invalid_tool_arguments_never_succeed"
    ]
    active = [family.name for family in plan.select_families([], select_checks("PRM-03"))]
    assert "prompts" in active and "auth" not in active  # an actively observed requirement: its feeders alone
    passive = plan.select_families([], select_checks("RPC-05"))
    assert len(passive) == len(plan.FAMILIES)  # any message may show a passive requirement: every family is sent


def test_a_server_that_never_answers_ends_the_run_within_the_timeout(spec: SpecSet) -> None:
    """Tool-defined: silence is bounded by --timeout and reported as silence."""
    started = time.monotonic()
    report, events = run_suite(spec, silent(), timeout=0.3)
    assert time.monotonic() - started < 5
    assert report.revision is None
    assert "no answer" in report.revision_note
    assert isinstance(events[-1], RunFinished) and events[-1].unjudged is not None


def test_a_recording_of_the_run_is_judged_to_the_same_verdicts(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: --record writes what `mcp-assay validate` needs to reach the same verdicts."""
    record = tmp_path / "run.jsonl"
    report, _ = run_suite(spec, respond(Server("prompt-bad-role")), record=str(record))
    recording = read_recording(record)
    again, _ = judge_suite_log(recording.log, spec)
    assert {(v.check, v.outcome) for v in again} == {(v.check, v.outcome) for v in report.results}
    assert any(v.check == "prompt_results_match_the_schema" and v.outcome is Outcome.FAILED for v in again)


def test_every_suite_request_is_tagged_so_failures_can_be_replayed(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: every exchange carries a probe tag; a failure shows a curl reproduction."""
    record = tmp_path / "run.jsonl"
    report, _ = run_suite(spec, respond(Server("prompt-bad-role")), record=str(record))
    recording = read_recording(record)
    assert all(item.probe is not None for item in recording.log.http_exchanges())
    failed = verdict(report, "prompt_results_match_the_schema")
    assert failed.evidence and failed.evidence[0].reproduction.startswith("curl ")
    assert all(
        item.probe.invalid is False
        for item in recording.log.http_exchanges()
        if item.probe is not None and item.probe.name == "get"
    )


def test_a_harness_defect_is_reported_as_such_and_never_as_a_server_failure(
    spec: SpecSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: a suite message that fails its own schema stops that probe as a harness error."""

    async def broken(ctx: SuiteContext) -> None:
        client = ctx.client
        await client.request(
            "tools/call", {}, probe=ctx.probe(tool_cases.CALL, "a call without a name, not marked invalid")
        )

    family = ProbeFamily(name="tools", cases=(tool_cases.CALL,), run=broken, capability="tools")
    monkeypatch.setattr(plan, "FAMILIES", (family,))
    report, _ = run_suite(spec, respond(Server()))
    blocked = verdict(report, "tool_results_match_the_schema")
    assert blocked.outcome is Outcome.NOT_VERIFIED
    assert "harness error" in blocked.reason
    assert "tool_results_match_the_schema" not in failures(report)


def test_client_side_checks_never_judge_the_suite_itself(spec: SpecSet) -> None:
    """Tool-defined: in a suite run the client is mcp-assay; its checks are left out (a failure is a note)."""
    report, _ = run_suite(spec, respond(Server()))
    client_side = [item for item in report.results if item.side.value == "client"]
    assert client_side and all(item.outcome is Outcome.NOT_APPLICABLE for item in client_side)
    assert not [note for note in report.notes if note.startswith("harness self-check")]


def test_malformed_probes_are_answered_by_the_scripted_server(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: the envelope probes really are malformed on the wire, and marked invalid."""
    record = tmp_path / "run.jsonl"
    run_suite(spec, respond(Server()), record=str(record), only="envelope")
    log = read_recording(record).log
    by_name = {item.probe.name: item for item in log.http_exchanges() if item.probe}
    assert by_name["invalid-json"].request_message is not None
    assert by_name["invalid-json"].request_message.kind is Kind.UNPARSEABLE
    assert by_name["invalid-json"].probe is not None and by_name["invalid-json"].probe.invalid is True
    assert by_name["batch"].request_message is not None and by_name["batch"].request_message.kind is Kind.BATCH


def test_an_http_server_that_goes_away_is_one_finding_and_the_rest_is_blocked(spec: SpecSet) -> None:
    """Tool-defined: a refused connection mid-run fails BEH-09 once; later families are blocked by it."""
    inner = respond(Server())
    calls = {"count": 0}

    async def handler(request: httpx.Request) -> httpx.Response:
        calls["count"] += 1
        if calls["count"] > 12:
            raise httpx.ConnectError("connection refused", request=request)
        return await inner(request)

    report, _ = run_suite(spec, handler)
    assert verdict(report, "server_stays_available_through_the_run").outcome is Outcome.FAILED
    blocked = [item for item in report.results if item.blocked_by == "server_stays_available_through_the_run"]
    assert blocked and all(item.outcome is Outcome.NOT_VERIFIED for item in blocked)
