"""A report with nothing to judge (no MCP peer) makes no conformance statement in any format.

Tool-defined (issue 18, "verdicts and exit codes agree"): its verdict is ``not-judged``, its exit code 3,
the terminal shows one line, and every machine format says so in its own terms (a JUnit error, a TAP bail
out, a SARIF invocation that did not succeed).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace

from mcp_assay.report.console import render_text
from mcp_assay.report.html import render_html
from mcp_assay.report.junit import render_junit
from mcp_assay.report.markdown import render_markdown
from mcp_assay.report.model import Report, merge_reports
from mcp_assay.report.sarif import render_sarif
from mcp_assay.report.testanything import render_tap
from mcp_assay.vocabulary.verdicts import ExitCode
from tests.report.sample import sample_report
from tests.report.test_sarif import validate

WHY = "nothing listens at 127.0.0.1:9 (connection refused)"


def unjudged() -> Report:
    return replace(sample_report(), unjudged=WHY)


def test_the_verdict_is_not_judged_and_the_exit_code_3_whatever_the_results() -> None:
    report = unjudged()
    assert report.counts()["failed"]  # the sample has failures, yet nothing is stated about conformance
    assert report.verdict() == ("not-judged", f"not judged — {WHY}")
    assert report.exit_code() is ExitCode.NOT_JUDGED
    assert sample_report().exit_code() is ExitCode.FAILED


def test_the_terminal_report_is_one_line_without_a_conformance_verdict() -> None:
    text = render_text(unjudged(), width=60).strip()
    assert text.count("\n") == 0, text
    assert WHY in text and "conformant" not in text and "Verdict" not in text


def test_json_carries_the_state_and_reads_back() -> None:
    data = json.loads(json.dumps(unjudged().to_json()))
    assert data["verdict"] == {"code": "not-judged", "text": f"not judged — {WHY}", "exit_code": 3, "unjudged": WHY}
    again = Report.from_json(data)
    assert again.unjudged == WHY and again.exit_code() == 3


def test_junit_has_an_error_and_tap_bails_out() -> None:
    root = ET.fromstring(render_junit(unjudged()))
    assert root.get("errors") == "1"
    errors = root.findall(".//error")
    assert len(errors) == 1 and WHY in (errors[0].get("message") or "")
    tap = render_tap(unjudged())
    assert "1..0" in tap and f"Bail out! not judged — {WHY}" in tap
    assert "not ok" not in tap


def test_sarif_says_the_run_did_not_execute_successfully() -> None:
    document = json.loads(render_sarif(unjudged()))
    validate(document)
    (invocation,) = document["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 3
    assert WHY in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_markdown_and_html_state_it_in_place_of_a_verdict() -> None:
    assert f"**Verdict: not judged — {WHY}**" in render_markdown(unjudged())
    assert 'class="verdict not-judged"' in render_html(unjudged())


def test_merging_keeps_the_judged_reports_verdict_and_notes_the_other() -> None:
    merged = merge_reports([sample_report(), unjudged()])
    assert merged.unjudged is None and merged.exit_code() is ExitCode.FAILED
    assert any(WHY in note for note in merged.notes)
    both = merge_reports([unjudged(), unjudged()])
    assert both.unjudged is not None and both.exit_code() is ExitCode.NOT_JUDGED
