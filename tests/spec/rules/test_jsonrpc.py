"""JSON-RPC basics (RPC-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from dataclasses import replace

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Side
from mcp_assay.wire.model import EndReason, HttpExchange
from tests.factories import (
    error_body,
    http,
    judge,
    legacy_call,
    legacy_session,
    log_of,
    modern_call,
    modern_headers,
    request_body,
    result_body,
    stdio,
)

TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}


def test_well_formed_messages_pass_the_jsonrpc_2_0_rule(spec: SpecSet) -> None:
    """Spec-mandated (RPC-01)."""
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "messages_are_jsonrpc_2_0_objects")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_a_server_answer_that_is_not_json_fails_rpc_01_with_evidence(spec: SpecSet) -> None:
    """Spec-mandated (RPC-01): bad output is a failed verdict, not a crash."""
    exchange = http(request_body("tools/list"), b'{"jsonrpc": "2.0", "id": 1, "result": ', status=200)
    verdict = judge(log_of(exchange), spec, "messages_are_jsonrpc_2_0_objects")
    assert verdict.outcome is Outcome.FAILED
    assert "not JSON" in verdict.reason
    assert verdict.evidence[0].exchange == exchange.id


def test_jsonrpc_rule_is_not_verified_without_traffic(spec: SpecSet) -> None:
    """Tool-defined: an empty capture proves nothing."""
    verdict = judge(log_of(), spec, "messages_are_jsonrpc_2_0_objects")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_a_wrong_jsonrpc_version_fails(spec: SpecSet) -> None:
    body = request_body("tools/list")
    body["jsonrpc"] = "1.0"
    verdict = judge(log_of(http(body, result_body({}, 1))), spec, "messages_are_jsonrpc_2_0_objects")
    assert verdict.outcome is Outcome.FAILED
    assert "1.0" in verdict.reason


def test_fractional_request_ids_fail_rpc_03(spec: SpecSet) -> None:
    """Spec-mandated (RPC-03): 1.0 is not an integer id even though Python's json reads it as a number."""
    good = judge(log_of(modern_call("tools/list", {}, TOOLS, ident="a")), spec, "request_ids_are_strings_or_integers")
    assert good.outcome is Outcome.PASSED
    bad = http(b'{"jsonrpc":"2.0","id":1.0,"method":"tools/list","params":{}}', result_body(TOOLS, 1))
    verdict = judge(log_of(bad), spec, "request_ids_are_strings_or_integers")
    assert verdict.outcome is Outcome.FAILED
    assert "float" in verdict.reason


