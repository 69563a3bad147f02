"""Which request an injected fault lands on, and a budget per session.

An injection answers, delays or reshapes one exchange on the server's behalf so that a client
meets what a well-behaved server never sends (a ``-32022``, a ``404`` for its session, an answer
that never comes, a stream cut short). Each case has a *point*: the kind of request it lands on,
chosen so that a client's ordinary use meets it (the first 2026 request of a session, the first
request carrying a 2025 session id, the first ``tools/call`` ...). Each case fires at most once
per era in a proxy or tap session, so a correct client still completes its work; the cases are
tried in a fixed order (their ``rank``) and one request carries at most one of them. The client's
next request on the same connection after an injected answer is the reaction the rules judge (the
retry after a refusal, the new ``initialize`` after a ``404``), and nothing may change it: no case
answers it in the server's place. One kind of fault may still land there: when the reaction is an
``initialize`` (a client falling back to the handshake, or starting over), a fault only on how the
server's answer reaches the client (held back, header names respelled) leaves the request the
rules judge as it was, and it is the first ``initialize`` a client that falls back ever sends, so
the cases whose point is an ``initialize`` meet it in one ordinary session of such a client.

Some cases can only be decided when the answer's head arrives (a 2025 stream cut needs an event
stream to cut; a header respelling needs the header): the request is then a *candidate*, and
the case is confirmed or let go at the response. Nothing here knows mitmproxy or stdio; the
HTTP addon and the tap both ask the same :class:`Plan`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.addon.inject.fault import Fault, FaultFamily
from mcp_assay.addon.inject.points import RequestFacts
from mcp_assay.vocabulary.protocol import Era

__all__ = ["DEFAULT_HOLD_MS", "Plan", "unmet_note"]

DEFAULT_HOLD_MS = 3000
"""How long a held answer is held back (``--inject-hold-ms``): past a client's timeout, bounded."""


@dataclass
class Plan:
    """The cases a session may inject, and which of them have fired (safe to use from several threads)."""

    families: frozenset[FaultFamily]
    cases: Sequence[Fault]
    """Every case, in the order they are tried (the families' own order)."""
    hold_ms: int = DEFAULT_HOLD_MS
    window: Sequence[str] = ()
    """Revision names mcp-assay knows, newest first (what a refusal offers when the server's own list is unknown)."""
    advertised: list[str] = field(default_factory=list)
    """The server's ``supportedVersions``, once a discover result was seen."""
    fired: dict[tuple[str, str], int] = field(default_factory=dict)
    reacting: set[str] = field(default_factory=set)
    """Connections whose next request is a reaction to an injection (left alone)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def enabled(self, case: Fault) -> bool:
        return case.family in self.families

    def claim(self, facts: RequestFacts, connection: str = "") -> Fault | None:
        """The request-time case this request meets, if any (its budget is used up at once). When the first case
        it meets in rank order is decided at the answer, none: the request is left to :meth:`candidates`."""
        with self._lock:
            reaction = facts.is_request and connection in self.reacting
            if reaction:
                self.reacting.discard(connection)
            for case in self.cases:
                if not self.enabled(case) or case.key in self.fired:
                    continue
                if reaction and not self.may_follow(case, facts):
                    continue
                if case.matches(facts):
                    if case.at_response:
                        return None
                    self.fired[case.key] = 1
                    self.reacting.add(connection)
                    return case
        return None

    @staticmethod
    def may_follow(case: Fault, facts: RequestFacts) -> bool:
        """Whether ``case`` may land on a reaction: only on an ``initialize``, and only on how its answer arrives."""
        return case.action.answer_only and facts.method == "initialize"

    def candidates(self, facts: RequestFacts, *, reaction: bool = False) -> tuple[Fault, ...]:
        """Response-time cases this request may carry, to be confirmed when its answer's head arrives (ask after
        :meth:`claim` found none; ``reaction``: the request is the reaction to an earlier injection)."""
        with self._lock:
            return tuple(
                case
                for case in self.cases
                if case.at_response
                and self.enabled(case)
                and case.key not in self.fired
                and case.matches(facts)
                and (not reaction or self.may_follow(case, facts))
            )

    def confirm(self, case: Fault, connection: str = "") -> bool:
        """Use up a response-time case's budget; ``False`` when another exchange took it first."""
        with self._lock:
            if case.key in self.fired:
                return False
            self.fired[case.key] = 1
            self.reacting.add(connection)
            return True

    def learn_discover(self, result: Any) -> None:
        """Remember the versions a server advertised, for the ``supported`` list of a refusal."""
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if isinstance(versions, list) and all(isinstance(item, str) for item in versions):
            with self._lock:
                self.advertised = list(versions)

    def supported_for(self, requested: str | None) -> list[str]:
        """What a refusal of ``requested`` offers: the server's own versions (else mcp-assay's window) but that one."""
        with self._lock:
            known = list(self.advertised or self.window)
        return [version for version in known if version != requested]

    def unmet(self) -> list[Fault]:
        """Enabled cases that never met their point (each is named in the report)."""
        with self._lock:
            return [case for case in self.cases if self.enabled(case) and case.key not in self.fired]


def unmet_note(case: Fault, via: str = "proxy") -> str:
    """What the report says of a case that never met its point: where it lands, and how another session meets it
    (on the first screen of the report: the user learns there which faults the client was never shown)."""
    speaks = (
        f"in {Era.HANDSHAKE.revision} (a legacy-mode client)"
        if case.era is Era.HANDSHAKE
        else f"speaking {Era.MODERN.revision}"
    )
    why = (
        "; it answers in the server's place, so never a reaction to another fault"
        if not case.action.answer_only
        else ""
    )
    return (
        f"injection {case.name} ({case.era}) never met its point in this session: it lands on "
        f"{case.point.text.replace('`', '')}{why}; connect a client {speaks} through this {via} again to meet it"
    )
