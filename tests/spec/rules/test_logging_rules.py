"""Logging (LOG-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Severity
from mcp_assay.wire.model import EndReason
from tests.factories import error_body, judge, log_of, modern_headers, result_body
from tests.spec.rules._stream_builders import (
    CAPS,
    ack,
    client,
    discover,
    done,
    legacy_init,
    legacy_post,
    legacy_req,
    legacy_sse,
    log,
    post,
    req,
    server,
    sse,
    stdio_discover,
)

LOGGING = {**CAPS, "logging": {}}
CHATTY = {"name": "chatty", "arguments": {}}


def chatty(ident: Any = 1, levels: tuple[str, ...] = ("info", "error"), *, start: float = 0.0, **extra: Any) -> Any:
    events = [(start + 0.01 * (i + 1), log(level)) for i, level in enumerate(levels)]
    return sse(
        req("tools/call", ident, CHATTY, **extra), [*events, (start + 0.1, done(ident, content=[]))], start=start
    )


# -- LOG-01 -------------------------------------------------------------------------------------
def test_logs_for_a_request_that_set_a_level_pass_log_01(spec: SpecSet) -> None:
    """Spec-mandated (LOG-01)."""
    verdict = judge(
        log_of(discover(LOGGING), chatty(logLevel="info")), spec, "log_messages_only_for_requests_that_asked"
    )
    assert verdict.outcome is Outcome.PASSED


def test_logs_for_a_request_without_a_level_fail_log_01(spec: SpecSet) -> None:
    """Spec-mandated (LOG-01): no logLevel, no notifications/message."""
    verdict = judge(log_of(discover(LOGGING), chatty()), spec, "log_messages_only_for_requests_that_asked")
    assert verdict.outcome is Outcome.FAILED
    assert "set no logLevel" in verdict.reason


def test_a_stdio_log_while_only_levelless_requests_run_fails_log_01(spec: SpecSet) -> None:
    """Spec-mandated (LOG-01, A9): unambiguous on stdio when every open request lacks a level."""
    log_ = log_of(stdio_discover(LOGGING), client(req("tools/call", 1, CHATTY), 0.0), server(log("info"), 0.05))
    assert judge(log_, spec, "log_messages_only_for_requests_that_asked").outcome is Outcome.FAILED


def test_a_stdio_log_with_mixed_requests_in_flight_is_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (A9): attribution is ambiguous, so LOG-01 does not judge."""
    log_ = log_of(
        stdio_discover(LOGGING),
        client(req("tools/call", 1, CHATTY), 0.0),
        client(req("tools/call", 2, CHATTY, logLevel="debug"), 0.01),
        server(log("info"), 0.05),
    )
    verdict = judge(log_, spec, "log_messages_only_for_requests_that_asked")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "A9" in verdict.reason


def test_log_01_does_not_apply_to_2025(spec: SpecSet) -> None:
    call = legacy_sse(legacy_req("tools/call", 1, CHATTY), [(0.1, log("info"))], start=0.0)
    verdict = judge(log_of(legacy_init({"logging": {}}), call), spec, "log_messages_only_for_requests_that_asked")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- LOG-02 -------------------------------------------------------------------------------------
def test_logs_at_or_above_the_level_pass_log_02(spec: SpecSet) -> None:
    """Spec-mandated (LOG-02)."""
    log_ = log_of(discover(LOGGING), chatty(levels=("error", "critical"), logLevel="error"))
    assert judge(log_, spec, "log_messages_respect_the_requested_level").outcome is Outcome.PASSED


def test_logs_below_the_level_fail_log_02_as_a_should(spec: SpecSet) -> None:
    """Spec-mandated (LOG-02, A10): a lower level is an inferred MUST NOT, reported as SHOULD."""
    verdict = judge(
        log_of(discover(LOGGING), chatty(logLevel="error")), spec, "log_messages_respect_the_requested_level"
    )
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD
    assert "info message" in verdict.reason


