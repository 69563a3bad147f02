"""HS-16, server side: a 2025-11-25 session gets nothing only a newer revision defines.

A dual-era server answering a 2025 session with its 2026 envelope (``resultType``, ``ttlMs``,
``cacheScope``, ``_meta`` serverInfo, an ``input_required`` result) or 2026 notification shapes (a
listen acknowledgement, a ``subscriptionId``) fails; the same answers in a 2026 exchange are not
this check's business.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.spec.rules.handshake.newer_shapes import members
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import judge, legacy_call, legacy_session, log_of, modern_call, server_info
from tests.spec.rules._stream_builders import ack, done, legacy_init, legacy_req, legacy_sse, log

CHECK = "handshake_sessions_get_no_newer_revision_fields"
ADD = {"name": "add", "inputSchema": {"type": "object"}}
CAPS = {"tools": {}, "logging": {}}


def session(*calls: Any) -> Any:
    return log_of(legacy_session(capabilities=CAPS), *calls)


def test_2025_results_and_notifications_in_their_own_shape_pass_hs_16(spec: SpecSet) -> None:
    """Spec-mandated (HS-16): a 2025 session's tools/list result and log notification, as 2025 defines them."""
    call = legacy_sse(legacy_req("tools/call", 2, {"name": "add"}), [(0.1, log("info")), (0.2, done_2025(2))], start=0)
    verdict = judge(session(legacy_call("tools/list", None, {"tools": [ADD]}), call), spec, CHECK)
    assert verdict.outcome is Outcome.PASSED, verdict.reason
    assert verdict.judged == 3


def done_2025(ident: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": "3"}]}}


def test_the_2026_envelope_on_a_2025_result_fails_hs_16(spec: SpecSet) -> None:
    """Spec-mandated (HS-16): resultType, ttlMs, cacheScope and _meta serverInfo are 2026-07-28's alone."""
    leaked = {"tools": [ADD], "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "_meta": server_info()}
    verdict = judge(session(legacy_call("tools/list", None, leaked)), spec, CHECK)
    assert verdict.outcome is Outcome.FAILED
    for name in ("resultType", "ttlMs", "cacheScope", "_meta io.modelcontextprotocol/serverInfo"):
        assert name in verdict.reason
    assert "negotiated 2025-11-25, its answer to tools/list carries" in verdict.reason
    assert "which only 2026-07-28 defines" in verdict.reason


def test_an_input_required_result_in_a_2025_session_fails_hs_16(spec: SpecSet) -> None:
    """Spec-mandated (HS-16): multi round-trip results exist only in 2026-07-28 (2025 sends server requests)."""
    interim = {"resultType": "input_required", "inputRequests": {}, "requestState": "s1"}
    verdict = judge(session(legacy_call("tools/call", {"name": "add"}, interim, ident=2)), spec, CHECK)
    assert verdict.outcome is Outcome.FAILED
    assert "inputRequests" in verdict.reason and "requestState" in verdict.reason


def test_2026_notification_shapes_in_a_2025_session_fail_hs_16(spec: SpecSet) -> None:
    """Spec-mandated (HS-16): a listen acknowledgement, or a subscriptionId on a log message, in a 2025 stream."""
    call = legacy_sse(
        legacy_req("tools/call", 2, {"name": "add"}), [(0.1, log("info", sub=2)), (0.2, done_2025(2))], start=0
    )
    verdict = judge(log_of(legacy_init(CAPS), call), spec, CHECK)
    assert verdict.outcome is Outcome.FAILED
    assert "params._meta io.modelcontextprotocol/subscriptionId" in verdict.reason
    listen = legacy_sse(legacy_req("tools/call", 3, {"name": "add"}), [(0.1, ack(3)), (0.2, done_2025(3))], start=1)
    verdict = judge(log_of(legacy_init(CAPS), listen), spec, CHECK)
    assert verdict.outcome is Outcome.FAILED
    assert "the notification notifications/subscriptions/acknowledged" in verdict.reason


def test_hs_16_server_side_is_not_verified_before_the_server_answers_anything_after_initialize(spec: SpecSet) -> None:
    """Tool-defined: the initialize result has no newer counterpart, so a bare handshake settles nothing."""
    verdict = judge(log_of(legacy_session(capabilities=CAPS)), spec, CHECK)
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_hs_16_server_side_is_not_applicable_to_2026_exchanges(spec: SpecSet) -> None:
    """Spec-mandated (HS-16 is a 2025 requirement): the 2026 envelope on a 2026 result is RES-01's, not this."""
    result = done(1, tools=[ADD])["result"]
    verdict = judge(log_of(modern_call("tools/list", {}, result)), spec, CHECK)
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_what_a_revision_defines_is_read_from_its_schema(spec: SpecSet) -> None:
    """Tool-defined: the member lists come from $defs (following $ref), not from a list in the code."""
    modern, legacy = spec.require("2026-07-28").validator, spec.require("2025-11-25").validator
    assert {"resultType", "ttlMs", "cacheScope", "tools"} <= members(modern, "ListToolsResult")
    assert "ttlMs" not in members(legacy, "ListToolsResult")
    assert "io.modelcontextprotocol/serverInfo" in members(modern, "ListToolsResult", ("_meta",))
    assert members(legacy, "ListToolsResult", ("_meta",)) == frozenset()
