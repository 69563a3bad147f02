"""The Report model: counts, verdict, exit code, per-requirement merge, and merging reports."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mcp_assay.report.about import Target
from mcp_assay.report.model import FailOn, Report, merge_reports, sort_results
from mcp_assay.vocabulary.verdicts import Evidence, Outcome, Severity, Source
from tests.report.sample import (
    failed_must,
    failed_should,
    info_note,
    not_applicable,
    not_verified,
    passed,
    passed_tools,
    sample_report,
)


def test_counts_split_failures_by_severity_and_fail_on() -> None:
    """Tool-defined: MUST failures count as failed, SHOULD ones as recommended, info as notes."""
    assert sample_report().counts() == {
        "passed": 2,
        "failed": 1,
        "recommended": 1,
        "notes": 1,
        "known": 0,
        "not_verified": 1,
        "not_applicable": 1,
    }
    should = sample_report(FailOn.SHOULD).counts()
    assert (should["failed"], should["recommended"], should["notes"]) == (2, 0, 1)


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [(FailOn.MUST, 1), (FailOn.SHOULD, 1), (FailOn.NEVER, 0)],
)
def test_exit_code_follows_fail_on_for_a_must_failure(fail_on: FailOn, expected: int) -> None:
    """Tool-defined: exit 1 when a failure at or above --fail-on exists."""
    assert sample_report(fail_on).exit_code() == expected


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [(FailOn.MUST, 0), (FailOn.SHOULD, 1), (FailOn.NEVER, 0)],
)
def test_exit_code_for_a_should_failure_depends_on_fail_on(fail_on: FailOn, expected: int) -> None:
    """Tool-defined: a SHOULD finding fails the run only with --fail-on should."""
    report = sample_report(fail_on, results=[failed_should(), passed()])
    assert report.exit_code() == expected


def test_an_informational_note_never_fails_the_run() -> None:
    """Tool-defined: notes stay notes even with --fail-on should."""
    report = sample_report(FailOn.SHOULD, results=[info_note(), passed()])
    assert report.exit_code() == 0
    assert report.verdict()[0] == "conformant"


def test_verdict_codes_cover_every_situation() -> None:
    """Tool-defined: not conformant, conformant in part, conformant, nothing verified."""
    assert sample_report().verdict() == ("not-conformant", "not conformant — 1 requirement violated (RPC-15).")
    assert sample_report(results=[passed(), not_verified()]).verdict()[0] == "conformant-in-part"
    assert sample_report(results=[passed(), not_applicable()]).verdict()[0] == "conformant"
    assert sample_report(results=[not_verified(), not_applicable()]).verdict()[0] == "nothing-verified"
    assert sample_report(results=[]).verdict()[0] == "nothing-verified"


def test_verdict_names_the_revision_under_test() -> None:
    """Tool-defined: a suite verdict says which revision it is about."""
    text = sample_report(results=[passed()]).verdict()[1]
    assert text.startswith("conformant to 2026-07-28")
    assert sample_report(results=[passed()], tested=[]).verdict()[1].startswith("conformant —")


def test_requirements_merge_failure_over_pass_across_sources() -> None:
    """Tool-defined: a requirement failed by any source is failed; sources are all listed."""
    active_pass = replace(failed_must(), outcome=Outcome.PASSED, evidence=(), source=Source.PASSIVE, check="other")
    report = sample_report(results=[active_pass, failed_must(), not_verified()])
    merged = {status.id: status for status in report.requirements()}
    assert merged["RPC-15"].outcome is Outcome.FAILED
    assert merged["RPC-15"].checks == ("other", failed_must().check)
    assert set(merged["RPC-15"].sources) == {Source.ACTIVE, Source.PASSIVE}
    assert merged["TOOL-02"].outcome is Outcome.NOT_VERIFIED


def test_merge_reports_combines_the_same_check_and_source() -> None:
    """Tool-defined: one check seen in two recordings is one result with both evidence sets."""
    first = sample_report(results=[replace(passed(), judged=3)])
    extra = Evidence(summary="line 9", exchange="x9")
    second = sample_report(
        results=[replace(passed(), outcome=Outcome.FAILED, judged=2, violations=1, evidence=(extra,))],
        target=Target(kind="recording", description="b.jsonl"),
    )
    merged = merge_reports([first, second])
    (result,) = merged.results
    assert result.outcome is Outcome.FAILED
    assert result.judged == 5
    assert result.evidence == (extra,)
    assert merged.target == Target(kind="merged", description="http://127.0.0.1:8000/mcp + b.jsonl")
    assert merged.revision == "2026-07-28"


def test_merge_reports_keeps_active_and_passive_results_apart() -> None:
    """Tool-defined: the same check from the suite and from traffic stays two results."""
    merged = merge_reports(
        [sample_report(results=[passed()]), sample_report(results=[replace(passed(), source=Source.ACTIVE)])]
    )
    assert sorted(result.source.value for result in merged.results) == ["active", "passive"]


def test_merge_reports_of_different_revisions_names_every_revision_tested() -> None:
    """Tool-defined: a merge of a 2026-07-28 run and a 2025-11-25 run tested both, newest first."""
    merged = merge_reports([sample_report(tested=["2025-11-25"]), sample_report()])
    assert merged.revision is None
    assert merged.tested == ["2026-07-28", "2025-11-25"]
    assert merged.title == "MCP conformance report — 2026-07-28 and 2025-11-25"
    assert merge_reports([sample_report(), sample_report(tested=[])]).tested == []
    with pytest.raises(ValueError):
        merge_reports([])


def test_sort_results_orders_by_area_then_requirement_number() -> None:
    """Tool-defined: RPC-9 comes before RPC-10 (numeric, not lexical)."""
    ten = replace(passed(), requirements=("RPC-10",), check="b")
    nine = replace(passed(), requirements=("RPC-9",), check="a")
    tools = passed_tools()
    assert [r.check for r in sort_results([tools, ten, nine])] == ["a", "b", tools.check]


def test_fail_on_counts_and_decides() -> None:
    """Tool-defined: decides() picks the FAILED section, counts() the exit code."""
    must, should, note = failed_must(), failed_should(), info_note()
    assert FailOn.MUST.decides(must) and not FailOn.MUST.decides(should)
    assert FailOn.SHOULD.decides(should) and not FailOn.SHOULD.decides(note)
    assert FailOn.NEVER.decides(must) and not FailOn.NEVER.counts(must)
    assert not FailOn.MUST.decides(passed())
    assert note.severity is Severity.INFO


def test_report_round_trips_through_json() -> None:
    """Tool-defined: from_json(to_json(report)) renders the same."""
    report = sample_report()
    again = Report.from_json(report.to_json())
    assert again.to_json() == report.to_json()
    assert again.results == report.results


@pytest.mark.parametrize(
    "data",
    [[], "text", {"schema": "something-else/1"}, {}],
)
def test_from_json_rejects_what_is_not_a_report(data: object) -> None:
    """Tool-defined: a JSON value that is not an mcp-assay report is a ValueError."""
    with pytest.raises(ValueError, match="not an mcp-assay report"):
        Report.from_json(data)  # type: ignore[arg-type]


def test_an_injected_source_survives_json_and_merges_by_requirement_with_the_others() -> None:
    """Tool-defined: the report says where evidence came from (observed, probed, injected); reports written
    before the injected source existed still read back."""
    reaction = replace(passed(), check="scratch_reaction", source=Source.INJECTED)
    probed = replace(passed(), check="scratch_probed", source=Source.ACTIVE)
    report = sample_report(results=[passed(), reaction, probed])
    again = Report.from_json(report.to_json())
    assert [result.source for result in again.results] == [Source.PASSIVE, Source.INJECTED, Source.ACTIVE]
    (status,) = [item for item in again.requirements() if item.id == passed().requirements[0]]
    assert set(status.sources) == {Source.PASSIVE, Source.INJECTED, Source.ACTIVE}
    old = report.to_json()
    old["results"] = [item for item in old["results"] if item["source"] != "injected"]
    assert {result.source for result in Report.from_json(old).results} == {Source.PASSIVE, Source.ACTIVE}


def test_traffic_left_unjudged_makes_a_passing_run_conformant_only_in_part() -> None:
    """A limit of our own (live judging fell behind) never becomes a pass; a failure still decides."""
    left = "92 exchange(s) were left unjudged live (judging did not keep up)"
    code, text = sample_report(results=[passed()], left_out=left).verdict()
    assert code == "conformant-in-part" and text.endswith(f"passed; {left}.")
    assert sample_report(results=[passed()]).verdict()[0] == "conformant"
    assert sample_report(left_out=left).verdict()[0] == "not-conformant"
    report = sample_report(results=[passed()], left_out=left)
    again = Report.from_json(report.to_json())
    assert again.left_out == left and again.verdict() == report.verdict()
    merged = merge_reports([report, sample_report(results=[passed()])])
    assert merged.verdict()[0] == "conformant-in-part" and left in (merged.left_out or "")
