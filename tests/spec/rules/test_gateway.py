"""The GW rules on hand-built traffic of both hops: each passes, fails and stays not verified where it should.

Tool-defined (the GW rows are project rows: docs/gateways.md). Each case builds what a client sent the gateway
(the front hop) and what the gateway sent the upstream (the back hop), with times set on purpose.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_assay.spec import rules  # noqa: F401 - registers the checks
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.engine import evaluate
from mcp_assay.spec.requirements import catalogue
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Verdict
from mcp_assay.wire.model import EndReason, HttpExchange
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import legacy_headers, modern_headers
from tests.gateway.builders import back, error, front, in_order, note, request, result

CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3}}


def judged(spec: SpecSet, check: str, *items: HttpExchange) -> Verdict:
    log = ExchangeLog(in_order(*items))
    (verdict,) = evaluate(log, spec, checks=[REGISTRY[check]])
    return verdict


def progress(token: Any, step: int) -> dict[str, Any]:
    return note("notifications/progress", {"progressToken": token, "progress": step, "total": 3})


def with_token(token: Any) -> dict[str, Any]:
    return {**CALL, "_meta": {"progressToken": token}}


# -- GW-01..03: the stream ------------------------------------------------------------------------------
def _streamed(front_events: list[tuple[float, Any]], back_events: list[tuple[float, Any]]) -> list[HttpExchange]:
    return [
        front(request("tools/call", 7, with_token("c")), start=0.0, end=2.0, events=front_events),
        back(request("tools/call", 1, with_token("c")), start=0.01, end=1.5, events=back_events),
    ]


UPSTREAM = [(0.1, progress("c", 1)), (0.2, progress("c", 2)), (1.4, result(DONE, 1))]


def test_gw01_passes_when_every_notification_reaches_the_client(spec: SpecSet) -> None:
    relayed = [(0.11, progress("c", 1)), (0.21, progress("c", 2)), (1.41, result(DONE, 7))]
    verdict = judged(spec, "gateway_relays_stream_notifications", *_streamed(relayed, UPSTREAM))
    assert verdict.outcome is Outcome.PASSED, verdict.reason


def test_gw01_fails_for_a_notification_that_never_reached_the_client(spec: SpecSet) -> None:
    relayed = [(0.11, progress("c", 1)), (1.41, result(DONE, 7))]
    verdict = judged(spec, "gateway_relays_stream_notifications", *_streamed(relayed, UPSTREAM))
    assert verdict.outcome is Outcome.FAILED
    assert "never reached the client" in verdict.reason
    assert {item.hop for item in verdict.evidence} == {"front", "back"}  # both hops, side by side


def test_gw01_is_not_verified_without_upstream_notifications(spec: SpecSet) -> None:
    verdict = judged(
        spec, "gateway_relays_stream_notifications",
        *_streamed([(1.41, result(DONE, 7))], [(1.4, result(DONE, 1))]),
    )  # fmt: skip
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_gw02_fails_for_notifications_out_of_order(spec: SpecSet) -> None:
    relayed = [(0.21, progress("c", 2)), (0.22, progress("c", 1)), (1.41, result(DONE, 7))]
    verdict = judged(spec, "gateway_keeps_stream_order", *_streamed(relayed, UPSTREAM))
    assert verdict.outcome is Outcome.FAILED and "other way round" in verdict.reason
    relayed = [(0.11, progress("c", 1)), (0.21, progress("c", 2)), (1.41, result(DONE, 7))]
    assert judged(spec, "gateway_keeps_stream_order", *_streamed(relayed, UPSTREAM)).outcome is Outcome.PASSED


def test_gw03_fails_when_the_stream_is_held_until_the_answer(spec: SpecSet) -> None:
    held = [(1.41, progress("c", 1)), (1.41, progress("c", 2)), (1.42, result(DONE, 7))]
    verdict = judged(spec, "gateway_does_not_hold_events", *_streamed(held, UPSTREAM))
    assert verdict.outcome is Outcome.FAILED and "held back" in verdict.reason
    relayed = [(0.11, progress("c", 1)), (0.21, progress("c", 2)), (1.41, result(DONE, 7))]
    assert judged(spec, "gateway_does_not_hold_events", *_streamed(relayed, UPSTREAM)).outcome is Outcome.PASSED
    quick = [(1.35, progress("c", 1)), (1.4, result(DONE, 1))]
    verdict = judged(spec, "gateway_does_not_hold_events", *_streamed([(1.41, result(DONE, 7))], quick))
    assert verdict.outcome is Outcome.NOT_VERIFIED  # nothing came well before the answer


# -- GW-06, GW-07: tokens and subscription ids ------------------------------------------------------------
def test_gw06_progress_must_name_the_clients_token(spec: SpecSet) -> None:
    def pair(relayed_token: str) -> list[HttpExchange]:
        return [
            front(request("tools/call", 7, with_token("client")), start=0.0, end=1.0,
                  events=[(0.2, progress(relayed_token, 1)), (0.9, result(DONE, 7))]),
            back(request("tools/call", 1, with_token("gw-1")), start=0.01, end=0.8,
                 events=[(0.19, progress("gw-1", 1)), (0.79, result(DONE, 1))]),
        ]  # fmt: skip

    verdict = judged(spec, "gateway_maps_progress_tokens", *pair("gw-1"))
    assert verdict.outcome is Outcome.FAILED and "not mapped back" in verdict.reason
    assert judged(spec, "gateway_maps_progress_tokens", *pair("client")).outcome is Outcome.PASSED
    plain = _streamed([(1.41, result(DONE, 7))], [(1.4, result(DONE, 1))])
    plain[0] = front(request("tools/call", 7, CALL), start=0.0, end=2.0, events=[(1.41, result(DONE, 7))])
    assert judged(spec, "gateway_maps_progress_tokens", *plain).outcome is Outcome.NOT_VERIFIED


def test_gw07_listen_notifications_carry_the_clients_subscription_id(spec: SpecSet) -> None:
    def changed(subscription: int) -> dict[str, Any]:
        return note(
            "notifications/tools/list_changed", {"_meta": {"io.modelcontextprotocol/subscriptionId": subscription}}
        )

    listen = {"notifications": {"toolsListChanged": True}}

    def pair(relayed: int) -> list[HttpExchange]:
        return [
            front(request("subscriptions/listen", 7, listen), start=0.0, end=2.0, events=[(0.5, changed(relayed))],
                  ending=EndReason.CLIENT_DISCONNECT),
            back(request("subscriptions/listen", 1, listen), start=0.01, end=2.0, events=[(0.49, changed(1))],
                 ending=EndReason.CLIENT_DISCONNECT),
        ]  # fmt: skip

    verdict = judged(spec, "gateway_maps_subscription_ids", *pair(1))
    assert verdict.outcome is Outcome.FAILED and "the upstream's id" in verdict.reason
    assert judged(spec, "gateway_maps_subscription_ids", *pair(7)).outcome is Outcome.PASSED


# -- GW-04, GW-05: cancellation -------------------------------------------------------------------------
def _cancelled_call(passed_on: int | None, *, upstream_answers_at: float = 1.0) -> list[HttpExchange]:
    def cancel(ident: int) -> dict[str, Any]:
        return note("notifications/cancelled", {"requestId": ident, "reason": "timeout"})

    items = [
        front(request("tools/call", 5, CALL, version=None), start=0.0, end=0.5, session="client-s",
              answer=None, status=200, ending=EndReason.CLIENT_DISCONNECT),
        back(request("tools/call", 1, CALL, version=None), start=0.01, end=upstream_answers_at, session="gw-s",
             answer=result(DONE, 1)),
        front(cancel(5), start=0.4, end=0.41, session="client-s", status=202),
    ]  # fmt: skip
    if passed_on is not None:
        items.append(back(cancel(passed_on), start=0.42, end=0.43, session="gw-s", status=202))
    return items


def test_gw04_a_cancellation_passed_upstream_names_the_upstreams_id(spec: SpecSet) -> None:
    verdict = judged(spec, "gateway_cancels_with_upstream_id", *_cancelled_call(5))
    assert verdict.outcome is Outcome.FAILED and "the client's id, not mapped" in verdict.reason
    assert judged(spec, "gateway_cancels_with_upstream_id", *_cancelled_call(1)).outcome is Outcome.PASSED
    verdict = judged(spec, "gateway_cancels_with_upstream_id", *_cancelled_call(None))
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_gw05_a_cancellation_reaches_the_upstream_while_it_works(spec: SpecSet) -> None:
    verdict = judged(spec, "gateway_passes_cancellations_on", *_cancelled_call(None))
    assert verdict.outcome is Outcome.FAILED and "no cancellation" in verdict.reason
    assert judged(spec, "gateway_passes_cancellations_on", *_cancelled_call(1)).outcome is Outcome.PASSED
    finished_first = _cancelled_call(None, upstream_answers_at=0.2)
    assert judged(spec, "gateway_passes_cancellations_on", *finished_first).outcome is Outcome.NOT_VERIFIED


def test_gw05_a_closed_stream_is_passed_on_as_a_closed_stream(spec: SpecSet) -> None:
    def pair(upstream_ending: EndReason, end: float) -> list[HttpExchange]:
        return [
            front(request("tools/call", 5, CALL), start=0.0, end=0.5, events=[], ending=EndReason.CLIENT_DISCONNECT),
            back(request("tools/call", 1, CALL), start=0.01, end=end, events=[(end, result(DONE, 1))]
                 if upstream_ending is EndReason.COMPLETE else [], ending=upstream_ending),
        ]  # fmt: skip

    verdict = judged(spec, "gateway_passes_cancellations_on", *pair(EndReason.COMPLETE, 2.0))
    assert verdict.outcome is Outcome.FAILED and "answered 1.50 s later" in verdict.reason
    passed = judged(spec, "gateway_passes_cancellations_on", *pair(EndReason.CLIENT_DISCONNECT, 0.51))
    assert passed.outcome is Outcome.PASSED


# -- GW-08..11: answers ---------------------------------------------------------------------------------
def _answered(front_answer: Any, back_answer: Any, method: str = "tools/call", params: Any = None) -> list[
    HttpExchange
]:  # fmt: skip
    params = CALL if params is None else params
    return [
        front(request(method, 7, params), start=0.0, end=0.2, answer=front_answer),
        back(request(method, 1, params), start=0.01, end=0.1, answer=back_answer),
    ]


def test_gw08_an_upstream_error_keeps_its_code(spec: SpecSet) -> None:
    verdict = judged(spec, "gateway_relays_error_codes", *_answered(error(-32603, 7), error(-32602, 1)))
    assert verdict.outcome is Outcome.FAILED and "error -32602" in verdict.reason
    verdict = judged(spec, "gateway_relays_error_codes", *_answered(result(DONE, 7), error(-32602, 1)))
    assert verdict.outcome is Outcome.FAILED and "a result" in verdict.reason
    assert judged(spec, "gateway_relays_error_codes", *_answered(error(-32602, 7), error(-32602, 1))).outcome is (
        Outcome.PASSED
    )
    ok = judged(spec, "gateway_relays_error_codes", *_answered(result(DONE, 7), result(DONE, 1)))
    assert ok.outcome is Outcome.NOT_VERIFIED


def test_gw08_a_refusal_of_the_upstream_never_becomes_a_result(spec: SpecSet) -> None:
    refused = [
        front(request("tools/list", 7), start=0.0, end=0.2, answer=result({"resultType": "complete", "tools": []}, 7)),
        back(request("tools/list", 1), start=0.01, end=0.1, status=403, answer=None,
             response_headers={"content-type": "text/plain"}),
    ]  # fmt: skip
    verdict = judged(spec, "gateway_relays_error_codes", *refused)
    assert verdict.outcome is Outcome.FAILED and "HTTP 403 and no JSON-RPC answer" in verdict.reason
    own_error = [refused[0], refused[1]]
    own_error[0] = front(request("tools/list", 7), start=0.0, end=0.2, status=502, answer=error(-32603, 7))
    assert judged(spec, "gateway_relays_error_codes", *own_error).outcome is Outcome.NOT_VERIFIED


def test_gw09_a_notification_changed_on_the_way_is_found(spec: SpecSet) -> None:
    upstream = [(0.1, note("notifications/message", {"level": "info", "data": "working"})), (1.4, result(DONE, 1))]
    changed = [(0.11, note("notifications/message", {"level": "info", "data": {"msg": "working"}})),
               (1.41, result(DONE, 7))]  # fmt: skip
    verdict = judged(spec, "gateway_relays_content_unchanged", *_streamed(changed, upstream))
    assert verdict.outcome is Outcome.FAILED and "params.data" in verdict.reason
    assert judged(spec, "gateway_relays_stream_notifications", *_streamed(changed, upstream)).outcome is Outcome.PASSED
    renumbered = [(0.11, note("notifications/progress", {"progressToken": "c", "progress": 1.0, "total": 3.0})),
                  (0.21, progress("c", 2)), (1.41, result(DONE, 7))]  # fmt: skip
    assert judged(spec, "gateway_relays_content_unchanged", *_streamed(renumbered, UPSTREAM)).outcome is Outcome.PASSED


def test_gw09_content_arrives_unchanged(spec: SpecSet) -> None:
    changed = {**DONE, "structuredContent": {"result": "3"}}
    verdict = judged(spec, "gateway_relays_content_unchanged", *_answered(result(changed, 7), result(DONE, 1)))
    assert verdict.outcome is Outcome.FAILED and "structuredContent.result" in verdict.reason
    blob = {"resultType": "complete", "contents": [{"uri": "x://b", "blob": "QUJD" * 40}]}
    cut = {"resultType": "complete", "contents": [{"uri": "x://b", "blob": "QUJD" * 39}]}
    params = {"uri": "x://b"}
    verdict = judged(
        spec, "gateway_relays_content_unchanged", *_answered(result(cut, 7), result(blob, 1), "resources/read", params)
    )
    assert verdict.outcome is Outcome.FAILED and "contents[0].blob" in verdict.reason
    assert judged(spec, "gateway_relays_content_unchanged", *_answered(result(DONE, 7), result(DONE, 1))).outcome is (
        Outcome.PASSED
    )
    errors = _answered(error(-1, 7), error(-1, 1))
    assert judged(spec, "gateway_relays_content_unchanged", *errors).outcome is Outcome.NOT_VERIFIED


TOOL = {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}}}


def _renamed(sent_name: str, header: str | None = None) -> list[HttpExchange]:
    listed = {"resultType": "complete", "tools": [{**TOOL, "name": "up_add"}]}
    upstream = {"resultType": "complete", "tools": [TOOL]}
    call = request("tools/call", 2, {"name": sent_name, "arguments": {"a": 1}})
    headers = modern_headers(call)
    if header is not None:
        headers["mcp-name"] = header
    return [
        front(request("tools/list", 1), start=0.0, end=0.2, answer=result(listed, 1)),
        back(request("tools/list", 1), start=0.01, end=0.1, answer=result(upstream, 1)),
        front(request("tools/call", 2, {"name": "up_add", "arguments": {"a": 1}}), start=1.0, end=1.2,
              answer=result(DONE, 2)),
        back(call, start=1.01, end=1.1, answer=result(DONE, 2), headers=headers),
    ]  # fmt: skip


def test_gw10_a_renamed_tool_is_called_upstream_by_its_upstream_name(spec: SpecSet) -> None:
    verdict = judged(spec, "gateway_calls_renamed_tools_by_upstream_name", *_renamed("up_add"))
    assert verdict.outcome is Outcome.FAILED and 'the upstream was asked for "up_add"' in verdict.reason
    verdict = judged(spec, "gateway_calls_renamed_tools_by_upstream_name", *_renamed("add", header="up_add"))
    assert verdict.outcome is Outcome.FAILED and "not recomputed" in verdict.reason
    assert judged(spec, "gateway_calls_renamed_tools_by_upstream_name", *_renamed("add")).outcome is Outcome.PASSED
    plain = _answered(result(DONE, 7), result(DONE, 1))
    assert judged(spec, "gateway_calls_renamed_tools_by_upstream_name", *plain).outcome is Outcome.NOT_VERIFIED


def test_gw09_accepts_the_declared_rename_in_a_tool_list(spec: SpecSet) -> None:
    assert judged(spec, "gateway_relays_content_unchanged", *_renamed("add")).outcome is Outcome.PASSED


def test_gw11_cursors_travel_both_ways(spec: SpecSet) -> None:
    page = {"resultType": "complete", "tools": [TOOL], "nextCursor": "up-2"}
    dropped = {"resultType": "complete", "tools": [TOOL]}
    verdict = judged(spec, "gateway_relays_cursors", *_answered(result(dropped, 7), result(page, 1), "tools/list", {}))
    assert verdict.outcome is Outcome.FAILED and "pages after it are lost" in verdict.reason
    kept = judged(spec, "gateway_relays_cursors", *_answered(result(page, 7), result(page, 1), "tools/list", {}))
    assert kept.outcome is Outcome.PASSED
    walked = [
        *_answered(result(dropped, 7), result(page, 1), "tools/list", {}),
        back(request("tools/list", 2, {"cursor": "up-2"}), start=0.11, end=0.15, answer=result(dropped, 2)),
    ]
    verdict = judged(spec, "gateway_relays_cursors", *walked)
    assert verdict.outcome is Outcome.PASSED and "following pages itself" in verdict.reason
    first_page = [
        front(request("tools/list", 7, {"cursor": "up-2"}), start=0.0, end=0.2, answer=result(dropped, 7)),
        back(request("tools/list", 1, {}), start=0.01, end=0.1, answer=result(page, 1)),
    ]
    verdict = judged(spec, "gateway_relays_cursors", *first_page)
    assert verdict.outcome is Outcome.FAILED and "first page" in verdict.reason
    single = _answered(result(dropped, 7), result(dropped, 1), "tools/list", {})
    assert judged(spec, "gateway_relays_cursors", *single).outcome is Outcome.NOT_VERIFIED


# -- GW-12..15: versions, sessions, principals, Origin --------------------------------------------------------
def test_gw12_the_version_reaches_the_upstream_unchanged(spec: SpecSet) -> None:
    other = request("tools/list", 1, {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-01-01"}})
    items = [
        front(request("tools/list", 7), start=0.0, end=0.2, answer=result({"resultType": "complete", "tools": []}, 7)),
        back(other, start=0.01, end=0.1, answer=result({"resultType": "complete", "tools": []}, 1)),
    ]
    verdict = judged(spec, "gateway_passes_version_on", *items)
    assert verdict.outcome is Outcome.FAILED and 'became "2026-01-01"' in verdict.reason
    same = _answered(result(DONE, 7), result(DONE, 1))
    assert judged(spec, "gateway_passes_version_on", *same).outcome is Outcome.PASSED


def test_gw13_an_ended_upstream_session_reaches_the_client_as_404(spec: SpecSet) -> None:
    def pair(front_status: int, front_answer: Any) -> list[HttpExchange]:
        return [
            front(request("tools/list", 7, version=None), start=0.0, end=0.2, session="client-s",
                  status=front_status, answer=front_answer),
            back(request("tools/list", 1, version=None), start=0.01, end=0.1, session="gw-s", status=404,
                 answer=error(-32600, 1, "Session not found")),
        ]  # fmt: skip

    verdict = judged(spec, "gateway_passes_ended_sessions_on", *pair(200, error(-32603, 7)))
    assert verdict.outcome is Outcome.FAILED and "cannot know to start over" in verdict.reason
    passed = judged(spec, "gateway_passes_ended_sessions_on", *pair(404, error(-32600, 7, "Session not found")))
    assert passed.outcome is Outcome.PASSED
    fine = _answered(result(DONE, 7), result(DONE, 1))
    assert judged(spec, "gateway_passes_ended_sessions_on", *fine).outcome is Outcome.NOT_APPLICABLE  # 2026 only


def test_gw14_two_principals_never_share_an_upstream_session(spec: SpecSet) -> None:
    def call(token: str, ident: int, start: float, upstream_session: str) -> list[HttpExchange]:
        body = request("tools/list", ident, version=None)
        return [
            front(body, start=start, end=start + 0.2, headers={**legacy_headers(f"c-{token}"),
                  "authorization": f"Bearer {token}"}, answer=result({"tools": []}, ident)),
            back(body, start=start + 0.01, end=start + 0.1, session=upstream_session,
                 answer=result({"tools": []}, ident)),
        ]  # fmt: skip

    shared = [*call("alice", 1, 0.0, "up-1"), *call("bob", 2, 1.0, "up-1")]
    verdict = judged(spec, "gateway_keeps_principals_apart", *shared)
    assert verdict.outcome is Outcome.FAILED and "serves two principals" in verdict.reason
    apart = [*call("alice", 1, 0.0, "up-1"), *call("bob", 2, 1.0, "up-2")]
    assert judged(spec, "gateway_keeps_principals_apart", *apart).outcome is Outcome.PASSED
    alone = [*call("alice", 1, 0.0, "up-1"), *call("alice", 2, 1.0, "up-1")]
    assert judged(spec, "gateway_keeps_principals_apart", *alone).outcome is Outcome.NOT_VERIFIED


def test_gw17_two_client_sessions_without_credentials_never_share_an_upstream_session(spec: SpecSet) -> None:
    def call(session: str, ident: int, start: float, upstream_session: str) -> list[HttpExchange]:
        body = request("tools/list", ident, version=None)
        return [
            front(body, start=start, end=start + 0.2, session=session, answer=result({"tools": []}, ident)),
            back(body, start=start + 0.01, end=start + 0.1, session=upstream_session,
                 answer=result({"tools": []}, ident)),
        ]  # fmt: skip

    shared = [*call("c-1", 1, 0.0, "up-1"), *call("c-2", 2, 1.0, "up-1")]
    verdict = judged(spec, "gateway_keeps_client_sessions_apart", *shared)
    assert verdict.outcome is Outcome.FAILED and "serves two client sessions" in verdict.reason
    assert judged(spec, "gateway_keeps_principals_apart", *shared).outcome is Outcome.NOT_VERIFIED  # no credentials
    apart = [*call("c-1", 1, 0.0, "up-1"), *call("c-2", 2, 1.0, "up-2")]
    assert judged(spec, "gateway_keeps_client_sessions_apart", *apart).outcome is Outcome.PASSED


def test_gw15_a_foreign_origin_is_refused_or_passed_on(spec: SpecSet) -> None:
    body = request("tools/list", 7)
    foreign = {**modern_headers(body), "origin": "https://evil.invalid", "host": "127.0.0.1:9000"}

    def pair(upstream_origin: str | None, front_status: int = 200) -> list[HttpExchange]:
        upstream = {**modern_headers(body), "host": "127.0.0.1:9001"}
        if upstream_origin is not None:
            upstream["origin"] = upstream_origin
        return [
            front(body, start=0.0, end=0.2, headers=foreign, status=front_status, answer=result({"tools": []}, 7)),
            back(body, start=0.01, end=0.1, headers=upstream, answer=result({"tools": []}, 7)),
        ]

    verdict = judged(spec, "gateway_checks_origin", *pair(None))
    assert verdict.outcome is Outcome.FAILED and "without it" in verdict.reason
    assert judged(spec, "gateway_checks_origin", *pair("https://evil.invalid")).outcome is Outcome.PASSED
    refused = [front(body, start=0.0, end=0.1, headers=foreign, status=403, answer=error(-32600, None))]
    assert judged(spec, "gateway_checks_origin", *refused).outcome is Outcome.PASSED
    same_host = _answered(result(DONE, 7), result(DONE, 1))
    assert judged(spec, "gateway_checks_origin", *same_host).outcome is Outcome.NOT_VERIFIED


def test_gw16_a_server_request_reaches_the_client_and_its_answer_the_upstream(spec: SpecSet) -> None:
    sampling = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5},
    }
    client_asked = {**sampling, "id": 30}

    def run(forwarded: bool, answered_as: int | None) -> list[HttpExchange]:
        items = [
            front(request("tools/call", 7, CALL, version=None), start=0.0, end=1.0, session="client-s",
                  events=([(0.2, client_asked)] if forwarded else []) + [(0.9, result(DONE, 7))]),
            back(request("tools/call", 1, CALL, version=None), start=0.01, end=0.8, session="gw-s",
                 events=[(0.19, sampling), (0.79, result(DONE, 1))]),
        ]  # fmt: skip
        if forwarded:
            answer = result({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}, 30)
            items.append(front(answer, start=0.3, end=0.31, session="client-s", status=202))
            if answered_as is not None:
                items.append(back({**answer, "id": answered_as}, start=0.32, end=0.33, session="gw-s", status=202))
        return items

    verdict = judged(spec, "gateway_relays_server_requests", *run(False, None))
    assert verdict.outcome is Outcome.FAILED and "never reached the client" in verdict.reason
    verdict = judged(spec, "gateway_relays_server_requests", *run(True, 30))
    assert verdict.outcome is Outcome.FAILED and "under the client's id" in verdict.reason
    assert judged(spec, "gateway_relays_server_requests", *run(True, 0)).outcome is Outcome.PASSED


def test_no_gateway_rule_applies_to_traffic_without_hops(spec: SpecSet) -> None:
    """A plain capture holds no relay: every GW rule finds nothing (not verified or not applicable), never fails."""
    from dataclasses import replace

    items = [replace(item, hop=None) for item in _answered(error(-32603, 7), error(-32602, 1))]
    log = ExchangeLog(items)
    checks = [check for check in REGISTRY.values() if check.requirements[0].startswith("GW-")]
    assert checks and {ident for check in checks for ident in check.requirements} == {
        entry.id for entry in catalogue() if entry.prefix == "GW" and entry.deferred is None
    }
    for verdict in evaluate(log, spec, checks=checks):
        assert verdict.outcome in (Outcome.NOT_VERIFIED, Outcome.NOT_APPLICABLE), verdict.check


@pytest.mark.parametrize("check", sorted(name for name, c in REGISTRY.items() if c.requirements[0].startswith("GW-")))
def test_every_gateway_rule_cites_a_gw_row(check: str) -> None:
    assert all(ident.startswith("GW-") for ident in REGISTRY[check].requirements)
