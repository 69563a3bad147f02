"""Version negotiation and discovery (VER-): passing, failing and not-verified cases for every rule."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Side
from tests.factories import MODERN, error_body, judge, legacy_session, log_of, modern_call, result_body, stdio
from tests.spec.rules._envelope_builders import (
    DISCOVERED,
    PROBE,
    TOOLS,
    discover,
    full_result,
    initialize,
    modern_body,
    on_connection,
    refused,
    served,
    versioned_headers,
)

CAPS = "io.modelcontextprotocol/clientCapabilities"
VERSION = "io.modelcontextprotocol/protocolVersion"
ANCIENT = "1900-01-01"


def ancient_body(method: str = "tools/list", ident: Any = 7, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return modern_body(method, params, ident=ident, version=ANCIENT)


def unsupported_refusal(body: dict[str, Any], **kwargs: Any) -> Any:
    data = kwargs.pop("data", {"supported": [MODERN], "requested": ANCIENT})
    return refused(body, -32022, data=data, headers=versioned_headers(body, ANCIENT), probe=PROBE, **kwargs)


# -- VER-01 ---------------------------------------------------------------------------------------
def test_requests_naming_their_version_pass_ver_01(spec: SpecSet) -> None:
    """Spec-mandated (VER-01)."""
    assert judge(
        log_of(modern_call("tools/list", {}, TOOLS)), spec, "requests_name_their_protocol_version"
    ).outcome is (Outcome.PASSED)


def test_a_request_without_a_body_version_fails_ver_01(spec: SpecSet) -> None:
    """Spec-mandated (VER-01): the header alone does not name the version of the request."""
    body = modern_body("tools/list", drop=(VERSION,))
    verdict = judge(log_of(refused(body, -32602)), spec, "requests_name_their_protocol_version")
    assert verdict.outcome is Outcome.FAILED
    assert VERSION in verdict.reason


def test_ver_01_is_not_applicable_to_2025_sessions(spec: SpecSet) -> None:
    """Spec-mandated (VER-01): 2025 negotiates the version once."""
    verdict = judge(log_of(legacy_session()), spec, "requests_name_their_protocol_version")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- VER-02 ---------------------------------------------------------------------------------------
def test_missing_envelope_fields_answered_with_invalid_params_pass_ver_02(spec: SpecSet) -> None:
    """Spec-mandated (VER-02), with A7: header present and body version missing may get -32020."""
    no_caps = refused(modern_body("tools/list", drop=(CAPS,)), -32602, probe=PROBE)
    no_version = refused(modern_body("tools/list", ident=2, drop=(VERSION,)), -32020, probe=PROBE)
    verdict = judge(log_of(no_caps, no_version), spec, "incomplete_envelopes_get_invalid_params")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_missing_envelope_fields_served_or_refused_wrongly_fail_ver_02(spec: SpecSet) -> None:
    """Spec-mandated (VER-02): -32602 with HTTP 400, never a result."""
    body = modern_body("tools/list", drop=(CAPS,))
    for exchange, words in (
        (served(body, TOOLS, probe=PROBE), "served with a result"),
        (refused(body, -32020, probe=PROBE), "expected -32602"),
        (refused(body, -32602, status=200, probe=PROBE), "HTTP 200"),
    ):
        verdict = judge(log_of(exchange), spec, "incomplete_envelopes_get_invalid_params")
        assert verdict.outcome is Outcome.FAILED
        assert words in verdict.reason


def test_ver_02_is_not_verified_when_every_envelope_is_complete(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "incomplete_envelopes_get_invalid_params")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-03 ---------------------------------------------------------------------------------------
def test_an_unsupported_version_refused_with_minus_32022_passes_ver_03(spec: SpecSet) -> None:
    """Spec-mandated (VER-03)."""
    log = log_of(discover(), unsupported_refusal(ancient_body()))
    verdict = judge(log, spec, "unsupported_versions_get_unsupported_version_errors")
    assert verdict.outcome is Outcome.PASSED


def test_an_unsupported_version_served_or_refused_wrongly_fails_ver_03(spec: SpecSet) -> None:
    """Spec-mandated (VER-03): -32022 with data.supported, data.requested and HTTP 400."""
    body = ancient_body()
    headers = versioned_headers(body, ANCIENT)
    cases = [
        (served(body, TOOLS, headers=headers, probe=PROBE), "served with a result"),
        (refused(body, -32602, headers=headers, probe=PROBE), "expected -32022"),
        (unsupported_refusal(body, data={"requested": ANCIENT}), "data.supported"),
        (unsupported_refusal(body, status=200), "HTTP 200"),
    ]
    for exchange, words in cases:
        verdict = judge(log_of(discover(), exchange), spec, "unsupported_versions_get_unsupported_version_errors")
        assert verdict.outcome is Outcome.FAILED
        assert words in verdict.reason


def test_discover_naming_an_unsupported_version_may_be_answered(spec: SpecSet) -> None:
    """Spec-mandated (VER-03 with A20): discover may return a DiscoverResult for any version."""
    body = ancient_body("server/discover")
    exchange = served(body, DISCOVERED, headers=versioned_headers(body, ANCIENT), probe=PROBE)
    verdict = judge(log_of(discover(), exchange), spec, "unsupported_versions_get_unsupported_version_errors")
    assert verdict.outcome is Outcome.PASSED


def test_ver_03_applies_once_the_traffic_speaks_2026(spec: SpecSet) -> None:
    """Tool-defined: a capture holding only an out-of-window version has no 2026 traffic to gate on."""
    verdict = judge(
        log_of(unsupported_refusal(ancient_body())), spec, "unsupported_versions_get_unsupported_version_errors"
    )
    assert verdict.outcome is Outcome.NOT_APPLICABLE
    assert "1900-01-01 is outside the window" in verdict.reason


def test_ver_03_leaves_header_mismatches_to_the_http_rules(spec: SpecSet) -> None:
    """Tool-defined: header 2026-07-28 with body 1900-01-01 is a -32020 case, so VER-03 does not judge it."""
    body = ancient_body()
    log = log_of(discover(), refused(body, -32020, probe=PROBE))
    verdict = judge(log, spec, "unsupported_versions_get_unsupported_version_errors")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-04 ---------------------------------------------------------------------------------------
def test_a_minus_32022_echoing_request_and_discover_passes_ver_04(spec: SpecSet) -> None:
    """Spec-mandated (VER-04)."""
    log = log_of(discover(), unsupported_refusal(ancient_body()))
    verdict = judge(log, spec, "unsupported_version_errors_echo_the_request_and_the_discover_list")
    assert verdict.outcome is Outcome.PASSED


def test_a_minus_32022_disagreeing_with_request_or_discover_fails_ver_04(spec: SpecSet) -> None:
    """Spec-mandated (VER-04)."""
    body = ancient_body()
    cases = [
        ({"supported": [MODERN], "requested": "2099-01-01"}, "the request named '1900-01-01'"),
        ({"supported": [], "requested": ANCIENT}, "empty"),
        ({"supported": [MODERN, "2027-01-01"], "requested": ANCIENT}, "differs from discover"),
    ]
    for data, words in cases:
        log = log_of(discover(), unsupported_refusal(body, data=data))
        verdict = judge(log, spec, "unsupported_version_errors_echo_the_request_and_the_discover_list")
        assert verdict.outcome is Outcome.FAILED
        assert words in verdict.reason


def test_ver_04_is_not_verified_without_minus_32022(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(discover()), spec, "unsupported_version_errors_echo_the_request_and_the_discover_list")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-05 ---------------------------------------------------------------------------------------
def client_refusal(ident: int = 7) -> Any:
    body = modern_body("tools/list", ident=ident, version="2027-01-01")
    data = {"supported": [MODERN], "requested": "2027-01-01"}
    return refused(body, -32022, data=data, headers=versioned_headers(body, "2027-01-01"))


def test_a_retry_with_a_supported_version_passes_ver_05(spec: SpecSet) -> None:
    """Spec-mandated (VER-05)."""
    log = log_of(client_refusal(), served(modern_body("tools/list", ident=8), TOOLS))
    assert judge(log, spec, "clients_retry_refused_versions_from_the_supported_list").outcome is Outcome.PASSED


def test_resending_the_refused_version_fails_ver_05(spec: SpecSet) -> None:
    """Spec-mandated (VER-05)."""
    log = log_of(discover(), client_refusal(7), client_refusal(8))
    verdict = judge(log, spec, "clients_retry_refused_versions_from_the_supported_list")
    assert verdict.outcome is Outcome.FAILED
    assert "2027-01-01 again" in verdict.reason


def test_ver_05_ignores_the_active_suites_own_probes(spec: SpecSet) -> None:
    """Tool-defined: a -32022 provoked by a probe says nothing about the client."""
    verdict = judge(
        log_of(discover(), unsupported_refusal(ancient_body())),
        spec,
        "clients_retry_refused_versions_from_the_supported_list",
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-06 .. VER-08 -------------------------------------------------------------------------------
def test_an_answered_discover_passes_ver_06(spec: SpecSet) -> None:
    """Spec-mandated (VER-06)."""
    assert judge(log_of(discover()), spec, "discover_is_implemented").outcome is Outcome.PASSED


def test_discover_refused_as_unknown_fails_ver_06(spec: SpecSet) -> None:
    """Spec-mandated (VER-06): every 2026 server implements server/discover."""
    exchange = refused(modern_body("server/discover"), -32601, status=404, message="Method not found")
    verdict = judge(log_of(exchange), spec, "discover_is_implemented")
    assert verdict.outcome is Outcome.FAILED
    assert "unknown" in verdict.reason


def test_ver_06_is_not_verified_without_discover(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "discover_is_implemented").outcome is (
        Outcome.NOT_VERIFIED
    )


def test_a_complete_discover_result_passes_ver_07_and_ver_08(spec: SpecSet) -> None:
    """Spec-mandated (VER-07, VER-08)."""
    log = log_of(discover())
    assert judge(log, spec, "discover_results_carry_versions_capabilities_and_cache_hints").outcome is Outcome.PASSED
    assert judge(log, spec, "discover_results_identify_the_server").outcome is Outcome.PASSED


def test_a_defective_discover_result_fails_ver_07(spec: SpecSet) -> None:
    """Spec-mandated (VER-07): each missing or malformed member is named."""
    result = {"resultType": "complete", "supportedVersions": "2026-07-28", "capabilities": {}, "ttlMs": -1}
    exchange = served(modern_body("server/discover"), result, bare=True)
    verdict = judge(log_of(exchange), spec, "discover_results_carry_versions_capabilities_and_cache_hints")
    assert verdict.outcome is Outcome.FAILED
    assert "supportedVersions" in verdict.reason
    assert "ttlMs is -1" in verdict.reason
    assert "cacheScope is missing" in verdict.reason


def test_an_empty_or_undated_supported_versions_list_fails_ver_07(spec: SpecSet) -> None:
    """Spec-mandated (VER-07): supportedVersions names the revisions served, each a YYYY-MM-DD identifier."""
    check = "discover_results_carry_versions_capabilities_and_cache_hints"
    empty = judge(log_of(discover({**DISCOVERED, "supportedVersions": []})), spec, check)
    assert empty.outcome is Outcome.FAILED and "supportedVersions is empty" in empty.reason
    for odd in ("latest", "2026-7-28", "2026-02-30", "v2026-07-28"):
        verdict = judge(log_of(discover({**DISCOVERED, "supportedVersions": [MODERN, odd]})), spec, check)
        assert verdict.outcome is Outcome.FAILED and f"{odd!r}, not a revision identifier" in verdict.reason, odd
    dated = {**DISCOVERED, "supportedVersions": [MODERN, "2025-11-25", "2027-01-01"]}
    assert judge(log_of(discover(dated)), spec, check).outcome is Outcome.PASSED


def test_a_discover_result_without_server_info_fails_ver_08(spec: SpecSet) -> None:
    """Spec-mandated (VER-08)."""
    exchange = served(modern_body("server/discover"), {**DISCOVERED, "resultType": "complete"}, bare=True)
    verdict = judge(log_of(exchange), spec, "discover_results_identify_the_server")
    assert verdict.outcome is Outcome.FAILED
    assert "serverInfo" in verdict.reason


def test_ver_07_and_ver_08_are_not_verified_without_discover_and_not_applicable_to_2025(spec: SpecSet) -> None:
    """Tool-defined."""
    log = log_of(modern_call("tools/list", {}, TOOLS))
    assert judge(log, spec, "discover_results_carry_versions_capabilities_and_cache_hints").outcome is (
        Outcome.NOT_VERIFIED
    )
    verdict = judge(log_of(legacy_session()), spec, "discover_results_identify_the_server")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- VER-09 ---------------------------------------------------------------------------------------
def test_served_versions_listed_in_supported_versions_pass_ver_09(spec: SpecSet) -> None:
    """Spec-mandated (VER-09)."""
    log = log_of(discover(), modern_call("tools/list", {}, TOOLS, ident=2))
    assert judge(log, spec, "accepted_versions_match_supported_versions").outcome is Outcome.PASSED


def test_serving_an_unlisted_version_or_refusing_a_listed_one_fails_ver_09(spec: SpecSet) -> None:
    """Spec-mandated (VER-09)."""
    body = modern_body("tools/list", ident=2, version="2027-01-01")
    log = log_of(discover(), served(body, TOOLS, headers=versioned_headers(body, "2027-01-01")))
    verdict = judge(log, spec, "accepted_versions_match_supported_versions")
    assert verdict.outcome is Outcome.FAILED
    assert "served a request naming 2027-01-01" in verdict.reason
    refusal = refused(modern_body("tools/list", ident=3), -32022, data={"supported": [MODERN], "requested": MODERN})
    verdict = judge(log_of(discover(), refusal), spec, "accepted_versions_match_supported_versions")
    assert verdict.outcome is Outcome.FAILED
    assert "lists it" in verdict.reason


def test_a_refusal_listing_the_version_it_refuses_fails_ver_09_without_discover(spec: SpecSet) -> None:
    """Spec-mandated (VER-09: a version the server rejected with -32022 is not among those it supports): the
    error's data.supported is the server's own word, so refusing 2026-07-28 while listing it is a violation with
    or without a discover; a refusal listing other versions passes."""
    contradiction = refused(
        modern_body("tools/list", ident=3), -32022, data={"supported": [MODERN], "requested": MODERN}
    )
    verdict = judge(log_of(contradiction), spec, "accepted_versions_match_supported_versions")
    assert verdict.outcome is Outcome.FAILED and "data.supported lists it" in verdict.reason
    body = modern_body("tools/list", ident=4, version="2027-01-01")
    data = {"supported": [MODERN], "requested": "2027-01-01"}
    other = refused(body, -32022, data=data, headers=versioned_headers(body, "2027-01-01"))
    assert judge(log_of(discover(), other), spec, "accepted_versions_match_supported_versions").outcome is (
        Outcome.PASSED
    )


def test_ver_09_is_not_verified_without_discover(spec: SpecSet) -> None:
    """Tool-defined: consistency needs the advertised list."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "accepted_versions_match_supported_versions")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_discover_answers_within_their_ttl_agree(spec: SpecSet) -> None:
    """Spec-mandated (VER-09): what a discover said holds while its ttlMs runs."""
    cached = {**DISCOVERED, "ttlMs": 60_000}
    log = log_of(discover(cached), discover(cached, ident=2))
    assert judge(log, spec, "discover_versions_hold_for_their_ttl").outcome is Outcome.PASSED
    changed = {**cached, "supportedVersions": [MODERN, "2027-01-01"]}
    verdict = judge(log_of(discover(cached), discover(changed, ident=2)), spec, "discover_versions_hold_for_their_ttl")
    assert verdict.outcome is Outcome.FAILED
    assert "60000 ms" in verdict.reason


