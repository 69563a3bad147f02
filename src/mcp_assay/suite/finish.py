"""A run's traffic and what happened on the way turned into its verdicts, its notes and its report.

The log is judged one revision at a time (:func:`~mcp_assay.suite.judging.judge_suite_log`); the
run adds what only it knows: the notes its cases and its rate limiter left, the traffic left out
of the judged log, the capabilities each revision advertised, the target and the counts. A run
that makes no conformance statement says why here, in one line: nothing could be tested (the
reason selection gave, written into the log as a skip so a recording carries it too), the
server never sent one usable answer, no case ran, or the sign-in failed.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence

from mcp_assay.recording.audit import audit_lines
from mcp_assay.report.about import Stats
from mcp_assay.report.about import Target as JudgedTarget
from mcp_assay.report.baseline import Baseline
from mcp_assay.report.build import build_report
from mcp_assay.report.model import FailOn, Report
from mcp_assay.report.sdk_signs import SdkSigns
from mcp_assay.report.sdks import AUTO, SdkChoice
from mcp_assay.spec.engine import registered_checks
from mcp_assay.spec.newer import NewerRevisions
from mcp_assay.spec.requirements import glossary
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.absence import usable_answer, why_no_answer_was_usable
from mcp_assay.suite.blocking import Skip
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.events import RunFinished
from mcp_assay.suite.judging import judge_suite_log, revision_of_items
from mcp_assay.suite.oauth import SignIn
from mcp_assay.suite.selection import Selection
from mcp_assay.suite.state import RunState
from mcp_assay.suite.untried import coverage_of
from mcp_assay.vocabulary.verdicts import Outcome, Verdict
from mcp_assay.wire.model import Observation

__all__ = ["finished", "nothing_tested", "report_of", "signed_out"]


def nothing_tested(state: RunState, selection: Selection) -> None:
    """Say in the log why no revision could be tested: every case not run, with the reason selection gave."""
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
    state.observe("skip", skip.data())


def signed_out(state: RunState, signin: SignIn) -> RunFinished:
    """The sign-in failed and the user did not ask to go on without a token: nothing is judged (exit 3)."""
    state.unjudged = f"{state.redactor.text(signin.summary)} (--without-token runs the cases that need no token)"
    state.observe("skip", Skip(family="sign-in", requirements=frozenset(), reason=f"not run: {state.unjudged}",
                               everything=True).data())  # fmt: skip
    return finished(state, None, ())


def _nothing_to_judge(state: RunState, selection: Selection | None, verdicts: Sequence[Verdict]) -> str | None:
    """Why a run that tested a revision still judged nothing: the server never sent one usable JSON-RPC
    answer, or no case ran at all (every one skipped or blocked); ``None`` when there is something to judge.

    A run without a credential the server takes judges what it can without one, and is left as it is."""
    if selection is None or not selection.tested or state.tokenless is not None:
        return None
    if not usable_answer(state.log.items):
        return state.redactor.text(why_no_answer_was_usable(state.seen()))
    if state.families_run or any(verdict.outcome in (Outcome.PASSED, Outcome.FAILED) for verdict in verdicts):
        return None  # cases ran: what they could not verify is the report's own "nothing verified"
    if state.skipped:
        return state.redactor.text(f"nothing was tested: {state.skipped[0].removeprefix('not run: ')}")
    selected = f" --only {state.config.only} selects" if state.config.only else ""
    return f"nothing was tested: no case{selected} applies to this server"


def _notes(state: RunState, selection: Selection | None, contexts: Sequence[SuiteContext]) -> list[str]:
    """What the run itself has to say besides the verdicts: its cases' notes, its waits, what it left out."""
    notes: list[str] = []
    several = len(contexts) > 1
    for revision, item in revision_of_items(state.log):
        if isinstance(item, Observation) and item.kind in ("note", "page-limit"):
            detail = item.data.get("detail")
            if isinstance(detail, str):
                text = state.redactor.text(detail)
                notes.append(f"{revision}: {text}" if several and revision and revision not in text else text)
    limiter = state.limiter
    if limiter.limited:
        notes.append(
            f"the target rate-limited the run {limiter.limited} time(s); "
            f"{limiter.waited:.1f} s were spent waiting it out"
        )
    dropped = [item for item in state.router.dropped if not isinstance(item, Observation)]
    if dropped and selection is not None and selection.tested:
        notes.append(f"{len(dropped)} selection exchange(s) of another era were left out of the judged traffic")
    late = [item for item in state.router.late if not isinstance(item, Observation)]
    if late:
        notes.append(f"{len(late)} exchange(s) arrived after their revision's cases had ended and were left out")
    for ctx in contexts:
        if ctx.capabilities is not None:
            where = f" ({ctx.revision.name})" if several else ""
            caps = ", ".join(sorted(ctx.capabilities)) or "none"
            notes.append(f"capabilities per {ctx.capability_source}{where}: {caps}")
    return notes


