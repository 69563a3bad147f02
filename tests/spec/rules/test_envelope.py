"""Request envelope and _meta (META-): each rule passes good traffic, fails bad traffic, says when it cannot tell."""

from __future__ import annotations

import json

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import (
    error_body,
    http,
    judge,
    legacy_call,
    legacy_session,
    log_of,
    modern_call,
    modern_headers,
    result_body,
)
from tests.spec.rules._envelope_builders import PROBE, TOOLS, modern_body, refused, served

CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def legacy_traffic() -> list:
    return [*legacy_session(), legacy_call("tools/list", None, {"tools": []}, ident=5)]


# -- META-01 ---------------------------------------------------------------------------------------
def test_requests_with_params_meta_pass_meta_01(spec: SpecSet) -> None:
    """Spec-mandated (META-01)."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "requests_carry_params_with_meta")
    assert verdict.outcome is Outcome.PASSED


def test_a_2026_tools_list_without_params_fails_meta_01(spec: SpecSet) -> None:
    """Spec-mandated (META-01): valid in 2025, invalid in 2026."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    verdict = judge(log_of(refused(body, -32602)), spec, "requests_carry_params_with_meta")
    assert verdict.outcome is Outcome.FAILED
    assert "no params" in verdict.reason


def test_meta_01_is_not_applicable_to_2025_sessions(spec: SpecSet) -> None:
    """Spec-mandated (META-01): 2025 requests may omit params."""
    verdict = judge(log_of(legacy_traffic()), spec, "requests_carry_params_with_meta")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


def test_a_malformed_probe_is_not_held_against_the_client(spec: SpecSet) -> None:
    """Tool-defined: requests the active suite malformed on purpose never count against the client."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    log = log_of(modern_call("tools/list", {}, TOOLS, ident=2), refused(body, -32602, probe=PROBE))
    assert judge(log, spec, "requests_carry_params_with_meta").outcome is Outcome.PASSED


# -- META-02 ---------------------------------------------------------------------------------------
def test_declared_client_capabilities_pass_meta_02(spec: SpecSet) -> None:
    """Spec-mandated (META-02)."""
    body = modern_body("tools/list", meta_extra={CAPS: {"elicitation": {"form": {}}, "roots": {}}})
    assert judge(log_of(served(body, TOOLS)), spec, "requests_declare_client_capabilities").outcome is Outcome.PASSED


def test_requests_without_client_capabilities_fail_meta_02(spec: SpecSet) -> None:
    """Spec-mandated (META-02)."""
    missing = refused(modern_body("tools/list", drop=(CAPS,)), -32602)
    verdict = judge(log_of(missing), spec, "requests_declare_client_capabilities")
    assert verdict.outcome is Outcome.FAILED
    assert CAPS in verdict.reason


def test_client_capabilities_of_the_wrong_shape_fail_meta_02(spec: SpecSet) -> None:
    """Spec-mandated (META-02): the value is a ClientCapabilities object."""
    body = modern_body("tools/list", meta_extra={CAPS: {"sampling": "yes"}})
    verdict = judge(log_of(served(body, TOOLS)), spec, "requests_declare_client_capabilities")
    assert verdict.outcome is Outcome.FAILED
    assert "sampling" in verdict.reason


def test_meta_02_is_not_verified_when_no_request_has_meta(spec: SpecSet) -> None:
    """Tool-defined: a request without _meta is META-01's finding, not META-02's."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    verdict = judge(log_of(refused(body, -32602)), spec, "requests_declare_client_capabilities")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- META-03 ---------------------------------------------------------------------------------------
def test_client_info_with_name_and_version_passes_meta_03(spec: SpecSet) -> None:
    """Spec-mandated (META-03)."""
    assert judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "requests_identify_the_client").outcome is (
        Outcome.PASSED
    )


