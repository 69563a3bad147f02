"""Cancellation (CAN-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Side
from mcp_assay.wire.model import EndReason, ProcessExit
from tests.factories import error_body, judge, log_of, result_body
from tests.spec.rules._stream_builders import (
    ack,
    at,
    cancel,
    client,
    discover,
    done,
    legacy_init,
    legacy_post,
    legacy_req,
    legacy_sse,
    legacy_stdio_init,
    post,
    progress,
    req,
    server,
    sse,
    stdio_discover,
)

SLOW = {"name": "slow_write", "arguments": {"tag": "x"}}


def _disconnected_call(token: object = "t1") -> list:
    extra = {"progressToken": token} if token is not None else {}
    call = sse(
        req("tools/call", 1, SLOW, **extra),
        [(0.1, progress(token, 1))] if token is not None else [],
        start=0.0,
        end=0.2,
        reason=EndReason.CLIENT_DISCONNECT,
    )
    return [discover(), call]


def _listen(events: list, *, start: float = -1.0, end: float = 5.0, reason: EndReason = EndReason.OPEN):
    return sse(
        req("subscriptions/listen", "L", {"notifications": {"toolsListChanged": True}}),
        [(start + 0.01, ack("L", {"toolsListChanged": True})), *events],
        start=start,
        end=end,
        reason=reason,
    )


# -- CAN-01 -------------------------------------------------------------------------------------
def test_a_closed_stream_followed_by_silence_passes_can_01(spec: SpecSet) -> None:
    """Spec-mandated (CAN-01): nothing more about the request after the client closed its stream."""
    log = log_of(_disconnected_call(), _listen([]))
    assert judge(log, spec, "closing_a_stream_cancels_its_request").outcome is Outcome.PASSED


def test_progress_on_another_stream_after_the_close_fails_can_01(spec: SpecSet) -> None:
    """Spec-mandated (CAN-01): "MUST NOT send any further messages for it" covers every stream."""
    log = log_of(_disconnected_call(), _listen([(2.0, progress("t1", 2))]))
    verdict = judge(log, spec, "closing_a_stream_cancels_its_request")
    assert verdict.outcome is Outcome.FAILED
    assert "notifications/progress" in verdict.reason and "closed the response stream" in verdict.reason


def test_a_closed_stream_without_a_progress_token_is_not_verified_by_can_01(spec: SpecSet) -> None:
    """Tool-defined: without a token or listen id, later traffic about the request is unrecognisable."""
    verdict = judge(log_of(_disconnected_call(token=None)), spec, "closing_a_stream_cancels_its_request")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "progressToken" in verdict.reason


def test_can_01_does_not_apply_to_2025_sessions(spec: SpecSet) -> None:
    """Spec-mandated (CAN-12 vs CAN-01): in 2025 a disconnect is not a cancellation."""
    call = legacy_sse(legacy_req("tools/call", 2, SLOW), [], start=0.0, end=0.2, reason=EndReason.CLIENT_DISCONNECT)
    verdict = judge(log_of(legacy_init(), call), spec, "closing_a_stream_cancels_its_request")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- CAN-08 -------------------------------------------------------------------------------------
def _stdio_cancelled(*after: object) -> list:
    return [
        *stdio_discover(),
        client(req("tools/call", 1, SLOW, progressToken=7), 0.0),
        server(progress(7, 1), 0.05),
        client(cancel(1, reason="timeout"), 0.1),
        *after,
    ]


def test_a_silent_server_after_a_stdio_cancel_passes_can_08(spec: SpecSet) -> None:
    """Spec-mandated (CAN-08)."""
    log = log_of(_stdio_cancelled(client(req("tools/list", 2), 0.5), server(done(2, tools=[]), 0.51)))
    assert judge(log, spec, "cancelled_stdio_requests_get_no_later_messages").outcome is Outcome.PASSED
    assert judge(log, spec, "cancelled_requests_are_not_answered").outcome is Outcome.PASSED


def test_a_response_well_after_a_stdio_cancel_fails_the_must(spec: SpecSet) -> None:
    """Spec-mandated (CAN-08, A3): beyond the grace window the stdio MUST NOT applies."""
    log = log_of(_stdio_cancelled(server(done(1), 1.5)))
    verdict = judge(log, spec, "cancelled_stdio_requests_get_no_later_messages")
    assert verdict.outcome is Outcome.FAILED
    assert "result id=1" in verdict.reason and "1.40 s" in verdict.reason


def test_a_response_inside_the_grace_window_is_only_a_should_finding(spec: SpecSet) -> None:
    """Spec-mandated (CAN-08, A3): messages already queued may race the cancellation."""
    log = log_of(_stdio_cancelled(server(progress(7, 2), 0.3)))
    assert judge(log, spec, "cancelled_stdio_requests_get_no_later_messages").outcome is Outcome.PASSED
    should = judge(log, spec, "cancelled_requests_are_not_answered")
    assert should.outcome is Outcome.FAILED
    assert should.severity is Severity.SHOULD


def test_the_grace_window_is_a_setting(spec: SpecSet) -> None:
    """Tool-defined: cancel_grace_s widens the window."""
    log = log_of(_stdio_cancelled(server(done(1), 1.5)))
    verdict = judge(log, spec, "cancelled_stdio_requests_get_no_later_messages", cancel_grace_s=2.0)
    assert verdict.outcome is Outcome.PASSED


def test_the_stdio_must_does_not_apply_to_http(spec: SpecSet) -> None:
    verdict = judge(log_of(_disconnected_call()), spec, "cancelled_stdio_requests_get_no_later_messages")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_a_2025_error_after_a_cancel_fails_the_should(spec: SpecSet) -> None:
    """Spec-mandated (CAN-08, 2025 "Not send a response for the cancelled request"): the Python SDK's -32800."""
    call = legacy_sse(
        legacy_req("tools/call", 2, SLOW), [(0.15, error_body(-32800, "Request cancelled", 2))], start=0.0
    )
    notice = legacy_post(cancel(2), start=0.1, status=202)
    verdict = judge(log_of(legacy_init(), call, notice), spec, "cancelled_requests_are_not_answered")
    assert verdict.outcome is Outcome.FAILED
    assert "code=-32800" in verdict.reason


