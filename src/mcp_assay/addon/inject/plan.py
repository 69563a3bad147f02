"""Which request an injected fault lands on: the cases, their points, and a budget per session.

An injection answers, delays or reshapes one exchange on the server's behalf so that a client
meets what a well-behaved server never sends (a ``-32022``, a ``404`` for its session, an answer
that never comes, a stream cut short). Each case has a *point*: the kind of request it lands on,
chosen so that a client's ordinary use meets it (the first 2026 request of a session, the first
request carrying a 2025 session id, the first ``tools/call`` ...). Each case fires at most once
per era in a proxy or tap session, so a correct client still completes its work; the cases are
tried in a fixed order and one request carries at most one of them. The client's next request on
the same connection after an injected answer is never injected itself: it is the reaction the
rules judge (the retry after a refusal, the new ``initialize`` after a ``404``).

Some cases can only be decided when the answer's head arrives (a 2025 stream cut needs an event
stream to cut; a header respelling needs the header): the request is then a *candidate*, and
the case is confirmed or let go at the response. Nothing here knows mitmproxy or stdio; the
HTTP addon and the tap both ask the same :class:`Plan`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Any

from mcp_assay.cases import Case as SentCase
from mcp_assay.cases import Facts
from mcp_assay.errors import ConfigError
from mcp_assay.probe_names import ProbeName
from mcp_assay.protocol import Era, HeaderKey, MediaType, MetaKey
from mcp_assay.wire import Probe

__all__ = [
    "DEFAULT_HOLD_MS",
    "Case",
    "InjectFamily",
    "Plan",
    "RequestFacts",
    "parse_families",
]

DEFAULT_HOLD_MS = 3000
"""How long a held answer is held back (``--inject-hold-ms``): past a client's timeout, bounded."""
NOT_ORDINARY = frozenset({"initialize", "server/discover", "subscriptions/listen", "ping"})
"""Methods whose answers are not ordinary work (the connection's setup, a subscription, a ping)."""


class InjectFamily(StrEnum):
    """The families ``--inject`` names."""

    VERSION = "version"
    """Refuse one 2026 request with ``400`` and ``-32022`` (HTTP and stdio)."""
    SESSION = "session"
    """Answer one request carrying a 2025 session id with ``404`` (HTTP)."""
    HOLD = "hold"
    """Hold back one answer, and separately one ``initialize`` answer, past the client's timeout."""
    HEADERS = "headers"
    """Respell response header names in another legal case; refuse one ``tools/call`` with ``-32020`` (HTTP)."""
    CUT = "cut"
    """End one event-stream answer before its final response (HTTP)."""


