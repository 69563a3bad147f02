"""Judging a suite run: one log per revision it tested, each judged at that revision alone.

A run tests every revision the server serves, each on its own connections (its own processes over
stdio), and records them one after the other: each revision's traffic is a *segment* of the log
opened by a ``suite-run`` observation naming that revision (see
:class:`~mcp_assay.suite.context.Router`). Whatever was recorded before the first segment (a
sign-in note, the addresses a started server listens on) belongs to every revision. Each
segment is judged with a :class:`~mcp_assay.spec.engine.Scope` of its own revision, so a
requirement that binds both revisions gets a verdict per revision, and every verdict says which.

This works on a live run's log and on a recording of one alike, so re-judging a ``--record``
file gives the verdicts the run gave. A recording made before runs tested several revisions has
one ``suite-run`` observation, and is judged whole, as it always was.

A run through a gateway (``--gateway-back``) also holds what reached the upstream: the back hop's
exchanges (:class:`~mcp_assay.wire.model.Hop`). The suite's own traffic is then the gateway's front hop,
judged by revision as above with each failure naming its party; the back hop is judged as captured
traffic, each exchange the gateway sent for one of the suite's probes tagged with that probe (so
relaying a malformed probe is never held against the gateway as a client); and the GW rules judge
both hops together (:mod:`mcp_assay.spec.gateway`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import Blame, Judge, Scope, registered_checks
from mcp_assay.spec.gateway import GatewayJudge, is_gateway_check
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.blocking import annotate, skip_from_observation
from mcp_assay.vocabulary.verdicts import Severity, Side, Source, Verdict
from mcp_assay.wire.hops import finish_order, relayed_probes
from mcp_assay.wire.model import Exchange, Hop, HttpExchange, Observation
from mcp_assay.wire.traffic import ExchangeLog

__all__ = [
    "CLIENT_IS_US",
    "MODERN_ONLY",
    "RUN_OBSERVATION",
    "SERVER_SIDES",
    "Segment",
    "judge_suite_log",
    "revision_of_items",
    "segments",
    "suite_scope",
    "tested_revisions",
]

RUN_OBSERVATION = "suite-run"
"""Observation kind opening the traffic of one revision a suite run tested (so a recording is judged the same way)."""
CLIENT_IS_US = "it judges the client, which in a suite run is mcp-assay itself"
SERVER_SIDES = frozenset({Side.SERVER, Side.BOTH, Side.PROXY})
"""What a suite run judges: one server (its client is mcp-assay itself)."""
MODERN_ONLY = "modern_only"
"""The run's fact that the server is declared modern-only (``--modern-only``), handed on to the version
rules as the setting of the same name."""


@dataclass(frozen=True, slots=True)
class Segment:
    """The traffic of one revision a run tested, with what the run recorded about it."""

    facts: Mapping[str, Any]
    """The ``suite-run`` observation's data: ``revision`` (or ``intended``), ``transport``, ``note`` ..."""
    log: ExchangeLog


def segments(log: ExchangeLog) -> list[Segment]:
    """The run's log split per revision tested: each segment with the prelude every revision shares."""
    items = list(log)
    starts = [position for position, item in enumerate(items) if _marker(item) is not None]
    if len(starts) < 2:
        marker = _marker(items[starts[0]]) if starts else None
        return [Segment(marker.data if marker is not None else {}, log)]
    prelude = items[: starts[0]]
    found = []
    for start, end in zip(starts, [*starts[1:], len(items)], strict=True):
        marker = _marker(items[start])
        assert marker is not None
        found.append(Segment(marker.data, ExchangeLog([*prelude, *items[start:end]])))
    return found


def _marker(item: Exchange) -> Observation | None:
    return item if isinstance(item, Observation) and item.kind == RUN_OBSERVATION else None


def revision_of_items(log: ExchangeLog) -> Iterator[tuple[str | None, Exchange]]:
    """Every item of ``log`` with the revision whose segment holds it (``None`` before the first segment)."""
    current: str | None = None
    for item in log:
        marker = _marker(item)
        if marker is not None:
            named = marker.data.get("revision")
            current = named if isinstance(named, str) else None
        yield current, item


def tested_revisions(log: ExchangeLog) -> list[str]:
    """The revisions the run recorded in ``log`` tested, in the order it tested them."""
    names = [segment.facts.get("revision") for segment in segments(log)]
    return [name for name in names if isinstance(name, str)]


