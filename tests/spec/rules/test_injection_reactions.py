"""The reactions ``--inject`` provokes: each rule passes, fails, and says when it cannot tell.

The traffic is hand-built the way the proxy and the tap record an injection: the exchange
mcp-assay answered, held back or reshaped carries a probe tag with ``injected`` set.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Source
from mcp_assay.wire.model import EndReason, HttpExchange, ProcessExit, StdioLine
from tests.factories import as_probe, error_body, initialize_body, initialize_result, judge, log_of, result_body
from tests.spec.rules._envelope_builders import (
    TOOLS,
    full_result,
    initialize,
    modern_body,
    on_connection,
    refused,
    served,
)
from tests.spec.rules._stream_builders import (
    cancel,
    client,
    legacy_init,
    legacy_post,
    legacy_req,
    note,
    post,
    req,
    server,
    sse,
)
from tests.spec.rules.test_versions import stdio_pair

HELD = {"name": "inject-held-answer", "family": "inject-hold", "injected": True, "hold_ms": 800}
HELD_INIT = {"name": "inject-held-initialize", "family": "inject-hold", "injected": True, "hold_ms": 800}
CASE = {"name": "inject-header-case", "family": "inject-headers", "injected": True}
CUT = {"name": "inject-stream-cut", "family": "inject-cut", "injected": True}
REFUSAL = {"name": "inject-version-refusal", "family": "inject-version", "injected": True}
SUPPORTED_2025 = {"supported": ["2025-11-25"], "requested": "2026-07-28"}
LATE = "clients_cancel_requests_whose_answer_is_late"


def tagged(exchange: Any, probe: dict[str, Any]) -> Any:
    return dataclasses.replace(exchange, probe=as_probe(probe))


# -- CAN-13: a held answer -------------------------------------------------------------------------
def test_a_2026_client_closing_the_stream_of_a_late_answer_passes_can_13(spec: SpecSet) -> None:
    """Spec-mandated (CAN-13): in 2026 HTTP closing the stream is the cancellation."""
    held = tagged(sse(req("tools/list", 2), [], start=0.0, end=0.3, reason=EndReason.CLIENT_DISCONNECT), HELD)
    verdict = judge(log_of(held), spec, LATE)
    assert verdict.outcome is Outcome.PASSED and "closed its stream" in verdict.reason
    assert verdict.source is Source.INJECTED


def test_a_2025_client_dropping_a_late_answer_without_a_notice_fails_can_13(spec: SpecSet) -> None:
    """Spec-mandated (CAN-13, CAN-12): in 2025 a disconnect is no cancellation."""
    held = tagged(
        legacy_post(legacy_req("tools/list", 2), None, start=0.0, status=200, reason=EndReason.CLIENT_DISCONNECT), HELD
    )
    verdict = judge(log_of(legacy_init(), held), spec, LATE)
    assert verdict.outcome is Outcome.FAILED and "without notifications/cancelled" in verdict.reason
    notice = legacy_post(cancel(2), None, start=0.31, status=202)
    assert judge(log_of(legacy_init(), held, notice), spec, LATE).outcome is Outcome.PASSED


def test_a_stdio_client_asking_again_instead_of_cancelling_fails_can_13(spec: SpecSet) -> None:
    """Spec-mandated (CAN-13): a client that gives up cancels; re-sending the work is not cancelling it."""
    request = tagged(client(req("tools/list", 2), 0.0), HELD)
    again = client(req("tools/list", 3), 0.3)
    answers = [
        server(result_body(full_result(TOOLS), 3), 0.31),
        tagged(server(result_body(full_result(TOOLS), 2), 0.8), HELD),
    ]
    verdict = judge(log_of(request, again, *answers), spec, LATE)
    assert verdict.outcome is Outcome.FAILED and "re-sent the work" in verdict.reason
    cancelled = client(cancel(2), 0.3)
    assert judge(log_of(request, cancelled, answers[1]), spec, LATE).outcome is Outcome.PASSED


def test_a_client_that_waits_out_the_hold_is_not_verified_for_can_13(spec: SpecSet) -> None:
    """Tool-defined: its timeout is longer than the hold, so whether it would cancel is unknown."""
    waited = tagged(post(req("tools/list", 2), result_body(full_result(TOOLS), 2), start=0.0), HELD)
    verdict = judge(log_of(waited), spec, LATE)
    assert verdict.outcome is Outcome.NOT_VERIFIED and "waited out the hold (800 ms)" in verdict.reason


# -- CAN-10: a held initialize ----------------------------------------------------------------------
def test_a_held_initialize_the_client_never_cancels_passes_can_10(spec: SpecSet) -> None:
    """Spec-mandated (CAN-10)."""
    held = tagged(initialize(), HELD_INIT)
    verdict = judge(log_of(held), spec, "initialize_is_never_cancelled")
    assert verdict.outcome is Outcome.PASSED and "held back 800 ms" in verdict.reason


def test_cancelling_a_held_initialize_fails_can_10(spec: SpecSet) -> None:
    """Spec-mandated (CAN-10): in a session or before one exists, the notice names the initialize."""
    held = tagged(initialize(ident=1), HELD_INIT)
    in_session = legacy_post(cancel(1), None, start=100.0, status=202)
    verdict = judge(log_of(held, in_session), spec, "initialize_is_never_cancelled")
    assert verdict.outcome is Outcome.FAILED and "cancelled its initialize" in verdict.reason
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    before_any = post(
        cancel(1), None, start=100.0, status=400, headers={**headers, "mcp-protocol-version": "2025-11-25"}
    )
    verdict = judge(log_of(held, before_any), spec, "initialize_is_never_cancelled")
    assert verdict.outcome is Outcome.FAILED and "while its answer was held" in verdict.reason


def test_dropping_a_held_initialize_is_no_cancellation_by_disconnect(spec: SpecSet) -> None:
    """Spec-mandated (CAN-10 over CAN-12): initialize must not be cancelled, so dropping it is how a client
    gives up on it."""
    dropped = tagged(
        dataclasses.replace(
            initialize(), ending=dataclasses.replace(initialize().ending, reason=EndReason.CLIENT_DISCONNECT)
        ),  # type: ignore[arg-type]
        HELD_INIT,
    )
    verdict = judge(log_of(dropped), spec, "legacy_http_clients_do_not_cancel_by_disconnecting")
    assert verdict.outcome is not Outcome.FAILED


# -- HTTP-14: respelled header names ------------------------------------------------------------------
def test_a_client_going_on_after_respelled_header_names_passes_http_14(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-14)."""
    answer = tagged(served(modern_body("tools/list", ident=1), TOOLS), CASE)
    after = served(modern_body("prompts/list", ident=2), {"prompts": [], "ttlMs": 0, "cacheScope": "private"})
    verdict = judge(log_of(answer, after), spec, "client_reads_header_names_in_any_case")
    assert verdict.outcome is Outcome.PASSED and verdict.source is Source.INJECTED


