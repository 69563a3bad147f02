"""The suite against a hostile server: whatever it answers, the run ends in a report with a verdict.

A real HTTP server on a loopback socket (:mod:`tests.peers.hostile`) answers from a script
hypothesis draws: valid answers in the schema's shapes, then broken — members of the wrong type or
missing, huge and deeply nested values, ids of another type, bodies cut short or longer than
announced, floods of notifications, wrong framing and status, silence. Every example must end in a
report with a verdict, rendered in every format, within a bounded time, without a defect of
mcp-assay (a family ended on its own exception, a check that raised, a logged traceback), and the
whole test within bounded memory. The answer-size limits are lowered so floods reach them quickly.

``MCP_ASSAY_FUZZ_EXAMPLES`` raises the number of examples; ``MCP_ASSAY_FUZZ_RANDOM=1`` draws new
ones on every run instead of the same derandomized sequence.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_assay.report import FORMATS, render
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.events import Event, RunFinished
from mcp_assay.suite.runner import arun
from mcp_assay.suite.transports import http as http_transport
from mcp_assay.vocabulary.verdicts import Outcome
from tests.fuzz.strategies import scripts
from tests.peers.hostile import Behaviour, Break, HostileServer, Script, hostile_server

EXAMPLES = int(os.environ.get("MCP_ASSAY_FUZZ_EXAMPLES", "25"))
REQUESTS_PER_RUN = 1_000
"""A bounded run, counted rather than timed: a full run sends about 150 requests whatever the server does (each
wait bounded by --timeout), so a hostile answer that made the suite retry or loop shows here on any machine."""
MEMORY_GROWTH_MB = 400
ARGS: dict[str, Any] = {"tool_args": {"echo": {"message": "hi"}}, "prompt_args": {"greet": {"who": "x"}}}
OWN_DEFECTS = ("defect of mcp-assay", "the check itself failed")
PARSER_LIMITS = ("maximum recursion depth", "integer string conversion")
"""A failure quoting these rests on a limit of Python's JSON parser, not on the server."""


class _Errors(logging.Handler):
    """Collects what mcp-assay logs at ERROR (a family's own exception, a check that raised)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with hostile_server() as running:
        yield running


@contextmanager
def _small_limits() -> Iterator[None]:
    saved = http_transport.ANSWER_LIMIT, http_transport.EVENT_LIMIT
    http_transport.ANSWER_LIMIT, http_transport.EVENT_LIMIT = 1024 * 1024, 500
    try:
        yield
    finally:
        http_transport.ANSWER_LIMIT, http_transport.EVENT_LIMIT = saved


def _rss_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


@dataclass
class RunResult:
    """One run against the hostile server."""

    report: Report
    exit_code: int
    """What ``mcp-assay run`` would exit with (3 on a target error, else the report's code)."""
    seconds: float


def run_against(server: HostileServer, spec: SpecSet, script: Script, only: str | None) -> RunResult:
    server.load(script)
    config = SuiteConfig(url=server.url, timeout=0.4, stream_budget_ms=200, retry_budget_ms=500, only=only, **ARGS)
    events: list[Event] = []
    started = time.monotonic()
    with _small_limits():
        report = asyncio.run(arun(config, spec, events.append))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    code = 3 if finished.unjudged is not None else report.exit_code()
    return RunResult(report, code, time.monotonic() - started)


def assert_a_report_with_a_verdict(outcome: RunResult) -> None:
    """A verdict in every format; no defect of mcp-assay; no verdict resting on a limit of its parser; and a
    run that established no revision never passes."""
    report = outcome.report
    label, text = report.verdict()
    assert label and text
    for name in FORMATS:
        assert render(report, name)
    json.dumps(report.to_json())
    own = [f"{item.check}: {item.reason}" for item in report.results if any(s in item.reason for s in OWN_DEFECTS)]
    assert not own, own
    limits = [
        f"{item.check}: {text}"
        for item in report.results
        if item.outcome is Outcome.FAILED
        for text in (item.reason, *(evidence.detail for evidence in item.evidence))
        if any(s in text for s in PARSER_LIMITS)
    ]
    assert not limits, limits
    assert report.tested or outcome.exit_code != 0, report.revision_note


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("MCP_ASSAY_FUZZ_RANDOM") is None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(script=scripts, only=st.sampled_from([None, None, "tools", "envelope", "RPC", "VER"]))
def test_every_hostile_script_ends_in_a_report_with_a_verdict(
    spec: SpecSet, server: HostileServer, script: Script, only: str | None
) -> None:
    """Tool-defined: bad input is data, never a crash — a report with a verdict, a bounded run, no traceback."""
    errors = _Errors()
    logger = logging.getLogger("mcp_assay")
    logger.addHandler(errors)
    try:
        outcome = run_against(server, spec, script, only)
    finally:
        logger.removeHandler(errors)
    assert_a_report_with_a_verdict(outcome)
    assert (outcome.report.stats.requests or 0) < REQUESTS_PER_RUN, outcome.report.stats
    assert not errors.records, [record.getMessage()[:400] for record in errors.records]


def test_a_run_of_hostile_scripts_stays_within_bounded_memory(spec: SpecSet, server: HostileServer) -> None:
    """Tool-defined: floods and huge answers on every request leave the process's peak memory bounded."""

    plan = (Behaviour(flood=5_000, framing="sse"), Behaviour(breaks=(Break("huge", 0, 5_000_000),)))
    before = _rss_mb()
    for _ in range(2):
        outcome = run_against(server, spec, Script(faithful_first=3, plan=plan), None)
        assert_a_report_with_a_verdict(outcome)
        assert (outcome.report.stats.requests or 0) < REQUESTS_PER_RUN, outcome.report.stats
    assert _rss_mb() - before < MEMORY_GROWTH_MB
