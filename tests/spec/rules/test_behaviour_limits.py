"""BEH-11: a burst of calls to one tool meets a rate limit, judged on the suite's opt-in burst."""

from __future__ import annotations

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Side
from tests.factories import error_body, http, judge, log_of, modern_call, request_body, stdio

CHECK = "tool_calls_are_rate_limited"
BURST = {"name": "beh-rate-limit", "family": "burst"}
ADDED = {"content": [{"type": "text", "text": "3"}]}


def _served(ident: int) -> object:
    return modern_call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, ADDED, ident=ident, probe=BURST)


def _refused(ident: int) -> object:
    return modern_call(
        "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, None, ident=ident, probe=BURST, status=429,
        response_headers={"retry-after": "1"},
    )  # fmt: skip


def test_a_429_in_the_burst_passes_beh_11(spec: SpecSet) -> None:
    """Spec-mandated (BEH-11, MAY): the fourth call was limited."""
    verdict = judge(log_of(*(_served(n) for n in range(1, 4)), _refused(4), _refused(5)), spec, CHECK)
    assert verdict.outcome is Outcome.PASSED
    assert "2 of 5 burst calls were limited" in verdict.reason and "Retry-After: 1" in verdict.reason


def test_a_rate_limit_error_over_stdio_passes_beh_11(spec: SpecSet) -> None:
    """Spec-mandated (BEH-11): over stdio a limit can only be an error that says so."""
    call = request_body("tools/call", 7, {"name": "add", "arguments": {}}, version=None)
    log = log_of(
        stdio(Side.CLIENT, call, probe=BURST),
        stdio(Side.SERVER, error_body(-32000, "Rate limit exceeded, retry later", 7)),
    )
    verdict = judge(log, spec, CHECK)
    assert verdict.outcome is Outcome.PASSED
    assert "-32000" in verdict.reason


def test_a_burst_served_whole_is_an_informational_note(spec: SpecSet) -> None:
    """Spec-mandated (BEH-11 is a MAY): nothing limited the calls, which is reported, never counted."""
    verdict = judge(log_of(*(_served(n) for n in range(1, 6))), spec, CHECK)
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.INFO
    assert "all 5 calls of the burst" in verdict.reason


def test_beh_11_is_not_verified_without_the_burst(spec: SpecSet) -> None:
    """Tool-defined: ordinary calls say nothing about a limit; the burst is opt-in."""
    ordinary = modern_call("tools/call", {"name": "add", "arguments": {}}, ADDED)
    verdict = judge(log_of(ordinary), spec, CHECK)
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "rate_limit_probe" in verdict.reason


def test_a_429_body_is_not_taken_for_json_rpc(spec: SpecSet) -> None:
    """Tool-defined: a limit's own body (``{"error": ...}``, often a gateway's) is HTTP, so no JSON-RPC rule
    holds it against the server; a JSON-RPC error in a 429 is still read as one."""
    refused = http(
        request_body("tools/call", 2, {"name": "add", "arguments": {}}),
        {"error": "rate_limited"},
        status=429,
        response_headers={"content-type": "application/json", "retry-after": "1"},
        probe=BURST,
    )
    log = log_of(_served(1), refused)
    assert judge(log, spec, "messages_are_jsonrpc_2_0_objects").outcome is Outcome.PASSED
    assert refused.response_messages == ()
    as_jsonrpc = http(
        request_body("tools/call", 3, {"name": "add", "arguments": {}}),
        error_body(-32000, "rate limit exceeded", 3),
        status=429,
        response_headers={"content-type": "application/json"},
    )
    assert [message.describe() for message in as_jsonrpc.response_messages] == ["error id=3 code=-32000"]
