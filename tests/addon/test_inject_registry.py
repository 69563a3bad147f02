"""The injection registry: every fault is judged, every judged reaction has a fault, and the docs are the registry.

Tool-defined, except where a test says which requirement text it reads. The cases live in
``mcp_assay.addon.inject.families``; ``docs/injection.md`` is written from them
(``UPDATE_DOCS=1`` rewrites it). The client requirements a fault reveals are listed here once,
with the catalogue deciding in which revisions and transports each must be covered; every other
client requirement of the catalogue is classified with the reason no fault is needed for it, so
a requirement added to the catalogue fails here until someone decides.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.addon.inject import FAMILIES, FAULTS, family_names, parse_families
from mcp_assay.addon.inject.table import DOCS_PATH, render, revisions_of
from mcp_assay.cli import cli
from mcp_assay.spec.requirements import catalogue
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.faults import FaultKind

ROOT = Path(__file__).resolve().parents[2]
SPEC_RULES = ROOT / "src" / "mcp_assay" / "spec"

REVEALED = frozenset(
    {
        "VER-05", "VER-12", "VER-13",  # a -32022 (or another modern error) the client must react to
        "HS-07", "HS-22",  # a late initialize answer; a 404 for the session
        "HTTP-14", "HTTP-22", "HTTP-36", "HTTP-43",  # respelled names; a -32020; a broken 2026 / 2025 stream
        "CAN-10", "CAN-12", "CAN-13",  # a late answer the client gives up on
    }
)  # fmt: skip
"""Client requirements only a fault reveals: the reaction to something a well-behaved server never does. A case
must feed each."""

NOT_INJECTABLE = {
    "STDIO-10": "the server dying: the tap is the process the client started, so a server that died ends the tap "
    "and the client's restart starts another tap, with a recording of its own",
    "SUB-12": "a stdio restart (as STDIO-10)",
}
"""Revealed only by a fault the proxy or the tap cannot inject, and why."""

ORDINARY = frozenset(
    {
        # the client's own requests show it, whatever the server does (a fault may provoke it too)
        "VER-01", "VER-10", "VER-11", "VER-14", "VER-18", "VER-19", "VER-22", "HS-01", "HS-02", "HS-03", "HS-08",
        "HS-10", "HS-11", "HS-15", "HS-16", "HS-17", "HS-19", "HS-23", "META-01", "META-02", "META-03", "META-04",
        "META-05", "META-06", "META-07", "META-08", "META-11", "RES-03", "RES-12", "HTTP-02", "HTTP-03", "HTTP-04",
        "HTTP-08", "HTTP-10", "HTTP-11", "HTTP-15", "HTTP-18", "HTTP-23", "HTTP-38", "STDIO-01", "STDIO-03",
        "STDIO-04", "STDIO-06", "STDIO-09", "CAN-02", "CAN-03", "CAN-04", "CAN-05", "CAN-11", "SUB-01", "SUB-13",
        "LOG-09", "PROG-01", "PROG-02", "TOOL-17", "PRM-05", "PAGE-01", "PAGE-02", "PAGE-03", "PAGE-06", "COMP-03",
        "RPC-01", "RPC-02", "RPC-03", "RPC-04", "RPC-10", "RPC-11", "RPC-14", "RPC-16", "RPC-17", "RPC-18", "RPC-19",
        "RPC-21", "RPC-22", "RPC-23",
        # shown by what a server ordinarily sends: an input_required result, an authorization challenge
        "MRTR-07", "MRTR-08", "MRTR-09", "MRTR-10", "MRTR-11",
        "AUTH-36", "AUTH-37", "AUTH-38", "AUTH-39", "AUTH-40", "AUTH-41", "AUTH-42", "AUTH-43", "AUTH-44", "AUTH-45",
        "AUTH-46", "AUTH-47", "AUTH-48",
    }
)  # fmt: skip
"""Client requirements ordinary traffic with an ordinary server can show broken; a fault may feed them too."""


def _fed() -> set[str]:
    return {reaction.requirement for case in FAULTS for reaction in case.reactions}


def _client_requirements() -> set[str]:
    return {entry.id for entry in catalogue() if entry.side in (Side.CLIENT, Side.BOTH)}


def _era_of(revision: str) -> Era:
    return Era.MODERN if revisions_of("VER-01", Era.MODERN) == (revision,) else Era.HANDSHAKE


def test_the_docs_page_is_the_registry() -> None:
    path = ROOT / DOCS_PATH
    if os.environ.get("UPDATE_DOCS"):
        path.write_text(render(), encoding="utf-8")
    assert path.read_text(encoding="utf-8") == render(), f"{DOCS_PATH} differs: UPDATE_DOCS=1 rewrites it"


def test_the_readme_links_to_the_docs_page_instead_of_keeping_a_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert DOCS_PATH in readme
    assert "| `--inject` family |" not in readme


def test_every_client_requirement_is_fed_by_a_fault_or_classified() -> None:
    """A client requirement is fed by a case, shows in ordinary traffic, or is revealed only by a fault mcp-assay
    cannot inject (with why); one only a fault reveals is fed, and one no fault can reveal is not."""
    assert _fed() | ORDINARY | set(NOT_INJECTABLE) == _client_requirements()
    assert REVEALED <= _fed(), "a requirement only a fault reveals is fed by no case"
    assert not REVEALED & ORDINARY
    assert not _fed() & set(NOT_INJECTABLE)


def test_every_fed_requirement_has_a_fault_in_each_revision_and_transport_where_it_exists() -> None:
    """Issue 21: in every revision where it exists, the plan has a fault that reveals it and a rule that judges it."""
    covered = {
        (reaction.requirement, case.era, transport)
        for case in FAULTS
        for reaction in case.reactions
        for transport in case.transports & reaction.registered.gate.transports
    }
    missing = [
        (requirement, revision, transport)
        for requirement in sorted(_fed())
        for revision in catalogue()[requirement].revisions
        for transport in catalogue()[requirement].transports
        if (requirement, _era_of(revision), transport) not in covered
    ]
    assert missing == []


def test_every_case_is_judged_by_registered_checks_of_client_requirements_where_it_lands() -> None:
    """A fault nothing judges is noise: each reaction names a registered check, citing a client requirement that
    exists in the case's era on a transport the case lands on."""
    for case in FAULTS:
        assert case.reactions, case.name
        for reaction in case.reactions:
            check = reaction.registered
            entry = catalogue()[reaction.requirement]
            assert entry.side in (Side.CLIENT, Side.BOTH), (case.name, entry.id)
            assert check.side in (Side.CLIENT, Side.BOTH), (case.name, check.name)
            assert revisions_of(entry.id, case.era), (case.name, entry.id, case.era)
            assert case.transports & check.gate.transports, (case.name, check.name)
            assert reaction.judged.strip(), (case.name, check.name)


