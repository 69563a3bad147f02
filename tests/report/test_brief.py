"""The short terminal report: failures by cause with one line of evidence and a whole replay, one line per
SHOULD finding, one line of counts, the verdict last; every listing one ``--show`` away.

Tool-defined (issue 19, "say it in a screen").
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mcp_assay.report.brief import (
    causes,
    counts_line,
    is_observation,
    known_findings_hint,
    not_verified_reasons,
    parse_show,
    render_brief,
)
from mcp_assay.report.console import SHOW_ALL, render_text, replay_line
from mcp_assay.report.findings import finding_id
from mcp_assay.report.model import BaselineStatus
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Evidence, Outcome, Severity, Verdict
from tests.report.sample import (
    CURL,
    assert_golden,
    eras_report,
    failed_must,
    failed_should,
    info_note,
    not_verified,
    passed,
    sample_report,
)

OBSERVATION = "2025-11-25: observation (no server requirement applies): tools/list with Accept: text/html got 406"
CAPABILITIES = "capabilities per initialize (2025-11-25): prompts, resources, tools"
ACTION = "the target rate-limited the run 3 time(s); 4.0 s were spent waiting it out"


def _failure(check: str, requirement: str, *, reason: str, exchange: str, revision: str | None = None) -> Verdict:
    evidence = Evidence(summary=f"POST /mcp -> 400 ({check})", exchange=exchange, reproduction=f"curl {check}")
    return replace(
        failed_must(), check=check, title=f"{check} holds", requirements=(requirement,), reason=reason,
        evidence=(evidence,), revision=revision, violations=1,
    )  # fmt: skip


def test_the_short_report_matches_its_golden_file() -> None:
    assert_golden("report-brief.txt", render_brief(sample_report()))
    assert_golden("report-eras-brief.txt", render_brief(eras_report()))


def test_the_order_is_header_failures_should_counts_verdict_and_the_verdict_is_last() -> None:
    text = render_brief(sample_report())
    lines = text.rstrip().splitlines()
    header = lines[: lines.index("")]
    assert header[0].startswith("MCP conformance report") and len(header) <= 4 + 1  # + the action note
    order = ["FAILED (1)", "SHOULD (1)", "1 failed · 1 should · 2 passed", "Verdict: "]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert lines[-1].startswith("Verdict: not conformant")
    for listing in ("PASSED (", "NOT VERIFIED (", "NOTES (", "Summary"):
        assert listing not in text


def test_a_failure_shows_one_line_of_evidence_and_its_replay_whole_at_any_width() -> None:
    for width in (40, 80, 250):
        lines = render_brief(sample_report(), width).splitlines()
        assert CURL in lines[lines.index(next(line for line in lines if line.rstrip().endswith("replay:"))) + 1]
        full = render_text(sample_report(), width)
        assert f"          replay: {CURL}" in full.splitlines()


def test_should_findings_are_one_line_each_cut_to_the_width() -> None:
    should = [
        replace(failed_should(), check=f"c{n}", requirements=(f"RPC-{n}",), reason=f"r{n}", evidence=())
        for n in range(3)
    ]
    text = render_brief(sample_report(results=[*should, passed()]), 60)
    lines = [line for line in text.splitlines() if line.startswith("  ⚠ ")]
    assert len(lines) == 3 and all(len(line) <= 60 for line in lines)
    assert lines[0].startswith(f"  ⚠ {finding_id(should[0])} RPC-0  Error messages")


def test_results_sharing_an_exchange_a_reason_or_a_check_are_one_cause_naming_all_ids_and_revisions() -> None:
    a = _failure("a", "HTTP-09", reason="answered 400", exchange="h1", revision="2026-07-28")
    b = _failure("b", "RPC-09", reason="something else", exchange="h1", revision="2026-07-28")
    c = _failure("a", "HTTP-09", reason="answered 400 (and 2 more)", exchange="h7", revision="2025-11-25")
    d = _failure("d", "RPC-13", reason="answered 400", exchange="h9", revision="2025-11-25")
    e = _failure("e", "TOOL-05", reason="unrelated", exchange="h3", revision="2025-11-25")
    assert causes([a, b, c, d, e]) == [[a, b, c, d], [e]]
    report = sample_report(results=[a, b, c, d, e], tested=["2026-07-28", "2025-11-25"])
    text = render_brief(report, 200)
    assert "FAILED (5, 2 causes)" in text
    assert f"  ✗ {finding_id(a)} HTTP-09, RPC-09, RPC-13 · 2026-07-28, 2025-11-25  a holds (and 2 more checks)" in text
    assert f"  ✗ {finding_id(e)} TOOL-05 · 2025-11-25  e holds" in text


def test_observations_are_counted_and_action_notes_stay() -> None:
    report = sample_report(notes=[OBSERVATION, ACTION, CAPABILITIES])
    text = render_brief(report, 200)
    assert f"note      {ACTION}" in text
    assert OBSERVATION not in text and CAPABILITIES not in text
    assert "· 3 notes" in text  # the informational finding and the two observations
    listed = render_brief(report, 200, show=parse_show(["notes"]))
    assert OBSERVATION in listed and CAPABILITIES in listed and "NOTES (1)" in listed
    assert is_observation(CAPABILITIES) and is_observation(OBSERVATION) and not is_observation(ACTION)


def test_the_counts_line_gives_the_main_reasons_for_what_was_not_verified() -> None:
    unseen = [replace(not_verified(), check=f"u{n}", blocked_by=None, reason=f"no x{n} observed in the traffic")
              for n in range(4)]  # fmt: skip
    untried = replace(not_verified(), check="t", blocked_by=None, reason="the server lists no prompts")
    odd = replace(not_verified(), check="o", blocked_by=None, reason="something else entirely")
    report = sample_report(results=[*unseen, untried, not_verified(), odd, passed()], notes=[])
    assert not_verified_reasons(report.with_outcome(Outcome.NOT_VERIFIED))[0] == ("not seen in the traffic", 4)
    assert counts_line(report) == (
        "1 passed · 7 not verified (4 not seen in the traffic, 1 nothing on the server to try, "
        "1 blocked by an earlier failure, 1 other)"
    )


def test_show_names_the_listings_brought_back_and_all_is_the_full_listing() -> None:
    assert parse_show(["passed,not-verified", "notes"]) == {"passed", "not_verified", "notes"}
    assert parse_show(["all"]) == set(SHOW_ALL)
    with pytest.raises(ConfigError, match="unknown listing 'pased'"):
        parse_show(["pased"])
    report = sample_report()
    assert render_brief(report, show=SHOW_ALL) == render_text(report)
    some = render_brief(report, show=parse_show(["passed"]))
    assert "PASSED (2)" in some and "NOT VERIFIED (" not in some and "SHOULD (1)" in some


def test_the_known_findings_hint_names_a_command_that_works_only_when_the_run_failed(tmp_path: Path) -> None:
    report = sample_report()
    json_report = tmp_path / "my report.json"
    assert known_findings_hint(report, json_report=json_report)[-1] == (
        f"    mcp-assay report '{json_report}' --write-baseline mcp-assay-baseline.yaml"
    )
    (line,) = known_findings_hint(report)
    assert "add --write-baseline mcp-assay-baseline.yaml, give each a reason, then run with --baseline" in line
    (written,) = known_findings_hint(report, written=tmp_path / "b.yaml")
    assert f"{tmp_path / 'b.yaml'} lists these failures" in written
    kept = replace(report, baseline=BaselineStatus(path="ci/known.yaml", known=1))
    (line,) = known_findings_hint(kept)  # the baseline in use is never overwritten
    assert "--write-baseline ci/known.new.yaml" in line and "entries without a reason into ci/known.yaml" in line
    assert known_findings_hint(sample_report(results=[passed(), failed_should()])) == []
    assert known_findings_hint(replace(report, unjudged="nothing listens")) == []
    assert known_findings_hint(sample_report(results=[info_note(), failed_must()], fail_on=report.fail_on))


def test_a_replay_from_an_older_report_with_a_line_break_is_quoted_again_on_one_line() -> None:
    old = "curl -sS -X POST http://h/mcp --data-binary '{\"a\":\n1}'"
    assert replay_line(old) == "curl -sS -X POST http://h/mcp --data-binary $'{\"a\":\\n1}'"
    assert replay_line(CURL) == CURL
    assert "\n" not in replay_line('{"jsonrpc":"2.0",\n"id":1}')


def test_an_info_only_run_has_no_failure_section_and_no_hint() -> None:
    text = render_brief(sample_report(results=[passed(), replace(info_note(), severity=Severity.INFO)]))
    assert "FAILED" not in text and "known findings" not in text and "· 1 note" in text
