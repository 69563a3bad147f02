"""The requirement catalogue every check cites.

``requirements.yaml`` holds one entry per requirement of the MCP specification (and of the
authorization and behaviour catalogue) that mcp-assay knows about: its stable ID, the keyword
level, where it applies, whom it binds, a one-line paraphrase in our own words and where the
specification says it. Checks are declared against these IDs; a check citing an unknown ID, or
restating a different level, fails at import time instead of producing a misleading report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from mcp_assay.vocabulary.errors import CatalogueError
from mcp_assay.vocabulary.verdicts import Level, RequirementText, Severity, Side

__all__ = ["Catalogue", "Clause", "Requirement", "catalogue", "glossary"]

_ID = re.compile(r"^[A-Z]+-\d{2}$")
_FIELDS = {
    "id", "area", "level", "also", "qualifier", "ambiguity", "severity", "revisions", "transports",
    "side", "observe", "summary", "source", "deferred", "graded", "clauses",
}  # fmt: skip
_CLAUSE_FIELDS = {"qualifier", "text"}
_RANK = {Severity.INFO: 0, Severity.SHOULD: 1, Severity.MUST: 2}
_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


@dataclass(frozen=True, slots=True)
class Clause:
    """A part of a requirement the catalogue qualifies on its own (a clause the row marks *inferred*).

    The specification may state a requirement with its keyword and only imply one of its parts: the
    row keeps its level, and a failure of that part alone counts at the clause's :attr:`severity`."""

    name: str
    """How a rule names the clause its failure is about (``failed(..., clause=NAME)``)."""
    text: str
    """The clause, in our own words."""
    qualifier: str
    severity: Severity
    """How a failure of this clause alone counts: one level below the row for an inferred clause."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One catalogue entry."""

    id: str
    area: str
    level: Level
    also: tuple[Level, ...]
    """Other keywords the entry carries for some revision or transport (e.g. MUST NOT vs SHOULD NOT)."""
    qualifier: str | None
    """``inferred``, ``schema``, ``inherited``, ``derived``, ``policy`` ... as the catalogue marks it."""
    ambiguity: tuple[str, ...]
    severity: Severity
    """How a failure counts, after lowering inferred and ambiguous entries."""
    revisions: tuple[str, ...]
    transports: tuple[str, ...]
    side: Side
    observe: str
    summary: str
    source: str
    deferred: str | None
    """For a requirement without a check: why it is not checked (yet)."""
    graded: tuple[str, ...] = ()
    """Conditions of the catalogue's gate under which a failure of this requirement is graded lower
    (:class:`~mcp_assay.spec.checks.Grading` names, e.g. ``own-auth-scheme``: AUTH-AND-BEHAVIOUR §0.3.3)."""
    clauses: Mapping[str, Clause] | None = None
    """Parts of the requirement the catalogue qualifies on their own, by name (``None``: none)."""

    @property
    def levels(self) -> tuple[Level, ...]:
        return (self.level, *self.also)

    @property
    def prefix(self) -> str:
        return self.id.split("-", 1)[0]


def _severity(level: Level, qualifier: str | None, ambiguity: tuple[str, ...], override: Any) -> Severity:
    if override is not None:
        return Severity(str(override))
    severity = level.severity
    if qualifier == "inferred" or ambiguity:
        severity = severity.lowered() if severity is Severity.MUST else severity
    return severity