def test_discover_stability_is_not_verified_with_a_zero_ttl(spec: SpecSet) -> None:
    """Tool-defined: ttlMs 0 means immediately stale, so nothing is promised."""
    log = log_of(discover(), discover({**DISCOVERED, "supportedVersions": ["2027-01-01"]}, ident=2))
    assert judge(log, spec, "discover_versions_hold_for_their_ttl").outcome is Outcome.NOT_VERIFIED


def test_the_same_discover_naming_other_capabilities_within_its_ttl_fails_ver_16(spec: SpecSet) -> None:
    """Spec-mandated (VER-16): the same question on the same connection, asked again after other requests, gets
    the same capabilities while the first answer is fresh; otherwise the server kept something from between."""
    check = "discover_capabilities_hold_for_their_ttl"
    cached = {**DISCOVERED, "ttlMs": 60_000}
    assert judge(log_of(discover(cached), discover(cached, ident=2)), spec, check).outcome is Outcome.PASSED
    grown = {**cached, "capabilities": {**cached["capabilities"], "logging": {}}}
    verdict = judge(log_of(discover(cached), discover(grown, ident=2)), spec, check)
    assert verdict.outcome is Outcome.FAILED and "(logging changed) within the 60000 ms" in verdict.reason


def test_discover_capabilities_are_compared_only_for_the_same_question_within_a_ttl(spec: SpecSet) -> None:
    """Tool-defined: ttlMs 0 promises nothing, and a discover declaring other client capabilities is another
    question (the answer may differ)."""
    check = "discover_capabilities_hold_for_their_ttl"
    grown = {**DISCOVERED, "capabilities": {"logging": {}}}
    assert judge(log_of(discover(), discover(grown, ident=2)), spec, check).outcome is Outcome.NOT_VERIFIED
    cached = {**DISCOVERED, "ttlMs": 60_000}
    other = served(modern_body("server/discover", ident=2, meta_extra={CAPS: {"elicitation": {}}}),
                   {**cached, "capabilities": {"logging": {}}})  # fmt: skip
    assert judge(log_of(discover(cached), other), spec, check).outcome is Outcome.NOT_VERIFIED


