"""The canonical JSON report: schema name, every result (not-applicable included), stable layout."""

from __future__ import annotations

import json

from mcp_assay.report.jsonreport import render_json
from mcp_assay.report.model import REPORT_SCHEMA, FailOn, Report
from mcp_assay.vocabulary.verdicts import Source
from tests.report.sample import assert_golden, sample_report


def test_json_report_matches_its_golden_file() -> None:
    """Tool-defined: the JSON layout of the sample report is stable (generated_at fixed)."""
    assert_golden("report.json", render_json(sample_report()))


def test_json_report_names_its_schema_and_keeps_every_result() -> None:
    """Tool-defined: JSON keeps not-applicable results, unlike the human formats."""
    data = json.loads(render_json(sample_report()))
    assert data["schema"] == REPORT_SCHEMA == "mcp-assay.report/1"
    outcomes = sorted(result["outcome"] for result in data["results"])
    assert outcomes == ["failed", "failed", "failed", "not_applicable", "not_verified", "passed", "passed"]


def test_every_result_carries_the_documented_fields() -> None:
    """Tool-defined: check, requirements, level, side, outcome, source, reason, evidence."""
    data = json.loads(render_json(sample_report()))
    for result in data["results"]:
        for key in ("check", "requirements", "level", "side", "outcome", "source", "reason", "evidence"):
            assert key in result, key
        assert result["outcome"] in ("passed", "failed", "not_verified", "not_applicable")
        assert result["source"] in ("active", "passive", "explored")


def test_explored_evidence_survives_the_json_round_trip() -> None:
    """Tool-defined: a finding ``run --explore`` reported keeps its first input and shrink steps through JSON,
    and evidence of any other finding carries no ``explored`` key at all."""
    report = sample_report()
    data = json.loads(render_json(report))
    explored = [item for result in data["results"] for item in result["evidence"] if "explored" in item]
    assert len(explored) == 1
    assert explored[0]["explored"]["steps"] == ["removed limit", "query: 'Grüße <b>*x*</b> | `y`' → 'ü'"]
    assert explored[0]["explored"]["generated"] == '{"limit": 20, "query": "Grüße <b>*x*</b> | `y`"}'
    again = Report.from_json(data)
    assert again.results == report.results
    assert {result.source for result in again.results} >= {Source.EXPLORED, Source.ACTIVE, Source.PASSIVE}


def test_json_verdict_and_summary_agree_with_the_report() -> None:
    """Tool-defined: the JSON summary and verdict are the ones the terminal shows."""
    report = sample_report(FailOn.SHOULD)
    data = json.loads(render_json(report))
    assert data["summary"] == report.counts()
    code, text = report.verdict()
    assert data["verdict"] == {"code": code, "text": text, "exit_code": 1, "unjudged": None}
    assert data["fail_on"] == "should"


def test_json_keeps_non_ascii_text_readable() -> None:
    """Tool-defined: the JSON is UTF-8, not \\u-escaped, and ends with a newline."""
    text = render_json(sample_report())
    assert "—" in text
    assert text.endswith("}\n")
