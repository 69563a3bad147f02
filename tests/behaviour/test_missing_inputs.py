"""Cases whose inputs are missing are not verified, and say which key is missing (scripted server)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.behaviour.config import parse_behaviour
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome, Verdict
from tests.behaviour.servers import CHECKS, ONLY
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import mock, respond

URL = "http://127.0.0.1:9/mcp"
CONSTANT = [sys.executable, "-c", "print(7)"]


def run(spec: SpecSet, behaviour: dict[str, Any] | None, **settings: Any) -> Report:
    parsed = parse_behaviour(behaviour or {}, "test.yaml", {"TOKEN": "reader-token-123456"})
    config = SuiteConfig(url=URL, timeout=2.0, only=ONLY, behaviour=parsed, spec_version="2026-07-28", **settings)
    return asyncio.run(arun(config, spec, mock=mock(respond(Server()))))


def result(report: Report, requirement: str) -> Verdict:
    return next(item for item in report.results if item.check == CHECKS[requirement])


def test_a_run_without_behaviour_config_says_how_to_configure_it(spec: SpecSet) -> None:
    """Tool-defined: no config, no cases; each BEH case is not verified with the reason."""
    report = run(spec, None)
    for requirement in ("BEH-04", "BEH-05", "BEH-06", "BEH-07", "BEH-08"):
        verdict = result(report, requirement)
        assert verdict.outcome is Outcome.NOT_VERIFIED
        assert "no behaviour cases configured" in verdict.reason


def test_missing_keys_are_named_in_the_reason(spec: SpecSet) -> None:
    """Tool-defined: a principal without HTTP credentials, a write tool without a witness, a witness that
    never moves: each case is not verified and names what to fix."""
    behaviour = {
        "principals": {"reader": {"env": {"ROLE": "reader"}}},
        "expect": {"tools_by_principal": {"reader": ["echo"]}},
        "witnesses": {"constant": {"command": CONSTANT}},
        "write_tools": {
            "echo": {"arguments": {"message": "hi"}, "witness": "constant", "cancellation": {"timeout_ms": 5}},
            "now": {},
        },
    }
    report = run(spec, behaviour)
    lists = result(report, "BEH-04")
    assert lists.outcome is Outcome.NOT_VERIFIED
    assert "principals.reader has no token or headers, which HTTP needs" in lists.reason
    refusals = result(report, "BEH-05")
    assert refusals.outcome is Outcome.NOT_VERIFIED
    assert "did not move witness constant" in refusals.reason
    race = result(report, "BEH-06")
    assert race.outcome is Outcome.NOT_VERIFIED and "did not move witness constant" in race.reason
    del behaviour["write_tools"]["echo"]
    report = run(spec, behaviour)
    assert "write_tools.now: no witness configured (write_tools.now.witness)" in result(report, "BEH-05").reason
