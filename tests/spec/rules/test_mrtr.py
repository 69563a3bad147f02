"""Multi round-trip requests (MRTR-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Side
from tests.factories import (
    error_body,
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
from tests.spec.rules._capability_builders import answered, call, text

CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Which city?",
        "requestedSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
URL_ELICITATION = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/login"},
}
ACCEPT = {"action": "accept", "content": {"city": "Paris"}}
DONE = {"content": [text("sunny")]}


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


def params(name: str, arguments: Any, client_caps: Any = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "arguments": arguments, **extra}
    body["_meta"] = {CAPS_KEY: {"elicitation": {}} if client_caps is None else client_caps}
    return body


def asks(requests: Any = None, state: Any = "s-1", *, client_caps: Any = None, ident: Any = 1,
         name: str = "weather", arguments: Any = None, method: str = "tools/call") -> Any:  # fmt: skip
    """A request answered with an InputRequiredResult."""
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    call_params = params(name, {"day": "mon"} if arguments is None else arguments, client_caps)
    if method != "tools/call":
        call_params = {"_meta": call_params["_meta"]}
    return answered(method, call_params, result, ident=ident)


def retry(responses: Any = None, state: Any = "s-1", answer: Any = DONE, *, ident: Any = 2, name: str = "weather",
          arguments: Any = None, probe: Any = None) -> Any:  # fmt: skip
    extra: dict[str, Any] = {}
    if responses is not None:
        extra["inputResponses"] = responses
    if state is not None:
        extra["requestState"] = state
    body = request_body("tools/call", ident, params(name, {"day": "mon"} if arguments is None else arguments, **extra))
    if isinstance(answer, dict) and "code" in answer:
        response = error_body(answer["code"], "error", ident, answer.get("data"))
        return http(body, response, status=answer.get("status", 200), headers=modern_headers(body), probe=probe)
    result = answer if "resultType" in answer else {"resultType": "complete", **answer}
    return http(body, result_body(result, ident), headers=modern_headers(body), probe=probe)


# -- server shape rules --------------------------------------------------------------------------
def test_input_required_on_tools_call_passes_and_on_tools_list_fails_mrtr_01(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-01)."""
    assert outcome(spec, "input_required_only_answers_supported_methods", asks({"q": FORM})) is Outcome.PASSED
    listed = asks({"q": FORM}, method="tools/list")
    assert outcome(spec, "input_required_only_answers_supported_methods", listed) is Outcome.FAILED
    assert outcome(spec, "input_required_only_answers_supported_methods", call("t", {}, DONE)) is Outcome.NOT_VERIFIED


def test_input_required_results_must_ask_for_something_mrtr_02(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-02): at least one of inputRequests and requestState."""
    assert outcome(spec, "input_required_results_ask_for_something", asks(None, "s")) is Outcome.PASSED
    assert outcome(spec, "input_required_results_ask_for_something", asks(None, None)) is Outcome.FAILED
    assert outcome(spec, "input_required_results_ask_for_something", call("t", {}, DONE)) is Outcome.NOT_VERIFIED


def test_input_requests_are_embedded_requests_mrtr_03(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-03): no jsonrpc/id, a known method, a string requestState."""
    assert outcome(spec, "input_requests_are_well_formed", asks({"q": FORM, "r": {"method": "roots/list"}})) is (
        Outcome.PASSED
    )
    enveloped = asks({"q": {"jsonrpc": "2.0", "id": 7, **FORM}})
    verdict = judge(log_of(enveloped), spec, "input_requests_are_well_formed")
    assert verdict.outcome is Outcome.FAILED
    assert "id, jsonrpc" in verdict.reason
    assert outcome(spec, "input_requests_are_well_formed", asks({"q": {"method": "ping"}})) is Outcome.FAILED
    assert outcome(spec, "input_requests_are_well_formed", asks(None, 42)) is Outcome.FAILED
    assert outcome(spec, "input_requests_are_well_formed", call("t", {}, DONE)) is Outcome.NOT_VERIFIED