def test_request_id_rule_is_not_verified_without_requests(spec: SpecSet) -> None:
    notification = http({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, status=202)
    verdict = judge(log_of(notification), spec, "request_ids_are_strings_or_integers")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_an_answer_to_an_id_never_sent_fails_rpc_05_on_stdio(spec: SpecSet) -> None:
    """Spec-mandated (RPC-05): ids match by type and value, so "1" does not answer 1."""
    log = log_of(
        stdio(Side.CLIENT, request_body("tools/list", 1)),
        stdio(Side.SERVER, result_body({**TOOLS, "resultType": "complete"}, "1")),
    )
    verdict = judge(log, spec, "each_request_gets_exactly_one_response")
    assert verdict.outcome is Outcome.FAILED
    assert "no request" in verdict.reason


def test_an_answer_to_an_id_of_4301_digits_fails_rpc_05_in_a_line_that_fits_the_screen(spec: SpecSet) -> None:
    """Issue 28: the id is read whatever its length (RPC-05 fails as at 4,300 digits), and the reason shows its start
    and its length, never 4,301 digits."""
    long_id = "7" * 4301
    line = b'{"jsonrpc": "2.0", "id": ' + long_id.encode() + b', "result": {"tools": []}}'
    log = log_of(stdio(Side.CLIENT, request_body("tools/list", 1)), stdio(Side.SERVER, line))
    verdict = judge(log, spec, "each_request_gets_exactly_one_response")
    assert verdict.outcome is Outcome.FAILED and "(4,301 characters)" in verdict.reason, verdict
    assert len(verdict.reason) < 200, verdict.reason


def test_matching_answers_pass_rpc_05(spec: SpecSet) -> None:
    log = log_of(
        stdio(Side.CLIENT, request_body("tools/list", 1)),
        stdio(Side.SERVER, result_body({**TOOLS, "resultType": "complete"}, 1)),
    )
    assert judge(log, spec, "each_request_gets_exactly_one_response").outcome is Outcome.PASSED


def test_a_second_answer_to_one_request_fails_rpc_05(spec: SpecSet) -> None:
    result = result_body({**TOOLS, "resultType": "complete"}, 1)
    log = log_of(
        stdio(Side.CLIENT, request_body("tools/list", 1)), stdio(Side.SERVER, result), stdio(Side.SERVER, result)
    )
    verdict = judge(log, spec, "each_request_gets_exactly_one_response")
    assert verdict.outcome is Outcome.FAILED
    assert "2 times" in verdict.reason


def test_unknown_method_answered_with_another_code_fails_rpc_15(spec: SpecSet) -> None:
    body = request_body("mcp/no-such-method", 5)
    good = http(body, error_body(-32601, "Method not found", 5), status=404)
    assert judge(log_of(good), spec, "unknown_methods_get_method_not_found").outcome is Outcome.PASSED
    bad = http(body, error_body(-32602, "nope", 5), status=400)
    verdict = judge(log_of(bad), spec, "unknown_methods_get_method_not_found")
    assert verdict.outcome is Outcome.FAILED
    assert "-32602" in verdict.reason


def test_unknown_method_rule_is_not_verified_when_every_method_is_known(spec: SpecSet) -> None:
    verdict = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "unknown_methods_get_method_not_found")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_retired_code_minus_32002_fails_in_2026_and_is_not_applicable_to_2025(spec: SpecSet) -> None:
    """Spec-mandated (RPC-17): -32002 is retired in 2026-07-28; 2025-11-25 still uses it."""
    body = request_body("resources/read", 3, {"uri": "file:///x"})
    modern = http(body, error_body(-32002, "Resource not found", 3), status=200)
    assert judge(log_of(modern), spec, "retired_error_codes_are_not_emitted").outcome is Outcome.FAILED
    legacy = [*legacy_session(), legacy_call("resources/read", {"uri": "file:///x"}, {"contents": []})]
    verdict = judge(log_of(legacy), spec, "retired_error_codes_are_not_emitted")
    assert verdict.outcome is Outcome.NOT_APPLICABLE
    assert "2025-11-25 does not define per_request_version" in verdict.reason


def test_a_deliberately_invalid_probe_is_never_held_against_the_client(spec: SpecSet) -> None:
    """Tool-defined: the active suite's malformed requests judge the server, not the client."""
    probe = http(
        b'{"jsonrpc": "2.0", "id": 1,', error_body(-32700, "Parse error", None), status=400,
        headers=modern_headers(None), probe={"name": "invalid-json", "invalid": True},
    )  # fmt: skip
    client = judge(log_of(probe), spec, "messages_are_jsonrpc_2_0_objects")
    assert client.outcome is Outcome.PASSED  # only the server's answer was judged
    server = judge(log_of(probe), spec, "invalid_json_gets_a_parse_error")
    assert server.outcome is Outcome.PASSED
    assert server.source.value == "active"


def test_a_non_json_stdio_line_is_left_to_the_stdio_rules(spec: SpecSet) -> None:
    """Tool-defined: a banner on a stdio server's stdout is named by STDIO-02, not as a generic RPC-01 failure."""
    from mcp_assay.wire.model import StdioLine

    banner = StdioLine.build(id="b1", connection="c", sender=Side.SERVER, time=1.0, raw=b"Server is running...\n")
    log = log_of(stdio(Side.CLIENT, request_body("tools/list", 1)), banner)
    assert judge(log, spec, "messages_are_jsonrpc_2_0_objects").outcome is Outcome.PASSED
    assert judge(log, spec, "server_stdout_carries_only_mcp_messages").outcome is Outcome.FAILED


def test_an_error_repeating_the_request_id_passes_rpc_09(spec: SpecSet) -> None:
    """Spec-mandated (RPC-09)."""
    good = http(request_body("tools/call", 7, {"name": "x"}), error_body(-32602, "Unknown tool", 7), status=400)
    assert judge(log_of(good), spec, "error_responses_repeat_the_request_id").outcome is Outcome.PASSED


def test_an_error_omitting_a_readable_id_fails_rpc_09(spec: SpecSet) -> None:
    """Spec-mandated (RPC-09): the id is left out only when the request could not be read."""
    bad = http(request_body("tools/call", 7, {"name": "x"}), error_body(-32602, "Unknown tool", None), status=400)
    verdict = judge(log_of(bad), spec, "error_responses_repeat_the_request_id")
    assert verdict.outcome is Outcome.FAILED
    assert "request id 7 was readable" in verdict.reason