def test_a_2025_notice_the_server_refused_cancelled_nothing(spec: SpecSet) -> None:
    """Tool-defined: a notice answered 400 (sent without the session id, as a bridge did) is no cancellation the
    server took, so answering the call afterwards is no finding against it."""
    call = legacy_sse(legacy_req("tools/call", 2, SLOW), [(0.15, result_body({"content": []}, 2))], start=0.0)
    notice = legacy_post(cancel(2), start=0.1, status=400)
    verdict = judge(log_of(legacy_init(), call, notice), spec, "cancelled_requests_are_not_answered")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_cancelled_request_rule_is_not_verified_without_cancellations(spec: SpecSet) -> None:
    log = log_of(stdio_discover(), client(req("tools/list", 2), 0.5), server(done(2, tools=[]), 0.51))
    assert judge(log, spec, "cancelled_requests_are_not_answered").outcome is Outcome.NOT_VERIFIED


# -- CAN-02 -------------------------------------------------------------------------------------
def test_a_2026_cancel_post_answered_202_or_400_passes_can_02(spec: SpecSet) -> None:
    """Spec-mandated (CAN-02, A8): both acceptance and refusal are fine."""
    accepted = post(cancel(1), start=0.0, status=202)
    refused = post(cancel(2), error_body(-32600, "no", None), start=0.1, status=400)
    verdict = judge(log_of(accepted, refused), spec, "http_cancel_notices_are_accepted_or_refused")
    assert verdict.outcome is Outcome.PASSED


def test_a_2026_cancel_post_answered_with_a_response_fails_can_02(spec: SpecSet) -> None:
    answered = post(cancel(1), result_body({}, 1), start=0.0, status=200)
    verdict = judge(log_of(answered), spec, "http_cancel_notices_are_accepted_or_refused")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.INFO


