"""The 2025-11-25 handshake and session (HS-): passing, failing and not-verified cases for every rule."""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Side
from mcp_assay.wire.model import EVENTS_LOST, Ending, EndReason, HttpExchange
from tests.factories import (
    LEGACY,
    error_body,
    http,
    initialize_body,
    initialize_result,
    initialized,
    judge,
    legacy_call,
    legacy_headers,
    legacy_session,
    log_of,
    modern_call,
    result_body,
    stdio,
    tick,
)
from tests.peers.broken_suite.core import Server
from tests.spec.rules._envelope_builders import PROBE, TOOLS, initialize, legacy_post
from tests.suite.scripted import respond
from tests.suite.test_run_scripted import run_suite
from tests.suite.test_run_scripted import verdict as verdict_of

PLAIN = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def retimed(exchange: HttpExchange) -> HttpExchange:
    """The same exchange, sent now (helpers build their exchanges before the session they join)."""
    start = tick()
    response = dataclasses.replace(exchange.response, time=start + 0.001) if exchange.response is not None else None
    return HttpExchange.build(
        id=exchange.id,
        request=dataclasses.replace(exchange.request, time=start),
        response=response,
        ending=exchange.ending,
        probe=exchange.probe,
    )


def session_with(*later: HttpExchange, **init: Any) -> Any:
    """An initialized 2025 HTTP session followed by ``later`` exchanges, in that order on the wire."""
    return log_of(initialize(**init), initialized(), *(retimed(exchange) for exchange in later))


def tools_list(ident: int = 1, session: str = "sess-1", **headers: str) -> Any:
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/list"}
    return http(body, result_body({"tools": []}, ident), headers={**legacy_headers(session), **headers})


def modern_only() -> Any:
    return log_of(modern_call("tools/list", {}, TOOLS))


# stdio sessions -----------------------------------------------------------------------------------
def init_body(version: str = LEGACY, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }


