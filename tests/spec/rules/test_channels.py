"""Protocol errors and tool errors: each channel check names the channel, passes, fails, and says when it can't tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.spec.rules.behaviour.channels import EXPLAIN, Channel
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Side
from tests.factories import error_body, http, judge, log_of, modern_headers, request_body, result_body, stdio
from tests.spec.rules._capability_builders import ADD, answered, call, failing, text, tools_list

STRICT = {
    "name": "lookup",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string"}},
        "required": ["region"],
        "additionalProperties": False,
    },
}
BAD_ARGS = {"name": "invalid-tool-arguments", "invalid": True}


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


# -- Channel --------------------------------------------------------------------------------------
def test_a_channel_says_which_way_an_answer_came_back() -> None:
    """Tool-defined: the words every channel verdict uses."""
    assert str(Channel("protocol-error", -32602, 400)) == "protocol error -32602 (HTTP 400)"
    assert str(Channel("tool-error", status=200)) == "tool result with isError: true (HTTP 200)"
    assert str(Channel("success")) == "plain success, a result without isError (stdio)"
    assert Channel("protocol-error", -32603, 500).server_error
    assert not Channel("protocol-error", -32602, 200).server_error


# -- BEH-03 channel ---------------------------------------------------------------------------------
def test_invalid_arguments_as_a_tool_error_pass_the_channel_check(spec: SpecSet) -> None:
    """Spec-mandated (BEH-03): input validation failures are tool execution errors."""
    flagged = call("lookup", {"region": "eu", "extra": 1}, {"content": [text("unexpected: extra")], "isError": True})
    verdict = judge(log_of(tools_list([STRICT]), flagged), spec, "invalid_arguments_come_back_as_tool_errors")
    assert verdict.outcome is Outcome.PASSED
    assert "tool result with isError: true (HTTP 200)" in verdict.reason
    assert "Additional properties are not allowed" in verdict.reason
    assert EXPLAIN in verdict.tags


def test_invalid_arguments_as_a_protocol_error_fail_the_channel_check_at_should(spec: SpecSet) -> None:
    """Spec-mandated (BEH-03 SHOULD, A4): TOOL-14 accepts -32602, but AUTH-AND-BEHAVIOUR §3.2 grades it a
    recommendation for the channel, and the message says so (not "tolerated")."""
    refused = failing("tools/call", {"name": "lookup", "arguments": {}}, -32602, status=400)
    log = log_of(tools_list([STRICT]), refused)
    verdict = judge(log, spec, "invalid_arguments_come_back_as_tool_errors")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    assert "protocol error -32602 (HTTP 400)" in verdict.reason
    assert "tolerated" not in verdict.reason and "belong in a tool result with isError: true" in verdict.reason
    tool_14 = judge(log, spec, "invalid_tool_arguments_never_succeed")
    assert tool_14.outcome is Outcome.PASSED and "an answer ⚠A4 allows" in tool_14.reason


def test_invalid_arguments_refused_with_another_code_are_neither_answer_a4_allows(spec: SpecSet) -> None:
    """Spec-mandated (BEH-03 SHOULD, TOOL-14 MUST, A4): -32603 is not a success, so TOOL-14 holds (the inputs
    were not served), but it is neither -32602 nor isError: true; no message calls it an answer A4 allows, and
    BEH-03 lists it as a recommendation that says so."""
    refused = failing("tools/call", {"name": "lookup", "arguments": {}}, -32603)
    log = log_of(tools_list([STRICT]), refused)
    verdict = judge(log, spec, "invalid_arguments_come_back_as_tool_errors")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    assert "neither of the answers ⚠A4 allows" in verdict.reason and "tolerated" not in verdict.reason
    tool_14 = judge(log, spec, "invalid_tool_arguments_never_succeed")
    assert tool_14.outcome is Outcome.PASSED and tool_14.severity is Severity.MUST
    assert "not a success" in tool_14.reason and "an answer ⚠A4 allows" not in tool_14.reason


def test_invalid_arguments_served_as_success_are_left_to_tool_14(spec: SpecSet) -> None:
    """Tool-defined: no error channel was used, so only TOOL-14 fails (one finding, one check)."""
    served = call("lookup", {}, {"content": [text("ok")]})
    log = log_of(tools_list([STRICT]), served)
    verdict = judge(log, spec, "invalid_arguments_come_back_as_tool_errors")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "TOOL-14" in verdict.reason
    assert judge(log, spec, "invalid_tool_arguments_never_succeed").outcome is Outcome.FAILED


def test_the_channel_check_is_not_verified_for_envelope_refusals(spec: SpecSet) -> None:
    """Tool-defined: a -32020 refusal happened before the tool was looked at."""
    refused = failing("tools/call", {"name": "lookup", "arguments": {}}, -32020, status=400, probe=BAD_ARGS)
    verdict = judge(log_of(tools_list([STRICT]), refused), spec, "invalid_arguments_come_back_as_tool_errors")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "envelope" in verdict.reason


def test_valid_arguments_are_no_subject_of_the_channel_check(spec: SpecSet) -> None:
    valid = call("lookup", {"region": "eu"}, {"content": [text("ok")]})
    assert outcome(spec, "invalid_arguments_come_back_as_tool_errors", tools_list([STRICT]), valid) is (
        Outcome.NOT_VERIFIED
    )


def test_the_channel_check_works_over_stdio(spec: SpecSet) -> None:
    """Spec-mandated (BEH-03, both transports): the stdio answer names stdio as its channel."""
    listing = {"tools": [STRICT], "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}
    lines = [
        stdio(Side.CLIENT, request_body("tools/list", 1)),
        stdio(Side.SERVER, result_body(listing, 1)),
        stdio(Side.CLIENT, request_body("tools/call", 2, {"name": "lookup", "arguments": {}})),
        stdio(Side.SERVER, result_body({"content": [text("region?")], "isError": True, "resultType": "complete"}, 2)),
    ]
    verdict = judge(log_of(lines), spec, "invalid_arguments_come_back_as_tool_errors")
    assert verdict.outcome is Outcome.PASSED and "(stdio)" in verdict.reason


# -- BEH-01 (with TOOL-12) ---------------------------------------------------------------------------
def test_an_unknown_tool_pass_names_the_protocol_channel_and_status(spec: SpecSet) -> None:
    """Spec-mandated (BEH-01, TOOL-12): the status is recorded (200 and 400 both pass)."""
    for status in (200, 400):
        answer = failing("tools/call", {"name": "nope"}, -32602, status=status, probe={"name": "unknown-tool"})
        verdict = judge(log_of(answer), spec, "unknown_tools_get_invalid_params")
        assert verdict.outcome is Outcome.PASSED
        assert f"protocol error -32602 (HTTP {status})" in verdict.reason
        assert verdict.requirements == ("TOOL-12", "BEH-01")


def test_an_unknown_tool_served_as_a_plain_success_fails_beh_01(spec: SpecSet) -> None:
    """Spec-mandated (BEH-01): the worst channel — as if the tool existed."""
    served = call("nope", {}, {"content": [text("done")]}, probe={"name": "unknown-tool", "invalid": True})
    verdict = judge(log_of(served), spec, "unknown_tools_get_invalid_params")
    assert verdict.outcome is Outcome.FAILED and "served as if the tool existed" in verdict.reason


def test_an_unknown_tool_answered_500_fails_as_a_server_error(spec: SpecSet) -> None:
    """Spec-mandated (BEH-01): a 5xx is no answer on either channel."""
    crashed = failing("tools/call", {"name": "nope"}, -32603, status=500, probe={"name": "unknown-tool"})
    verdict = judge(log_of(crashed), spec, "unknown_tools_get_invalid_params")
    assert verdict.outcome is Outcome.FAILED and "server error" in verdict.reason


def test_an_unknown_tool_answered_with_a_crash_page_fails_http_07_not_beh_01(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-07): a text/plain 500 carries no JSON-RPC answer at all, so the channel
    check has nothing to judge and the content-type rule reports it (one finding, one check)."""
    body = request_body("tools/call", 4, {"name": "nope", "arguments": {}})
    crashed = http(
        body,
        b"Internal Server Error",
        status=500,
        headers=modern_headers(body),
        probe={"name": "unknown-tool", "invalid": True},
        response_headers={"content-type": "text/plain"},
    )
    assert judge(log_of(crashed), spec, "unknown_tools_get_invalid_params").outcome is Outcome.NOT_VERIFIED
    verdict = judge(log_of(crashed), spec, "request_answers_are_json_or_event_streams")
    assert verdict.outcome is Outcome.FAILED and "HTTP 500" in verdict.reason


