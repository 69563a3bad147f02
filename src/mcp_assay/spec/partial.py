"""What a judge knows before it gives its verdicts, in a form that crosses processes and merges exactly.

``mcp-assay validate`` judges many recordings (or shares of one) in separate processes, or on the
workers of a cluster, and gives one report that must say, byte for byte, what judging them one after
the other says. A :class:`~mcp_assay.spec.engine.Judge` folds every finding into a bounded tally per
check (counts, the earliest failures with their evidence, the latest pass ...); :class:`Partial` is
that state without the traffic it came from (evidence already made, subjects dropped), and
:func:`merge` combines partials the way one judge would have folded their findings: counts add up,
the earliest failures and the latest pass are chosen by where they sit in the traffic, and the
gate counts that decide *not applicable* add up too. :func:`verdict_of` is the one place a verdict
is made from a tally, for a judge of its own traffic and for merged partials alike.

Where a finding sits (:data:`Place`) is its subject's time, the place of its recording among those
judged, the subject's position in the recording (a log check's finding: its window) and its rank
among the check's findings there; a judge of one recording calls its recording ``0``, and
:meth:`Partial.placed` moves a partial to its recording's place before merging.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.checks import Check, Grade
from mcp_assay.spec.context import GateKey
from mcp_assay.vocabulary.verdicts import Evidence, Outcome, Severity, Source, Verdict

__all__ = [
    "MAX_EVIDENCE",
    "Kept",
    "Partial",
    "Place",
    "TallyState",
    "in_scope_of",
    "merge",
    "merge_recordings",
    "merge_shares",
    "redacted_evidence",
    "strongest",
    "verdict_of",
    "verdicts",
]

MAX_EVIDENCE = 8
"""Failures a verdict shows, the earliest in the traffic."""
RANK = {Severity.INFO: 0, Severity.SHOULD: 1, Severity.MUST: 2}

Place = tuple[float, int, int, int]
"""Where a finding sits: its subject's time, its recording's place, its position (or window), its rank there."""


@dataclass(frozen=True, slots=True)
class Kept:
    """A finding a verdict may quote, with its evidence made (``None``: the finding had no subject)."""

    place: Place
    outcome: Outcome
    detail: str
    blocked_by: str | None = None
    grade: Grade | None = None
    evidence: Evidence | None = None
    subject: bool = False
    """Whether the finding was about a subject (only then does a verdict quote its evidence)."""
    related: tuple[Evidence, ...] = ()
    """The evidence of what the finding names beside its subject (the other hop of a gateway)."""


@dataclass(frozen=True, slots=True)
class TallyState:
    """Everything a verdict needs of one check's findings (the engine's tally, without the traffic)."""

    failures: tuple[Kept, ...] = ()
    """The earliest failures, in traffic order (at most :data:`MAX_EVIDENCE`)."""
    failed: int = 0
    graded: int = 0
    grade: Grade | None = None
    grade_place: Place | None = None
    """Where the first failure of the highest grade was folded (ties between merged tallies go to it)."""
    failed_sources: frozenset[Source | None] = frozenset()
    first_failure: Kept | None = None
    passes: int = 0
    last_pass: Kept | None = None
    pending: Kept | None = None
    unread: Kept | None = None
    """The first failure an unread message made *not verified*: passes elsewhere never hide it."""
    inapplicable: Kept | None = None
    sources: frozenset[Source | None] = frozenset()
    revisions: frozenset[str] = frozenset()
    exchanges_in_scope: int = 0
    broken: str | None = None
    broken_at: tuple[int, int] | None = None
    """Where the check first raised: its recording's place and the position (or window) it raised at."""


