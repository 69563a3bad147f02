"""A dropped window goes at once: nothing of it is held in a reference cycle.

Judging asks the garbage collector for full passes rarely (spec/collector.py), which is safe only
while a window's traffic dies by reference counting the moment the judge drops it. A view or a
rule that kept its window in a cycle (a view holding the context that caches it, an index and
its parts pointing at each other) would leave every exchange of every window to the next full
pass: these tests judge the recorded sessions in small windows and fail on any object of
mcp-assay found in cyclic garbage.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.collector import JUDGING_THRESHOLDS, judging_collections
from mcp_assay.spec.engine import Judge
from tests.scale.growth import traffic


@pytest.fixture
def saved_garbage() -> Iterator[list[object]]:
    """What the collector finds unreachable while the test runs (kept for inspection, not freed)."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()


def _ours(garbage: list[object]) -> Counter[str]:
    return Counter(type(item).__qualname__ for item in garbage if type(item).__module__.startswith("mcp_assay"))


def test_windows_of_the_recorded_sessions_die_without_the_collector(spec: SpecSet, saved_garbage: list[object]) -> None:
    judge = Judge(spec, window=40)
    for exchange in traffic(2):
        judge.add(exchange)
    assert judge.windows >= 10, "the traffic was cut into many windows"
    gc.collect()  # the judge holds its current window: everything found here is of windows it dropped
    assert not _ours(saved_garbage), "objects of mcp-assay were held in reference cycles"
    judge.verdicts()


def test_a_cycle_left_in_a_window_is_found(spec: SpecSet, saved_garbage: list[object]) -> None:
    """The test above can fail: a view that keeps its context, left in place, is found in the garbage."""
    judge = Judge(spec, window=40)
    for exchange in traffic(2):
        judge.add(exchange)
        judge.ctx.view(_KeepsContext)
    assert judge.windows >= 10
    gc.collect()
    assert _ours(saved_garbage)["Context"] >= 1


class _KeepsContext:
    """A view that keeps its context and is in a cycle of its own: it keeps its whole window from being freed
    when the engine drops it (built once per window: it advances as the log grows)."""

    def __init__(self, ctx: object) -> None:
        self.ctx = ctx
        self.self_cycle = self

    def advance(self, ctx: object) -> None:
        pass


def test_judging_collects_rarely_and_restores_the_thresholds() -> None:
    before = gc.get_threshold()
    with judging_collections():
        assert gc.get_threshold() == JUDGING_THRESHOLDS
    assert gc.get_threshold() == before


def test_a_process_sets_aside_what_it_has_loaded_once_and_for_good() -> None:
    """The proxy's process and its worker call this once everything is loaded: what is alive then is never walked
    by a collection again (run in a process of its own: it cannot be undone)."""
    script = (
        "import gc\n"
        "from mcp_assay.spec.collector import set_aside_what_is_loaded\n"
        "import mcp_assay.spec.engine\n"
        "before = gc.get_freeze_count()\n"
        "set_aside_what_is_loaded()\n"
        "assert gc.get_freeze_count() > before + 10_000, (before, gc.get_freeze_count())\n"
        "print('set aside', gc.get_freeze_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("set aside")