def init_result(server_capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    result = {
        "protocolVersion": LEGACY,
        "capabilities": server_capabilities if server_capabilities is not None else {"tools": {"listChanged": True}},
        "serverInfo": {"name": "s", "version": "1"},
    }
    return result_body(result, 0)


def client(body: Any) -> Any:
    return stdio(Side.CLIENT, body)


def server(body: Any) -> Any:
    return stdio(Side.SERVER, body)


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# -- HS-01 ----------------------------------------------------------------------------------------
def test_sessions_opened_with_initialize_pass_hs_01(spec: SpecSet) -> None:
    """Spec-mandated (HS-01)."""
    log = log_of(legacy_session(), client(init_body()), server(init_result()), client(INITIALIZED))
    verdict = judge(log, spec, "initialize_opens_every_session")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_initialize_with_a_session_id_or_after_other_requests_fails_hs_01(spec: SpecSet) -> None:
    """Spec-mandated (HS-01)."""
    with_id = initialize(headers={**PLAIN, "mcp-session-id": "old"})
    verdict = judge(log_of(with_id, initialized()), spec, "initialize_opens_every_session")
    assert verdict.outcome is Outcome.FAILED
    assert "Mcp-Session-Id 'old'" in verdict.reason
    late = log_of(
        client({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
        client(init_body()),
        server(init_result()),
    )
    verdict = judge(late, spec, "initialize_opens_every_session")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/list" in verdict.reason


def test_hs_01_is_not_applicable_to_2026_traffic(spec: SpecSet) -> None:
    """Spec-mandated (HS-01): 2026 has no handshake."""
    assert judge(modern_only(), spec, "initialize_opens_every_session").outcome is Outcome.NOT_APPLICABLE


# -- HS-02, HS-04 ----------------------------------------------------------------------------------
def test_complete_initialize_request_and_result_pass_hs_02_and_hs_04(spec: SpecSet) -> None:
    """Spec-mandated (HS-02, HS-04)."""
    log = log_of(legacy_session())
    assert judge(log, spec, "initialize_names_version_capabilities_and_client").outcome is Outcome.PASSED
    assert judge(log, spec, "initialize_results_name_version_capabilities_and_server").outcome is Outcome.PASSED


def test_an_initialize_without_client_version_fails_hs_02(spec: SpecSet) -> None:
    """Spec-mandated (HS-02)."""
    body = init_body()
    body["params"]["clientInfo"] = {"name": "c"}
    del body["params"]["capabilities"]
    log = log_of(client(body), server(init_result()))
    verdict = judge(log, spec, "initialize_names_version_capabilities_and_client")
    assert verdict.outcome is Outcome.FAILED
    assert "capabilities is missing" in verdict.reason
    assert "clientInfo lacks a string version" in verdict.reason


def test_an_initialize_result_without_server_info_fails_hs_04(spec: SpecSet) -> None:
    """Spec-mandated (HS-04)."""
    answer = result_body({"protocolVersion": LEGACY, "capabilities": {}}, 0)
    verdict = judge(
        log_of(client(init_body()), server(answer)), spec, "initialize_results_name_version_capabilities_and_server"
    )
    assert verdict.outcome is Outcome.FAILED
    assert "serverInfo is missing" in verdict.reason


def test_hs_04_is_not_verified_without_an_initialize(spec: SpecSet) -> None:
    """Tool-defined: a capture that starts mid-session has no initialize to judge."""
    log = log_of(legacy_call("tools/list", None, {"tools": []}))
    assert judge(log, spec, "initialize_results_name_version_capabilities_and_server").outcome is Outcome.NOT_VERIFIED


# -- HS-05, HS-06 ----------------------------------------------------------------------------------
def test_an_echoed_supported_version_passes_hs_05(spec: SpecSet) -> None:
    """Spec-mandated (HS-05)."""
    assert judge(log_of(initialize()), spec, "supported_requested_versions_are_echoed").outcome is Outcome.PASSED


def test_countering_a_version_the_server_supports_fails_hs_05(spec: SpecSet) -> None:
    """Spec-mandated (HS-05): the server echoed 2025-11-25 in one session, so it supports it."""
    log = log_of(initialize(), initialize(answered="2025-06-18", session="sess-2", ident=5))
    verdict = judge(log, spec, "supported_requested_versions_are_echoed")
    assert verdict.outcome is Outcome.FAILED
    assert "got 2025-06-18" in verdict.reason


def test_a_counter_offer_elsewhere_proves_support_for_hs_05(spec: SpecSet) -> None:
    """Spec-mandated (HS-05, HS-06): a server counters only with a version it supports, so countering 1900-01-01
    with 2025-11-25 in one session and answering 2025-11-25 with 2025-06-18 in another is a violation."""
    counter = initialize("1900-01-01", answered=LEGACY, probe=PROBE)
    log = log_of(counter, initialize(answered="2025-06-18", session="sess-2", ident=5))
    verdict = judge(log, spec, "supported_requested_versions_are_echoed")
    assert (
        verdict.outcome is Outcome.FAILED and "which the server says it supports, and got 2025-06-18" in verdict.reason
    )


def test_hs_05_is_not_verified_when_support_is_unknown(spec: SpecSet) -> None:
    """Tool-defined: one counter-offer alone does not prove the requested version was supported."""
    verdict = judge(log_of(initialize("2025-06-18", answered=LEGACY)), spec, "supported_requested_versions_are_echoed")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "not known" in verdict.reason


def elsewhere() -> HttpExchange:
    """A 2025-11-25 session of another endpoint: it puts the log in the window and says nothing of this one."""
    return http(
        initialize_body(LEGACY),
        result_body(initialize_result(LEGACY), 0),
        url="http://127.0.0.1:8000/other",
        headers=PLAIN,
        response_headers={"content-type": "application/json", "mcp-session-id": "sess-o"},
    )


def test_what_the_server_says_it_supports_elsewhere_decides_hs_05(spec: SpecSet) -> None:
    """Spec-mandated (HS-05: the same version when the server supports the requested one, judged against what the
    server itself says it supports): its discover result listing 2025-06-18, or an error whose data.supported
    lists it, makes a counter-offer (or a refusal) to 2025-06-18 a violation."""
    discover = modern_call(
        "server/discover",
        {},
        {"supportedVersions": ["2026-07-28", "2025-06-18"], "capabilities": {}, "ttlMs": 0, "cacheScope": "private"},
        ident=9,
    )
    countered = initialize("2025-06-18", answered=LEGACY, session="sess-2", ident=5)
    verdict = judge(log_of(discover, countered), spec, "supported_requested_versions_are_echoed")
    assert (
        verdict.outcome is Outcome.FAILED and "which the server says it supports, and got 2025-11-25" in verdict.reason
    )
    data = {"supported": ["2025-06-18"], "requested": "2025-06-18"}
    refused = http(initialize_body("2025-06-18", ident=6), error_body(-32602, "Unsupported protocol version", 6, data))
    verdict = judge(log_of(elsewhere(), refused), spec, "supported_requested_versions_are_echoed")
    assert verdict.outcome is Outcome.FAILED and "got an error (-32602)" in verdict.reason


def test_a_counter_offer_names_the_newest_supported_version(spec: SpecSet) -> None:
    """Spec-mandated (HS-06, SHOULD: the counter-offer is preferably the server's newest version): 2025-11-25, the
    newest handshake revision, passes; 2025-06-18 from a server that echoed 2025-11-25 elsewhere fails; 2025-06-18
    from a server that names nothing else cannot be judged."""
    check = "counter_offers_name_the_newest_supported_version"
    newest = initialize("1900-01-01", answered=LEGACY, probe=PROBE)
    assert judge(log_of(newest), spec, check).outcome is Outcome.PASSED
    older = initialize("1900-01-01", answered="2025-06-18", session="sess-2", ident=4, probe=PROBE)
    verdict = judge(log_of(initialize(), older), spec, check)
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    assert "also supports the newer 2025-11-25" in verdict.reason
    verdict = judge(log_of(elsewhere(), older), spec, check)
    assert verdict.outcome is Outcome.NOT_VERIFIED and "not known" in verdict.reason


def test_a_counter_offer_for_an_unknown_version_passes_hs_06(spec: SpecSet) -> None:
    """Spec-mandated (HS-06)."""
    log = log_of(initialize("1900-01-01", answered=LEGACY, probe=PROBE))
    assert judge(log, spec, "unsupported_requested_versions_get_a_counter_offer").outcome is Outcome.PASSED


def test_echoing_or_refusing_an_unknown_version_fails_hs_06(spec: SpecSet) -> None:
    """Spec-mandated (HS-06, A17): an echo is wrong; an error is reported as a SHOULD."""
    echoed = log_of(legacy_session(), initialize("1900-01-01", session="sess-9", ident=4, probe=PROBE))
    verdict = judge(echoed, spec, "unsupported_requested_versions_get_a_counter_offer")
    assert verdict.outcome is Outcome.FAILED
    assert "echoed the unsupported version 1900-01-01" in verdict.reason
    refused = log_of(legacy_session(), initialize("1900-01-01", error=-32602, ident=4, probe=PROBE))
    verdict = judge(refused, spec, "unsupported_requested_versions_get_a_counter_offer")
    assert verdict.outcome is Outcome.FAILED
    assert "instead of a counter-offer" in verdict.reason


def test_hs_06_is_not_verified_without_an_unknown_version(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(legacy_session()), spec, "unsupported_requested_versions_get_a_counter_offer")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- HS-07 .. HS-09 --------------------------------------------------------------------------------
def test_a_client_waiting_for_the_initialize_result_passes_hs_07(spec: SpecSet) -> None:
    """Spec-mandated (HS-07): ping may go before the result."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    log = log_of(client(init_body()), client(ping), server(init_result()), client(INITIALIZED))
    assert judge(log, spec, "clients_wait_for_the_initialize_result").outcome is Outcome.PASSED


def test_a_request_before_the_initialize_result_fails_hs_07(spec: SpecSet) -> None:
    """Spec-mandated (HS-07)."""
    early = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    log = log_of(client(init_body()), client(early), server(init_result()))
    verdict = judge(log, spec, "clients_wait_for_the_initialize_result")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/list" in verdict.reason


def test_hs_07_is_not_verified_over_http_without_connection_ids(spec: SpecSet) -> None:
    """Tool-defined: concurrent HTTP clients cannot be told apart without connection ids."""
    verdict = judge(log_of(legacy_session()), spec, "clients_wait_for_the_initialize_result")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "connection ids" in verdict.reason


def test_initialized_before_other_work_passes_hs_08(spec: SpecSet) -> None:
    """Spec-mandated (HS-08)."""
    log = session_with(tools_list())
    assert judge(log, spec, "clients_confirm_with_initialized").outcome is Outcome.PASSED


def test_work_before_initialized_fails_hs_08(spec: SpecSet) -> None:
    """Spec-mandated (HS-08)."""
    log = log_of(initialize(), tools_list(), initialized())
    verdict = judge(log, spec, "clients_confirm_with_initialized")
    assert verdict.outcome is Outcome.FAILED
    assert "before notifications/initialized" in verdict.reason


def test_hs_08_is_not_verified_when_the_client_sent_nothing_more(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(initialize()), spec, "clients_confirm_with_initialized")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "sent nothing" in verdict.reason


def test_a_server_waiting_for_initialized_passes_hs_09(spec: SpecSet) -> None:
    """Spec-mandated (HS-09)."""
    sampling = {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    log = log_of(client(init_body()), server(init_result()), client(INITIALIZED), server(sampling))
    assert judge(log, spec, "servers_wait_for_initialized_before_requests").outcome is Outcome.PASSED


def test_a_server_request_before_initialized_fails_hs_09(spec: SpecSet) -> None:
    """Spec-mandated (HS-09): log notifications are tolerated, requests are not."""
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    early = {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    log = log_of(client(init_body()), server(init_result()), server(note), server(early), client(INITIALIZED))
    verdict = judge(log, spec, "servers_wait_for_initialized_before_requests")
    assert verdict.outcome is Outcome.FAILED
    assert "roots/list" in verdict.reason


def test_hs_09_is_not_verified_before_initialized_arrives(spec: SpecSet) -> None:
    """Tool-defined: until the client confirms, nothing can be concluded."""
    log = log_of(client(init_body()), server(init_result()))
    assert judge(log, spec, "servers_wait_for_initialized_before_requests").outcome is Outcome.NOT_VERIFIED


# -- HS-10 .. HS-13 --------------------------------------------------------------------------------
def test_the_negotiated_version_header_passes_hs_10_and_hs_11(spec: SpecSet) -> None:
    """Spec-mandated (HS-10, HS-11)."""
    log = session_with(tools_list())
    assert judge(log, spec, "clients_keep_to_the_negotiated_version").outcome is Outcome.PASSED
    assert judge(log, spec, "session_requests_carry_the_version_header").outcome is Outcome.PASSED


def test_another_version_header_fails_hs_10(spec: SpecSet) -> None:
    """Spec-mandated (HS-10)."""
    log = session_with(tools_list(**{"mcp-protocol-version": "2025-06-18"}))
    verdict = judge(log, spec, "clients_keep_to_the_negotiated_version")
    assert verdict.outcome is Outcome.FAILED
    assert "'2025-06-18'" in verdict.reason


def test_a_missing_version_header_fails_hs_11(spec: SpecSet) -> None:
    """Spec-mandated (HS-11): every request after initialize, GET and DELETE included."""
    headers = legacy_headers()
    headers.pop("mcp-protocol-version")
    log = session_with(legacy_post(None, method="GET", headers=headers))
    verdict = judge(log, spec, "session_requests_carry_the_version_header")
    assert verdict.outcome is Outcome.FAILED
    assert "GET" in verdict.reason


def test_hs_10_and_hs_11_are_not_verified_without_session_requests(spec: SpecSet) -> None:
    """Tool-defined."""
    log = log_of(initialize())
    assert judge(log, spec, "clients_keep_to_the_negotiated_version").outcome is Outcome.NOT_VERIFIED
    assert judge(log, spec, "session_requests_carry_the_version_header").outcome is Outcome.NOT_VERIFIED


def bad_header(status: int) -> Any:
    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
    headers = {**legacy_headers(), "mcp-protocol-version": "1900-01-01"}
    response = (
        error_body(-32600, "Bad Request: Unsupported protocol version", 9)
        if status == 400
        else result_body({"tools": []}, 9)
    )
    return http(body, response, status=status, headers=headers, probe=PROBE)


def test_an_invalid_version_header_refused_with_400_passes_hs_12(spec: SpecSet) -> None:
    """Spec-mandated (HS-12)."""
    assert judge(session_with(bad_header(400)), spec, "invalid_version_headers_get_400").outcome is Outcome.PASSED


def test_an_invalid_version_header_served_fails_hs_12(spec: SpecSet) -> None:
    """Spec-mandated (HS-12)."""
    verdict = judge(session_with(bad_header(200)), spec, "invalid_version_headers_get_400")
    assert verdict.outcome is Outcome.FAILED
    assert "'1900-01-01'" in verdict.reason


def test_hs_12_is_not_verified_without_an_invalid_header(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(session_with(tools_list()), spec, "invalid_version_headers_get_400").outcome is Outcome.NOT_VERIFIED


# HS-12 for a published revision the server does not support (the suite's published-version-header case)
PUBLISHED = "2024-11-05"
OFFER = {"name": "published-version-header", "family": "handshake", "invalid": False, "off_version": True}
NAMED = {**OFFER, "invalid": True}


def published_offer(answered: str) -> Any:
    """The suite's initialize offering 2024-11-05 on a connection of its own, answered with ``answered``."""
    body = initialize_body(PUBLISHED, ident=20)
    return http(body, result_body(initialize_result(answered), 20), headers=PLAIN, probe=OFFER)


def published_header(status: int) -> Any:
    """A ping in the run's session naming 2024-11-05 in MCP-Protocol-Version."""
    body = {"jsonrpc": "2.0", "id": 21, "method": "ping"}
    headers = {**legacy_headers(), "mcp-protocol-version": PUBLISHED}
    answer = error_body(-32600, "Unsupported protocol version", 21) if status == 400 else result_body({}, 21)
    return http(body, answer, status=status, headers=headers, probe=NAMED)


def test_a_declined_published_version_refused_with_400_passes_hs_12(spec: SpecSet) -> None:
    """Spec-mandated (HS-12: "invalid or unsupported"): 2024-11-05 is published, and this server declined it."""
    log = session_with(published_offer(LEGACY), published_header(400))
    verdict = judge(log, spec, "invalid_version_headers_get_400")
    assert verdict.outcome is Outcome.PASSED and verdict.judged == 1


def test_a_declined_published_version_served_fails_hs_12(spec: SpecSet) -> None:
    """Spec-mandated (HS-12): the server answered initialize with another version, then served a request naming
    the one it declined."""
    verdict = judge(
        session_with(published_offer(LEGACY), published_header(200)), spec, "invalid_version_headers_get_400"
    )
    assert verdict.outcome is Outcome.FAILED
    assert "MCP-Protocol-Version '2024-11-05' was answered with HTTP 200, expected 400" in verdict.reason


def test_a_published_version_the_server_supports_is_not_judged(spec: SpecSet) -> None:
    """Spec-mandated (HS-12 holds only for versions the server does not support): an echoed offer says it does."""
    verdict = judge(
        session_with(published_offer(PUBLISHED), published_header(200)), spec, "invalid_version_headers_get_400"
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED and verdict.judged == 0


class _Lenient(Server):
    """The scripted server, serving a session request that names 2024-11-05 as if it named its own version."""

    def handle_http(self, method: str, headers: dict[str, str], body: bytes) -> Any:
        if headers.get("mcp-protocol-version") == PUBLISHED and headers.get("mcp-session-id"):
            headers = {**headers, "mcp-protocol-version": LEGACY}
        return super().handle_http(method, headers, body)


def test_the_suite_sends_the_published_version_case_and_hs_12_judges_it(spec: SpecSet) -> None:
    """Tool-defined, end to end through the suite: a server that declines 2024-11-05 in initialize must refuse it
    in its session's header; the scripted server does (400), its lenient twin serves it and fails HS-12."""
    settings = {"spec_version": LEGACY, "only": "HS-12"}
    strict, _ = run_suite(spec, respond(Server()), **settings)
    assert verdict_of(strict, "invalid_version_headers_get_400").outcome is Outcome.PASSED
    lenient, _ = run_suite(spec, respond(_Lenient()), **settings)
    failed = verdict_of(lenient, "invalid_version_headers_get_400")
    assert failed.outcome is Outcome.FAILED and "'2024-11-05'" in failed.reason


def headerless(status: int) -> Any:
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    response = result_body({"tools": []}, 3) if status == 200 else error_body(-32603, "boom", 3)
    return legacy_post(body, response, session=None, status=status, headers=PLAIN)


def test_a_headerless_request_served_or_refused_with_400_passes_hs_13(spec: SpecSet) -> None:
    """Spec-mandated (HS-13, A22)."""
    verdict = judge(
        log_of(legacy_session(), headerless(200), headerless(400)), spec, "missing_version_headers_are_tolerated"
    )
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_a_headerless_request_failing_otherwise_fails_hs_13(spec: SpecSet) -> None:
    """Spec-mandated (HS-13)."""
    verdict = judge(log_of(legacy_session(), headerless(500)), spec, "missing_version_headers_are_tolerated")
    assert verdict.outcome is Outcome.FAILED
    assert "HTTP 500" in verdict.reason


def test_hs_13_is_not_verified_when_every_request_has_the_header(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(session_with(tools_list()), spec, "missing_version_headers_are_tolerated").outcome is (
        Outcome.NOT_VERIFIED
    )


# -- HS-14, HS-15 ----------------------------------------------------------------------------------
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def test_negotiated_server_messages_pass_hs_14(spec: SpecSet) -> None:
    """Spec-mandated (HS-14)."""
    roots = {"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}
    log = log_of(
        client(init_body(capabilities={"roots": {}})),
        server(init_result({"tools": {"listChanged": True}})),
        client(INITIALIZED),
        server(LIST_CHANGED),
        server(roots),
    )
    verdict = judge(log, spec, "servers_use_only_negotiated_capabilities")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_unnegotiated_server_messages_fail_hs_14(spec: SpecSet) -> None:
    """Spec-mandated (HS-14): listChanged false forbids the notification; sampling needs the client's consent."""
    log = log_of(
        client(init_body()),
        server(init_result({"tools": {"listChanged": False}})),
        client(INITIALIZED),
        server(LIST_CHANGED),
    )
    verdict = judge(log, spec, "servers_use_only_negotiated_capabilities")
    assert verdict.outcome is Outcome.FAILED
    assert "listChanged: true" in verdict.reason
    sampling = {
        "jsonrpc": "2.0",
        "id": "s",
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5},
    }
    log = log_of(client(init_body()), server(init_result()), client(INITIALIZED), server(sampling))
    verdict = judge(log, spec, "servers_use_only_negotiated_capabilities")
    assert verdict.outcome is Outcome.FAILED
    assert "did not declare sampling" in verdict.reason
    update = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}}
    log = log_of(client(init_body()), server(init_result()), client(INITIALIZED), server(update))
    assert judge(log, spec, "servers_use_only_negotiated_capabilities").outcome is Outcome.FAILED


def test_hs_14_is_not_verified_without_capability_bound_messages(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(session_with(tools_list()), spec, "servers_use_only_negotiated_capabilities").outcome is (
        Outcome.NOT_VERIFIED
    )


def test_client_calls_within_the_server_capabilities_pass_hs_15(spec: SpecSet) -> None:
    """Spec-mandated (HS-15)."""
    assert judge(session_with(tools_list()), spec, "clients_use_only_negotiated_capabilities").outcome is (
        Outcome.PASSED
    )


def test_client_calls_outside_the_server_capabilities_fail_hs_15(spec: SpecSet) -> None:
    """Spec-mandated (HS-15): the server declared tools only."""
    prompts = http(
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}, result_body({"prompts": []}, 2), headers=legacy_headers()
    )
    verdict = judge(session_with(prompts), spec, "clients_use_only_negotiated_capabilities")
    assert verdict.outcome is Outcome.FAILED
    assert "did not declare prompts" in verdict.reason
    subscribe = {"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "file:///a"}}
    log = session_with(
        http(subscribe, result_body({}, 3), headers=legacy_headers()),
        server_capabilities={"resources": {}},
    )
    verdict = judge(log, spec, "clients_use_only_negotiated_capabilities")
    assert verdict.outcome is Outcome.FAILED
    assert "resources.subscribe: true" in verdict.reason


def test_hs_15_is_not_verified_without_capability_bound_calls(spec: SpecSet) -> None:
    """Tool-defined: ping and initialized need no capability."""
    ping = http({"jsonrpc": "2.0", "id": 2, "method": "ping"}, result_body({}, 2), headers=legacy_headers())
    assert judge(session_with(ping), spec, "clients_use_only_negotiated_capabilities").outcome is Outcome.NOT_VERIFIED


# -- HS-17 ----------------------------------------------------------------------------------------
def ping(result: Any, *, error: bool = False) -> Any:
    body = {"jsonrpc": "2.0", "id": 4, "method": "ping"}
    answer = error_body(-32601, "Method not found", 4) if error else result_body(result, 4)
    return http(body, answer, headers=legacy_headers())


def test_an_empty_ping_result_passes_hs_17(spec: SpecSet) -> None:
    """Spec-mandated (HS-17), in both directions."""
    server_ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    log = log_of(
        client(init_body()),
        server(init_result()),
        client(INITIALIZED),
        server(server_ping),
        client(result_body({}, "p")),
    )
    assert judge(log, spec, "pings_get_a_prompt_empty_result").outcome is Outcome.PASSED
    assert judge(session_with(ping({})), spec, "pings_get_a_prompt_empty_result").outcome is Outcome.PASSED


def test_a_non_empty_or_refused_ping_fails_hs_17(spec: SpecSet) -> None:
    """Spec-mandated (HS-17)."""
    verdict = judge(session_with(ping({"ok": True})), spec, "pings_get_a_prompt_empty_result")
    assert verdict.outcome is Outcome.FAILED
    assert "not an empty result" in verdict.reason
    verdict = judge(session_with(ping(None, error=True)), spec, "pings_get_a_prompt_empty_result")
    assert verdict.outcome is Outcome.FAILED
    assert "-32601" in verdict.reason


def test_hs_17_is_not_verified_without_pings(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(session_with(tools_list()), spec, "pings_get_a_prompt_empty_result").outcome is Outcome.NOT_VERIFIED


# -- HS-18 .. HS-23: the session id ----------------------------------------------------------------
def test_a_visible_ascii_id_on_the_initialize_result_passes_hs_18(spec: SpecSet) -> None:
    """Spec-mandated (HS-18): later responses may echo the same id."""
    echo = http(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        result_body({"tools": []}, 1),
        headers=legacy_headers(),
        response_headers={"content-type": "application/json", "mcp-session-id": "sess-1"},
    )
    assert judge(session_with(echo), spec, "session_ids_come_only_with_the_initialize_result").outcome is Outcome.PASSED


def test_a_session_id_minted_on_another_response_fails_hs_18(spec: SpecSet) -> None:
    """Spec-mandated (HS-18): a refusal of a sessionless request must not hand out a new id."""
    body = {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
    refusal = http(
        body,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request: Missing session ID"}},
        status=400,
        headers={**PLAIN, "mcp-protocol-version": LEGACY},
        response_headers={"content-type": "application/json", "mcp-session-id": "fresh-1"},
    )
    verdict = judge(session_with(refusal), spec, "session_ids_come_only_with_the_initialize_result")
    assert verdict.outcome is Outcome.FAILED
    assert "issued session id 'fresh-1'" in verdict.reason
    assert verdict.severity is Severity.SHOULD  # "only there" is our reading of the transport page


def test_a_session_id_with_invisible_characters_fails_hs_18(spec: SpecSet) -> None:
    """Spec-mandated (HS-18): visible ASCII only."""
    good = judge(log_of(initialize(session="sess-1")), spec, "session_ids_are_visible_ascii")
    assert good.outcome is Outcome.PASSED
    spaced = judge(log_of(initialize(session="a b")), spec, "session_ids_are_visible_ascii")
    assert spaced.outcome is Outcome.FAILED
    assert "visible ASCII" in spaced.reason
    assert spaced.severity is Severity.MUST
    none = judge(log_of(initialize(session=None)), spec, "session_ids_are_visible_ascii")
    assert none.outcome is Outcome.NOT_VERIFIED


def test_hs_18_is_not_verified_without_session_ids(spec: SpecSet) -> None:
    """Tool-defined: sessions are optional."""
    verdict = judge(log_of(initialize(session=None)), spec, "session_ids_come_only_with_the_initialize_result")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_requests_carrying_the_session_id_pass_hs_19(spec: SpecSet) -> None:
    """Spec-mandated (HS-19)."""
    assert judge(session_with(tools_list()), spec, "clients_send_the_session_id_on_every_request").outcome is (
        Outcome.PASSED
    )


def test_a_request_without_the_issued_session_id_fails_hs_19(spec: SpecSet) -> None:
    """Spec-mandated (HS-19)."""
    missing = legacy_post(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        error_body(-32600, "Bad Request: Missing session ID", None),
        session=None,
        status=400,
    )
    verdict = judge(session_with(missing), spec, "clients_send_the_session_id_on_every_request")
    assert verdict.outcome is Outcome.FAILED
    assert "without Mcp-Session-Id" in verdict.reason


def test_hs_19_is_not_verified_when_no_session_was_issued(spec: SpecSet) -> None:
    """Tool-defined."""
    log = log_of(initialize(session=None))
    assert judge(log, spec, "clients_send_the_session_id_on_every_request").outcome is Outcome.NOT_VERIFIED


def sessionless(status: int) -> Any:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    answer = (
        error_body(-32600, "Bad Request: Missing session ID", None) if status == 400 else result_body({"tools": []}, 2)
    )
    return legacy_post(body, answer, session=None, status=status, probe=PROBE)


def test_a_sessionless_request_refused_with_400_passes_hs_20(spec: SpecSet) -> None:
    """Spec-mandated (HS-20)."""
    assert judge(session_with(sessionless(400)), spec, "sessionless_requests_get_400").outcome is Outcome.PASSED


def test_a_sessionless_request_served_fails_hs_20(spec: SpecSet) -> None:
    """Spec-mandated (HS-20)."""
    verdict = judge(session_with(sessionless(200)), spec, "sessionless_requests_get_400")
    assert verdict.outcome is Outcome.FAILED
    assert "HTTP 200" in verdict.reason


def test_hs_20_is_not_verified_without_sessionless_requests(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(session_with(tools_list()), spec, "sessionless_requests_get_400").outcome is Outcome.NOT_VERIFIED


def after_delete(status: int) -> Any:
    delete = legacy_post(None, method="DELETE", status=200)
    answer = error_body(-32600, "Session not found", None) if status == 404 else result_body({"tools": []}, 8)
    stale = legacy_post({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}, answer, status=status, probe=PROBE)
    return session_with(delete, stale)


def test_an_ended_session_answering_404_passes_hs_21(spec: SpecSet) -> None:
    """Spec-mandated (HS-21)."""
    assert judge(after_delete(404), spec, "ended_sessions_answer_404").outcome is Outcome.PASSED


def test_an_ended_session_still_serving_fails_hs_21(spec: SpecSet) -> None:
    """Spec-mandated (HS-21)."""
    verdict = judge(after_delete(200), spec, "ended_sessions_answer_404")
    assert verdict.outcome is Outcome.FAILED
    assert "ended session 'sess-1'" in verdict.reason


def _refused_then_served(refused_as: dict[str, str]) -> Any:
    """A request in the session refused with 404 (made with ``refused_as`` headers), then the owner's next served."""
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    refused = http(body, error_body(-32600, "Session not found", 7), status=404,
                   headers={**legacy_headers(), **refused_as})  # fmt: skip
    return session_with(refused, tools_list(ident=8))


def test_another_principals_404_does_not_end_the_session_for_hs_21(spec: SpecSet) -> None:
    """Spec-mandated (HS-21) regression, from the hardened drafts server (issue 21): a server that refuses another
    principal the session (AUTH-33) with 404 keeps it for its owner; the owner's next request is no evidence of an
    ended session still serving."""
    other = _refused_then_served({"authorization": "Bearer someone-else"})
    assert judge(other, spec, "ended_sessions_answer_404").outcome is Outcome.NOT_VERIFIED
    same = judge(_refused_then_served({}), spec, "ended_sessions_answer_404")  # the owner itself got the 404
    assert same.outcome is Outcome.FAILED and "ended session 'sess-1'" in same.reason


def test_hs_21_is_not_verified_while_sessions_live(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(session_with(tools_list()), spec, "ended_sessions_answer_404").outcome is Outcome.NOT_VERIFIED


def gone(ident: int = 6) -> Any:
    return legacy_post(
        {"jsonrpc": "2.0", "id": ident, "method": "tools/list"},
        error_body(-32600, "Session not found", None),
        status=404,
    )


def test_a_client_starting_over_after_404_passes_hs_22(spec: SpecSet) -> None:
    """Spec-mandated (HS-22)."""
    log = session_with(gone(), initialize(session="sess-2", ident=7))
    assert judge(log, spec, "clients_reinitialize_after_a_session_404").outcome is Outcome.PASSED


def test_a_client_reusing_a_dead_session_fails_hs_22(spec: SpecSet) -> None:
    """Spec-mandated (HS-22)."""
    log = session_with(gone(6), gone(7))
    verdict = judge(log, spec, "clients_reinitialize_after_a_session_404")
    assert verdict.outcome is Outcome.FAILED
    assert "kept using session 'sess-1'" in verdict.reason


def test_hs_22_is_not_verified_when_the_client_stops(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(session_with(gone()), spec, "clients_reinitialize_after_a_session_404")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "sent nothing more" in verdict.reason


def test_a_delete_naming_the_session_passes_hs_23(spec: SpecSet) -> None:
    """Spec-mandated (HS-23)."""
    log = session_with(legacy_post(None, method="DELETE", status=200))
    assert judge(log, spec, "session_deletes_name_the_session").outcome is Outcome.PASSED


def test_a_delete_without_a_session_id_fails_hs_23(spec: SpecSet) -> None:
    """Spec-mandated (HS-23)."""
    log = session_with(legacy_post(None, method="DELETE", status=400, session=None))
    verdict = judge(log, spec, "session_deletes_name_the_session")
    assert verdict.outcome is Outcome.FAILED


def test_hs_23_is_not_verified_without_delete(spec: SpecSet) -> None:
    """Tool-defined: whether the client was done cannot be seen."""
    assert judge(session_with(tools_list()), spec, "session_deletes_name_the_session").outcome is Outcome.NOT_VERIFIED


def test_an_initialize_refused_with_401_is_no_handshake_to_wait_for_hs_07(spec: SpecSet) -> None:
    """Spec-mandated (HS-07): a client refused before JSON-RPC (no token yet) starts over with a new
    initialize, which is not "a request before the initialize result"."""
    refused = http(
        initialize_body(ident=0),
        {"error": "invalid_token"},
        status=401,
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
        response_headers={"content-type": "application/json", "www-authenticate": "Bearer"},
    )
    first, confirmed = legacy_session()
    retry = dataclasses.replace(first, connection="c1")
    log = log_of(dataclasses.replace(refused, connection="c1"), retry, dataclasses.replace(confirmed, connection="c1"))
    verdict = judge(log, spec, "clients_wait_for_the_initialize_result")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 1


def test_an_initialize_stream_the_capture_kept_no_events_of_is_not_verified_for_hs_18(spec: SpecSet) -> None:
    """Tool-defined: mitmproxy keeps no body of a stream the client closed; the session id that came with it
    is then not held against the server, and the reason says why."""
    cut = http(
        initialize_body(ident=0),
        events=[],
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
        response_headers={"content-type": "text/event-stream", "mcp-session-id": "sess-9"},
    )
    lost = dataclasses.replace(cut, ending=Ending(reason=EndReason.OPEN, time=cut.time + 1, detail=EVENTS_LOST))
    verdict = judge(log_of(lost), spec, "session_ids_come_only_with_the_initialize_result")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "issued session id 'sess-9'; but the capture kept none of the stream's events" in verdict.reason
    assert judge(log_of(cut), spec, "session_ids_come_only_with_the_initialize_result").outcome is Outcome.FAILED