def test_missing_or_incomplete_client_info_fails_meta_03(spec: SpecSet) -> None:
    """Spec-mandated (META-03)."""
    missing = served(modern_body("tools/list", drop=(INFO,)), TOOLS)
    verdict = judge(log_of(missing), spec, "requests_identify_the_client")
    assert verdict.outcome is Outcome.FAILED
    assert INFO in verdict.reason
    partial = served(modern_body("tools/list", meta_extra={INFO: {"name": "x"}}), TOOLS)
    verdict = judge(log_of(partial), spec, "requests_identify_the_client")
    assert verdict.outcome is Outcome.FAILED
    assert "version" in verdict.reason


def test_meta_03_is_not_applicable_to_2025_sessions(spec: SpecSet) -> None:
    """Spec-mandated (META-03): clientInfo travels in initialize there."""
    assert judge(log_of(legacy_traffic()), spec, "requests_identify_the_client").outcome is Outcome.NOT_APPLICABLE


# -- META-04 ---------------------------------------------------------------------------------------
def test_a_defined_log_level_passes_meta_04(spec: SpecSet) -> None:
    """Spec-mandated (META-04)."""
    body = modern_body("tools/list", meta_extra={LEVEL: "warning"})
    assert judge(log_of(served(body, TOOLS)), spec, "requested_log_levels_are_defined_levels").outcome is (
        Outcome.PASSED
    )


def test_an_undefined_log_level_fails_meta_04(spec: SpecSet) -> None:
    """Spec-mandated (META-04)."""
    body = modern_body("tools/list", meta_extra={LEVEL: "verbose"})
    verdict = judge(log_of(refused(body, -32602)), spec, "requested_log_levels_are_defined_levels")
    assert verdict.outcome is Outcome.FAILED
    assert '"verbose"' in verdict.reason
    assert "emergency" in verdict.reason


def test_meta_04_is_not_verified_without_a_log_level(spec: SpecSet) -> None:
    """Tool-defined: the field is optional."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "requested_log_levels_are_defined_levels")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- META-05 ---------------------------------------------------------------------------------------
def test_well_formed_meta_keys_pass_meta_05(spec: SpecSet) -> None:
    """Spec-mandated (META-05): prefixed, unprefixed and empty-name keys are all allowed."""
    body = modern_body("tools/list", meta_extra={"progressToken": 1, "com.example-co.api/trace_id.v2": "x"})
    result = {**TOOLS, "tools": [{"name": "t", "inputSchema": {"type": "object"}, "_meta": {"org.example/": 1}}]}
    verdict = judge(log_of(served(body, result)), spec, "meta_keys_follow_the_key_grammar")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 3


def test_malformed_meta_keys_fail_meta_05_including_nested_tool_meta(spec: SpecSet) -> None:
    """Spec-mandated (META-05): nested _meta objects such as Tool._meta follow the same grammar."""
    result = {**TOOLS, "tools": [{"name": "t", "inputSchema": {"type": "object"}, "_meta": {"bad key": 1}}]}
    verdict = judge(log_of(served(modern_body("tools/list"), result)), spec, "meta_keys_follow_the_key_grammar")
    assert verdict.outcome is Outcome.FAILED
    assert "result.tools[0]._meta" in verdict.reason
    assert "'bad key'" in verdict.reason
    body = modern_body("tools/list", meta_extra={"1com.example/x": True, "com.example/-x": True})
    verdict = judge(log_of(served(body, TOOLS)), spec, "meta_keys_follow_the_key_grammar")
    assert verdict.outcome is Outcome.FAILED
    assert "prefix label '1com'" in verdict.reason


def test_a_meta_key_spelt_with_escapes_is_still_judged_meta_05(spec: SpecSet) -> None:
    """Spec-mandated (META-05): ``"\\u005fmeta"`` is the member ``_meta`` once read, so its keys are judged. A
    message whose bytes never name ``_meta`` is not walked for _meta objects: this one must not pass for such."""
    body = modern_body("tools/list")
    tool = {"name": "t", "inputSchema": {"type": "object"}, "_meta": {"bad key": 1}}
    result = {"resultType": "complete", **TOOLS, "tools": [tool]}
    text = json.dumps(result_body(result, body["id"])).replace('"_meta"', '"\\u005fmeta"')
    assert "_meta" not in text
    exchange = http(body, text.encode(), headers=modern_headers(body))
    verdict = judge(log_of(exchange), spec, "meta_keys_follow_the_key_grammar")
    assert verdict.outcome is Outcome.FAILED
    assert "result.tools[0]._meta" in verdict.reason


def test_meta_inside_tool_arguments_is_application_data(spec: SpecSet) -> None:
    """Tool-defined: a `_meta` member inside tool arguments is not an MCP _meta object."""
    body = modern_body("tools/call", {"name": "t", "arguments": {"_meta": {"not a key!": 1}}})
    log = log_of(served(body, {"content": []}))
    assert judge(log, spec, "meta_keys_follow_the_key_grammar").outcome is Outcome.PASSED


def test_meta_inside_schemas_and_structured_content_is_not_protocol_meta(spec: SpecSet) -> None:
    """Tool-defined (issue 21, as RSRC-06 on the filesystem server): a tool's inputSchema/outputSchema may describe
    a `_meta` property (its value a JSON Schema, keys such as `$ref`), and structuredContent is the tool's own
    JSON; neither is walked as if it held MCP `_meta` objects. The tool's own `_meta` still is."""
    schema = {"type": "object", "properties": {"_meta": {"$ref": "#/$defs/Meta", "io.modelcontextprotocol/x": {}}}}
    tool = {"name": "t", "inputSchema": schema, "outputSchema": schema, "_meta": {"com.example/ok": 1}}
    listed = served(modern_body("tools/list"), {**TOOLS, "tools": [tool]})
    called = served(
        modern_body("tools/call", {"name": "t", "arguments": {}}),
        {"content": [], "structuredContent": {"_meta": {"$ref": "x", "not a key!": 2}}},
    )
    for check in ("meta_keys_follow_the_key_grammar", "reserved_meta_prefixes_hold_only_defined_keys"):
        verdict = judge(log_of(listed, called), spec, check)
        assert verdict.outcome is Outcome.PASSED, (check, verdict.reason)