def test_duplicate_input_request_keys_fail_mrtr_04(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-04): duplicates are found in the raw JSON text."""
    assert outcome(spec, "input_request_keys_are_unique", asks({"q": FORM})) is Outcome.PASSED
    body = request_body("tools/call", 1, params("weather", {}))
    form = json.dumps(FORM)
    raw = ('{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", '
           f'"inputRequests": {{"q": {form}, "q": {form}}}}}}}').encode()  # fmt: skip
    duplicated = http(body, raw, headers=modern_headers(body))
    verdict = judge(log_of(duplicated), spec, "input_request_keys_are_unique")
    assert verdict.outcome is Outcome.FAILED
    assert "'q'" in verdict.reason
    assert outcome(spec, "input_request_keys_are_unique", asks(None, "s")) is Outcome.NOT_VERIFIED


def test_input_requests_stay_within_client_capabilities_mrtr_05(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-05, A14): elicitation {} covers form mode only."""
    assert outcome(spec, "input_requests_stay_within_client_capabilities", asks({"q": FORM})) is Outcome.PASSED
    url = asks({"q": URL_ELICITATION}, client_caps={"elicitation": {}})
    verdict = judge(log_of(url), spec, "input_requests_stay_within_client_capabilities")
    assert verdict.outcome is Outcome.FAILED
    assert "elicitation.url" in verdict.reason
    sampling = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5, "tools": []}}
    assert outcome(spec, "input_requests_stay_within_client_capabilities",
                   asks({"s": sampling}, client_caps={"sampling": {}})) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "input_requests_stay_within_client_capabilities",
                   asks({"r": {"method": "roots/list"}}, client_caps={})) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "input_requests_stay_within_client_capabilities", asks(None, "s")) is Outcome.NOT_VERIFIED


def test_missing_capabilities_get_minus_32021_mrtr_06(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-06): -32021 with data.requiredCapabilities and HTTP 400, never an impossible ask."""
    body = request_body("tools/call", 5, params("weather", {}, {}))
    data = {"requiredCapabilities": {"elicitation": {}}}
    good = http(body, error_body(-32021, "elicitation required", 5, data), status=400, headers=modern_headers(body),
                probe={"name": "mrtr-missing-capability"})  # fmt: skip
    assert outcome(spec, "missing_capabilities_get_minus_32021_or_a_completion", good) is Outcome.PASSED
    bare = http(body, error_body(-32021, "elicitation required", 5), status=400, headers=modern_headers(body))
    assert outcome(spec, "missing_capabilities_get_minus_32021_or_a_completion", bare) is Outcome.FAILED
    impossible = asks({"q": FORM}, client_caps={})
    assert outcome(spec, "missing_capabilities_get_minus_32021_or_a_completion", impossible) is Outcome.FAILED
    assert outcome(spec, "missing_capabilities_get_minus_32021_or_a_completion", asks({"q": FORM})) is (
        Outcome.NOT_VERIFIED
    )


def test_retired_elicitation_mechanisms_fail_mrtr_16(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-16): no server-sent elicitation requests, elicitationId, or -32042 in 2026."""
    assert outcome(spec, "retired_elicitation_mechanisms_are_not_used", asks({"q": URL_ELICITATION})) is (
        Outcome.PASSED
    )
    with_id = {"method": "elicitation/create", "params": {**URL_ELICITATION["params"], "elicitationId": "e1"}}
    assert outcome(spec, "retired_elicitation_mechanisms_are_not_used", asks({"q": with_id})) is Outcome.FAILED
    client = stdio(Side.CLIENT, request_body("tools/call", 1, {"name": "weather"}))
    server = stdio(Side.SERVER, {"jsonrpc": "2.0", "id": "e", **FORM})
    assert outcome(spec, "retired_elicitation_mechanisms_are_not_used", client, server) is Outcome.FAILED
    assert outcome(spec, "retired_elicitation_mechanisms_are_not_used", call("t", {}, DONE)) is Outcome.NOT_VERIFIED
    old = legacy_session(capabilities={"tools": {}})
    assert outcome(spec, "retired_elicitation_mechanisms_are_not_used", *old) is Outcome.NOT_APPLICABLE


