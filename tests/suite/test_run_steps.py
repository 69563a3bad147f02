"""The steps of a run name no requirement and no check: what blocks a case is the knowledge of the rule or case.

Tool-defined. The modules that plan, set up, choose, drive and finish a run (``RUN_STEPS``) carry no
requirement-ID literal and no check name: a skip's blocker comes from the rule module that judges
it (:data:`~mcp_assay.spec.rules.suite.STAYS_UP`, :data:`~mcp_assay.spec.rules.suite.UNANSWERED`),
from the answer capabilities are read from (:data:`~mcp_assay.suite.selection.CAPABILITY_SOURCES`),
or from the steps that open and end a session (:data:`~mcp_assay.suite.probes.OPENING`,
:data:`~mcp_assay.suite.probes.CLOSING`), and those handles name what the catalogue and the
registered checks know.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import re
from pathlib import Path
from typing import Any

import httpx

from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import registered_checks
from mcp_assay.spec.requirements import catalogue
from mcp_assay.spec.rules.suite import STAYS_UP, UNANSWERED
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.probes import CLOSING, OPENING
from mcp_assay.suite.runner import arun
from mcp_assay.suite.selection import CAPABILITY_SOURCES
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import Handler, mock, respond

ANSWERS = "requests_get_an_answer_within_the_timeout"
"""The check that judges a request the suite sent and never got an answer to."""
RUN_STEPS = ("runner", "plan", "state", "setup", "revisions", "drive", "finish")
REQUIREMENT = re.compile(r"\b[A-Z]+-\d{2}\b")
URL = "http://127.0.0.1:9/mcp"
ARGS: dict[str, Any] = {"tool_args": {"echo": {"message": "hi"}}, "prompt_args": {"greet": {"who": "x"}}}


def _source(step: str) -> Path:
    module = importlib.import_module(f"mcp_assay.suite.{step}")
    assert module.__file__ is not None
    return Path(module.__file__)


def _strings(tree: ast.Module) -> list[str]:
    """Every string the module's code holds, docstrings left out (they may cite requirements in prose)."""
    documented = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in documented
    ]


def test_each_step_says_why_it_exists_and_names_no_requirement_or_check() -> None:
    checks = {check.name for check in registered_checks()}
    for step in RUN_STEPS:
        tree = ast.parse(_source(step).read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"mcp_assay.suite.{step} has no docstring saying why it exists"
        for text in _strings(tree):
            assert not REQUIREMENT.search(text), f"mcp_assay.suite.{step} writes a requirement ID: {text!r}"
            assert text not in checks, f"mcp_assay.suite.{step} names a check: {text!r}"


def test_the_blockers_a_run_names_are_known_to_the_catalogue_and_the_checks() -> None:
    checks = registered_checks()
    cited = {requirement for check in checks for requirement in check.requirements}
    assert STAYS_UP in {check.name for check in checks}
    assert UNANSWERED in next(check for check in checks if check.name == ANSWERS).requirements
    for source in CAPABILITY_SOURCES.values():
        assert source.requirement in cited, source
    for step in (*OPENING, *CLOSING):
        assert step.requirements and all(requirement in catalogue() for requirement in step.requirements), step.name
        assert step.requirements <= cited, step.name


def _tools_call_unanswered(inner: Handler) -> Handler:
    """The conformant scripted server, except that no tools/call is ever answered."""

    async def handler(request: httpx.Request) -> httpx.Response:
        if b'"tools/call"' in request.content:
            await asyncio.sleep(5)
            return httpx.Response(500)
        return await inner(request)

    return handler


def _run(spec: SpecSet, **settings: Any) -> Report:
    config = SuiteConfig(url=URL, **{"timeout": 0.5, "stream_budget_ms": 300, **ARGS, **settings})
    return asyncio.run(arun(config, spec, mock=mock(_tools_call_unanswered(respond(Server())))))


def test_a_request_left_unanswered_blocks_the_rest_of_its_family_by_the_check_that_failed_it(spec: SpecSet) -> None:
    """Tool-defined: the silence fails RPC-05 once; the tools cases it kept from running are blocked by that check."""
    report = _run(spec)
    failed = {verdict.check for verdict in report.results if verdict.outcome is Outcome.FAILED}
    assert failed == {ANSWERS}
    blocked = [verdict for verdict in report.results if verdict.blocked_by == ANSWERS]
    assert blocked and all(verdict.outcome is Outcome.NOT_VERIFIED for verdict in blocked)
    assert all("the server did not answer" in verdict.reason for verdict in blocked)


def test_an_unanswered_request_no_selected_check_judges_is_named_by_its_requirement(spec: SpecSet) -> None:
    """Tool-defined: with ``--only TOOL-14`` no check judges the silence, so the blocked cases name RPC-05 itself;
    with ``--only tools`` every check judges the family's traffic, and the silence fails as in the full run."""
    family = _run(spec, only="tools")
    assert {verdict.check for verdict in family.results if verdict.outcome is Outcome.FAILED} == {ANSWERS}
    report = _run(spec, only="TOOL-14")
    assert not [verdict for verdict in report.results if verdict.outcome is Outcome.FAILED]
    blocked = [verdict for verdict in report.results if verdict.blocked_by == UNANSWERED]
    assert blocked and all(verdict.outcome is Outcome.NOT_VERIFIED for verdict in blocked)