def test_a_403_origin_rejection_may_omit_the_id(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-35): a 403 body may be a JSON-RPC error without an id."""
    rejected = http(request_body("tools/list", 3), error_body(-32600, "Invalid Origin", None), status=403)
    verdict = judge(log_of(rejected), spec, "error_responses_repeat_the_request_id")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_a_null_error_id_is_a_should_level_finding(spec: SpecSet) -> None:
    """Spec-mandated (RPC-09, A1): "id": null is JSON-RPC 2.0 style, not MCP's; judged at SHOULD level."""
    null = http(
        request_body("tools/list", 3), {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}}
    )
    verdict = judge(log_of(null), spec, "error_responses_never_carry_a_null_id")
    assert verdict.outcome is Outcome.FAILED and verdict.severity.value == "should"
    assert judge(log_of(null), spec, "error_responses_repeat_the_request_id").outcome is Outcome.NOT_VERIFIED
    assert judge(log_of(null), spec, "error_responses_match_the_schema").outcome is Outcome.PASSED
    good = http(request_body("tools/list", 3), error_body(-32600, "x", 3))
    assert judge(log_of(good), spec, "error_responses_never_carry_a_null_id").outcome is Outcome.PASSED
    assert judge(log_of(), spec, "error_responses_never_carry_a_null_id").outcome is Outcome.NOT_VERIFIED


def test_a_processed_batch_is_a_should_not_finding_and_its_answer_is_no_orphan(spec: SpecSet) -> None:
    """Spec-mandated (RPC-14): the server reaction is unspecified; processing a batch is reported, once."""
    batch = http(
        [request_body("tools/list", 1)],
        [result_body({"resultType": "complete", **TOOLS}, 1)],
        probe={"name": "batch", "invalid": True},
    )
    verdict = judge(log_of(batch), spec, "servers_do_not_process_batches")
    assert verdict.outcome is Outcome.FAILED and verdict.severity.value == "should"
    assert judge(log_of(batch), spec, "each_request_gets_exactly_one_response").outcome is not Outcome.FAILED
    refused = http([request_body("tools/list", 1)], error_body(-32600, "no batches", None), status=400)
    assert judge(log_of(refused), spec, "servers_do_not_process_batches").outcome is Outcome.PASSED


def _on(connection: str, exchange: HttpExchange) -> HttpExchange:
    return replace(exchange, connection=connection)


def _unanswered(ident: int, ending: EndReason = EndReason.OPEN) -> HttpExchange:
    """A 2026 call with no answer yet: still open when the capture stopped, or given up by the client."""
    return http(request_body("tools/list", ident, {}), events=[], ending=ending)


def test_an_id_reused_after_its_answer_passes_rpc_04_in_2026(spec: SpecSet) -> None:
    """Spec-mandated (RPC-04): in 2026 only an id still in flight may not be reused."""
    log = log_of(
        _on("c1", modern_call("tools/list", {}, TOOLS, ident=3)),
        _on("c1", modern_call("tools/list", {}, TOOLS, ident=3)),
    )
    verdict = judge(log, spec, "request_ids_are_not_reused")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


def test_an_id_reused_while_in_flight_fails_rpc_04(spec: SpecSet) -> None:
    """Spec-mandated (RPC-04): the earlier request was never answered when the id came again."""
    log = log_of(_on("c1", _unanswered(7)), _on("c1", modern_call("tools/list", {}, TOOLS, ident=7)))
    verdict = judge(log, spec, "request_ids_are_not_reused")
    assert verdict.outcome is Outcome.FAILED
    assert "still in flight" in verdict.reason


def test_an_id_reused_after_the_client_gave_up_on_it_passes_rpc_04_in_2026(spec: SpecSet) -> None:
    """Spec-mandated (RPC-04, CAN-08): a 2026 request whose stream the client closed awaits no answer."""
    log = log_of(
        _on("c1", _unanswered(7, EndReason.CLIENT_DISCONNECT)),
        _on("c1", modern_call("tools/list", {}, TOOLS, ident=7)),
    )
    assert judge(log, spec, "request_ids_are_not_reused").outcome is Outcome.PASSED


def test_an_id_reused_in_a_2025_session_fails_rpc_04_even_after_its_answer(spec: SpecSet) -> None:
    """Spec-mandated (RPC-04): with a handshake, an id is not reused within the session at all."""
    log = log_of(
        *legacy_session(), legacy_call("tools/list", {}, TOOLS, ident=2), legacy_call("tools/list", {}, TOOLS, ident=2)
    )
    verdict = judge(log, spec, "request_ids_are_not_reused")
    assert verdict.outcome is Outcome.FAILED
    assert "earlier in the session" in verdict.reason