@dataclass(frozen=True, slots=True)
class Partial:
    """One judge's state before its verdicts: the tallies, and what decides *not applicable*."""

    checks: tuple[str, ...]
    tallies: Mapping[str, TallyState]
    gates: Mapping[GateKey, tuple[int, Place]]
    """Per gate key: how many messages had it, and where the first one was."""
    admissions: Mapping[tuple[str, GateKey], tuple[bool, str]]
    traffic: bool
    """Whether there was anything at all (a message, an exchange, a judged window)."""
    source: Source = Source.PASSIVE
    secrets: frozenset[str] = frozenset()
    """The credentials the judge learnt from the traffic: every report scrubs them all."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """Exchanges, observations and messages seen, windows judged; checks called (counted work)."""
    recording: int = 0
    """The place of the recording among those judged (0 for a judge of one)."""
    share: int = 0
    shares: int = 1
    """Which of a recording's shares this judge judged (:class:`~mcp_assay.spec.engine.Judge`'s ``share``)."""

    def placed(self, recording: int) -> Partial:
        """The same partial, its findings placed in recording ``recording``."""
        if recording == self.recording:
            return self
        move = _mover(recording)
        return replace(
            self,
            tallies={name: _moved(state, move, recording) for name, state in self.tallies.items()},
            gates={key: (count, move(first)) for key, (count, first) in self.gates.items()},
            recording=recording,
        )


SHARED_COUNTS = ("exchanges", "observations", "messages", "windows")
"""Counts every share of a recording makes alike (each reads the whole recording): taken once, not added."""


def merge(partials: Sequence[Partial]) -> Partial:
    """One partial from several, as one judge judging their recordings one after the other would have folded them.

    Shares of one recording add their tallies and keep what every share counted alike once; partials of
    different recordings add everything. Any order gives the same partial (each finding keeps its place), so
    results may be merged as they arrive."""
    if not partials:
        raise ValueError("nothing to merge")
    by_recording: dict[int, list[Partial]] = {}
    for partial in partials:
        by_recording.setdefault(partial.recording, []).append(partial)
    whole = [merge_shares(group) for _, group in sorted(by_recording.items())]
    result = whole[0]
    for other in whole[1:]:
        result = merge_recordings(result, other)
    return result


def merge_shares(group: Sequence[Partial]) -> Partial:
    """The shares of one recording (every one of them, in any order) as one partial of the whole recording."""
    group = sorted(group, key=lambda partial: partial.share)
    first = group[0]
    shares = [partial.share for partial in group]
    if shares != list(range(first.shares)) or any(partial.recording != first.recording for partial in group):
        raise ValueError(f"recording {first.recording}: shares {shares} of {first.shares} given")
    if len(group) == 1:
        return first
    counts = dict(first.counts)
    for partial in group[1:]:
        for key, value in partial.counts.items():
            if key not in SHARED_COUNTS:
                counts[key] = counts.get(key, 0) + value
    return replace(
        first,
        tallies=_merged_tallies(first.checks, [partial.tallies for partial in group]),
        counts=counts,
        share=0,
        shares=1,
    )


def merge_recordings(first: Partial, second: Partial) -> Partial:
    """Two partials of different recordings (each whole: its shares merged) as one."""
    if first.checks != second.checks:
        raise ValueError("partials of different checks cannot be merged")
    if first.shares != 1 or second.shares != 1:
        raise ValueError("merge the shares of a recording first")
    gates = dict(first.gates)
    for gate, (count, place) in second.gates.items():
        earlier = gates.get(gate)
        gates[gate] = (count, place) if earlier is None else (earlier[0] + count, min(earlier[1], place))
    admissions = dict(second.admissions)
    admissions.update(first.admissions)
    counts = dict(first.counts)
    for name, value in second.counts.items():
        counts[name] = counts.get(name, 0) + value
    return replace(
        first,
        tallies=_merged_tallies(first.checks, [first.tallies, second.tallies]),
        gates=gates,
        admissions=admissions,
        traffic=first.traffic or second.traffic,
        secrets=first.secrets | second.secrets,
        counts=counts,
        recording=min(first.recording, second.recording),
    )


def _merged_tallies(checks: Iterable[str], tallies: Sequence[Mapping[str, TallyState]]) -> dict[str, TallyState]:
    merged: dict[str, TallyState] = {}
    for name in checks:
        states = [group[name] for group in tallies if name in group]
        state = states[0] if states else TallyState()
        for other in states[1:]:
            state = _merged_tally(state, other)
        merged[name] = state
    return merged


def _earliest(*items: Kept | None) -> Kept | None:
    found = [item for item in items if item is not None]
    return min(found, key=lambda item: item.place) if found else None


def _latest(*items: Kept | None) -> Kept | None:
    found = [item for item in items if item is not None]
    return max(found, key=lambda item: item.place) if found else None


def _fold_order(place: Place) -> tuple[int, int, int]:
    """The order a judge folds findings of one check in: by recording, then position (or window), then rank."""
    return place[1], place[2], place[3]


def _merged_tally(first: TallyState, second: TallyState) -> TallyState:
    grade, grade_place = first.grade, first.grade_place
    if second.grade is not None and second.grade_place is not None:
        if (
            grade is None
            or grade_place is None
            or RANK[second.grade.severity] > RANK[grade.severity]
            or (
                RANK[second.grade.severity] == RANK[grade.severity]
                and _fold_order(second.grade_place) < _fold_order(grade_place)
            )
        ):
            grade, grade_place = second.grade, second.grade_place
    broken, broken_at = first.broken, first.broken_at
    if second.broken is not None and (broken is None or (second.broken_at or (0, 0)) < (broken_at or (0, 0))):
        broken, broken_at = second.broken, second.broken_at
    return TallyState(
        failures=tuple(sorted((*first.failures, *second.failures), key=lambda item: item.place)[:MAX_EVIDENCE]),
        failed=first.failed + second.failed,
        graded=first.graded + second.graded,
        grade=grade,
        grade_place=grade_place,
        failed_sources=first.failed_sources | second.failed_sources,
        first_failure=_earliest(first.first_failure, second.first_failure),
        passes=first.passes + second.passes,
        last_pass=_latest(first.last_pass, second.last_pass),
        pending=_earliest(first.pending, second.pending),
        unread=_earliest(first.unread, second.unread),
        inapplicable=_earliest(first.inapplicable, second.inapplicable),
        sources=first.sources | second.sources,
        revisions=first.revisions | second.revisions,
        exchanges_in_scope=max(first.exchanges_in_scope, second.exchanges_in_scope),
        broken=broken,
        broken_at=broken_at,
    )


def _mover(recording: int) -> Callable[[Place], Place]:
    def move(place: Place) -> Place:
        return (place[0], recording, place[2], place[3])

    return move


def _moved(state: TallyState, move: Callable[[Place], Place], recording: int) -> TallyState:
    def kept(item: Kept | None) -> Kept | None:
        return None if item is None else replace(item, place=move(item.place))

    return replace(
        state,
        failures=tuple(replace(item, place=move(item.place)) for item in state.failures),
        grade_place=move(state.grade_place) if state.grade_place is not None else None,
        first_failure=kept(state.first_failure),
        last_pass=kept(state.last_pass),
        pending=kept(state.pending),
        unread=kept(state.unread),
        inapplicable=kept(state.inapplicable),
        broken_at=(recording, state.broken_at[1]) if state.broken_at is not None else None,
    )


# -- verdicts ----------------------------------------------------------------------------------------
def in_scope_of(
    check: str, gates: Mapping[GateKey, tuple[int, Any]], admissions: Mapping[tuple[str, GateKey], tuple[bool, str]]
) -> tuple[int, str | None]:
    """How many messages passed ``check``'s gates, and the most common reason others did not (the earliest of
    equally common ones)."""
    count = 0
    reasons: dict[str, tuple[int, Any]] = {}
    for key, (seen, first) in gates.items():
        ok, why = admissions[(check, key)]
        if ok:
            count += seen
        else:
            total, earliest = reasons.get(why, (0, first))
            reasons[why] = (total + seen, min(earliest, first))
    main = min(reasons.items(), key=lambda item: (-item[1][0], item[1][1]))[0] if reasons else None
    return count, main


def strongest(sources: Iterable[Source | None], default: Source) -> Source:
    """A verdict's source: probed when any of its evidence came from a fixed probe; explored when all of what
    mcp-assay sent was drawn from a tool's schema (``run --explore`` found what the fixed cases did not); injected
    when all of it is the client's part of exchanges mcp-assay answered (its reactions); else the judge's own."""
    found = set(sources)
    if Source.ACTIVE in found:
        return Source.ACTIVE
    if Source.EXPLORED in found:
        return Source.EXPLORED
    if found == {Source.INJECTED}:
        return Source.INJECTED
    return default


def redacted_evidence(evidence: Evidence, redact: Callable[[str], str]) -> Evidence:
    """Evidence redacted again with every credential learnt since it was made."""
    return replace(
        evidence,
        summary=redact(evidence.summary),
        detail=redact(evidence.detail),
        excerpt=redact(evidence.excerpt),
        reproduction=redact(evidence.reproduction),
        replay=evidence.replay.redacted(redact) if evidence.replay is not None else None,
    )


def verdict_of(
    check: Check,
    tally: TallyState,
    *,
    source: Source,
    traffic: bool,
    in_scope: tuple[int, str | None],
    redact: Callable[[str], str],
) -> Verdict:
    """The verdict of one check from its tally: failed, passed, not verified or not applicable, and why."""
    if tally.broken is not None:
        return _verdict(check, Outcome.NOT_VERIFIED, source, tally.broken)
    if not traffic:
        return _verdict(check, Outcome.NOT_VERIFIED, source, "no MCP traffic was captured")
    count, gated = in_scope
    if count == 0 and tally.exchanges_in_scope == 0:
        return _verdict(
            check, Outcome.NOT_APPLICABLE, source, gated or "nothing in the traffic falls under this requirement"
        )
    own = strongest(tally.sources, source)
    common: dict[str, Any] = {"judged": tally.failed + tally.passes, "revisions": tuple(sorted(tally.revisions))}
    if tally.failed:
        assert tally.first_failure is not None
        more = f" (and {tally.failed - 1} more)" if tally.failed > 1 else ""
        evidence = tuple(
            redacted_evidence(made, redact)
            for item in tally.failures
            if item.evidence is not None
            for made in (item.evidence, *item.related)
        )
        reason = redact(tally.first_failure.detail) + more
        if tally.grade is not None and tally.graded == tally.failed:
            grade = tally.grade
            common.update(severity=grade.severity, graded=redact(grade.reason))
            reason += f" (graded {grade.severity.value.upper()}: {redact(grade.reason)})"
        return _verdict(
            check, Outcome.FAILED, strongest(tally.failed_sources, source), reason, evidence=evidence,
            violations=tally.failed, **common,
        )  # fmt: skip
    if tally.unread is not None:  # what may have failed cannot be read: the passes elsewhere settle nothing
        first = tally.unread
        others = f" ({tally.passes} other {check.subject} passed)" if tally.passes else ""
        return _verdict(
            check, Outcome.NOT_VERIFIED, own, redact(first.detail) + others, evidence=_quoted(first, redact), **common
        )
    if tally.last_pass is not None:
        sample = tally.last_pass
        reason = sample.detail or f"{tally.passes} {check.subject} judged"
        evidence = _quoted(sample, redact, related=True)
        return _verdict(check, Outcome.PASSED, own, redact(reason), evidence=evidence, **common)
    if tally.pending is not None:
        first = tally.pending
        return _verdict(
            check, Outcome.NOT_VERIFIED, own, redact(first.detail), evidence=_quoted(first, redact),
            blocked_by=first.blocked_by, **common,
        )  # fmt: skip
    if tally.inapplicable is not None:
        return _verdict(check, Outcome.NOT_APPLICABLE, own, redact(tally.inapplicable.detail), **common)
    return _verdict(check, Outcome.NOT_VERIFIED, own, f"no {check.subject} observed in the traffic", **common)


def verdicts(partial: Partial, checks: Iterable[Check]) -> list[Verdict]:
    """One verdict per check from a (merged) partial: what one judge of all its traffic says (whatever revisions
    the traffic carries; a judge with a narrower :class:`~mcp_assay.spec.engine.Scope` applies it itself)."""
    redact = Redactor(secrets=partial.secrets).text
    return [
        verdict_of(
            check,
            partial.tallies[check.name],
            source=partial.source,
            traffic=partial.traffic,
            in_scope=in_scope_of(check.name, partial.gates, partial.admissions),
            redact=redact,
        )
        for check in checks
    ]


def _quoted(item: Kept, redact: Callable[[str], str], *, related: bool = False) -> tuple[Evidence, ...]:
    if not item.subject or item.evidence is None:
        return ()
    return tuple(redacted_evidence(made, redact) for made in (item.evidence, *(item.related if related else ())))


def _verdict(check: Check, outcome: Outcome, source: Source, reason: str, **extra: Any) -> Verdict:
    severity = extra.pop("severity", check.severity)
    return Verdict(
        check=check.name,
        title=check.title,
        requirements=check.requirements,
        level=check.level,
        severity=severity,
        side=check.side,
        area=check.area,
        outcome=outcome,
        source=source,
        reason=reason,
        tags=check.tags,
        **extra,
    )