def test_beh_01_is_not_verified_without_an_unknown_tool_call(spec: SpecSet) -> None:
    log = (tools_list([ADD]), call("add", {"a": 1, "b": 2}, {"content": [text("3")]}))
    assert outcome(spec, "unknown_tools_get_invalid_params", *log) is Outcome.NOT_VERIFIED


# -- TOOL-15 with --failing-tool ---------------------------------------------------------------------
FAILING = {"name": "failing-tool", "invalid": False}


def test_a_named_failing_tool_reported_as_is_error_passes_tool_15(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-15): the tool's own failure is a result with isError: true."""
    answer = call("explode", {}, {"content": [text("boom")], "isError": True}, probe=FAILING)
    verdict = judge(log_of(answer), spec, "tool_failures_are_results_with_is_error")
    assert verdict.outcome is Outcome.PASSED and "'explode' (--failing-tool)" in verdict.reason


def test_a_named_failing_tool_reported_as_internal_error_fails_tool_15(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-15): with the user's word that the tool failed, -32603 is the wrong channel."""
    answer = failing("tools/call", {"name": "explode", "arguments": {}}, -32603, probe=FAILING)
    verdict = judge(log_of(answer), spec, "tool_failures_are_results_with_is_error")
    assert verdict.outcome is Outcome.FAILED and "protocol error -32603 (HTTP 200)" in verdict.reason


