"""Behaviour (BEH-06..08): no late write after a timeout, handles do not authenticate, reads write nothing.

A call the client gave up on whose record appears afterwards is a late write a retrying agent
would duplicate; a handle from one principal must not let another act; and a read-only call
must not move the witness.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp_assay.cases import NO_FACTS, Phase
from mcp_assay.cases import behaviour as behaviour_cases
from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.use import protected_requests
from mcp_assay.spec.rules.behaviour.cases import (
    BehaviourCase,
    Cases,
    answer_of,
    baseline_problem,
    cases,
    first_answer,
    movement,
    shown,
    summarised,
)
from mcp_assay.spec.rules.shared.reads import ANY_BEHAVIOUR
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange

__all__ = [
    "handle_possession_is_not_authentication",
    "handles_do_not_authenticate",
    "reads_change_nothing",
    "timed_out_calls_leave_no_late_write",
]

NO_HANDLE_USE = (
    "no principal presented a handle another one created, in an era with state handles: configure handles "
    "(create, use, canary_argument) in the config"
)

MIN_RACE_MS = 60
"""Below this calibrated duration a race says nothing: no client timeout leaves time for a cancel to act."""


@dataclass
class Race:
    """The timeline of one cancel race, read from the traffic and the witness reads."""

    case: BehaviourCase
    request: Message
    timeout_ms: int | None
    gave_up: float | None = None
    how: str = ""
    answered: Message | None = None

    def at(self, moment: float) -> str:
        return f"+{round((moment - self.request.time) * 1000)} ms"


def _race(case: BehaviourCase, request: Message, ctx: Context) -> Race:
    probe = case.probe_of(request)
    race = Race(case, request, probe.facts.timeout_ms if probe is not None else None)
    exchange = ctx.log.get(request.exchange)
    if isinstance(exchange, HttpExchange) and exchange.client_disconnected and exchange.ending is not None:
        race.gave_up, race.how = exchange.ending.time, "closed the response stream"
    for notice in case.sent(behaviour_cases.CANCEL_RACE, phase=Phase.CANCEL):
        if notice.method == "notifications/cancelled" and notice.time >= request.time:
            race.gave_up, race.how = notice.time, "sent notifications/cancelled"
            break
    race.answered = first_answer(request, ctx)
    return race


def _calibrated_ms(case: BehaviourCase, ctx: Context) -> float | None:
    calibration = cases(ctx).calibration(case)
    if calibration is None:
        return None
    for request in calibration.sent(behaviour_cases.CANCEL_RACE, behaviour_cases.WRITE_BASELINE, phase=Phase.CALIBRATE):
        answer = first_answer(request, ctx)
        if answer is not None:
            return (answer.time - request.time) * 1000
    return None


@log_check(requirements="BEH-06", level=Level.SHOULD, subject="cancel races", follows=ANY_BEHAVIOUR)
def timed_out_calls_leave_no_late_write(ctx: Context) -> Iterator[Finding]:
    """A write the client gave up on (timeout, then the era's cancellation) leaves no record behind.

    Triggered by the behaviour cases' ``cancel-race``: the write tool is called with a client
    timeout shorter than its calibrated duration, the client gives up (2026 HTTP: it closes the
    response stream; 2025 HTTP and stdio: ``notifications/cancelled``), waits ``settle_ms`` and
    reads the witness. A record that appears after the caller gave up is reported with the timing
    (sent, gave up, witnessed): a retrying agent will create a duplicate. Not verified when the
    call answered before the timeout, or the timeout was not well below the work."""
    return summarised(_timed_out_calls_leave_no_late_write(ctx))


def _timed_out_calls_leave_no_late_write(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    for case in index.with_phase(Phase.RACE):
        for request in case.sent(behaviour_cases.CANCEL_RACE, phase=Phase.RACE):
            if request.kind is Kind.REQUEST:
                yield _judge_race(case, request, index, ctx)


def _judge_race(case: BehaviourCase, request: Message, index: Cases, ctx: Context) -> Finding:
    attempt = case.facts.attempt
    head = f"{case.lane}, {case.tool}" + (f" #{attempt}" if attempt is not None else "")

    def pending(reason: str) -> Finding:
        return unverified(f"{head}: {reason}", request)

    problem = baseline_problem(case, index)
    if problem is not None:
        return pending(problem)
    race = _race(case, request, ctx)
    calibrated = _calibrated_ms(case, ctx)
    if calibrated is not None and calibrated < MIN_RACE_MS:
        return pending(
            f"the calibrated call took {round(calibrated)} ms, too little work to give up on; configure "
            "cancellation.delay_argument so the call takes a few hundred milliseconds"
        )
    if race.timeout_ms is not None and calibrated is not None and race.timeout_ms > calibrated / 3 + 1:
        return pending(
            f"the {race.timeout_ms} ms timeout is not below a third of the calibrated {round(calibrated)} ms, so a "
            "cancel could arrive after the work is done; lower cancellation.timeout_ms or raise delay_argument"
        )
    if race.answered is not None and (race.gave_up is None or race.answered.time <= race.gave_up):
        elapsed = round((race.answered.time - request.time) * 1000)
        return pending(
            f"the call answered after {elapsed} ms, before the client gave up"
            + (f" at {race.timeout_ms} ms" if race.timeout_ms is not None else "")
            + "; configure cancellation.delay_argument so the work outlasts the timeout"
        )
    if race.gave_up is None:
        return pending("the client never gave up on the call")
    moved = movement(case, index)
    if moved.problem is not None:
        return pending(moved.problem)
    after = case.read("after")
    witnessed = race.at(after.time) if after is not None else "?"
    line = (
        f"{head}: sent +0 ms, gave up {race.at(race.gave_up)} ({race.how}), "
        f"witness {moved.witness} read {witnessed}: {shown(moved.before)} → {shown(moved.after)}"
    )
    if moved.moved:
        return failed(request, f"{line} — the write landed after the caller gave up; a retry would create a duplicate")
    return passed(request, line)


def _contains(message: Message | None, canary: Any) -> bool:
    if message is None or not isinstance(canary, str) or not canary:
        return False
    return canary in message.raw.decode("utf-8", "replace") if message.raw else False


@log_check(
    requirements="BEH-07", level=Level.MUST_NOT, subject="handles presented by another principal", follows=ANY_BEHAVIOUR
)
def handles_do_not_authenticate(ctx: Context) -> Iterator[Finding]:
    """A handle minted for one principal gets another principal nothing: no result, no contents.

    Triggered by the behaviour cases' ``handle-use``: one principal creates a record (with a
    canary in a string argument) and another presents its handle. A successful answer fails, and
    so does any answer that carries the canary; a tool error or a protocol error passes."""
    return summarised(_handles_do_not_authenticate(ctx))


@log_check(
    requirements="AUTH-35",
    level=Level.MUST_NOT,
    subject="2026 handles presented by another principal",
    features={"per_request_version"},
    follows=ANY_BEHAVIOUR,
)
def handle_possession_is_not_authentication(ctx: Context) -> Iterator[Finding]:
    """A 2026 server does not take possession of a state handle for authentication.

    The same subjects as BEH-07, in eras with per-request versioning (where state handles replace
    sessions) and where authorization is in use: another principal presenting the handle gets
    neither a result nor the record's contents."""
    _, not_in_use = protected_requests(ctx)
    if not_in_use is not None:
        return iter([not_in_use])
    findings = list(summarised(_handles_do_not_authenticate(ctx, feature="per_request_version")))
    return iter(findings or [unverified(NO_HANDLE_USE)])


