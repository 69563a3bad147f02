"""How often a judging process asks Python's cyclic garbage collector for a full pass, and what it walks then.

A judge drops each window when the next one starts, and nothing of a window is held in a
reference cycle (tests/scale/test_cycles.py keeps it so), so a window's traffic goes the moment
it is dropped, by reference counting. The collector's passes then find nothing, yet they cost: at the
interpreter's default thresholds its full passes, which walk every live object, ran about once per
70,000 objects made and took a fifth of a long ``validate``. A young pass walks every container made
since the last one that is still alive, and judging makes most of its objects for a moment (a lookup's
tuple, a rule's list): the rarer the young passes, the more of those are gone before any pass sees
them. At one young pass per 100,000 objects made (a middle one per 20 of those, a full one per 10
middle ones), the collector took 0.2 CPU seconds of a 100,000-message ``validate``, against 1.1 to 1.7
at one per 10,000, for 5 MB more memory: memory stays bounded (a cycle some rule makes later is still
collected by a later pass), and the time goes to judging.

A full pass walks every object alive, and mcp-assay loaded is a large heap that lives as long as the
process: the revisions' schemas and their compiled validators, a few hundred rules, the modules. In
mitmproxy's process, which makes objects at a great rate as it forwards, that heap made each full
pass about 75 ms and the collector's work per forwarded request twice what it was without it. A
process that runs one session to its end (the proxy's, its judging worker) sets that heap aside once
it is loaded, so that no pass walks it again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["JUDGING_THRESHOLDS", "judging_collections", "set_aside_what_is_loaded"]

JUDGING_THRESHOLDS = (100_000, 20, 10)
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


def set_aside_what_is_loaded() -> None:
    """Keep every object alive now out of the collector's passes for the rest of the process (see the module).

    For a process that runs one session to its end, once what it needs is loaded: never a library call, since
    what is set aside is never collected."""
    gc.collect()
    gc.freeze()
