"""How the demo makes one report of the suite's and the proxy's, and the behaviour cases it ships."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mcp_assay.demo.orchestrate import DemoFiles, behaviour_config, combine
from mcp_assay.report.about import Stats
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Outcome, Source, Verdict
from tests.report.sample import failed_must, not_verified, passed, sample_report

ENVIRON = {
    "DRAFTS_READER_TOKEN": "reader-token-for-the-test",
    "DRAFTS_WRITER_TOKEN": "writer-token-for-the-test",
    "DRAFTS_COUNT_URL": "http://127.0.0.1:9/_test/drafts/count",
}


def merged(spec: SpecSet, suite_results: list[Verdict], proxy_results: list[Verdict] | None) -> Report:
    suite = sample_report(results=suite_results, stats=Stats(exchanges=10, messages=20))
    proxy = (
        None
        if proxy_results is None
        else sample_report(results=proxy_results, tested=[], stats=Stats(exchanges=3, messages=6))
    )
    return combine(
        suite, proxy, build="naive", server_url="http://127.0.0.1:1/mcp", proxy_url="http://127.0.0.1:2/mcp",
        client="the official Python SDK client", files=DemoFiles(Path("/tmp/demo")), notes=["a demo note"],
        spec=spec, duration_ms=1234,
    )  # fmt: skip


def test_a_check_one_source_established_drops_the_other_sources_not_verified(spec: SpecSet) -> None:
    """Tool-defined: a passive 'not verified' next to the suite's verdict for the same check says nothing more."""
    active_pass = replace(passed(), source=Source.ACTIVE)
    passive_unknown = replace(passed(), outcome=Outcome.NOT_VERIFIED, reason="no traffic showed it")
    passive_only = replace(not_verified(), source=Source.PASSIVE)
    report = merged(spec, [active_pass, failed_must()], [passive_unknown, passive_only])
    kept = {(r.check, r.source, r.outcome) for r in report.results}
    assert (passed().check, Source.ACTIVE, Outcome.PASSED) in kept
    assert (passed().check, Source.PASSIVE, Outcome.NOT_VERIFIED) not in kept
    assert (not_verified().check, Source.PASSIVE, Outcome.NOT_VERIFIED) in kept  # nobody established it
    assert (failed_must().check, Source.ACTIVE, Outcome.FAILED) in kept


def test_the_combined_report_names_the_demo_its_recordings_and_adds_up_the_traffic(spec: SpecSet) -> None:
    """Tool-defined: the report says it is the demo's, where its recordings are, and counts both sources."""
    report = merged(spec, [failed_must()], [passed()])
    assert report.target.kind == "demo"
    assert report.target.description == "http://127.0.0.1:1/mcp (the drafts example server, naive build)"
    assert report.target.recording == "/tmp/demo/session.jsonl, /tmp/demo/suite.jsonl"
    assert report.stats == Stats(duration_ms=1234, exchanges=13, messages=26)
    assert report.notes[0] == "a demo note"
    assert report.revision is None and "the suite tested 2026-07-28" in report.revision_note
    assert report.verdict()[0] == "not-conformant"


def test_without_the_proxy_report_the_suite_report_stands_alone(spec: SpecSet) -> None:
    """Tool-defined: a proxy that wrote nothing leaves the suite's results, not an error."""
    report = merged(spec, [failed_must(), passed()], None)
    assert sorted(r.check for r in report.results) == sorted([failed_must().check, passed().check])
    assert report.target.kind == "demo"


def test_the_shipped_behaviour_cases_parse_with_the_values_the_demo_fills_in() -> None:
    """Tool-defined: drafts.yaml names two principals, the write tool, a read tool and a handle."""
    config = behaviour_config(ENVIRON)
    assert set(config.principals) == {"reader", "writer"}
    assert set(config.write_tools) == {"create_draft"}
    assert set(config.read_tools) == {"list_drafts"}
    assert set(config.handles) == {"draft"}
    assert config.witnesses["drafts_route"].url == ENVIRON["DRAFTS_COUNT_URL"]
    assert ENVIRON["DRAFTS_WRITER_TOKEN"] in config.secrets()


def test_the_shipped_behaviour_cases_need_every_value_they_name() -> None:
    """Tool-defined: a missing value is a configuration error naming it, never a half-configured run."""
    with pytest.raises(ConfigError, match="DRAFTS_COUNT_URL"):
        behaviour_config({key: value for key, value in ENVIRON.items() if key != "DRAFTS_COUNT_URL"})
