"""Driving the probe families: every tested revision's cases side by side, each family only where it applies.

Each revision runs its :data:`~mcp_assay.suite.probes.OPENING` steps, then its families in order,
then its :data:`~mcp_assay.suite.probes.CLOSING` steps, taking turns at the server
(:mod:`~mcp_assay.suite.turns`); its segment of the log opens when the one before it is done, so
the judged log and the recording hold the revisions one after the other. A family that does not
apply (another era or transport, a capability not advertised) is not sent; one that cannot run
(capabilities unknown, a server gone, a run without a credential it takes) is skipped with its
reason and what blocked it. Every way the target can fail to be driven (a refusal, a rate limit,
silence, an exit, a defect of mcp-assay's own) becomes such a skip, never a finding of its own:
the rules judge the traffic, and :mod:`~mcp_assay.suite.blocking` says why the rest did not run.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Sequence

from mcp_assay.spec.rules.suite import STAYS_UP, UNANSWERED
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.events import FamilyFinished, FamilyStarted
from mcp_assay.suite.probes import CLOSING, OPENING
from mcp_assay.suite.revisions import marker
from mcp_assay.suite.selection import CAPABILITY_SOURCES, Selection
from mcp_assay.suite.signin import NO_CREDENTIAL_FAMILIES
from mcp_assay.suite.state import RunState
from mcp_assay.suite.transports import Transport
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.errors import (
    CredentialsRefused,
    HarnessError,
    NoAnswer,
    RateLimited,
    ServerExited,
    TransportFailure,
    Unreachable,
)

__all__ = ["Driver"]

log = logging.getLogger(__name__)


class Driver:
    """Sends the planned families to every revision a run tests."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    async def side_by_side(self, selection: Selection, contexts: Sequence[SuiteContext]) -> None:
        """Run every revision's cases at once; their segments of the log open one after the other, newest first."""
        router = self.state.router
        buffers = [ctx.buffer or ctx.revision.name for ctx in contexts]
        router.open(buffers[0], marker(self.state, selection, contexts[0].revision))
        tasks = [asyncio.create_task(self._revision(ctx), name=f"mcp-assay {ctx.revision.name}") for ctx in contexts]
        try:
            for position, ctx in enumerate(contexts):
                if position:
                    router.open(buffers[position], marker(self.state, selection, ctx.revision))
                await tasks[position]
                router.close(buffers[position])
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _revision(self, ctx: SuiteContext) -> None:
        """Every case of one revision, between its session's opening and end; its connections are closed after."""
        state = self.state
        try:
            opening = [step for step in OPENING if ctx.revision.era in step.eras]
            if opening and state.tokenless is None:
                async with state.turns.take(exclusive=False):
                    for step in opening:
                        await self._guarded(ctx, step.requirements, step.run(ctx))
            await self._families(ctx)
            if state.tokenless is None:
                async with state.turns.take(exclusive=False):
                    await self._close(ctx)
        finally:
            if ctx.buffer is not None:
                await state.target.close_revision(ctx.buffer)

    def _applies(self, family: ProbeFamily, ctx: SuiteContext) -> str | None:
        """``None`` to run the family, ``"skip"`` when it does not apply, or a reason it is blocked."""
        era = ctx.revision.era
        if era not in family.eras or ctx.transport.kind not in family.transports:
            return "skip"
        if family.capability is None:
            return None
        known = ctx.advertises(family.capability)
        if known is None:
            where = CAPABILITY_SOURCES[era].method
            return f"the server's capabilities are unknown ({where} gave none): no {family.capability} case could run"
        return None if known else "skip"

    async def _families(self, ctx: SuiteContext) -> None:
        state = self.state
        name = ctx.revision.name
        for family in state.plan.families:
            verdict = self._applies(family, ctx)
            if verdict == "skip":
                continue
            ctx.family = family.name
            state.emit(FamilyStarted(family.name, name))
            if state.tokenless is not None and family.name not in NO_CREDENTIAL_FAMILIES:
                ctx.skip(f"not run: {state.tokenless}", requirements=family.requirements)
                self._finished(FamilyFinished(family.name, skipped=state.tokenless, revision=name))
                continue
            if ctx.transport_dead is not None:
                ctx.skip(ctx.transport_dead, requirements=family.requirements, blocked_by=STAYS_UP)
                self._finished(FamilyFinished(family.name, skipped=ctx.transport_dead, revision=name))
                continue
            if verdict is not None:
                blocked_by = CAPABILITY_SOURCES[ctx.revision.era].requirement
                ctx.skip(verdict, requirements=family.requirements, blocked_by=blocked_by)
                self._finished(FamilyFinished(family.name, skipped=verdict, revision=name))
                continue
            state.families_run += 1
            async with state.turns.take(exclusive=family.exclusive(state.config)):
                skipped = await self._guarded(ctx, family.requirements, family.run(ctx))
            self._finished(FamilyFinished(family.name, skipped=skipped, revision=name))

    def _finished(self, event: FamilyFinished) -> None:
        if event.skipped:
            self.state.skipped.append(event.skipped)
        self.state.emit(event)

    async def _close(self, ctx: SuiteContext) -> None:
        """End the revision's session while its transport still serves; a server process is closed after."""
        if ctx.transport_dead is None:
            for step in CLOSING:
                if ctx.revision.era in step.eras:
                    await self._guarded(ctx, step.requirements, step.run(ctx))
        transport = ctx.transport
        if isinstance(transport, StdioTransport):
            await transport.close()

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
            blocked_by = UNANSWERED
        except ServerExited as exc:
            ctx.transport_dead = f"the server process exited (code {exc.code}) during the {ctx.family} cases"
            tail = _stderr_tail(ctx.transport)
            detail = f"{exc}; its last stderr lines: {tail}" if tail else str(exc)
            ctx.observe("transport-lost", detail=detail, code=exc.code, family=ctx.family)
            reason, blocked_by = ctx.transport_dead, STAYS_UP
        except Unreachable as exc:
            ctx.transport_dead = f"the server stopped accepting connections during the {ctx.family} cases ({exc})"
            ctx.observe("transport-lost", detail=str(exc), family=ctx.family)
            reason, blocked_by = ctx.transport_dead, STAYS_UP
        except TransportFailure as exc:
            reason = f"the transport failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - whatever the server answered, the run goes on and reports
            trace = self.state.redactor.text("".join(traceback.format_exception(exc)))
            log.error("mcp-assay: the %s cases stopped on an error of its own:\n%s", ctx.family, trace)
            reason = (
                f"mcp-assay failed inside the {ctx.family} cases ({type(exc).__name__}: {str(exc)[:200]}): "
                "a defect of mcp-assay, not of the server"
            )
        if reason is not None:
            reason = self.state.redactor.text(reason)
            ctx.skip(reason, requirements=requirements, blocked_by=blocked_by)
        return reason


def _stderr_tail(transport: Transport, lines: int = 3) -> str:
    if not isinstance(transport, StdioTransport) or not transport.stderr:
        return ""
    return " | ".join(line.strip() for line in transport.stderr[-lines:] if line.strip())[:500]