def parse_families(text: str | Iterable[str] | None) -> frozenset[InjectFamily]:
    """``version,hold`` or ``all`` -> the families; empty -> none. Unknown names are a :class:`ConfigError`."""
    items = [text] if isinstance(text, str) or text is None else list(text)
    names = [part.strip().lower() for item in items for part in (item or "").split(",") if part.strip()]
    if "all" in names:
        return frozenset(InjectFamily)
    known = {family.value: family for family in InjectFamily}
    unknown = [name for name in names if name not in known]
    if unknown:
        choices = ", ".join([*known, "all"])
        raise ConfigError(f"--inject {','.join(unknown)}: unknown famil{'y' if len(unknown) == 1 else 'ies'}; "
                          f"choose from {choices}")  # fmt: skip
    return frozenset(known[name] for name in names)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFacts:
    """What a case's point needs to know about one client message, whatever carried it."""

    transport: str
    """``http`` or ``stdio``."""
    method: str | None
    ident: Any = None
    """The request's ``id`` (``None`` for a notification)."""
    is_request: bool = False
    era: Era | None = None
    """:attr:`Era.MODERN` for a request carrying the 2026 ``_meta`` version, else :attr:`Era.HANDSHAKE`."""
    version: str | None = None
    """The version the request declares (2026 ``_meta``; else the 2025 header or ``initialize`` offer)."""
    session_id: str | None = None
    streams: bool = False
    """The client accepts an event stream for the answer (HTTP ``Accept``; always on stdio)."""

    @classmethod
    def of(cls, body: bytes, *, transport: str, headers: Mapping[str, str] | None = None) -> RequestFacts | None:
        """The facts of a JSON-RPC message (``None`` for anything that is not one JSON object)."""
        try:
            payload = json.loads(body)
        except ValueError:
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("method"), str):
            return None
        raw_params = payload.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        declared = meta.get(MetaKey.PROTOCOL_VERSION)
        lowered = {name.lower(): value for name, value in (headers or {}).items()}
        version: str | None
        if isinstance(declared, str):
            era, version = Era.MODERN, declared
        else:
            offered = params.get("protocolVersion") if payload["method"] == "initialize" else None
            era = Era.HANDSHAKE
            version = offered if isinstance(offered, str) else lowered.get(HeaderKey.PROTOCOL_VERSION)
        accept = lowered.get(HeaderKey.ACCEPT, "")
        return cls(
            transport=transport,
            method=payload["method"],
            ident=payload.get("id"),
            is_request="id" in payload,
            era=era,
            version=version,
            session_id=lowered.get(HeaderKey.SESSION_ID),
            streams=transport == "stdio" or MediaType.EVENT_STREAM in accept or "*/*" in accept,
        )

    @property
    def ordinary(self) -> bool:
        """A request for ordinary work (not the connection's setup, a subscription or a ping)."""
        return self.is_request and self.method not in NOT_ORDINARY


Point = Callable[[RequestFacts], bool]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One injected fault: where it lands, in which era and over which transports."""

    name: ProbeName
    family: InjectFamily
    era: Era
    transports: frozenset[str]
    intent: str
    """What the client is expected to do next, for the report."""
    point: Point
    at_response: bool = False
    """Decided when the answer's head arrives; until then a matching request is only a candidate."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.name.value, self.era.value)

    def probe(self, **facts: Any) -> Probe:
        """The tag the injected exchange carries in the recording and in every report (``facts``: ``hold_ms``,
        ``supported`` ..., as a recording keeps them)."""
        case = injected_case(self.name, f"inject-{self.family.value}", self.intent)
        return Probe(
            case=case, intent=self.intent, injected=True, facts=Facts.from_record({"era": self.era.recorded, **facts})
        )

    def matches(self, facts: RequestFacts) -> bool:
        return facts.transport in self.transports and facts.era is self.era and self.point(facts)


@cache
def injected_case(name: str, family: str, expects: str) -> SentCase:
    """The case an injected exchange's tag carries (one value per fault)."""
    return SentCase(name=name, family=family, expects=expects, registered=False)


@dataclass
class Plan:
    """The cases a session may inject, and which of them have fired (safe to use from several threads)."""

    families: frozenset[InjectFamily]
    cases: Sequence[Case]
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

    def enabled(self, case: Case) -> bool:
        return case.family in self.families

    def claim(self, facts: RequestFacts, connection: str = "") -> Case | None:
        """The request-time case this request meets, if any (its budget is used up at once)."""
        with self._lock:
            if facts.is_request and connection in self.reacting:
                self.reacting.discard(connection)
                return None
            for case in self.cases:
                if case.at_response or not self.enabled(case) or case.key in self.fired:
                    continue
                if case.matches(facts):
                    self.fired[case.key] = 1
                    self.reacting.add(connection)
                    return case
        return None

    def candidates(self, facts: RequestFacts) -> tuple[Case, ...]:
        """Response-time cases this request may carry, to be confirmed when its answer's head arrives (ask after
        :meth:`claim` found none)."""
        with self._lock:
            return tuple(
                case
                for case in self.cases
                if case.at_response and self.enabled(case) and case.key not in self.fired and case.matches(facts)
            )

    def confirm(self, case: Case, connection: str = "") -> bool:
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

    def unmet(self) -> list[Case]:
        """Enabled cases that never met their point (each is named in the report)."""
        with self._lock:
            return [case for case in self.cases if self.enabled(case) and case.key not in self.fired]
