"""Known findings: a baseline accepts explained failures, fails on stale entries, and every writer shows both."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from mcp_assay.report import render
from mcp_assay.report.baseline import BASELINE_SCHEMA, apply_baseline, baseline_text, load_baseline, read_baseline
from mcp_assay.report.model import FailOn, Report
from mcp_assay.spec.engine import registered_checks
from mcp_assay.vocabulary.errors import ConfigError
from tests.report.sample import sample_report

CHECKS = {
    "undefined_method_is_answered_with_method_not_found",
    "error_message_is_a_short_sentence",
    "message_declares_jsonrpc_2_0",
}
REQUIREMENTS = {"RPC-15", "RPC-01", "RPC-08", "TOOL-02"}
SDK_BUG = "mcp 2.3.0 answers -32600; upstream issue 1234"


def _baseline(tmp_path: Path, *known: dict[str, str], name: str = "baseline.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"schema": BASELINE_SCHEMA, "known": list(known)}), encoding="utf-8")
    return path


def _applied(tmp_path: Path, *known: dict[str, str], fail_on: FailOn = FailOn.MUST) -> Report:
    report = sample_report(fail_on)
    apply_baseline(report, load_baseline(_baseline(tmp_path, *known), checks=CHECKS, requirements=REQUIREMENTS))
    return report


def test_a_matched_must_failure_is_known_and_no_longer_decides_the_run(tmp_path: Path) -> None:
    """Tool-defined: the only MUST failure is accepted, so the run passes and says what it accepted."""
    report = _applied(tmp_path, {"requirement": "RPC-15", "reason": SDK_BUG})
    (known,) = [result for result in report.results if result.known is not None]
    assert known.check == "undefined_method_is_answered_with_method_not_found" and known.known == SDK_BUG
    assert report.exit_code() == 0
    assert report.counts()["failed"] == 0 and report.counts()["known"] == 1
    assert report.verdict()[0] == "conformant-in-part"  # the not-verified result is still there
    assert report.baseline is not None and report.baseline.known == 1 and not report.baseline.stale


def test_an_unmatched_failure_still_fails_the_run(tmp_path: Path) -> None:
    """Tool-defined: a baseline for another requirement hides nothing."""
    report = _applied(tmp_path, {"check": "error_message_is_a_short_sentence", "reason": "we prefer long messages"})
    assert report.exit_code() == 1 and report.verdict()[0] == "not-conformant"
    assert report.counts()["known"] == 1 and report.counts()["recommended"] == 0


def test_an_entry_whose_check_now_passes_is_stale_and_fails_the_run(tmp_path: Path) -> None:
    """Tool-defined: a fixed bug's entry must be removed, or it would hide the bug's return."""
    report = _applied(
        tmp_path,
        {"requirement": "RPC-15", "reason": SDK_BUG},
        {"check": "message_declares_jsonrpc_2_0", "reason": "old SDK"},
    )
    assert report.baseline is not None
    assert report.baseline.stale == ("check message_declares_jsonrpc_2_0 now passes; remove the entry (old SDK)",)
    assert report.exit_code() == 1
    code, text = report.verdict()
    assert code == "baseline-stale" and "1 baseline entry matches a check that now passes" in text
    never = _applied(tmp_path, {"check": "message_declares_jsonrpc_2_0", "reason": "old SDK"}, fail_on=FailOn.NEVER)
    assert never.exit_code() == 0


def test_an_entry_the_run_could_not_establish_is_only_noted(tmp_path: Path) -> None:
    """Tool-defined: a check that was not verified neither confirms nor refutes the entry."""
    report = _applied(tmp_path, {"requirement": "RPC-15", "reason": SDK_BUG}, {"requirement": "TOOL-02", "reason": "x"})
    assert report.baseline is not None and report.baseline.unconfirmed == (
        "requirement TOOL-02 was not established by this run (x)",
    )
    assert report.exit_code() == 0


def test_a_revision_narrows_an_entry(tmp_path: Path) -> None:
    """Tool-defined: an entry for 2025-11-25 does not accept a 2026-07-28 failure."""
    report = _applied(tmp_path, {"requirement": "RPC-15", "revision": "2025-11-25", "reason": SDK_BUG})
    assert report.exit_code() == 1 and report.counts()["known"] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("schema: other/1\nknown: []\n", "expected a mapping with schema: mcp-assay.baseline/1"),
        (f"schema: {BASELINE_SCHEMA}\nknown: {{}}\n", "known must be a list"),
        (f"schema: {BASELINE_SCHEMA}\nextra: 1\n", "unknown key(s) extra"),
        (f"schema: {BASELINE_SCHEMA}\nknown: [{{requirement: RPC-15}}]\n", "known[0]: reason is empty"),
        (f"schema: {BASELINE_SCHEMA}\nknown: [{{reason: x}}]\n", "name a check, a requirement, or both"),
        (f"schema: {BASELINE_SCHEMA}\nknown: [{{check: nope, reason: x}}]\n", "no check is called 'nope'"),
        (f"schema: {BASELINE_SCHEMA}\nknown: [{{requirement: RPC-99, reason: x}}]\n", "no check cites requirement"),
        (f"schema: {BASELINE_SCHEMA}\nknown: [{{requirement: RPC-15, reason: x, why: y}}]\n", "unknown key(s) why"),
        ("schema: [unclosed\n", "not valid YAML or JSON"),
    ],
)
def test_a_baseline_with_a_mistake_is_one_clear_error(tmp_path: Path, content: str, message: str) -> None:
    """Tool-defined: bad user input is refused before any work, naming the file and the entry."""
    path = tmp_path / "baseline.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=None) as raised:
        load_baseline(path, checks=CHECKS, requirements=REQUIREMENTS)
    assert message in str(raised.value) and str(path) in str(raised.value)


def test_a_missing_file_is_an_error_and_no_path_is_no_baseline(tmp_path: Path) -> None:
    """Tool-defined."""
    with pytest.raises(ConfigError, match="cannot read it"):
        read_baseline(tmp_path / "absent.yaml", registered_checks())
    assert read_baseline(None, registered_checks()) is None


def test_the_registered_checks_and_cited_requirements_are_what_entries_may_name(tmp_path: Path) -> None:
    """Tool-defined: read_baseline validates against this installation's checks."""
    good = _baseline(tmp_path, {"requirement": "HTTP-09", "check": "unknown_methods_get_404", "reason": "x"})
    with pytest.raises(ConfigError, match="no check is called 'unknown_methods_get_404'"):
        read_baseline(good, registered_checks())
    sdk = _baseline(tmp_path, {"requirement": "HTTP-09", "reason": "SDK"})
    assert read_baseline(sdk, registered_checks()) is not None


