"""``--only`` narrows a run, and a narrowed run never passes what the full run fails (issue 28).

Families (lower case) narrow the probes a run sends and every check judges their traffic;
requirement IDs and prefixes (upper case) narrow the checks. Against the broken-suite server with
several bugs at once (in process, behind httpx.MockTransport), hypothesis draws ``--only`` words:
the narrowed run's failures are the full run's, it passes nothing the full run fails, and every
failure of the full run found on a named family's probes, or of a check a named prefix selects, is
a failure of the narrowed run too.
"""

from __future__ import annotations

import asyncio
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_assay.recording.records import read_recording
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import select_checks
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.plan import plan_run
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import mock, respond

pytestmark = pytest.mark.slow

BUGS = (
    "prompt-bad-role,tool-without-input-schema,call-without-content,cursor-loop,completion-too-many,"
    "missing-resource-empty,unknown-method-200,mismatch-accepted,duplicate-prompt-names"
)
MODERN = "2026-07-28"
FAMILY_WORDS = ("tools", "prompts", "resources", "pagination", "completion", "envelope", "methods", "versioning")
PREFIXES = ("TOOL", "TOOL-09", "PRM", "PRM-0", "RSRC", "PAGE", "COMP-04", "HTTP-2", "RPC", "RES")
FEEDS = {family.name: family.requirements for family in FAMILIES}


def config(only: str | None, record: str | None = None) -> SuiteConfig:
    return SuiteConfig(
        record=record,
        url="http://127.0.0.1:9/mcp",
        spec_version=MODERN,
        tool_args={"echo": {"message": "hi"}, "ask": {}},
        prompt_args={"greet": {"who": "x"}},
        timeout=2.0,
        stream_budget_ms=300,
        only=only,
    )


def run(spec: SpecSet, only: str | None, record: str | None = None) -> Report:
    return asyncio.run(arun(config(only, record), spec, mock=mock(respond(Server(BUGS)))))


@cache
def _full_run(spec: SpecSet) -> tuple[Report, dict[str, str]]:
    """The full run, and the family that sent each exchange of its recording."""
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "full.jsonl")
        report = run(spec, None, path)
        sent_by = {
            exchange.id: exchange.probe.case.family
            for exchange in read_recording(path).log
            if exchange.probe is not None
        }
    return report, sent_by


def _full(spec: SpecSet) -> Report:
    return _full_run(spec)[0]


def outcomes(report: Report) -> dict[tuple[str, str | None], Outcome]:
    return {(verdict.check, verdict.revision): verdict.outcome for verdict in report.results}


def failed(report: Report) -> set[tuple[str, str | None]]:
    return {key for key, outcome in outcomes(report).items() if outcome is Outcome.FAILED}


@settings(max_examples=8, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(FAMILY_WORDS + PREFIXES), min_size=1, max_size=2, unique=True))
def test_a_narrowed_run_never_passes_what_the_full_run_fails(spec: SpecSet, words: list[str]) -> None:
    full = _full(spec)
    every = failed(full)
    assert {"TOOL-09", "PRM-06", "TOOL-05", "COMP-04"} <= {
        requirement
        for verdict in full.results
        if verdict.outcome is Outcome.FAILED
        for requirement in verdict.requirements
    }
    narrowed = run(spec, ",".join(words))
    assert failed(narrowed) <= every, sorted(failed(narrowed) - every)
    passed = {key for key, outcome in outcomes(narrowed).items() if outcome is Outcome.PASSED}
    assert not passed & every, sorted(passed & every)
    families = [word for word in words if word in FEEDS]
    prefixes = [word for word in words if word not in FEEDS]
    selected = {check.name for check in select_checks(",".join(prefixes)) or ()} if prefixes else None
    sent_by = _full_run(spec)[1]
    for verdict in full.results:
        if verdict.outcome is not Outcome.FAILED or (selected is not None and verdict.check not in selected):
            continue  # a check --only did not select
        shown_by = {sent_by.get(evidence.exchange or "") for evidence in verdict.evidence}
        if families and not shown_by.intersection(families):
            continue  # a failure found on the probes of a family left out
        assert (verdict.check, verdict.revision) in failed(narrowed), (words, verdict.check, verdict.reason)


@pytest.mark.parametrize(
    ("only", "requirements"),
    [
        ("tools", {"TOOL-09", "RES-04"}),
        ("prompts", {"PRM-06"}),
        ("TOOL-09", {"TOOL-09"}),
    ],
)
def test_a_family_or_a_requirement_reports_the_failures_the_full_run_finds_there(
    spec: SpecSet, only: str, requirements: set[str]
) -> None:
    """Issue 28: --only tools passed a TOOL-09 failure; --only prompts judged PRM-01/02/07/09 and dropped the rest."""
    report = run(spec, only)
    found = {req for verdict in report.results if verdict.outcome is Outcome.FAILED for req in verdict.requirements}
    assert requirements <= found, sorted(found)
    if only == "prompts":  # every prompts requirement the full run judges (PRM-05 binds clients: not here)
        judged = {
            req
            for verdict in report.results
            if verdict.outcome is not Outcome.NOT_APPLICABLE
            for req in verdict.requirements
            if req.startswith("PRM")
        }
        full = {
            req
            for verdict in _full(spec).results
            if verdict.outcome is not Outcome.NOT_APPLICABLE
            for req in verdict.requirements
            if req.startswith("PRM")
        }
        assert judged == full and {"PRM-03", "PRM-04", "PRM-06", "PRM-08", "PRM-10", "PRM-11"} <= judged, judged


def test_opt_in_families_are_named_only_with_what_asks_for_them(spec: SpecSet) -> None:
    """Issue 28: the help lists explore and burst; naming one without --explore (or a rate_limit_probe) is one
    clear error, and with it the family is the one sent."""
    with pytest.raises(ConfigError, match="add --explore"):
        plan_run(config("explore"), spec)
    with pytest.raises(ConfigError, match="rate_limit_probe"):
        plan_run(config("burst"), spec)
    explored = plan_run(SuiteConfig(url="http://127.0.0.1:9/mcp", only="explore", explore=True), spec)
    assert [family.name for family in explored.families] == ["explore"] and explored.checks is None
    with pytest.raises(ConfigError, match="not a probe family"):
        plan_run(config("tool"), spec)
    with pytest.raises(ConfigError, match="no check cites"):
        plan_run(config("NOPE"), spec)
