"""Subscriptions (SUB-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Severity
from mcp_assay.wire.model import EndReason
from tests.factories import error_body, judge, log_of, result_body
from tests.spec.rules._stream_builders import (
    SUB,
    ack,
    cancel,
    client,
    discover,
    done,
    legacy_init,
    legacy_post,
    legacy_req,
    legacy_sse,
    log,
    note,
    post,
    progress,
    req,
    server,
    sse,
    stdio_discover,
)

TOOLS_ONLY = {"toolsListChanged": True}
TOOLS_CHANGED = "notifications/tools/list_changed"


def listen(
    ident: Any = "L",
    wanted: dict[str, Any] | None = None,
    events: list[tuple[float, Any]] | None = None,
    *,
    start: float = 0.0,
    end: float = 5.0,
    reason: EndReason = EndReason.OPEN,
    granted: dict[str, Any] | None = None,
    acknowledged: bool = True,
):
    """An HTTP listen stream, acknowledged 10 ms after it opened unless told otherwise."""
    wanted = TOOLS_ONLY if wanted is None else wanted
    stream = [(start + 0.01, ack(ident, wanted if granted is None else granted))] if acknowledged else []
    return sse(
        req("subscriptions/listen", ident, {"notifications": wanted}),
        [*stream, *(events or [])],
        start=start,
        end=end,
        reason=reason,
    )


def changed(sub: Any = "L", method: str = TOOLS_CHANGED) -> dict[str, Any]:
    return note(method, sub=sub)


# -- SUB-01 / SUB-02 ----------------------------------------------------------------------------
def test_a_typed_filter_passes_sub_01(spec: SpecSet) -> None:
    """Spec-mandated (SUB-01)."""
    assert judge(log_of(discover(), listen()), spec, "listen_requests_carry_a_typed_filter").outcome is Outcome.PASSED


def test_a_listen_without_filter_or_with_a_string_flag_fails_sub_01(spec: SpecSet) -> None:
    missing = sse(req("subscriptions/listen", "L"), [], start=0.0, reason=EndReason.OPEN)
    assert judge(log_of(missing), spec, "listen_requests_carry_a_typed_filter").outcome is Outcome.FAILED
    wrong = listen(wanted={"toolsListChanged": "yes"})
    verdict = judge(log_of(wrong), spec, "listen_requests_carry_a_typed_filter")
    assert verdict.outcome is Outcome.FAILED
    assert "toolsListChanged" in verdict.reason


def test_sub_01_does_not_apply_to_2025(spec: SpecSet) -> None:
    assert judge(log_of(legacy_init()), spec, "listen_requests_carry_a_typed_filter").outcome is Outcome.NOT_APPLICABLE


def test_an_event_stream_or_an_error_passes_sub_02(spec: SpecSet) -> None:
    """Spec-mandated (SUB-02, A19)."""
    assert judge(log_of(listen()), spec, "http_listen_answers_are_event_streams").outcome is Outcome.PASSED
    refused = post(
        req("subscriptions/listen", "L", {"notifications": {}}), error_body(-32602, "bad", "L"), start=0.0, status=400
    )
    assert judge(log_of(refused), spec, "http_listen_answers_are_event_streams").outcome is Outcome.PASSED


def test_a_json_result_to_listen_fails_sub_02(spec: SpecSet) -> None:
    answered = post(req("subscriptions/listen", "L", {"notifications": {}}), done("L"), start=0.0)
    verdict = judge(log_of(answered), spec, "http_listen_answers_are_event_streams")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD


def test_sub_02_does_not_apply_to_stdio(spec: SpecSet) -> None:
    log_ = log_of(client(req("subscriptions/listen", 1, {"notifications": {}}), 0.0), server(ack(1), 0.01))
    assert judge(log_, spec, "http_listen_answers_are_event_streams").outcome is Outcome.NOT_APPLICABLE


# -- SUB-03 / SUB-04 ----------------------------------------------------------------------------
def test_an_acknowledgement_first_passes_sub_03(spec: SpecSet) -> None:
    """Spec-mandated (SUB-03)."""
    verdict = judge(log_of(listen(events=[(1.0, changed())])), spec, "listen_streams_start_with_the_acknowledgement")
    assert verdict.outcome is Outcome.PASSED


def test_a_notification_before_the_acknowledgement_fails_sub_03(spec: SpecSet) -> None:
    stream = listen(events=[(0.005, changed())], acknowledged=False)
    verdict = judge(log_of(stream), spec, "listen_streams_start_with_the_acknowledgement")
    assert verdict.outcome is Outcome.FAILED
    assert "before the acknowledgement" in verdict.reason


def test_a_listen_stream_that_never_acknowledges_fails_sub_03(spec: SpecSet) -> None:
    stream = listen(acknowledged=False, end=3.0)
    verdict = judge(log_of(stream), spec, "listen_streams_start_with_the_acknowledgement")
    assert verdict.outcome is Outcome.FAILED
    assert "within 3.0 s" in verdict.reason


def test_a_capture_that_stops_right_after_the_listen_is_not_verified_by_sub_03(spec: SpecSet) -> None:
    stream = listen(acknowledged=False, end=0.2)
    verdict = judge(log_of(stream), spec, "listen_streams_start_with_the_acknowledgement")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_an_acknowledgement_naming_the_listen_id_passes_sub_04(spec: SpecSet) -> None:
    """Spec-mandated (SUB-04)."""
    assert judge(log_of(listen(4)), spec, "acknowledgements_name_their_listen_request").outcome is Outcome.PASSED


def test_an_acknowledgement_that_changes_the_id_type_fails_sub_04(spec: SpecSet) -> None:
    """Spec-mandated (SUB-04, A29): an integer listen id stays an integer."""
    stream = sse(
        req("subscriptions/listen", 4, {"notifications": TOOLS_ONLY}),
        [(0.01, ack("4", TOOLS_ONLY))],
        start=0.0,
        reason=EndReason.OPEN,
    )
    verdict = judge(log_of(stream), spec, "acknowledgements_name_their_listen_request")
    assert verdict.outcome is Outcome.FAILED
    assert '"4" (string)' in verdict.reason


def test_an_untagged_stdio_acknowledgement_fails_sub_04(spec: SpecSet) -> None:
    untagged = note("notifications/subscriptions/acknowledged", {"notifications": {}})
    log_ = log_of(client(req("subscriptions/listen", 1, {"notifications": {}}), 0.0), server(untagged, 0.01))
    verdict = judge(log_, spec, "acknowledgements_name_their_listen_request")
    assert verdict.outcome is Outcome.FAILED
    assert "no _meta" in verdict.reason


def test_sub_04_is_not_verified_without_acknowledgements(spec: SpecSet) -> None:
    verdict = judge(log_of(discover()), spec, "acknowledgements_name_their_listen_request")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- SUB-05 / SUB-06 ----------------------------------------------------------------------------
def test_granting_what_was_asked_passes_sub_05(spec: SpecSet) -> None:
    """Spec-mandated (SUB-05)."""
    wanted = {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
    stream = listen(wanted=wanted, granted={"toolsListChanged": True})
    assert judge(log_of(stream), spec, "acknowledgements_grant_no_more_than_requested").outcome is Outcome.PASSED


def test_granting_more_than_was_asked_fails_sub_05(spec: SpecSet) -> None:
    stream = listen(granted={"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["x:/b"]})
    verdict = judge(log_of(stream), spec, "acknowledgements_grant_no_more_than_requested")
    assert verdict.outcome is Outcome.FAILED
    assert "promptsListChanged" in verdict.reason and "x:/b" in verdict.reason


def test_sub_05_is_not_verified_without_an_acknowledgement(spec: SpecSet) -> None:
    verdict = judge(log_of(listen(acknowledged=False)), spec, "acknowledgements_grant_no_more_than_requested")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_an_acknowledgement_backed_by_the_capabilities_passes_sub_06(spec: SpecSet) -> None:
    """Spec-mandated (SUB-06)."""
    verdict = judge(log_of(discover(), listen()), spec, "acknowledgements_drop_unsupported_types")
    assert verdict.outcome is Outcome.PASSED


def test_granting_list_changes_the_server_cannot_send_fails_sub_06(spec: SpecSet) -> None:
    log_ = log_of(discover({"tools": {}}), listen())
    verdict = judge(log_, spec, "acknowledgements_drop_unsupported_types")
    assert verdict.outcome is Outcome.FAILED
    assert "tools.listChanged" in verdict.reason


def test_sub_06_is_not_verified_without_the_capabilities(spec: SpecSet) -> None:
    verdict = judge(log_of(listen()), spec, "acknowledgements_drop_unsupported_types")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "capabilities" in verdict.reason


# -- SUB-07 / SUB-08 / SUB-09 -------------------------------------------------------------------
def test_requested_notifications_pass_sub_07(spec: SpecSet) -> None:
    """Spec-mandated (SUB-07): sub-resources of a listed URI count as listed."""
    wanted = {"toolsListChanged": True, "resourceSubscriptions": ["file:///dir"]}
    updated = note("notifications/resources/updated", {"uri": "file:///dir/a.txt"}, sub="L")
    stream = listen(wanted=wanted, events=[(1.0, changed()), (1.1, updated)])
    assert judge(log_of(stream), spec, "listen_streams_carry_only_requested_types").outcome is Outcome.PASSED


def test_unrequested_notifications_fail_sub_07(spec: SpecSet) -> None:
    prompts = listen(events=[(1.0, changed(method="notifications/prompts/list_changed"))])
    verdict = judge(log_of(prompts), spec, "listen_streams_carry_only_requested_types")
    assert verdict.outcome is Outcome.FAILED
    assert "promptsListChanged" in verdict.reason
    other_uri = listen(events=[(1.0, note("notifications/resources/updated", {"uri": "file:///x"}, sub="L"))])
    assert judge(log_of(other_uri), spec, "listen_streams_carry_only_requested_types").outcome is Outcome.FAILED


def test_an_empty_filter_acknowledged_then_silent_passes_sub_07(spec: SpecSet) -> None:
    """Spec-mandated (SUB-07): an empty opt-in is not everything; silence after the ack is the conformant answer."""
    stream = listen(wanted={}, granted={})
    assert judge(log_of(stream), spec, "listen_streams_carry_only_requested_types").outcome is Outcome.PASSED


def test_a_listen_without_any_traffic_is_not_verified_by_sub_07(spec: SpecSet) -> None:
    """Tool-defined: no listen stream, nothing to judge."""
    verdict = judge(log_of(), spec, "listen_streams_carry_only_requested_types")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_tagged_notifications_pass_sub_08(spec: SpecSet) -> None:
    """Spec-mandated (SUB-08)."""
    stream = listen(events=[(1.0, changed())])
    assert judge(log_of(stream), spec, "listen_notifications_carry_the_subscription_id").outcome is Outcome.PASSED


def test_an_untagged_list_changed_on_a_listen_stream_fails_sub_08(spec: SpecSet) -> None:
    """Spec-mandated (SUB-08, A11): list-changed notifications are tagged too."""
    stream = listen(events=[(1.0, note(TOOLS_CHANGED))])
    verdict = judge(log_of(stream), spec, "listen_notifications_carry_the_subscription_id")
    assert verdict.outcome is Outcome.FAILED
    assert "no subscriptionId" in verdict.reason


def test_a_stdio_tag_naming_no_open_listen_fails_sub_08(spec: SpecSet) -> None:
    log_ = log_of(
        client(req("subscriptions/listen", 1, {"notifications": TOOLS_ONLY}), 0.0),
        server(ack(1, TOOLS_ONLY), 0.01),
        server(changed("1"), 0.5),
    )
    verdict = judge(log_, spec, "listen_notifications_carry_the_subscription_id")
    assert verdict.outcome is Outcome.FAILED
    assert "the listen id is 1 (integer)" in verdict.reason


def test_sub_08_is_not_verified_without_listen_notifications(spec: SpecSet) -> None:
    verdict = judge(log_of(discover()), spec, "listen_notifications_carry_the_subscription_id")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_a_listen_stream_without_progress_or_logs_passes_sub_09(spec: SpecSet) -> None:
    """Spec-mandated (SUB-09)."""
    assert judge(
        log_of(listen(events=[(1.0, changed())])), spec, "listen_streams_carry_no_progress_or_log"
    ).outcome is (Outcome.PASSED)


def test_progress_or_logs_on_a_listen_stream_fail_sub_09(spec: SpecSet) -> None:
    http_progress = listen(events=[(1.0, progress("p", 1))])
    assert judge(log_of(http_progress), spec, "listen_streams_carry_no_progress_or_log").outcome is Outcome.FAILED
    stdio_log = log_of(
        client(req("subscriptions/listen", 1, {"notifications": TOOLS_ONLY}), 0.0),
        server(ack(1, TOOLS_ONLY), 0.01),
        server(log("info", sub=1), 0.5),
    )
    verdict = judge(stdio_log, spec, "listen_streams_carry_no_progress_or_log")
    assert verdict.outcome is Outcome.FAILED
    assert "notifications/message" in verdict.reason


def test_sub_09_is_not_verified_for_a_listen_with_no_messages(spec: SpecSet) -> None:
    stream = listen(acknowledged=False, end=0.1)
    assert judge(log_of(stream), spec, "listen_streams_carry_no_progress_or_log").outcome is Outcome.NOT_VERIFIED


# -- SUB-10 / SUB-11 ----------------------------------------------------------------------------
def test_change_notifications_on_listen_streams_pass_sub_10(spec: SpecSet) -> None:
    """Spec-mandated (SUB-10)."""
    verdict = judge(
        log_of(listen(events=[(1.0, changed())])), spec, "change_notifications_travel_only_on_listen_streams"
    )
    assert verdict.outcome is Outcome.PASSED


def test_change_notifications_on_a_tool_call_stream_fail_sub_10(spec: SpecSet) -> None:
    call = sse(
        req("tools/call", 2, {"name": "touch", "arguments": {}}),
        [(0.1, note(TOOLS_CHANGED)), (0.2, done(2, content=[]))],
        start=0.0,
    )
    verdict = judge(log_of(call), spec, "change_notifications_travel_only_on_listen_streams")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/call" in verdict.reason
    untagged = log_of(client(req("tools/list", 1), 0.0), server(note(TOOLS_CHANGED), 0.1))
    assert judge(untagged, spec, "change_notifications_travel_only_on_listen_streams").outcome is Outcome.FAILED


def test_sub_10_does_not_apply_to_2025(spec: SpecSet) -> None:
    """Spec-mandated (SUB-10 is 2026 only): 2025 list changes travel on any stream."""
    call = legacy_sse(legacy_req("tools/list", 1), [(0.1, note(TOOLS_CHANGED))], start=0.0)
    verdict = judge(log_of(legacy_init(), call), spec, "change_notifications_travel_only_on_listen_streams")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def _closing(result: dict[str, Any]) -> Any:
    return listen(events=[(1.0, result_body(result, "L"))], end=1.01, reason=EndReason.COMPLETE)


def test_a_clean_listen_result_passes_sub_11(spec: SpecSet) -> None:
    """Spec-mandated (SUB-11)."""
    stream = _closing({"resultType": "complete", "_meta": {SUB: "L"}})
    assert judge(log_of(stream), spec, "listen_results_close_the_subscription_cleanly").outcome is Outcome.PASSED
    assert judge(log_of(stream), spec, "servers_end_subscriptions_explicitly").outcome is Outcome.PASSED


def test_a_listen_result_without_subscription_id_fails_sub_11(spec: SpecSet) -> None:
    stream = _closing({"resultType": "complete", "tools": []})
    verdict = judge(log_of(stream), spec, "listen_results_close_the_subscription_cleanly")
    assert verdict.outcome is Outcome.FAILED
    assert "no subscriptionId" in verdict.reason and "tools" in verdict.reason


def test_sub_11_is_not_verified_while_listens_stay_open(spec: SpecSet) -> None:
    verdict = judge(log_of(listen()), spec, "listen_results_close_the_subscription_cleanly")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- SUB-13 / SUB-14 ----------------------------------------------------------------------------
def test_closing_the_listen_stream_passes_sub_13(spec: SpecSet) -> None:
    """Spec-mandated (SUB-13)."""
    closed = listen(end=1.0, reason=EndReason.CLIENT_DISCONNECT)
    assert judge(log_of(closed), spec, "clients_end_subscriptions_by_closing_or_cancelling").outcome is Outcome.PASSED
    stdio = log_of(
        client(req("subscriptions/listen", 1, {"notifications": {}}), 0.0),
        server(ack(1), 0.01),
        client(cancel(1), 1.0),
    )
    assert judge(stdio, spec, "clients_end_subscriptions_by_closing_or_cancelling").outcome is Outcome.PASSED


def test_posting_a_cancel_for_a_listen_stream_left_open_fails_sub_13(spec: SpecSet) -> None:
    log_ = log_of(listen(end=5.0), post(cancel("L"), start=1.0, status=202))
    verdict = judge(log_, spec, "clients_end_subscriptions_by_closing_or_cancelling")
    assert verdict.outcome is Outcome.FAILED
    assert "kept its stream open" in verdict.reason


def test_sub_13_is_not_verified_while_listens_stay_open(spec: SpecSet) -> None:
    verdict = judge(log_of(listen()), spec, "clients_end_subscriptions_by_closing_or_cancelling")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def _two_stdio_listens(*after: Any) -> Any:
    return log_of(
        client(req("subscriptions/listen", 1, {"notifications": TOOLS_ONLY}), 0.0),
        server(ack(1, TOOLS_ONLY), 0.01),
        client(req("subscriptions/listen", 2, {"notifications": {"promptsListChanged": True}}), 0.1),
        server(ack(2, {"promptsListChanged": True}), 0.11),
        *after,
    )


def test_notifications_for_the_subscription_that_asked_pass_sub_14(spec: SpecSet) -> None:
    """Spec-mandated (SUB-14)."""
    log_ = _two_stdio_listens(server(changed(1), 0.5), server(changed(2, "notifications/prompts/list_changed"), 0.6))
    assert judge(log_, spec, "notifications_reach_only_subscriptions_that_asked").outcome is Outcome.PASSED


def test_a_notification_sent_to_the_wrong_subscription_fails_sub_14(spec: SpecSet) -> None:
    log_ = _two_stdio_listens(server(changed(2), 0.5))
    verdict = judge(log_, spec, "notifications_reach_only_subscriptions_that_asked")
    assert verdict.outcome is Outcome.FAILED
    assert "did not ask" in verdict.reason


def test_sub_14_is_not_verified_with_a_single_subscription(spec: SpecSet) -> None:
    verdict = judge(
        log_of(listen(events=[(1.0, changed())])), spec, "notifications_reach_only_subscriptions_that_asked"
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- SUB-15 / SUB-16 ----------------------------------------------------------------------------
def _tools_list(ident: int, names: list[str], start: float) -> Any:
    tools = [{"name": name, "inputSchema": {"type": "object"}} for name in names]
    return post(req("tools/list", ident), done(ident, tools=tools, ttlMs=0, cacheScope="private"), start=start)


def test_a_list_change_announced_to_the_listener_passes_sub_15(spec: SpecSet) -> None:
    """Spec-mandated (SUB-15)."""
    log_ = log_of(
        discover(), listen(events=[(0.5, changed())]), _tools_list(1, ["a"], 0.1), _tools_list(2, ["a", "b"], 1.0)
    )
    assert judge(log_, spec, "list_changes_reach_listeners").outcome is Outcome.PASSED


def test_a_list_change_the_listener_never_heard_of_fails_sub_15(spec: SpecSet) -> None:
    log_ = log_of(discover(), listen(), _tools_list(1, ["a"], 0.1), _tools_list(2, ["a", "b"], 1.0))
    verdict = judge(log_, spec, "list_changes_reach_listeners")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD


def test_sub_15_is_not_verified_when_lists_do_not_change(spec: SpecSet) -> None:
    log_ = log_of(discover(), listen(), _tools_list(1, ["a"], 0.1), _tools_list(2, ["a"], 1.0))
    assert judge(log_, spec, "list_changes_reach_listeners").outcome is Outcome.NOT_VERIFIED


def test_list_changed_with_the_capability_passes_sub_16(spec: SpecSet) -> None:
    """Spec-mandated (SUB-16, A23)."""
    log_ = log_of(discover(), listen(events=[(1.0, changed())]))
    assert judge(log_, spec, "list_changed_needs_the_list_changed_capability").outcome is Outcome.PASSED


def test_list_changed_without_the_capability_fails_sub_16_in_both_revisions(spec: SpecSet) -> None:
    modern = log_of(discover({"tools": {}}), listen(events=[(1.0, changed())]))
    assert judge(modern, spec, "list_changed_needs_the_list_changed_capability").outcome is Outcome.FAILED
    get_stream = legacy_sse(legacy_req("tools/list", 1), [(0.1, note(TOOLS_CHANGED))], start=0.0)
    legacy = log_of(legacy_init({"tools": {"listChanged": False}}), get_stream)
    verdict = judge(legacy, spec, "list_changed_needs_the_list_changed_capability")
    assert verdict.outcome is Outcome.FAILED
    assert "listChanged" in verdict.reason


def test_sub_16_is_not_verified_without_the_capabilities(spec: SpecSet) -> None:
    verdict = judge(log_of(listen(events=[(1.0, changed())])), spec, "list_changed_needs_the_list_changed_capability")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- SUB-17 -------------------------------------------------------------------------------------
SUBSCRIBING = {"resources": {"subscribe": True}}


def test_an_empty_subscribe_result_passes_sub_17(spec: SpecSet) -> None:
    """Spec-mandated (SUB-17)."""
    subscribe = legacy_post(legacy_req("resources/subscribe", 1, {"uri": "file:///a"}), result_body({}, 1), start=0.0)
    log_ = log_of(legacy_init(SUBSCRIBING), subscribe)
    assert judge(log_, spec, "legacy_subscribe_requests_return_empty_results").outcome is Outcome.PASSED


def test_an_error_to_subscribe_despite_the_capability_fails_sub_17(spec: SpecSet) -> None:
    subscribe = legacy_post(
        legacy_req("resources/subscribe", 1, {"uri": "file:///a"}), error_body(-32601, "no", 1), start=0.0
    )
    log_ = log_of(legacy_init(SUBSCRIBING), subscribe)
    assert judge(log_, spec, "legacy_subscribe_requests_return_empty_results").outcome is Outcome.FAILED


def test_sub_17_does_not_apply_to_2026(spec: SpecSet) -> None:
    log_ = log_of(listen())
    assert judge(log_, spec, "legacy_subscribe_requests_return_empty_results").outcome is Outcome.NOT_APPLICABLE
    assert judge(log_, spec, "legacy_resource_updates_follow_subscriptions").outcome is Outcome.NOT_APPLICABLE


def test_updates_for_subscribed_uris_pass_and_others_fail_sub_17(spec: SpecSet) -> None:
    subscribe = legacy_post(legacy_req("resources/subscribe", 1, {"uri": "file:///a"}), result_body({}, 1), start=0.0)
    good = legacy_sse(
        legacy_req("tools/list", 2), [(0.2, note("notifications/resources/updated", {"uri": "file:///a"}))], start=0.1
    )
    log_ = log_of(legacy_init(SUBSCRIBING), subscribe, good)
    assert judge(log_, spec, "legacy_resource_updates_follow_subscriptions").outcome is Outcome.PASSED
    bad = legacy_sse(
        legacy_req("tools/list", 3),
        [(0.4, note("notifications/resources/updated", {"uri": "file:///b"}))],
        start=0.3,
    )
    log_.add(bad)
    verdict = judge(log_, spec, "legacy_resource_updates_follow_subscriptions")
    assert verdict.outcome is Outcome.FAILED
    assert "file:///b" in verdict.reason


def test_a_2025_update_with_a_subscription_id_fails_sub_17(spec: SpecSet) -> None:
    subscribe = legacy_post(legacy_req("resources/subscribe", 1, {"uri": "file:///a"}), result_body({}, 1), start=0.0)
    tagged = legacy_sse(
        legacy_req("tools/list", 2),
        [(0.2, note("notifications/resources/updated", {"uri": "file:///a"}, sub=1))],
        start=0.1,
    )
    verdict = judge(
        log_of(legacy_init(SUBSCRIBING), subscribe, tagged), spec, "legacy_resource_updates_follow_subscriptions"
    )
    assert verdict.outcome is Outcome.FAILED
    assert "subscriptionId" in verdict.reason


def test_stdio_listens_are_routed_by_their_subscription_id(spec: SpecSet) -> None:
    """Tool-defined: on stdio the tag is the only link between a notification and its listen."""
    log_ = log_of(
        stdio_discover(),
        client(req("subscriptions/listen", 1, {"notifications": TOOLS_ONLY}), 0.0),
        server(ack(1, TOOLS_ONLY), 0.01),
        server(changed(1), 0.5),
    )
    for check in (
        "listen_streams_start_with_the_acknowledgement",
        "acknowledgements_name_their_listen_request",
        "listen_streams_carry_only_requested_types",
        "listen_notifications_carry_the_subscription_id",
        "change_notifications_travel_only_on_listen_streams",
    ):
        assert judge(log_, spec, check).outcome is Outcome.PASSED, check
