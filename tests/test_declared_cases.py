"""What is derived from the cases' declarations stays derived: skips name registered cases, a family that stops
early says which of its cases it left unsent, and a broader rule leaves another requirement's case alone.

Tool-defined (issue 30). A new probe case needs no edit to a skip set, a rule's exclusions or a label typed
elsewhere: each test here fails when one of those is kept by hand again, or when a case is declared without
what the derivation reads (``needs``, ``judging``).
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
import re
from pathlib import Path

import httpx
import pytest

import mcp_assay
from mcp_assay.cases import BY_FAMILY, Case, Judging, lookup
from mcp_assay.cases import prompts as prompt_cases
from mcp_assay.cases.model import left_unsent
from mcp_assay.recording.records import read_recording
from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import registered_checks
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import Probe
from tests.factories import judge, log_of
from tests.peers.broken_suite.core import Server
from tests.spec.rules._capability_builders import failing
from tests.suite.scripted import Handler, mock, respond
from tests.test_cases import referenced

PACKAGE = Path(mcp_assay.__file__).parent
LABELLED = {"suite/behaviour/cases.py"}
"""Where a skip may carry a label of its own instead of a case: the behaviour lanes' sub-cases, made per tool."""


def _skips(path: Path) -> list[ast.Call]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "skip"
    ]


