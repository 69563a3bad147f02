"""Result envelope and caching (RES-): passing, failing and not-verified cases for every rule."""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import HttpExchange
from tests.factories import (
    initialized,
    judge,
    legacy_call,
    legacy_session,
    log_of,
    modern_call,
    modern_headers,
    rules_of,
)
from tests.spec.rules._envelope_builders import (
    DISCOVERED,
    TOOLS,
    discover,
    initialize,
    legacy_post,
    modern_body,
    served,
)

CAPS = "io.modelcontextprotocol/clientCapabilities"
INPUT_REQUIRED = {
    "resultType": "input_required",
    "inputRequests": {"ask": {"method": "roots/list"}},
    "requestState": "s1",
}


def call(result: dict[str, Any], *, bare: bool = True, ident: int = 1, meta: dict[str, Any] | None = None) -> Any:
    body = modern_body("tools/list", ident=ident, meta_extra=meta)
    return served(body, result, bare=bare)


# -- RES-01 and RES-03 -----------------------------------------------------------------------------
def test_results_with_a_result_type_pass_res_01(spec: SpecSet) -> None:
    """Spec-mandated (RES-01)."""
    assert judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "results_name_their_result_type").outcome is (
        Outcome.PASSED
    )


def test_a_2026_result_without_result_type_fails_res_01(spec: SpecSet) -> None:
    """Spec-mandated (RES-01): even an empty-looking result names its type."""
    verdict = judge(log_of(call(TOOLS)), spec, "results_name_their_result_type")
    assert verdict.outcome is Outcome.FAILED
    assert "no resultType" in verdict.reason
    verdict = judge(log_of(call({**TOOLS, "resultType": 5})), spec, "results_name_their_result_type")
    assert verdict.outcome is Outcome.FAILED
    assert "not a string" in verdict.reason


def test_a_legacy_result_without_result_type_is_not_flagged(spec: SpecSet) -> None:
    """Spec-mandated (RES-03): a 2025 result lacks resultType by design, so no envelope rule applies to it."""
    verdict = judge(
        log_of(legacy_session(), legacy_call("tools/list", None, {"tools": []}, ident=5)),
        spec,
        "results_name_their_result_type",
    )
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_no_envelope_rule_fails_a_well_behaved_2025_session(spec: SpecSet) -> None:
    """Spec-mandated (RES-03): every META/RES/VER/HS rule leaves correct 2025 traffic unflagged."""
    from mcp_assay.spec import rules  # noqa: F401

    session = [
        initialize(),
        initialized(),
        legacy_call("tools/list", None, {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]}, ident=1),
        legacy_call("tools/call", {"name": "add", "arguments": {}}, {"content": [], "isError": False}, ident=2),
        legacy_call("ping", None, {}, ident=3),
        legacy_post(None, method="DELETE", status=200),
    ]
    mine = rules_of("envelope", "results", "versions", "handshake")
    verdicts = evaluate(log_of(session), spec, checks=mine)
    failures = [(verdict.check, verdict.reason) for verdict in verdicts if verdict.outcome is Outcome.FAILED]
    assert failures == []
    assert {v.check for v in verdicts if v.outcome is Outcome.PASSED} >= {
        "initialize_opens_every_session",
        "clients_confirm_with_initialized",
        "pings_get_a_prompt_empty_result",
        "session_deletes_name_the_session",
    }


# -- RES-02 / VER-19 --------------------------------------------------------------------------------
def test_core_result_types_pass_res_02(spec: SpecSet) -> None:
    """Spec-mandated (RES-02)."""
    assert judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "result_types_are_core_or_negotiated").outcome is (
        Outcome.PASSED
    )


def test_an_unknown_result_type_without_extensions_fails_res_02(spec: SpecSet) -> None:
    """Spec-mandated (RES-02, VER-19): clients must treat it as invalid."""
    verdict = judge(log_of(call({**TOOLS, "resultType": "task"})), spec, "result_types_are_core_or_negotiated")
    assert verdict.outcome is Outcome.FAILED
    assert "'task'" in verdict.reason
    assert "the client declared no extension" in verdict.reason


def test_an_extension_result_type_needs_the_extension_on_both_sides(spec: SpecSet) -> None:
    """Spec-mandated (RES-02, VER-19): a shared extension may define the value, so it cannot be refuted."""
    extension = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    advertised = discover({**DISCOVERED, "capabilities": {"tools": {}, **extension}})
    result = call({**TOOLS, "resultType": "task"}, ident=2, meta={CAPS: extension})
    verdict = judge(log_of(advertised, result), spec, "result_types_are_core_or_negotiated")
    assert verdict.outcome is Outcome.PASSED  # the discover result passes; the "task" result is left undecided
    assert verdict.judged == 1
    only_client = judge(log_of(discover(), result), spec, "result_types_are_core_or_negotiated")
    assert only_client.outcome is Outcome.FAILED
    assert "the server declared no extension" in only_client.reason