def test_what_the_rules_select_is_what_some_case_does() -> None:
    """Judged but never sent: every kind of fault a rule selects exchanges by is the fault of some case."""
    read: set[str] = set()
    for path in SPEC_RULES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "FaultKind":
                read.add(node.attr)
    assert read, "no rule reads a fault: the scan is broken"
    done = {case.action.fault.name for case in FAULTS}
    assert read <= done


def test_the_cases_are_tried_in_rank_order_and_each_name_and_era_is_one_case() -> None:
    assert [case.rank for case in FAULTS] == sorted(case.rank for case in FAULTS)
    assert len({case.key for case in FAULTS}) == len(FAULTS)
    assert {case.family for case in FAULTS} == set(FAMILIES)
    assert parse_families("all") == frozenset(FAMILIES)


def test_the_help_texts_list_the_families_of_the_registry() -> None:
    for command in (["proxy", "--help"], ["tap", "--help"]):
        result = CliRunner().invoke(cli, command, terminal_width=400)
        assert result.exit_code == 0, result.output
        assert f"{family_names()}, or all" in " ".join(result.output.split())


def test_every_kind_of_fault_is_something_a_case_does() -> None:
    """No kind of fault in the recording vocabulary is left over: each is an action's (a resumption follows a cut)."""
    done = {case.action.fault for case in FAULTS}
    assert done | ({FaultKind.RESUMED} if FaultKind.CUT in done else set()) == set(FaultKind)


def test_a_new_family_is_a_module_named_in_the_families_package_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A family module named in ``MODULES`` is registered: its faults are tried by rank, its name is an --inject
    family."""
    from mcp_assay.addon.inject import families, registry

    (tmp_path / "zz_extra.py").write_text(
        textwrap.dedent("""
            from mcp_assay.addon.inject.actions import HoldBack
            from mcp_assay.addon.inject.fault import Fault, FaultFamily, Reaction
            from mcp_assay.addon.inject.points import Point
            from mcp_assay.vocabulary.protocol import Era
            from mcp_assay.spec.rules.cancellation.requests import clients_cancel_requests_whose_answer_is_late

            FAMILY = FaultFamily("extra", 99, "hold back every ping answer")
            FAULTS = (
                Fault(
                    name="inject-extra", family=FAMILY, era=Era.MODERN, transports=frozenset({"stdio"}),
                    point=Point("a ping", lambda facts: facts.method == "ping"), action=HoldBack(),
                    expects="the client cancels", rank=5, note="held {method}",
                    reactions=(Reaction(clients_cancel_requests_whose_answer_is_late, "a late ping is cancelled"),),
                ),
            )
        """),
        encoding="utf-8",
    )
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "mcp_assay.addon.inject.families.zz_extra", raising=False)
    extra = importlib.import_module("mcp_assay.addon.inject.families.zz_extra")
    monkeypatch.setattr(registry, "MODULES", (*families.MODULES, extra))
    found, cases = registry._load()
    assert [family.name for family in found][-1] == "extra"
    assert cases[0].name == "inject-extra"  # rank 5: offered a request before every other case
    assert {case.name for case in cases} >= {case.name for case in FAULTS}
    sys.modules.pop("mcp_assay.addon.inject.families.zz_extra", None)


def test_a_module_without_its_family_and_cases_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_assay.addon.inject import families, registry
    from mcp_assay.vocabulary.errors import CatalogueError

    (tmp_path / "zz_stray.py").write_text("X = 1\n", encoding="utf-8")
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(tmp_path)])
    stray = importlib.import_module("mcp_assay.addon.inject.families.zz_stray")
    monkeypatch.setattr(registry, "MODULES", (*families.MODULES, stray))
    with pytest.raises(CatalogueError, match="declares no FAMILY and FAULTS"):
        registry._load()
    sys.modules.pop("mcp_assay.addon.inject.families.zz_stray", None)


def test_every_module_of_the_families_package_is_named_in_modules() -> None:
    """A family module left out of ``MODULES`` would never be registered: registration is explicit, so check it."""
    import pkgutil

    from mcp_assay.addon.inject import families

    assert {info.name for info in pkgutil.iter_modules(families.__path__)} == {
        module.__name__.rpartition(".")[2] for module in families.MODULES
    }