def _clauses(ident: str, raw: Any, level: Level, severity: Severity) -> dict[str, Clause] | None:
    """The clauses of one entry: each ``name: {qualifier: inferred, text: ...}``."""
    if not raw:
        return None
    if not isinstance(raw, Mapping):
        raise CatalogueError(f"requirements.yaml {ident}: clauses must be a mapping of name to clause")
    found: dict[str, Clause] = {}
    for name, body in raw.items():
        if not isinstance(body, Mapping) or set(body) != _CLAUSE_FIELDS or not _NAME.match(str(name)):
            raise CatalogueError(f"requirements.yaml {ident}: clause {name!r} needs exactly {sorted(_CLAUSE_FIELDS)}")
        qualifier = str(body["qualifier"])
        if qualifier != "inferred":
            raise CatalogueError(f"requirements.yaml {ident}: clause {name!r} has qualifier {qualifier!r}")
        lowered = level.severity.lowered() if level.severity is not Severity.INFO else Severity.INFO
        found[str(name)] = Clause(
            name=str(name),
            text=" ".join(str(body["text"]).split()),
            qualifier=qualifier,
            severity=min(lowered, severity, key=_RANK.__getitem__),
        )
    return found


def _parse(entry: Mapping[str, Any], position: int) -> Requirement:
    unknown = set(entry) - _FIELDS
    ident = str(entry.get("id", f"#{position}"))
    if unknown:
        raise CatalogueError(f"requirements.yaml {ident}: unknown fields {sorted(unknown)}")
    if not _ID.match(ident):
        raise CatalogueError(f"requirements.yaml entry {position}: malformed id {ident!r}")
    try:
        level = Level(entry["level"])
        also = tuple(Level(item) for item in entry.get("also") or ())
        ambiguity = tuple(str(item) for item in entry.get("ambiguity") or ())
        qualifier = entry.get("qualifier")
        severity = _severity(level, qualifier, ambiguity, entry.get("severity"))
        return Requirement(
            id=ident,
            area=str(entry["area"]),
            level=level,
            also=also,
            qualifier=str(qualifier) if qualifier else None,
            ambiguity=ambiguity,
            severity=severity,
            revisions=tuple(str(item) for item in entry["revisions"]),
            transports=tuple(str(item) for item in entry["transports"]),
            side=Side(entry["side"]),
            observe=str(entry["observe"]),
            summary=str(entry["summary"]).strip(),
            source=str(entry["source"]).strip(),
            deferred=str(entry["deferred"]).strip() if entry.get("deferred") else None,
            graded=tuple(str(item) for item in entry.get("graded") or ()),
            clauses=_clauses(ident, entry.get("clauses"), level, severity),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise CatalogueError(f"requirements.yaml {ident}: {exc!r}") from exc


class Catalogue:
    """All requirements by ID."""

    def __init__(self, entries: list[Requirement]) -> None:
        self._by_id: dict[str, Requirement] = {}
        for entry in entries:
            if entry.id in self._by_id:
                raise CatalogueError(f"requirements.yaml: duplicate id {entry.id}")
            self._by_id[entry.id] = entry

    def __getitem__(self, ident: str) -> Requirement:
        try:
            return self._by_id[ident]
        except KeyError:
            raise CatalogueError(f"unknown requirement id {ident!r}") from None

    def __contains__(self, ident: object) -> bool:
        return ident in self._by_id

    def __iter__(self) -> Iterator[Requirement]:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)


@cache
def catalogue() -> Catalogue:
    """The catalogue shipped with the package (parsed once)."""
    text = resources.files("mcp_assay.spec").joinpath("requirements.yaml").read_text(encoding="utf-8")
    # libyaml's safe loader when PyYAML has it: the same documents, ten times faster (every command reads it)
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(data, list):
        raise CatalogueError("requirements.yaml must be a list of entries")
    return Catalogue([_parse(entry, position) for position, entry in enumerate(data)])


def glossary(verdicts: Iterable[Any]) -> dict[str, RequirementText]:
    """What the catalogue says about every requirement the verdicts cite (for the report's readers)."""
    cat = catalogue()
    texts: dict[str, RequirementText] = {}
    for verdict in verdicts:
        for ident in verdict.requirements:
            if ident in texts or ident not in cat:
                continue
            entry = cat[ident]
            texts[ident] = RequirementText(
                id=ident,
                level=entry.level.value,
                side=entry.side.value,
                summary=" ".join(entry.summary.split()),
                source=entry.source,
            )
    return texts