def test_a_client_asking_again_after_respelled_header_names_fails_http_14(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-14): the names were legal; asking again shows they were not read."""
    answer = tagged(served(modern_body("tools/list", ident=1), TOOLS), CASE)
    again = served(modern_body("tools/list", ident=2), TOOLS)
    verdict = judge(log_of(answer, again), spec, "client_reads_header_names_in_any_case")
    assert verdict.outcome is Outcome.FAILED and "case-insensitively" in verdict.reason


def test_http_14_client_half_is_not_verified_when_nothing_follows(spec: SpecSet) -> None:
    """Tool-defined."""
    answer = tagged(served(modern_body("tools/list", ident=1), TOOLS), CASE)
    assert judge(log_of(answer), spec, "client_reads_header_names_in_any_case").outcome is Outcome.NOT_VERIFIED


# -- VER-05 / VER-13 / VER-12: a refusal whose list holds only 2025-11-25 ----------------------------------
def refusal_2025(ident: int = 1) -> HttpExchange:
    return tagged(refused(modern_body("tools/list", ident=ident), -32022, data=SUPPORTED_2025), REFUSAL)


def test_an_initialize_offering_the_listed_version_passes_ver_05_and_ver_13(spec: SpecSet) -> None:
    """Spec-mandated (VER-05, VER-13): with only handshake-era versions listed, the handshake is the retry."""
    log = log_of(refusal_2025(), initialize("2025-11-25"))
    five = judge(log, spec, "clients_retry_refused_versions_from_the_supported_list")
    assert five.outcome is Outcome.PASSED and "with initialize" in five.reason and five.source is Source.INJECTED
    assert judge(log, spec, "http_clients_stay_modern_after_a_modern_refusal").outcome is Outcome.PASSED


def test_an_initialize_offering_another_version_fails_ver_05(spec: SpecSet) -> None:
    """Spec-mandated (VER-05): the retry takes a version from data.supported."""
    log = log_of(refusal_2025(), initialize("2025-06-18", answered="2025-06-18"))
    verdict = judge(log, spec, "clients_retry_refused_versions_from_the_supported_list")
    assert verdict.outcome is Outcome.FAILED and "not one of ['2025-11-25']" in verdict.reason


def test_reactions_to_a_refusal_are_not_verified_when_the_client_sends_nothing_more(spec: SpecSet) -> None:
    """Tool-defined: a client may stop and report the error, or the session ended first."""
    log = log_of(refusal_2025())
    assert judge(log, spec, "clients_retry_refused_versions_from_the_supported_list").outcome is Outcome.NOT_VERIFIED
    assert judge(log, spec, "http_clients_stay_modern_after_a_modern_refusal").outcome is Outcome.NOT_VERIFIED


def test_a_stdio_initialize_offering_the_listed_version_passes_ver_12(spec: SpecSet) -> None:
    """Spec-mandated (VER-12 read with VER-05)."""
    answer = error_body(-32022, "Unsupported protocol version", 1, SUPPORTED_2025)
    lines = stdio_pair(modern_body("server/discover"), answer)
    init = StdioLine.build(
        id="s-init", connection="conn-1", sender=lines[0].sender, time=lines[1].time + 0.01,
        raw=b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n',
    )  # fmt: skip
    verdict = judge(log_of(lines, init), spec, "stdio_clients_stay_modern_after_a_modern_answer")
    assert verdict.outcome is Outcome.PASSED and "retried in 2025-11-25" in verdict.reason


# -- HTTP-36: a cut 2026 stream -----------------------------------------------------------------------
def test_going_on_without_resending_cut_work_fails_http_36(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-36): the broken stream's work is re-sent under a new id."""
    cut = tagged(sse(req("tools/list", 2), [], start=0.0, end=0.01, reason=EndReason.COMPLETE), CUT)
    other = post(req("prompts/list", 3), result_body(full_result({"prompts": []}), 3), start=0.1)
    verdict = judge(log_of(cut, other), spec, "client_reissues_broken_streams_as_new_requests")
    assert verdict.outcome is Outcome.FAILED and "without re-sending the work" in verdict.reason
    again = post(req("tools/list", 4), result_body(full_result(TOOLS), 4), start=0.1)
    resent = judge(log_of(cut, again), spec, "client_reissues_broken_streams_as_new_requests")
    assert resent.outcome is Outcome.PASSED and resent.source is Source.INJECTED