def test_a_stdio_log_below_every_open_level_fails_log_02(spec: SpecSet) -> None:
    log_ = log_of(
        stdio_discover(LOGGING),
        client(req("tools/call", 1, CHATTY, logLevel="warning"), 0.0),
        client(req("tools/call", 2, CHATTY, logLevel="error"), 0.01),
        server(log("debug"), 0.05),
    )
    assert judge(log_, spec, "log_messages_respect_the_requested_level").outcome is Outcome.FAILED


def test_log_02_is_not_verified_without_requested_levels(spec: SpecSet) -> None:
    verdict = judge(log_of(discover(LOGGING), chatty()), spec, "log_messages_respect_the_requested_level")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- LOG-03 -------------------------------------------------------------------------------------
def test_logs_on_their_request_stream_pass_log_03(spec: SpecSet) -> None:
    """Spec-mandated (LOG-03)."""
    verdict = judge(
        log_of(discover(LOGGING), chatty(logLevel="info")), spec, "log_messages_stay_on_their_request_stream"
    )
    assert verdict.outcome is Outcome.PASSED


def test_logs_on_a_listen_stream_or_after_the_response_fail_log_03(spec: SpecSet) -> None:
    listen = sse(
        req("subscriptions/listen", "L", {"notifications": {}}, logLevel="debug"),
        [(0.01, ack("L")), (0.5, log("info"))],
        start=0.0,
        reason=EndReason.OPEN,
    )
    verdict = judge(log_of(discover(LOGGING), listen), spec, "log_messages_stay_on_their_request_stream")
    assert verdict.outcome is Outcome.FAILED
    assert "listen stream" in verdict.reason
    late = sse(
        req("tools/call", 2, CHATTY, logLevel="info"), [(0.1, done(2, content=[])), (0.2, log("info"))], start=0.0
    )
    verdict = judge(log_of(discover(LOGGING), late), spec, "log_messages_stay_on_their_request_stream")
    assert verdict.outcome is Outcome.FAILED
    assert "after the final response" in verdict.reason


def test_a_stdio_log_with_nothing_in_flight_fails_log_03(spec: SpecSet) -> None:
    log_ = log_of(stdio_discover(LOGGING), server(log("info"), 0.5))
    assert judge(log_, spec, "log_messages_stay_on_their_request_stream").outcome is Outcome.FAILED


def test_log_03_is_not_verified_without_logs(spec: SpecSet) -> None:
    verdict = judge(log_of(discover(LOGGING)), spec, "log_messages_stay_on_their_request_stream")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- LOG-04 -------------------------------------------------------------------------------------
def test_an_unknown_level_refused_with_minus_32602_passes_log_04(spec: SpecSet) -> None:
    """Spec-mandated (LOG-04)."""
    body = req("tools/call", 1, CHATTY, logLevel="verbose")
    refused = post(body, error_body(-32602, "Invalid request parameters", 1), start=0.0, status=400)
    assert judge(log_of(refused), spec, "unknown_log_levels_are_rejected").outcome is Outcome.PASSED


def test_an_unknown_level_served_fails_log_04(spec: SpecSet) -> None:
    served = post(req("tools/call", 1, CHATTY, logLevel="verbose"), done(1, content=[]), start=0.0)
    verdict = judge(log_of(served), spec, "unknown_log_levels_are_rejected")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD


def test_log_04_is_not_verified_when_every_level_is_known(spec: SpecSet) -> None:
    assert judge(log_of(chatty(logLevel="info")), spec, "unknown_log_levels_are_rejected").outcome is (
        Outcome.NOT_VERIFIED
    )


# -- LOG-05 -------------------------------------------------------------------------------------
def test_logs_from_a_server_declaring_logging_pass_log_05(spec: SpecSet) -> None:
    """Spec-mandated (LOG-05)."""
    verdict = judge(
        log_of(discover(LOGGING), chatty(logLevel="info")), spec, "log_messages_need_the_logging_capability"
    )
    assert verdict.outcome is Outcome.PASSED


def test_logs_without_the_logging_capability_fail_log_05(spec: SpecSet) -> None:
    verdict = judge(log_of(discover(), chatty(logLevel="info")), spec, "log_messages_need_the_logging_capability")
    assert verdict.outcome is Outcome.FAILED
    assert "logging" in verdict.reason