def test_can_02_does_not_apply_to_stdio(spec: SpecSet) -> None:
    log = log_of(_stdio_cancelled())
    assert judge(log, spec, "http_cancel_notices_are_accepted_or_refused").outcome is Outcome.NOT_APPLICABLE
    assert judge(log, spec, "http_clients_cancel_by_closing_the_stream").outcome is Outcome.NOT_APPLICABLE


def test_a_2026_client_posting_a_cancel_is_noted_and_closing_the_stream_passes(spec: SpecSet) -> None:
    """Spec-mandated (CAN-02, A26): a POSTed cancel is information only."""
    closing = judge(log_of(_disconnected_call()), spec, "http_clients_cancel_by_closing_the_stream")
    assert closing.outcome is Outcome.PASSED
    noted = judge(log_of(post(cancel(1), start=0.0, status=202)), spec, "http_clients_cancel_by_closing_the_stream")
    assert noted.outcome is Outcome.FAILED
    assert noted.severity is Severity.INFO
    assert noted.reason.startswith("noted")


# -- CAN-03 / CAN-04 ----------------------------------------------------------------------------
def test_a_stdio_cancel_with_the_exact_id_passes_can_03(spec: SpecSet) -> None:
    """Spec-mandated (CAN-03)."""
    verdict = judge(log_of(_stdio_cancelled()), spec, "stdio_cancellations_repeat_the_request_id_exactly")
    assert verdict.outcome is Outcome.PASSED


def test_a_stdio_cancel_that_changes_the_id_type_fails_can_03(spec: SpecSet) -> None:
    """Spec-mandated (CAN-03, A29): 1 and "1" are different ids."""
    log = log_of(stdio_discover(), client(req("tools/call", 1, SLOW), 0.0), client(cancel("1"), 0.1))
    verdict = judge(log, spec, "stdio_cancellations_repeat_the_request_id_exactly")
    assert verdict.outcome is Outcome.FAILED
    assert '"1" (string)' in verdict.reason and "1 (integer)" in verdict.reason
    assert judge(log, spec, "cancellations_name_requests_their_sender_issued").outcome is Outcome.FAILED


def test_a_cancel_for_an_id_never_used_is_not_judged_by_can_03(spec: SpecSet) -> None:
    log = log_of(stdio_discover(), client(cancel(99), 0.1))
    verdict = judge(log, spec, "stdio_cancellations_repeat_the_request_id_exactly")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_cancelling_a_request_in_flight_passes_can_04(spec: SpecSet) -> None:
    """Spec-mandated (CAN-04)."""
    verdict = judge(log_of(_stdio_cancelled()), spec, "cancellations_name_requests_their_sender_issued")
    assert verdict.outcome is Outcome.PASSED


def test_a_cancel_that_crosses_the_answer_is_a_tolerated_race(spec: SpecSet) -> None:
    """Spec-mandated (CAN-04): both parties must handle the race."""
    log = log_of(stdio_discover(), client(req("tools/list", 1), 0.0), server(done(1, tools=[]), 0.1))
    log.add(client(cancel(1), 0.11))
    verdict = judge(log, spec, "cancellations_name_requests_their_sender_issued")
    assert verdict.outcome is Outcome.PASSED
    assert "race" in verdict.reason


def test_cancelling_an_id_never_issued_fails_can_04(spec: SpecSet) -> None:
    verdict = judge(
        log_of(stdio_discover(), client(cancel(99), 0.1)), spec, "cancellations_name_requests_their_sender_issued"
    )
    assert verdict.outcome is Outcome.FAILED
    assert "never used" in verdict.reason


def test_a_probe_cancelling_an_unknown_id_is_not_held_against_the_client(spec: SpecSet) -> None:
    """Tool-defined: the active suite's CAN-09 probe is marked invalid."""
    notice = post(cancel(99), start=0.0, status=202, probe={"name": "cancel-unknown", "invalid": True})
    verdict = judge(log_of(notice), spec, "cancellations_name_requests_their_sender_issued")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- CAN-05 -------------------------------------------------------------------------------------