def test_a_shared_id_in_a_capture_without_connections_is_not_counted_against_rpc_04(spec: SpecSet) -> None:
    """Tool-defined: a HAR file names no connection, and two clients may number requests alike, so
    the second request is left unjudged rather than failed."""
    log = log_of(_unanswered(7), modern_call("tools/list", {}, TOOLS, ident=7))
    verdict = judge(log, spec, "request_ids_are_not_reused")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 1


def test_rpc_04_is_not_verified_without_requests(spec: SpecSet) -> None:
    notification = http({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, status=202)
    verdict = judge(log_of(notification), spec, "request_ids_are_not_reused")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_an_id_retried_after_a_401_passes_rpc_04_in_2026(spec: SpecSet) -> None:
    """Spec-mandated (RPC-04): a request refused before JSON-RPC (the client had no token yet) is over, so
    sending it again with the same id, now authorized, reuses nothing in flight."""
    refused = http(
        request_body("tools/list", 1, {}),
        {"error": "invalid_token"},
        status=401,
        response_headers={"content-type": "application/json", "www-authenticate": "Bearer"},
    )
    log = log_of(_on("c1", refused), _on("c1", modern_call("tools/list", {}, TOOLS, ident=1)))
    verdict = judge(log, spec, "request_ids_are_not_reused")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == 2


NO_METHOD = {"name": "no-method", "invalid": True}


def test_an_invalid_request_answered_with_its_readable_id_is_no_orphan_on_stdio(spec: SpecSet) -> None:
    """Spec-mandated (RPC-13, RPC-05): -32600 repeating the readable id of an invalid request answers it.

    RPC-13 and RPC-05 ask the same correlation, so the answer that passes one is not an answer to
    "an id no request used" for the other."""
    log = log_of(
        stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 55}, probe=NO_METHOD),
        stdio(Side.SERVER, error_body(-32600, "Invalid request", 55)),
    )
    assert judge(log, spec, "invalid_requests_get_an_invalid_request_error").outcome is Outcome.PASSED
    assert judge(log, spec, "malformed_input_gets_an_error_answer").outcome is Outcome.PASSED
    assert judge(log, spec, "each_request_gets_exactly_one_response").outcome is not Outcome.FAILED


def test_an_invalid_request_answered_with_another_code_fails_rpc_13_on_stdio(spec: SpecSet) -> None:
    """Spec-mandated (RPC-13): the code of the answer that repeats the invalid request's id is judged on stdio too."""
    log = log_of(
        stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 55}, probe=NO_METHOD),
        stdio(Side.SERVER, error_body(-32601, "Method not found", 55)),
    )
    verdict = judge(log, spec, "invalid_requests_get_an_invalid_request_error")
    assert verdict.outcome is Outcome.FAILED and "-32601" in verdict.reason
    assert judge(log, spec, "each_request_gets_exactly_one_response").outcome is not Outcome.FAILED


def test_an_error_repeating_the_id_of_a_stray_client_response_answers_it(spec: SpecSet) -> None:
    """Spec-mandated (RPC-05): a server refusing a response no request asked for, repeating its id, answers it."""
    stray = http(
        {"jsonrpc": "2.0", "id": "mcp-assay-no-such-request", "result": {}},
        error_body(-32600, "Invalid request", "mcp-assay-no-such-request"),
        status=400,
        headers=modern_headers(None),
        probe={"name": "client-response", "invalid": True},
    )
    assert judge(log_of(stray), spec, "each_request_gets_exactly_one_response").outcome is not Outcome.FAILED


def test_an_answer_to_an_id_no_message_carried_still_fails_rpc_05(spec: SpecSet) -> None:
    """Spec-mandated (RPC-05): an invalid request with id 55 does not make an answer to 56 an answer."""
    log = log_of(
        stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 55}, probe=NO_METHOD),
        stdio(Side.SERVER, error_body(-32600, "Invalid request", 56)),
    )
    verdict = judge(log, spec, "each_request_gets_exactly_one_response")
    assert verdict.outcome is Outcome.FAILED and "56" in verdict.reason


DEEP_VALUE = "[" * 5000 + "]" * 5000
LONG_ID = "7" * 5000


