"""The active suite: choose the revisions, send the probe families, judge the traffic, build a report.

Probes only produce traffic. Every exchange the suite sends and every answer it gets goes into one
:class:`~mcp_assay.traffic.ExchangeLog` (and into ``--record`` as a JSONL recording), and the same
rules that judge passive traffic judge it afterwards; :func:`~mcp_assay.suite.blocking.annotate`
then says why the cases that could not run did not.

A run tests every revision of the window the server serves (``--spec-version`` narrows it to one):
each revision has its own connections, its own context and its own segment of the log, and the
revisions proceed side by side (:mod:`~mcp_assay.suite.turns`), so a dual-era server is judged in
both eras in about the time of the slower one. :mod:`~mcp_assay.suite.judging` then judges each
segment at its own revision, and the one report carries every verdict with its revision.

A run that finds no MCP server to judge (nothing listens, a wrong path, not JSON-RPC, only
revisions outside the window, a process that dies first, never one usable answer) makes no
conformance statement: the report is not judged, and :mod:`~mcp_assay.suite.absence` writes the
one line that says why.

:func:`run` is a generator of :mod:`~mcp_assay.suite.events` (the CLI turns them into a progress
display); the work itself is asynchronous and runs on a worker thread.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import httpx

from mcp_assay.audit import audit_lines
from mcp_assay.cases import handshake
from mcp_assay.errors import (
    AssayError,
    ConfigError,
    CredentialsRefused,
    HarnessError,
    NoAnswer,
    RateLimited,
    ServerExited,
    TransportFailure,
    Unreachable,
)
from mcp_assay.protocol import Era, HeaderKey
from mcp_assay.recording import RecordingWriter
from mcp_assay.redaction import Redactor
from mcp_assay.report.about import Stats
from mcp_assay.report.about import Target as JudgedTarget
from mcp_assay.report.baseline import Baseline
from mcp_assay.report.build import build_report
from mcp_assay.report.model import FailOn, Report
from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import registered_checks, select_checks
from mcp_assay.spec.requirements import glossary
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.spec.rules.auth.facts import canonical_uri
from mcp_assay.suite.absence import Seen, usable_answer, why_no_answer_was_usable, why_nothing_was_tested
from mcp_assay.suite.blocking import Skip
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import Family, Router, SuiteContext
from mcp_assay.suite.events import (
    Event,
    FamilyFinished,
    FamilyStarted,
    RevisionSelected,
    RunFinished,
    RunStarted,
)
from mcp_assay.suite.judging import MODERN_ONLY, RUN_OBSERVATION, judge_suite_log, revision_of_items, suite_scope
from mcp_assay.suite.launch import LaunchedServer, launch
from mcp_assay.suite.oauth import SignIn
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.suite.probes.handshake import confirm as handshake_confirm
from mcp_assay.suite.probes.handshake import teardown as handshake_teardown
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.selection import (
    Selection,
    handshake_revision,
    mark_unusable,
    modern_revision,
    select_revision,
)
from mcp_assay.suite.session import LegacyClient, ModernClient
from mcp_assay.suite.signin import (
    NO_CREDENTIAL_FAMILIES,
    assumed_revision,
    everything_else,
    sign_in_for_run,
    wants_sign_in,
    why_tokenless,
)
from mcp_assay.suite.stub.session import StubSession
from mcp_assay.suite.target import Target
from mcp_assay.suite.transports import Transport
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.suite.turns import Turns
from mcp_assay.traffic import ExchangeLog
from mcp_assay.verdicts import Outcome, Verdict
from mcp_assay.wire import LISTENING, Observation, Probe

__all__ = [
    "RUN_OBSERVATION",
    "STAYS_UP_CHECK",
    "arun",
    "check_revisions",
    "judge_suite_log",
    "report_of",
    "run",
    "select_families",
    "suite_scope",
]

STAYS_UP_CHECK = "server_stays_available_through_the_run"
"""The suite-level check a dead transport blocks the remaining cases on (see ``spec/rules/suite.py``)."""


log = logging.getLogger(__name__)


def _patterns(only: str | None) -> list[str]:
    return [part.strip() for part in (only or "").split(",") if part.strip()]


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
        redactor: Redactor | None = None,
    ) -> None:
        self.config = config
        self.spec = spec
        self.emit = emit
        self.checks = checks
        self.families = families
        self.credentials = config.credentials()
        self.redactor: Redactor = redactor if redactor is not None else config.redactor()
        """The run's one redactor: its reports, recording, printed lines and (through the CLI) its log."""
        if config.token:
            self.redactor.add_secret(config.token)  # also one the sign-in or the stub obtained
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
        self.target = Target(config, spec, self.credentials, self.router, self.new_id, self.limiter, emit, mock)
        self.turns = Turns()
        self.notes: list[str] = []
        self.unjudged: str | None = None
        """Why the run has nothing to judge (no MCP server there, or none that answered usably)."""
        self.skipped: list[str] = []
        """Why families were skipped, in order (the first says why a run that sent no case tested nothing)."""
        self.families_run = 0
        """Families whose cases were sent (none: the run tested nothing, whatever revision it chose)."""
        self.stub: StubSession | None = None
        self.signin: SignIn | None = None
        """How the run signed itself in, when it was given no credential (set by :func:`arun`)."""
        self.tokenless: str | None = None
        """Why the run goes on without a credential the server takes (only the no-credential cases run)."""
        self.started = time.perf_counter()

    def observe(self, kind: str, data: dict[str, Any], buffer: str | None = None) -> None:
        self.router.sink(buffer)(Observation(id=self.new_id("o"), time=time.time(), kind=kind, data=data))

    # -- selection -------------------------------------------------------------------------------
    async def select(self, forced: Revision | None) -> Selection:
        try:
            selection = await select_revision(
                self.spec,
                forced=forced,
                modern_only=self.config.modern_only,
                modern_factory=self.target.modern,
                legacy_factory=self.target.legacy,
            )
        except Exception as exc:  # noqa: BLE001 - whatever the server answered, the run reports
            trace = "".join(traceback.format_exception(exc))
            log.error("mcp-assay: choosing the revision stopped on an error of its own:\n%s", self.redactor.text(trace))
            detail = f"{type(exc).__name__}: {str(exc)[:200]} (a defect of mcp-assay, not of the server)"
            selection = Selection(note=f"could not choose a revision: {detail}", problem="harness", detail=detail)
        # a server that answered with nothing usable has its answers judged, whichever era they belong to
        mark_unusable(selection, answered=self.router.answered(*self._selection_buffers()))
        return selection

    def _selection_buffers(self) -> list[str]:
        """The buffers selection's discover and initialize were held in (named by their revisions)."""
        return [rev.name for rev in (modern_revision(self.spec), handshake_revision(self.spec)) if rev is not None]

    async def settle(self, selection: Selection) -> None:
        """Leave out what selection opened for revisions the run does not test: their traffic, their clients.

        When the server's answers were unusable, nothing is tested but what it sent is kept to be judged."""
        tested = {revision.name for revision in selection.tested}
        for client in (selection.modern, selection.legacy):
            if client is None or client.revision.name in tested:
                continue
            if selection.problem != "unusable":
                self.router.drop(client.revision.name)
            if isinstance(client, LegacyClient):
                await self._abandon(client)
            else:
                await self.target.close(client.transport)

    async def _abandon(self, legacy: LegacyClient) -> None:
        """Close the handshake-era session selection opened but the run does not use (kept out of the log)."""
        transport = legacy.transport
        if isinstance(transport, HttpTransport) and legacy.session is not None:
            try:
                await transport.send(
                    b"",
                    probe=Probe.of(handshake.CLOSE_SELECTION_SESSION, "cleanup"),
                    expect=None,
                    headers={k: v for k, v in legacy.headers().items() if k.lower() != HeaderKey.CONTENT_TYPE},
                    method="DELETE",
                    timeout=min(self.config.timeout, 3.0),
                )
            except (TransportFailure, CredentialsRefused, RateLimited):
                pass
        await self.target.close(transport)

    def _marker(self, selection: Selection, revision: Revision | None) -> Observation:
        """The ``suite-run`` observation opening a revision's segment: what the judging needs to know of it."""
        forced = self.spec.get(self.config.spec_version)
        data: dict[str, Any] = {
            "revision": revision.name if revision is not None else None,
            "intended": assumed_revision(self.spec, forced, self.config.default_version)[0].name,
            "tested": [tested.name for tested in selection.tested],
            "transport": self.config.transport,
            "note": selection.note,
            "offered": dict(selection.offered),
        }
        if self.config.modern_only:
            data[MODERN_ONLY] = True
        return Observation(id=self.new_id("o"), time=time.time(), kind=RUN_OBSERVATION, data=data)

    # -- one revision ----------------------------------------------------------------------------
    def _context(self, selection: Selection, revision: Revision) -> SuiteContext:
        if revision.era is Era.MODERN:
            reply = selection.discover
            source = "server/discover"
        else:
            reply = selection.initialize
            source = "initialize"
        result = reply.result if reply is not None and (reply.ok or revision.era is Era.HANDSHAKE) else None
        capabilities = result.get("capabilities") if isinstance(result, dict) else None
        client = selection.client_for(revision)
        assert client is not None
        buffer = revision.name

        async def fresh() -> ModernClient | LegacyClient | None:
            if isinstance(client, ModernClient):
                if self.config.url is None:
                    return None
                transport = await self.target.transport(buffer, self.target.connection())
                fresh_client = ModernClient(transport, revision)
                fresh_client.tools = client.tools
                return fresh_client
            transport = await self.target.transport(buffer, self.target.connection())
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
            buffer=buffer,
        )
        ctx.stub = self.stub
        ctx.discover_result = result if isinstance(result, dict) else None
        ctx.connect = partial(self.target.connect, buffer=buffer)
        ctx.tokenless = self.tokenless
        return ctx

    async def _revision(self, ctx: SuiteContext) -> None:
        """Every case of one revision, then its session's end; its connections are closed after."""
        try:
            if ctx.revision.era is Era.HANDSHAKE and self.tokenless is None:
                async with self.turns.take(exclusive=False):
                    await self._guarded(ctx, frozenset({"HS-08", "HS-09"}), handshake_confirm(ctx))
            await self.families_(ctx)
            if self.tokenless is None:
                async with self.turns.take(exclusive=False):
                    await self._teardown(ctx)
        finally:
            if ctx.buffer is not None:
                await self.target.close_revision(ctx.buffer)

    def _applies(self, family: Family, ctx: SuiteContext) -> str | None:
        """``None`` to run the family, ``"skip"`` when it does not apply, or a reason it is blocked."""
        era = ctx.revision.era
        if era not in family.eras or ctx.transport.kind not in family.transports:
            return "skip"
        if family.capability is None:
            return None
        known = ctx.advertises(family.capability)
        if known is None:
            where = "server/discover" if era is Era.MODERN else "initialize"
            return f"the server's capabilities are unknown ({where} gave none): no {family.capability} case could run"
        return None if known else "skip"

    async def families_(self, ctx: SuiteContext) -> None:
        name = ctx.revision.name
        for family in self.families:
            verdict = self._applies(family, ctx)
            if verdict == "skip":
                continue
            ctx.family = family.name
            self.emit(FamilyStarted(family.name, name))
            if self.tokenless is not None and family.name not in NO_CREDENTIAL_FAMILIES:
                ctx.skip(f"not run: {self.tokenless}", requirements=family.requirements)
                self._finished(FamilyFinished(family.name, skipped=self.tokenless, revision=name))
                continue
            if ctx.transport_dead is not None:
                ctx.skip(ctx.transport_dead, requirements=family.requirements, blocked_by=STAYS_UP_CHECK)
                self._finished(FamilyFinished(family.name, skipped=ctx.transport_dead, revision=name))
                continue
            if verdict is not None:
                blocked_by = "VER-06" if ctx.revision.era is Era.MODERN else "HS-04"
                ctx.skip(verdict, requirements=family.requirements, blocked_by=blocked_by)
                self._finished(FamilyFinished(family.name, skipped=verdict, revision=name))
                continue
            self.families_run += 1
            async with self.turns.take(exclusive=family.exclusive(self.config)):
                skipped = await self._guarded(ctx, family.requirements, family.run(ctx))
            self._finished(FamilyFinished(family.name, skipped=skipped, revision=name))

    def _finished(self, event: FamilyFinished) -> None:
        if event.skipped:
            self.skipped.append(event.skipped)
        self.emit(event)

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
    async def run(self) -> RunFinished:
        forced = self.spec.require(self.config.spec_version) if self.config.spec_version else None
        self.emit(RunStarted(self.redactor.url(self.config.target) if self.config.url else self.redactor.text(
            self.config.target), self.config.transport, tuple(f.name for f in self.families)))  # fmt: skip
        selection: Selection | None = None
        contexts: list[SuiteContext] = []
        try:
            selection = await self.select(forced)
            await self._without_credentials(selection, forced)
            await self.settle(selection)
            if not selection.tested:
                await asyncio.sleep(0.05)  # let a dying stdio process's last lines and exit be read
                self.unjudged = self.redactor.text(why_nothing_was_tested(selection, self._seen(), self.spec))
                judged = "; what it sent is judged" if selection.problem == "unusable" else ""
                selection.note = f"nothing was tested: {self.unjudged}{judged}"
            self.emit(RevisionSelected(tuple(revision.name for revision in selection.tested), selection.note))
            if not selection.tested:
                self.router.sink()(self._marker(selection, None))
                if selection.problem == "unusable":
                    for buffer in self._selection_buffers():
                        self.router.release(buffer)
                self._nothing_tested(selection)
            else:
                contexts = [self._context(selection, revision) for revision in selection.tested]
                await self._side_by_side(selection, contexts)
        finally:
            await self.target.close_all()
        return self.finished(selection, contexts)

    async def _side_by_side(self, selection: Selection, contexts: list[SuiteContext]) -> None:
        """Run every revision's cases at once; their segments of the log open one after the other, newest first."""
        buffers = [ctx.buffer or ctx.revision.name for ctx in contexts]
        self.router.open(buffers[0], self._marker(selection, contexts[0].revision))
        tasks = [asyncio.create_task(self._revision(ctx), name=f"mcp-assay {ctx.revision.name}") for ctx in contexts]
        try:
            for position, ctx in enumerate(contexts):
                if position:
                    self.router.open(buffers[position], self._marker(selection, ctx.revision))
                await tasks[position]
                self.router.close(buffers[position])
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def signed_out(self, signin: SignIn) -> RunFinished:
        """The sign-in failed and the user did not ask to go on without a token: nothing is judged (exit 3)."""
        self.unjudged = f"{self.redactor.text(signin.summary)} (--without-token runs the cases that need no token)"
        self.observe("skip", Skip(family="sign-in", requirements=frozenset(), reason=f"not run: {self.unjudged}",
                                  everything=True).data())  # fmt: skip
        return self.finished(None, ())

    async def _without_credentials(self, selection: Selection, forced: Revision | None) -> None:
        """A server that refused a run holding no credential it takes still gets its no-credential cases.

        The revision cannot be asked for, so one is assumed (:func:`~mcp_assay.suite.signin.assumed_revision`);
        every other case is skipped with the reason, which names the sign-in step that failed."""
        user_given = self.credentials.presented and (self.signin is None or self.signin.token is None)
        if selection.problem != "refused" or not self.config.url or user_given:
            return
        revision, why = assumed_revision(self.spec, forced, self.config.default_version)
        self.tokenless = why_tokenless(self.signin, selection.detail)
        self.router.discard(revision.name)  # the refused selection traffic stays out, as for any refusal
        transport = await self.target.transport(revision.name, self.target.connection())
        if revision.has("per_request_version"):
            selection.modern = ModernClient(transport, revision)
        else:
            selection.legacy = LegacyClient(transport, revision)
        selection.tested = [revision]
        selection.note = (
            f"{revision.name}, {why} — the server could not be asked which revisions it offers, and "
            f"{self.tokenless}; only the cases that need no credential were run"
        )
        self.observe("skip", everything_else(f"not run: {self.tokenless}").data(), revision.name)

    @staticmethod
    def _stderr_tail(transport: Transport, lines: int = 3) -> str:
        if not isinstance(transport, StdioTransport) or not transport.stderr:
            return ""
        return " | ".join(line.strip() for line in transport.stderr[-lines:] if line.strip())[:500]

    def _seen(self) -> Seen:
        """What the run saw of its target, for the line that says why it judged nothing."""
        target = self.redactor.url(self.config.url) if self.config.url else self.redactor.text(self.config.target)
        return Seen(
            target=target, url=self.config.url, items=self.router.everything(), stderr=self.target.stderr(),
            timeout=self.config.timeout,
        )  # fmt: skip

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
        if selection.problem == "unusable":
            # what the server sent is judged as it is; only what nothing judged is "not run"
            every = frozenset(requirement for check in registered_checks() for requirement in check.requirements)
            skip = Skip(family="selection", requirements=every, reason=reason)
        else:
            skip = Skip(family="selection", requirements=frozenset(), reason=reason, everything=True)
        self.observe("skip", skip.data())

    def _nothing_to_judge(self, selection: Selection | None, verdicts: Sequence[Verdict]) -> str | None:
        """Why a run that tested a revision still judged nothing: the server never sent one usable JSON-RPC
        answer, or no case ran at all (every one skipped or blocked); ``None`` when there is something to judge.

        A run without a credential the server takes judges what it can without one, and is left as it is."""
        if selection is None or not selection.tested or self.tokenless is not None:
            return None
        if not usable_answer(self.log.items):
            return self.redactor.text(why_no_answer_was_usable(self._seen()))
        if self.families_run or any(verdict.outcome in (Outcome.PASSED, Outcome.FAILED) for verdict in verdicts):
            return None  # cases ran: what they could not verify is the report's own "nothing verified"
        if self.skipped:
            return self.redactor.text(f"nothing was tested: {self.skipped[0].removeprefix('not run: ')}")
        selected = f" --only {self.config.only} selects" if self.config.only else ""
        return f"nothing was tested: no case{selected} applies to this server"

    async def _teardown(self, ctx: SuiteContext) -> None:
        if ctx.transport_dead is None:
            await self._guarded(ctx, frozenset({"HS-21"}), handshake_teardown(ctx))
        transport = ctx.transport
        if isinstance(transport, StdioTransport):
            await transport.close()

    def finished(self, selection: Selection | None, contexts: Sequence[SuiteContext]) -> RunFinished:
        """Judge the run's traffic: the verdicts, and what the report says about the run."""
        checks = list(self.checks) if self.checks is not None else None
        verdicts, notes = judge_suite_log(self.log, self.spec, checks=checks, redactor=self.redactor)
        if self.unjudged is None:
            self.unjudged = self._nothing_to_judge(selection, verdicts)
        notes = [*self.notes, *notes]
        if self.writer is not None:
            self.writer.close()
        several = len(contexts) > 1
        for revision, item in revision_of_items(self.log):
            if isinstance(item, Observation) and item.kind in ("note", "page-limit"):
                detail = item.data.get("detail")
                if isinstance(detail, str):
                    text = self.redactor.text(detail)
                    notes.append(f"{revision}: {text}" if several and revision and revision not in text else text)
        if self.limiter.limited:
            notes.append(
                f"the target rate-limited the run {self.limiter.limited} time(s); "
                f"{self.limiter.waited:.1f} s were spent waiting it out"
            )
        dropped = [item for item in self.router.dropped if not isinstance(item, Observation)]
        if dropped and selection is not None and selection.tested:
            notes.append(f"{len(dropped)} selection exchange(s) of another era were left out of the judged traffic")
        late = [item for item in self.router.late if not isinstance(item, Observation)]
        if late:
            notes.append(f"{len(late)} exchange(s) arrived after their revision's cases had ended and were left out")
        for ctx in contexts:
            if ctx.capabilities is not None:
                where = f" ({ctx.revision.name})" if several else ""
                caps = ", ".join(sorted(ctx.capabilities)) or "none"
                notes.append(f"capabilities per {ctx.capability_source}{where}: {caps}")
        description = self.redactor.url(self.config.url) if self.config.url else self.redactor.text(self.config.target)
        return RunFinished(
            verdicts=tuple(verdicts),
            target=JudgedTarget(
                kind="suite",
                description=description,
                transport="streamable-http" if self.config.url else "stdio",
                credentials=self.credentials.describe(),
                offered=dict(selection.offered) if selection is not None else {},
            ),
            tested=tuple(revision.name for revision in selection.tested) if selection is not None else (),
            revision_note=selection.note if selection is not None else "",
            notes=tuple(notes),
            audit=tuple(audit_lines(self.log)),
            stats=Stats(
                exchanges=len(self.log),
                messages=len(self.log.messages()),
                requests=sum(1 for item in self.log.http_exchanges())
                + sum(1 for line in self.log.stdio_lines() if line.probe is not None),
                duration_ms=round((time.perf_counter() - self.started) * 1000),
            ),  # fmt: skip
            unjudged=self.unjudged,
        )