def test_a_2025_cancel_without_request_id_fails_can_05(spec: SpecSet) -> None:
    """Spec-mandated (CAN-05): 2025 requires requestId for every non-task cancellation."""
    log = log_of(legacy_stdio_init(), client(legacy_req("tools/call", 1, SLOW), 0.0), client(cancel(1), 0.1))
    assert judge(log, spec, "legacy_cancellations_name_a_request").outcome is Outcome.PASSED
    log.add(client({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"reason": "x"}}, 0.2))
    verdict = judge(log, spec, "legacy_cancellations_name_a_request")
    assert verdict.outcome is Outcome.FAILED


def test_can_05_legacy_rule_does_not_apply_to_2026(spec: SpecSet) -> None:
    verdict = judge(log_of(_stdio_cancelled()), spec, "legacy_cancellations_name_a_request")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- CAN-06 / CAN-07 ----------------------------------------------------------------------------
def _stdio_listen(*after: object) -> list:
    return [
        *stdio_discover(),
        client(req("subscriptions/listen", 5, {"notifications": {"toolsListChanged": True}}), 0.0),
        server(ack(5, {"toolsListChanged": True}), 0.01),
        *after,
    ]


def test_a_server_cancelling_its_listen_stream_passes_can_06_and_can_07(spec: SpecSet) -> None:
    """Spec-mandated (CAN-06, CAN-07)."""
    log = log_of(_stdio_listen(server(cancel(5), 1.0)))
    assert judge(log, spec, "servers_cancel_only_listen_requests").outcome is Outcome.PASSED
    assert judge(log, spec, "servers_end_subscriptions_explicitly").outcome is Outcome.PASSED


def test_a_server_cancelling_a_tool_call_fails_can_06(spec: SpecSet) -> None:
    """Spec-mandated (CAN-06): servers cancel nothing but listen streams."""
    log = log_of(stdio_discover(), client(req("tools/call", 1, SLOW), 0.0), server(cancel(1), 0.2))
    verdict = judge(log, spec, "servers_cancel_only_listen_requests")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/call" in verdict.reason


def test_can_06_does_not_apply_to_2025(spec: SpecSet) -> None:
    """Spec-mandated (CAN-04 2025): 2025 servers cancel their own requests legitimately."""
    log = log_of(legacy_stdio_init(), server(legacy_req("roots/list", 1), 0.0), server(cancel(1), 0.1))
    assert judge(log, spec, "servers_cancel_only_listen_requests").outcome is Outcome.NOT_APPLICABLE
    assert judge(log, spec, "cancellations_name_requests_their_sender_issued").outcome is Outcome.PASSED


def test_a_listen_stream_the_server_drops_silently_fails_can_07(spec: SpecSet) -> None:
    """Spec-mandated (CAN-07, A2): neither result nor cancellation is a SHOULD-level finding."""
    log = log_of(discover(), _listen([], end=1.0, reason=EndReason.COMPLETE))
    verdict = judge(log, spec, "servers_end_subscriptions_explicitly")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD


def test_a_listen_the_client_closed_is_not_judged_by_can_07(spec: SpecSet) -> None:
    log = log_of(discover(), _listen([], end=1.0, reason=EndReason.CLIENT_DISCONNECT))
    assert judge(log, spec, "servers_end_subscriptions_explicitly").outcome is Outcome.NOT_VERIFIED


# -- CAN-09 -------------------------------------------------------------------------------------
def test_an_ignored_unknown_cancel_passes_can_09(spec: SpecSet) -> None:
    """Spec-mandated (CAN-09): no reply, and the next request is served."""
    log = log_of(
        stdio_discover(), client(cancel(99), 0.0), client(req("tools/list", 2), 0.1), server(done(2, tools=[]), 0.11)
    )
    assert judge(log, spec, "unknown_cancellations_get_no_reply").outcome is Outcome.PASSED
    assert judge(log, spec, "servers_keep_serving_after_unknown_cancellations").outcome is Outcome.PASSED


