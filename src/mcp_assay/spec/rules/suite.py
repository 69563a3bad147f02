"""Suite-level properties: what only a run that drives the server can establish.

These rules judge what the active suite records besides traffic — a server that stopped being
reachable, a request that was never answered — so that such failures appear once, as what they
are, instead of as a cascade of protocol failures in every case that came after. They apply only
to logs the suite produced (exchanges carrying a probe tag); passive captures never trigger them.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.cases import envelope
from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.reads import ANY_BEHAVIOUR
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.model import Exchange, Observation, ProcessExit, StdioLine, probe_case

__all__ = [
    "STAYS_UP",
    "UNANSWERED",
    "malformed_input_gets_an_error_answer",
    "requests_get_an_answer_within_the_timeout",
    "server_stays_available_through_the_run",
]


def _suite_traffic(ctx: Context) -> bool:
    return any(getattr(item, "probe", None) is not None for item in ctx.log)


def _observations(ctx: Context, kind: str) -> list[Observation]:
    return ctx.log.observations(kind)


@log_check(requirements="BEH-09", level=Level.MUST, subject="suite runs", follows=ANY_BEHAVIOUR)
def server_stays_available_through_the_run(ctx: Context) -> Iterator[Finding]:
    """The server keeps serving through the suite's run: no exit, no refused connection mid-run.

    Triggered by the active suite only: a ``transport-lost`` observation (the stdio process exited,
    or the HTTP endpoint stopped accepting connections, in the middle of a probe family), or a stdio
    process that ended before the suite closed its stdin. Later cases are reported as blocked by
    this check rather than failed one by one."""
    if not _suite_traffic(ctx):
        return
    lost = _observations(ctx, "transport-lost")
    for observation in lost:
        detail = str(observation.data.get("detail", "the server became unreachable"))
        family = observation.data.get("family")
        where = f" during the {family} cases" if family else ""
        yield failed(observation, f"the server stopped serving{where}: {detail}")
    if lost:
        return
    for item in ctx.log:
        if isinstance(item, ProcessExit) and item.stdin_closed_at is None:
            yield failed(item, f"the server process exited on its own (code {item.code}) while the suite was running")
            return
    yield passed(None, "the server kept serving until the suite finished")


STAYS_UP = server_stays_available_through_the_run.__name__
"""The check a run names as the blocker of the cases a server that stopped serving kept from running."""


MALFORMED_PROBES = envelope.HOSTILE
"""Probes whose silence is a JSON-RPC violation (RPC-12, RPC-13); a silently dropped batch is not (RPC-14)."""


def _unanswered(ctx: Context) -> dict[str, Observation]:
    """``no-answer`` observations by the id of the exchange (or stdio line) left unanswered."""
    return {str(item.data.get("exchange", "")): item for item in _observations(ctx, "no-answer")}


def _invalid(item: Exchange | None) -> bool:
    return item is not None and item.probe is not None and item.probe.invalid


UNANSWERED = "RPC-05"
"""The requirement a request left unanswered breaks: a run names it as the blocker of the cases the silence kept
from running, and the report names the check that failed it."""


@log_check(requirements=UNANSWERED, level=Level.MUST, subject="requests the suite sent", follows=ANY_BEHAVIOUR)
def requests_get_an_answer_within_the_timeout(ctx: Context) -> Iterator[Finding]:
    """Every well-formed request the suite sends gets an answer within the configured timeout.

    Triggered by ``no-answer`` observations the active suite records when a request (HTTP or stdio)
    got no JSON-RPC answer within ``--timeout``; the evidence is the unanswered request with its
    reproduction. Unanswered malformed probes are judged by
    ``malformed_input_gets_an_error_answer`` instead."""
    if not _suite_traffic(ctx):
        return
    found = False
    for ident, observation in _unanswered(ctx).items():
        item = ctx.log.get(ident)
        if _invalid(item):
            continue
        found = True
        yield failed(item if item is not None else observation, str(observation.data.get("detail", "no answer")))
    if not found:
        yield passed(None, "every well-formed request the suite sent was answered in time")


@log_check(
    requirements=("RPC-12", "RPC-13"),
    level=Level.MUST,
    subject="malformed probes the suite sent",
    follows=ANY_BEHAVIOUR,
)
def malformed_input_gets_an_error_answer(ctx: Context) -> Iterator[Finding]:
    """Input that is not JSON, or not a valid request, is answered with an error rather than ignored.

    Triggered by the active suite's probes ``invalid-json`` (-32700 expected, RPC-12) and
    ``jsonrpc-1.0`` / ``no-method`` (-32600 expected, RPC-13): one that got no answer within the
    short wait the suite allows fails; the codes of the answers that did come are judged by the
    JSON-RPC rules."""
    if not _suite_traffic(ctx):
        return
    unanswered = _unanswered(ctx)
    for item in ctx.log:
        case = probe_case(item)
        if case not in MALFORMED_PROBES or (isinstance(item, StdioLine) and item.sender is not Side.CLIENT):
            continue
        if item.id in unanswered:
            expected = "-32700" if case is envelope.INVALID_JSON else "-32600"
            yield failed(item, f"the server ignored the {case.name} probe: no error came back (expected {expected})")
        else:
            yield passed(item)
