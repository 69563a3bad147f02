"""Each deliberate bug of the broken-suite server is reported as failed, with the right requirement.

The server runs in process behind httpx.MockTransport here; ``tests/e2e/test_suite_e2e.py`` runs a
few of the same bugs as real subprocesses over HTTP and stdio.
"""

from __future__ import annotations

import asyncio

import pytest

from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome, Severity
from tests.peers.broken_suite.core import BUGS, Server
from tests.suite.scripted import mock, respond
from tests.suite.test_run_scripted import RULE_CONFLICTS

EXPECTED: dict[str, tuple[str | None, set[str]]] = {
    # bug: (--spec-version, requirement IDs that must fail)
    "discover-no-cache-hints": (None, {"VER-07", "RES-06"}),
    "mismatch-accepted": (None, {"HTTP-09"}),
    "unsupported-version-served": (None, {"VER-03"}),
    "parse-error-code": (None, {"RPC-12"}),
    "unknown-method-200": (None, {"HTTP-25"}),
    "tool-without-input-schema": (None, {"TOOL-05"}),
    "prompt-bad-role": (None, {"PRM-06"}),
    "missing-resource-empty": (None, {"RSRC-09"}),
    "cursor-loop": (None, {"PAGE-04"}),
    "completion-too-many": (None, {"COMP-04"}),
    "ack-without-subscription-id": (None, {"SUB-04"}),
    "asks-without-capability": (None, {"MRTR-05"}),
    "initialize-echoes-unsupported": ("2025-11-25", {"HS-06"}),
    "no-discover": ("2026-07-28", {"VER-06"}),
    "no-result-type": (None, {"RES-01"}),
    "refuses-without-client-info": (None, {"META-10"}),
    "duplicate-prompt-names": (None, {"PAGE-04"}),
    "discover-undated-versions": (None, {"VER-07"}),
    "discover-no-versions": ("2026-07-28", {"VER-07"}),
    "version-header-optional": (None, {"HTTP-26"}),
    "capabilities-drift": (None, {"VER-16"}),
    "initialize-without-server-info": ("2025-11-25", {"HS-04"}),
    "legacy-gets-2026-envelope": (None, {"HS-16"}),  # found by the default run, which tests 2025-11-25 too
    "ended-session-text-404": ("2025-11-25", {"HTTP-07"}),
    "call-without-content": ("2026-07-28", {"TOOL-09", "RES-04"}),
}
STDIO_ONLY = {"stdout-banner", "exit-on-invalid-json"}
WITH_A_CONFIG = {"updated-without-subscription-id"}
"""Needs a write tool in --config to show: tests/suite/test_listen_writes.py."""
NOTED = {
    # bug: a note the report must carry (no requirement names the fault, so nothing fails)
    "listed-resource-fails": "the listed resource file:///broken/flaky.txt could not be read: HTTP 200, error -32603",
    "duplicate-template-names": "resources/templates/list names 2 templates 'files'",
    "host-unchecked": "with Host: mcp-assay-rebinding.invalid — the server served it: a web page that rebinds",
}


def run(spec: SpecSet, bug: str | None, version: str | None) -> Report:
    config = SuiteConfig(
        url="http://127.0.0.1:9/mcp",
        spec_version=version,
        tool_args={"echo": {"message": "hi"}, "ask": {}},
        prompt_args={"greet": {"who": "x"}},
        timeout=2.0,
        stream_budget_ms=300,
    )
    return asyncio.run(arun(config, spec, mock=mock(respond(Server(bug)))))


def failed_requirements(report: Report) -> set[str]:
    return {
        requirement
        for verdict in report.results
        if verdict.outcome is Outcome.FAILED and verdict.check not in RULE_CONFLICTS
        for requirement in verdict.requirements
    }


def test_every_bug_of_the_broken_server_has_an_expectation() -> None:
    """Tool-defined: one bug per case family, none left unchecked."""
    assert set(EXPECTED) | STDIO_ONLY | set(NOTED) | WITH_A_CONFIG == set(BUGS)


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_each_bug_is_reported_failed_with_its_requirement(spec: SpecSet, bug: str) -> None:
    """Tool-defined: the suite catches each deliberate deviation and cites the requirement it breaks."""
    version, wanted = EXPECTED[bug]
    report = run(spec, bug, version)
    missing = wanted - failed_requirements(report)
    assert not missing, f"{bug}: {sorted(missing)} not failed; failed: {sorted(failed_requirements(report))}"


@pytest.mark.parametrize("bug", sorted(NOTED))
def test_faults_no_requirement_names_are_noted_not_passed_over(spec: SpecSet, bug: str) -> None:
    """Tool-defined (issue 13 §3): a listed resource that cannot be read, two templates of one name and a served
    foreign Host fail nothing, but the report says so; the unbroken server draws none of these notes."""
    report = run(spec, bug, None)
    assert any(NOTED[bug] in note for note in report.notes), report.notes
    assert failed_requirements(report) == set()
    clean = run(spec, None, None)
    assert not any(NOTED[bug] in note for note in clean.notes)
    assert any("Host: mcp-assay-rebinding.invalid — the server refused it (HTTP 403" in note for note in clean.notes)


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_the_unbroken_server_draws_no_failure(spec: SpecSet, version: str | None) -> None:
    """Tool-defined: without a bug the same server passes, so each failure above is the bug's alone."""
    assert failed_requirements(run(spec, None, version)) == set()


def test_a_broken_discover_blocks_the_capability_cases_instead_of_failing_them(spec: SpecSet) -> None:
    """Tool-defined: blocked-by grouping collapses the cascade behind a missing discover."""
    report = run(spec, "no-discover", "2026-07-28")
    blocked = [verdict for verdict in report.results if verdict.blocked_by == "discover_is_implemented"]
    areas = {verdict.area for verdict in blocked}
    assert {"Tools", "Prompts", "Resources"} <= areas
    assert all(verdict.outcome is Outcome.NOT_VERIFIED for verdict in blocked)
    assert failed_requirements(report) == {"VER-06"}


def test_a_text_404_for_an_ended_session_fails_http_07_only_at_should(spec: SpecSet) -> None:
    """Issue 28: the catalogue marks HTTP-07's error-body clause inferred, so a 404 for an ended session with a
    text body and no Content-Type fails it at SHOULD and leaves the verdict to the MUSTs."""
    report = run(spec, "ended-session-text-404", "2025-11-25")
    http_07 = [v for v in report.results if "HTTP-07" in v.requirements and v.outcome is Outcome.FAILED]
    assert http_07 and all(v.severity is Severity.SHOULD and "inferred" in (v.graded or "") for v in http_07)
    assert report.exit_code() == 0, [v.check for v in report.results if v.outcome is Outcome.FAILED]
