"""Streamable HTTP (HTTP-): every rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import evaluate
from mcp_assay.spec.rules.shared.header_mirroring import decode_sentinel, encode_sentinel, header_marks, needs_encoding
from mcp_assay.vocabulary.verdicts import Outcome, Severity
from mcp_assay.wire.model import EndReason, HttpExchange
from tests.factories import (
    LEGACY,
    MODERN,
    error_body,
    http,
    judge,
    legacy_call,
    legacy_headers,
    legacy_session,
    log_of,
    modern_headers,
    request_body,
    result_body,
    rules_of,
    stdio,
    tick,
)
from tests.spec.rules._http_builders import (
    BROKEN_TOOL,
    PLAIN_TOOL,
    QUERY_TOOL,
    call,
    comment,
    event,
    legacy_get,
    legacy_request,
    legacy_stream,
    marked_tools,
    notification,
    post,
    progress,
    result,
    sse,
    unanswered,
)

TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
INVALID = {"name": "probe", "invalid": True}


def outcome(spec: SpecSet, check: str, *items: object, **settings: object) -> Outcome:
    return judge(log_of(*items), spec, check, **settings).outcome  # type: ignore[arg-type]


# -- value encoding helpers ------------------------------------------------------------------------
def test_the_base64_sentinel_round_trips_utf8_text() -> None:
    """Spec-mandated (HTTP-15): =?base64?<Base64 of UTF-8>?= with lowercase markers."""
    assert encode_sentinel("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert decode_sentinel("=?base64?IHBhZGRlZCA=?=") == " padded "
    assert decode_sentinel("=?base64?not base64!?=") is None
    assert needs_encoding(" padded ") and needs_encoding("line1\nline2") and needs_encoding("=?base64?literal?=")
    assert not needs_encoding("us-west1")


def test_header_marks_find_annotations_only_along_properties_chains() -> None:
    """Spec-mandated (TOOL-16 via HTTP-23): marks under items, anyOf or $ref make the tool invalid."""
    marks, problems = header_marks(QUERY_TOOL)
    assert [mark.name for mark in marks] == ["Region", "Limit", "Dry"] and not problems
    _, problems = header_marks(BROKEN_TOOL)
    assert problems and "not reachable through properties alone" in problems[0]
    number = {"inputSchema": {"properties": {"x": {"type": "number", "x-mcp-header": "X"}}}}
    assert "not integer/string/boolean" in header_marks(number)[1][0]
    clash = {"inputSchema": {"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                            "b": {"type": "string", "x-mcp-header": "a"}}}}  # fmt: skip
    assert "repeats" in header_marks(clash)[1][0]


# -- HTTP-09: version header vs body ---------------------------------------------------------------
def test_a_version_header_mismatch_answered_400_minus_32020_passes(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-09)."""
    probe = post("tools/list", version=LEGACY, headers={"mcp-protocol-version": MODERN}, answer=-32020)
    assert outcome(spec, "version_header_mismatch_is_rejected", post("tools/list"), probe) is Outcome.PASSED


def test_a_version_header_mismatch_that_is_served_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-09): the body says 2025-11-25, the header 2026-07-28, and the server serves it."""
    probe = post("tools/list", version=LEGACY, headers={"mcp-protocol-version": MODERN})
    verdict = judge(log_of(post("tools/list"), probe), spec, "version_header_mismatch_is_rejected")
    assert verdict.outcome is Outcome.FAILED
    assert "yet the server served it" in verdict.reason


def test_a_2026_body_under_a_2025_header_routed_to_the_legacy_path_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-09): a body with the 2026 envelope is served under 2026 rules whatever the header."""
    body = error_body(-32600, "Bad Request: Missing session ID", None)
    probe = post("tools/list", headers={"mcp-protocol-version": LEGACY}, answer=body, status=400)
    verdict = judge(log_of(probe), spec, "version_header_mismatch_is_rejected")
    assert verdict.outcome is Outcome.FAILED
    assert "-32600" in verdict.reason


def test_the_version_mismatch_rule_is_not_verified_without_a_mismatch(spec: SpecSet) -> None:
    """Tool-defined: agreeing headers prove nothing about mismatch handling."""
    assert outcome(spec, "version_header_mismatch_is_rejected", post("tools/list")) is Outcome.NOT_VERIFIED
    legacy = [*legacy_session(), legacy_call("tools/list", None, {"tools": []})]
    assert outcome(spec, "version_header_mismatch_is_rejected", legacy) is Outcome.NOT_APPLICABLE


# -- HTTP-12 / HTTP-13: routing headers ---------------------------------------------------------------
def test_a_missing_mcp_method_answered_with_minus_32020_passes_and_a_served_one_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-12)."""
    good = post("tools/list", headers={"mcp-method": None}, answer=-32020)
    assert outcome(spec, "missing_routing_headers_are_rejected", good) is Outcome.PASSED
    bad = call({"sql": "x"}, tool="add", headers={"mcp-name": None})
    verdict = judge(log_of(bad), spec, "missing_routing_headers_are_rejected")
    assert verdict.outcome is Outcome.FAILED
    assert "no Mcp-Name" in verdict.reason


def test_a_missing_header_may_be_answered_minus_32602_when_meta_is_missing_too(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-12, ⚠A6/A7): validation order is unspecified, so either failure may be reported."""
    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}}
    exchange = post("tools/list", body=body, ident=9, headers={"mcp-method": None}, answer=-32602)
    verdict = judge(log_of(exchange), spec, "missing_routing_headers_are_rejected")
    assert verdict.outcome is Outcome.PASSED
    assert "A7" in verdict.reason


def test_the_routing_header_rules_are_not_verified_when_every_header_is_present(spec: SpecSet) -> None:
    """Tool-defined."""
    assert outcome(spec, "missing_routing_headers_are_rejected", post("tools/list")) is Outcome.NOT_VERIFIED
    assert outcome(spec, "mismatched_routing_headers_are_rejected", post("tools/list")) is Outcome.NOT_VERIFIED


def test_a_case_only_method_mismatch_must_be_rejected(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-13): header values are case-sensitive, so TOOLS/LIST is not tools/list."""
    good = post("tools/list", headers={"mcp-method": "TOOLS/LIST"}, answer=-32020)
    assert outcome(spec, "mismatched_routing_headers_are_rejected", good) is Outcome.PASSED
    bad = post("tools/list", headers={"mcp-method": "TOOLS/LIST"})
    verdict = judge(log_of(bad), spec, "mismatched_routing_headers_are_rejected")
    assert verdict.outcome is Outcome.FAILED
    assert "'TOOLS/LIST'" in verdict.reason


def test_a_resource_uri_differing_only_in_case_is_a_mismatch(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-13, ⚠A27): Mcp-Name is compared as an exact string, no URI normalisation."""
    served = post("resources/read", {"uri": "file:///Notes.txt"}, headers={"mcp-name": "file:///notes.txt"})
    verdict = judge(log_of(served), spec, "mismatched_routing_headers_are_rejected")
    assert verdict.outcome is Outcome.FAILED


