"""What a case is: one thing mcp-assay does on purpose, declared once with what it is for.

A :class:`Case` is a request the active suite sends (or the proxy's server probes, or the demo's
client): its name as recordings carry it, the family that sends it, the requirement IDs whose
checks its traffic feeds, what it sends and what answer the specification expects, whether it is
malformed on purpose or names another version than the one under test, and how the rules find its
answer (:class:`Judging`). The exchange it makes carries it in a :class:`~mcp_assay.wire.model.Probe`;
rules pick an exchange out by its case (identity, or a typed attribute such as :attr:`Case.credential`),
never by comparing names. A family's requirements are the union of what its cases feed, the probe
table in ``docs/probes.md`` is generated from the cases, and a test ties cases, rules and the
catalogue together (``tests/test_cases.py``).

Cases are declared per family with a :class:`Declare` (``mcp_assay.cases.<family>``), which keeps
them in declaration order; :mod:`mcp_assay.cases` collects the families.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

__all__ = ["PAGE_SUFFIX", "Case", "Credential", "Declare", "Judging", "left_unsent"]

PAGE_SUFFIX = "-page-"
"""What a paged case's name gains from its second page on (``list``, ``list-page-2`` ...)."""


class Judging(StrEnum):
    """How the rules find a case's answer."""

    ALONG = "along"
    """Judged with the rest of the traffic: the rules that judge any such request judge it (a list, a call)."""
    SELECTED = "selected"
    """A rule picks the exchange out by its case and holds the answer to the case's expectation."""
    NOTED = "noted"
    """No requirement applies: what came back is a note in the report."""
    SETUP = "setup"
    """mcp-assay's own groundwork (a session it opens or closes, a list it reads to find a target): nothing is
    asked of the answer."""


