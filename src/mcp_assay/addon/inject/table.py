"""``docs/injection.md``, written from the injection registry: the faults, and what each reveals and judges.

The page is never edited by hand: :func:`render` builds it from the cases (their family, era,
transports, point, action and expectation) and from the checks their reactions name (the
requirement each cites, its level and where it exists), and a test fails when the file on disk
differs (``UPDATE_DOCS=1`` rewrites it). A case added to a family module appears in both tables.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_assay.addon.inject.fault import Fault, Reaction
from mcp_assay.addon.inject.registry import FAMILIES, FAULTS
from mcp_assay.spec.requirements import catalogue
from mcp_assay.spec.rules.versions._eras import HANDSHAKE_ERA_VERSIONS
from mcp_assay.vocabulary.protocol import Era

__all__ = ["DOCS_PATH", "render", "revisions_of"]

DOCS_PATH = "docs/injection.md"
"""Where the page lives, relative to the repository root."""

INTRO = """\
<!-- Generated from the injection registry (src/mcp_assay/addon/inject/families/) by
     mcp_assay.addon.inject.table; do not edit. `UPDATE_DOCS=1 pytest tests/addon/test_inject_registry.py`
     rewrites it, and that test fails while it differs. -->

# Faults toward the client (`--inject`)

A well-behaved server never refuses a client's version, never loses its session, always answers,
never cuts a stream and never counter-offers a version nobody can use, so what a client must do
when that happens stays *not verified* in ordinary traffic. `--inject FAMILY[,FAMILY]` (the proxy,
the mitmproxy addon's `mcp_assay_inject`, the stdio tap and the pytest fixture) makes it happen on
the server's behalf, at most once per case and era in a session, and judges the client's reaction
with the same rules as any traffic. How the proxy keeps to that is in
[faults-and-probes.md](faults-and-probes.md).
"""


def _era_of(revision: str) -> Era:
    return Era.HANDSHAKE if revision in HANDSHAKE_ERA_VERSIONS else Era.MODERN


def revisions_of(requirement: str, era: Era) -> tuple[str, ...]:
    """The revisions of the catalogue in which ``requirement`` exists, of one era."""
    return tuple(revision for revision in catalogue()[requirement].revisions if _era_of(revision) is era)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def _transports(values: Iterable[str]) -> str:
    return ", ".join(sorted(values))


def _families() -> list[str]:
    lines = [
        "## The cases",
        "",
        "Tried in this order; a request carries at most one, and the client's next request after an injected "
        "answer is its reaction, never answered in the server's place. When that reaction is an `initialize` (a "
        "client falling back to the handshake, or starting over), a fault only on how the server's answer reaches "
        "the client (held back, header names respelled) may land on it: the request the rules judge stays as it "
        "was, and a client that falls back meets the `initialize` cases in one ordinary session.",
        "",
        _row(
            [
                "`--inject` family",
                "case",
                "era",
                "transports",
                "what mcp-assay does",
                "where it lands",
                "what the client must do next",
            ]
        ),  # fmt: skip
        _row(["---"] * 7),
    ]
    for case in FAULTS:
        lines.append(
            _row(
                [
                    f"`{case.family.name}`",
                    f"`{case.name}`",
                    case.era.value,
                    _transports(case.transports),
                    case.action.does,
                    case.point.text,
                    case.expects,
                ]
            )  # fmt: skip
        )
    lines += ["", "Families: " + "; ".join(f"`{family.name}`: {family.summary}" for family in FAMILIES) + "."]
    return lines


def _judged(case: Fault, reaction: Reaction) -> list[str]:
    check = reaction.registered
    requirement = catalogue()[reaction.requirement]
    transports = sorted(set(case.transports) & check.gate.transports)
    return [
        f"{requirement.id} ({requirement.level.value})",
        ", ".join(revisions_of(requirement.id, case.era)),
        _transports(transports),
        f"`{case.family.name}` · `{case.name}`",
        case.action.does,
        f"{reaction.judged} (`{check.name}`)",
    ]


def _reactions() -> list[str]:
    order = {entry.id: position for position, entry in enumerate(catalogue())}
    pairs = sorted(
        ((case, reaction) for case in FAULTS for reaction in case.reactions),
        key=lambda pair: (order[pair[1].requirement], pair[0].rank),
    )
    rows = [_judged(case, reaction) for case, reaction in pairs]
    return [
        "## What each fault reveals, and what is judged",
        "",
        "Every client requirement a fault reveals, in each revision and transport where it exists and the fault "
        "lands. The check named last judges it; a client that sends nothing more (or waits the hold out) is "
        "*not verified*, never passed.",
        "",
        _row(["requirement", "revision", "transports", "family · case", "what is injected", "what is judged (check)"]),
        _row(["---"] * 6),
        *(_row(row) for row in rows),
    ]


def render() -> str:
    """The whole page."""
    return "\n".join([INTRO, *_families(), "", *_reactions(), ""])
