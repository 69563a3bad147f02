"""The active suite: choose the revision, send the probe families, judge the traffic, build a report.

Probes only produce traffic. Every exchange the suite sends and every answer it gets goes into one
:class:`~mcp_assay.traffic.ExchangeLog` (and into ``--record`` as a JSONL recording), and the same
rules that judge passive traffic judge it afterwards; :func:`~mcp_assay.suite.blocking.annotate`
then says why the cases that could not run did not.

:func:`run` is a generator of :mod:`~mcp_assay.suite.events` (the CLI turns them into a progress
display); the work itself is asynchronous and runs on a worker thread.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import re
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from mcp_assay.checks import REGISTRY, Check, evaluate
from mcp_assay.errors import AssayError, ConfigError
from mcp_assay.jsonrpc import Kind
from mcp_assay.recording import RecordingWriter
from mcp_assay.redaction import Redactor
from mcp_assay.report.model import Report, SchemaInfo
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.spec.rules.auth.facts import canonical_uri
from mcp_assay.suite.blocking import Skip, annotate, skip_from_observation
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import Family, Router, SuiteContext
from mcp_assay.suite.credentials import Credentials, CredentialsRefused
from mcp_assay.suite.events import (
    Event,
    FamilyFinished,
    FamilyStarted,
    RevisionSelected,
    RunFinished,
    RunStarted,
    StderrLine,
)
from mcp_assay.suite.launch import LaunchedServer, launch
from mcp_assay.suite.outgoing import HarnessError
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.suite.probes.handshake import confirm as handshake_confirm
from mcp_assay.suite.probes.handshake import teardown as handshake_teardown
from mcp_assay.suite.ratelimit import RateLimited, RateLimiter
from mcp_assay.suite.selection import (
    Selection,
    handshake_revision,
    mark_unusable,
    modern_revision,
    select_revision,
)
from mcp_assay.suite.session import LegacyClient, ModernClient
from mcp_assay.suite.stub.session import StubSession
from mcp_assay.suite.transports import NoAnswer, ServerExited, Transport, TransportFailure, Unreachable
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.traffic import ExchangeLog
from mcp_assay.verdicts import Outcome, Severity, Side, Source, Verdict
from mcp_assay.wire import LISTENING, Observation, ProcessExit, StdioLine

__all__ = ["RUN_OBSERVATION", "STAYS_UP_CHECK", "arun", "judge_suite_log", "run", "select_checks", "select_families"]

RUN_OBSERVATION = "suite-run"
"""Observation kind naming the revision a suite run tested (so a recording can be judged the same way)."""
STAYS_UP_CHECK = "server_stays_available_through_the_run"
"""The suite-level check a dead transport blocks the remaining cases on (see ``spec/rules/suite.py``)."""


log = logging.getLogger(__name__)

_ID_PREFIX = re.compile(r"[A-Z]+(-\d{0,2})?")


def _patterns(only: str | None) -> list[str]:
    return [part.strip() for part in (only or "").split(",") if part.strip()]


def select_checks(only: str | None) -> list[Check] | None:
    """Checks whose name contains a pattern or whose requirement IDs start with it; ``None`` = all."""
    from mcp_assay.spec import rules  # noqa: F401 - registers the checks

    patterns = _patterns(only)
    if not patterns:
        return None
    return [check for check in REGISTRY.values() if any(_matches(pattern, check) for pattern in patterns)]


def _matches(pattern: str, check: Check) -> bool:
    """``VER`` / ``HTTP-2`` select by requirement ID prefix; anything else by a piece of the check name."""
    if _ID_PREFIX.fullmatch(pattern):
        return any(requirement.startswith(pattern) for requirement in check.requirements)
    return pattern.lower() in check.name


def select_families(only: str | None, checks: Sequence[Check] | None) -> list[Family]:
    """Families named by a pattern, or feeding a requirement a selected check cites."""
    patterns = _patterns(only)
    if not patterns:
        return list(FAMILIES)
    cited = {req for check in checks or () for req in check.requirements}
    chosen = []
    for family in FAMILIES:
        named = any(pattern.lower() == family.name for pattern in patterns)
        if named or family.requirements & cited:
            chosen.append(family)
    return chosen


@dataclass
class _Target:
    """Makes transports and clients for the configured target, and closes them all at the end."""

    config: SuiteConfig
    spec: SpecSet
    credentials: Credentials
    router: Router
    new_id: Callable[[str], str]
    limiter: RateLimiter
    emit: Callable[[Event], None]
    mock: httpx.AsyncBaseTransport | None = None
    transports: list[Transport] = field(default_factory=list)
    _processes: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _connections: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def connection(self) -> str:
        """A fresh connection label: each HTTP client (and so each TCP connection) gets its own."""
        return f"c{next(self._connections)}"

    async def transport(self, buffer: str | None, connection: str) -> Transport:
        recorder = self.router.sink(buffer)
        transport: Transport
        if self.config.url:
            transport = HttpTransport(
                self.config.url,
                credentials=self.credentials,
                recorder=recorder,
                new_id=self.new_id,
                limiter=self.limiter,
                timeout=self.config.timeout,
                transport=self.mock,
                connection=connection,
            )
        else:
            stdio = StdioTransport(
                self.config.command,
                recorder=recorder,
                new_id=self.new_id,
                connection=f"p{next(self._processes)}",
                timeout=self.config.timeout,
                on_stderr=(lambda text: self.emit(StderrLine(text))) if self.config.verbose else None,
            )
            await stdio.start()
            transport = stdio
        self.transports.append(transport)
        return transport

    async def connect(
        self, *, credentials: Credentials | None = None, env: Mapping[str, str] | None = None, label: str = ""
    ) -> Transport:
        """A transport of its own for the behaviour cases: another principal's credentials over HTTP, or a new
        server process with extra environment over stdio. Judged directly; closed with the others at the end."""
        transport: Transport
        if self.config.url:
            transport = HttpTransport(
                self.config.url,
                credentials=credentials or self.credentials,
                recorder=self.router.sink(),
                new_id=self.new_id,
                limiter=self.limiter,
                timeout=self.config.timeout,
                transport=self.mock,
                connection=f"{self.connection()}-{label}" if label else self.connection(),
            )
        else:
            stdio = StdioTransport(
                self.config.command,
                recorder=self.router.sink(),
                new_id=self.new_id,
                connection=f"p{next(self._processes)}",
                timeout=self.config.timeout,
                env=env,
                on_stderr=(lambda text: self.emit(StderrLine(text))) if self.config.verbose else None,
            )
            await stdio.start()
            transport = stdio
        self.transports.append(transport)
        return transport

    async def modern(self, buffer: str | None = "modern") -> tuple[Transport, ModernClient]:
        revision = modern_revision(self.spec)
        assert revision is not None
        transport = await self.transport(buffer, self.connection())
        return transport, ModernClient(transport, revision)

    async def legacy(self, buffer: str | None = "handshake") -> tuple[Transport, LegacyClient]:
        revision = handshake_revision(self.spec)
        assert revision is not None
        transport = await self.transport(buffer, self.connection())
        return transport, LegacyClient(transport, revision)

    async def close(self, transport: Transport) -> None:
        if isinstance(transport, StdioTransport):
            await transport.close()
        elif isinstance(transport, HttpTransport):
            await transport.close()

    async def close_all(self) -> None:
        for transport in self.transports:
            try:
                await self.close(transport)
            except Exception:  # noqa: BLE001 - closing must never hide the report
                continue


CLIENT_IS_US = "it judges the client, which in a suite run is mcp-assay itself"


def _server_view(verdicts: Sequence[Verdict], revision: Revision, notes: list[str]) -> list[Verdict]:
    """A run judges one server at one revision.

    Checks the revision does not have are not applicable, whatever a deliberately mismatched probe
    body declared (e.g. a 2025 version in a 2026 header probe); checks of the client judge
    mcp-assay itself, so they are left out too — a failure among them is a defect of the suite and
    is reported as a note, never as a finding about the server."""
    result = []
    for verdict in verdicts:
        check = REGISTRY.get(verdict.check)
        ok, why = check.gate.admits(revision) if check is not None else (True, "")
        if ok and verdict.side is Side.CLIENT:
            ok, why = False, CLIENT_IS_US
            if verdict.outcome is Outcome.FAILED and verdict.severity is not Severity.INFO:
                notes.append(
                    f"harness self-check: mcp-assay's own requests failed {verdict.check} "
                    f"({', '.join(verdict.requirements)}): {verdict.reason} — a defect of mcp-assay, not of the server"
                )
        if ok or verdict.outcome is Outcome.NOT_APPLICABLE:
            result.append(verdict)
        else:
            result.append(
                replace(verdict, outcome=Outcome.NOT_APPLICABLE, reason=why, evidence=(), violations=0, judged=0)
            )
    return result


def judge_suite_log(
    log: ExchangeLog,
    spec: SpecSet,
    *,
    checks: Sequence[Check] | None = None,
    redactor: Redactor | None = None,
) -> tuple[list[Verdict], list[str]]:
    """Judge the traffic of a suite run the way the run does: the same rules, then the suite's view.

    Works on a live run's log and on a recording of one alike (the revision under test and the
    skips are read from the ``suite-run`` and ``skip`` observations the run recorded), so
    re-judging a ``--record`` file gives the same verdicts as the run itself."""
    verdicts = evaluate(log, spec, checks=checks, redactor=redactor, source=Source.ACTIVE)
    notes: list[str] = []
    runs = log.observations(RUN_OBSERVATION)
    facts = runs[-1].data if runs else {}
    named = facts.get("revision")
    revision = spec.get(named) if isinstance(named, str) else None
    intended = spec.get(facts.get("intended")) if isinstance(facts.get("intended"), str) else None
    if revision is not None:
        verdicts = _server_view(verdicts, revision, notes)
    elif intended is not None:
        verdicts = _unreached(verdicts, intended, str(facts.get("transport", "")))
    skips = [skip_from_observation(item.data) for item in log.observations("skip")]
    return annotate(verdicts, skips), notes


def _unreached(verdicts: Sequence[Verdict], intended: Revision, transport: str) -> list[Verdict]:
    """When no revision could be established, every server check of the revision the run meant to
    test is not verified (the reason comes from the skip that covers everything), except what judged
    the answers that did arrive (kept only when the server's answers were unusable)."""
    result = []
    for verdict in verdicts:
        check = REGISTRY.get(verdict.check)
        if check is None or verdict.side is Side.CLIENT:
            result.append(replace(verdict, outcome=Outcome.NOT_APPLICABLE, reason=CLIENT_IS_US))
            continue
        if verdict.outcome in (Outcome.PASSED, Outcome.FAILED):
            result.append(verdict)  # what the server did send (an unusable answer) is judged as it is
            continue
        ok, why = check.gate.admits(intended)
        if ok and transport and transport not in check.gate.transports:
            ok, why = False, f"{transport} has no such requirement"
        outcome = Outcome.NOT_VERIFIED if ok else Outcome.NOT_APPLICABLE
        result.append(replace(verdict, outcome=outcome, reason=why or verdict.reason))
    return result


def _schema_infos(spec: SpecSet) -> list[SchemaInfo]:
    return [
        SchemaInfo(r.name, r.schema.origin.value, str(r.schema.path), r.schema.sha256, r.schema.pinned)
        for r in spec.window
    ]


class _Run:
    """One run's state, from selection to report."""

    def __init__(
        self,
        config: SuiteConfig,
        spec: SpecSet,
        emit: Callable[[Event], None],
        *,
        mock: httpx.AsyncBaseTransport | None,
        checks: Sequence[Check] | None,
        families: Sequence[Family],
    ) -> None:
        self.config = config
        self.spec = spec
        self.emit = emit
        self.checks = checks
        self.families = families
        self.credentials = config.credentials()
        self.redactor: Redactor = self.credentials.redactor(config.url)
        for secret in config.behaviour.secrets() if config.behaviour is not None else ():
            self.redactor.add_secret(secret)
        self.log = ExchangeLog()
        self.writer = (
            RecordingWriter(config.record, self.redactor, source=f"mcp-assay run {self.redactor.url(config.target)}")
            if config.record
            else None
        )
        self.router = Router(self.log, self.writer, emit)
        counter = itertools.count(1)
        self.new_id: Callable[[str], str] = lambda prefix: f"{prefix}{next(counter)}"
        self.limiter = RateLimiter(per_minute=config.rate_limit, retry_budget_ms=config.retry_budget_ms)
        self.target = _Target(config, spec, self.credentials, self.router, self.new_id, self.limiter, emit, mock)
        self.skips: list[Skip] = []
        self.notes: list[str] = []
        self.target_error: str | None = None
        self.stub: StubSession | None = None
        self.started = time.perf_counter()

    # -- selection -------------------------------------------------------------------------------
    async def select(self, forced: Revision | None) -> Selection:
        try:
            selection = await select_revision(
                self.spec, forced=forced, modern_factory=self.target.modern, legacy_factory=self.target.legacy
            )
        except Exception as exc:  # noqa: BLE001 - whatever the server answered, the run reports
            trace = "".join(traceback.format_exception(exc))
            log.error("mcp-assay: choosing the revision stopped on an error of its own:\n%s", self.redactor.text(trace))
            detail = f"{type(exc).__name__}: {str(exc)[:200]} (a defect of mcp-assay, not of the server)"
            selection = Selection(revision=None, note=f"could not choose a revision: {detail}", problem="harness")
            selection.detail = detail
        # a server that answered with nothing usable has its answers judged, whichever era they belong to
        mark_unusable(selection, answered=self.router.answered("modern", "handshake"))
        era = selection.era
        for buffer in ("modern", "handshake"):
            if buffer == era or selection.problem == "unusable":
                self.router.commit(buffer)
            else:
                self.router.drop(buffer)
        if era == "modern" and selection.legacy is not None:
            await self._abandon(selection.legacy)
        if era == "handshake" and selection.modern is not None:
            await self.target.close(selection.modern.transport)
        return selection

    async def _abandon(self, legacy: LegacyClient) -> None:
        """Close the handshake-era session selection opened but the run does not use (kept out of the log)."""
        transport = legacy.transport
        if isinstance(transport, HttpTransport) and legacy.session is not None:
            try:
                await transport.send(
                    b"",
                    probe={"name": "handshake/close-selection-session", "invalid": False, "intent": "cleanup"},
                    expect=None,
                    headers={k: v for k, v in legacy.headers().items() if k.lower() != "content-type"},
                    method="DELETE",
                    timeout=min(self.config.timeout, 3.0),
                )
            except (TransportFailure, CredentialsRefused, RateLimited):
                pass
        await self.target.close(transport)

    # -- families --------------------------------------------------------------------------------
    def _context(self, selection: Selection) -> SuiteContext:
        revision = selection.revision
        assert revision is not None
        if selection.era == "modern":
            client: ModernClient | LegacyClient | None = selection.modern
            result = selection.discover.result if selection.discover is not None and selection.discover.ok else None
            capabilities = result.get("capabilities") if isinstance(result, dict) else None
            source = "server/discover"
        else:
            client = selection.legacy
            result = selection.initialize.result if selection.initialize is not None else None
            capabilities = result.get("capabilities") if isinstance(result, dict) else None
            source = "initialize"
        assert client is not None

        async def fresh() -> ModernClient | LegacyClient | None:
            if isinstance(client, ModernClient):
                if self.config.url is None:
                    return None
                transport = await self.target.transport(None, self.target.connection())
                fresh_client = ModernClient(transport, revision)
                fresh_client.tools = client.tools
                return fresh_client
            transport = await self.target.transport(None, self.target.connection())
            return LegacyClient(transport, revision)

        ctx = SuiteContext(
            config=self.config,
            spec=self.spec,
            revision=revision,
            client=client,
            router=self.router,
            new_id=self.new_id,
            capabilities=capabilities if isinstance(capabilities, dict) else None,
            capability_source=source,
            offered=selection.offered,
            fresh=fresh,
            handshake_offered=selection.negotiated is not None,
        )
        ctx.stub = self.stub
        ctx.discover_result = result if isinstance(result, dict) else None
        ctx.connect = self.target.connect
        return ctx

    def _applies(self, family: Family, ctx: SuiteContext, era: str) -> str | None:
        """``None`` to run the family, ``"skip"`` when it does not apply, or a reason it is blocked."""
        if era not in family.eras or ctx.transport.kind not in family.transports:
            return "skip"
        if family.capability is None:
            return None
        known = ctx.advertises(family.capability)
        if known is None:
            where = "server/discover" if era == "modern" else "initialize"
            return f"the server's capabilities are unknown ({where} gave none): no {family.capability} case could run"
        return None if known else "skip"

    async def families_(self, ctx: SuiteContext, era: str) -> None:
        for family in self.families:
            verdict = self._applies(family, ctx, era)
            if verdict == "skip":
                continue
            ctx.family = family.name
            self.emit(FamilyStarted(family.name))
            if ctx.transport_dead is not None:
                ctx.skip(ctx.transport_dead, requirements=family.requirements, blocked_by=STAYS_UP_CHECK)
                self.emit(FamilyFinished(family.name, skipped=ctx.transport_dead))
                continue
            if verdict is not None:
                ctx.skip(verdict, requirements=family.requirements, blocked_by="VER-06" if era == "modern" else "HS-04")
                self.emit(FamilyFinished(family.name, skipped=verdict))
                continue
            skipped = await self._guarded(ctx, family.requirements, family.run(ctx))
            self.emit(FamilyFinished(family.name, skipped=skipped))

    async def _guarded(self, ctx: SuiteContext, requirements: frozenset[str], work: Awaitable[None]) -> str | None:
        """Run a family; turn the ways the target can fail to be driven into skips instead of findings."""
        reason: str | None = None
        blocked_by: str | None = None
        try:
            await work
        except HarnessError as exc:
            reason = f"harness error (a defect of mcp-assay, not of the server): {exc}"
        except RateLimited as exc:
            reason = f"rate-limited: {exc.detail}"
        except CredentialsRefused as exc:
            reason = str(exc)
        except NoAnswer as exc:
            ctx.observe("no-answer", detail=str(exc), exchange=exc.exchange, family=ctx.family)
            reason = f"the server did not answer: {exc}"
            blocked_by = "RPC-05"
        except ServerExited as exc:
            ctx.transport_dead = f"the server process exited (code {exc.code}) during the {ctx.family} cases"
            tail = self._stderr_tail(ctx.transport)
            detail = f"{exc}; its last stderr lines: {tail}" if tail else str(exc)
            ctx.observe("transport-lost", detail=detail, code=exc.code, family=ctx.family)
            reason, blocked_by = ctx.transport_dead, STAYS_UP_CHECK
        except Unreachable as exc:
            ctx.transport_dead = f"the server stopped accepting connections during the {ctx.family} cases ({exc})"
            ctx.observe("transport-lost", detail=str(exc), family=ctx.family)
            reason, blocked_by = ctx.transport_dead, STAYS_UP_CHECK
        except TransportFailure as exc:
            reason = f"the transport failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - whatever the server answered, the run goes on and reports
            trace = "".join(traceback.format_exception(exc))
            log.error(
                "mcp-assay: the %s cases stopped on an error of its own:\n%s", ctx.family, self.redactor.text(trace)
            )
            reason = (
                f"mcp-assay failed inside the {ctx.family} cases ({type(exc).__name__}: {str(exc)[:200]}): "
                "a defect of mcp-assay, not of the server"
            )
        if reason is not None:
            reason = self.redactor.text(reason)
            ctx.skip(reason, requirements=requirements, blocked_by=blocked_by)
        return reason

    # -- the whole run ---------------------------------------------------------------------------
    async def run(self) -> Report:
        forced = self.spec.require(self.config.spec_version) if self.config.spec_version else None
        self.emit(RunStarted(self.redactor.url(self.config.target) if self.config.url else self.redactor.text(
            self.config.target), self.config.transport, tuple(f.name for f in self.families)))  # fmt: skip
        selection: Selection | None = None
        ctx: SuiteContext | None = None
        try:
            selection = await self.select(forced)
            if selection.revision is None:
                await asyncio.sleep(0.05)  # let a dying stdio process's last lines and exit be read
                self._explain(selection)
            self.emit(RevisionSelected(selection.revision.name if selection.revision else None, selection.note))
            self.router.sink()(
                Observation(
                    id=self.new_id("o"),
                    time=time.time(),
                    kind=RUN_OBSERVATION,
                    data={
                        "revision": selection.revision.name if selection.revision else None,
                        "intended": (forced or self.spec.newest).name,
                        "transport": self.config.transport,
                        "note": selection.note,
                        "offered": dict(selection.offered),
                    },
                )
            )
            if selection.revision is None:
                self._nothing_tested(selection)
            else:
                ctx = self._context(selection)
                era = selection.era or "modern"
                if era == "handshake":
                    await self._guarded(ctx, frozenset({"HS-08", "HS-09"}), handshake_confirm(ctx))
                await self.families_(ctx, era)
                await self._teardown(ctx)
        finally:
            await self.target.close_all()
        return self.report(selection, ctx)

    @staticmethod
    def _stderr_tail(transport: Transport, lines: int = 3) -> str:
        if not isinstance(transport, StdioTransport) or not transport.stderr:
            return ""
        return " | ".join(line.strip() for line in transport.stderr[-lines:] if line.strip())[:500]

    def _what_the_process_did(self) -> str:
        """For a stdio target that answered nothing usable: what it printed, and whether it exited."""
        facts = []
        garbage = [
            item
            for item in self.router.dropped
            if isinstance(item, StdioLine) and item.sender is Side.SERVER and item.message.kind is Kind.UNPARSEABLE
        ]
        if garbage:
            text = garbage[0].raw.decode("utf-8", "replace").strip()[:120]
            facts.append(f"it printed something that is not JSON on stdout ({text!r})")
        exits = [item for item in self.router.dropped if isinstance(item, ProcessExit) and item.stdin_closed_at is None]
        if exits:
            facts.append(f"the process exited on its own (code {exits[0].code})")
        tails = [tail for tail in (self._stderr_tail(t) for t in self.target.transports) if tail]
        if tails:
            facts.append(f"its stderr ended with: {tails[0]}")
        return "; ".join(facts)

    def _explain(self, selection: Selection) -> None:
        facts = self._what_the_process_did()
        if facts:
            selection.note = f"{selection.note} ({self.redactor.text(facts)})"

    def _nothing_tested(self, selection: Selection) -> None:
        short = {
            "unreachable": "the server could not be reached or never answered",
            "rate-limited": "the server rate-limited the run past --retry-budget-ms",
            "refused": "the server refused the credentials",
            "harness": "a defect of mcp-assay stopped the run",
            "out-of-window": "the server offers no revision inside the supported window",
            "unusable": "the server answered, but nothing it sent named a revision (what it sent is judged)",
        }.get(selection.problem or "", "no revision could be chosen")
        if selection.problem == "refused" and selection.detail:
            short = selection.detail
        reason = f"not run: {short} (the revision line of the report says more)"
        if selection.problem in ("unreachable", "rate-limited", "refused", "unusable"):
            self.target_error = selection.detail
        if selection.problem == "unusable":
            # what the server sent is judged as it is; only what nothing judged is "not run"
            every = frozenset(requirement for check in REGISTRY.values() for requirement in check.requirements)
            skip = Skip(family="selection", requirements=every, reason=reason)
        else:
            skip = Skip(family="selection", requirements=frozenset(), reason=reason, everything=True)
        self.skips.append(skip)
        self.router.sink()(Observation(id=self.new_id("o"), time=time.time(), kind="skip", data=skip.data()))

    async def _teardown(self, ctx: SuiteContext) -> None:
        if ctx.transport_dead is None:
            await self._guarded(ctx, frozenset({"HS-21"}), handshake_teardown(ctx))
        transport = ctx.transport
        if isinstance(transport, StdioTransport):
            await transport.close()

    def report(self, selection: Selection | None, ctx: SuiteContext | None) -> Report:
        checks = list(self.checks) if self.checks is not None else None
        verdicts, notes = judge_suite_log(self.log, self.spec, checks=checks, redactor=self.redactor)
        notes = [*self.notes, *notes]
        if self.writer is not None:
            self.writer.close()
        for item in self.log.observations():
            if item.kind in ("note", "page-limit") and isinstance(item.data.get("detail"), str):
                notes.append(self.redactor.text(str(item.data["detail"])))
        if self.limiter.limited:
            notes.append(
                f"the target rate-limited the run {self.limiter.limited} time(s); "
                f"{self.limiter.waited:.1f} s were spent waiting it out"
            )
        dropped = [item for item in self.router.dropped if not isinstance(item, Observation)]
        if dropped and selection is not None and selection.revision is not None:
            notes.append(f"{len(dropped)} selection exchange(s) of another era were left out of the judged traffic")
        if ctx is not None and ctx.capabilities is not None:
            notes.append(f"capabilities per {ctx.capability_source}: {', '.join(sorted(ctx.capabilities)) or 'none'}")
        return Report(
            results=verdicts,
            target={
                "kind": "suite",
                "description": self.redactor.url(self.config.url)
                if self.config.url
                else self.redactor.text(self.config.target),
                "transport": "streamable-http" if self.config.url else "stdio",
                "credentials": self.credentials.describe(),
                "offered": dict(selection.offered) if selection is not None else {},
            },  # fmt: skip
            revision=selection.revision.name if selection is not None and selection.revision else None,
            revision_note=selection.note if selection is not None else "",
            window=[revision.name for revision in self.spec.window],
            schemas=_schema_infos(self.spec),
            notes=notes,
            stats={
                "exchanges": len(self.log),
                "messages": len(self.log.messages()),
                "requests": sum(1 for item in self.log.http_exchanges())
                + sum(1 for line in self.log.stdio_lines() if line.probe is not None),
                "duration_ms": round((time.perf_counter() - self.started) * 1000),
            },  # fmt: skip
        )


async def arun(
    config: SuiteConfig,
    spec: SpecSet,
    emit: Callable[[Event], None] = lambda event: None,
    *,
    mock: httpx.AsyncBaseTransport | None = None,
) -> Report:
    """Run the suite and return the report (events go to ``emit`` as they happen)."""
    checks = select_checks(config.only)
    if checks is not None and not checks:
        raise ConfigError(f"--only {config.only}: no check matches")
    families = select_families(config.only, checks)
    stub = StubSession.open(config.stub) if config.stub is not None and config.url else None
    launched: LaunchedServer | None = None
    try:
        if config.serve and config.url:
            launched = await launch(config.serve, config.url, timeout=config.serve_timeout)
        if stub is not None and not config.token:
            audience = stub.config.audience or canonical_uri(config.url or "")
            config = replace(config, token=stub.run_token(audience))
            stub.minted = audience
        state = _Run(config, spec, emit, mock=mock, checks=checks, families=families)
        state.stub = stub
        if stub is not None and stub.minted:
            state.notes.append(
                f"the run's own token was minted by the stub (issuer {stub.config.issuer}, keys at "
                f"{stub.config.jwks_uri}, audience {stub.minted}); if the target refuses it, it does not trust the stub"
            )
        if launched is not None:
            state.router.sink()(
                Observation(id=state.new_id("o"), time=time.time(), kind=LISTENING, data=launched.observation_data())
            )
        report = await state.run()
    finally:
        if launched is not None:
            await launched.stop()
        if stub is not None:
            stub.close()
    emit(RunFinished(report, state.target_error))
    return report


_DONE = object()


def run(config: SuiteConfig, spec: SpecSet, *, mock: httpx.AsyncBaseTransport | None = None) -> Iterator[Event]:
    """Run the suite on a worker thread and yield its events as they happen; the last is :class:`RunFinished`."""
    if config.spec_version:
        spec.require(config.spec_version)
    events: queue.Queue[Any] = queue.Queue()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            asyncio.run(arun(config, spec, events.put, mock=mock))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            failure.append(exc)
        finally:
            events.put(_DONE)

    thread = threading.Thread(target=work, name="mcp-assay-suite", daemon=True)
    thread.start()
    while True:
        item = events.get()
        if item is _DONE:
            break
        yield item
    thread.join(timeout=5)
    if failure:
        exc = failure[0]
        if isinstance(exc, AssayError):
            raise exc
        raise exc