class Credential(StrEnum):
    """What a credential case presents (the auth and tokens families)."""

    OWN = "own"
    """The run's own credentials: a control, which must be served."""
    NONE = "none"
    MALFORMED = "malformed"
    INVALID = "invalid"
    """A well-formed token the server must not accept (unsigned, expired, changed in one property)."""
    QUERY = "query"
    """The run's own token in the query string."""
    STUB = "stub"
    """A token the stand-in authorization server minted for the target."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Case:
    """One case: a request mcp-assay sends on purpose, and what it is for (compared by identity)."""

    name: str
    """The name recordings and reports carry."""
    family: str
    """The family that sends it (``envelope``, ``tokens`` ...; ``probe-server``, ``demo``)."""
    feeds: frozenset[str] = frozenset()
    """Requirement IDs whose checks judge its traffic."""
    sends: str = ""
    """What it sends, in words."""
    expects: str = ""
    """What answer the specification expects, in words."""
    invalid: bool = False
    """Malformed on purpose: never held against the client side, and not checked against the schema on the way out."""
    off_version: bool = False
    """Names another version than the one under test, or none: evidence only for the checks that judge version
    negotiation itself (``Check.off_version``)."""
    judging: Judging = Judging.ALONG
    marker: tuple[str, str] | None = None
    """The recorded key and value that tell this case from another of the same name and family (the two
    ``invalid-tool-arguments`` cases, the two ``wrong-accept`` cases, the metadata URL a fetch went to)."""
    credential: Credential | None = None
    """What a credential case presents; ``None`` for every other case."""
    control: Case | None = None
    """The control request a refusal of this case must sit between (the tokens family's two controls)."""
    alone: Case | None = None
    """The case that sends the same credential header alone (compared with this one by the rules)."""
    paged: bool = False
    """Sent once per page of a walk: page ``n`` is :meth:`page` ``(n)``."""
    base: Case | None = None
    """The case this one is a page of."""
    needs: Case | None = None
    """The case whose answer this one is made from or sent after (a get of a listed prompt needs the list): when
    that case gets no usable answer, this one is not sent, and the skip that says so is derived from this
    (:func:`left_unsent`), never kept by hand."""
    also_recorded: tuple[tuple[str, str | bool], ...] = ()
    """Keys a recording also carries for readers from before the registry (a stub token's ``requirement``)."""
    registered: bool = True
    """``False`` for a case read from a recording that names none of the registry's (an older or foreign one)."""
    _pages: dict[int, Case] = field(default_factory=dict, repr=False)

    @property
    def root(self) -> Case:
        """The case itself, or the case it is a page of."""
        return self.base if self.base is not None else self

    def is_one_of(self, *cases: Case) -> bool:
        """Whether this case (or the case it is a page of) is one of ``cases``."""
        root = self.root
        return any(root is case for case in cases)

    def page(self, number: int) -> Case:
        """Page ``number`` of a paged case (page 1 is the case itself)."""
        if number == 1:
            return self
        if not self.paged:
            raise ValueError(f"case {self.name!r} is not sent once per page")
        made = self._pages.get(number)
        if made is None:
            made = self._pages[number] = replace(
                self, name=f"{self.name}{PAGE_SUFFIX}{number}", paged=False, base=self, _pages={}
            )
        return made

    def recorded(self) -> dict[str, Any]:
        """What a recording keeps of the case beside its name and family (as tags older readers look for)."""
        fields: dict[str, Any] = {}
        if self.marker is not None:
            fields[self.marker[0]] = self.marker[1]
        if self.credential is not None:
            fields["credential"] = self.credential.value
        if self.control is not None:
            fields["control"] = self.control.name
        if self.alone is not None:
            fields["alone"] = self.alone.name
        fields.update(self.also_recorded)
        return fields

    @classmethod
    def unregistered(
        cls,
        name: str,
        family: str,
        fields: Mapping[str, Any],
        *,
        control: Case | None = None,
        alone: Case | None = None,
    ) -> Case:
        """A case a recording names that the registry does not know, with what the record says of it (the
        requirement a stub token's refusal establishes, what a credential case presents, its control)."""
        credential, requirement = fields.get("credential"), fields.get("requirement")
        known = {item.value for item in Credential}
        return cls(
            name=name,
            family=family,
            feeds=frozenset({requirement}) if isinstance(requirement, str) else frozenset(),
            credential=Credential(credential) if credential in known else None,
            control=control,
            alone=alone,
            registered=False,
        )


def ids(text: str) -> frozenset[str]:
    """``"VER-02 HTTP-37"`` -> the requirement IDs."""
    return frozenset(text.split())


@dataclass
class Declare:
    """Declares one family's cases, in order (``CASES = declare.cases`` once they are all declared)."""

    family: str
    cases: list[Case] = field(default_factory=list)

    def __call__(
        self,
        name: str,
        feeds: str = "",
        *,
        sends: str,
        expects: str,
        invalid: bool = False,
        off_version: bool = False,
        judging: Judging = Judging.ALONG,
        marker: tuple[str, str] | None = None,
        credential: Credential | None = None,
        control: Case | None = None,
        alone: Case | None = None,
        paged: bool = False,
        also_recorded: tuple[tuple[str, str | bool], ...] = (),
        needs: Case | None = None,
    ) -> Case:
        """One case of the family; ``feeds`` is a space-separated list of requirement IDs."""
        case = Case(
            name=name, family=self.family, feeds=ids(feeds), sends=sends, expects=expects, invalid=invalid,
            off_version=off_version, judging=judging, marker=marker, credential=credential, control=control,
            alone=alone, paged=paged, also_recorded=also_recorded, needs=needs,
        )  # fmt: skip
        self.cases.append(case)
        return case


def left_unsent(family: Iterable[Case], failed: Case) -> frozenset[str]:
    """What the cases of ``family`` that need ``failed`` (directly or through another) feed: the requirements left
    unjudged when ``failed`` got no usable answer."""
    gone: set[Case] = {failed}
    feeds: set[str] = set()
    for case in family:  # declaration order: a case is declared after the one it needs
        if case.needs is not None and case.needs in gone:
            gone.add(case)
            feeds |= case.feeds
    return frozenset(feeds)
