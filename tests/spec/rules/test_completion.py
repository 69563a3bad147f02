"""Completion (COMP-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import judge, log_of
from tests.spec.rules._capability_builders import SUMMARIZE, answered, caps, failing, prompts_list

PARAMS = {"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "text", "value": "he"}}


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


def completed(values: list[Any], params: Any = None, **extra: Any) -> Any:
    return answered("completion/complete", params or PARAMS, {"completion": {"values": values, **extra}})


def test_completions_served_with_the_capability_pass_comp_01(spec: SpecSet) -> None:
    """Spec-mandated (COMP-01)."""
    assert outcome(spec, "servers_serving_completions_declare_completions", caps({"completions": {}}),
                   completed(["hello"])) is Outcome.PASSED  # fmt: skip
    assert outcome(spec, "servers_serving_completions_declare_completions", caps(), completed(["hello"])) is (
        Outcome.FAILED
    )
    assert outcome(spec, "servers_serving_completions_declare_completions", completed(["hello"])) is (
        Outcome.NOT_VERIFIED
    )


def test_completion_without_the_capability_is_method_not_found_comp_02(spec: SpecSet) -> None:
    """Spec-mandated (COMP-02, A12): -32601, with HTTP 404 in 2026."""
    good = failing("completion/complete", PARAMS, -32601, "Method not found", status=404)
    assert outcome(spec, "completion_without_the_capability_is_method_not_found", caps(), good) is Outcome.PASSED
    wrong_status = failing("completion/complete", PARAMS, -32601, "Method not found", status=200)
    verdict = judge(log_of(caps(), wrong_status), spec, "completion_without_the_capability_is_method_not_found")
    assert verdict.outcome is Outcome.FAILED
    assert "404" in verdict.reason
    wrong_code = failing("completion/complete", PARAMS, -32602, status=400)
    assert outcome(spec, "completion_without_the_capability_is_method_not_found", caps(), wrong_code) is Outcome.FAILED
    declared = caps({"completions": {}})
    assert outcome(spec, "completion_without_the_capability_is_method_not_found", declared, completed(["x"])) is (
        Outcome.NOT_VERIFIED
    )


def test_completion_request_shapes_are_judged_by_comp_03(spec: SpecSet) -> None:
    """Spec-mandated (COMP-03)."""
    assert outcome(spec, "completion_requests_match_the_schema", completed(["x"])) is Outcome.PASSED
    bad = completed(["x"], {"ref": {"type": "ref/tool", "name": "add"}, "argument": {"name": "a", "value": 1}})
    assert outcome(spec, "completion_requests_match_the_schema", bad) is Outcome.FAILED
    assert outcome(spec, "completion_requests_match_the_schema", caps()) is Outcome.NOT_VERIFIED


def test_completion_result_shapes_are_judged_by_comp_04(spec: SpecSet) -> None:
    """Spec-mandated (COMP-04): at most 100 string values."""
    assert outcome(spec, "completion_results_match_the_schema", completed(["a", "b"], total=2, hasMore=False)) is (
        Outcome.PASSED
    )
    too_many = completed([str(n) for n in range(101)])
    verdict = judge(log_of(too_many), spec, "completion_results_match_the_schema")
    assert verdict.outcome is Outcome.FAILED
    assert "result.completion.values" in verdict.reason
    assert outcome(spec, "completion_results_match_the_schema", completed([1])) is Outcome.FAILED
    assert outcome(spec, "completion_results_match_the_schema", caps()) is Outcome.NOT_VERIFIED


def test_completion_totals_cover_the_values_comp_05(spec: SpecSet) -> None:
    """Spec-mandated (COMP-05, inferred)."""
    assert outcome(spec, "completion_totals_cover_the_values", completed(["a"], total=10)) is Outcome.PASSED
    assert outcome(spec, "completion_totals_cover_the_values", completed(["a", "b"], total=1)) is Outcome.FAILED
    assert outcome(spec, "completion_totals_cover_the_values", completed(["a"])) is Outcome.NOT_VERIFIED


def test_completion_errors_use_fitting_codes_comp_06(spec: SpecSet) -> None:
    """Spec-mandated (COMP-06): unknown prompt -> -32602, internal failure -> -32603."""
    unknown = {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}
    listed = prompts_list([SUMMARIZE])
    assert outcome(spec, "completion_errors_use_fitting_codes", listed,
                   failing("completion/complete", unknown, -32602)) is Outcome.PASSED  # fmt: skip
    probe = {"name": "completion-unknown-prompt"}
    served = answered("completion/complete", unknown, {"completion": {"values": []}}, probe=probe)
    assert outcome(spec, "completion_errors_use_fitting_codes", listed, served) is Outcome.FAILED
    hidden = answered("completion/complete", unknown, {"completion": {"values": ["x"]}})
    assert outcome(spec, "completion_errors_use_fitting_codes", listed, hidden) is Outcome.NOT_VERIFIED
    assert outcome(spec, "completion_errors_use_fitting_codes",
                   failing("completion/complete", PARAMS, 42, "boom")) is Outcome.FAILED  # fmt: skip
    assert outcome(spec, "completion_errors_use_fitting_codes", listed, completed(["x"])) is Outcome.NOT_VERIFIED
