"""How the judging worker shares the machine with the traffic it judges.

On a small machine the client, the server, mitmproxy and the worker take turns on the same cores,
and a worker judging at the proxy's priority delays the forwarding (docs/performance.md has the
figures). So while traffic flows the worker yields: its judging thread runs under ``SCHED_IDLE``,
taking only CPU time nobody else wants, and the proxy's latency stays the proxy's own. A worker
left with idle time only could fall behind without bound, so yielding has a bounded delay:

* when the last record it judged was captured more than :data:`IDLE_LAG` seconds ago while more
  wait in its input, it takes its ordinary share (``SCHED_OTHER``) until it has caught up to within
  :data:`RESUME_LAG` seconds, then yields again; so its backlog, and the memory holding it, stay
  what :data:`IDLE_LAG` seconds of traffic need;
* once the traffic ends (the parent says so as it closes the input, asks it to hurry, or dies) it
  judges at its ordinary share for good, so the report comes as soon as it did before.

Leaving ``SCHED_IDLE`` needs ``CAP_SYS_NICE`` or a ``RLIMIT_NICE`` of 20, which a thread tries first
(on itself, so nothing is stuck if it is refused). Without either, the worker uses ``SCHED_BATCH``
instead, which any process may leave: it keeps its fair share but never preempts a task that is
running (the forwarding) when records wake it. Where the system has neither policy, nothing changes.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Final

__all__ = ["IDLE_LAG", "RESUME_LAG", "Sharing"]

IDLE_LAG: Final = 1.0
"""Seconds the worker may fall behind the traffic while it yields."""
RESUME_LAG: Final = 0.25
"""Seconds behind the traffic at which a worker that took its ordinary share yields again."""


def _set(thread: int, policy: int) -> bool:
    try:
        os.sched_setscheduler(thread, policy, os.sched_param(0))
    except (AttributeError, OSError):
        return False
    return True


def _idle_can_be_left() -> bool:
    """Whether this process may move a thread from ``SCHED_IDLE`` back to ``SCHED_OTHER`` (tried on a
    throwaway thread)."""
    found: list[bool] = []

    def attempt() -> None:
        found.append(_set(0, os.SCHED_IDLE) and _set(0, os.SCHED_OTHER))

    if not hasattr(os, "SCHED_IDLE"):
        return False
    probe = threading.Thread(target=attempt, name="mcp-assay-scheduling-probe", daemon=True)
    probe.start()
    probe.join()
    return found == [True]


class Sharing:
    """The scheduling of one thread (the one that creates it: the worker's judging thread)."""

    def __init__(self) -> None:
        self._thread = threading.get_native_id()
        self._lock = threading.Lock()
        self.yielding_policy: int | None = None
        """``SCHED_IDLE``, ``SCHED_BATCH`` or ``None`` (the system offers neither)."""
        if _idle_can_be_left():
            self.yielding_policy = os.SCHED_IDLE
        elif hasattr(os, "SCHED_BATCH"):
            self.yielding_policy = os.SCHED_BATCH
        self.yielding = False
        self.ended = False
        self.judged_capture = time.time()
        """When the last record judged was captured (wall clock, as records say)."""

    def yield_to_traffic(self) -> None:
        with self._lock:
            if not self.ended and not self.yielding and self.yielding_policy is not None:
                self.yielding = _set(self._thread, self.yielding_policy)

    def ordinary(self, *, for_good: bool = False) -> None:
        """Take the ordinary share (``for_good``: the traffic ended, never yield again)."""
        with self._lock:
            self.ended = self.ended or for_good
            if self.yielding and hasattr(os, "SCHED_OTHER"):
                self.yielding = not _set(self._thread, os.SCHED_OTHER)

    def judged(self, captured: object) -> None:
        """The judging thread judged a record captured at ``captured``: yield again once caught up."""
        if isinstance(captured, float | int) and not isinstance(captured, bool):
            self.judged_capture = float(captured)
            if not self.yielding and not self.ended and time.time() - self.judged_capture < RESUME_LAG:
                self.yield_to_traffic()

    def watch(self, backlog: bool) -> None:
        """Called every fraction of a second by another thread: take the ordinary share when yielding has let
        the judging fall :data:`IDLE_LAG` seconds behind while ``backlog`` says records wait."""
        if self.yielding and backlog and time.time() - self.judged_capture > IDLE_LAG:
            self.ordinary()