def test_elicitation_requests_are_well_formed_mrtr_17(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-17)."""
    assert outcome(spec, "elicitation_requests_are_well_formed", asks({"q": FORM, "u": URL_ELICITATION})) is (
        Outcome.PASSED
    )
    no_schema = {"method": "elicitation/create", "params": {"message": "Name?"}}
    assert outcome(spec, "elicitation_requests_are_well_formed", asks({"q": no_schema})) is Outcome.FAILED
    bad_url = {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "not a url"}}
    verdict = judge(log_of(asks({"u": bad_url})), spec, "elicitation_requests_are_well_formed")
    assert verdict.outcome is Outcome.FAILED
    assert "not a valid URL" in verdict.reason
    assert outcome(spec, "elicitation_requests_are_well_formed", asks(None, "s")) is Outcome.NOT_VERIFIED


# -- server answers to retries -------------------------------------------------------------------
def test_incomplete_retries_get_a_new_input_required_result_mrtr_12(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-12)."""
    again = {"resultType": "input_required", "inputRequests": {"q": FORM}, "requestState": "s-2"}
    assert outcome(spec, "incomplete_retries_get_a_new_input_required_result", asks({"q": FORM}),
                   retry({}, answer=again)) is Outcome.PASSED  # fmt: skip
    assert outcome(spec, "incomplete_retries_get_a_new_input_required_result", asks({"q": FORM}),
                   retry({}, answer={"code": -32602})) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "incomplete_retries_get_a_new_input_required_result", asks({"q": FORM}),
                   retry({"q": ACCEPT})) is Outcome.NOT_VERIFIED  # fmt: skip


def test_extra_input_responses_are_ignored_mrtr_13(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-13)."""
    extra = {"q": ACCEPT, "unasked": ACCEPT}
    assert outcome(spec, "extra_input_responses_are_ignored", asks({"q": FORM}), retry(extra)) is Outcome.PASSED
    assert outcome(spec, "extra_input_responses_are_ignored", asks({"q": FORM}),
                   retry(extra, answer={"code": -32602})) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "extra_input_responses_are_ignored", asks({"q": FORM}), retry({"q": ACCEPT})) is (
        Outcome.NOT_VERIFIED
    )


def test_malformed_input_responses_get_invalid_params_mrtr_14(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-14)."""
    probe = {"name": "mrtr-malformed-responses", "invalid": True}
    assert outcome(spec, "malformed_input_responses_get_invalid_params", asks({"q": FORM}),
                   retry("oops", answer={"code": -32602, "status": 400}, probe=probe)) is Outcome.PASSED  # fmt: skip
    original = asks({"q": FORM})
    wrong_shape = retry({"q": {"action": "maybe"}})
    verdict = judge(log_of(original, wrong_shape), spec, "malformed_input_responses_get_invalid_params")
    assert verdict.outcome is Outcome.FAILED
    assert "ElicitResult" in verdict.reason
    assert outcome(spec, "malformed_input_responses_get_invalid_params", asks({"q": FORM}),
                   retry("oops", answer={"code": -32603})) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "malformed_input_responses_get_invalid_params", asks({"q": FORM}), retry({"q": ACCEPT})) is (
        Outcome.NOT_VERIFIED
    )


def test_tampered_request_state_is_rejected_mrtr_15(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-15): never silently completed."""
    original = asks({"q": FORM})
    tampered = retry({"q": ACCEPT}, state="s-X", probe={"name": "mrtr-tampered-state", "invalid": True})
    assert outcome(spec, "tampered_request_state_is_rejected", original, tampered) is Outcome.FAILED
    original = asks({"q": FORM})
    refused = retry({"q": ACCEPT}, state="s-X", answer={"code": -32602})
    assert outcome(spec, "tampered_request_state_is_rejected", original, refused) is Outcome.PASSED
    assert outcome(spec, "tampered_request_state_is_rejected", asks({"q": FORM}), retry({"q": ACCEPT})) is (
        Outcome.NOT_VERIFIED
    )


# -- client rules --------------------------------------------------------------------------------
def test_retries_echo_request_state_exactly_mrtr_07(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-07)."""
    assert outcome(spec, "retries_echo_request_state_exactly", asks({"q": FORM}), retry({"q": ACCEPT})) is (
        Outcome.PASSED
    )
    assert outcome(spec, "retries_echo_request_state_exactly", asks({"q": FORM}),
                   retry({"q": ACCEPT}, state="s-1 ")) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "retries_echo_request_state_exactly", asks({"q": FORM}, state=None),
                   retry({"q": ACCEPT}, state="invented")) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "retries_echo_request_state_exactly", call("t", {}, DONE)) is Outcome.NOT_VERIFIED


