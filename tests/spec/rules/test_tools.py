"""Tools (TOOL-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.spec.rules.shared.header_mirroring import header_marks
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Side
from tests.factories import (
    http,
    judge,
    legacy_call,
    legacy_session,
    log_of,
    modern_headers,
    request_body,
    result_body,
    stdio,
)
from tests.spec.rules._capability_builders import ADD, ECHO, answered, call, caps, failing, text, tools_list

GOOD_ADD = {"content": [text('{"result": 3}')], "structuredContent": {"result": 3}, "isError": False}


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


# -- TOOL-01 / TOOL-02 ---------------------------------------------------------------------------
def test_serving_tools_with_the_tools_capability_passes_tool_01(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-01)."""
    assert outcome(spec, "servers_serving_tools_declare_tools", caps(), tools_list([ADD])) is Outcome.PASSED


def test_serving_tools_without_declaring_them_fails_tool_01(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-01)."""
    verdict = judge(log_of(caps({"prompts": {}}), tools_list([ADD])), spec, "servers_serving_tools_declare_tools")
    assert verdict.outcome is Outcome.FAILED
    assert "without declaring tools" in verdict.reason


def test_tool_01_is_not_verified_without_the_capabilities(spec: SpecSet) -> None:
    """Tool-defined: no discover/initialize answer captured, so the declaration is unknown."""
    verdict = judge(log_of(tools_list([ADD])), spec, "servers_serving_tools_declare_tools")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "capabilities were not captured" in verdict.reason


def test_declared_tools_answered_with_a_list_pass_tool_02(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-02)."""
    assert outcome(spec, "declared_tools_are_listed", caps(), tools_list([])) is Outcome.PASSED


def test_declared_tools_answered_with_an_error_fail_tool_02(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-02)."""
    verdict = judge(log_of(caps(), failing("tools/list", {}, -32603)), spec, "declared_tools_are_listed")
    assert verdict.outcome is Outcome.FAILED
    assert "-32603" in verdict.reason


def test_the_auth_33_probe_refused_with_its_request_id_is_left_out_of_tool_02(spec: SpecSet) -> None:
    """Tool-defined: another principal's tools/list inside a session is refused on purpose (AUTH-33); a 404 error
    carrying its id says nothing about whether tools/list is served."""
    probe = {"name": "session-other-principal", "invalid": False}
    refused = failing("tools/list", {}, -32600, status=404, probe=probe)
    verdict = judge(log_of(caps(), refused, tools_list([])), spec, "declared_tools_are_listed")
    assert verdict.outcome is Outcome.PASSED
    alone = judge(log_of(caps(), failing("tools/list", {}, -32600, status=404, probe=probe)), spec,
                  "declared_tools_are_listed")  # fmt: skip
    assert alone.outcome is Outcome.NOT_VERIFIED


def test_tool_02_is_not_applicable_when_tools_are_not_declared(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-02): only servers that declare tools owe a list."""
    verdict = judge(log_of(caps({}), failing("tools/list", {}, -32601, status=404)), spec, "declared_tools_are_listed")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- TOOL-03 / TOOL-04 ---------------------------------------------------------------------------
def test_identical_listings_pass_tool_03_and_tool_04(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-03, TOOL-04)."""
    log = log_of(tools_list([ADD, ECHO]), tools_list([ADD, ECHO], ident=5))
    assert judge(log, spec, "tool_lists_do_not_depend_on_the_connection").outcome is Outcome.PASSED
    assert judge(log, spec, "tool_list_order_is_deterministic").outcome is Outcome.PASSED


def test_a_listing_that_changes_without_notice_fails_tool_03(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-03): the set may not depend on the connection or earlier requests."""
    log = log_of(tools_list([ADD]), call("add", {"a": 1, "b": 2}, GOOD_ADD), tools_list([ADD, ECHO], ident=5))
    verdict = judge(log, spec, "tool_lists_do_not_depend_on_the_connection")
    assert verdict.outcome is Outcome.FAILED
    assert "+echo" in verdict.reason


