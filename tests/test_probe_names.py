"""Every probe mcp-assay sends is named in one registry, and rules compare names by constant."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcp_assay
from mcp_assay.errors import HarnessError
from mcp_assay.probe_names import ProbeName, http_verb, page, prm_fetch, registered, stub_token
from mcp_assay.spec import SpecSet
from mcp_assay.suite.context import SuiteContext
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import respond
from tests.suite.test_run_scripted import run_suite

PACKAGE = Path(mcp_assay.__file__).parent


def test_fixed_and_composite_names_are_registered_and_others_are_not() -> None:
    """Tool-defined."""
    assert registered(ProbeName.UNKNOWN_TOOL)
    assert registered(page(ProbeName.LIST_AGAIN, 3)) and page(ProbeName.LIST, 1) == "list"
    assert registered(prm_fetch("path")) and registered(stub_token("jku")) and registered(http_verb("GET"))
    assert not registered("made-up-probe")
    assert not registered("made-up-probe-page-2")


def test_the_suite_refuses_to_send_an_unregistered_probe() -> None:
    """Tool-defined: a probe named outside the registry is a defect of mcp-assay, caught when it is sent."""
    ctx = SuiteContext.__new__(SuiteContext)
    ctx.family = "tools"
    with pytest.raises(HarnessError, match="not named"):
        ctx.probe("made-up-probe")
    assert ctx.probe(ProbeName.UNKNOWN_TOOL).name == "unknown-tool"


def test_every_probe_a_whole_run_sends_is_registered(spec: SpecSet) -> None:
    """Tool-defined: a run against a conformant scripted server sends only registered probe names
    (the guard would otherwise end families with a harness error)."""
    report, _ = run_suite(spec, respond(Server()))
    assert not [note for note in report.notes if "harness" in note]
    assert not [verdict for verdict in report.results if "harness error" in verdict.reason]


def test_rules_compare_probe_names_with_the_registry_not_with_literals() -> None:
    """Tool-defined: no rule compares a probe's name with a string literal."""
    offenders = []
    for path in (PACKAGE / "spec" / "rules").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and "name" in ast.unparse(node.left) and "probe" in ast.unparse(node.left):
                literals = [c for c in node.comparators if isinstance(c, ast.Constant) and isinstance(c.value, str)]
                if literals:
                    offenders.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "probe_named":
                if any(isinstance(arg, ast.Constant) for arg in node.args[2:]):
                    offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, offenders
