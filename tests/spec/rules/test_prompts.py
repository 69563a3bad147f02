"""Prompts (PRM-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import judge, log_of
from tests.spec.rules._capability_builders import SUMMARIZE, answered, caps, failing, prompts_list, text


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


def got(name: Any, arguments: Any, messages: list[Any], **kw: Any) -> Any:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return answered("prompts/get", params, {"description": "d", "messages": messages}, **kw)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def test_prompts_served_with_the_capability_pass_prm_01(spec: SpecSet) -> None:
    """Spec-mandated (PRM-01)."""
    assert outcome(spec, "servers_serving_prompts_declare_prompts", caps(), prompts_list([SUMMARIZE])) is Outcome.PASSED
    assert outcome(spec, "servers_serving_prompts_declare_prompts", caps({}), prompts_list([])) is Outcome.FAILED
    assert outcome(spec, "servers_serving_prompts_declare_prompts", prompts_list([])) is Outcome.NOT_VERIFIED


def test_declared_prompts_must_be_listed_prm_02(spec: SpecSet) -> None:
    """Spec-mandated (PRM-02)."""
    assert outcome(spec, "declared_prompts_are_listed", caps(), prompts_list([])) is Outcome.PASSED
    assert outcome(spec, "declared_prompts_are_listed", caps(), failing("prompts/list", {}, -32603)) is Outcome.FAILED
    assert outcome(spec, "declared_prompts_are_listed", caps({}), failing("prompts/list", {}, -32601)) is (
        Outcome.NOT_APPLICABLE
    )


def test_prompt_listings_are_compared_for_prm_03(spec: SpecSet) -> None:
    """Spec-mandated (PRM-03)."""
    first, again = prompts_list([SUMMARIZE]), prompts_list([SUMMARIZE], ident=2)
    assert outcome(spec, "prompt_lists_do_not_depend_on_the_connection", first, again) is Outcome.PASSED
    gone = prompts_list([], ident=3)
    assert outcome(spec, "prompt_lists_do_not_depend_on_the_connection", first, gone) is Outcome.FAILED
    assert outcome(spec, "prompt_lists_do_not_depend_on_the_connection", first) is Outcome.NOT_VERIFIED


def test_prompt_list_shapes_are_judged_by_prm_04(spec: SpecSet) -> None:
    """Spec-mandated (PRM-04): argument required flags are booleans."""
    assert outcome(spec, "prompt_lists_match_the_schema", prompts_list([SUMMARIZE])) is Outcome.PASSED
    bad = prompts_list([{"name": "p", "arguments": [{"name": "a", "required": "yes"}]}])
    assert outcome(spec, "prompt_lists_match_the_schema", bad) is Outcome.FAILED
    assert outcome(spec, "prompt_lists_match_the_schema", caps()) is Outcome.NOT_VERIFIED


def test_prompt_get_arguments_are_strings_prm_05(spec: SpecSet) -> None:
    """Spec-mandated (PRM-05): argument values are strings only."""
    assert (
        outcome(spec, "prompt_requests_carry_string_arguments", got("summarize", {"text": "x"}, [])) is Outcome.PASSED
    )
    numeric = got("summarize", {"count": 3}, [])
    verdict = judge(log_of(numeric), spec, "prompt_requests_carry_string_arguments")
    assert verdict.outcome is Outcome.FAILED
    assert "params.arguments.count" in verdict.reason
    assert outcome(spec, "prompt_requests_carry_string_arguments", prompts_list([])) is Outcome.NOT_VERIFIED


def test_prompt_results_are_judged_by_prm_06(spec: SpecSet) -> None:
    """Spec-mandated (PRM-06): role is user or assistant; content is one content block."""
    assert outcome(spec, "prompt_results_match_the_schema", got("s", None, [user(text("hi"))])) is Outcome.PASSED
    robot = got("s", None, [{"role": "system", "content": text("hi")}])
    assert outcome(spec, "prompt_results_match_the_schema", robot) is Outcome.FAILED
    listed = got("s", None, [user([text("hi")])])
    assert outcome(spec, "prompt_results_match_the_schema", listed) is Outcome.FAILED
    assert outcome(spec, "prompt_results_match_the_schema", prompts_list([])) is Outcome.NOT_VERIFIED


def test_unknown_prompts_get_invalid_params_prm_07(spec: SpecSet) -> None:
    """Spec-mandated (PRM-07)."""
    listed = prompts_list([SUMMARIZE])
    good = failing("prompts/get", {"name": "no_such_prompt"}, -32602)
    assert outcome(spec, "unknown_prompts_get_invalid_params", listed, good) is Outcome.PASSED
    wrong = failing("prompts/get", {"name": "no_such_prompt"}, -32603, probe={"name": "unknown-prompt"})
    assert outcome(spec, "unknown_prompts_get_invalid_params", wrong) is Outcome.FAILED
    assert outcome(spec, "unknown_prompts_get_invalid_params", listed, got("summarize", {"text": "x"}, [])) is (
        Outcome.NOT_VERIFIED
    )


def test_missing_required_arguments_get_invalid_params_prm_08(spec: SpecSet) -> None:
    """Spec-mandated (PRM-08): required comes from the captured prompts/list."""
    listed = prompts_list([SUMMARIZE])
    good = failing("prompts/get", {"name": "summarize", "arguments": {}}, -32602)
    assert outcome(spec, "missing_prompt_arguments_get_invalid_params", listed, good) is Outcome.PASSED
    served = got("summarize", {}, [user(text("Summarize: "))])
    verdict = judge(log_of(listed, served), spec, "missing_prompt_arguments_get_invalid_params")
    assert verdict.outcome is Outcome.FAILED
    assert "'text'" in verdict.reason
    complete = got("summarize", {"text": "x"}, [user(text("x"))])
    assert outcome(spec, "missing_prompt_arguments_get_invalid_params", listed, complete) is Outcome.NOT_VERIFIED


def test_internal_prompt_failures_are_judged_by_prm_09(spec: SpecSet) -> None:
    """Spec-mandated (PRM-09)."""
    assert outcome(spec, "failed_prompts_report_internal_errors", failing("prompts/get", {"name": "p"}, -32603)) is (
        Outcome.PASSED
    )
    assert outcome(spec, "failed_prompts_report_internal_errors", failing("prompts/get", {"name": "p"}, -32000)) is (
        Outcome.FAILED
    )
    assert outcome(spec, "failed_prompts_report_internal_errors", failing("prompts/get", {"name": "p"}, -32602)) is (
        Outcome.NOT_VERIFIED
    )


def test_prompt_media_needs_base64_and_a_mime_type_prm_10(spec: SpecSet) -> None:
    """Spec-mandated (PRM-10)."""
    good = got("p", None, [user({"type": "image", "data": "aGk=", "mimeType": "image/png"})])
    assert outcome(spec, "prompt_media_is_base64_with_a_mime_type", good) is Outcome.PASSED
    bad = got("p", None, [user({"type": "audio", "data": "aGk=", "mimeType": "wav"})])
    verdict = judge(log_of(bad), spec, "prompt_media_is_base64_with_a_mime_type")
    assert verdict.outcome is Outcome.FAILED
    assert "not a MIME type" in verdict.reason
    assert outcome(spec, "prompt_media_is_base64_with_a_mime_type", got("p", None, [user(text("x"))])) is (
        Outcome.NOT_VERIFIED
    )


def test_prompt_embedded_resources_are_complete_prm_11(spec: SpecSet) -> None:
    """Spec-mandated (PRM-11, A15): the mimeType the prompts page requires is checked (at SHOULD severity)."""
    good = got("p", None, [user({"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain",
                                                                  "text": "a"}})])  # fmt: skip
    assert outcome(spec, "prompt_embedded_resources_are_complete", good) is Outcome.PASSED
    bad = got("p", None, [user({"type": "resource", "resource": {"uri": "file:///a", "blob": "!!"}})])
    verdict = judge(log_of(bad), spec, "prompt_embedded_resources_are_complete")
    assert verdict.outcome is Outcome.FAILED
    assert "no mimeType" in verdict.reason and "blob" in verdict.reason
    assert verdict.severity.value == "should"
    assert outcome(spec, "prompt_embedded_resources_are_complete", got("p", None, [user(text("x"))])) is (
        Outcome.NOT_VERIFIED
    )