def test_tampering_probes_are_not_held_against_the_client(spec: SpecSet) -> None:
    """Tool-defined: the suite's deliberately altered retries judge the server only."""
    original = asks({"q": FORM})
    tampered = retry({"q": ACCEPT}, state="s-X", probe={"name": "mrtr-tampered-state", "invalid": True})
    assert outcome(spec, "retries_echo_request_state_exactly", original, tampered) is Outcome.NOT_VERIFIED


def test_retries_use_a_fresh_id_mrtr_08(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-08)."""
    assert outcome(spec, "retries_use_a_fresh_id", asks({"q": FORM}), retry({"q": ACCEPT})) is Outcome.PASSED
    assert outcome(spec, "retries_use_a_fresh_id", asks({"q": FORM}, ident=9), retry({"q": ACCEPT}, ident=9)) is (
        Outcome.FAILED
    )
    assert outcome(spec, "retries_use_a_fresh_id", asks({"q": FORM})) is Outcome.NOT_VERIFIED


def test_retries_repeat_the_original_request_mrtr_09(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-09, inferred)."""
    assert outcome(spec, "retries_repeat_the_original_request", asks({"q": FORM}), retry({"q": ACCEPT})) is (
        Outcome.PASSED
    )
    original = asks({"q": FORM})
    changed = retry({"q": ACCEPT}, arguments={"day": "tue"})
    verdict = judge(log_of(original, changed), spec, "retries_repeat_the_original_request")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.severity.value == "should"
    assert outcome(spec, "retries_repeat_the_original_request", asks({"q": FORM})) is Outcome.NOT_VERIFIED


def test_input_responses_match_their_requests_mrtr_10(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-10)."""
    roots = {"method": "roots/list"}
    both = {"q": ACCEPT, "r": {"roots": [{"uri": "file:///home"}]}}
    assert outcome(spec, "input_responses_match_their_requests", asks({"q": FORM, "r": roots}), retry(both)) is (
        Outcome.PASSED
    )
    wrong = {"q": ACCEPT, "r": {"action": "accept"}}
    assert outcome(spec, "input_responses_match_their_requests", asks({"q": FORM, "r": roots}), retry(wrong)) is (
        Outcome.FAILED
    )
    assert outcome(spec, "input_responses_match_their_requests", asks(None, "s"), retry(None, "s")) is (
        Outcome.NOT_VERIFIED
    )


def test_request_state_stays_with_its_request_mrtr_11(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-11): a parallel call of another tool must not carry the state."""
    assert outcome(spec, "request_state_stays_with_its_request", asks({"q": FORM}), retry({"q": ACCEPT})) is (
        Outcome.PASSED
    )
    original = asks({"q": FORM})
    elsewhere = retry({"q": ACCEPT}, name="forecast")
    verdict = judge(log_of(original, elsewhere), spec, "request_state_stays_with_its_request")
    assert verdict.outcome is Outcome.FAILED
    assert "weather" in verdict.reason
    assert outcome(spec, "request_state_stays_with_its_request", retry({"q": ACCEPT})) is Outcome.NOT_VERIFIED


# -- 2025 ----------------------------------------------------------------------------------------
def test_url_elicitation_errors_list_url_elicitations_mrtr_18(spec: SpecSet) -> None:
    """Spec-mandated (MRTR-18): 2025-11-25 only."""
    init = legacy_session(capabilities={"tools": {}})
    item = {"mode": "url", "message": "Sign in", "url": "https://example.com/a", "elicitationId": "e1"}

    def error(elicitations: Any) -> Any:
        data = {"elicitations": elicitations}
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32042, "message": "URL elicitation required", "data": data},
        }
        return legacy_call("tools/call", {"name": "t"}, body)

    assert outcome(spec, "url_elicitation_errors_list_url_elicitations", *init, error([item])) is Outcome.PASSED
    no_id = {key: value for key, value in item.items() if key != "elicitationId"}
    assert outcome(spec, "url_elicitation_errors_list_url_elicitations", *init, error([no_id])) is Outcome.FAILED
    assert outcome(spec, "url_elicitation_errors_list_url_elicitations", *init, error([])) is Outcome.FAILED
    assert outcome(spec, "url_elicitation_errors_list_url_elicitations", *init) is Outcome.NOT_VERIFIED
    assert outcome(spec, "url_elicitation_errors_list_url_elicitations", call("t", {}, DONE)) is Outcome.NOT_APPLICABLE