def test_a_reordered_listing_fails_tool_04(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-04)."""
    log = log_of(tools_list([ADD, ECHO]), tools_list([ECHO, ADD], ident=5))
    assert judge(log, spec, "tool_list_order_is_deterministic").outcome is Outcome.FAILED


def test_a_single_listing_proves_nothing_for_tool_03(spec: SpecSet) -> None:
    """Tool-defined: one listing has nothing to be compared with."""
    assert outcome(spec, "tool_lists_do_not_depend_on_the_connection", tools_list([ADD])) is Outcome.NOT_VERIFIED


def test_tool_03_is_not_applicable_to_2025_sessions(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-03): a 2026 requirement."""
    log = log_of(legacy_session(capabilities={"tools": {}}), legacy_call("tools/list", None, {"tools": [ADD]}))
    assert judge(log, spec, "tool_lists_do_not_depend_on_the_connection").outcome is Outcome.NOT_APPLICABLE


# -- TOOL-05 / TOOL-06 / TOOL-07 / TOOL-08 -------------------------------------------------------
def test_a_well_formed_tool_list_passes_tool_05(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-05)."""
    assert outcome(spec, "tool_lists_match_the_schema", tools_list([ADD, ECHO])) is Outcome.PASSED


def test_a_tool_without_input_schema_fails_tool_05(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-05): inputSchema is required."""
    verdict = judge(log_of(tools_list([{"name": "bare"}])), spec, "tool_lists_match_the_schema")
    assert verdict.outcome is Outcome.FAILED
    assert "'inputSchema' is a required property" in verdict.reason


def test_tool_05_is_not_verified_without_a_tool_list(spec: SpecSet) -> None:
    assert outcome(spec, "tool_lists_match_the_schema", caps()) is Outcome.NOT_VERIFIED


def test_object_input_schemas_pass_tool_06(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-06)."""
    assert outcome(spec, "input_schemas_are_object_schemas", tools_list([ADD, ECHO])) is Outcome.PASSED


def test_input_schema_shapes_clients_reject_fail_tool_06(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-06): null, {} (no root type), a non-object root, an invalid schema."""
    for schema, needle in (
        (None, "not an object"),
        ({}, "missing"),
        ({"type": "array"}, '"array"'),
        ({"type": "object", "properties": {"p": {"type": "array", "items": [{"type": "string"}]}}}, "invalid"),
    ):
        verdict = judge(
            log_of(tools_list([{"name": "t", "inputSchema": schema}])), spec, "input_schemas_are_object_schemas"
        )
        assert verdict.outcome is Outcome.FAILED, schema
        assert needle in verdict.reason


def test_boolean_property_schemas_pass_in_2026_but_break_the_2025_tool_definition(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-06): 2025-11-25's Tool makes every inputSchema property an object schema."""
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"anything": True}}}
    assert outcome(spec, "input_schemas_are_object_schemas", tools_list([tool])) is Outcome.PASSED
    old = log_of(legacy_session(capabilities={"tools": {}}), legacy_call("tools/list", None, {"tools": [tool]}))
    verdict = judge(old, spec, "input_schemas_are_object_schemas")
    assert verdict.outcome is Outcome.FAILED
    assert "2025-11-25 does not allow" in verdict.reason


def test_an_input_schema_in_an_unknown_dialect_is_not_verified(spec: SpecSet) -> None:
    """Tool-defined: a dialect mcp-assay does not know cannot be judged."""
    tool = {"name": "t", "inputSchema": {"$schema": "https://example.com/dialect", "type": "object"}}
    verdict = judge(log_of(tools_list([tool])), spec, "input_schemas_are_object_schemas")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "does not know" in verdict.reason


def test_an_array_output_schema_passes_in_2026_but_fails_in_2025(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-07): 2025-11-25 requires "type": "object" on outputSchema, 2026-07-28 does not."""
    tool = {**ADD, "outputSchema": {"type": "array", "items": {"type": "integer"}}}
    assert outcome(spec, "output_schemas_are_valid_schemas", tools_list([tool])) is Outcome.PASSED
    old = log_of(legacy_session(capabilities={"tools": {}}), legacy_call("tools/list", None, {"tools": [tool]}))
    verdict = judge(old, spec, "output_schemas_are_valid_schemas")
    assert verdict.outcome is Outcome.FAILED
    assert 'not "object"' in verdict.reason


def test_an_invalid_output_schema_fails_tool_07(spec: SpecSet) -> None:
    tool = {**ADD, "outputSchema": {"type": "object", "required": "result"}}
    assert outcome(spec, "output_schemas_are_valid_schemas", tools_list([tool])) is Outcome.FAILED


def test_tool_07_is_not_verified_when_no_tool_declares_an_output_schema(spec: SpecSet) -> None:
    assert outcome(spec, "output_schemas_are_valid_schemas", tools_list([ECHO])) is Outcome.NOT_VERIFIED


def test_well_formed_unique_names_pass_tool_08(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-08)."""
    assert outcome(spec, "tool_names_are_well_formed_and_unique", tools_list([ADD, ECHO])) is Outcome.PASSED