def test_log_05_is_not_verified_without_the_capabilities(spec: SpecSet) -> None:
    verdict = judge(log_of(chatty(logLevel="info")), spec, "log_messages_need_the_logging_capability")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- LOG-07 -------------------------------------------------------------------------------------
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"


def _logging(data: Any, *, headers: dict[str, str] | None = None) -> Any:
    body = req("tools/call", 1, CHATTY, logLevel="info")
    return sse(
        body,
        [(0.01, log("info", data)), (0.1, done(1, content=[]))],
        start=0.0,
        headers=headers or modern_headers(body),
    )


def test_ordinary_log_data_passes_log_07(spec: SpecSet) -> None:
    """Spec-mandated (LOG-07)."""
    verdict = judge(log_of(_logging({"step": 3, "note": "token cache warmed"})), spec, "log_messages_leak_no_secrets")
    assert verdict.outcome is Outcome.PASSED


def test_a_private_key_in_a_log_fails_log_07_without_repeating_it(spec: SpecSet) -> None:
    """Spec-mandated (LOG-07): the evidence names the kind of secret, never the secret."""
    verdict = judge(log_of(_logging({"key": PRIVATE_KEY})), spec, "log_messages_leak_no_secrets")
    assert verdict.outcome is Outcome.FAILED
    assert "private key" in verdict.reason
    evidence = verdict.evidence[0]
    assert "MIIEow" not in evidence.excerpt + evidence.detail + evidence.summary


def test_the_clients_own_credential_or_an_email_in_a_log_fails_log_07(spec: SpecSet) -> None:
    body = req("tools/call", 1, CHATTY, logLevel="info")
    headers = {**modern_headers(body), "authorization": "Bearer opaque-0123456789"}
    leaked = _logging("calling upstream with opaque-0123456789", headers=headers)
    verdict = judge(log_of(leaked), spec, "log_messages_leak_no_secrets")
    assert verdict.outcome is Outcome.FAILED
    assert "Authorization" in verdict.reason
    email = judge(log_of(_logging("user jane.doe@example.org signed in")), spec, "log_messages_leak_no_secrets")
    assert email.outcome is Outcome.FAILED
    assert "e-mail" in email.reason


def test_log_07_is_not_verified_without_logs(spec: SpecSet) -> None:
    assert judge(log_of(discover()), spec, "log_messages_leak_no_secrets").outcome is Outcome.NOT_VERIFIED


# -- LOG-08 -------------------------------------------------------------------------------------
def _set_level(level: str, answer: Any, *, ident: int = 1, start: float = 0.0) -> Any:
    return legacy_post(legacy_req("logging/setLevel", ident, {"level": level}), answer, start=start)


def test_set_level_answered_with_an_empty_result_passes_log_08(spec: SpecSet) -> None:
    """Spec-mandated (LOG-08)."""
    log_ = log_of(legacy_init({"logging": {}}), _set_level("warning", result_body({}, 1)))
    log_.add(_set_level("verbose", error_body(-32602, "bad level", 2), ident=2, start=0.1))
    assert judge(log_, spec, "set_level_requests_are_answered_as_specified").outcome is Outcome.PASSED


def test_set_level_answers_that_differ_fail_log_08(spec: SpecSet) -> None:
    odd = log_of(legacy_init({"logging": {}}), _set_level("warning", result_body({"level": "warning"}, 1)))
    assert judge(odd, spec, "set_level_requests_are_answered_as_specified").outcome is Outcome.FAILED
    accepted = log_of(legacy_init({"logging": {}}), _set_level("verbose", result_body({}, 1)))
    assert judge(accepted, spec, "set_level_requests_are_answered_as_specified").outcome is Outcome.FAILED


def test_log_08_does_not_apply_to_2026(spec: SpecSet) -> None:
    log_ = log_of(discover(LOGGING), chatty(logLevel="info"))
    assert judge(log_, spec, "set_level_requests_are_answered_as_specified").outcome is Outcome.NOT_APPLICABLE
    assert judge(log_, spec, "log_messages_respect_the_session_level").outcome is Outcome.NOT_APPLICABLE