# -- Issue 21: the clauses the injected faults now judge ----------------------------------------------
OTHER_CLIENT = {"io.modelcontextprotocol/clientInfo": {"name": "another-client", "version": "9"}}
PLAIN = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
LEGACY_HEADERS = {**PLAIN, "mcp-protocol-version": "2025-11-25"}


def test_the_refused_version_as_the_next_request_on_another_connection_fails_ver_05(spec: SpecSet) -> None:
    """Spec-mandated (VER-05: "Re-sending the same rejected version = violation"): a client whose HTTP stack opens
    a new connection after a 4xx is still the client that was refused."""
    refusal = refusal_2025()
    again = on_connection(served(modern_body("tools/list", ident=2), TOOLS), "conn-2")
    verdict = judge(log_of(refusal, again), spec, "clients_retry_refused_versions_from_the_supported_list")
    assert verdict.outcome is Outcome.FAILED and "2026-07-28 again (on another connection)" in verdict.reason
    # issue 28: the catalogue marks this clause of VER-05 (a SHOULD) inferred, so it counts one level lower
    assert verdict.severity is Severity.INFO and "inferred" in (verdict.graded or ""), verdict
    other = on_connection(served(modern_body("tools/list", ident=2, meta_extra=OTHER_CLIENT), TOOLS), "conn-2")
    other_client = judge(log_of(refusal, other), spec, "clients_retry_refused_versions_from_the_supported_list")
    assert other_client.outcome is Outcome.NOT_VERIFIED  # another client's request: this one sent nothing more


def test_an_initialize_retry_under_the_refused_id_fails_ver_05(spec: SpecSet) -> None:
    """Spec-mandated (VER-05: "retries with a version taken from error.data.supported (new request, new id)")."""
    refusal = refusal_2025(ident=3)
    log = log_of(refusal, initialize("2025-11-25", ident=3))
    verdict = judge(log, spec, "clients_retry_refused_versions_from_the_supported_list")
    assert verdict.outcome is Outcome.FAILED and "reused the refused request's id" in verdict.reason
    fresh = judge(log_of(refusal, initialize("2025-11-25", ident=4)), spec,
                  "clients_retry_refused_versions_from_the_supported_list")  # fmt: skip
    assert fresh.outcome is Outcome.PASSED


