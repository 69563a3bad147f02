"""The report's target and stats: typed, and their JSON form what every producer wrote before.

Tool-defined. The keys come in the order the producers always wrote them and a field nobody filled
in is left out, so a report round-trips through JSON unchanged.
"""

from __future__ import annotations

import json

import pytest

from mcp_assay.report.about import Stats, Target
from mcp_assay.report.model import Report, merge_reports


def test_set_fields_only_in_the_producers_order_and_back() -> None:
    suite = Target(kind="suite", description="http://h/mcp", transport="stdio", credentials="none", offered={})
    assert list(suite.to_json()) == ["kind", "description", "transport", "credentials", "offered"]
    assert Target.from_json(suite.to_json()) == suite
    stats = Stats(exchanges=3, observations=1, messages=6, windows=1, duration_ms=7)
    assert list(stats.to_json()) == ["exchanges", "observations", "messages", "windows", "duration_ms"]
    assert Stats.from_json(stats.to_json()) == stats
    assert Target().to_json() == {} and Stats().to_json() == {}


def test_a_report_round_trips_its_target_and_stats() -> None:
    target = Target(kind="recording", description="a.jsonl", transport="http", inputs=["recording"])
    report = Report(results=[], target=target, stats=Stats(exchanges=1, messages=2, captured_s=0.5))
    again = Report.from_json(json.loads(json.dumps(report.to_json())))
    assert (again.target, again.stats) == (report.target, report.stats)
    assert json.dumps(again.to_json()["target"]) == json.dumps(report.to_json()["target"])


def test_an_absent_description_shows_as_a_question_mark_and_merges_so() -> None:
    merged = merge_reports([Report(results=[]), Report(results=[], target=Target(description="b.jsonl"))])
    assert merged.target == Target(kind="merged", description="? + b.jsonl")
    assert Report(results=[]).target_rows()[:2] == [("target", "?"), ("kind", "?")]


def test_redaction_reaches_every_text_field_and_nothing_else() -> None:
    target = Target(kind="proxy", description="http://h/?token=s3cret", offered={"2026-07-28": "server/discover"})
    redacted = target.redacted(lambda text: text.replace("s3cret", "[REDACTED]"))
    assert redacted == Target(kind="proxy", description="http://h/?token=[REDACTED]", offered=target.offered)


def test_a_damaged_target_is_a_damaged_report() -> None:
    with pytest.raises(TypeError):
        Report.from_json({"schema": "mcp-assay.report/1", "target": ["not", "an", "object"]})