def test_meta_05_is_not_verified_without_any_meta(spec: SpecSet) -> None:
    """Tool-defined: 2025 traffic without _meta gives nothing to judge."""
    assert judge(log_of(legacy_traffic()), spec, "meta_keys_follow_the_key_grammar").outcome is Outcome.NOT_VERIFIED


# -- META-06 ---------------------------------------------------------------------------------------
def test_defined_reserved_keys_pass_meta_06(spec: SpecSet) -> None:
    """Spec-mandated (META-06): com.example.mcp/ is not reserved (mcp is its third label)."""
    body = modern_body("tools/list", meta_extra={"com.example.mcp/anything": 1})
    verdict = judge(log_of(served(body, TOOLS)), spec, "reserved_meta_prefixes_hold_only_defined_keys")
    assert verdict.outcome is Outcome.PASSED


def test_undefined_keys_under_reserved_prefixes_fail_meta_06(spec: SpecSet) -> None:
    """Spec-mandated (META-06): io.modelcontextprotocol/ and dev.mcp/ belong to MCP."""
    body = modern_body("tools/list", meta_extra={"io.modelcontextprotocol/madeUp": 1})
    verdict = judge(log_of(served(body, TOOLS)), spec, "reserved_meta_prefixes_hold_only_defined_keys")
    assert verdict.outcome is Outcome.FAILED
    assert "io.modelcontextprotocol/madeUp" in verdict.reason
    body = modern_body("tools/list", meta_extra={"dev.mcp/x": 1})
    verdict = judge(log_of(served(body, TOOLS)), spec, "reserved_meta_prefixes_hold_only_defined_keys")
    assert verdict.outcome is Outcome.FAILED


def test_meta_06_is_not_verified_without_reserved_keys(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(legacy_traffic()), spec, "reserved_meta_prefixes_hold_only_defined_keys")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- META-07 ---------------------------------------------------------------------------------------
def test_reverse_dns_prefixes_pass_meta_07(spec: SpecSet) -> None:
    """Spec-mandated (META-07)."""
    body = modern_body("tools/list", meta_extra={"com.example/x": 1, "de.example.team/y": 2})
    assert judge(log_of(served(body, TOOLS)), spec, "meta_prefixes_are_reverse_dns").outcome is Outcome.PASSED