# -- VER-10 ---------------------------------------------------------------------------------------
def test_requests_after_discover_using_an_advertised_version_pass_ver_10(spec: SpecSet) -> None:
    """Spec-mandated (VER-10)."""
    log = log_of(discover(), modern_call("tools/list", {}, TOOLS, ident=2))
    assert judge(log, spec, "clients_use_an_advertised_version").outcome is Outcome.PASSED


def test_a_version_outside_the_advertised_list_fails_ver_10(spec: SpecSet) -> None:
    """Spec-mandated (VER-10)."""
    body = modern_body("tools/list", ident=2, version="2025-11-25")
    log = log_of(discover(), refused(body, -32022, headers=versioned_headers(body, "2025-11-25")))
    verdict = judge(log, spec, "clients_use_an_advertised_version")
    assert verdict.outcome is Outcome.FAILED
    assert "2025-11-25" in verdict.reason


def test_ver_10_is_not_verified_without_discover(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "clients_use_an_advertised_version")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-11, VER-12 (stdio) -------------------------------------------------------------------------
def stdio_pair(request: dict[str, Any], response: dict[str, Any], connection: str = "conn-1") -> list[Any]:
    return [stdio(Side.CLIENT, request, connection=connection), stdio(Side.SERVER, response, connection=connection)]