def test_a_fallback_on_another_connection_after_a_modern_refusal_fails_ver_13(spec: SpecSet) -> None:
    """Spec-mandated (VER-13): the client's next request to the endpoint is its reaction, whatever connection."""
    header_refusal = tagged(
        refused(modern_body("tools/call", {"name": "add", "arguments": {}}, ident=4), -32020, message="Mcp-Param"),
        {"name": "inject-header-refusal", "family": "inject-headers", "injected": True},
    )
    fallback = on_connection(initialize("2025-11-25", ident=5), "conn-2")
    verdict = judge(log_of(header_refusal, fallback), spec, "http_clients_stay_modern_after_a_modern_refusal")
    assert verdict.outcome is Outcome.FAILED and "fell back to initialize" in verdict.reason
    modern = on_connection(served(modern_body("tools/list", ident=5), TOOLS), "conn-2")
    stayed = judge(log_of(header_refusal, modern), spec, "http_clients_stay_modern_after_a_modern_refusal")
    assert stayed.outcome is Outcome.PASSED


def test_going_on_without_a_new_initialize_after_a_session_404_fails_hs_22(spec: SpecSet) -> None:
    """Spec-mandated (HS-22: "it MUST start a new session by sending a new InitializeRequest without a session ID
    attached"): dropping the id and carrying on is not starting over."""
    expired = legacy_post(legacy_req("tools/list", 2), error_body(-32600, "Session not found", 2), start=0.0,
                          status=404)  # fmt: skip
    carried_on = post(legacy_req("prompts/list", 3), result_body({"prompts": []}, 3), start=0.1,
                      headers=LEGACY_HEADERS)  # fmt: skip
    verdict = judge(log_of(legacy_init(), expired, carried_on), spec, "clients_reinitialize_after_a_session_404")
    assert verdict.outcome is Outcome.FAILED and "without starting over with initialize" in verdict.reason
    other_session = legacy_post(legacy_req("prompts/list", 3), result_body({"prompts": []}, 3), start=0.1,
                                session="sess-other")  # fmt: skip
    restarted = post(initialize_body(ident=4), result_body(initialize_result(), 4), start=0.2, headers=PLAIN)
    log = log_of(legacy_init(), expired, other_session, restarted)
    assert judge(log, spec, "clients_reinitialize_after_a_session_404").outcome is Outcome.PASSED
    nothing = judge(log_of(legacy_init(), expired, other_session), spec, "clients_reinitialize_after_a_session_404")
    assert nothing.outcome is Outcome.NOT_VERIFIED  # another session's request says nothing about this client