def _take_back_hop(state: RunState) -> None:
    """What reached the upstream of the gateway under test joins the run's log and recording (judged with it)."""
    assert state.back_hop is not None
    arrived = list(state.back_hop())
    for exchange in arrived:
        state.log.add(exchange)
        if state.writer is not None:
            state.writer.exchange(exchange)
    if not arrived:
        state.notes.append(
            "nothing reached the gateway's back hop (--gateway-back): is the gateway's upstream set to that port? "
            "The gateway was judged as a server only"
        )


def finished(state: RunState, selection: Selection | None, contexts: Sequence[SuiteContext]) -> RunFinished:
    """Judge the run's traffic: the verdicts, and what the report says about the run."""
    checks = state.plan.checks
    if state.back_hop is not None:
        _take_back_hop(state)
    verdicts, notes = judge_suite_log(state.log, state.spec, checks=checks, redactor=state.redactor)
    verdicts = state.plan.narrowed(verdicts)
    if state.unjudged is None:
        state.unjudged = _nothing_to_judge(state, selection, verdicts)
    notes = [*state.notes, *notes]
    if state.writer is not None:
        state.writer.close()
    notes += _notes(state, selection, contexts)
    log = state.log
    tested = tuple(revision.name for revision in selection.tested) if selection is not None else ()
    untried, generated = coverage_of(log, verdicts, tested)
    newer = NewerRevisions(state.spec.newest.name)
    newer.see_all(log)
    signs = SdkSigns()
    for item in log:
        signs.see(item)
    return RunFinished(
        verdicts=tuple(verdicts),
        target=JudgedTarget(
            kind="suite",
            description=state.shown_target(),
            transport="streamable-http" if state.config.url else "stdio",
            credentials=state.credentials.describe(),
            offered=dict(selection.offered) if selection is not None else {},
            served=state.redactor.text(shlex.join(state.config.serve)) if state.config.serve else None,
            recording=str(state.writer.path) if state.writer is not None else None,
            evidence=[state.writer.evidence()] if state.writer is not None else None,
            unknown_revisions=newer.found or None,
        ),
        tested=tested,
        revision_note=selection.note if selection is not None else "",
        notes=tuple(notes),
        audit=tuple(audit_lines(log)),
        stats=Stats(
            exchanges=len(log),
            messages=len(log.messages()),
            requests=sum(1 for item in log.http_exchanges())
            + sum(1 for line in log.stdio_lines() if line.probe is not None),
            duration_ms=round((time.perf_counter() - state.started) * 1000),
        ),
        unjudged=state.unjudged,
        untried=tuple(untried),
        generated=tuple(generated),
        signs=signs,
    )


def report_of(
    finished: RunFinished,
    spec: SpecSet,
    *,
    fail_on: FailOn = FailOn.MUST,
    baseline: Baseline | None = None,
    sdk: SdkChoice = AUTO,
) -> Report:
    """The report of a finished run."""
    report = build_report(
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
        sdk=sdk,
        signs=finished.signs,
    )
    report.untried, report.generated = list(finished.untried), list(finished.generated)
    return report