def discover_lines(connection: str = "conn-1") -> list[Any]:
    return stdio_pair(modern_body("server/discover"), result_body(full_result(DISCOVERED), 1), connection)


def test_a_stdio_client_opening_with_discover_passes_ver_11(spec: SpecSet) -> None:
    """Spec-mandated (VER-11)."""
    log = log_of(discover_lines(), stdio_pair(modern_body("tools/list", ident=2), result_body(full_result(TOOLS), 2)))
    assert judge(log, spec, "stdio_clients_open_with_discover").outcome is Outcome.PASSED


def test_a_stdio_client_opening_with_another_request_fails_ver_11(spec: SpecSet) -> None:
    """Spec-mandated (VER-11)."""
    log = log_of(stdio_pair(modern_body("tools/list"), result_body(full_result(TOOLS), 1)))
    verdict = judge(log, spec, "stdio_clients_open_with_discover")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/list" in verdict.reason


def test_ver_11_is_not_applicable_over_http(spec: SpecSet) -> None:
    """Spec-mandated (VER-11): a stdio-only recommendation."""
    assert judge(log_of(discover()), spec, "stdio_clients_open_with_discover").outcome is Outcome.NOT_APPLICABLE


def legacy_initialize_line(connection: str = "conn-1") -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }
    return stdio(Side.CLIENT, body, connection=connection)