def test_a_fallback_to_initialize_after_respelled_header_names_fails_http_14(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-14): a modern answer read as no answer at all sends a dual-era client back to initialize."""
    answer = tagged(served(modern_body("server/discover", ident=1), TOOLS), CASE)
    fallback = on_connection(initialize("2025-11-25", ident=2), "conn-2")
    verdict = judge(log_of(answer, fallback), spec, "client_reads_header_names_in_any_case")
    assert verdict.outcome is Outcome.FAILED and "fell back to initialize" in verdict.reason
    asked_again = on_connection(served(modern_body("server/discover", ident=2), TOOLS), "conn-2")
    again = judge(log_of(answer, asked_again), spec, "client_reads_header_names_in_any_case")
    assert again.outcome is Outcome.FAILED and "asked again" in again.reason
    other = on_connection(served(modern_body("server/discover", ident=2, meta_extra=OTHER_CLIENT), TOOLS), "conn-2")
    assert judge(log_of(answer, other), spec, "client_reads_header_names_in_any_case").outcome is Outcome.NOT_VERIFIED


def test_a_2026_http_notice_with_the_stream_kept_open_fails_can_13(spec: SpecSet) -> None:
    """Spec-mandated (CAN-13: "2026 HTTP: close its stream"; CAN-02: the server may ignore a POSTed notice)."""
    held = tagged(post(req("tools/list", 2), result_body(full_result(TOOLS), 2), start=0.0), HELD)
    notice = post(cancel(2), None, start=0.3, status=202)
    verdict = judge(log_of(held, notice), spec, LATE)
    assert verdict.outcome is Outcome.FAILED and "kept the stream" in verdict.reason and "open" in verdict.reason


def test_a_notice_naming_the_held_request_only_as_text_fails_can_13(spec: SpecSet) -> None:
    """Spec-mandated (CAN-13 with CAN-03: requestId repeats the id with its JSON type; "2" names no request 2)."""
    request = tagged(client(req("tools/list", 2), 0.0), HELD)
    loose = client(cancel("2"), 0.3)
    late = tagged(server(result_body(full_result(TOOLS), 2), 0.8), HELD)
    verdict = judge(log_of(request, loose, late), spec, LATE)
    assert verdict.outcome is Outcome.FAILED and 'names id "2" (string), not 2 (integer)' in verdict.reason
    exact = client(cancel(2), 0.3)
    assert judge(log_of(request, exact, late), spec, LATE).outcome is Outcome.PASSED


# -- HS-10: an initialize answered with a version no revision defines ------------------------------------
COUNTER = {"name": "inject-version-counter-offer", "family": "inject-version", "injected": True, "fault": "answered"}
LEAVES = "clients_leave_a_version_they_cannot_use"


def counter_offered(start: float = 0.0) -> HttpExchange:
    answer = {"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "x", "version": "0"}}
    return tagged(post(initialize_body(ident=1), result_body(answer, 1), start=start, headers=PLAIN), COUNTER)


def test_going_on_after_an_unusable_counter_offer_fails_hs_10(spec: SpecSet) -> None:
    """Spec-mandated (HS-10: "If the client does not support the version in the server's response, it SHOULD
    disconnect"; no client supports a version no revision defines)."""
    initialized = post(note("notifications/initialized"), None, start=0.1, status=202, headers=LEGACY_HEADERS)
    verdict = judge(log_of(counter_offered(), initialized), spec, LEAVES)
    assert verdict.outcome is Outcome.FAILED and "instead of disconnecting" in verdict.reason
    assert verdict.source is Source.INJECTED


def test_starting_over_or_closing_the_connection_after_an_unusable_counter_offer_passes_hs_10(spec: SpecSet) -> None:
    """Spec-mandated (HS-10): a new initialize starts over; on stdio closing the connection is the disconnect."""
    again = post(initialize_body(ident=2), result_body(initialize_result(), 2), start=0.2, headers=PLAIN)
    verdict = judge(log_of(counter_offered(), again), spec, LEAVES)
    assert verdict.outcome is Outcome.PASSED and "started over" in verdict.reason
    answer = {"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "x", "version": "0"}}
    lines = [
        tagged(client(initialize_body(ident=1), 0.0), COUNTER),
        tagged(server(result_body(answer, 1), 0.01), COUNTER),
    ]
    closed = log_of(lines)
    closed.add(ProcessExit(id="exit", connection="conn-1", time=lines[1].time + 0.5, code=0))
    stdio = judge(closed, spec, LEAVES)
    assert stdio.outcome is Outcome.PASSED and "closed the connection" in stdio.reason


def test_hs_10_disconnect_is_not_verified_when_nothing_follows_on_http(spec: SpecSet) -> None:
    """Tool-defined: a disconnect leaves no trace on HTTP; a known counter-offer is the other HS-10 check's."""
    verdict = judge(log_of(counter_offered()), spec, LEAVES)
    assert verdict.outcome is Outcome.NOT_VERIFIED and "sent nothing more" in verdict.reason
    known = post(initialize_body(ident=1), result_body(initialize_result("2025-06-18"), 1), start=0.0, headers=PLAIN)
    assert judge(log_of(known), spec, LEAVES).outcome is Outcome.NOT_VERIFIED


def test_a_session_whose_result_names_no_revision_negotiated_no_capabilities_for_hs_15(spec: SpecSet) -> None:
    """Spec-mandated (HS-15 read with HS-10): a client that went on after an unusable counter-offer is HS-10's
    finding; the made-up result's capabilities were never negotiated."""
    answer = {"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "x", "version": "0"}}
    lines = [
        tagged(client(initialize_body(ident=1), 0.0), COUNTER),
        tagged(server(result_body(answer, 1), 0.01), COUNTER),
        client(note("notifications/initialized"), 0.02),
        client(legacy_req("tools/list", 2), 0.03),
    ]
    verdict = judge(log_of(lines), spec, "clients_use_only_negotiated_capabilities")
    assert verdict.outcome is not Outcome.FAILED
    assert judge(log_of(lines), spec, LEAVES).outcome is Outcome.FAILED
    known = [client(initialize_body(ident=1), 0.0), server(result_body(initialize_result(capabilities={}), 1), 0.01),
             client(note("notifications/initialized"), 0.02), client(legacy_req("tools/list", 2), 0.03)]  # fmt: skip
    assert judge(log_of(known), spec, "clients_use_only_negotiated_capabilities").outcome is Outcome.FAILED
