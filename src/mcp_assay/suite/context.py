"""The state a suite run shares with its probe families.

Probes only produce traffic; they never judge it. They read what they need from replies (the
capabilities to gate on, the tools to call, the cursors to follow), record skips when a case
cannot run, and leave every verdict to the same rules that judge passive traffic.

:class:`Router` decides where recorded traffic goes. A run tests each revision the server serves
on its own, the revisions side by side, yet the judged log and the recording hold them one after
the other: one *segment* per revision, opened by its ``suite-run`` observation, so that judging
(live or from a recording) splits the log back into one log per revision. Traffic of a revision
whose segment is not open yet is held in its buffer; selection traffic of a revision not tested is
kept out of the judged log and the recording, and only mentioned in the report.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.cases import NO_FACTS, Case, Facts
from mcp_assay.recording.records import RecordingWriter
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.suite.blocking import Skip
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.events import Event, ExchangeRecorded
from mcp_assay.suite.stub.lifetime import StubSession
from mcp_assay.suite.transports import Reply, Transport
from mcp_assay.vocabulary.errors import HarnessError, NoAnswer
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Exchange, HttpExchange, Observation, Probe, StdioLine
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["ProbeFamily", "Router", "SuiteContext"]


class Router:
    """Routes recorded exchanges to the judged log (and the recording) one segment at a time, or holds them.

    ``sink(None)`` records straight into the log: before the first segment opens that is the
    prelude every revision's judging shares (a sign-in note, the addresses a started server
    listens on), afterwards the open segment. ``sink(buffer)`` records for one revision: held until
    :meth:`open` starts its segment, judged while it is open, and kept out once it is closed or
    dropped."""

    def __init__(self, log: ExchangeLog, writer: RecordingWriter | None, emit: Callable[[Event], None]) -> None:
        self.log = log
        self.writer = writer
        self.emit = emit
        self._held: dict[str, list[Exchange]] = {}
        self._state: dict[str, str] = {}
        """buffer -> ``held`` | ``judged`` | ``closed`` | ``dropped``."""
        self.dropped: list[Exchange] = []
        """Selection traffic of revisions the run does not test."""
        self.late: list[Exchange] = []
        """Traffic that arrived after its revision's segment was closed (left out of the judged log)."""
        self._recorded: dict[str | None, list[Exchange]] = {}
        """Everything each buffer recorded, in order, whatever became of it (what :meth:`recorded` gives)."""

    def sink(self, buffer: str | None = None) -> Callable[[Exchange], None]:
        if buffer is not None:
            self._state.setdefault(buffer, "held")
            self._held.setdefault(buffer, [])

        def record(item: Exchange) -> None:
            self._recorded.setdefault(buffer, []).append(item)
            state = "judged" if buffer is None else self._state[buffer]
            if state == "held" and buffer is not None:
                self._held[buffer].append(item)
            elif state == "judged":
                self._judge(item)
            else:
                (self.late if state == "closed" else self.dropped).append(item)
                self.emit(ExchangeRecorded(item, judged=False))

        return record

    def _judge(self, item: Exchange) -> None:
        self.log.add(item)
        if self.writer is not None:
            self.writer.exchange(item)
        self.emit(ExchangeRecorded(item, judged=True))

    def recorded(self, buffer: str | None) -> list[Exchange]:
        """What ``buffer`` recorded so far, in order, held or judged: one revision's traffic, for a probe that judges
        its own exchanges as it goes (:mod:`mcp_assay.suite.explore` shrinks what the rules find)."""
        return list(self._recorded.get(buffer, ()))

    def answered(self, *buffers: str) -> bool:
        """Whether the server sent anything (an HTTP response, a stdout line) into one of the held ``buffers``."""
        for buffer in buffers:
            for item in self._held.get(buffer, ()):
                if isinstance(item, HttpExchange) and item.response is not None:
                    return True
                if isinstance(item, StdioLine) and item.sender is Side.SERVER:
                    return True
        return False

    def everything(self) -> list[Exchange]:
        """What was recorded so far, judged, held or left out, in capture order (what a target sent, for a run
        that found nothing to judge)."""
        held = [item for items in self._held.values() for item in items]
        return sorted([*self.log.items, *held, *self.dropped, *self.late], key=lambda item: item.time)

    def open(self, buffer: str, marker: Observation) -> None:
        """Start ``buffer``'s segment: its ``marker``, what it held, and from now on what it records."""
        self._judge(marker)
        self.release(buffer)

    def release(self, buffer: str) -> None:
        """Judge what ``buffer`` held, and from now on what it records (into the segment already open)."""
        for item in self._held.pop(buffer, []):
            self._judge(item)
        self._state[buffer] = "judged"

    def discard(self, buffer: str) -> None:
        """Forget what ``buffer`` held so far (left out, like a dropped buffer's); it goes on holding."""
        self.dropped.extend(self._held.pop(buffer, []))
        self._held[buffer] = []
        self._state[buffer] = "held"

    def close(self, buffer: str) -> None:
        """End ``buffer``'s segment: anything it records later is left out (another segment may be open)."""
        self._state[buffer] = "closed"

    def drop(self, buffer: str) -> None:
        for item in self._held.pop(buffer, []):
            self.dropped.append(item)
            self.emit(ExchangeRecorded(item, judged=False))
        self._state[buffer] = "dropped"


