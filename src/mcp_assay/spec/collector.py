"""How often a judging process asks Python's cyclic garbage collector for a full pass.

A judge drops each window when the next one starts, and nothing of a window is held in a
reference cycle (tests/scale/test_cycles.py keeps it so), so a window's traffic goes the moment
it is dropped, by reference counting. The collector's full passes, which walk every live object,
then find nothing, yet at the interpreter's default thresholds they ran about once per 70,000
objects made and took a fifth of a long ``validate``. Judging asks for them about once per million
objects made instead: memory stays bounded (a cycle some rule makes later is still collected),
and the time goes to judging.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["JUDGING_THRESHOLDS", "judging_collections"]

JUDGING_THRESHOLDS = (10_000, 10, 10)
"""Objects made before a young pass, young passes before a middle one, middle passes before a full one."""


@contextmanager
def judging_collections() -> Iterator[None]:
    """Collect garbage at :data:`JUDGING_THRESHOLDS` while judging, then as before."""
    before = gc.get_threshold()
    gc.set_threshold(*JUDGING_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