# -- HTTP-14: header-name case ------------------------------------------------------------------------
def test_lowercase_header_names_are_accepted(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-14): the factories send lowercase names, as httpx and the SDK client do."""
    assert outcome(spec, "header_names_are_matched_case_insensitively", post("tools/list")) is Outcome.PASSED


def test_rejecting_uppercase_header_names_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-14)."""
    headers = {"MCP-METHOD": "tools/list", "MCP-PROTOCOL-VERSION": MODERN}
    verdict = judge(log_of(post("tools/list", headers=headers, answer=-32020)), spec,
                    "header_names_are_matched_case_insensitively")  # fmt: skip
    assert verdict.outcome is Outcome.FAILED


def test_header_case_rule_is_not_verified_for_canonically_spelled_headers(spec: SpecSet) -> None:
    """Tool-defined: canonical spellings tell nothing about case-insensitive matching."""
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    assert outcome(spec, "header_names_are_matched_case_insensitively", post("tools/list", headers=headers)) is (
        Outcome.NOT_VERIFIED
    )


# -- HTTP-16: Base64 sentinel --------------------------------------------------------------------------
def test_a_correct_sentinel_is_accepted_and_a_wrong_one_rejected(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-16)."""
    right = call({"a": 1}, tool="add", headers={"mcp-name": encode_sentinel("add")})
    wrong = call({"a": 1}, tool="add", headers={"mcp-name": encode_sentinel("ad")}, answer=-32020)
    assert outcome(spec, "sentinel_values_are_decoded_before_comparison", right, wrong) is Outcome.PASSED


def test_rejecting_a_correct_sentinel_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-16): the server must decode before comparing."""
    exchange = call({"a": 1}, tool="add", headers={"mcp-name": encode_sentinel("add")}, answer=-32020)
    verdict = judge(log_of(PLAIN_TOOLS(), exchange), spec, "sentinel_values_are_decoded_before_comparison")
    assert verdict.outcome is Outcome.FAILED
    assert "correct Base64 sentinel" in verdict.reason


def test_serving_a_sentinel_that_decodes_to_another_name_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-16)."""
    exchange = call({"a": 1}, tool="add", headers={"mcp-name": encode_sentinel("sub")})
    verdict = judge(log_of(exchange), spec, "sentinel_values_are_decoded_before_comparison")
    assert verdict.outcome is Outcome.FAILED
    assert "decodes to 'sub'" in verdict.reason


def test_sentinel_rule_is_not_verified_without_sentinels(spec: SpecSet) -> None:
    """Tool-defined."""
    assert outcome(spec, "sentinel_values_are_decoded_before_comparison", post("tools/list")) is Outcome.NOT_VERIFIED


def PLAIN_TOOLS() -> object:  # noqa: N802 - reads like the constant it stands for
    return marked_tools(PLAIN_TOOL)


# -- HTTP-17: invalid characters -----------------------------------------------------------------------
def test_a_control_character_in_mcp_name_may_get_a_bare_400(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-17): a 400 from the HTTP stack counts."""
    exchange = call({"a": 1}, tool="add", headers={"mcp-name": "add\x01"}, answer=b"", status=400)
    assert outcome(spec, "header_values_with_invalid_characters_are_rejected", exchange) is Outcome.PASSED


def test_serving_a_header_with_raw_non_ascii_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-17)."""
    exchange = call({"a": 1}, tool="add", headers={"mcp-name": "addé"})
    verdict = judge(log_of(exchange), spec, "header_values_with_invalid_characters_are_rejected")
    assert verdict.outcome is Outcome.FAILED


def test_invalid_characters_without_a_captured_answer_are_not_verified(spec: SpecSet) -> None:
    """Tool-defined: the connection may have been dropped by the HTTP stack."""
    exchange = unanswered("tools/list", {"mcp-method": "tools/list\x7f"})
    assert outcome(spec, "header_values_with_invalid_characters_are_rejected", exchange) is Outcome.NOT_VERIFIED


# -- HTTP-19 / HTTP-20 / HTTP-21: Mcp-Param headers ------------------------------------------------------
def test_a_missing_parameter_header_must_be_rejected(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-19)."""
    good = call({"sql": "s", "region": "eu"}, answer=-32020)
    assert outcome(spec, "missing_or_mismatched_parameter_headers_are_rejected", marked_tools(), good) is Outcome.PASSED
    bad = call({"sql": "s", "region": "eu"}, headers={"mcp-param-region": "us"})
    verdict = judge(log_of(marked_tools(), bad), spec, "missing_or_mismatched_parameter_headers_are_rejected")
    assert verdict.outcome is Outcome.FAILED
    assert "Mcp-Param-Region 'us' differs" in verdict.reason


def test_parameter_headers_of_an_unseen_tool_are_not_verified(spec: SpecSet) -> None:
    """Tool-defined: without tools/list the marks are unknown."""
    exchange = call({"sql": "s", "region": "eu"}, headers={"mcp-param-region": "eu"})
    assert outcome(spec, "missing_or_mismatched_parameter_headers_are_rejected", exchange) is Outcome.NOT_VERIFIED


def test_an_absent_marked_argument_needs_no_header(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-20)."""
    good = call({"sql": "s"})
    assert outcome(spec, "absent_arguments_need_no_parameter_header", marked_tools(), good) is Outcome.PASSED
    bad = call({"sql": "s", "region": None}, answer=-32020)
    verdict = judge(log_of(marked_tools(), bad), spec, "absent_arguments_need_no_parameter_header")
    assert verdict.outcome is Outcome.FAILED
    assert "absent or null" in verdict.reason
    unknown = call({"sql": "s"}, answer=-32020)
    assert outcome(spec, "absent_arguments_need_no_parameter_header", unknown) is Outcome.NOT_VERIFIED


def test_integer_headers_compare_numerically(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-21): 42.0 and 42 are equal."""
    good = call({"sql": "s", "limit": 42}, headers={"mcp-param-limit": "42.0"})
    assert outcome(spec, "integer_parameter_headers_compare_numerically", marked_tools(), good) is Outcome.PASSED
    bad = call({"sql": "s", "limit": 42}, headers={"mcp-param-limit": "42.0"}, answer=-32020)
    verdict = judge(log_of(marked_tools(), bad), spec, "integer_parameter_headers_compare_numerically")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD
    plain = call({"sql": "s", "limit": 42}, headers={"mcp-param-limit": "42"})
    assert outcome(spec, "integer_parameter_headers_compare_numerically", marked_tools(), plain) is Outcome.NOT_VERIFIED


# -- HTTP-26: no version header ---------------------------------------------------------------------------
def _legacy_initialize(version: str, answered: str) -> object:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    answer = result_body(
        {"protocolVersion": answered, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}, 0
    )
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    return http(
        body, answer, headers=headers, response_headers={"content-type": "application/json", "mcp-session-id": "old"}
    )