def test_a_stdio_client_staying_modern_after_discover_passes_ver_12(spec: SpecSet) -> None:
    """Spec-mandated (VER-12)."""
    assert judge(log_of(discover_lines()), spec, "stdio_clients_stay_modern_after_a_modern_answer").outcome is (
        Outcome.PASSED
    )


def test_falling_back_to_initialize_after_a_modern_error_fails_ver_12(spec: SpecSet) -> None:
    """Spec-mandated (VER-12): -32022 proves the server is modern; initialize afterwards is wrong."""
    refusal = error_body(-32022, "Unsupported protocol version", 1, {"supported": ["2026-12-01"], "requested": MODERN})
    log = log_of(stdio_pair(modern_body("server/discover"), refusal), legacy_initialize_line())
    verdict = judge(log, spec, "stdio_clients_stay_modern_after_a_modern_answer")
    assert verdict.outcome is Outcome.FAILED
    assert "code -32022" in verdict.reason


def test_ver_12_is_not_verified_when_discover_got_a_legacy_answer(spec: SpecSet) -> None:
    """Spec-mandated (VER-12): after a non-modern error, falling back is exactly right."""
    legacy_error = error_body(-32601, "Method not found", 1)
    log = log_of(stdio_pair(modern_body("server/discover"), legacy_error), legacy_initialize_line())
    verdict = judge(log, spec, "stdio_clients_stay_modern_after_a_modern_answer")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-13 ---------------------------------------------------------------------------------------
def test_an_http_client_correcting_itself_after_minus_32022_passes_ver_13(spec: SpecSet) -> None:
    """Spec-mandated (VER-13)."""
    log = log_of(client_refusal(), served(modern_body("tools/list", ident=8), TOOLS))
    assert judge(log, spec, "http_clients_stay_modern_after_a_modern_refusal").outcome is Outcome.PASSED


def test_an_http_client_falling_back_after_a_modern_refusal_fails_ver_13(spec: SpecSet) -> None:
    """Spec-mandated (VER-13): a recognised modern error means the server is modern."""
    log = log_of(discover(), client_refusal(), initialize())
    verdict = judge(log, spec, "http_clients_stay_modern_after_a_modern_refusal")
    assert verdict.outcome is Outcome.FAILED
    assert "initialize" in verdict.reason