def check_revisions(config: SuiteConfig, spec: SpecSet) -> None:
    """``--spec-version`` names a revision of the window, and a modern one with ``--modern-only``."""
    if not config.spec_version:
        return
    revision = spec.require(config.spec_version)
    if config.modern_only and revision.era is not Era.MODERN:
        modern = ", ".join(rev.name for rev in spec.window if rev.era is Era.MODERN) or "none in the window"
        raise ConfigError(
            f"--spec-version {revision.name} is a handshake revision, but --modern-only says the server serves "
            f"none; drop one of them (modern revisions: {modern})"
        )


def report_of(
    finished: RunFinished, spec: SpecSet, *, fail_on: FailOn = FailOn.MUST, baseline: Baseline | None = None
) -> Report:
    """The report of a finished run."""
    return build_report(
        finished.verdicts,
        target=finished.target,
        schemas=spec.schema_infos(),
        tested=finished.tested,
        revision_note=finished.revision_note,
        notes=finished.notes,
        audit=finished.audit,
        stats=finished.stats,
        fail_on=fail_on,
        glossary=glossary(finished.verdicts),
        baseline=baseline,
        unjudged=finished.unjudged,
    )


async def arun(
    config: SuiteConfig,
    spec: SpecSet,
    emit: Callable[[Event], None] = lambda event: None,
    *,
    mock: httpx.AsyncBaseTransport | None = None,
    redactor: Redactor | None = None,
) -> Report:
    """Run the suite and return its report (events go to ``emit`` as they happen, the last a :class:`RunFinished`).

    ``redactor`` is the run's, when the caller prints or logs with it too (else one made from ``config``)."""
    check_revisions(config, spec)
    checks = select_checks(config.only)
    if checks is not None and not checks:
        raise ConfigError(f"--only {config.only}: no check matches")
    families = select_families(config.only, checks)
    stub = StubSession.open(config.stub) if config.stub is not None and config.url else None
    launched: LaunchedServer | None = None
    redactor = redactor if redactor is not None else config.redactor()
    try:
        if config.serve and config.url:
            try:
                launched = await launch(config.serve, config.url, timeout=config.serve_timeout)
            except Unreachable as exc:  # no server came up: nothing to judge, and the report says why
                state = _Run(config, spec, emit, mock=mock, checks=checks, families=families)
                state.unjudged = state.redactor.text(str(exc))
                finished = state.finished(None, ())
                emit(finished)
                return report_of(finished, spec)
        signin: SignIn | None = None
        if stub is not None and not config.token:
            audience = stub.config.audience or canonical_uri(config.url or "")
            config = replace(config, token=stub.run_token(audience))
            stub.minted = audience
        elif wants_sign_in(config):
            signin = await sign_in_for_run(config, spec, emit, transport=mock, redactor=redactor)
            config = replace(config, token=signin.token) if signin.token is not None else config
        state = _Run(config, spec, emit, mock=mock, checks=checks, families=families, redactor=redactor)
        state.stub = stub
        state.signin = signin
        for secret in signin.secrets if signin is not None else ():
            state.redactor.add_secret(secret)
        if signin is not None and signin.needed:
            note = {"detail": f"authorization: {state.redactor.text(signin.summary)}"}
            state.router.sink()(Observation(id=state.new_id("o"), time=time.time(), kind="note", data=note))
        if stub is not None and stub.minted:
            state.notes.append(
                f"the run's own token was minted by the stub (issuer {stub.config.issuer}, keys at "
                f"{stub.config.jwks_uri}, audience {stub.minted}); if the target refuses it, it does not trust the stub"
            )
        if launched is not None:
            state.router.sink()(
                Observation(id=state.new_id("o"), time=time.time(), kind=LISTENING, data=launched.observation_data())
            )
        if signin is not None and signin.needed and signin.token is None and not config.without_token:
            finished = state.signed_out(signin)
        else:
            finished = await state.run()
    finally:
        if launched is not None:
            await launched.stop()
        if stub is not None:
            stub.close()
    emit(finished)
    return report_of(finished, spec)


_DONE = object()


def run(
    config: SuiteConfig,
    spec: SpecSet,
    *,
    mock: httpx.AsyncBaseTransport | None = None,
    redactor: Redactor | None = None,
) -> Iterator[Event]:
    """Run the suite on a worker thread and yield its events as they happen; the last is :class:`RunFinished`."""
    check_revisions(config, spec)
    events: queue.Queue[Any] = queue.Queue()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            asyncio.run(arun(config, spec, events.put, mock=mock, redactor=redactor))
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
