"""The active suite: choose the revisions, send the probe families, judge the traffic, build a report.

Probes only produce traffic. Every exchange the suite sends and every answer it gets goes into one
:class:`~mcp_assay.wire.traffic.ExchangeLog` (and into ``--record`` as a JSONL recording), and the same
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

This module is the order of the steps, each done by a module of its own on one
:class:`~mcp_assay.suite.state.RunState`: :mod:`~mcp_assay.suite.plan` (the checks and families,
bad settings refused before any work), :mod:`~mcp_assay.suite.setup` (the server started, the
run's token), :mod:`~mcp_assay.suite.revisions` (what to test, one context each),
:mod:`~mcp_assay.suite.drive` (the families sent) and :mod:`~mcp_assay.suite.finish` (the verdicts
and the report). :func:`run` is a generator of :mod:`~mcp_assay.suite.events` (the CLI turns them
into a progress display); the work itself is asynchronous and runs on a worker thread.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from mcp_assay.recording.redaction import Redactor
from mcp_assay.report.model import Report
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite import explore
from mcp_assay.suite.absence import why_nothing_was_tested
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.drive import Driver
from mcp_assay.suite.events import Event, RevisionSelected, RunFinished, RunStarted
from mcp_assay.suite.finish import finished, nothing_tested, report_of, signed_out
from mcp_assay.suite.judging import RUN_OBSERVATION, judge_suite_log, suite_scope
from mcp_assay.suite.plan import check_revisions, plan_run, select_families
from mcp_assay.suite.revisions import choose, context, marker, selection_buffers
from mcp_assay.suite.selection import Selection
from mcp_assay.suite.setup import ready
from mcp_assay.suite.state import BackHop, RunState

__all__ = [
    "RUN_OBSERVATION",
    "arun",
    "check_revisions",
    "judge_suite_log",
    "report_of",
    "run",
    "select_families",
    "suite_scope",
]


async def _tested(state: RunState) -> RunFinished:
    """Choose the revisions, drive every one the server serves (or say why none), and judge the traffic."""
    config, spec, router = state.config, state.spec, state.router
    forced = spec.require(config.spec_version) if config.spec_version else None
    state.emit(RunStarted(state.shown_target(), config.transport, tuple(f.name for f in state.plan.families)))
    selection: Selection | None = None
    contexts: list[SuiteContext] = []
    try:
        selection = await choose(state, forced)
        if not selection.tested:
            await asyncio.sleep(0.05)  # let a dying stdio process's last lines and exit be read
            state.unjudged = state.redactor.text(why_nothing_was_tested(selection, state.seen(), spec))
            judged = "; what it sent is judged" if selection.problem == "unusable" else ""
            selection.note = f"nothing was tested: {state.unjudged}{judged}"
        state.emit(RevisionSelected(tuple(revision.name for revision in selection.tested), selection.note))
        if not selection.tested:
            router.sink()(marker(state, selection, None))
            if selection.problem == "unusable":
                for buffer in selection_buffers(spec):
                    router.release(buffer)
            nothing_tested(state, selection)
        else:
            contexts = [context(state, selection, revision) for revision in selection.tested]
            await Driver(state).side_by_side(selection, contexts)
    finally:
        await state.target.close_all()
    return finished(state, selection, contexts)


async def arun(
    config: SuiteConfig,
    spec: SpecSet,
    emit: Callable[[Event], None] = lambda event: None,
    *,
    mock: httpx.AsyncBaseTransport | None = None,
    redactor: Redactor | None = None,
    back_hop: BackHop | None = None,
) -> Report:
    """Run the suite and return its report (events go to ``emit`` as they happen, the last a :class:`RunFinished`).

    ``redactor`` is the run's, when the caller prints or logs with it too (else one made from ``config``).
    ``back_hop`` gives what reached the upstream of the gateway under test (``--gateway-back``), once the
    suite is done: judged with the suite's own traffic (:mod:`mcp_assay.suite.judging`)."""
    if config.explore:  # mcp_assay.suite.explore: the extra it needs, and one seed for the whole run
        explore.require()
        config = explore.seeded(config)
    plan = plan_run(config, spec)
    redactor = redactor if redactor is not None else config.redactor()
    async with ready(config, spec, emit, mock=mock, redactor=redactor) as prepared:
        state = RunState(prepared.config, spec, emit, plan=plan, mock=mock, redactor=redactor)
        state.back_hop = back_hop
        if prepared.unreachable is not None:
            state.unjudged = state.redactor.text(prepared.unreachable)
            result = finished(state, None, ())
        else:
            prepared.introduce(state)
            failed = prepared.signed_out
            result = signed_out(state, failed) if failed is not None else await _tested(state)
    emit(result)
    return report_of(result, spec)


_DONE = object()


def run(
    config: SuiteConfig,
    spec: SpecSet,
    *,
    mock: httpx.AsyncBaseTransport | None = None,
    redactor: Redactor | None = None,
    back_hop: BackHop | None = None,
) -> Iterator[Event]:
    """Run the suite on a worker thread and yield its events as they happen; the last is :class:`RunFinished`."""
    check_revisions(config, spec)
    events: queue.Queue[Any] = queue.Queue()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            asyncio.run(arun(config, spec, events.put, mock=mock, redactor=redactor, back_hop=back_hop))
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
        raise failure[0]
