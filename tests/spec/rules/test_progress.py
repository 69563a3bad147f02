"""Progress (PROG-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import EndReason
from tests.factories import judge, log_of, result_body
from tests.spec.rules._stream_builders import (
    ack,
    cancel,
    client,
    done,
    legacy_init,
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

TOOL = {"name": "progress_tool", "arguments": {"steps": 3}}


def call(token: Any = "p1", values: tuple[float, ...] = (1, 2, 3), *, ident: Any = 1, start: float = 0.0) -> Any:
    events = [(start + 0.01 * (i + 1), progress(token, value, 3)) for i, value in enumerate(values)]
    return sse(req("tools/call", ident, TOOL, progressToken=token), [*events, (start + 0.1, done(ident))], start=start)


# -- PROG-01 / PROG-02 --------------------------------------------------------------------------
def test_string_and_integer_tokens_pass_prog_01(spec: SpecSet) -> None:
    """Spec-mandated (PROG-01)."""
    log_ = log_of(call("p1"), call(7, ident=2, start=1.0))
    assert judge(log_, spec, "progress_tokens_are_strings_or_integers").outcome is Outcome.PASSED


def test_a_fractional_token_fails_prog_01(spec: SpecSet) -> None:
    verdict = judge(log_of(call(1.5)), spec, "progress_tokens_are_strings_or_integers")
    assert verdict.outcome is Outcome.FAILED
    assert "float" in verdict.reason


def test_prog_01_is_not_verified_without_tokens(spec: SpecSet) -> None:
    plain = post(req("tools/list", 1), done(1, tools=[]), start=0.0)
    assert judge(log_of(plain), spec, "progress_tokens_are_strings_or_integers").outcome is Outcome.NOT_VERIFIED


def test_reusing_a_token_after_the_request_finished_passes_prog_02(spec: SpecSet) -> None:
    """Spec-mandated (PROG-02): only requests in flight at the same time must differ."""
    log_ = log_of(call("p1"), call("p1", ident=2, start=1.0))
    assert judge(log_, spec, "progress_tokens_are_unique_among_requests_in_flight").outcome is Outcome.PASSED


def test_sharing_a_token_between_concurrent_requests_fails_prog_02(spec: SpecSet) -> None:
    log_ = log_of(
        stdio_discover(),
        client(req("tools/call", 1, TOOL, progressToken="p"), 0.0),
        client(req("tools/call", 2, TOOL, progressToken="p"), 0.01),
    )
    verdict = judge(log_, spec, "progress_tokens_are_unique_among_requests_in_flight")
    assert verdict.outcome is Outcome.FAILED
    assert "still in flight" in verdict.reason


def test_reusing_the_token_of_a_cancelled_request_passes_prog_02(spec: SpecSet) -> None:
    """Spec-mandated (PROG-02): a request the sender cancelled is no longer active, its answer or not."""
    log_ = log_of(
        stdio_discover(),
        client(req("tools/call", 1, TOOL, progressToken="p"), 0.0),
        client(cancel(1), 0.01),
        client(req("tools/call", 2, TOOL, progressToken="p"), 0.02),
    )
    verdict = judge(log_, spec, "progress_tokens_are_unique_among_requests_in_flight")
    assert verdict.outcome is Outcome.PASSED, verdict.reason


def test_two_clients_naming_themselves_apart_may_share_a_token_on_one_endpoint(spec: SpecSet) -> None:
    """Tool-defined: a 2026 HTTP endpoint has no session; requests naming different clientInfo are two senders."""
    first = req("tools/call", 1, TOOL, progressToken="p")
    second = req("tools/call", 2, TOOL, progressToken="p")
    first["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = {"name": "one", "version": "1"}
    second["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = {"name": "two", "version": "1"}
    log_ = log_of(
        sse(first, [(0.5, done(1))], start=0.0),
        sse(second, [(0.6, done(2))], start=0.1),
    )
    verdict = judge(log_, spec, "progress_tokens_are_unique_among_requests_in_flight")
    assert verdict.outcome is Outcome.PASSED, verdict.reason
    second["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = {"name": "one", "version": "1"}
    clash = log_of(sse(first, [(0.5, done(1))], start=0.0), sse(second, [(0.6, done(2))], start=0.1))
    assert judge(clash, spec, "progress_tokens_are_unique_among_requests_in_flight").outcome is Outcome.FAILED


def test_prog_02_is_not_verified_without_tokens(spec: SpecSet) -> None:
    plain = post(req("tools/list", 1), done(1, tools=[]), start=0.0)
    assert judge(log_of(plain), spec, "progress_tokens_are_unique_among_requests_in_flight").outcome is (
        Outcome.NOT_VERIFIED
    )


# -- PROG-03 ------------------------------------------------------------------------------------
def test_progress_quoting_a_request_in_flight_passes_prog_03(spec: SpecSet) -> None:
    """Spec-mandated (PROG-03)."""
    assert judge(log_of(call()), spec, "progress_names_a_request_in_flight").outcome is Outcome.PASSED


def test_progress_for_a_request_without_token_fails_prog_03(spec: SpecSet) -> None:
    untokened = sse(req("tools/call", 1, TOOL), [(0.01, progress("p1", 1)), (0.1, done(1))], start=0.0)
    verdict = judge(log_of(untokened), spec, "progress_names_a_request_in_flight")
    assert verdict.outcome is Outcome.FAILED
    assert "sent no progressToken" in verdict.reason


def test_progress_that_changes_the_token_type_fails_prog_03(spec: SpecSet) -> None:
    """Spec-mandated (PROG-03, A29)."""
    log_ = log_of(
        stdio_discover(), client(req("tools/call", 1, TOOL, progressToken=7), 0.0), server(progress("7", 1), 0.01)
    )
    verdict = judge(log_, spec, "progress_names_a_request_in_flight")
    assert verdict.outcome is Outcome.FAILED
    assert '"7" (string)' in verdict.reason


def test_prog_03_is_not_verified_without_progress(spec: SpecSet) -> None:
    plain = post(req("tools/list", 1), done(1, tools=[]), start=0.0)
    assert judge(log_of(plain), spec, "progress_names_a_request_in_flight").outcome is Outcome.NOT_VERIFIED


# -- PROG-04 ------------------------------------------------------------------------------------
def test_increasing_progress_passes_prog_04(spec: SpecSet) -> None:
    """Spec-mandated (PROG-04): fractional values are fine."""
    assert judge(log_of(call(values=(0.5, 1, 2.25))), spec, "progress_increases_with_every_notification").outcome is (
        Outcome.PASSED
    )


def test_repeated_progress_fails_prog_04(spec: SpecSet) -> None:
    verdict = judge(log_of(call(values=(1, 2, 2))), spec, "progress_increases_with_every_notification")
    assert verdict.outcome is Outcome.FAILED
    assert "from 2 to 2" in verdict.reason


def test_prog_04_is_not_verified_without_progress(spec: SpecSet) -> None:
    plain = post(req("tools/list", 1), done(1, tools=[]), start=0.0)
    assert judge(log_of(plain), spec, "progress_increases_with_every_notification").outcome is Outcome.NOT_VERIFIED


# -- PROG-05 ------------------------------------------------------------------------------------
def test_progress_before_the_response_passes_prog_05(spec: SpecSet) -> None:
    """Spec-mandated (PROG-05)."""
    assert judge(log_of(call()), spec, "no_progress_after_the_final_response").outcome is Outcome.PASSED


def test_progress_after_the_response_fails_prog_05(spec: SpecSet) -> None:
    late = sse(req("tools/call", 1, TOOL, progressToken="p1"), [(0.05, done(1)), (0.06, progress("p1", 3))], start=0.0)
    verdict = judge(log_of(late), spec, "no_progress_after_the_final_response")
    assert verdict.outcome is Outcome.FAILED
    assert "after its final response" in verdict.reason
    stdio = log_of(
        legacy_stdio_init(),
        client(legacy_req("tools/call", 1, TOOL, progressToken="p"), 0.0),
        server(result_body({"content": []}, 1), 0.1),
        server(progress("p", 1), 0.2),
    )
    assert judge(stdio, spec, "no_progress_after_the_final_response").outcome is Outcome.FAILED


def test_progress_for_a_task_request_after_its_create_result_is_not_judged(spec: SpecSet) -> None:
    """Spec-mandated (PROG-05, 2025 tasks): progress may continue until the task ends."""
    task = legacy_req("tools/call", 1, {**TOOL, "task": {"ttl": 1000}}, progressToken="p")
    log_ = log_of(
        legacy_stdio_init(), client(task, 0.0), server(result_body({"task": {}}, 1), 0.1), server(progress("p", 1), 0.2)
    )
    assert judge(log_, spec, "no_progress_after_the_final_response").outcome is Outcome.NOT_VERIFIED


# -- PROG-07 ------------------------------------------------------------------------------------
def test_progress_on_its_own_stream_passes_prog_07(spec: SpecSet) -> None:
    """Spec-mandated (PROG-07)."""
    assert judge(log_of(call()), spec, "progress_travels_on_its_request_stream").outcome is Outcome.PASSED


def test_progress_on_a_listen_stream_fails_prog_07(spec: SpecSet) -> None:
    slow = sse(req("tools/call", 1, TOOL, progressToken="p1"), [], start=0.0, end=2.0, reason=EndReason.OPEN)
    listen = sse(
        req("subscriptions/listen", "L", {"notifications": {}}),
        [(0.01, ack("L")), (0.5, progress("p1", 1))],
        start=0.0,
        reason=EndReason.OPEN,
    )
    verdict = judge(log_of(slow, listen), spec, "progress_travels_on_its_request_stream")
    assert verdict.outcome is Outcome.FAILED
    assert "listen stream" in verdict.reason
    assert judge(log_of(slow, listen), spec, "progress_names_a_request_in_flight").outcome is Outcome.PASSED


def test_prog_07_does_not_apply_to_2025(spec: SpecSet) -> None:
    legacy = legacy_sse(legacy_req("tools/call", 1, TOOL, progressToken="p"), [(0.1, progress("p", 1))], start=0.0)
    verdict = judge(log_of(legacy_init(), legacy), spec, "progress_travels_on_its_request_stream")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_progress_on_another_requests_stream_fails_prog_07(spec: SpecSet) -> None:
    """Spec-mandated (PROG-07): a request's progress never travels on a sibling request's stream."""
    slow = sse(req("tools/call", 1, TOOL, progressToken="p1"), [], start=0.0, end=2.0, reason=EndReason.OPEN)
    sibling = sse(req("tools/call", 2, TOOL), [(0.2, progress("p1", 1)), (0.3, done(2))], start=0.1)
    verdict = judge(log_of(slow, sibling), spec, "progress_travels_on_its_request_stream")
    assert verdict.outcome is Outcome.FAILED
    assert "request tools/call id=2" in verdict.reason