def test_forward_dns_and_bare_prefixes_fail_meta_07(spec: SpecSet) -> None:
    """Spec-mandated (META-07): example.com/ is written the wrong way round."""
    body = modern_body("tools/list", meta_extra={"example.com/x": 1})
    verdict = judge(log_of(served(body, TOOLS)), spec, "meta_prefixes_are_reverse_dns")
    assert verdict.outcome is Outcome.FAILED
    assert "forward-DNS" in verdict.reason
    body = modern_body("tools/list", meta_extra={"acme/x": 1})
    verdict = judge(log_of(served(body, TOOLS)), spec, "meta_prefixes_are_reverse_dns")
    assert verdict.outcome is Outcome.FAILED
    assert "top-level domain" in verdict.reason


def test_meta_07_is_not_verified_without_prefixed_keys(spec: SpecSet) -> None:
    """Tool-defined."""
    assert judge(log_of(legacy_traffic()), spec, "meta_prefixes_are_reverse_dns").outcome is Outcome.NOT_VERIFIED


# -- META-08 ---------------------------------------------------------------------------------------
def test_w3c_trace_context_passes_meta_08(spec: SpecSet) -> None:
    """Spec-mandated (META-08)."""
    trace = {
        "traceparent": TRACEPARENT,
        "tracestate": "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE",
        "baggage": "userId=alice,serverNode=DF%2028;prop",
    }
    body = modern_body("tools/list", meta_extra=trace)
    verdict = judge(log_of(served(body, TOOLS)), spec, "trace_context_meta_follows_w3c_syntax")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 3


def test_malformed_trace_context_fails_meta_08(spec: SpecSet) -> None:
    """Spec-mandated (META-08): all-zero ids, upper-case hex and broken list members are invalid."""
    cases = {
        "traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "tracestate": "Rojo=1",
        "baggage": "no equals sign",
    }
    for key, value in cases.items():
        body = modern_body("tools/list", meta_extra={key: value})
        verdict = judge(log_of(served(body, TOOLS)), spec, "trace_context_meta_follows_w3c_syntax")
        assert verdict.outcome is Outcome.FAILED, key
        assert key in verdict.reason
    upper = modern_body("tools/list", meta_extra={"traceparent": TRACEPARENT.upper()})
    verdict = judge(log_of(served(upper, TOOLS)), spec, "trace_context_meta_follows_w3c_syntax")
    assert verdict.outcome is Outcome.FAILED


def test_meta_08_is_not_verified_without_trace_keys_and_not_applicable_to_2025(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "trace_context_meta_follows_w3c_syntax")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    verdict = judge(log_of(legacy_traffic()), spec, "trace_context_meta_follows_w3c_syntax")
    assert verdict.outcome is Outcome.NOT_APPLICABLE


# -- META-09 ---------------------------------------------------------------------------------------
def test_a_missing_capability_error_naming_an_undeclared_capability_passes_meta_09(spec: SpecSet) -> None:
    """Spec-mandated (META-09)."""
    body = modern_body("tools/call", {"name": "ask", "arguments": {}})
    answer = refused(body, -32021, data={"requiredCapabilities": {"elicitation": {}}})
    assert judge(log_of(answer), spec, "missing_capability_errors_name_what_is_missing").outcome is Outcome.PASSED