def test_a_missing_version_header_answered_minus_32020_passes(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-26)."""
    exchange = post("tools/list", headers={"mcp-protocol-version": None}, answer=-32020)
    assert outcome(spec, "requests_without_a_version_header_are_rejected", exchange) is Outcome.PASSED


def test_a_missing_version_header_may_be_served_as_2025_03_26_by_a_server_that_speaks_it(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-26, MAY branch): the SDK routes such a request to its legacy transport."""
    legacy_answer = error_body(-32600, "Bad Request: Missing session ID", None)
    exchange = post("tools/list", headers={"mcp-protocol-version": None}, answer=legacy_answer, status=400)
    served = _legacy_initialize("2025-03-26", "2025-03-26")
    assert outcome(spec, "requests_without_a_version_header_are_rejected", served, exchange) is Outcome.PASSED
    assert outcome(spec, "requests_without_a_version_header_are_rejected", exchange) is Outcome.NOT_VERIFIED
    refused = _legacy_initialize("2025-03-26", "2025-11-25")
    verdict = judge(log_of(refused, exchange), spec, "requests_without_a_version_header_are_rejected")
    assert verdict.outcome is Outcome.FAILED


# -- HTTP-01 / HTTP-05 / HTTP-06 / HTTP-07 --------------------------------------------------------------
def test_post_answered_405_fails_http_01(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-01)."""
    assert outcome(spec, "the_mcp_endpoint_accepts_post", post("tools/list")) is Outcome.PASSED
    verdict = judge(log_of(post("tools/list", answer=b"", status=405)), spec, "the_mcp_endpoint_accepts_post")
    assert verdict.outcome is Outcome.FAILED
    from mcp_assay.vocabulary.verdicts import Side

    only_stdio = log_of(stdio(Side.CLIENT, request_body("tools/list")))
    assert judge(only_stdio, spec, "the_mcp_endpoint_accepts_post").outcome is Outcome.NOT_APPLICABLE


def _notification_post(status: int, response: object = None, **kwargs: object) -> object:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    return http(body, response, status=status, headers=modern_headers(body), **kwargs)  # type: ignore[arg-type]


def test_an_accepted_notification_gets_202_and_no_body(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-05)."""
    assert outcome(spec, "accepted_notifications_get_202_with_no_body", _notification_post(202)) is Outcome.PASSED
    bad = _notification_post(200, {"ok": True})
    verdict = judge(log_of(bad), spec, "accepted_notifications_get_202_with_no_body")
    assert verdict.outcome is Outcome.FAILED
    assert "HTTP 200" in verdict.reason


def test_a_2025_client_response_post_is_a_202_subject_too(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-05, 2025): responses to server requests are acknowledged like notifications."""
    answer = http(result_body({}, "srv-1"), status=202, headers=legacy_headers())
    assert outcome(spec, "accepted_notifications_get_202_with_no_body", legacy_session(), answer) is Outcome.PASSED


def test_notification_rules_are_not_verified_without_notification_posts(spec: SpecSet) -> None:
    """Tool-defined."""
    assert outcome(spec, "accepted_notifications_get_202_with_no_body", post("tools/list")) is Outcome.NOT_VERIFIED
    assert outcome(spec, "refused_notifications_get_an_error_status_and_no_id", post("tools/list")) is (
        Outcome.NOT_VERIFIED
    )


def test_a_refused_notification_gets_an_error_without_id(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-06, ⚠A8): refusing is allowed; the error body must not carry an id."""
    good = _notification_post(400, error_body(-32600, "not accepted", None))
    assert outcome(spec, "refused_notifications_get_an_error_status_and_no_id", good) is Outcome.PASSED
    bad = _notification_post(400, error_body(-32600, "not accepted", 1))
    verdict = judge(log_of(bad), spec, "refused_notifications_get_an_error_status_and_no_id")
    assert verdict.outcome is Outcome.FAILED
    assert "carries an id" in verdict.reason


def test_a_refusal_without_id_is_no_answer_to_the_notification(spec: SpecSet) -> None:
    """Spec-mandated (RPC-11 with HTTP-06): only a response carrying an id answers a notification POST."""
    without_id = error_body(-32600, "not accepted", None)
    for refusal in (without_id, {**without_id, "id": None}):
        verdict = judge(log_of(_notification_post(400, refusal)), spec, "notifications_are_not_answered")
        assert verdict.outcome is Outcome.PASSED, verdict.reason
    answered = _notification_post(400, error_body(-32600, "not accepted", 1))
    verdict = judge(log_of(answered), spec, "notifications_are_not_answered")
    assert verdict.outcome is Outcome.FAILED and "notifications/cancelled was answered" in verdict.reason
    assert judge(log_of(post("tools/list")), spec, "notifications_are_not_answered").outcome is Outcome.NOT_VERIFIED