def test_an_error_reply_to_an_unknown_cancel_fails_can_09(spec: SpecSet) -> None:
    log = log_of(stdio_discover(), client(cancel(99), 0.0), server(error_body(-32602, "unknown request", None), 0.01))
    verdict = judge(log, spec, "unknown_cancellations_get_no_reply")
    assert verdict.outcome is Outcome.FAILED
    assert "no request used the id 99" in verdict.reason


def test_an_http_unknown_cancel_refused_without_id_passes_and_with_id_fails(spec: SpecSet) -> None:
    """Spec-mandated (CAN-09): HTTP 202, or a 4xx without an id."""
    refused = post(cancel(99), error_body(-32602, "unknown", None), start=0.0, status=400)
    assert judge(log_of(refused), spec, "unknown_cancellations_get_no_reply").outcome is Outcome.PASSED
    answered = post(cancel(99), error_body(-32602, "unknown", 99), start=0.0, status=400)
    assert judge(log_of(answered), spec, "unknown_cancellations_get_no_reply").outcome is Outcome.FAILED


def test_a_server_that_stops_answering_after_an_unknown_cancel_fails_can_09(spec: SpecSet) -> None:
    log = log_of(stdio_discover(), client(cancel(99), 0.0), client(req("tools/list", 2), 0.1))
    log.add(ProcessExit(id="exit", connection="conn-1", time=at(3.0), code=1))
    verdict = judge(log, spec, "servers_keep_serving_after_unknown_cancellations")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD


def test_can_09_is_not_verified_when_every_cancel_names_a_request_in_flight(spec: SpecSet) -> None:
    log = log_of(_stdio_cancelled())
    assert judge(log, spec, "unknown_cancellations_get_no_reply").outcome is Outcome.NOT_VERIFIED
    assert judge(log, spec, "servers_keep_serving_after_unknown_cancellations").outcome is Outcome.NOT_VERIFIED


# -- CAN-10 / CAN-11 ----------------------------------------------------------------------------
def test_cancelling_initialize_fails_can_10(spec: SpecSet) -> None:
    """Spec-mandated (CAN-10)."""
    good = log_of(legacy_stdio_init(), client(legacy_req("tools/call", 1, SLOW), 0.0), client(cancel(1), 0.1))
    assert judge(good, spec, "initialize_is_never_cancelled").outcome is Outcome.PASSED
    bad = log_of(legacy_stdio_init(), client(cancel(0), 0.1))
    assert judge(bad, spec, "initialize_is_never_cancelled").outcome is Outcome.FAILED


def test_can_10_does_not_apply_to_2026(spec: SpecSet) -> None:
    assert judge(log_of(_stdio_cancelled()), spec, "initialize_is_never_cancelled").outcome is Outcome.NOT_APPLICABLE


def test_cancelling_a_task_request_with_a_notification_fails_can_11(spec: SpecSet) -> None:
    """Spec-mandated (CAN-11): tasks are cancelled with tasks/cancel."""
    task_call = legacy_req("tools/call", 1, {**SLOW, "task": {"ttl": 1000}})
    bad = log_of(legacy_stdio_init(), client(task_call, 0.0), client(cancel(1), 0.1))
    assert judge(bad, spec, "task_requests_are_cancelled_with_tasks_cancel").outcome is Outcome.FAILED
    good = log_of(
        legacy_stdio_init(), client(task_call, 0.0), client(legacy_req("tasks/cancel", 2, {"taskId": "t"}), 0.1)
    )
    assert judge(good, spec, "task_requests_are_cancelled_with_tasks_cancel").outcome is Outcome.PASSED


def test_can_11_does_not_apply_to_2026(spec: SpecSet) -> None:
    verdict = judge(log_of(_stdio_cancelled()), spec, "task_requests_are_cancelled_with_tasks_cancel")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- CAN-12 -------------------------------------------------------------------------------------