def test_a_named_failing_tool_that_succeeds_leaves_tool_15_not_verified(spec: SpecSet) -> None:
    """Tool-defined: no failure happened, so there was no channel to observe."""
    answer = call("explode", {}, {"content": [text("fine today")]}, probe=FAILING)
    verdict = judge(log_of(answer), spec, "tool_failures_are_results_with_is_error")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "did not fail" in verdict.reason


def test_an_unknown_tool_is_error_is_no_tool_failure_for_tool_15(spec: SpecSet) -> None:
    """Tool-defined: an isError answer about a tool that does not exist says nothing about tool failures."""
    log = (tools_list([ADD]), call("nope", {}, {"content": [text("Unknown tool")], "isError": True}))
    assert outcome(spec, "tool_failures_are_results_with_is_error", *log) is Outcome.NOT_VERIFIED


# -- BEH-09 liveness ---------------------------------------------------------------------------------
def _probe(name: str, invalid: bool) -> dict[str, Any]:
    return {"name": name, "invalid": invalid}


def _list_result(ident: int) -> dict[str, Any]:
    return result_body({"tools": [], "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}, ident)


def test_a_request_served_after_hostile_input_passes_beh_09(spec: SpecSet) -> None:
    """Spec-mandated (BEH-09): the control after the hostile probe is served."""
    hostile = http(b'{"jsonrpc": "2.0", "id": 1,', error_body(-32700, ident=None), status=400,
                   probe=_probe("invalid-json", True))  # fmt: skip
    control = http(request_body("tools/list", 2), _list_result(2), probe=_probe("still-serving", False))
    assert outcome(spec, "hostile_input_leaves_the_server_serving", hostile, control) is Outcome.PASSED


def test_a_5xx_after_hostile_input_fails_beh_09(spec: SpecSet) -> None:
    """Spec-mandated (BEH-09): the next valid request meets a 5xx."""
    hostile = http(b"[]", error_body(-32600, ident=None), status=400, probe=_probe("batch", True))
    control = http(request_body("tools/list", 2), error_body(-32603, ident=None), status=500,
                   probe=_probe("still-serving", False))  # fmt: skip
    verdict = judge(log_of(hostile, control), spec, "hostile_input_leaves_the_server_serving")
    assert verdict.outcome is Outcome.FAILED
    assert "after the batch probe(s)" in verdict.reason and "HTTP 500" in verdict.reason


def test_calls_naming_something_are_no_liveness_control(spec: SpecSet) -> None:
    """Tool-defined: an unknown tool may fairly fail, so a call is never the control."""
    hostile = failing("tools/call", {"name": "nope"}, -32603, status=500, probe=_probe("unknown-tool", True))
    named = failing("tools/call", {"name": "nope2"}, -32603, status=500, probe=_probe("mcp-name-base64", False))
    verdict = judge(log_of(hostile, named), spec, "hostile_input_leaves_the_server_serving")
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_beh_09_liveness_is_not_verified_without_suite_probes(spec: SpecSet) -> None:
    """Tool-defined: passive traffic has no hostile probes to follow."""
    plain = answered("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"})
    assert outcome(spec, "hostile_input_leaves_the_server_serving", plain) is Outcome.NOT_VERIFIED
