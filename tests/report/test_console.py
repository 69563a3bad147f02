"""The terminal layout: sections in order, not-applicable left out, server text made harmless."""

from __future__ import annotations

from dataclasses import replace

from mcp_assay.report.console import printable, render_text, sections, summary_lines
from mcp_assay.report.model import FailOn
from tests.report.sample import (
    assert_golden,
    failed_must,
    failed_should,
    not_applicable,
    passed,
    sample_report,
    with_reason,
)


def test_terminal_report_matches_its_golden_file() -> None:
    """Tool-defined: the plain-text layout of the sample report is stable."""
    assert_golden("report.txt", render_text(sample_report()))


def test_sections_come_in_the_documented_order() -> None:
    """Tool-defined: FAILED, NOT VERIFIED, SHOULD, NOTES, PASSED, then the summary and verdict."""
    text = render_text(sample_report())
    order = ["FAILED (1)", "NOT VERIFIED (1)", "SHOULD (1)", "NOTES (1)", "PASSED (2)", "Summary", "Verdict:"]
    positions = [text.index(heading) for heading in order]
    assert positions == sorted(positions)


def test_not_applicable_results_are_omitted_but_counted_in_the_summary() -> None:
    """Tool-defined: a requirement the revision does not have is not a result."""
    text = " ".join(render_text(sample_report()).split())
    assert not_applicable().title not in text
    assert "(1 not applicable to this traffic, omitted)" in text


def test_empty_sections_are_not_printed() -> None:
    """Tool-defined: a report with only a pass shows PASSED and nothing else."""
    text = render_text(sample_report(results=[passed()]))
    assert "PASSED (1)" in text
    for heading in ("FAILED (", "NOT VERIFIED (", "SHOULD (", "NOTES ("):
        assert heading not in text
    assert "Verdict: conformant to 2026-07-28" in text


def test_fail_on_should_moves_should_findings_into_failed() -> None:
    """Tool-defined: with --fail-on should a SHOULD-level finding decides the verdict."""
    keyed = {key: results for key, _, _, results in sections(sample_report(FailOn.SHOULD))}
    assert {r.check for r in keyed["failed"]} == {failed_must().check, failed_should().check}
    assert keyed["recommended"] == []
    assert len(keyed["notes"]) == 1


def test_fail_on_never_keeps_must_failures_in_failed() -> None:
    """Tool-defined: --fail-on never silences the exit code, not the verdict."""
    report = sample_report(FailOn.NEVER)
    keyed = {key: results for key, _, _, results in sections(report)}
    assert [r.check for r in keyed["failed"]] == [failed_must().check]
    assert report.verdict()[0] == "not-conformant"
    assert report.exit_code() == 0
    assert "FAILED (1)" in render_text(report)


def test_control_characters_from_the_server_never_reach_the_terminal() -> None:
    """Tool-defined: an ANSI escape in a reason is shown as text, not executed."""
    report = sample_report(results=[with_reason(failed_must(), "boom \x1b[2J\x1b]0;owned\x07 \u202egnp.exe")])
    text = render_text(report)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b[2J" in text
    assert "\\u202e" in text


def test_printable_escapes_controls_and_keeps_ordinary_text() -> None:
    """Tool-defined: printable() leaves text alone and escapes only unsafe code points."""
    assert printable("tools/list → 200 · ok") == "tools/list → 200 · ok"
    assert printable("a\x00b\x7fc\ud800") == "a\\x00b\\x7fc\\ud800"
    assert printable("one\ntwo\tthree") == "one\ntwo\tthree"
    assert printable("one\ntwo\tthree", newlines=False) == "one two three"


def test_more_occurrences_than_evidence_are_announced() -> None:
    """Tool-defined: the terminal says how many violations it does not show."""
    result = replace(failed_must(), violations=7)
    text = render_text(sample_report(results=[result]))
    assert "… 5 more occurrence(s) in the JSON report" in text


def test_summary_lines_match_the_report_counts() -> None:
    """Tool-defined: the summary is built from Report.counts()."""
    counts_line, applied_line = summary_lines(sample_report())
    assert counts_line == "2 passed  1 failed  1 should  1 not verified  1 note"
    assert applied_line.startswith("6 checks applied to 17 messages in 9 exchanges, in 412 ms")


def test_a_pass_tagged_explain_shows_its_reason_and_other_passes_do_not() -> None:
    """Tool-defined: an explained pass (e.g. which error channel a server used) keeps its reason visible."""
    explained = replace(passed(), reason="unknown tool 'x': protocol error -32602 (HTTP 200)", tags=("explain",))
    silent = replace(passed(), check="other", title="Another pass", reason="14 messages judged")
    text = render_text(sample_report(results=[explained, silent]))
    assert "protocol error -32602 (HTTP 200)" in text
    assert "14 messages judged" not in text


def test_a_reaction_to_an_injected_fault_says_injected() -> None:
    """Tool-defined: the terminal report tags each result with where its evidence came from."""
    from dataclasses import replace

    from mcp_assay.report.console import render_text
    from mcp_assay.vocabulary.verdicts import Source
    from tests.report.sample import failed_must, sample_report

    reaction = replace(failed_must(), source=Source.INJECTED)
    assert "· injected]" in render_text(sample_report(results=[reaction]))