def test_logs_after_set_level_respect_it(spec: SpecSet) -> None:
    """Spec-mandated (LOG-08): only messages at or above the session level follow."""
    call = legacy_sse(legacy_req("tools/call", 2, CHATTY), [(0.2, log("error")), (0.3, result_body({}, 2))], start=0.1)
    good = log_of(legacy_init({"logging": {}}), _set_level("warning", result_body({}, 1)), call)
    assert judge(good, spec, "log_messages_respect_the_session_level").outcome is Outcome.PASSED
    noisy = legacy_sse(legacy_req("tools/call", 3, CHATTY), [(0.5, log("info"))], start=0.4)
    good.add(noisy)
    verdict = judge(good, spec, "log_messages_respect_the_session_level")
    assert verdict.outcome is Outcome.FAILED
    assert "set warning" in verdict.reason


def test_session_level_rule_is_not_verified_before_any_set_level(spec: SpecSet) -> None:
    call = legacy_sse(legacy_req("tools/call", 2, CHATTY), [(0.2, log("debug"))], start=0.1)
    verdict = judge(log_of(legacy_init({"logging": {}}), call), spec, "log_messages_respect_the_session_level")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- LOG-09 -------------------------------------------------------------------------------------
def test_advertising_logging_in_2026_is_noted_not_failed(spec: SpecSet) -> None:
    """Spec-mandated (LOG-09): deprecation is information only."""
    noted = judge(log_of(discover(LOGGING)), spec, "servers_do_not_adopt_deprecated_logging")
    assert noted.outcome is Outcome.FAILED
    assert noted.severity is Severity.INFO
    assert judge(log_of(discover()), spec, "servers_do_not_adopt_deprecated_logging").outcome is Outcome.PASSED


def test_a_client_setting_a_log_level_is_noted(spec: SpecSet) -> None:
    noted = judge(log_of(chatty(logLevel="info")), spec, "clients_do_not_adopt_deprecated_logging")
    assert noted.outcome is Outcome.FAILED
    assert noted.severity is Severity.INFO
    assert judge(log_of(chatty()), spec, "clients_do_not_adopt_deprecated_logging").outcome is Outcome.PASSED


def test_log_09_does_not_apply_to_2025(spec: SpecSet) -> None:
    log_ = log_of(legacy_init({"logging": {}}))
    assert judge(log_, spec, "servers_do_not_adopt_deprecated_logging").outcome is Outcome.NOT_APPLICABLE
    assert judge(log_, spec, "clients_do_not_adopt_deprecated_logging").outcome is Outcome.NOT_APPLICABLE


def test_a_cancelled_request_does_not_blur_stdio_log_attribution(spec: SpecSet) -> None:
    """Spec-mandated (A9): once cancelled, a request no longer competes for a log line."""
    log_ = log_of(
        stdio_discover(LOGGING),
        client(req("tools/call", 1, CHATTY), 0.0),
        client({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, 0.1),
        client(req("tools/call", 2, CHATTY, logLevel="info"), 0.2),
        server(log("info"), 0.25),
    )
    assert judge(log_, spec, "log_messages_only_for_requests_that_asked").outcome is Outcome.PASSED


def test_a_log_racing_a_stdio_cancellation_is_left_to_can_08(spec: SpecSet) -> None:
    """Spec-mandated (A3): within the grace window it is a SHOULD finding of CAN-08, not a LOG-03 failure."""
    log_ = log_of(
        stdio_discover(LOGGING),
        client(req("tools/call", 1, CHATTY, logLevel="info"), 0.0),
        client({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, 0.1),
        server(log("info"), 0.2),
    )
    assert judge(log_, spec, "log_messages_stay_on_their_request_stream").outcome is Outcome.PASSED
    assert judge(log_, spec, "cancelled_requests_are_not_answered").outcome is Outcome.FAILED


def test_log_08_does_not_judge_a_server_without_logging(spec: SpecSet) -> None:
    """Spec-mandated (LOG-08): -32601 is the right answer when logging is not offered."""
    log_ = log_of(legacy_init({"tools": {}}), _set_level("error", error_body(-32601, "Method not found", 1)))
    verdict = judge(log_, spec, "set_level_requests_are_answered_as_specified")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "does not declare logging" in verdict.reason