def test_ver_13_is_not_verified_without_a_modern_refusal(spec: SpecSet) -> None:
    """Tool-defined."""
    log = log_of(discover(), modern_call("tools/list", {}, TOOLS, ident=2))
    assert judge(log, spec, "http_clients_stay_modern_after_a_modern_refusal").outcome is Outcome.NOT_VERIFIED


# -- VER-14 ---------------------------------------------------------------------------------------
def work(ident: int, method: str = "tools/list") -> Any:
    return served(modern_body(method, ident=ident), TOOLS if method.endswith("list") else {"content": []})


def test_a_client_that_discovers_once_passes_ver_14(spec: SpecSet) -> None:
    """Spec-mandated (VER-14)."""
    log = log_of(discover(), work(2), work(3), work(4))
    assert judge(log, spec, "clients_do_not_rediscover_before_every_request").outcome is Outcome.PASSED


def test_a_client_that_discovers_before_every_request_fails_ver_14(spec: SpecSet) -> None:
    """Spec-mandated (VER-14): heuristic, three or more requests each behind its own discover."""
    log = log_of(discover(ident=1), work(2), discover(ident=3), work(4), discover(ident=5), work(6))
    verdict = judge(log, spec, "clients_do_not_rediscover_before_every_request")
    assert verdict.outcome is Outcome.FAILED
    assert "each of the client's 3 requests" in verdict.reason


def test_ver_14_is_not_verified_with_few_requests(spec: SpecSet) -> None:
    """Tool-defined: two requests are no pattern."""
    log = log_of(discover(), work(2))
    assert judge(log, spec, "clients_do_not_rediscover_before_every_request").outcome is Outcome.NOT_VERIFIED


# -- VER-15 ---------------------------------------------------------------------------------------
def test_a_refused_legacy_initialize_naming_versions_passes_ver_15(spec: SpecSet) -> None:
    """Spec-mandated (VER-15)."""
    refusal = initialize(error=-32600)
    body = refusal.request_message.payload if refusal.request_message is not None else {}
    named = refused(
        body, -32600, message="This server speaks 2026-07-28 only", headers={"content-type": "application/json"}
    )
    assert judge(log_of(discover(), named), spec, "refused_initialize_names_supported_versions").outcome is (
        Outcome.PASSED
    )


def test_a_refused_legacy_initialize_without_versions_fails_ver_15(spec: SpecSet) -> None:
    """Spec-mandated (VER-15)."""
    plain = {"content-type": "application/json"}
    body = initialize().request_message.payload  # type: ignore[union-attr]
    verdict = judge(
        log_of(discover(), refused(body, -32600, message="Bad request", headers=plain)),
        spec,
        "refused_initialize_names_supported_versions",
    )
    assert verdict.outcome is Outcome.FAILED
    assert "does not name" in verdict.reason
    verdict = judge(
        log_of(discover(), refused(body, -32600, status=500, message="2026-07-28", headers=plain)),
        spec,
        "refused_initialize_names_supported_versions",
    )
    assert verdict.outcome is Outcome.FAILED
    assert "HTTP 500" in verdict.reason


def test_ver_15_is_not_verified_when_a_dual_era_server_accepts_initialize(spec: SpecSet) -> None:
    """Spec-mandated (VER-15): only modern-only servers refuse initialize."""
    verdict = judge(log_of(discover(), legacy_session()), spec, "refused_initialize_names_supported_versions")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_a_server_declared_modern_only_that_refuses_initialize_naming_versions_passes_ver_15(spec: SpecSet) -> None:
    """Spec-mandated (VER-15), for a server the user declares modern-only (run --modern-only)."""
    body = initialize().request_message.payload  # type: ignore[union-attr]
    named = refused(
        body, -32600, message="This server speaks 2026-07-28 only", headers={"content-type": "application/json"}
    )
    verdict = judge(log_of(discover(), named), spec, "refused_initialize_names_supported_versions", modern_only=True)
    assert verdict.outcome is Outcome.PASSED


def test_a_server_declared_modern_only_that_serves_initialize_fails_ver_15(spec: SpecSet) -> None:
    """Spec-mandated (VER-15 with A21): a modern-only server refuses the handshake; the user said this one is."""
    verdict = judge(
        log_of(discover(), legacy_session()), spec, "refused_initialize_names_supported_versions", modern_only=True
    )
    assert verdict.outcome is Outcome.FAILED
    assert "declared modern-only" in verdict.reason and "negotiating 2025-11-25" in verdict.reason