def test_names_with_spaces_or_repeats_across_pages_fail_tool_08(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-08): uniqueness holds across the pages of one listing."""
    spaced = tools_list([{**ECHO, "name": "echo it"}])
    assert outcome(spec, "tool_names_are_well_formed_and_unique", spaced) is Outcome.FAILED
    first = tools_list([ADD], next_cursor="p2")
    second = tools_list([ADD], cursor="p2", ident=2)
    verdict = judge(log_of(first, second), spec, "tool_names_are_well_formed_and_unique")
    assert verdict.outcome is Outcome.FAILED
    assert "more than once" in verdict.reason


def test_tool_08_is_not_verified_without_listings(spec: SpecSet) -> None:
    assert outcome(spec, "tool_names_are_well_formed_and_unique", caps()) is Outcome.NOT_VERIFIED


# -- TOOL-09 / TOOL-10 / TOOL-11 -----------------------------------------------------------------
def test_a_complete_call_result_passes_tool_09(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-09)."""
    assert outcome(spec, "tool_results_match_the_schema", call("add", {"a": 1, "b": 2}, GOOD_ADD)) is Outcome.PASSED


def test_a_result_without_content_fails_tool_09(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-09): content is required even when empty."""
    verdict = judge(
        log_of(call("add", {}, {"structuredContent": {"result": 3}})), spec, "tool_results_match_the_schema"
    )
    assert verdict.outcome is Outcome.FAILED
    assert "'content' is a required property" in verdict.reason


def test_array_structured_content_fails_tool_09_only_in_2025(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-09): 2025 structuredContent is an object; 2026 allows any JSON value."""
    result = {"content": [text("[1]")], "structuredContent": [1]}
    assert outcome(spec, "tool_results_match_the_schema", call("t", {}, result)) is Outcome.PASSED
    old = log_of(legacy_session(capabilities={"tools": {}}), legacy_call("tools/call", {"name": "t"}, result))
    assert judge(old, spec, "tool_results_match_the_schema").outcome is Outcome.FAILED


def test_tool_09_is_not_verified_without_calls(spec: SpecSet) -> None:
    assert outcome(spec, "tool_results_match_the_schema", tools_list([ADD])) is Outcome.NOT_VERIFIED


def test_structured_content_matching_the_output_schema_passes_tool_10(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-10)."""
    log = (tools_list([ADD]), call("add", {"a": 1, "b": 2}, GOOD_ADD))
    assert outcome(spec, "structured_content_matches_the_output_schema", *log) is Outcome.PASSED


def test_structured_content_breaking_or_missing_fails_tool_10(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-10)."""
    wrong = call("add", {"a": 1, "b": 2}, {"content": [text("3")], "structuredContent": {"result": "3"}})
    verdict = judge(log_of(tools_list([ADD]), wrong), spec, "structured_content_matches_the_output_schema")
    assert verdict.outcome is Outcome.FAILED
    assert "result.structuredContent.result" in verdict.reason
    missing = call("add", {"a": 1, "b": 2}, {"content": [text("3")]})
    verdict = judge(log_of(tools_list([ADD]), missing), spec, "structured_content_matches_the_output_schema")
    assert verdict.outcome is Outcome.FAILED
    assert "no structuredContent" in verdict.reason


