"""Units of judging: a recording, or one share of a long one, judged on its own wherever it runs.

Judging one recording after another gives verdicts no order of units may change, so a unit is cut
where nothing any rule needs is split:

* a *recording* is a capture of its own (the proxy, the tap and ``run`` each write one per session;
  a gateway's both-hops recording holds both hops): every rule that looks across sessions or
  connections (a session id reused by another session, a stream resumed on a new connection, a
  client that starts a new session after its old one expired, a tool list compared with the calls
  made in other sessions) looks within a capture, and a unit holds the whole capture;
* a long recording is judged in windows anyway (:mod:`mcp_assay.spec.window`), and a *share* of it
  reads the whole recording, building every window's log and what each window carries into the next
  exactly as one judge does, but judges only every ``shares``-th window (its message checks and its
  log checks): each window's judging sees everything it would see in one judge, so every rule (those
  across sessions and connections included) sees what it needs, and the shares' findings together are
  one judge's findings. Reading is the part shared work repeats (about a fifteenth of judging).

:func:`judge_unit` is the one place a unit is judged, whatever process runs it: it reads the recording
through :func:`mcp_assay.recording.inputs.stream_input` (the one place a file of traffic is read, and where a
recording is checked before it is judged) and returns a :class:`UnitResult` that crosses processes:
the judge's :class:`~mcp_assay.spec.partial.Partial` and what the report says of the file.
"""

from __future__ import annotations

import hashlib
import math
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.addon.importers import READERS
from mcp_assay.recording.audit import AuditLine, AuditTrail
from mcp_assay.recording.inputs import Inputs, stream_input
from mcp_assay.report.sdk_signs import Sightings
from mcp_assay.scale.locations import Recording, local_copy
from mcp_assay.scale.watch import CaptureWatch
from mcp_assay.spec.checks import REGISTRY, Check
from mcp_assay.spec.collector import judging_collections
from mcp_assay.spec.engine import Judge, registered_checks
from mcp_assay.spec.partial import Partial
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.spec.sources import SchemaFile
from mcp_assay.vocabulary.verdicts import Source

__all__ = [
    "WINDOW",
    "HopsSeen",
    "PortableSpec",
    "Unit",
    "UnitResult",
    "checks_named",
    "judge_unit",
    "plan_units",
]

WINDOW = 2_000
"""Exchanges judged per window of a capture: the memory a capture of any length needs."""
SHARE_BYTES = 8_000_000
"""The least a share of a recording is given (about three windows of typical traffic): below it, reading the
recording once more costs more than the judging it spreads."""


class HopsSeen(Exception):  # noqa: N818 (a signal, not an error: the caller judges the hops together)
    """A unit's recording crossed a gateway's hops: who is at fault for a failure on one hop depends on the other
    hop's traffic, which a judge of one recording or share cannot see, so such recordings are judged together in
    one process (``mcp-assay validate``'s gateway path)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


@dataclass(frozen=True, slots=True)
class Unit:
    """One recording, or one share of it, to judge on its own."""

    location: str
    """A local path or an fsspec URL."""
    index: int
    """Its recording's place among those judged: where its findings sort, and its notes go, in the report."""
    prefix: str = ""
    """Prepended to its exchange ids (``f3:``), so evidence names the file when several are judged."""
    share: int = 0
    shares: int = 1
    window: int = WINDOW
    size: int = 0


@dataclass(frozen=True, slots=True)
class UnitResult:
    """What judging one unit found: the judge's state before its verdicts, and what the report says of the file
    (given by share 0 of a recording only: every share reads the same file)."""

    unit: Unit
    partial: Partial
    kinds: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    sightings: Sightings = ({}, {})
    notes: list[str] = field(default_factory=list)
    audit: list[AuditLine] = field(default_factory=list)
    audit_total: int = 0
    transports: tuple[str, ...] = ()
    unjudged: str | None = None
    newer: dict[str, str] = field(default_factory=dict)
    """Revisions newer than the schemas' that a server spoke, and how it showed it (:class:`NewerRevisions`)."""
    peak_rss_kib: int = 0
    """The peak resident memory of the process that judged it (its own, and any unit it judged before)."""
    seconds: float = 0.0


