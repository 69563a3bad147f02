"""The case registry ties the cases, the rules and the catalogue together, and nothing drifts apart.

Tool-defined. Every requirement the catalogue observes actively is fed by some case (or is a known
gap, listed here with the reason); every case is sent by some code and judged by some check; a case a
rule selects by itself is one some family sends; a family's requirements are what its cases feed; and a
recorded probe tag reads back to the case that made it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import mcp_assay
from mcp_assay import cases as registry
from mcp_assay.addon.registry import all_cases, injection_cases
from mcp_assay.cases import BY_FAMILY, Case, Explored, ExploreRole, Facts, FaultKind, Judging, lookup, probe_cases
from mcp_assay.spec.engine import registered_checks
from mcp_assay.spec.requirements import catalogue
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.vocabulary.errors import HarnessError
from mcp_assay.wire.model import Probe

PACKAGE = Path(mcp_assay.__file__).parent
SENDERS = ("suite", "addon", "demo")
"""Where cases are sent from (the rules live in ``spec/rules``)."""
COLLECTIONS = frozenset({"CASES", "LATER_CASES", "WRITES_CASES", "BY_FAMILY"})
"""Names that hold a family's every case: naming one sends nothing."""

KNOWN_GAPS = {
    "RES-11": "a public cacheScope is only wrong when the same request gets another payload under another "
    "authorization; no case compares payloads across principals but the principals' own tools/list (AUTH-25)",
    "HTTP-44": "a 2025 resumption replaying another stream needs a stream broken mid-way and resumed with "
    "Last-Event-ID; the suite breaks no stream of its own (the proxy's cut injection breaks one toward a client)",
    "STDIO-08": "judged at the end of every stdio run, when the suite closes the server's stdin and times its "
    "exit (a process-exit record), not by a case",
    "AUTH-31": "judged from the addresses a server the suite started listens on (a launch observation), not by a case",
    "BEH-10": "deferred in the catalogue: it needs a hook into the server's own audit log",
    "RSRC-13": "the suite does not read outside a server's tree: it cannot tell a refused escape from a "
    "missing file without reading something it should not (its skip says so)",
}
"""Requirements the catalogue observes actively that no case feeds, each with why."""