def test_error_results_are_exempt_from_tool_10(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-10, A16): isError results need not match the outputSchema."""
    error = call("add", {"a": 1}, {"content": [text("b is missing")], "isError": True})
    assert (
        outcome(spec, "structured_content_matches_the_output_schema", tools_list([ADD]), error) is Outcome.NOT_VERIFIED
    )


def test_tool_10_is_not_verified_without_the_tool_list(spec: SpecSet) -> None:
    verdict = judge(
        log_of(call("add", {"a": 1, "b": 2}, GOOD_ADD)), spec, "structured_content_matches_the_output_schema"
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "no tools/list" in verdict.reason


def test_a_text_mirror_of_structured_content_passes_tool_11(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-11, A30): the text block parses to the same JSON value."""
    mirrored = call("add", {}, {"content": [text('{ "result":3 }')], "structuredContent": {"result": 3}})
    assert outcome(spec, "structured_content_is_mirrored_as_text", mirrored) is Outcome.PASSED


def test_structured_content_without_a_text_mirror_fails_tool_11(spec: SpecSet) -> None:
    result = {"content": [text("three")], "structuredContent": {"result": 3}}
    assert outcome(spec, "structured_content_is_mirrored_as_text", call("add", {}, result)) is Outcome.FAILED


def test_tool_11_is_not_verified_without_structured_content(spec: SpecSet) -> None:
    plain = call("echo", {"text": "x"}, {"content": [text("x")]})
    assert outcome(spec, "structured_content_is_mirrored_as_text", plain) is Outcome.NOT_VERIFIED


# -- TOOL-12 / TOOL-13 / TOOL-14 / TOOL-15 -------------------------------------------------------
def test_an_unknown_tool_answered_with_minus_32602_passes_tool_12(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-12): the name is absent from a complete tools/list."""
    log = (tools_list([ADD]), failing("tools/call", {"name": "no_such_tool_x"}, -32602, status=400))
    assert outcome(spec, "unknown_tools_get_invalid_params", *log) is Outcome.PASSED


def test_an_unknown_tool_answered_otherwise_fails_tool_12(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-12): not -32601, and not a result."""
    wrong_code = failing("tools/call", {"name": "no_such_tool_x"}, -32601, status=404)
    assert outcome(spec, "unknown_tools_get_invalid_params", tools_list([ADD]), wrong_code) is Outcome.FAILED
    probe = {"name": "unknown-tool"}
    as_result = call("no_such_tool_x", {}, {"content": [text("unknown tool")], "isError": True}, probe=probe)
    verdict = judge(log_of(as_result), spec, "unknown_tools_get_invalid_params")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.source.value == "active"


def test_an_unlisted_tool_that_works_is_hidden_not_unknown_for_tool_12(spec: SpecSet) -> None:
    """Tool-defined: only the probe's bogus name makes a normal result a TOOL-12 failure."""
    log = (tools_list([ADD]), call("admin_reset", {}, {"content": [text("done")]}))
    assert outcome(spec, "unknown_tools_get_invalid_params", *log) is Outcome.NOT_VERIFIED