def plan_units(recordings: Sequence[Recording], jobs: int, *, window: int = WINDOW) -> list[Unit]:
    """One unit per recording; a recording that is more than its part of the work (its size against the total
    over ``jobs``) is cut into shares, as many as its part calls for (at most ``jobs``, each at least
    :data:`SHARE_BYTES`), so that a few long recordings still keep every core busy."""
    total = sum(item.size for item in recordings) or 1
    per_job = total / max(jobs, 1)
    units: list[Unit] = []
    for index, item in enumerate(recordings):
        prefix = "" if len(recordings) == 1 else f"f{index + 1}:"
        shares = 1
        if jobs > 1 and item.size > per_job / 2:
            shares = max(1, min(jobs, math.ceil(item.size / per_job), item.size // SHARE_BYTES))
        for share in range(shares):
            units.append(Unit(item.location, index, prefix, share, shares, window, item.size // shares))
    return units


@dataclass(frozen=True, slots=True)
class PortableSpec:
    """The loaded schemas as plain data, to build the same :class:`SpecSet` in another process (a cluster's worker
    need not have the schema files: they travel with the work)."""

    revisions: tuple[tuple[str, int, SchemaFile, dict[str, Any], frozenset[str], tuple[str, ...]], ...]
    digest: str

    @classmethod
    def of(cls, spec: SpecSet) -> PortableSpec:
        revisions = tuple(
            (revision.name, revision.ordinal, revision.schema, revision.document, revision.features, revision.errata)
            for revision in spec.all
        )
        digest = hashlib.sha256("|".join(revision.schema.sha256 for revision in spec.all).encode()).hexdigest()
        return cls(revisions, digest)

    def build(self) -> SpecSet:
        """The spec set, built once per process (its validators then compile once, as they are needed)."""
        built = _BUILT.get(self.digest)
        if built is None:
            built = _BUILT[self.digest] = SpecSet([Revision(*fields) for fields in self.revisions])
        return built


_BUILT: dict[str, SpecSet] = {}
"""The spec sets built in this process, by the digest of their schemas."""


def checks_named(names: Sequence[str] | None) -> list[Check] | None:
    """The registered checks of these names (``None``: every check), in any process."""
    if names is None:
        return None
    registered_checks()  # importing the rules registers them
    return [REGISTRY[name] for name in names]


def judge_unit(unit: Unit, spec: SpecSet, checks: list[Check] | None) -> UnitResult:
    """Judge one unit: read its recording, judge its share of the windows, and return what was found."""
    started = time.perf_counter()
    first = unit.share == 0
    inputs = Inputs()
    trail = AuditTrail()
    watch = CaptureWatch.newest(spec.newest.name)
    judge = Judge(
        spec,
        checks=checks,
        source=Source.PASSIVE,
        window=unit.window,
        on_window=trail.take if first else None,
        share=(unit.share, unit.shares),
    )
    with local_copy(unit.location) as path, judging_collections():
        for exchange in stream_input(path, READERS, inputs, prefix=unit.prefix):
            if exchange.hop is not None:
                raise HopsSeen(unit.location)
            if first:
                watch.see(exchange)
            judge.add(exchange)
    partial = judge.partial(recording=unit.index)
    if first:
        trail.take(judge.log, judge.carried_ids)
    shown = unit.location
    return UnitResult(
        unit=unit,
        partial=partial,
        kinds=inputs.kinds,
        problems=[problem.replace(f"{path.name}: ", f"{_name(shown)}: ", 1) for problem in inputs.problems],
        sightings=watch.signs.sightings() if first else ({}, {}),
        notes=watch.notes.notes(),
        audit=list(trail.lines),
        audit_total=trail.total,
        transports=tuple(sorted(watch.transports)),
        unjudged=watch.presence.unjudged() if first else None,
        newer=watch.newer.found if first else {},
        peak_rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        seconds=time.perf_counter() - started,
    )


def _name(location: str) -> str:
    """The file name a location ends in (what the report's notes about a file start with)."""
    return location.rstrip("/").rsplit("/", 1)[-1]
