"""From the results of every unit to the one report: the same, byte for byte, whatever ran the units.

Results arrive in any order, from any process, and are folded in as they arrive, so what this process
holds does not grow with the number of recordings: the judges' partials merge exactly and in any
order (each finding keeps its place in the traffic: :func:`mcp_assay.spec.partial.merge`); the shares
of a recording wait for each other; of the audit lines only the latest the report keeps are held.
What the report says of the files (their kinds and problems, the SDK signs the peers showed, the
notes) is put back in the order of the recordings, as one pass over them would have met it. Each
recording is a capture of its own: one in which no peer ever answered is *not judged*, which the
report says in a note when others were judged, and in its verdict when none was.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from mcp_assay.recording.audit import AuditLine, AuditTrail
from mcp_assay.report.about import Stats, Target
from mcp_assay.report.build import build_report
from mcp_assay.report.model import Report
from mcp_assay.report.sdk_signs import SdkSigns, Sightings
from mcp_assay.report.sdks import SdkChoice
from mcp_assay.scale.units import UnitResult
from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import registered_checks
from mcp_assay.spec.partial import Partial, merge_recordings, merge_shares, verdicts
from mcp_assay.spec.requirements import glossary
from mcp_assay.spec.revisions import SpecSet

__all__ = ["Reduction", "reduce_units", "target_of"]


def target_of(recordings: Sequence[str], transports: Iterable[str], kinds: list[str]) -> Target:
    """What a report on recordings says it judged."""
    return Target(
        kind="recording",
        description=", ".join(recordings),
        transport=", ".join(sorted(transports)) or "none",
        inputs=kinds,
    )


@dataclass(slots=True)
class _File:
    """What the report says of one recording (from its first share)."""

    location: str
    kinds: list[str]
    problems: list[str]
    sightings: Sightings
    notes: list[str]
    transports: tuple[str, ...]
    unjudged: str | None
    newer: dict[str, str]
    audit: deque[AuditLine] = field(default_factory=deque)
    audit_total: int = 0


class Reduction:
    """Takes unit results as they come (:meth:`add`) and gives the report once all are in (:meth:`report`)."""

    def __init__(self, *, limit: int | None = None) -> None:
        self.limit = limit if limit is not None else AuditTrail().limit
        """Audit lines the report keeps (the latest): no more are held for the recordings judged."""
        self._partial: Partial | None = None
        self._shares: dict[int, list[Partial]] = {}
        self._files: dict[int, _File] = {}
        self._holding: list[int] = []
        """The recordings whose audit lines are held, in their order (the earliest first)."""
        self._held = 0
        self.peak_rss_kib = 0
        """The most memory any process that judged a unit needed (the figure a cluster's worker must have)."""
        self.units = 0

    def add(self, result: UnitResult) -> None:
        """Fold in one unit's result."""
        self.units += 1
        self.peak_rss_kib = max(self.peak_rss_kib, result.peak_rss_kib)
        unit = result.unit
        waiting = self._shares.setdefault(unit.index, [])
        waiting.append(result.partial)
        if len(waiting) == unit.shares:
            del self._shares[unit.index]
            whole = merge_shares(waiting)
            self._partial = whole if self._partial is None else merge_recordings(self._partial, whole)
        if unit.share == 0:
            self._files[unit.index] = _File(
                unit.location, result.kinds, result.problems, result.sightings, result.notes, result.transports,
                result.unjudged, result.newer, deque(result.audit), result.audit_total,
            )  # fmt: skip
            self._hold_audit(unit.index)

    def held_audit_lines(self) -> int:
        """Audit lines held now (at most what the report keeps, and the lines of the result just added)."""
        return self._held

    def _hold_audit(self, index: int) -> None:
        """Keep the latest :attr:`limit` audit lines of the recordings in so far, in their order: the lines of the
        earliest recordings held are dropped first (earlier recordings' lines come before theirs in the report).
        Each line is dropped at most once, so this is linear in the lines, whatever order results come in."""
        item = self._files[index]
        if not item.audit:
            return
        bisect.insort(self._holding, index)
        self._held += len(item.audit)
        while self._held > self.limit:
            earliest = self._files[self._holding[0]]
            drop = min(len(earliest.audit), self._held - self.limit)
            for _ in range(drop):
                earliest.audit.popleft()
            self._held -= drop
            if not earliest.audit:
                self._holding.pop(0)

    def report(self, *, spec: SpecSet, checks: list[Check] | None, sdk: SdkChoice, described: Sequence[str]) -> Report:
        """The report of every result added; ``described`` names what was judged (the arguments as given)."""
        if self._shares:
            missing = ", ".join(str(index) for index in sorted(self._shares))
            raise ValueError(f"shares of recording(s) {missing} are missing")
        if self._partial is None:
            raise ValueError("no results to reduce")
        judged = checks if checks is not None else registered_checks()
        found = verdicts(self._partial, judged)
        files = [self._files[index] for index in sorted(self._files)]
        signs = SdkSigns()
        trail = AuditTrail(self.limit)
        kinds: list[str] = []
        problems: list[str] = []
        notes: list[str] = []
        transports: set[str] = set()
        newer: dict[str, str] = {}
        for item in files:
            for revision, how in item.newer.items():
                newer.setdefault(revision, how)
            signs.absorb(item.sightings)
            trail.lines.extend(item.audit)  # a bounded deque: the latest lines of all, as one trail would keep
            trail.total += item.audit_total
            kinds.extend(item.kinds)
            problems.extend(item.problems)
            notes.extend(item.notes)
            transports.update(item.transports)
        unjudged = [item for item in files if item.unjudged is not None]
        said = _unjudged(files, unjudged)
        if said is None:
            notes.extend(f"not judged: {item.location}: {item.unjudged}" for item in unjudged)
        counts = self._partial.counts
        return build_report(
            found,
            target=replace(target_of(described, transports, kinds), unknown_revisions=newer or None),
            schemas=spec.schema_infos(),
            notes=[*problems, *notes, *filter(None, [trail.note()])],
            audit=list(trail.lines),
            stats=Stats(
                exchanges=counts.get("exchanges", 0),
                observations=counts.get("observations", 0),
                messages=counts.get("messages", 0),
                windows=counts.get("windows", 0),
            ),
            glossary=glossary(found),
            unjudged=said,
            sdk=sdk,
            signs=signs,
        )


def reduce_units(
    results: Iterable[UnitResult],
    *,
    spec: SpecSet,
    checks: list[Check] | None,
    sdk: SdkChoice,
    described: Sequence[str],
) -> Report:
    """The report of every unit's results, taken in the order they come."""
    reduction = Reduction()
    for result in results:
        reduction.add(result)
    return reduction.report(spec=spec, checks=checks, sdk=sdk, described=described)


def _unjudged(files: Sequence[_File], unjudged: Sequence[_File]) -> str | None:
    """Why the report has nothing to judge: every recording's reason (one recording: its own words)."""
    if len(unjudged) < len(files):
        return None
    if len(files) == 1:
        return files[0].unjudged
    return "; ".join(f"{item.location}: {item.unjudged}" for item in unjudged)
