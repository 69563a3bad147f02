"""Rule behaviour the issue-4 envelope probes rely on: the Origin control, BEH-02 under the routing
rules, and the client's deliberately invalid response never counted against the server."""

from __future__ import annotations

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Side
from tests.factories import http, judge, log_of, stdio
from tests.spec.rules._http_builders import post

FOREIGN = {"name": "foreign-origin", "invalid": True, "foreign_origin": True}
CONTROL = {"name": "origin-control", "invalid": False}
EVIL = {"origin": "https://mcp-assay.invalid"}


def test_a_403_with_origin_and_a_served_control_passes_http_35(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-35): the control makes the 403 attributable to the Origin check."""
    refused = post("tools/list", headers=EVIL, answer=b"", status=403, probe=FOREIGN)
    control = post("tools/list", probe=CONTROL)
    verdict = judge(log_of(refused, control), spec, "foreign_origins_get_403")
    assert verdict.outcome is Outcome.PASSED
    assert "the same request without it got HTTP 200" in verdict.reason


def test_a_403_whose_control_is_refused_too_is_not_attributable(spec: SpecSet) -> None:
    """Tool-defined: when the request without Origin is refused as well, the 403 says nothing about Origin."""
    refused = post("tools/list", headers=EVIL, answer=b"", status=403, probe=FOREIGN)
    control = post("tools/list", answer=b"", status=403, probe=CONTROL)
    verdict = judge(log_of(refused, control), spec, "foreign_origins_get_403")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "cannot be put down to the Origin check" in verdict.reason


def test_a_foreign_origin_served_fails_http_35_whatever_the_control(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-35)."""
    served = post("tools/list", headers=EVIL, probe=FOREIGN)
    control = post("tools/list", probe=CONTROL)
    assert judge(log_of(served, control), spec, "foreign_origins_get_403").outcome is Outcome.FAILED


def test_routing_header_checks_cite_beh_02(spec: SpecSet) -> None:
    """Spec-mandated (BEH-02, HTTP-13): a body naming an unknown tool under a real tool's Mcp-Name."""
    probe = {"name": "mcp-name-mismatch", "invalid": True}
    dispatched = post(
        "tools/call", {"name": "no-such-tool", "arguments": {}}, headers={"mcp-name": "echo"}, answer=-32602,
        probe=probe,
    )  # fmt: skip
    verdict = judge(log_of(dispatched), spec, "mismatched_routing_headers_are_rejected")
    assert verdict.outcome is Outcome.FAILED and verdict.requirements == ("HTTP-13", "BEH-02")
    refused = post(
        "tools/call", {"name": "no-such-tool", "arguments": {}}, headers={"mcp-name": "echo"}, answer=-32020,
        probe=probe,
    )  # fmt: skip
    assert judge(log_of(refused), spec, "mismatched_routing_headers_are_rejected").outcome is Outcome.PASSED
    assert judge(log_of(post("tools/list")), spec, "mismatched_routing_headers_are_rejected").outcome is (
        Outcome.NOT_VERIFIED
    )


def test_the_suites_own_stray_response_is_not_an_orphan_answer(spec: SpecSet) -> None:
    """Tool-defined (RPC-05): a response the suite sends on purpose answers nothing, and is nobody's fault."""
    body = {"jsonrpc": "2.0", "id": "mcp-assay-no-such-request", "result": {}}
    probe = {"name": "client-response", "invalid": True}
    posted = http(body, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}}, status=400,
                  probe=probe)  # fmt: skip
    assert judge(log_of(posted), spec, "each_request_gets_exactly_one_response").outcome is not Outcome.FAILED
    written = stdio(Side.CLIENT, body, probe=probe)
    assert judge(log_of(written), spec, "each_request_gets_exactly_one_response").outcome is not Outcome.FAILED
    stray = http(body, status=202)
    assert judge(log_of(stray), spec, "each_request_gets_exactly_one_response").outcome is Outcome.FAILED


def _note(method: str = "notifications/cancelled") -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": method, "params": {"requestId": "never-sent"}}


def test_a_stdio_notification_left_unanswered_passes_rpc_11(spec: SpecSet) -> None:
    """Spec-mandated (RPC-11 on stdio): no reply line to a notification."""
    lines = [stdio(Side.CLIENT, _note()), stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
             stdio(Side.SERVER, {"jsonrpc": "2.0", "id": 1, "result": {}})]  # fmt: skip
    assert judge(log_of(lines), spec, "notifications_are_not_answered").outcome is Outcome.PASSED


def test_a_stdio_notification_answered_with_an_id_less_error_fails_rpc_11(spec: SpecSet) -> None:
    """Spec-mandated (RPC-11 on stdio): an error line right after a notification answers it."""
    error = {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}}
    lines = [stdio(Side.CLIENT, _note("notifications/whatever")), stdio(Side.SERVER, error)]
    verdict = judge(log_of(lines), spec, "notifications_are_not_answered")
    assert verdict.outcome is Outcome.FAILED and "notifications/whatever was answered" in verdict.reason


def test_an_id_less_error_for_an_earlier_bad_line_is_not_a_notification_answer(spec: SpecSet) -> None:
    """Tool-defined: the error belongs to the unreadable line before the notification."""
    garbage = stdio(Side.CLIENT, b'{"jsonrpc": "2.0", "id": 1,')
    error = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    lines = [garbage, stdio(Side.CLIENT, _note()), stdio(Side.SERVER, error)]
    assert judge(log_of(lines), spec, "notifications_are_not_answered").outcome is Outcome.PASSED