# -- RES-05 ---------------------------------------------------------------------------------------
def test_results_naming_the_server_pass_res_05(spec: SpecSet) -> None:
    """Spec-mandated (RES-05)."""
    assert judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "results_identify_the_server").outcome is (
        Outcome.PASSED
    )


def test_results_without_server_info_fail_res_05(spec: SpecSet) -> None:
    """Spec-mandated (RES-05)."""
    verdict = judge(log_of(call({**TOOLS, "resultType": "complete"})), spec, "results_identify_the_server")
    assert verdict.outcome is Outcome.FAILED
    assert "serverInfo" in verdict.reason


def test_res_05_is_not_applicable_to_2025_results(spec: SpecSet) -> None:
    """Spec-mandated (RES-05): serverInfo travels in the initialize result there."""
    assert judge(log_of(legacy_session()), spec, "results_identify_the_server").outcome is Outcome.NOT_APPLICABLE


# -- RES-06 .. RES-09 -------------------------------------------------------------------------------
def test_cacheable_results_with_both_hints_pass_res_06(spec: SpecSet) -> None:
    """Spec-mandated (RES-06)."""
    verdict = judge(
        log_of(discover(), modern_call("tools/list", {}, TOOLS, ident=2)), spec, "cacheable_results_carry_ttl_and_scope"
    )
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_a_list_result_without_cache_scope_fails_res_06(spec: SpecSet) -> None:
    """Spec-mandated (RES-06)."""
    verdict = judge(
        log_of(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0})), spec, "cacheable_results_carry_ttl_and_scope"
    )
    assert verdict.outcome is Outcome.FAILED
    assert "lacks cacheScope" in verdict.reason


def test_res_06_is_not_verified_without_cacheable_results(spec: SpecSet) -> None:
    """Spec-mandated (RES-06): tools/call results are not cacheable."""
    exchange = served(modern_body("tools/call", {"name": "add", "arguments": {}}), {"content": []})
    assert judge(log_of(exchange), spec, "cacheable_results_carry_ttl_and_scope").outcome is Outcome.NOT_VERIFIED


def test_a_non_negative_integer_ttl_passes_res_07(spec: SpecSet) -> None:
    """Spec-mandated (RES-07)."""
    exchange = modern_call("tools/list", {}, {**TOOLS, "ttlMs": 1500})
    assert judge(log_of(exchange), spec, "ttl_is_a_non_negative_integer").outcome is Outcome.PASSED


def test_negative_fractional_and_string_ttls_fail_res_07_with_their_own_message(spec: SpecSet) -> None:
    """Spec-mandated (RES-07): 1500.0 is not an integer even though Python reads it as a number."""
    for ttl, words in ((-5, "ttlMs is -5"), (1500.0, "ttlMs is 1500.0, not an integer"), ("1500", "string '1500'")):
        verdict = judge(
            log_of(modern_call("tools/list", {}, {**TOOLS, "ttlMs": ttl})), spec, "ttl_is_a_non_negative_integer"
        )
        assert verdict.outcome is Outcome.FAILED
        assert words in verdict.reason


def test_res_07_is_not_verified_without_ttl(spec: SpecSet) -> None:
    """Tool-defined."""
    exchange = served(modern_body("tools/call", {"name": "add"}), {"content": []})
    assert judge(log_of(exchange), spec, "ttl_is_a_non_negative_integer").outcome is Outcome.NOT_VERIFIED


def test_public_and_private_scopes_pass_res_08_and_others_fail(spec: SpecSet) -> None:
    """Spec-mandated (RES-08)."""
    good = log_of(modern_call("tools/list", {}, {**TOOLS, "cacheScope": "public"}))
    assert judge(good, spec, "cache_scope_is_public_or_private").outcome is Outcome.PASSED
    bad = log_of(modern_call("tools/list", {}, {**TOOLS, "cacheScope": "Private"}))
    verdict = judge(bad, spec, "cache_scope_is_public_or_private")
    assert verdict.outcome is Outcome.FAILED
    assert '"Private"' in verdict.reason


def test_res_08_is_not_verified_without_cache_scope(spec: SpecSet) -> None:
    """Tool-defined."""
    exchange = served(modern_body("tools/call", {"name": "add"}), {"content": []})
    assert judge(log_of(exchange), spec, "cache_scope_is_public_or_private").outcome is Outcome.NOT_VERIFIED


def tool_call(result: dict[str, Any]) -> Any:
    return served(modern_body("tools/call", {"name": "ask", "arguments": {}}), result, bare=True)


def test_interim_results_without_hints_pass_res_09(spec: SpecSet) -> None:
    """Spec-mandated (RES-09)."""
    assert judge(log_of(tool_call(INPUT_REQUIRED)), spec, "interim_results_carry_no_cache_hints").outcome is (
        Outcome.PASSED
    )