def suite_scope(log: ExchangeLog, spec: SpecSet, facts: Mapping[str, Any] | None = None) -> Scope:
    """The scope one revision of a suite run is judged with, from its ``suite-run`` facts (else the last in ``log``).

    A run judges one server at the revision under test; when it could establish none, the checks
    of the revision it meant to test are not verified."""
    if facts is None:
        runs = log.observations(RUN_OBSERVATION)
        facts = runs[-1].data if runs else {}
    named = facts.get("revision")
    revision = spec.get(named) if isinstance(named, str) else None
    if revision is not None:
        return Scope(revisions=(revision,), sides=SERVER_SIDES, sides_reason=CLIENT_IS_US)
    intended = spec.get(facts.get("intended")) if isinstance(facts.get("intended"), str) else None
    if intended is not None:
        transport = str(facts.get("transport", ""))
        return Scope(
            revisions=(intended,), sides=SERVER_SIDES, sides_reason=CLIENT_IS_US, established=False, transport=transport
        )
    return Scope()


def judge_suite_log(
    log: ExchangeLog,
    spec: SpecSet,
    *,
    checks: Sequence[Check] | None = None,
    redactor: Redactor | None = None,
) -> tuple[list[Verdict], list[str]]:
    """Judge the traffic of a suite run the way the run does: each revision it tested on its own.

    The skips of each revision make its untouched verdicts *not verified*, with the reason. A
    failure of a check that judges the client is a defect of mcp-assay's own requests: a note,
    never a finding."""
    gateway: GatewayJudge | None = None
    if any(item.hop is Hop.BACK for item in log):
        log, gateway = _gateway_hops(log, spec, checks, redactor)
    parts = segments(log)
    verdicts: list[Verdict] = [] if gateway is None else [_one_revision(verdict) for verdict in gateway.verdicts()]
    notes: list[str] = []
    blame = gateway.front_blame if gateway is not None else None
    for segment in parts:
        found, excluded = _judge(segment, spec, checks, redactor, blame)
        verdicts += found
        where = f" in {segment.facts['revision']}" if len(parts) > 1 else ""
        notes += [
            f"harness self-check: mcp-assay's own requests failed {verdict.check} "
            f"({', '.join(verdict.requirements)}){where}: {verdict.reason} — a defect of mcp-assay, not of the server"
            for verdict in excluded
            if verdict.severity is not Severity.INFO
        ]
    return verdicts, notes


def _gateway_hops(
    log: ExchangeLog, spec: SpecSet, checks: Sequence[Check] | None, redactor: Redactor | None
) -> tuple[ExchangeLog, GatewayJudge]:
    """The suite's own traffic as the gateway's front hop, and a judge of the back hop and both hops together that
    has taken everything in (its front blame is what the suite's judging of the front hop names parties by)."""
    front = [item if item.hop is not None or not isinstance(item, HttpExchange) else replace(item, hop=Hop.FRONT)
             for item in log if item.hop is not Hop.BACK]  # fmt: skip
    back = relayed_probes(front, [item for item in log if item.hop is Hop.BACK])
    gateway = GatewayJudge(spec, checks=checks, redactor=redactor, judge_front=False)
    for item in finish_order([item for item in front if item.hop is Hop.FRONT], back):
        gateway.add(item)
    return ExchangeLog(front), gateway


def _one_revision(verdict: Verdict) -> Verdict:
    """A verdict of the back hop (judged whatever revision the traffic carried) that saw one revision names it, as
    the front hop's verdicts do."""
    if verdict.revision is None and len(verdict.revisions) == 1:
        return replace(verdict, revision=verdict.revisions[0])
    return verdict


def _judge(
    segment: Segment,
    spec: SpecSet,
    checks: Sequence[Check] | None,
    redactor: Redactor | None,
    blame: Blame | None = None,
) -> tuple[list[Verdict], list[Verdict]]:
    """One segment's verdicts (each naming the segment's revision) and the client failures its scope left out."""
    scope = suite_scope(segment.log, spec, segment.facts)
    settings = {MODERN_ONLY: True} if segment.facts.get(MODERN_ONLY) is True else {}
    if blame is not None:
        checks = [check for check in (checks or registered_checks()) if not is_gateway_check(check)]
    judge = Judge.of(
        segment.log, spec, checks=checks, scope=scope, settings=settings, redactor=redactor, source=Source.ACTIVE,
        blame=blame,
    )  # fmt: skip
    skips = [skip_from_observation(item.data) for item in segment.log.observations("skip")]
    verdicts = annotate(judge.verdicts(), skips)
    named = segment.facts.get("revision")
    if isinstance(named, str):
        verdicts = [replace(verdict, revision=named) for verdict in verdicts]
    return verdicts, judge.excluded_failures