@dataclass(frozen=True)
class ProbeFamily:
    """A family of probes: its cases, when it applies, and the coroutine that sends them."""

    name: str
    cases: tuple[Case, ...]
    """The cases it sends (:mod:`mcp_assay.cases`), which say what it feeds."""
    run: Callable[[SuiteContext], Awaitable[None]]
    eras: frozenset[Era] = frozenset(Era)
    capability: str | None = None
    """The server capability the family needs; not advertised -> the family is not sent."""
    transports: frozenset[str] = frozenset({"http", "stdio"})
    description: str = ""
    wanted: Callable[[SuiteConfig], bool] = lambda config: True
    """Whether the run asked for the family at all: an opt-in family (``--explore``) is left out of every other run."""
    exclusive: Callable[[SuiteConfig], bool] = lambda config: False
    """Whether, in this run, the family needs the server to itself: no other revision's cases run meanwhile (a
    witness read must see only its own writes, a burst only its own calls, the stub only its own tokens' fetches)."""
    needs: tuple[str, ...] = ()
    """Families whose listings it works on (``ctx.listings``): a run narrowed to it (``--only``) sends them first."""

    @property
    def requirements(self) -> frozenset[str]:
        """Requirement IDs whose checks judge this family's traffic: what its cases feed (for selection by
        ``--only`` and for blocked-by bookkeeping)."""
        return frozenset().union(*(case.feeds for case in self.cases))


@dataclass
class Listing:
    """Everything a paginated list method returned in one walk."""

    method: str
    items: list[dict[str, Any]] = field(default_factory=list)
    pages: list[Reply] = field(default_factory=list)
    cursors: list[str] = field(default_factory=list)
    error: Reply | None = None
    truncated: bool = False
    """The walk stopped at --page-limit with a cursor still to follow."""

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.pages)