def test_interim_results_with_hints_fail_res_09(spec: SpecSet) -> None:
    """Spec-mandated (RES-09, A13): reported as a SHOULD NOT."""
    verdict = judge(log_of(tool_call({**INPUT_REQUIRED, "ttlMs": 0})), spec, "interim_results_carry_no_cache_hints")
    assert verdict.outcome is Outcome.FAILED
    assert "carries ttlMs" in verdict.reason


def test_res_09_is_not_verified_without_interim_results(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "interim_results_carry_no_cache_hints")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- RES-10 ---------------------------------------------------------------------------------------
def walk(second_scope: str) -> Any:
    first = served(modern_body("tools/list"), {**TOOLS, "nextCursor": "p2"})
    second = served(modern_body("tools/list", {"cursor": "p2"}, ident=2), {**TOOLS, "cacheScope": second_scope})
    other = served(modern_body("prompts/list", ident=3), {"prompts": [], "ttlMs": 0, "cacheScope": "public"})
    return log_of(first, second, other)


def test_pages_of_one_walk_with_one_scope_pass_res_10(spec: SpecSet) -> None:
    """Spec-mandated (RES-10): an unrelated list may use another scope."""
    assert judge(walk("private"), spec, "pages_of_one_list_share_a_cache_scope").outcome is Outcome.PASSED


def test_pages_of_one_walk_with_different_scopes_fail_res_10(spec: SpecSet) -> None:
    """Spec-mandated (RES-10)."""
    verdict = judge(walk("public"), spec, "pages_of_one_list_share_a_cache_scope")
    assert verdict.outcome is Outcome.FAILED
    assert "'public'" in verdict.reason


def test_res_10_is_not_verified_without_a_multi_page_walk(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "pages_of_one_list_share_a_cache_scope")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- RES-11 ---------------------------------------------------------------------------------------
def as_caller(token: str, tools: list[Any], ident: int) -> Any:
    body = modern_body("tools/list", ident=ident)
    headers = modern_headers(body, authorization=f"Bearer {token}")
    return served(body, {"tools": tools, "ttlMs": 0, "cacheScope": "public"}, headers=headers)


def test_public_results_equal_across_callers_pass_res_11(spec: SpecSet) -> None:
    """Spec-mandated (RES-11)."""
    log = log_of(as_caller("alice", [], 1), as_caller("bob", [], 2))
    assert judge(log, spec, "public_results_do_not_depend_on_the_caller").outcome is Outcome.PASSED


def test_public_results_that_differ_by_caller_fail_res_11(spec: SpecSet) -> None:
    """Spec-mandated (RES-11): caller-specific payloads must be private."""
    private_tool = {"name": "alice-only", "inputSchema": {"type": "object"}}
    log = log_of(as_caller("alice", [private_tool], 1), as_caller("bob", [], 2))
    verdict = judge(log, spec, "public_results_do_not_depend_on_the_caller")
    assert verdict.outcome is Outcome.FAILED
    assert "caller-specific" in verdict.reason


def test_res_11_is_not_verified_with_one_caller(spec: SpecSet) -> None:
    """Tool-defined: it needs two authorization contexts."""
    log = log_of(as_caller("alice", [], 1), as_caller("alice", [], 2))
    assert judge(log, spec, "public_results_do_not_depend_on_the_caller").outcome is Outcome.NOT_VERIFIED


# -- RES-12 ---------------------------------------------------------------------------------------
def at(exchange: HttpExchange, when: float) -> HttpExchange:
    """The same exchange, moved to ``when`` (messages re-parsed with the new times)."""
    assert exchange.response is not None
    return HttpExchange.build(
        id=exchange.id,
        request=dataclasses.replace(exchange.request, time=when),
        response=dataclasses.replace(exchange.response, time=when + 0.01),
        ending=exchange.ending,
    )


def polled(times: list[float], ttl: int) -> Any:
    start = 1_800_000_000.0
    return log_of(
        [
            at(served(modern_body("tools/list", ident=i), {**TOOLS, "ttlMs": ttl}), start + t)
            for i, t in enumerate(times)
        ]
    )


def test_irregular_refetches_pass_res_12(spec: SpecSet) -> None:
    """Spec-mandated (RES-12)."""
    log = polled([0, 31.7, 58.2, 95.0, 119.9], ttl=30_000)
    assert judge(log, spec, "clients_do_not_poll_on_the_ttl").outcome is Outcome.PASSED


def test_polling_exactly_on_the_ttl_fails_res_12(spec: SpecSet) -> None:
    """Spec-mandated (RES-12): a TTL is a freshness hint, not a timer."""
    log = polled([0, 30, 60, 90, 120], ttl=30_000)
    verdict = judge(log, spec, "clients_do_not_poll_on_the_ttl")
    assert verdict.outcome is Outcome.FAILED
    assert "every 30.00 s" in verdict.reason


def test_res_12_is_not_verified_without_repeated_requests(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "clients_do_not_poll_on_the_ttl").outcome is (
        Outcome.NOT_VERIFIED
    )