def _modules(*parts: str) -> Iterator[tuple[Path, ast.Module]]:
    for part in parts:
        for path in sorted((PACKAGE / part).rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def _case_modules(tree: ast.Module) -> dict[str, ModuleType | Any]:
    """The names a module binds to case modules (``from mcp_assay.cases import tools as cases``) or to values
    of them (``from mcp_assay.cases.tokens import STUB_TOKENS``)."""
    bound: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("mcp_assay.cases"):
            continue
        module = importlib.import_module(node.module or "")
        for alias in node.names:
            value = getattr(module, alias.name, None)
            if value is None:
                value = importlib.import_module(f"{node.module}.{alias.name}")
            bound[alias.asname or alias.name] = value
    return bound


def _cases_in(value: Any) -> set[Case]:
    if isinstance(value, Case):
        return {value}
    if isinstance(value, dict):
        return {case for item in value.values() for case in _cases_in(item)}
    if isinstance(value, tuple | list):
        return {case for item in value for case in _cases_in(item)}
    return set()


def _named_by_a_skip(parent: ast.AST | None, parents: dict[ast.AST, ast.AST]) -> bool:
    """``parent`` is the ``case=`` of a ``ctx.skip(...)`` call."""
    call = parents.get(parent) if isinstance(parent, ast.keyword) and parent.arg == "case" else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "skip"


def referenced(*parts: str) -> dict[Case, list[str]]:
    """Every case the modules under ``parts`` name (an attribute of a case module, a case imported by name, a
    collection of some, or a registry function called with constants), with where; a case only read for its
    ``feeds`` is not counted, nor a family's whole collection."""
    found: dict[Case, list[str]] = {}

    def add(cases: Iterable[Case], where: str) -> None:
        for case in cases:
            found.setdefault(case, []).append(where)

    for path, tree in _modules(*parts):
        bound = _case_modules(tree)
        if not bound:
            continue
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        where = str(path.relative_to(PACKAGE))
        for node in ast.walk(tree):
            value: Any = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
                if node.attr in COLLECTIONS:
                    continue
                value = getattr(bound[node.value.id], node.attr, None)
            elif isinstance(node, ast.Name) and node.id in bound and not isinstance(parents.get(node), ast.Attribute):
                value = bound[node.id]
            else:
                continue
            parent = parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr == "feeds":
                continue
            if _named_by_a_skip(parent, parents):
                continue  # a skip says the case was not sent
            if inspect.isfunction(value) and isinstance(parent, ast.Call) and parent.func is node:
                if all(isinstance(arg, ast.Constant) for arg in parent.args):
                    value = value(*(arg.value for arg in parent.args))
            add(_cases_in(value), f"{where}:{node.lineno}")
    return found


def test_every_actively_observed_requirement_is_fed_by_a_case_or_a_known_gap() -> None:
    """Tool-defined: a requirement the catalogue says needs mcp-assay to act is fed by a probe or an injection
    case; the ones no case feeds are listed above with the reason, and a listed one that a case now feeds
    must leave the list."""
    fed = {requirement for case in all_cases() for requirement in case.feeds}
    active = {item.id for item in catalogue() if item.observe == "active"}
    unfed = active - fed
    assert unfed <= set(KNOWN_GAPS), f"actively observed but fed by no case: {sorted(unfed - set(KNOWN_GAPS))}"
    stale = set(KNOWN_GAPS) - unfed
    assert not stale, f"listed as gaps but fed by a case (or no longer active): {sorted(stale)}"


def test_every_case_feeds_known_requirements_each_judged_by_a_check() -> None:
    """Tool-defined: a case is never sent for nothing: what it feeds is in the catalogue, and each of those
    requirements is cited by a registered check (or deferred in the catalogue, saying why); a case that feeds
    nothing is one whose answer is only noted, or mcp-assay's own groundwork."""
    known = {item.id: item for item in catalogue()}
    cited = {requirement for check in registered_checks() for requirement in check.requirements}
    for case in probe_cases():
        unknown = case.feeds - set(known)
        assert not unknown, f"{case.family}/{case.name} feeds unknown requirements {sorted(unknown)}"
        unjudged = {item for item in case.feeds if item not in cited and known[item].deferred is None}
        assert not unjudged, f"{case.family}/{case.name} feeds {sorted(unjudged)}, which no check judges"
        quiet = case.judging in (Judging.NOTED, Judging.SETUP)
        assert quiet == (not case.feeds), f"{case.family}/{case.name}: feeds {sorted(case.feeds)} but is {case.judging}"


def test_a_case_a_rule_must_pick_out_is_picked_out_by_one() -> None:
    """Tool-defined: a case declared as judged by a rule that selects it is named by some rule."""
    selected = referenced("spec/rules")
    lonely = [
        f"{case.family}/{case.name}"
        for case in probe_cases()
        if case.judging is Judging.SELECTED and case not in selected
    ]
    assert not lonely, f"selected cases no rule names: {lonely}"


def test_every_case_is_sent_and_every_case_a_rule_judges_is_sent() -> None:
    """Tool-defined: no case is declared and never sent, and no rule waits for a case nothing sends."""
    sent = referenced(*SENDERS)
    never = [f"{case.family}/{case.name}" for case in probe_cases() if case not in sent]
    assert not never, f"declared but never sent: {never}"
    judged = referenced("spec/rules")
    waiting = [f"{case.family}/{case.name} ({', '.join(where)})" for case, where in judged.items() if case not in sent]
    assert not waiting, f"judged but never sent: {waiting}"


def test_the_reference_finder_finds_what_is_missing() -> None:
    """Tool-defined: the scan above can fail: it sees the rules' cases, and a case no module names is absent."""
    judged = referenced("spec/rules")
    assert registry.tools.UNKNOWN_TOOL in judged and registry.tokens.stub_token("jku") in judged
    assert registry.behaviour.REFUSALS[registry.Refusal.ANONYMOUS] in judged  # through the collection
    assert registry.versioning.ACCEPTED not in judged


def test_a_family_s_requirements_are_what_its_cases_feed() -> None:
    """Tool-defined: every suite family sends the registry's cases of its name, and nothing else."""
    for family in FAMILIES:
        assert family.cases == BY_FAMILY[family.name], family.name
        assert all(case.family == family.name for case in family.cases), family.name
        assert family.requirements == frozenset().union(*(case.feeds for case in family.cases))
    outside = set(BY_FAMILY) - {family.name for family in FAMILIES}
    assert outside == {"probe-server", "demo"}


def test_each_case_has_one_identity_and_reads_back_from_its_record() -> None:
    """Tool-defined: two cases never share a name, family and marker, and a recorded tag (a page of a paged
    case included) reads back to the very case that made it."""
    seen: set[tuple[str, str, tuple[str, str] | None]] = set()
    for case in probe_cases():
        key = (case.family, case.name, case.marker)
        assert key not in seen, key
        seen.add(key)
        probe = Probe.of(case).at("2026-07-28")
        back = Probe.from_record(probe.to_record())
        assert back is not None and back.case is case and back == probe, case.name
        if case.paged:
            page = Probe.from_record(Probe.of(case.page(3)).to_record())
            assert page is not None and page.case is case.page(3) and page.of_case(case)


def test_a_record_naming_no_case_keeps_what_it_says() -> None:
    """Tool-defined: an older or foreign recording's tag still says what it presented and which requirement."""
    probe = Probe.from_record(
        {"name": "auth-stub-old", "family": "tokens", "credential": "invalid", "requirement": "AUTH-16",
         "control": "auth-stub-control", "principal": "alice", "attempt": "two"}
    )  # fmt: skip
    assert probe is not None and not probe.case.registered
    assert probe.case.credential is registry.Credential.INVALID and probe.case.feeds == {"AUTH-16"}
    assert probe.case.control is registry.tokens.STUB_CONTROL
    assert probe.facts.principal == "alice" and probe.facts.attempt is None  # a value of the wrong type is left out
    assert lookup("list", "tools") is registry.tools.LIST and lookup("list-page-2", "prompts") is (
        registry.prompts.LIST.page(2)
    )


def test_typed_facts_of_an_injection_and_of_an_explored_call_read_back_from_their_record() -> None:
    """Tool-defined: what an injection did and how ``run --explore`` came to a call's arguments are typed facts,
    recorded as recordings always kept them (``fault`` flat, the story one object under ``explored``)."""
    story = Explored(
        tool="list_drafts", seed=7, role=ExploreRole.REPORTED, kind="inside", origin="edge", found=("a_check",),
        generated='{"query": "x"}', steps=("removed limit",), shrink_calls=3,
    )  # fmt: skip
    probe = Probe.of(registry.explore.EXPLORE, facts=Facts(explored=story))
    record = probe.to_record()
    assert record["explored"] == {
        "tool": "list_drafts", "seed": 7, "role": "reported", "kind": "inside", "origin": "edge",
        "found": ["a_check"], "generated": '{"query": "x"}', "steps": ["removed limit"], "shrink_calls": 3,
    }  # fmt: skip
    back = Probe.from_record(record)
    assert back == probe and back.explored is not None and back.explored.reported
    searched = Probe.from_record({"name": "explore", "family": "explore", "explored": {"tool": "t", "role": "search"}})
    assert searched is not None and searched.explored == Explored(tool="t", role=ExploreRole.SEARCH)
    nameless = Probe.from_record({**record, "explored": {"seed": 1}})  # a story naming no tool is left out
    assert nameless is not None and nameless.explored is None
    injected = Probe.from_record({"name": "inject-held-answer", "injected": True, "fault": "held", "hold_ms": 50})
    assert injected is not None and injected.facts.fault is FaultKind.HELD and injected.facts.hold_ms == 50
    unknown = Probe.from_record({"name": "x", "injected": True, "fault": "burnt"})
    assert unknown is not None and unknown.facts.fault is None


def test_the_suite_refuses_to_send_a_case_the_registry_does_not_declare() -> None:
    """Tool-defined: a case made up outside the registry is a defect of mcp-assay, caught when it is sent."""
    ctx = SuiteContext.__new__(SuiteContext)
    with pytest.raises(HarnessError, match="not declared"):
        ctx.probe(Case(name="made-up", family="tools", registered=False))
    assert ctx.probe(registry.tools.UNKNOWN_TOOL).name == "unknown-tool"


def test_the_combined_view_holds_every_probe_case_and_every_injected_fault() -> None:
    """Tool-defined."""
    combined = all_cases()
    assert set(probe_cases()) <= set(combined)
    assert {case.name for case in injection_cases()} >= {"inject-version-refusal", "inject-held-answer"}
    assert all(not case.registered for case in injection_cases())
