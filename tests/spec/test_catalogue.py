"""The catalogue and the checks agree: known IDs, matching levels, and every MUST accounted for."""

from __future__ import annotations

import pytest

from mcp_assay.spec import rules  # noqa: F401 - registers the checks
from mcp_assay.spec.checks import REGISTRY, Every, message_check
from mcp_assay.spec.requirements import catalogue
from mcp_assay.vocabulary.errors import CatalogueError
from mcp_assay.vocabulary.verdicts import Level, Side

SCRATCH = Every("a scratch check of this test reads everything")


def test_the_catalogue_has_every_requirement_once() -> None:
    entries = list(catalogue())
    assert len(entries) == len({entry.id for entry in entries})
    prefixes = {entry.prefix for entry in entries}
    assert {"VER", "HS", "META", "RES", "HTTP", "STDIO", "CAN", "SUB", "LOG", "PROG", "TOOL", "RSRC", "PRM", "PAGE",
            "COMP", "MRTR", "RPC", "AUTH", "BEH", "GW"} <= prefixes  # fmt: skip
    for entry in entries:  # the count is the file's: a property of every row, not a number kept by hand
        assert entry.level and entry.revisions and entry.transports and entry.summary.strip(), entry.id
        assert entry.source.strip(), entry.id


def test_the_catalogue_ids_are_numbered_without_gaps_per_prefix() -> None:
    """Tool-defined: a new requirement takes the next number of its prefix (the recipe in docs/development.md)."""
    numbers: dict[str, list[int]] = {}
    for entry in catalogue():
        numbers.setdefault(entry.prefix, []).append(int(entry.id.split("-")[1]))
    for prefix, found in numbers.items():
        assert sorted(found) == list(range(1, len(found) + 1)), f"{prefix}- numbers have a gap or a repeat"


def test_every_check_cites_known_requirements_at_their_level() -> None:
    cat = catalogue()
    for check in REGISTRY.values():
        for ident in check.requirements:
            assert ident in cat, f"{check.name} cites unknown {ident}"
            assert check.level in cat[ident].levels, f"{check.name} restates {ident} as {check.level}"


def test_a_check_citing_an_unknown_id_fails_at_import() -> None:
    with pytest.raises(CatalogueError, match="unknown requirement"):
        message_check(requirements="NOPE-99", level=Level.MUST, subject="x", methods=SCRATCH)


def test_a_check_restating_a_different_level_fails_at_import() -> None:
    with pytest.raises(CatalogueError, match="catalogue gives"):
        message_check(requirements="RPC-01", level=Level.SHOULD, subject="x", methods=SCRATCH)


def test_a_check_takes_its_side_and_transports_from_the_catalogue() -> None:
    """Tool-defined: a declaration does not restate whom a requirement binds or where it exists."""
    cat = catalogue()
    for check in REGISTRY.values():
        if check.narrowed is not None:
            continue
        entries = [cat[ident] for ident in check.requirements]
        sides = {entry.side for entry in entries}
        assert check.side is (sides.pop() if len(sides) == 1 else Side.BOTH), check.name
        assert check.gate.transports == {t for entry in entries for t in entry.transports}, check.name


def test_a_check_narrowing_the_catalogue_says_why() -> None:
    """Tool-defined: every check whose side or transports differ from its requirements' carries the reason."""
    narrowed = [check for check in REGISTRY.values() if check.narrowed is not None]
    assert narrowed, "the rules narrow some requirements (the server's half of one binding both sides ...)"
    assert all(len(check.narrowed or "") > 20 for check in narrowed)


def test_restating_the_catalogue_fails_at_import() -> None:
    with pytest.raises(CatalogueError, match="restates the catalogue's side"):
        message_check(requirements="RPC-05", level=Level.MUST, side=Side.SERVER, subject="x", methods=SCRATCH)
    with pytest.raises(CatalogueError, match="restates the catalogue's transports"):
        message_check(requirements="HTTP-07", level=Level.MUST, transports={"http"}, subject="x", methods=SCRATCH)


def test_narrowing_without_a_reason_fails_at_import() -> None:
    with pytest.raises(CatalogueError, match="without saying why"):
        message_check(requirements="RPC-05", level=Level.MUST, side=Side.CLIENT, subject="x", methods=SCRATCH)
    with pytest.raises(CatalogueError, match="narrows nothing"):
        message_check(
            requirements="RPC-05", level=Level.MUST, because="no reason to give", subject="x", methods=SCRATCH
        )


def test_every_requirement_without_a_check_says_why() -> None:
    """Tool-defined contract: a requirement is either checked or carries a `deferred` reason in
    requirements.yaml, which `mcp-assay checks --uncovered` shows.

    The list printed here is the open work: requirements no check enforces yet."""
    cited = {ident for check in REGISTRY.values() for ident in check.requirements}
    entries = list(catalogue())
    unchecked = [entry for entry in entries if entry.id not in cited]
    print(f"\n{len(unchecked)} of {len(entries)} requirements have no check yet:")
    for entry in unchecked:
        print(f"  {entry.id:<8} {entry.level.value:<8} {entry.deferred or '(no reason given)'}")
    missing_reason = [entry.id for entry in unchecked if not entry.deferred]
    stale = [entry.id for entry in entries if entry.deferred and entry.id in cited]
    assert not stale, f"these requirements have a check now; drop their deferred reason: {stale}"
    assert not missing_reason, f"requirements with neither a check nor a deferred reason: {missing_reason}"


def test_every_check_title_is_a_whole_sentence() -> None:
    """Issue 27: HS-12's title was an unfinished sentence ("... or one the server does not"): a title is the
    docstring's whole first paragraph, never its first line."""
    unfinished = [(check.name, check.title) for check in REGISTRY.values() if not check.title.endswith((".", ")"))]
    assert not unfinished
    (hs_12,) = [check for check in REGISTRY.values() if check.requirements == ("HS-12",)]
    assert hs_12.title.endswith("or one the server does not support, gets HTTP 400.")


def test_every_entry_marked_inferred_is_graded_as_a_whole_or_by_its_clause() -> None:
    """Issue 28: an entry whose text marks it inferred carries the qualifier (the whole entry counts one level
    lower) or names the clause that is (only a failure of that clause counts lower), and some check judges
    every such clause by name."""
    named = {(ident, clause) for check in REGISTRY.values() for clause in check.clauses for ident in check.requirements}
    for entry in catalogue():
        if "(inferred)" in entry.summary:
            assert entry.qualifier == "inferred" or entry.clauses, entry.id
        for name, clause in (entry.clauses or {}).items():
            assert clause.qualifier == "inferred" and clause.severity is entry.severity.lowered(), entry.id
            assert (entry.id, name) in named, f"no check names {entry.id}'s clause {name}"
    assert {"HTTP-07", "VER-05"} <= {entry.id for entry in catalogue() if entry.clauses}


def test_a_check_naming_a_clause_the_catalogue_does_not_give_fails_at_import() -> None:
    with pytest.raises(CatalogueError, match="does not give"):
        message_check(
            requirements="HTTP-07", level=Level.MUST, subject="x", clauses=("no-such-clause",), methods=SCRATCH
        )


def test_a_check_that_names_the_families_it_judges_names_known_ones() -> None:
    """Tool-defined (issue 28): a check picking its own cases out says whose; a narrowed run (--only) relies on it."""
    from mcp_assay.cases import BY_FAMILY

    named = [check for check in REGISTRY.values() if check.families is not None]
    assert named and all(check.families and check.families <= set(BY_FAMILY) for check in named)
