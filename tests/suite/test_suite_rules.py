"""The suite-level rules (spec/rules/suite.py): liveness, unanswered requests, ignored malformed input."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Side
from mcp_assay.wire.model import Observation, ProcessExit
from tests.factories import judge, log_of, modern_call, request_body, stdio, tick

PROBE: dict[str, Any] = {"name": "call", "family": "tools", "invalid": False, "intent": "ordinary request"}


def _observation(kind: str, **data: Any) -> Observation:
    return Observation(id=f"o-{kind}-{tick()}", time=tick(), kind=kind, data=data)


def test_a_server_that_keeps_serving_passes(spec: SpecSet) -> None:
    """Spec-mandated (BEH-09): no exit and no lost connection during the run."""
    log = log_of(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}, probe=PROBE))
    assert judge(log, spec, "server_stays_available_through_the_run").outcome is Outcome.PASSED


def test_a_lost_transport_fails_once_for_the_whole_run(spec: SpecSet) -> None:
    """Spec-mandated (BEH-09): a server that stopped serving mid-run is one failure."""
    log = log_of(
        modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}, probe=PROBE),
        _observation("transport-lost", detail="the server process exited (code 3)", family="envelope"),
    )
    verdict = judge(log, spec, "server_stays_available_through_the_run")
    assert verdict.outcome is Outcome.FAILED
    assert "during the envelope cases" in verdict.reason


def test_a_stdio_server_exiting_on_its_own_fails(spec: SpecSet) -> None:
    """Spec-mandated (BEH-09): an exit the suite did not ask for (stdin still open) is a failure."""
    line = stdio(Side.CLIENT, request_body("tools/list", 1, {}), probe=PROBE)
    exited = ProcessExit(id="x1", connection="conn-1", time=tick(), code=3)
    verdict = judge(log_of(line, exited), spec, "server_stays_available_through_the_run")
    assert verdict.outcome is Outcome.FAILED


def test_liveness_is_not_judged_on_passive_traffic(spec: SpecSet) -> None:
    """Tool-defined: without suite probes there is no run to judge."""
    log = log_of(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}))
    assert judge(log, spec, "server_stays_available_through_the_run").outcome is Outcome.NOT_VERIFIED


def test_an_unanswered_request_of_the_suite_fails_with_its_reproduction(spec: SpecSet) -> None:
    """Spec-mandated (RPC-05): the suite's request got no answer within the timeout."""
    line = stdio(Side.CLIENT, request_body("tools/list", 1, {}), probe=PROBE)
    log = log_of(line, _observation("no-answer", detail="never answered tools/list", exchange=line.id))
    verdict = judge(log, spec, "requests_get_an_answer_within_the_timeout")
    assert verdict.outcome is Outcome.FAILED
    replay = verdict.evidence[0].replay
    assert replay is not None and replay.line is not None and replay.line.startswith('{"jsonrpc"')
    assert verdict.evidence[0].reproduction.startswith("( out=$(mktemp) && ")  # the line, fed to the server


def test_answered_requests_pass_and_passive_traffic_is_not_judged(spec: SpecSet) -> None:
    """Spec-mandated (RPC-05): everything answered; passive logs are left to the JSON-RPC rules."""
    answered = log_of(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}, probe=PROBE))
    assert judge(answered, spec, "requests_get_an_answer_within_the_timeout").outcome is Outcome.PASSED
    passive = log_of(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}))
    assert judge(passive, spec, "requests_get_an_answer_within_the_timeout").outcome is Outcome.NOT_VERIFIED


def test_ignored_invalid_json_fails_and_answered_malformed_probes_pass(spec: SpecSet) -> None:
    """Spec-mandated (RPC-12, RPC-13): malformed input gets an error, never silence."""
    tag = {**PROBE, "name": "invalid-json", "invalid": True}
    ignored = stdio(Side.CLIENT, b'{"jsonrpc": "2.0", "id": 1,', probe=tag)
    log = log_of(ignored, _observation("no-answer", detail="nothing came back", exchange=ignored.id))
    verdict = judge(log, spec, "malformed_input_gets_an_error_answer")
    assert verdict.outcome is Outcome.FAILED and "-32700" in verdict.reason
    answered_tag = {**PROBE, "name": "no-method", "invalid": True}
    answered = stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 2}, probe=answered_tag)
    error = stdio(Side.SERVER, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32600, "message": "Invalid request"}})
    assert judge(log_of(answered, error), spec, "malformed_input_gets_an_error_answer").outcome is Outcome.PASSED


def test_malformed_input_is_not_verified_without_such_probes(spec: SpecSet) -> None:
    """Tool-defined: only the suite's malformed probes trigger this rule."""
    log = log_of(stdio(Side.CLIENT, request_body("tools/list", 1, {}), probe=PROBE))
    assert judge(log, spec, "malformed_input_gets_an_error_answer").outcome is Outcome.NOT_VERIFIED