def test_a_2025_cancel_post_gets_202(spec: SpecSet) -> None:
    """Spec-mandated (CAN-12)."""
    good = log_of(legacy_init(), legacy_post(cancel(1), start=0.1, status=202))
    assert judge(good, spec, "legacy_http_cancellations_are_accepted").outcome is Outcome.PASSED
    bad = log_of(legacy_init(), legacy_post(cancel(1), error_body(-32600, "no", None), start=0.1, status=400))
    assert judge(bad, spec, "legacy_http_cancellations_are_accepted").outcome is Outcome.FAILED


def test_can_12_does_not_apply_to_2026(spec: SpecSet) -> None:
    verdict = judge(log_of(post(cancel(1), start=0.0, status=202)), spec, "legacy_http_cancellations_are_accepted")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_a_2025_client_dropping_a_stream_must_also_cancel(spec: SpecSet) -> None:
    """Spec-mandated (CAN-12): in 2025 a disconnect does not cancel."""
    dropped = legacy_sse(legacy_req("tools/call", 2, SLOW), [], start=0.0, end=0.2, reason=EndReason.CLIENT_DISCONNECT)
    bad = judge(log_of(legacy_init(), dropped), spec, "legacy_http_clients_do_not_cancel_by_disconnecting")
    assert bad.outcome is Outcome.FAILED
    with_notice = log_of(legacy_init(), dropped, legacy_post(cancel(2), start=0.21, status=202))
    good = judge(with_notice, spec, "legacy_http_clients_do_not_cancel_by_disconnecting")
    assert good.outcome is Outcome.PASSED


def test_can_12_client_rule_is_not_verified_without_dropped_streams(spec: SpecSet) -> None:
    call = legacy_sse(legacy_req("tools/list", 2), [(0.1, result_body({"tools": []}, 2))], start=0.0)
    verdict = judge(log_of(legacy_init(), call), spec, "legacy_http_clients_do_not_cancel_by_disconnecting")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- CAN-13 -------------------------------------------------------------------------------------
def test_a_request_left_open_while_the_client_carries_on_fails_can_13(spec: SpecSet) -> None:
    """Spec-mandated (CAN-13): a request that timed out is cancelled."""
    log = log_of(stdio_discover(), client(req("tools/call", 1, SLOW), 0.0), client(req("tools/list", 2), 400.0))
    verdict = judge(log, spec, "clients_cancel_requests_they_abandon")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD
    assert judge(log_of(_stdio_cancelled()), spec, "clients_cancel_requests_they_abandon").outcome is Outcome.PASSED


def test_can_13_is_not_verified_when_every_request_is_answered(spec: SpecSet) -> None:
    log = log_of(stdio_discover(), client(req("tools/list", 2), 0.5), server(done(2, tools=[]), 0.51))
    assert judge(log, spec, "clients_cancel_requests_they_abandon").outcome is Outcome.NOT_VERIFIED


def test_the_abandonment_threshold_is_a_setting(spec: SpecSet) -> None:
    log = log_of(stdio_discover(), client(req("tools/call", 1, SLOW), 0.0), client(req("tools/list", 2), 40.0))
    assert judge(log, spec, "clients_cancel_requests_they_abandon").outcome is Outcome.NOT_VERIFIED
    verdict = judge(log, spec, "clients_cancel_requests_they_abandon", request_timeout_s=30)
    assert verdict.outcome is Outcome.FAILED


def test_builders_keep_time_order() -> None:
    """Tool-defined: the builders' clock puts events after their request."""
    exchange = sse(req("tools/list", 1), [(0.1, done(1, tools=[]))], start=0.0)
    assert exchange.response_messages[0].time > exchange.request.time
    assert Side.SERVER is exchange.response_messages[0].sender


def test_progress_for_a_later_request_reusing_the_token_is_not_blamed_on_the_cancelled_one(spec: SpecSet) -> None:
    """Tool-defined: once another request took over the token, its progress is not about the cancelled request."""
    log = log_of(
        _stdio_cancelled(
            client(req("tools/call", 2, SLOW, progressToken=7), 0.2),
            server(progress(7, 1), 1.5),
            server(done(2), 1.6),
        )
    )
    assert judge(log, spec, "cancelled_stdio_requests_get_no_later_messages").outcome is Outcome.PASSED