def test_a_list_changed_notification_makes_an_older_listing_stale_for_tool_12(spec: SpecSet) -> None:
    """Tool-defined: after notifications/tools/list_changed a missing name may simply be new."""
    listed = tools_list([ADD])
    changed = stdio(Side.SERVER, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    log = (listed, changed, failing("tools/call", {"name": "fresh"}, -32601, status=404))
    assert outcome(spec, "unknown_tools_get_invalid_params", *log) is Outcome.NOT_VERIFIED


def test_tool_12_is_not_verified_when_the_listing_is_incomplete(spec: SpecSet) -> None:
    """Tool-defined: a name missing from page one of a longer list may be on page two."""
    log = (tools_list([ADD], next_cursor="p2"), failing("tools/call", {"name": "other"}, -32602))
    assert outcome(spec, "unknown_tools_get_invalid_params", *log) is Outcome.NOT_VERIFIED


def test_a_malformed_call_answered_with_an_error_passes_tool_13(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-13)."""
    probe = {"name": "malformed-tool-call", "invalid": True}
    answer = failing("tools/call", {"name": "add", "arguments": "a=1"}, -32602, status=400, probe=probe)
    assert outcome(spec, "malformed_tool_calls_get_an_error", answer) is Outcome.PASSED


def test_a_malformed_call_served_with_a_result_fails_tool_13(spec: SpecSet) -> None:
    verdict = judge(log_of(call(None, {}, {"content": []})), spec, "malformed_tool_calls_get_an_error")
    assert verdict.outcome is Outcome.FAILED
    assert "name is not a string" in verdict.reason


def test_tool_13_is_not_verified_for_well_formed_calls(spec: SpecSet) -> None:
    assert (
        outcome(spec, "malformed_tool_calls_get_an_error", call("add", {"a": 1, "b": 2}, GOOD_ADD))
        is Outcome.NOT_VERIFIED
    )


def test_invalid_arguments_refused_or_flagged_pass_tool_14(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-14, A4): -32602 and isError: true are both acceptable."""
    refused = failing("tools/call", {"name": "add", "arguments": {"a": "one"}}, -32602)
    assert outcome(spec, "invalid_tool_arguments_never_succeed", tools_list([ADD]), refused) is Outcome.PASSED
    flagged = call("add", {"a": "one"}, {"content": [text("a must be an integer")], "isError": True})
    assert outcome(spec, "invalid_tool_arguments_never_succeed", tools_list([ADD]), flagged) is Outcome.PASSED


def test_invalid_arguments_served_as_success_fail_tool_14(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-14): a plain success for arguments that break the inputSchema."""
    served = call("add", {"a": 1}, GOOD_ADD)
    verdict = judge(log_of(tools_list([ADD]), served), spec, "invalid_tool_arguments_never_succeed")
    assert verdict.outcome is Outcome.FAILED
    assert "'b' is a required property" in verdict.reason


def test_a_string_spelling_the_integer_served_fails_tool_14_at_should(spec: SpecSet) -> None:
    """Issue 28 (the official Python SDK's lax mode): {"a": "1"} for an integer, served as 1, is validating loosely:
    TOOL-14 fails at SHOULD with that reason; a string that spells no JSON number ("one", "01") changes the meaning
    and fails in full, as does any other break of the schema."""
    check = "invalid_tool_arguments_never_succeed"
    coerced = judge(log_of(tools_list([ADD]), call("add", {"a": "1", "b": 2}, GOOD_ADD)), spec, check)
    assert coerced.outcome is Outcome.FAILED and coerced.severity is Severity.SHOULD, coerced
    assert 'a: "1" read as 1' in (coerced.graded or "") and "loosely" in (coerced.graded or "")
    for arguments in ({"a": "one", "b": 2}, {"a": "01", "b": 2}, {"a": "1"}, {"a": "1.5", "b": 2}):
        verdict = judge(log_of(tools_list([ADD]), call("add", arguments, GOOD_ADD)), spec, check)
        assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.MUST, (arguments, verdict)
    both = judge(
        log_of(tools_list([ADD]), call("add", {"a": "1", "b": 2}, GOOD_ADD), call("add", {"a": 1}, GOOD_ADD, ident=3)),
        spec,
        check,
    )
    assert both.severity is Severity.MUST  # one failure in full keeps the verdict at MUST


def test_tool_14_is_not_verified_when_arguments_are_valid(spec: SpecSet) -> None:
    log = (tools_list([ADD]), call("add", {"a": 1, "b": 2}, GOOD_ADD))
    assert outcome(spec, "invalid_tool_arguments_never_succeed", *log) is Outcome.NOT_VERIFIED


def test_tool_14_accepts_integral_floats_as_json_schema_does(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-14; JSON Schema 2020-12 counts 1.0 as an integer): serving it is no violation."""
    log = (tools_list([ADD]), call("add", {"a": 1.0, "b": 2}, GOOD_ADD))
    assert outcome(spec, "invalid_tool_arguments_never_succeed", *log) is Outcome.NOT_VERIFIED


def test_tool_failures_as_is_error_results_pass_tool_15(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-15)."""
    flagged = call("fetch", {}, {"content": [text("upstream API returned 503")], "isError": True})
    assert outcome(spec, "tool_failures_are_results_with_is_error", flagged) is Outcome.PASSED


def test_tool_failures_as_application_error_codes_fail_tool_15(spec: SpecSet) -> None:
    answer = failing("tools/call", {"name": "fetch"}, 1001, "upstream API returned 503")
    assert outcome(spec, "tool_failures_are_results_with_is_error", answer) is Outcome.FAILED


def test_internal_errors_from_tools_are_only_noted_by_tool_15(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-15): a bare -32603 is not verified: nothing tells a tool failure from a server fault."""
    verdict = judge(
        log_of(failing("tools/call", {"name": "fetch"}, -32603)), spec, "tool_failures_are_results_with_is_error"
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "-32603" in verdict.reason


TRACE = (
    'Traceback (most recent call last):\n  File "/srv/drafts.py", line 266, in list_drafts\n'
    "    needle = query.encode(\"ascii\")\nUnicodeEncodeError: 'ascii' codec can't encode character '\\x8b'"
)
QUERY = {"name": "search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}}


def test_a_traceback_answering_valid_arguments_fails_tool_15_and_is_named_leaked(spec: SpecSet) -> None:
    """Issue 28 (TOOL-15, SHOULD): arguments the inputSchema allows crash the tool into -32603 whose message is its
    Python traceback: a failure inside the tool on the JSON-RPC error channel, and the traceback leaks."""
    crash = failing("tools/call", {"name": "search", "arguments": {"query": "k\u008b"}}, -32603, TRACE)
    verdict = judge(log_of(tools_list([QUERY]), crash), spec, "tool_failures_are_results_with_is_error")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD, verdict
    assert "stack trace of 4 lines in error.message" in verdict.reason and "UnicodeEncodeError" in verdict.reason
    assert "leaks" in verdict.reason and "isError: true" in verdict.reason
    invalid = failing("tools/call", {"name": "search", "arguments": {"query": 7}}, -32603, TRACE)
    outside = judge(log_of(tools_list([QUERY]), invalid), spec, "tool_failures_are_results_with_is_error")
    assert outside.outcome is Outcome.NOT_VERIFIED  # arguments outside the schema: TOOL-14's, not a tool failure


def test_an_internal_error_to_an_explored_input_inside_the_schema_fails_tool_15(spec: SpecSet) -> None:
    """Issue 28 (TOOL-15): --explore sent arguments the inputSchema allows; -32603 then is the tool failing on them."""
    tag = {"name": "explore", "family": "explore", "explored": {"tool": "search", "kind": "inside", "origin": "drawn"}}
    crash = failing("tools/call", {"name": "search", "arguments": {"query": "é"}}, -32603, "Internal error", probe=tag)
    verdict = judge(log_of(tools_list([QUERY]), crash), spec, "tool_failures_are_results_with_is_error")
    assert verdict.outcome is Outcome.FAILED and "an internal error" in verdict.reason, verdict


def test_an_explored_input_the_tool_fails_on_as_an_is_error_result_passes_tool_15(spec: SpecSet) -> None:
    """Issue 28 (TOOL-15): the same explored input, the tool's failure reported as a result with isError: true, is
    what the specification asks for; the arguments outside the schema refused with -32603 are TOOL-14's, not here."""
    tag = {"name": "explore", "family": "explore", "explored": {"tool": "search", "kind": "inside", "origin": "drawn"}}
    flagged = call("search", {"query": "é"}, {"content": [text("cannot search for 'é'")], "isError": True}, probe=tag)
    assert outcome(spec, "tool_failures_are_results_with_is_error", tools_list([QUERY]), flagged) is Outcome.PASSED
    broken = {"name": "explore", "family": "explore", "explored": {"tool": "search", "kind": "type", "origin": "edge"}}
    refused = failing(
        "tools/call", {"name": "search", "arguments": {"query": 7}}, -32603, "Internal error", probe=broken
    )
    verdict = judge(log_of(tools_list([QUERY]), refused), spec, "tool_failures_are_results_with_is_error")
    assert verdict.outcome is Outcome.NOT_VERIFIED, verdict


# -- TOOL-16 / TOOL-17 / TOOL-18 -----------------------------------------------------------------
def _annotated(properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": "lookup", "inputSchema": {"type": "object", "properties": properties}}


def test_valid_x_mcp_header_annotations_pass_tool_16(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-16)."""
    tool = _annotated(
        {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "options": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Item-Id"}}},
        }
    )
    assert outcome(spec, "x_mcp_header_annotations_are_valid", tools_list([tool])) is Outcome.PASSED


def test_invalid_x_mcp_header_annotations_fail_tool_16(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-16): token syntax, types, uniqueness, and a pure properties path."""
    cases = [
        ({"a": {"type": "string", "x-mcp-header": "Has Space"}}, "not an RFC 9110 token"),
        ({"a": {"type": "string", "x-mcp-header": ""}}, "not a non-empty string"),
        ({"a": {"type": "number", "x-mcp-header": "A"}}, "not integer/string/boolean"),
        ({"a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dup"}}, "repeats"),
        ({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}, "not reachable"),
    ]
    for properties, needle in cases:
        verdict = judge(log_of(tools_list([_annotated(properties)])), spec, "x_mcp_header_annotations_are_valid")
        assert verdict.outcome is Outcome.FAILED, properties
        assert needle in verdict.reason


def test_tool_16_and_the_http_rules_read_x_mcp_header_marks_alike(spec: SpecSet) -> None:
    """Tool-defined (TOOL-16, HTTP-18, HTTP-23): one reading of the marks serves both; a nullable
    string may be marked (a null value sends no header), marks under unknown keywords are not marks."""
    properties = {
        "region": {"type": ["string", "null"], "x-mcp-header": "Region"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "note": {"type": "string", "x-vendor": {"x-mcp-header": "Ignored"}},
    }
    tool = _annotated(properties)
    marks, problems = header_marks(tool)
    assert [(mark.name, mark.path) for mark in marks] == [("Region", ("region",)), ("Limit", ("limit",))]
    assert problems == []
    assert outcome(spec, "x_mcp_header_annotations_are_valid", tools_list([tool])) is Outcome.PASSED


def test_marks_read_once_per_schema_value_still_follow_each_listing() -> None:
    """A tool listed again (new objects, the same value) gets the same marks; one whose mark, order or type changed
    gets its own reading, and what a caller does to the lists it was given changes no later answer."""
    first = header_marks(_annotated({"a": {"type": "string", "x-mcp-header": "A"}}))
    first[0].clear()
    again = header_marks(_annotated({"a": {"type": "string", "x-mcp-header": "A"}}))
    assert [(mark.name, mark.path) for mark in again[0]] == [("A", ("a",))] and again[1] == []
    renamed = header_marks(_annotated({"a": {"type": "string", "x-mcp-header": "B"}}))
    assert [mark.name for mark in renamed[0]] == ["B"]
    both = {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "integer", "x-mcp-header": "B"}}
    swapped = {"b": both["b"], "a": both["a"]}
    assert [mark.name for mark in header_marks(_annotated(both))[0]] == ["A", "B"]
    assert [mark.name for mark in header_marks(_annotated(swapped))[0]] == ["B", "A"]
    assert header_marks(_annotated({"a": {"type": "object", "x-mcp-header": "A"}}))[1]


def test_tool_16_is_not_verified_without_annotations_and_not_applicable_in_2025(spec: SpecSet) -> None:
    assert outcome(spec, "x_mcp_header_annotations_are_valid", tools_list([ADD])) is Outcome.NOT_VERIFIED
    old = log_of(legacy_session(capabilities={"tools": {}}), legacy_call("tools/list", None, {"tools": [ADD]}))
    assert judge(old, spec, "x_mcp_header_annotations_are_valid").outcome is Outcome.NOT_APPLICABLE


def _mirrored_call(value: int) -> Any:
    body = request_body("tools/call", 4, {"name": "lookup", "arguments": {"id": value}})
    headers = {**modern_headers(body), "mcp-param-item-id": str(value)}
    result = {"resultType": "complete", "content": [text("ok")]}
    return http(body, result_body(result, 4), headers=headers)


def test_safe_mirrored_integers_pass_and_unsafe_ones_fail_tool_17(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-17, A31): integers mirrored into Mcp-Param-* stay within ±(2^53-1)."""
    listing = tools_list([_annotated({"id": {"type": "integer", "x-mcp-header": "Item-Id"}})])
    assert outcome(spec, "mirrored_integers_are_safe_integers", listing, _mirrored_call(7)) is Outcome.PASSED
    verdict = judge(log_of(listing, _mirrored_call(2**60)), spec, "mirrored_integers_are_safe_integers")
    assert verdict.outcome is Outcome.FAILED
    assert "unsafe" in verdict.reason


def test_tool_17_is_not_verified_without_the_tool_list(spec: SpecSet) -> None:
    assert outcome(spec, "mirrored_integers_are_safe_integers", _mirrored_call(7)) is Outcome.NOT_VERIFIED


def test_headers_on_ordinary_parameters_pass_tool_18(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-18)."""
    tool = _annotated({"region": {"type": "string", "x-mcp-header": "Region"}})
    assert outcome(spec, "x_mcp_header_is_not_on_sensitive_parameters", tools_list([tool])) is Outcome.PASSED


def test_headers_on_sensitive_parameters_fail_tool_18(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-18): heuristic on names and descriptions."""
    for properties in (
        {"apiKey": {"type": "string", "x-mcp-header": "Key"}},
        {"pw": {"type": "string", "x-mcp-header": "Pw", "description": "The user's password"}},
        {"q": {"type": "string", "x-mcp-header": "Auth-Token"}},
    ):
        tool = _annotated(properties)
        assert outcome(spec, "x_mcp_header_is_not_on_sensitive_parameters", tools_list([tool])) is Outcome.FAILED


def test_tool_18_is_not_verified_without_annotations(spec: SpecSet) -> None:
    tool = _annotated({"max_tokens": {"type": "integer"}})
    assert outcome(spec, "x_mcp_header_is_not_on_sensitive_parameters", tools_list([tool])) is Outcome.NOT_VERIFIED


# -- TOOL-19 / TOOL-20 ---------------------------------------------------------------------------
def test_well_formed_content_blocks_pass_tool_19(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-19)."""
    blocks = [
        text("hi"),
        {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png", "annotations": {"priority": 0.5}},
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "a", "mimeType": "text/plain"}},
        {"type": "text", "text": "x", "annotations": {"audience": ["user"], "lastModified": "2025-01-12T15:00:58Z"}},
    ]
    assert outcome(spec, "tool_content_blocks_are_well_formed", call("t", {}, {"content": blocks})) is Outcome.PASSED


def test_malformed_content_blocks_fail_tool_19(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-19): base64 is decoded; annotations are range-checked; types are known."""
    for block, needle in (
        ({"type": "image", "data": "not base64!", "mimeType": "image/png"}, "not valid base64"),
        ({"type": "text", "text": "x", "annotations": {"priority": 2}}, "priority"),
        ({"type": "text", "text": "x", "annotations": {"audience": ["robot"]}}, "audience"),
        ({"type": "text", "text": "x", "annotations": {"lastModified": "yesterday"}}, "ISO 8601"),
        ({"type": "video", "data": "AA=="}, "unknown content block type"),
        ({"type": "resource_link", "uri": "file:///a"}, "'name' is a required property"),
    ):
        verdict = judge(log_of(call("t", {}, {"content": [block]})), spec, "tool_content_blocks_are_well_formed")
        assert verdict.outcome is Outcome.FAILED, block
        assert needle in verdict.reason


def test_tool_19_is_not_verified_without_call_results(spec: SpecSet) -> None:
    assert outcome(spec, "tool_content_blocks_are_well_formed", tools_list([])) is Outcome.NOT_VERIFIED


def test_embedded_resources_pass_tool_20_only_with_the_resources_capability(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-20)."""
    block = {"type": "resource", "resource": {"uri": "file:///a", "text": "a"}}
    result = call("t", {}, {"content": [block]})
    assert outcome(spec, "embedded_resources_come_with_the_resources_capability", caps(), result) is Outcome.PASSED
    without = caps({"tools": {}})
    assert outcome(spec, "embedded_resources_come_with_the_resources_capability", without, result) is Outcome.FAILED
    assert outcome(spec, "embedded_resources_come_with_the_resources_capability", result) is Outcome.NOT_VERIFIED


def test_answers_to_other_methods_are_not_tool_results(spec: SpecSet) -> None:
    """Tool-defined: a prompts/get result never counts as a tools/call result."""
    other = answered("prompts/get", {"name": "p"}, {"messages": []})
    assert outcome(spec, "tool_content_blocks_are_well_formed", other) is Outcome.NOT_VERIFIED