def test_every_skip_of_the_suite_names_a_registered_case_never_a_typed_name() -> None:
    """A skip's case is a case object of the registry (``case=cases.GET``), so it cannot name a case that does not
    exist; ``SuiteContext.skip`` refuses an unregistered one and mypy a string."""
    found = 0
    for path in sorted((PACKAGE / "suite").rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        for call in _skips(path):
            for keyword in call.keywords:
                if keyword.arg == "case":
                    found += 1
                    assert not isinstance(keyword.value, ast.Constant | ast.JoinedStr), f"{where}:{call.lineno}"
                    assert not (isinstance(keyword.value, ast.Attribute) and keyword.value.attr == "name"), where
                if keyword.arg == "label":
                    assert where in LABELLED, f"{where}:{call.lineno}: a label is for a behaviour lane only"
    assert found >= 20, "the scan found no skips: it is broken"


def test_the_skip_labels_of_recorded_runs_read_back_to_registered_cases() -> None:
    """A recording of a run made now names, in each skip, a case the registry holds (older recordings keep theirs)."""
    names = {case.name for cases in BY_FAMILY.values() for case in cases}
    for name in ("get", "missing-prompt-argument", "listen-writes", "param-missing", "discover-last", "no-mcp-name"):
        assert name in names and lookup(name) is not None


def _failing_lists(inner: Handler) -> Handler:
    """The conformant scripted server, except that tools/list, prompts/list and resources/list answer -32603."""

    async def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        if isinstance(body, dict) and body.get("method") in ("tools/list", "prompts/list", "resources/list"):
            error = {"code": -32603, "message": "listing broke"}
            answer = {"jsonrpc": "2.0", "id": body.get("id"), "error": error}
            return httpx.Response(200, headers={"content-type": "application/json"}, json=answer)
        return await inner(request)

    return handler


@pytest.mark.parametrize("family", ["tools", "prompts", "resources"])
def test_a_family_whose_listing_fails_skips_every_case_it_left_unsent(
    spec: SpecSet, tmp_path: Path, family: str
) -> None:
    """Each case the family did not send (it needs the failed listing, as its ``needs`` declares) has what it feeds
    in the family's skips or fed by a case that was sent: nothing is left silently unverified."""
    record = tmp_path / "run.jsonl"
    config = SuiteConfig(
        url="http://127.0.0.1:9/mcp", spec_version="2026-07-28", only=family, timeout=2.0, stream_budget_ms=300,
        record=str(record),
    )  # fmt: skip
    asyncio.run(arun(config, spec, mock=mock(_failing_lists(respond(Server())))))
    recording = read_recording(str(record)).log
    sent = {item.probe.case.root for item in recording if item.probe is not None and item.probe.case.family == family}
    skipped: set[str] = set()
    for item in recording:
        data = getattr(item, "data", None)
        if getattr(item, "kind", None) == "skip" and isinstance(data, dict) and data.get("family") == family:
            skipped |= set(data.get("requirements", ()))
    cases = BY_FAMILY[family]
    unsent = [case for case in cases if case not in sent]
    assert unsent, f"the {family} listing failed, yet every case was sent"
    covered = skipped | {ident for case in sent for ident in case.feeds}
    for case in unsent:
        assert case.feeds <= covered, f"{case.name} was not sent and {sorted(case.feeds - covered)} are not skipped"
    assert left_unsent(cases, cases[0]) <= skipped


def test_left_unsent_follows_needs_through_a_chain() -> None:
    first = Case(name="a", family="f")
    second = Case(name="b", family="f", feeds=frozenset({"X-01"}), needs=first)
    third = Case(name="c", family="f", feeds=frozenset({"X-02"}), needs=second)
    alone = Case(name="d", family="f", feeds=frozenset({"X-03"}))
    assert left_unsent((first, second, third, alone), first) == {"X-01", "X-02"}
    assert left_unsent((first, second, third, alone), alone) == frozenset()


def test_a_new_selected_case_is_left_to_its_own_rule_by_the_broader_one(spec: SpecSet) -> None:
    """PRM-09 (a failed prompts/get is -32603) reads its exclusions from the cases: a case another rule picks out
    and that does not feed PRM-09 is left alone, with no edit to PRM-09; the plain get it feeds is still judged."""
    newcomer = Case(
        name="prompt-argument-not-a-string", family="prompts", feeds=frozenset({"PRM-05"}), invalid=True,
        judging=Judging.SELECTED, sends="prompts/get with a number for an argument", expects="-32602",
    )  # fmt: skip
    check = "failed_prompts_report_internal_errors"
    theirs = failing("prompts/get", {"name": "p"}, -32000)
    assert judge(log_of(theirs), spec, check).outcome is Outcome.FAILED
    new = failing("prompts/get", {"name": "p"}, -32000, probe=Probe.of(newcomer))
    assert judge(log_of(new), spec, check).outcome is Outcome.NOT_VERIFIED
    plain = failing("prompts/get", {"name": "p"}, -32000, probe=Probe.of(prompt_cases.GET))
    assert judge(log_of(plain), spec, check).outcome is Outcome.FAILED


_MODULE_REFERENCE = re.compile(r":mod:`~?(mcp_assay(?:\.\w+)+)`")


def test_every_module_a_docstring_names_exists() -> None:
    """A docstring citing ``:mod:`mcp_assay.x``` names a module that is there (the registry's once cited one that
    was not)."""
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in _MODULE_REFERENCE.findall(path.read_text(encoding="utf-8")):
            if importlib.util.find_spec(name) is None:
                missing.append(f"{path.relative_to(PACKAGE)}: {name}")
    assert missing == []


def test_a_rule_that_names_a_case_judges_what_the_case_feeds() -> None:
    """A check whose body names a probe case judges a requirement that case feeds, so ``--only <family>`` (which
    runs the checks of what the family's cases feed) keeps it; or it leaves out a case that feeds nothing (one
    only noted, or mcp-assay's own groundwork). Leaving out another requirement's case by name is what
    :func:`~mcp_assay.spec.rules.shared.selected.selected_for_another` is for."""
    checks = {check.func.__name__: check for check in registered_checks()}
    functions: dict[str, list[ast.FunctionDef]] = {}
    wrong = []
    for case, places in referenced("spec/rules").items():
        for place in places:
            path, line = place.rsplit(":", 1)
            if path not in functions:
                tree = ast.parse((PACKAGE / path).read_text(encoding="utf-8"))
                functions[path] = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
            around = [node for node in functions[path] if node.lineno <= int(line) <= (node.end_lineno or node.lineno)]
            if not around:
                continue
            check = checks.get(min(around, key=lambda node: (node.end_lineno or 0) - node.lineno).name)
            if check is None or set(check.requirements) & case.feeds or not case.feeds:
                continue
            judged = ", ".join(check.requirements)
            wrong.append(f"{place}: {check.name} ({judged}) names {case.name}, which feeds {sorted(case.feeds)}")
    assert wrong == []
