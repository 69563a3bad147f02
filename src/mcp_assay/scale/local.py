"""Judging units on every core of this machine: a pool of processes from the standard library.

Judging is Python work, so threads would share one interpreter lock; each unit runs in a process of
a :class:`concurrent.futures.ProcessPoolExecutor`. The processes are forked from a *forkserver* that
imported mcp-assay once (a fork of the command itself could inherit a lock some thread held), and
each builds the schemas once from the parent's (:class:`~mcp_assay.scale.units.PortableSpec`). The
longest units start first, so the last to finish is a short one. One job, or one unit, runs here in
this process, with no pool at all.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

from mcp_assay.scale.units import PortableSpec, Unit, UnitResult, checks_named, judge_unit
from mcp_assay.spec.checks import Check
from mcp_assay.spec.revisions import SpecSet

__all__ = ["cores", "judge_here"]


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_PORTABLE: list[tuple[PortableSpec, tuple[str, ...] | None]] = []
"""In a pool's process: the schemas and the names of the checks to judge with (set once, as it starts)."""


def _start(portable: PortableSpec, names: tuple[str, ...] | None) -> None:
    _PORTABLE.append((portable, names))


def _judge(unit: Unit) -> UnitResult:
    portable, names = _PORTABLE[-1]
    return judge_unit(unit, portable.build(), checks_named(names))


def judge_here(units: Sequence[Unit], spec: SpecSet, checks: list[Check] | None, jobs: int) -> Iterator[UnitResult]:
    """Every unit's result as it is ready, judged in up to ``jobs`` processes (in this one for a single job or
    unit)."""
    if jobs <= 1 or len(units) <= 1:
        for unit in units:
            yield judge_unit(unit, spec, checks)
        return
    names = tuple(check.name for check in checks) if checks is not None else None
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["mcp_assay.scale.units"])
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(units)),
        mp_context=context,
        initializer=_start,
        initargs=(PortableSpec.of(spec), names),
    ) as pool:
        longest_first = sorted(units, key=lambda unit: -unit.size)
        futures = [pool.submit(_judge, unit) for unit in longest_first]
        try:
            for future in as_completed(futures):
                yield future.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # one unit failed: the report cannot be whole
            raise