def test_missing_capability_errors_that_name_nothing_new_fail_meta_09(spec: SpecSet) -> None:
    """Spec-mandated (META-09): the error names what is missing, with HTTP 400."""
    body = modern_body("tools/call", {"name": "ask", "arguments": {}}, meta_extra={CAPS: {"elicitation": {}}})
    declared = refused(body, -32021, data={"requiredCapabilities": {"elicitation": {}}})
    verdict = judge(log_of(declared), spec, "missing_capability_errors_name_what_is_missing")
    assert verdict.outcome is Outcome.FAILED
    assert "already declared" in verdict.reason
    empty = refused(modern_body("tools/call", {"name": "ask"}), -32021, data={"requiredCapabilities": {}})
    verdict = judge(log_of(empty), spec, "missing_capability_errors_name_what_is_missing")
    assert verdict.outcome is Outcome.FAILED
    wrong_status = refused(
        modern_body("tools/call", {"name": "ask"}), -32021, status=200, data={"requiredCapabilities": {"sampling": {}}}
    )
    verdict = judge(log_of(wrong_status), spec, "missing_capability_errors_name_what_is_missing")
    assert verdict.outcome is Outcome.FAILED
    assert "HTTP 200" in verdict.reason


def test_meta_09_is_not_verified_without_missing_capability_errors(spec: SpecSet) -> None:
    """Tool-defined."""
    verdict = judge(
        log_of(modern_call("tools/list", {}, TOOLS)), spec, "missing_capability_errors_name_what_is_missing"
    )
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- META-10 ---------------------------------------------------------------------------------------
def test_identical_answers_for_different_client_info_pass_meta_10(spec: SpecSet) -> None:
    """Spec-mandated (META-10)."""
    first = served(modern_body("tools/list", ident=1), TOOLS)
    second = served(modern_body("tools/list", ident=2, meta_extra={INFO: {"name": "other", "version": "9"}}), TOOLS)
    assert judge(log_of(first, second), spec, "answers_do_not_depend_on_client_info").outcome is Outcome.PASSED


def test_answers_that_change_with_client_info_fail_meta_10(spec: SpecSet) -> None:
    """Spec-mandated (META-10): clientInfo is self-reported and must not steer the server."""
    first = served(modern_body("tools/list", ident=1), TOOLS)
    tools = {**TOOLS, "tools": [{"name": "secret", "inputSchema": {"type": "object"}}]}
    second = served(modern_body("tools/list", ident=2, meta_extra={INFO: {"name": "other", "version": "9"}}), tools)
    verdict = judge(log_of(first, second), spec, "answers_do_not_depend_on_client_info")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/list" in verdict.reason


def test_refusing_a_request_without_client_info_that_is_served_with_it_fails_meta_10(spec: SpecSet) -> None:
    """Spec-mandated (META-10, META-03): clientInfo is optional and self-reported, so its absence must not decide
    whether a request is served."""
    first = served(modern_body("tools/list", ident=1), TOOLS)
    anonymous = refused(modern_body("tools/list", ident=2, drop=(INFO,)), -32602, probe=PROBE)
    verdict = judge(log_of(first, anonymous), spec, "answers_do_not_depend_on_client_info")
    assert verdict.outcome is Outcome.FAILED
    assert "refused (error -32602) for a request without clientInfo, though it was served for clientInfo" in (
        verdict.reason
    )
    alone = served(modern_body("tools/list", ident=3, drop=(INFO,)), TOOLS)
    assert judge(log_of(first, alone), spec, "answers_do_not_depend_on_client_info").outcome is Outcome.PASSED


def test_meta_10_is_not_verified_when_every_variant_was_refused(spec: SpecSet) -> None:
    """Tool-defined: two refusals show nothing about what clientInfo changes."""
    one = refused(modern_body("tools/list", ident=1), -32603, status=500)
    two = refused(modern_body("tools/list", ident=2, drop=(INFO,)), -32603, status=500)
    assert judge(log_of(one, two), spec, "answers_do_not_depend_on_client_info").outcome is Outcome.NOT_VERIFIED


def test_meta_10_is_not_verified_without_a_repeated_request(spec: SpecSet) -> None:
    """Tool-defined: it needs the same request under two identities."""
    log = log_of(
        served(modern_body("tools/list"), TOOLS),
        http(
            modern_body("prompts/list", ident=2),
            error_body(-32601, ident=2),
            status=404,
            headers=modern_headers(modern_body("prompts/list", ident=2)),
        ),
    )
    assert judge(log, spec, "answers_do_not_depend_on_client_info").outcome is Outcome.NOT_VERIFIED
