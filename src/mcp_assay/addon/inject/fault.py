"""One injected fault, declared once: where it lands, what it does, and what the client is judged on.

A :class:`Fault` is a value in a family module (:mod:`mcp_assay.addon.inject.families`): its name,
its :class:`FaultFamily`, the era and transports it exists in, its :class:`~.points.Point`, the
:class:`~.actions.Action` the transports apply, what the client is expected to do next, and the
:class:`Reaction` s that judge it, each naming the registered check (a function of the rules) and
what that check judges. The requirement IDs a case feeds are derived from those checks; the
``--inject`` families, their help texts and the tables in ``docs/injection.md`` are derived from
the cases. An injected exchange's :class:`~mcp_assay.wire.model.Probe` carries the case as the registry of
:mod:`mcp_assay.cases` knows cases (:attr:`Fault.tag_case`: its name, ``inject-<family>``, what it feeds,
does and expects), with what the fault did among its facts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.addon.inject.actions import Action
from mcp_assay.addon.inject.points import Point, RequestFacts
from mcp_assay.cases import NO_FACTS, Case, Facts, FaultKind, Judging
from mcp_assay.spec.checks import REGISTRY, Check
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.wire.model import Probe

__all__ = ["Fault", "FaultFamily", "Reaction"]

TRANSPORTS = frozenset({"http", "stdio"})


@dataclass(frozen=True, slots=True)
class FaultFamily:
    """A group of cases ``--inject`` names together (``version``, ``hold`` ...)."""

    name: str
    rank: int
    """Where the family is listed (help texts, docs), first lowest."""
    summary: str
    """What the family does, in one line."""

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Reaction:
    """One check a case's fault feeds, and what it judges of the client's reaction, clause by clause."""

    check: Callable[..., Any]
    """The rule: a function registered with ``@log_check``, citing one requirement."""
    judged: str

    @property
    def registered(self) -> Check:
        found = REGISTRY.get(getattr(self.check, "__name__", ""))
        if found is None or found.func is not self.check:
            raise LookupError(f"{self.check!r} is not a registered check")
        return found

    @property
    def requirement(self) -> str:
        (requirement,) = self.registered.requirements
        return requirement


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One injected fault: where it lands, what it does, and the reactions it is judged by."""

    name: str
    """The tag's name in recordings and reports (``inject-version-refusal``)."""
    family: FaultFamily
    era: Era
    transports: frozenset[str]
    point: Point
    action: Action
    expects: str
    """What the client is expected to do next, for the report (the tag's ``intent``) and the docs."""
    reactions: tuple[Reaction, ...]
    rank: int
    """The order a request is offered to the cases (the first whose point it meets takes it), first lowest."""
    note: str
    """The report's note when it fires, formatted with ``method``, ``version`` and ``session`` of the request."""

    tag_case: Case = field(init=False, repr=False, compare=False)
    """The case the injected exchange's tag carries (not one the suite may send: ``registered`` is off)."""

    def __post_init__(self) -> None:
        if not self.transports or not self.transports <= TRANSPORTS:
            raise ValueError(f"{self.name}: transports must be some of {sorted(TRANSPORTS)}")
        if "stdio" in self.transports and not self.action.on_stdio:
            raise ValueError(f"{self.name}: the tap cannot apply {type(self.action).__name__} to a line")
        if not self.reactions:
            raise ValueError(f"{self.name}: a fault nothing judges is noise")
        object.__setattr__(self, "tag_case", self.tag_case_named(self.name))

    def tag_case_named(self, name: str, expects: str | None = None) -> Case:
        """A case of this fault's family for the tag of an exchange it makes (its own, or a resumption's)."""
        return Case(
            name=name, family=f"inject-{self.family.name}", feeds=self.feeds, sends=self.action.does,
            expects=self.expects if expects is None else expects, judging=Judging.SELECTED, registered=False,
        )  # fmt: skip

    @property
    def feeds(self) -> frozenset[str]:
        """The requirement IDs whose checks judge the client's reaction to this case."""
        return frozenset(reaction.requirement for reaction in self.reactions)

    @property
    def at_response(self) -> bool:
        """Decided when the answer's head arrives; until then a matching request is only a candidate."""
        return self.action.at_response

    @property
    def key(self) -> tuple[str, str]:
        return (self.name, self.era.value)

    def probe(self, facts: Facts = NO_FACTS, *, fault: FaultKind | None = None, case: Case | None = None) -> Probe:
        """The tag the injected exchange carries in the recording and in every report: this case (or ``case``, a
        resumption's) and its fault (or ``fault``), with ``facts`` of this injection (``hold_ms``, ``supported``)."""
        tagged = case if case is not None else self.tag_case
        return Probe.of(
            tagged, tagged.expects, injected=True,
            facts=facts.merged(era=self.era, fault=fault or self.action.fault),
        )  # fmt: skip

    def matches(self, facts: RequestFacts) -> bool:
        return facts.transport in self.transports and facts.era is self.era and self.point(facts)

    def noted(self, facts: RequestFacts) -> str:
        """What the report's note says this case did to the request."""
        return self.note.format(method=facts.method, version=facts.version, session=facts.session_id)