def test_answers_to_requests_are_json_or_sse_errors_included(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-07, error bodies inferred)."""
    stream = sse("tools/list", {}, [result(1)], ident=1)
    assert outcome(spec, "request_answers_are_json_or_event_streams", post("tools/list"), stream) is Outcome.PASSED
    html = post("tools/list", answer=b"<h1>oops</h1>", status=500, response_headers={"content-type": "text/html"})
    verdict = judge(log_of(html), spec, "request_answers_are_json_or_event_streams")
    assert verdict.outcome is Outcome.FAILED
    assert "text/html" in verdict.reason


def test_an_error_answer_with_a_text_body_fails_only_the_inferred_clause_of_http_07(spec: SpecSet) -> None:
    """Issue 28 (the catalogue marks HTTP-07's error-body clause inferred): a 404 for an ended session with a text
    body and no Content-Type fails HTTP-07 at SHOULD, saying why; a success answered so fails it in full."""
    check = "request_answers_are_json_or_event_streams"
    ended = post("tools/list", answer=b"Session not found", status=404, response_headers={"x": "y"})
    verdict = judge(log_of(ended), spec, check)
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD, verdict
    assert "graded SHOULD" in verdict.reason and "inferred" in verdict.reason and "no Content-Type" in verdict.reason
    success = post("tools/list", answer=b"tools: none", status=200, response_headers={"content-type": "text/plain"})
    assert judge(log_of(ended, success), spec, check).severity is Severity.MUST


def test_origin_refusals_without_json_are_left_to_http_35(spec: SpecSet) -> None:
    """Tool-defined: a plain-text 403 (the SDK's Origin refusal) is not an HTTP-07 subject."""
    refused = post("tools/list", answer=b"Invalid Origin header", status=403, response_headers={"x": "y"})
    assert outcome(spec, "request_answers_are_json_or_event_streams", refused) is Outcome.NOT_VERIFIED


def test_the_foreign_host_probe_refused_in_plain_text_is_not_an_http_07_subject(spec: SpecSet) -> None:
    """Tool-defined: a request naming another host is refused before the MCP endpoint (421 from the SDK)."""
    probe = {"name": "foreign-host", "invalid": True}
    refused = post("tools/list", answer=b"Invalid Host header", status=421, response_headers={"x": "y"}, probe=probe)
    assert outcome(spec, "request_answers_are_json_or_event_streams", refused) is Outcome.NOT_VERIFIED
    plain = post("tools/list", answer=b"Invalid Host header", status=421, response_headers={"x": "y"})
    assert outcome(spec, "request_answers_are_json_or_event_streams", plain) is Outcome.FAILED


# -- HTTP-25 / HTTP-37 -----------------------------------------------------------------------------------
def test_unknown_methods_get_404_with_minus_32601(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-25)."""
    good = post("mcp/definitely-not-a-method", answer=-32601)
    assert outcome(spec, "unknown_methods_get_404_with_a_jsonrpc_error", good) is Outcome.PASSED
    ok_status = post("mcp/definitely-not-a-method", answer=-32601, status=200)
    verdict = judge(log_of(ok_status), spec, "unknown_methods_get_404_with_a_jsonrpc_error")
    assert verdict.outcome is Outcome.FAILED and "HTTP 200" in verdict.reason
    bare = post("mcp/definitely-not-a-method", answer=b"", status=404)
    verdict = judge(log_of(bare), spec, "unknown_methods_get_404_with_a_jsonrpc_error")
    assert verdict.outcome is Outcome.FAILED and "no JSON-RPC error body" in verdict.reason
    streamed = sse("mcp/definitely-not-a-method", {}, [error_body(-32601, "nope", 3)], ident=3)
    assert outcome(spec, "unknown_methods_get_404_with_a_jsonrpc_error", streamed) is Outcome.FAILED


def test_unknown_method_status_rule_is_not_verified_when_every_method_is_found(spec: SpecSet) -> None:
    """Tool-defined."""
    assert outcome(spec, "unknown_methods_get_404_with_a_jsonrpc_error", post("tools/list")) is Outcome.NOT_VERIFIED


def test_rejections_echo_the_request_id_in_a_json_body(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-37, inferred: severity lowered to SHOULD)."""
    good = post("tools/list", headers={"mcp-method": None}, answer=-32020)
    assert outcome(spec, "rejections_carry_a_jsonrpc_error_with_the_request_id", good) is Outcome.PASSED
    null_id = post(
        "tools/list", ident=5, headers={"mcp-method": None}, answer=error_body(-32020, "x", None), status=400
    )
    verdict = judge(log_of(null_id), spec, "rejections_carry_a_jsonrpc_error_with_the_request_id")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity is Severity.SHOULD
    assert "the request id was 5" in verdict.reason
    bare = post("tools/list", headers={"mcp-method": None}, answer=b"", status=400)
    assert outcome(spec, "rejections_carry_a_jsonrpc_error_with_the_request_id", bare) is Outcome.FAILED
    plain = post("tools/list", headers={"mcp-method": None}, answer=error_body(-32020, "x", 1), ident=1, status=400,
                 response_headers={"content-type": "text/plain"})  # fmt: skip
    assert outcome(spec, "rejections_carry_a_jsonrpc_error_with_the_request_id", plain) is Outcome.FAILED


def test_rejection_body_rule_is_not_verified_without_rejections(spec: SpecSet) -> None:
    """Tool-defined."""
    assert outcome(spec, "rejections_carry_a_jsonrpc_error_with_the_request_id", post("tools/list")) is (
        Outcome.NOT_VERIFIED
    )


# -- HTTP-32 / HTTP-33 / HTTP-35 ---------------------------------------------------------------------------
def _modern_get(status: int, method: str = "GET", **kwargs: object) -> object:
    headers = {"accept": "text/event-stream", "mcp-protocol-version": MODERN, **kwargs.pop("headers", {})}  # type: ignore[dict-item]
    return http(None, status=status, method=method, headers=headers, **kwargs)  # type: ignore[arg-type]


def test_get_and_delete_on_a_2026_endpoint_get_405(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-32, SHOULD)."""
    assert outcome(spec, "get_and_delete_get_405", _modern_get(405), _modern_get(405, "DELETE")) is Outcome.PASSED
    opened = _modern_get(200, events=[])
    verdict = judge(log_of(opened), spec, "get_and_delete_get_405")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    assert "opened an event stream" in verdict.reason
    assert outcome(spec, "get_and_delete_get_405", post("tools/list")) is Outcome.NOT_VERIFIED


def test_session_ids_are_neither_minted_nor_echoed(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-33, SHOULD)."""
    ignored = post("tools/list", headers={"mcp-session-id": "abc"})
    assert outcome(spec, "session_ids_are_ignored_and_never_issued", post("tools/list"), ignored) is Outcome.PASSED
    minted = post("tools/list", response_headers={"content-type": "application/json", "mcp-session-id": "new"})
    verdict = judge(log_of(minted), spec, "session_ids_are_ignored_and_never_issued")
    assert verdict.outcome is Outcome.FAILED and "issued" in verdict.reason
    refused = post("tools/list", headers={"mcp-session-id": "abc"}, answer=b"", status=404)
    assert outcome(spec, "session_ids_are_ignored_and_never_issued", refused) is Outcome.FAILED
    legacy = [*legacy_session(), legacy_call("tools/list", None, {"tools": []})]
    assert outcome(spec, "session_ids_are_ignored_and_never_issued", legacy) is Outcome.NOT_APPLICABLE


def test_a_probe_with_a_foreign_origin_must_get_403(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-35)."""
    evil = {"origin": "https://evil.example"}
    refused = post("tools/list", headers=evil, answer=b"Invalid Origin header", status=403,
                   probe={"name": "foreign-origin", "foreign_origin": True})  # fmt: skip
    assert outcome(spec, "foreign_origins_get_403", refused) is Outcome.PASSED
    served = post("tools/list", headers=evil, probe={"name": "foreign-origin", "foreign_origin": True})
    verdict = judge(log_of(served), spec, "foreign_origins_get_403")
    assert verdict.outcome is Outcome.FAILED and verdict.source.value == "active"


def test_a_loopback_server_serving_a_remote_origin_fails_once_it_served_plain_requests(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-35): the DNS-rebinding case is judged passively."""
    remote = post("tools/list", headers={"origin": "https://evil.example"})
    assert outcome(spec, "foreign_origins_get_403", remote) is Outcome.NOT_VERIFIED
    assert outcome(spec, "foreign_origins_get_403", post("tools/list"), remote) is Outcome.FAILED
    local = post("tools/list", headers={"origin": "http://localhost:3000"})
    assert outcome(spec, "foreign_origins_get_403", post("tools/list"), local) is Outcome.NOT_VERIFIED


# -- SSE streams (2026) ---------------------------------------------------------------------------------------
def test_request_streams_carry_only_their_own_progress(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-27)."""
    good = sse("tools/call", {"name": "add", "_meta": {"progressToken": "p1"}}, [progress("p1"), result(7)], ident=7)
    assert outcome(spec, "request_streams_carry_only_notifications_about_their_request", good) is Outcome.PASSED
    stray = sse("tools/call", {"name": "add", "_meta": {"progressToken": "p1"}},
                [progress("other"), notification("notifications/tools/list_changed"), result(8)], ident=8)  # fmt: skip
    verdict = judge(log_of(stray), spec, "request_streams_carry_only_notifications_about_their_request")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.violations == 2


def test_listen_streams_are_not_request_streams(spec: SpecSet) -> None:
    """Tool-defined: subscriptions/listen streams are the SUB rules' business."""
    listen = sse("subscriptions/listen", {"notifications": {"toolsListChanged": True}},
                 [notification("notifications/tools/list_changed")], ident=2, ending=EndReason.OPEN)  # fmt: skip
    assert outcome(spec, "request_streams_carry_only_notifications_about_their_request", listen) is (
        Outcome.NOT_VERIFIED
    )


def test_server_requests_on_a_2026_stream_fail_and_are_allowed_in_2025(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-28)."""
    ping = {"jsonrpc": "2.0", "id": "s1", "method": "ping"}
    clean = sse("tools/call", {"name": "add"}, [result(1)], ident=1)
    assert outcome(spec, "sse_streams_carry_no_server_requests", clean) is Outcome.PASSED
    bad = sse("tools/call", {"name": "add"}, [ping, result(2)], ident=2)
    assert outcome(spec, "sse_streams_carry_no_server_requests", bad) is Outcome.FAILED
    legacy = legacy_stream(legacy_request("tools/call", 3, {"name": "add"}), [ping, result(3)])
    assert outcome(spec, "sse_streams_carry_no_server_requests", legacy_session(), legacy) is Outcome.NOT_APPLICABLE


def test_the_final_response_ends_the_stream(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-29, SHOULD)."""
    good = sse("tools/list", {}, [result(1)], ident=1)
    assert outcome(spec, "final_responses_end_their_streams", good) is Outcome.PASSED
    trailing = sse("tools/list", {}, [result(2), progress("late")], ident=2)
    assert outcome(spec, "final_responses_end_their_streams", trailing) is Outcome.FAILED
    lingering = sse("tools/list", {}, [result(3)], ident=3, ending=EndReason.OPEN, ending_at=1_700_000_900.0)
    verdict = judge(log_of(lingering), spec, "final_responses_end_their_streams")
    assert verdict.outcome is Outcome.FAILED and "stayed open" in verdict.reason
    assert outcome(spec, "final_responses_end_their_streams", post("tools/list")) is Outcome.NOT_VERIFIED


def test_sse_responses_disable_proxy_buffering(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-30, SHOULD)."""
    assert outcome(spec, "sse_responses_disable_proxy_buffering", sse("tools/list", {}, [result(1)], ident=1)) is (
        Outcome.PASSED
    )
    bare = sse("tools/list", {}, [result(2)], ident=2, response_headers={"content-type": "text/event-stream"})
    verdict = judge(log_of(bare), spec, "sse_responses_disable_proxy_buffering")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    assert outcome(spec, "sse_responses_disable_proxy_buffering", post("tools/list")) is Outcome.NOT_VERIFIED


def test_the_proxy_buffering_value_is_compared_case_sensitively(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-30; header names are case-insensitive, values case-sensitive): `X-ACCEL-BUFFERING: no`
    passes, `X-Accel-Buffering: No` does not."""
    upper_name = {"content-type": "text/event-stream", "X-ACCEL-BUFFERING": "no"}
    named = sse("tools/list", {}, [result(3)], ident=3, response_headers=upper_name)
    assert outcome(spec, "sse_responses_disable_proxy_buffering", named) is Outcome.PASSED
    capital = {"content-type": "text/event-stream", "x-accel-buffering": "No"}
    valued = sse("tools/list", {}, [result(4)], ident=4, response_headers=capital)
    verdict = judge(log_of(valued), spec, "sse_responses_disable_proxy_buffering")
    assert verdict.outcome is Outcome.FAILED and "case-sensitive" in verdict.reason


def test_event_ids_on_2026_streams_are_an_info_note(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-34, ⚠A18: INFO)."""
    plain = sse("tools/list", {}, [result(1)], ident=1)
    assert outcome(spec, "streams_are_not_resumable", plain) is Outcome.PASSED
    numbered = sse("tools/list", {}, [event(result(2), id="7")], ident=2)
    verdict = judge(log_of(numbered), spec, "streams_are_not_resumable")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.INFO
    assert outcome(spec, "streams_are_not_resumable", post("tools/list")) is Outcome.NOT_VERIFIED


def test_sse_comments_are_never_flagged(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-31, MAY): keep-alive comments are legal anywhere on a stream; no rule fails them."""
    stream = sse("tools/call", {"name": "add", "_meta": {"progressToken": "p"}},
                 [comment(), progress("p"), comment(""), result(4)], ident=4)  # fmt: skip
    listen = sse("subscriptions/listen", {"notifications": {}}, [comment(), comment()], ident=5, ending=EndReason.OPEN)
    mine = rules_of("http")
    verdicts = evaluate(log_of(stream, listen), spec, checks=mine)
    assert [v.check for v in verdicts if v.outcome is Outcome.FAILED] == []


# -- client: version, method, name headers (2026) -----------------------------------------------------------
def test_clients_send_a_version_header_equal_to_the_body(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-08)."""
    assert outcome(spec, "client_version_header_matches_the_body", post("tools/list")) is Outcome.PASSED
    missing = post("tools/list", headers={"mcp-protocol-version": None})
    verdict = judge(log_of(missing), spec, "client_version_header_matches_the_body")
    assert verdict.outcome is Outcome.FAILED and "no MCP-Protocol-Version" in verdict.reason
    skewed = post("tools/list", version=LEGACY, headers={"mcp-protocol-version": MODERN})
    # the body names 2025-11-25, so the log needs other 2026 traffic for the 2026 gate to open
    assert outcome(spec, "client_version_header_matches_the_body", post("tools/list"), skewed) is Outcome.FAILED


def test_deliberately_wrong_headers_are_not_held_against_the_client(spec: SpecSet) -> None:
    """Tool-defined: probes marked invalid judge the server only."""
    probe = post("tools/list", headers={"mcp-method": None}, probe=INVALID, answer=-32020)
    for check in ("client_version_header_matches_the_body", "client_method_header_matches_the_body"):
        assert outcome(spec, check, probe) is Outcome.NOT_VERIFIED
    assert outcome(spec, "missing_routing_headers_are_rejected", probe) is Outcome.PASSED


def test_clients_send_mcp_method_equal_to_the_body_case_included(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-10)."""
    assert outcome(spec, "client_method_header_matches_the_body", post("tools/list")) is Outcome.PASSED
    shouted = post("tools/list", headers={"mcp-method": "Tools/List"})
    assert outcome(spec, "client_method_header_matches_the_body", shouted) is Outcome.FAILED
    missing = post("tools/list", headers={"mcp-method": None})
    assert outcome(spec, "client_method_header_matches_the_body", missing) is Outcome.FAILED


def test_notification_posts_without_mcp_method_are_never_failed(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-10, ⚠A8): header rules for notification POSTs are undefined."""
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    note = http(body, status=202, headers=modern_headers(None))
    assert outcome(spec, "client_method_header_matches_the_body", note) is Outcome.NOT_VERIFIED
    assert outcome(spec, "client_version_header_matches_the_body", note) is Outcome.NOT_VERIFIED


def test_clients_mirror_the_name_plainly_or_base64_encoded(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-11)."""
    plain = call({"a": 1}, tool="add")
    encoded = call({"a": 1}, tool="add", headers={"mcp-name": encode_sentinel("add")})
    read = post("resources/read", {"uri": "file:///a.txt"})
    assert outcome(spec, "client_name_header_matches_the_body", plain, encoded, read) is Outcome.PASSED
    wrong = call({"a": 1}, tool="add", headers={"mcp-name": "sub"})
    assert outcome(spec, "client_name_header_matches_the_body", wrong) is Outcome.FAILED
    missing = post("prompts/get", {"name": "summarize"}, headers={"mcp-name": None})
    verdict = judge(log_of(missing), spec, "client_name_header_matches_the_body")
    assert verdict.outcome is Outcome.FAILED and "no Mcp-Name" in verdict.reason
    assert outcome(spec, "client_name_header_matches_the_body", post("tools/list")) is Outcome.NOT_VERIFIED


def test_clients_encode_unsafe_values(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-15)."""
    name = "wetter-ü"
    tools = marked_tools({"name": name, "inputSchema": {"type": "object"}}, QUERY_TOOL)
    good = call({}, tool=name, headers={"mcp-name": encode_sentinel(name)})
    padded = call({"sql": "s", "region": " eu "}, headers={"mcp-param-region": encode_sentinel(" eu ")})
    assert outcome(spec, "client_encodes_unsafe_header_values", tools, good, padded) is Outcome.PASSED
    raw = call({}, tool=name, headers={"mcp-name": name})
    verdict = judge(log_of(tools, raw), spec, "client_encodes_unsafe_header_values")
    assert verdict.outcome is Outcome.FAILED and "=?base64?" in verdict.reason
    upper = call({"sql": "s", "region": "eu"}, headers={"mcp-param-region": "=?BASE64?ZXU=?="})
    verdict = judge(log_of(tools, upper), spec, "client_encodes_unsafe_header_values")
    assert verdict.outcome is Outcome.FAILED and "wrong case" in verdict.reason
    assert outcome(spec, "client_encodes_unsafe_header_values", post("tools/list")) is Outcome.NOT_VERIFIED


def test_clients_mirror_marked_arguments(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-18): strings as-is, integers in decimal, booleans true/false; null or absent: no header."""
    good = call({"sql": "s", "region": "eu", "limit": -7, "dry": False},
                headers={"mcp-param-region": "eu", "mcp-param-limit": "-7", "mcp-param-dry": "false"})  # fmt: skip
    assert outcome(spec, "client_mirrors_marked_arguments", marked_tools(), good) is Outcome.PASSED
    cases = [
        (call({"sql": "s", "region": "eu"}), "missing"),
        (call({"sql": "s", "limit": 42}, headers={"mcp-param-limit": "42.0"}), "does not mirror"),
        (call({"sql": "s", "dry": True}, headers={"mcp-param-dry": "True"}), "does not mirror"),
        (call({"sql": "s", "region": None}, headers={"mcp-param-region": "null"}), "although"),
    ]
    for exchange, words in cases:
        verdict = judge(log_of(marked_tools(), exchange), spec, "client_mirrors_marked_arguments")
        assert verdict.outcome is Outcome.FAILED and words in verdict.reason, verdict.reason


def test_marked_argument_rule_is_not_verified_for_unseen_tools(spec: SpecSet) -> None:
    """Tool-defined: without tools/list the client's duty is unknown."""
    assert outcome(spec, "client_mirrors_marked_arguments", call({"sql": "s"})) is Outcome.NOT_VERIFIED


def test_calling_a_tool_with_invalid_marks_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-23)."""
    tools = marked_tools(QUERY_TOOL, BROKEN_TOOL)
    assert outcome(spec, "client_never_calls_tools_with_invalid_header_marks", tools, call({"sql": "s"})) is (
        Outcome.PASSED
    )
    verdict = judge(log_of(tools, call({}, tool="broken")), spec, "client_never_calls_tools_with_invalid_header_marks")
    assert verdict.outcome is Outcome.FAILED and "'broken'" in verdict.reason
    assert outcome(spec, "client_never_calls_tools_with_invalid_header_marks", call({}, tool="x")) is (
        Outcome.NOT_VERIFIED
    )


def test_clients_refresh_tools_before_retrying_a_parameter_header_rejection(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-22, SHOULD)."""
    listed = marked_tools()
    rejected = call({"sql": "s", "region": "eu"}, ident=1, answer=error_body(-32020, "mcp-param-region missing", 1))
    relisted = marked_tools()
    retry = call({"sql": "s", "region": "eu"}, ident=2, headers={"mcp-param-region": "eu"})
    good = log_of(listed, rejected, relisted, retry)
    assert judge(good, spec, "client_refreshes_tools_after_a_parameter_header_rejection").outcome is Outcome.PASSED
    blind = log_of(listed, rejected, retry)
    verdict = judge(blind, spec, "client_refreshes_tools_after_a_parameter_header_rejection")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    alone = log_of(listed, rejected)
    assert judge(alone, spec, "client_refreshes_tools_after_a_parameter_header_rejection").outcome is (
        Outcome.NOT_VERIFIED
    )


def test_clients_reissue_a_broken_stream_under_a_new_id(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-36)."""
    broken = sse("tools/call", {"name": "add", "arguments": {"a": 1}}, [progress("p")], ident=1,
                 ending=EndReason.SERVER_DISCONNECT)  # fmt: skip
    again = call({"a": 1}, tool="add", ident=2)
    assert outcome(spec, "client_reissues_broken_streams_as_new_requests", broken, again) is Outcome.PASSED
    same_id = call({"a": 1}, tool="add", ident=1)
    assert outcome(spec, "client_reissues_broken_streams_as_new_requests", broken, same_id) is Outcome.FAILED
    resume = _modern_get(405, headers={"last-event-id": "3", "mcp-protocol-version": MODERN})
    verdict = judge(log_of(broken, resume), spec, "client_reissues_broken_streams_as_new_requests")
    assert verdict.outcome is Outcome.FAILED and "resume" in verdict.reason
    assert outcome(spec, "client_reissues_broken_streams_as_new_requests", broken) is Outcome.NOT_VERIFIED


# -- client: both eras -------------------------------------------------------------------------------------------
def test_client_messages_travel_in_posts(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-02)."""
    assert outcome(spec, "client_messages_are_posted", post("tools/list")) is Outcome.PASSED
    body = request_body("tools/list", 3)
    put = http(body, result_body(TOOLS, 3), method="PUT", headers=modern_headers(body))
    assert outcome(spec, "client_messages_are_posted", put) is Outcome.FAILED
    assert outcome(spec, "client_messages_are_posted", _modern_get(405)) is Outcome.NOT_VERIFIED


def test_post_accept_headers_list_both_media_types(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-03)."""
    assert outcome(spec, "client_posts_accept_json_and_event_streams", post("tools/list")) is Outcome.PASSED
    json_only = post("tools/list", headers={"accept": "application/json"})
    verdict = judge(log_of(json_only), spec, "client_posts_accept_json_and_event_streams")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.MUST
    zero = post("tools/list", headers={"accept": "application/json, text/event-stream;q=0"})
    assert outcome(spec, "client_posts_accept_json_and_event_streams", zero) is Outcome.FAILED
    wildcard = post("tools/list", headers={"accept": "*/*"})
    assert outcome(spec, "client_posts_accept_json_and_event_streams", wildcard) is Outcome.PASSED
    assert outcome(spec, "client_posts_accept_json_and_event_streams", _modern_get(405)) is Outcome.NOT_VERIFIED


def test_a_wildcard_accept_is_a_should_level_finding(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-03, ⚠A28): */* alone is a warning, not a failure of the MUST."""
    wildcard = post("tools/list", headers={"accept": "*/*"})
    verdict = judge(log_of(wildcard), spec, "client_posts_name_both_media_types_literally")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    assert outcome(spec, "client_posts_name_both_media_types_literally", post("tools/list")) is Outcome.PASSED
    json_only = post("tools/list", headers={"accept": "application/json"})
    assert outcome(spec, "client_posts_name_both_media_types_literally", json_only) is Outcome.NOT_VERIFIED


def test_2026_post_bodies_are_single_requests_or_notifications(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-04)."""
    assert outcome(spec, "client_posts_one_request_or_notification", post("tools/list")) is Outcome.PASSED
    batch = [request_body("tools/list", 1)]
    posted = http(batch, error_body(-32600, "no batches", None), status=400, headers=modern_headers(None))
    assert outcome(spec, "client_posts_one_request_or_notification", posted) is Outcome.FAILED
    answer = http(result_body({}, 1), status=202, headers=modern_headers(None))
    verdict = judge(log_of(answer), spec, "client_posts_one_request_or_notification")
    assert verdict.outcome is Outcome.FAILED and "response" in verdict.reason
    legacy = [*legacy_session(), legacy_call("tools/list", None, {"tools": []})]
    assert outcome(spec, "client_posts_one_request_or_notification", legacy) is Outcome.NOT_APPLICABLE


# -- 2025 GET streams and resumability --------------------------------------------------------------------------
def test_a_2025_get_opens_a_stream_or_gets_405(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-38)."""
    assert outcome(spec, "legacy_get_opens_a_stream_or_gets_405", legacy_session(), legacy_get([])) is Outcome.PASSED
    json_get = http(None, {"ok": 1}, method="GET", headers={"accept": "text/event-stream", "mcp-session-id": "sess-1"})
    verdict = judge(log_of(legacy_session(), json_get), spec, "legacy_get_opens_a_stream_or_gets_405")
    assert verdict.outcome is Outcome.FAILED
    assert outcome(spec, "legacy_get_opens_a_stream_or_gets_405", _modern_get(405)) is Outcome.NOT_APPLICABLE


def test_a_2025_get_must_accept_event_streams(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-38, client side)."""
    assert outcome(spec, "legacy_get_accepts_event_streams", legacy_session(), legacy_get([])) is Outcome.PASSED
    bad = legacy_get([], headers={"accept": "application/json"})
    assert outcome(spec, "legacy_get_accepts_event_streams", legacy_session(), bad) is Outcome.FAILED
    assert outcome(spec, "legacy_get_accepts_event_streams", legacy_session()) is Outcome.NOT_VERIFIED


def test_get_streams_carry_no_responses_unless_resuming(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-39)."""
    listed = legacy_get([notification("notifications/tools/list_changed")])
    assert outcome(spec, "get_streams_carry_no_responses", legacy_session(), listed) is Outcome.PASSED
    answered = legacy_get([result(4)])
    assert outcome(spec, "get_streams_carry_no_responses", legacy_session(), answered) is Outcome.FAILED
    resumed = legacy_get([result(4)], last_event_id="e1")
    assert outcome(spec, "get_streams_carry_no_responses", legacy_session(), resumed) is Outcome.NOT_VERIFIED


def test_one_message_is_never_broadcast_on_two_streams(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-40)."""
    change = notification("notifications/tools/list_changed")
    single = legacy_get([change])
    assert outcome(spec, "messages_travel_on_one_stream_only", legacy_session(), single) is Outcome.PASSED
    twice = [legacy_get([change]), legacy_stream(legacy_request("tools/call", 5), [change, result(5)])]
    assert outcome(spec, "messages_travel_on_one_stream_only", legacy_session(), twice) is Outcome.FAILED
    assert outcome(spec, "messages_travel_on_one_stream_only", legacy_session()) is Outcome.NOT_VERIFIED


def test_a_broadcast_is_one_message_written_alike_whatever_its_key_order(spec: SpecSet) -> None:
    """HTTP-40: twins are told by their whole JSON value (keys in any order), not by their method and id alone."""
    first = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    reordered = {"params": {"data": "x", "level": "info"}, "method": "notifications/message", "jsonrpc": "2.0"}
    other = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "y"}}
    alike = [legacy_get([first]), legacy_stream(legacy_request("tools/call", 5), [reordered, result(5)])]
    assert outcome(spec, "messages_travel_on_one_stream_only", legacy_session(), alike) is Outcome.FAILED
    unlike = [legacy_get([first]), legacy_stream(legacy_request("tools/call", 5), [other, result(5)])]
    assert outcome(spec, "messages_travel_on_one_stream_only", legacy_session(), unlike) is Outcome.PASSED


def test_event_ids_are_unique_across_a_session(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-41)."""
    first = legacy_stream(legacy_request("tools/list", 1), [event(id="a", data=""), event(result(1), id="b")])
    second = legacy_stream(legacy_request("tools/list", 2), [event(id="c", data=""), event(result(2), id="d")])
    assert outcome(spec, "event_ids_are_unique_per_session", legacy_session(), first, second) is Outcome.PASSED
    clash = legacy_stream(legacy_request("tools/list", 3), [event(id="a", data=""), event(result(3), id="e")])
    verdict = judge(log_of(legacy_session(), first, clash), spec, "event_ids_are_unique_per_session")
    assert verdict.outcome is Outcome.FAILED and "'a'" in verdict.reason
    plain = legacy_stream(legacy_request("tools/list", 4), [result(4)])
    assert outcome(spec, "event_ids_are_unique_per_session", legacy_session(), plain) is Outcome.NOT_VERIFIED


def test_2025_post_streams_are_primed_and_announce_retry_before_closing_early(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-42, SHOULD)."""
    primed = legacy_stream(legacy_request("tools/list", 1), [event(id="p1", data=""), event(result(1), id="p2")])
    assert outcome(spec, "post_streams_are_primed_and_announce_retry", legacy_session(), primed) is Outcome.PASSED
    unprimed = legacy_stream(legacy_request("tools/list", 2), [result(2)])
    verdict = judge(log_of(legacy_session(), unprimed), spec, "post_streams_are_primed_and_announce_retry")
    assert verdict.outcome is Outcome.FAILED and "priming" in verdict.reason
    early = legacy_stream(
        legacy_request("tools/call", 3), [event(id="p3", data="")], ending=EndReason.SERVER_DISCONNECT
    )
    verdict = judge(log_of(legacy_session(), early), spec, "post_streams_are_primed_and_announce_retry")
    assert verdict.outcome is Outcome.FAILED and "retry" in verdict.reason
    assert outcome(spec, "post_streams_are_primed_and_announce_retry", legacy_session()) is Outcome.NOT_VERIFIED


def test_clients_wait_the_retry_interval_before_reconnecting(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-43)."""
    closed = legacy_stream(legacy_request("tools/call", 1), [event(id="p1", data="", retry=100)],
                           ending=EndReason.SERVER_DISCONNECT, ending_at=1_750_000_000.0)  # fmt: skip
    patient = legacy_get([], last_event_id="p1", at=1_750_000_000.5)
    assert outcome(spec, "client_waits_the_retry_interval", legacy_session(), closed, patient) is Outcome.PASSED
    hasty = legacy_get([], last_event_id="p1", at=1_750_000_000.01)
    verdict = judge(log_of(legacy_session(), closed, hasty), spec, "client_waits_the_retry_interval")
    assert verdict.outcome is Outcome.FAILED and "retry asked for 100 ms" in verdict.reason
    assert outcome(spec, "client_waits_the_retry_interval", legacy_session(), closed) is Outcome.NOT_VERIFIED


def test_resumptions_replay_only_the_broken_stream(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-44)."""
    broken = legacy_stream(
        legacy_request("tools/call", 1), [event(id="s1-0", data="")], ending=EndReason.SERVER_DISCONNECT
    )
    own = legacy_get([event(result(1), id="s1-1")], last_event_id="s1-0")
    assert outcome(spec, "resumptions_replay_only_the_broken_stream", legacy_session(), broken, own) is Outcome.PASSED
    foreign = legacy_get([event(result(99), id="s1-1")], last_event_id="s1-0")
    verdict = judge(log_of(legacy_session(), broken, foreign), spec, "resumptions_replay_only_the_broken_stream")
    assert verdict.outcome is Outcome.FAILED and "another stream" in verdict.reason
    unknown = legacy_get([event(result(1), id="z")], last_event_id="nowhere")
    assert outcome(spec, "resumptions_replay_only_the_broken_stream", legacy_session(), unknown) is (
        Outcome.NOT_VERIFIED
    )


def test_2025_progress_goes_on_the_stream_of_its_request(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-45, SHOULD)."""
    request = legacy_request("tools/call", 1, {"name": "slow", "_meta": {"progressToken": "t1"}})
    good = legacy_stream(request, [progress("t1"), result(1)])
    assert outcome(spec, "stream_messages_relate_to_their_stream", legacy_session(), good) is Outcome.PASSED
    crossed = legacy_stream(request, [progress("t9"), result(1)])
    assert outcome(spec, "stream_messages_relate_to_their_stream", legacy_session(), crossed) is Outcome.FAILED
    open_call = legacy_stream(request, [event(id="x", data="")], ending=EndReason.OPEN)
    on_get = legacy_get([progress("t1")])
    verdict = judge(log_of(legacy_session(), open_call, on_get), spec, "stream_messages_relate_to_their_stream")
    assert verdict.outcome is Outcome.FAILED and "GET stream" in verdict.reason
    assert outcome(spec, "stream_messages_relate_to_their_stream", legacy_session()) is Outcome.NOT_VERIFIED


def test_2025_post_streams_deliver_their_response(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-46, SHOULD)."""
    good = legacy_stream(legacy_request("tools/list", 1), [result(1)])
    assert outcome(spec, "post_streams_deliver_their_response", legacy_session(), good) is Outcome.PASSED
    empty = legacy_stream(legacy_request("tools/list", 2), [event(id="x", data="")])
    assert outcome(spec, "post_streams_deliver_their_response", legacy_session(), empty) is Outcome.FAILED
    dropped = legacy_stream(legacy_request("tools/list", 3), [], ending=EndReason.CLIENT_DISCONNECT)
    assert outcome(spec, "post_streams_deliver_their_response", legacy_session(), dropped) is Outcome.NOT_VERIFIED
    broken = legacy_stream(
        legacy_request("tools/list", 4), [event(id="b0", data="")], ending=EndReason.SERVER_DISCONNECT
    )
    resumed = legacy_get([event(result(4), id="b1")], last_event_id="b0")
    assert outcome(spec, "post_streams_deliver_their_response", legacy_session(), broken, resumed) is Outcome.PASSED


def _cancelled_call(ident: int, *, cancel_first: bool = True) -> list[HttpExchange]:
    """A 2025 tools/call whose primed stream ends without a response, and the client's
    notifications/cancelled for it, sent before (or only after) the stream ended."""
    started = tick()
    cancel = http(
        notification("notifications/cancelled", {"requestId": ident, "reason": "user gave up"}),
        status=202,
        headers=legacy_headers(),
    )
    ended = tick()
    body = legacy_request("tools/call", ident, {"name": "slow", "arguments": {}})
    primed = [event(id=f"p{ident}", data="", at=started)]
    if cancel_first:
        return [cancel, legacy_stream(body, primed, at=started, ending_at=ended)]
    early = legacy_stream(body, primed, at=started, ending_at=started + 0.005)
    return [early, cancel]


def test_a_cancelled_2025_call_owes_no_response_on_its_stream(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-46, HTTP-42, CAN-): a request the client cancelled gets no response, so its POST
    stream may end without one and without a retry field (the official SDK client through the proxy)."""
    cancelled = [*legacy_session(), *_cancelled_call(7)]
    assert outcome(spec, "post_streams_deliver_their_response", *cancelled) is not Outcome.FAILED
    assert outcome(spec, "post_streams_are_primed_and_announce_retry", *cancelled) is Outcome.PASSED
    assert outcome(spec, "each_request_gets_exactly_one_response", *cancelled) is not Outcome.FAILED


def test_a_stream_that_ended_before_the_cancellation_still_owed_its_response(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-46): a cancellation sent after the stream had already ended excuses nothing."""
    late = [*legacy_session(), *_cancelled_call(8, cancel_first=False)]
    assert outcome(spec, "post_streams_deliver_their_response", *late) is Outcome.FAILED
    assert outcome(spec, "post_streams_are_primed_and_announce_retry", *late) is Outcome.FAILED


def test_a_call_missing_both_name_and_mcp_name_may_be_answered_invalid_params(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-12, ⚠A6): with params.name gone too, -32602 is as right as -32020."""
    body = request_body("tools/call", 6, {"arguments": {}})
    exchange = post("tools/call", body=body, ident=6, headers={"mcp-name": None}, answer=-32602)
    assert outcome(spec, "missing_routing_headers_are_rejected", exchange) is Outcome.PASSED


def test_odd_traffic_never_breaks_an_http_rule(spec: SpecSet) -> None:
    """Tool-defined: malformed bodies, params and headers become findings or silence, never a crashed check."""
    odd_bodies: list[object] = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": []},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 7, "arguments": "x"}},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": None, "_meta": "no"}},
        {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "result": {}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {"a": 1}}},
        [1, 2],
        "just a string",
        b"{not json",
    ]
    items: list[object] = [marked_tools(QUERY_TOOL, BROKEN_TOOL, {"name": 5}, "not a tool")]
    for n, body in enumerate(odd_bodies):
        headers = {"mcp-protocol-version": MODERN if n % 2 else "garbage", "mcp-method": "x\x00", "accept": ";;,",
                   "mcp-name": "=?base64?%%%?=", "mcp-param-region": "=?base64??=", "origin": "::::"}  # fmt: skip
        items.append(http(body, body, headers=headers, status=[200, 400, 404, 202][n % 4]))
        first = body if isinstance(body, dict) else progress(None)
        events = [first, event(data="{", id="\x00")]
        call_params = {"name": "query", "arguments": {"limit": True}}
        items.append(sse("tools/call", call_params, events, ending=EndReason.SERVER_DISCONNECT))
    items += [legacy_session(), legacy_get([event(data="[]", retry=-1)], last_event_id="??"), _modern_get(500)]
    mine = rules_of("http")
    verdicts = evaluate(log_of(*items), spec, checks=mine)  # type: ignore[arg-type]
    crashed = [f"{v.check}: {v.reason}" for v in verdicts if v.reason.startswith("the check itself failed")]
    assert crashed == []