def _handles_do_not_authenticate(ctx: Context, feature: str | None = None) -> Iterator[Finding]:
    for case in cases(ctx).by_id.values():
        for request in case.sent(behaviour_cases.HANDLE_USE):
            if request.kind is not Kind.REQUEST:
                continue
            revision = ctx.revision(request)
            if feature is not None and (revision is None or not revision.has(feature)):
                continue
            probe = case.probe_of(request)
            facts = probe.facts if probe is not None else NO_FACTS
            owner, principal = facts.owner or "?", facts.principal or "?"
            answer = answer_of(request, ctx)
            leaked = _contains(answer.message, facts.canary)
            what = f"{case.lane}: {principal} presented {owner}'s handle to {facts.tool or '?'}"
            if answer.kind == "none":
                yield unverified(f"{what} and got no answer", request)
            elif answer.succeeded or leaked:
                detail = " and the answer carries the canary from the record" if leaked else ""
                yield failed(answer.message or request, f"{what} and got {answer.text}{detail}")
            else:
                yield passed(answer.message or request, f"{what}: {answer.text}")


@log_check(requirements="BEH-08", level=Level.SHOULD, subject="reads with witness reads", follows=ANY_BEHAVIOUR)
def reads_change_nothing(ctx: Context) -> Iterator[Finding]:
    """A tool used as a read changes nothing a witness read can see (read_tools in the config).

    Triggered by the behaviour cases' ``read-tool`` calls, between two witness reads."""
    return summarised(_reads_change_nothing(ctx))


def _reads_change_nothing(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    for case in index.with_phase(Phase.READ):
        for request in case.sent(behaviour_cases.READ_TOOL):
            moved = movement(case, index)
            tool = case.tool
            if moved.problem is not None:
                yield unverified(f"{case.lane}: {moved.problem}", request)
            elif moved.moved:
                yield failed(request, f"{case.lane}: tools/call {tool}, used as a read, and {moved.describe()}")
            else:
                yield passed(request, f"{case.lane}: {tool}: {moved.describe()}")