def test_ver_15_for_a_server_declared_modern_only_is_not_verified_without_a_legacy_initialize(spec: SpecSet) -> None:
    """Tool-defined: nothing tried the handshake, so whether it is refused is unknown."""
    verdict = judge(log_of(discover()), spec, "refused_initialize_names_supported_versions", modern_only=True)
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-16 ---------------------------------------------------------------------------------------
def test_a_request_served_without_prior_discover_passes_ver_16(spec: SpecSet) -> None:
    """Spec-mandated (VER-16): probe (a), the first request on a fresh connection is served."""
    assert judge(log_of(work(1)), spec, "servers_serve_each_request_on_its_own").outcome is Outcome.PASSED


def test_a_request_refused_for_lack_of_a_session_fails_ver_16(spec: SpecSet) -> None:
    """Spec-mandated (VER-16): a 2026 server keeps no per-connection state."""
    exchange = refused(modern_body("tools/list"), -32600, message="Bad Request: Missing session ID")
    verdict = judge(log_of(exchange), spec, "servers_serve_each_request_on_its_own")
    assert verdict.outcome is Outcome.FAILED
    assert "Missing session ID" in verdict.reason


def test_ver_16_is_not_verified_without_complete_requests(spec: SpecSet) -> None:
    """Tool-defined."""
    exchange = refused(modern_body("tools/list", drop=(CAPS,)), -32602)
    assert judge(log_of(exchange), spec, "servers_serve_each_request_on_its_own").outcome is Outcome.NOT_VERIFIED


# -- VER-17 ---------------------------------------------------------------------------------------
def paged(connection_b: str, second_ok: bool = True) -> Any:
    first = on_connection(served(modern_body("tools/list"), {**TOOLS, "nextCursor": "c1"}), "conn-a")
    body = modern_body("tools/list", {"cursor": "c1"}, ident=2)
    second = served(body, TOOLS) if second_ok else refused(body, -32602, message="Invalid cursor")
    return log_of(first, on_connection(second, connection_b))


def test_a_cursor_continued_on_a_new_connection_passes_ver_17(spec: SpecSet) -> None:
    """Spec-mandated (VER-17)."""
    assert judge(paged("conn-b"), spec, "continuations_work_on_a_new_connection").outcome is Outcome.PASSED


def test_a_cursor_refused_on_a_new_connection_fails_ver_17(spec: SpecSet) -> None:
    """Spec-mandated (VER-17)."""
    verdict = judge(paged("conn-b", second_ok=False), spec, "continuations_work_on_a_new_connection")
    assert verdict.outcome is Outcome.FAILED
    assert "new connection" in verdict.reason