def test_every_writer_shows_the_known_failure_with_its_reason_and_the_stale_entry(tmp_path: Path) -> None:
    """Tool-defined: terminal, Markdown, HTML, JSON, JUnit and TAP agree."""
    report = _applied(
        tmp_path,
        {"requirement": "RPC-15", "reason": SDK_BUG},
        {"check": "message_declares_jsonrpc_2_0", "reason": "old SDK"},
    )
    terminal = render(report, "terminal")
    assert "KNOWN (1)" in terminal and f"baseline: {SDK_BUG}" in terminal
    assert "stale     check message_declares_jsonrpc_2_0 now passes" in terminal
    assert "FAILED (" not in terminal
    assert f"  baseline: {SDK_BUG}" in render(report, "markdown")
    assert f'<p class="known">baseline: {SDK_BUG}</p>' in render(report, "html")
    data = json.loads(render(report, "json"))
    assert data["baseline"]["stale"] == list(report.baseline.stale)  # type: ignore[union-attr]
    assert [r["known"] for r in data["results"] if r["known"]] == [SDK_BUG]
    reread = Report.from_json(data)
    assert reread.baseline == report.baseline and reread.exit_code() == 1
    junit = ET.fromstring(render(report, "junit"))
    skipped = [case for case in junit.iter("testcase") if case.find("skipped") is not None]
    assert any(SDK_BUG in (case.find("skipped").get("message") or "") for case in skipped)  # type: ignore[union-attr]
    stale = [case for case in junit.iter("testcase") if case.get("classname") == "Baseline.stale"]
    assert len(stale) == 1 and stale[0].find("failure") is not None
    tap = render(report, "tap")
    assert f"# TODO known, accepted by the baseline: {SDK_BUG}" in tap
    assert "not ok 7 - stale baseline entry: check message_declares_jsonrpc_2_0 now passes" in tap
    assert "1..7" in tap


def test_reapplying_a_baseline_to_a_rerendered_report_starts_from_scratch(tmp_path: Path) -> None:
    """Tool-defined: `mcp-assay report --baseline` judges against the new file only."""
    report = _applied(tmp_path, {"requirement": "RPC-15", "reason": SDK_BUG})
    reread = Report.from_json(json.loads(render(report, "json")))
    other = load_baseline(
        _baseline(tmp_path, {"check": "error_message_is_a_short_sentence", "reason": "x"}, name="b.yaml"),
        checks=CHECKS,
        requirements=REQUIREMENTS,
    )
    apply_baseline(reread, other)
    assert reread.exit_code() == 1 and [r.check for r in reread.results if r.known] == [
        "error_message_is_a_short_sentence"
    ]


def test_a_written_baseline_lists_each_failed_check_once_with_an_empty_reason(tmp_path: Path) -> None:
    """Tool-defined: the file starts a baseline, and is refused until every reason is filled in."""
    text = baseline_text(sample_report().results)
    data = yaml.safe_load(text)
    assert data["schema"] == BASELINE_SCHEMA
    assert [entry["check"] for entry in data["known"]] == [
        "tool_names_use_the_recommended_characters",
        "error_message_is_a_short_sentence",
        "undefined_method_is_answered_with_method_not_found",
    ]
    assert all(entry["reason"] == "" for entry in data["known"])
    path = tmp_path / "written.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="reason is empty"):
        load_baseline(path, checks=CHECKS | {"tool_names_use_the_recommended_characters"}, requirements={"TOOL-09"})
    assert yaml.safe_load(baseline_text([])) == {"schema": BASELINE_SCHEMA, "known": []}
