"""A report of a run that tested both revisions: every format says so, and groups results by revision.

The sample (:func:`tests.report.sample.eras_report`) has RPC-15 failing in 2026-07-28 and passing in
2025-11-25, so the one requirement must show once per revision everywhere: in the per-requirement
merge, the verdict sentence, the JSON, each writer's grouping, and the baseline's matching.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from mcp_assay.report.baseline import apply_baseline, baseline_text, load_baseline
from mcp_assay.report.console import by_area, render_text
from mcp_assay.report.html import render_html
from mcp_assay.report.jsonreport import render_json
from mcp_assay.report.junit import render_junit
from mcp_assay.report.markdown import render_markdown
from mcp_assay.report.model import FailOn, Report, merge_reports
from mcp_assay.report.sarif import render_sarif
from mcp_assay.report.testanything import render_tap
from mcp_assay.vocabulary.verdicts import Outcome
from tests.report.sample import assert_golden, eras_report, failed_must, sample_report

MODERN, LEGACY = "2026-07-28", "2025-11-25"


def test_every_writer_matches_its_golden_file_for_a_run_over_both_revisions() -> None:
    """Tool-defined: the layouts of a two-revision report are stable (update them deliberately)."""
    report = eras_report()
    assert_golden("report-eras.txt", render_text(report))
    assert_golden("report-eras.md", render_markdown(report))
    assert_golden("report-eras.junit.xml", render_junit(report))
    assert_golden("report-eras.tap", render_tap(report))
    assert_golden("report-eras.json", render_json(report))


def test_the_heading_and_the_verdict_name_both_revisions_tested() -> None:
    """Tool-defined: the header says both revisions were tested; the verdict lists violations per revision."""
    report = eras_report()
    assert report.title == f"MCP conformance report — {MODERN} and {LEGACY}"
    assert report.revision is None
    assert report.verdict() == ("not-conformant", f"not conformant — 1 requirement violated ({MODERN}: RPC-15).")
    passing = eras_report(results=[replace(failed_must(), outcome=Outcome.PASSED, revision=LEGACY)])
    assert passing.verdict()[1].startswith(f"conformant to {MODERN} and {LEGACY}")
    for render in (render_text, render_markdown, render_html, render_tap):
        assert f"{MODERN} and {LEGACY}" in render(report), render.__name__


def test_a_must_failure_in_the_older_revision_alone_decides_the_exit_code() -> None:
    """Tool-defined: the exit code counts a MUST failure in any revision the run tested."""
    only_legacy = eras_report(
        results=[replace(failed_must(), revision=LEGACY), replace(failed_must(), outcome=Outcome.PASSED)]
    )
    assert only_legacy.exit_code() == 1
    assert only_legacy.violated_by_revision() == {LEGACY: ["RPC-15"]}


def test_a_requirement_binding_both_revisions_has_a_status_per_revision() -> None:
    """Tool-defined: RPC-15 failed in 2026-07-28 and passed in 2025-11-25 is two statuses, newest first."""
    statuses = [status for status in eras_report().requirements() if status.id == "RPC-15"]
    assert [(status.revision, status.outcome) for status in statuses] == [
        (MODERN, Outcome.FAILED),
        (LEGACY, Outcome.PASSED),
    ]


def test_results_are_grouped_by_revision_newest_first_only_when_there_are_several() -> None:
    """Tool-defined: with two revisions each group is headed "revision · area"; with one, by area alone."""
    report = eras_report()
    groups = list(by_area(report.applied(), report.result_revisions()))
    assert groups == [f"{MODERN} · JSON-RPC", f"{LEGACY} · JSON-RPC", f"{LEGACY} · Tools"]
    assert list(by_area(sample_report().applied(), sample_report().result_revisions())) == ["JSON-RPC", "Tools"]


def test_json_round_trips_each_results_revision_and_the_revisions_tested() -> None:
    """Tool-defined: `mcp-assay report` re-renders a two-revision report exactly."""
    report = eras_report()
    data = json.loads(render_json(report))
    assert data["revisions"]["tested"] == [MODERN, LEGACY] and data["revisions"]["under_test"] is None
    assert {item["revision"] for item in data["results"]} == {MODERN, LEGACY}
    again = Report.from_json(data)
    assert again.tested == report.tested
    assert [result.revision for result in again.results] == [result.revision for result in report.results]
    assert render_text(again) == render_text(report)


def test_a_report_written_before_revisions_were_per_result_is_still_read() -> None:
    """Tool-defined: an older JSON report (one ``under_test``, no ``revision`` per result) reads as before."""
    data = json.loads(render_json(sample_report()))
    data["revisions"].pop("tested")
    for item in data["results"]:
        item.pop("revision")
    for item in data["requirements"]:
        item.pop("revision")
    old = Report.from_json(data)
    assert old.tested == [MODERN] and old.revision == MODERN
    assert all(result.revision is None for result in old.results)


def test_junit_tap_html_and_sarif_keep_the_two_revisions_of_one_check_apart() -> None:
    """Tool-defined: a check reached in two revisions is two test cases, points, anchors and alerts."""
    report = eras_report()
    junit = render_junit(report)
    assert f"[active, {MODERN}]" in junit and f"[active, {LEGACY}]" in junit
    tap = render_tap(report)
    assert f"{MODERN} · JSON-RPC: Every message declares" in tap and f"{LEGACY} · JSON-RPC: Every message" in tap
    html = render_html(report)
    assert f'id="message_declares_jsonrpc_2_0-active-{MODERN}"' in html
    assert f'id="message_declares_jsonrpc_2_0-active-{LEGACY}"' in html
    report_should = eras_report(fail_on=FailOn.SHOULD)
    sarif = json.loads(render_sarif(report_should))
    prints = [result["partialFingerprints"]["mcpAssayResult/v1"] for result in sarif["runs"][0]["results"]]
    assert len(prints) == len(set(prints)) == 2
    assert sarif["runs"][0]["properties"]["tested"] == [MODERN, LEGACY]


def test_a_baseline_entry_for_one_revision_accepts_only_that_revisions_failure(tmp_path: Path) -> None:
    """Tool-defined: ``revision: 2025-11-25`` (unquoted: YAML reads a date) does not excuse the 2026 failure."""
    path = tmp_path / "baseline.yaml"
    path.write_text(
        "schema: mcp-assay.baseline/1\nknown:\n"
        "  - check: undefined_method_is_answered_with_method_not_found\n"
        "    revision: 2025-11-25\n    reason: upstream bug\n",
        encoding="utf-8",
    )
    baseline = load_baseline(path, checks={"undefined_method_is_answered_with_method_not_found"}, requirements=())
    report = eras_report()
    apply_baseline(report, baseline)
    failed = [result for result in report.results if result.outcome is Outcome.FAILED and result.check.startswith("u")]
    assert [(result.revision, result.known) for result in failed] == [(MODERN, None)]
    assert report.exit_code() == 1
    assert report.baseline is not None and report.baseline.stale  # it passes in 2025-11-25: stale


def test_write_baseline_names_the_revision_of_each_failure() -> None:
    """Tool-defined: a written baseline entry is narrowed to the revision its failure was reached in."""
    text = baseline_text(eras_report().results)
    assert f'    revision: "{MODERN}"' in text
    assert text.count("- check: undefined_method_is_answered_with_method_not_found") == 1


def test_merging_keeps_a_checks_results_of_different_revisions_apart() -> None:
    """Tool-defined: merge keys on check, source and revision."""
    report = eras_report()
    merged = merge_reports([report, eras_report()])
    assert len(merged.results) == len(report.results)
    assert merged.tested == [MODERN, LEGACY]