class SuiteContext:
    """What a probe family may use: the client for the revision under test, settings, and bookkeeping."""

    def __init__(
        self,
        *,
        config: SuiteConfig,
        spec: SpecSet,
        revision: Revision,
        client: ModernClient | LegacyClient,
        router: Router,
        new_id: Callable[[str], str],
        capabilities: Mapping[str, Any] | None,
        capability_source: str,
        offered: Mapping[str, str],
        fresh: Callable[[], Awaitable[ModernClient | LegacyClient | None]],
        handshake_offered: bool,
        buffer: str | None = None,
    ) -> None:
        self.config = config
        self.spec = spec
        self.revision = revision
        self.client = client
        self.router = router
        self.new_id = new_id
        self.capabilities = dict(capabilities) if capabilities is not None else None
        self.capability_source = capability_source
        self.offered = dict(offered)
        self.handshake_offered = handshake_offered
        self.buffer = buffer
        """Where this revision's traffic is recorded (see :class:`Router`)."""
        self._fresh = fresh
        self.family = ""
        self.skips: list[Skip] = []
        self.listings: dict[str, Listing] = {}
        self.tool_calls: list[tuple[str, Mapping[str, Any], Reply]] = []
        """(tool name, arguments, reply) of every ordinary tool call, for the MRTR family."""
        self.generated: dict[str, dict[str, Any]] | None = None
        """Arguments drawn from inputSchemas for the tools ``--generate-args`` allows (made once, on first need)."""
        self.discover_result: dict[str, Any] | None = None
        self.transport_dead: str | None = None
        self.stub: StubSession | None = None
        """The stand-in authorization server, when the config has a ``stub`` section (set by the runner)."""
        self.tokenless: str | None = None
        """Why the run holds no credential the server takes (set by the runner; only no-credential cases run)."""
        self.connect: Callable[..., Awaitable[Transport]] | None = None
        """``connect(credentials=..., env=..., label=...)``: a transport of its own to the target, with another
        principal's credentials (HTTP) or environment (a new stdio process); set by the runner."""

    # -- facts -----------------------------------------------------------------------------------
    @property
    def transport(self) -> Transport:
        return self.client.transport

    @property
    def http(self) -> bool:
        return self.transport.kind == "http"

    @property
    def modern(self) -> bool:
        return isinstance(self.client, ModernClient)

    def advertises(self, capability: str) -> bool | None:
        """Whether the server advertised ``capability``; ``None`` when its capabilities are unknown."""
        if self.capabilities is None:
            return None
        return capability in self.capabilities

    def flag(self, capability: str, name: str) -> bool:
        value = self.capabilities.get(capability) if self.capabilities else None
        return isinstance(value, dict) and value.get(name) is True

    # -- probes ----------------------------------------------------------------------------------
    def probe(
        self, case: Case, intent: str | None = None, *, invalid: bool | None = None, facts: Facts = NO_FACTS
    ) -> Probe:
        """The tag for one request of ``case`` (the rules pick exchanges out by it): ``intent`` when this sending
        says more than the case does, ``facts`` what only this sending knows."""
        if not case.registered:
            raise HarnessError(f"case {case.name!r} is not declared in mcp_assay.cases")
        return Probe.of(case, intent, invalid=invalid, facts=facts)

    async def fresh_client(self) -> ModernClient | LegacyClient | None:
        """A client on a new connection (HTTP) for statelessness probes; ``None`` where there is none."""
        return await self._fresh()

    @property
    def short_timeout(self) -> float:
        """How long malformed probes wait: a server may legitimately stay silent on some of them."""
        return min(self.config.timeout, 1.0)

    async def tolerant(self, awaitable: Awaitable[Reply]) -> Reply | None:
        """Await a probe whose silence is itself the finding: record the missing answer and go on."""
        try:
            return await awaitable
        except NoAnswer as exc:
            self.observe("no-answer", detail=str(exc), exchange=exc.exchange, family=self.family)
            return None

    # -- bookkeeping -----------------------------------------------------------------------------
    def recorder(self) -> Callable[[Exchange], None]:
        """Records an exchange or observation in this revision's traffic."""
        return self.router.sink(self.buffer)

    def observe(self, kind: str, **data: Any) -> None:
        self.recorder()(Observation(id=self.new_id("o"), time=time.time(), kind=kind, data=data))

    def skip(
        self,
        reason: str,
        *,
        requirements: Iterable[str] | None = None,
        case: Case | None = None,
        label: str | None = None,
        blocked_by: str | None = None,
        family: str | None = None,
        untried: str | None = None,
    ) -> None:
        """Say that ``case`` (a registered case, never a name typed here) was not sent, and why: the checks of
        ``requirements`` (by default what the case feeds) are left *not verified* with the reason. ``label`` is
        for a skip no registered case stands for (a behaviour lane's own sub-case, made per tool)."""
        if requirements is None:
            if case is None:
                raise HarnessError(f"a skip names neither a case nor requirements: {reason}")
            requirements = case.feeds
        if case is not None and not case.registered:
            raise HarnessError(f"a skip names {case.name!r}, which the case registry does not hold")
        skip = Skip(
            family=family or self.family,
            requirements=frozenset(requirements),
            reason=reason,
            case=case.name if case is not None else label,
            blocked_by=blocked_by,
            untried=untried,
        )
        self.skips.append(skip)
        self.observe("skip", **skip.data())