def test_ver_17_is_not_verified_on_one_connection(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(paged("conn-a", second_ok=False), spec, "continuations_work_on_a_new_connection")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- VER-18 ---------------------------------------------------------------------------------------
def test_prefixed_extension_keys_pass_ver_18(spec: SpecSet) -> None:
    """Spec-mandated (VER-18)."""
    body = modern_body("server/discover", meta_extra={CAPS: {"extensions": {"io.modelcontextprotocol/tasks": {}}}})
    result = {**DISCOVERED, "capabilities": {"extensions": {"com.example/ui": {"v": 1}}}}
    verdict = judge(log_of(served(body, result)), spec, "extension_keys_are_prefixed_meta_keys")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_unprefixed_extension_keys_or_non_object_values_fail_ver_18(spec: SpecSet) -> None:
    """Spec-mandated (VER-18): the prefix is mandatory for extension identifiers."""
    body = modern_body("tools/list", meta_extra={CAPS: {"extensions": {"tasks": {}}}})
    verdict = judge(log_of(served(body, TOOLS)), spec, "extension_keys_are_prefixed_meta_keys")
    assert verdict.outcome is Outcome.FAILED
    assert "no prefix" in verdict.reason
    result = {**DISCOVERED, "capabilities": {"extensions": {"com.example/ui": True}}}
    verdict = judge(log_of(discover(result)), spec, "extension_keys_are_prefixed_meta_keys")
    assert verdict.outcome is Outcome.FAILED
    assert "not an object" in verdict.reason


def test_ver_18_is_not_verified_without_extensions(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(log_of(discover()), spec, "extension_keys_are_prefixed_meta_keys").outcome is Outcome.NOT_VERIFIED


# -- VER-20 ---------------------------------------------------------------------------------------
def test_an_unadvertised_capability_answered_with_method_not_found_passes_ver_20(spec: SpecSet) -> None:
    """Spec-mandated (VER-20)."""
    exchange = refused(modern_body("prompts/list", ident=2), -32601, status=404, message="Method not found")
    assert judge(log_of(discover(), exchange), spec, "unadvertised_capabilities_get_method_not_found").outcome is (
        Outcome.PASSED
    )


def test_an_unadvertised_capability_served_fails_ver_20(spec: SpecSet) -> None:
    """Spec-mandated (VER-20): discover listed tools only."""
    exchange = served(modern_body("prompts/list", ident=2), {"prompts": [], "ttlMs": 0, "cacheScope": "private"})
    verdict = judge(log_of(discover(), exchange), spec, "unadvertised_capabilities_get_method_not_found")
    assert verdict.outcome is Outcome.FAILED
    assert "prompts" in verdict.reason
    wrong_status = refused(modern_body("prompts/list", ident=3), -32601, status=200)
    verdict = judge(log_of(discover(), wrong_status), spec, "unadvertised_capabilities_get_method_not_found")
    assert verdict.outcome is Outcome.FAILED
    assert "HTTP 200" in verdict.reason


def test_ver_20_is_not_verified_without_discover(spec: SpecSet) -> None:
    """Tool-defined: without the advertised capabilities nothing is out of bounds."""
    exchange = served(modern_body("prompts/list"), {"prompts": [], "ttlMs": 0, "cacheScope": "private"})
    assert judge(log_of(exchange), spec, "unadvertised_capabilities_get_method_not_found").outcome is (
        Outcome.NOT_VERIFIED
    )


# -- VER-21, VER-22 ---------------------------------------------------------------------------------
def test_removed_methods_answered_with_method_not_found_pass_ver_21(spec: SpecSet) -> None:
    """Spec-mandated (VER-21)."""
    ping = refused(modern_body("ping"), -32601, status=404, message="Method not found", probe=PROBE)
    subscribe = refused(
        modern_body("resources/subscribe", {"uri": "file:///x"}, ident=2), -32601, status=404, probe=PROBE
    )
    verdict = judge(log_of(ping, subscribe), spec, "removed_methods_are_unknown_to_modern_requests")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_a_removed_method_served_with_a_2026_envelope_fails_ver_21(spec: SpecSet) -> None:
    """Spec-mandated (VER-21): ping no longer exists in 2026."""
    exchange = served(modern_body("ping"), {}, probe=PROBE)
    verdict = judge(log_of(exchange), spec, "removed_methods_are_unknown_to_modern_requests")
    assert verdict.outcome is Outcome.FAILED
    assert "ping" in verdict.reason


def test_ver_21_tolerates_a_dual_era_server_serving_initialize(spec: SpecSet) -> None:
    """Spec-mandated (VER-21 with A21): a dual-era server may still implement initialize."""
    body = modern_body("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    exchange = served(body, {"protocolVersion": "2025-11-25", "capabilities": {}}, probe=PROBE)
    verdict = judge(log_of(exchange), spec, "removed_methods_are_unknown_to_modern_requests")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_a_server_declared_modern_only_serving_initialize_with_a_2026_envelope_fails_ver_21(spec: SpecSet) -> None:
    """Spec-mandated (VER-21 with A21): only a dual-era server may still serve initialize."""
    body = modern_body("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    exchange = served(body, {"protocolVersion": "2025-11-25", "capabilities": {}}, probe=PROBE)
    verdict = judge(log_of(exchange), spec, "removed_methods_are_unknown_to_modern_requests", modern_only=True)
    assert verdict.outcome is Outcome.FAILED
    assert "initialize with a 2026 envelope was served with a result" in verdict.reason
    refused_initialize = refused(body, -32601, status=404, probe=PROBE)
    verdict = judge(
        log_of(refused_initialize), spec, "removed_methods_are_unknown_to_modern_requests", modern_only=True
    )
    assert verdict.outcome is Outcome.PASSED


def test_modern_requests_for_defined_methods_pass_ver_22(spec: SpecSet) -> None:
    """Spec-mandated (VER-22)."""
    assert judge(log_of(work(1)), spec, "modern_clients_do_not_send_removed_methods").outcome is Outcome.PASSED


def test_a_2026_client_sending_ping_fails_ver_22(spec: SpecSet) -> None:
    """Spec-mandated (VER-22)."""
    exchange = refused(modern_body("ping"), -32601, status=404)
    verdict = judge(log_of(exchange), spec, "modern_clients_do_not_send_removed_methods")
    assert verdict.outcome is Outcome.FAILED
    assert "ping was removed" in verdict.reason


def test_ver_22_is_not_applicable_to_2025_sessions(spec: SpecSet) -> None:
    """Spec-mandated (VER-22): ping is fine in a 2025 session."""
    verdict = judge(log_of(legacy_session()), spec, "modern_clients_do_not_send_removed_methods")
    assert verdict.outcome is Outcome.NOT_APPLICABLE