def test_a_message_beyond_the_parsers_limits_is_not_verified_for_rpc_01(spec: SpecSet) -> None:
    """Tool-defined (RPC-01): valid JSON nested 5,000 deep is not judged "not JSON"; the limit is named."""
    raw = f'{{"jsonrpc":"2.0","id":1,"result":{{"v":{DEEP_VALUE}}}}}'.encode()
    deep = http(request_body("tools/list"), raw)
    assert judge(log_of(deep), spec, "messages_are_jsonrpc_2_0_objects").outcome is Outcome.PASSED  # the request
    alone = stdio(Side.SERVER, raw)
    verdict = judge(log_of(alone), spec, "messages_are_jsonrpc_2_0_objects")
    assert verdict.outcome is Outcome.NOT_VERIFIED, verdict.reason
    assert "limit of the tool" in verdict.reason


def test_a_request_beyond_the_parsers_limits_is_not_held_against_the_server_by_rpc_12(spec: SpecSet) -> None:
    """Tool-defined (RPC-12): a request nested 5,000 deep is valid JSON; a server serving it did nothing wrong, and
    what rests on the unread request names the limit."""
    body = f'{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"v":{DEEP_VALUE}}}}}'.encode()
    answer = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
    exchange = http(body, answer, headers=modern_headers(None), probe={"name": "deep", "invalid": True})
    verdict = judge(log_of(exchange), spec, "invalid_json_gets_a_parse_error")
    assert verdict.outcome is Outcome.NOT_VERIFIED, verdict.reason
    assert "limit" in verdict.reason
    assert judge(log_of(exchange), spec, "each_request_gets_exactly_one_response").outcome is not Outcome.FAILED


def test_a_request_with_an_id_of_5000_digits_is_read_and_its_answer_matched(spec: SpecSet) -> None:
    """Issue 28 (RPC-05, RPC-12): an id longer than Python converts is read whole, so the request is valid JSON
    (nothing for RPC-12 to judge) and the answer repeating the id matches it."""
    body = f'{{"jsonrpc":"2.0","id":{LONG_ID},"method":"tools/list","params":{{}}}}'.encode()
    answer = f'{{"jsonrpc":"2.0","id":{LONG_ID},"result":{{"tools":[]}}}}'.encode()
    exchange = http(body, answer, headers=modern_headers(None), probe={"name": "long-id", "invalid": True})
    verdict = judge(log_of(exchange), spec, "invalid_json_gets_a_parse_error")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "no answers to invalid JSON" in verdict.reason, verdict
    assert judge(log_of(exchange), spec, "each_request_gets_exactly_one_response").outcome is Outcome.PASSED


def test_a_stdio_line_beyond_the_parsers_limits_is_not_a_stray_line(spec: SpecSet) -> None:
    """Tool-defined (STDIO-02): a deep but valid JSON line on stdout is not judged a banner or fragment."""
    from mcp_assay.wire.model import StdioLine

    deep = f'{{"jsonrpc":"2.0","id":1,"result":{{"v":{DEEP_VALUE}}}}}\n'.encode()
    line = StdioLine.build(id="deep1", connection="conn-1", sender=Side.SERVER, time=2e9, raw=deep)
    log = log_of(stdio(Side.CLIENT, request_body("tools/list", 1)), line)
    verdict = judge(log, spec, "server_stdout_carries_only_mcp_messages")
    assert verdict.outcome is not Outcome.FAILED, verdict.reason


def test_error_messages_are_judged_as_an_informational_heuristic(spec: SpecSet) -> None:
    """Spec-mandated (RPC-08: SHOULD, an INFO-level heuristic per the catalogue): a short sentence passes; a
    multi-line message fails as a note that never counts against conformance, shown as a SHOULD graded INFO;
    without any error there is nothing to judge."""
    short = http(request_body("tools/list", 1), error_body(-32602, "Unknown cursor.", 1))
    assert judge(log_of(short), spec, "error_messages_are_short_sentences").outcome is Outcome.PASSED
    zod = '[\n  {\n    "code": "invalid_type",\n    "path": ["params", "name"]\n  }\n]'
    long = http(request_body("tools/call", 2, {}), error_body(-32603, zod, 2))
    verdict = judge(log_of(long), spec, "error_messages_are_short_sentences")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.INFO and not verdict.counts_against
    assert verdict.shown_level == "SHOULD, graded INFO" and "over 6 lines" in verdict.reason
    quiet = judge(log_of(modern_call("tools/list", {}, TOOLS)), spec, "error_messages_are_short_sentences")
    assert quiet.outcome is Outcome.NOT_VERIFIED
