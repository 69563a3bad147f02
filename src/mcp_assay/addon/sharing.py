"""How the judging worker shares the machine with the traffic it judges.

On a small machine the client, the server, mitmproxy and the worker take turns on the same cores,
and a worker judging at the proxy's priority delays the forwarding, and at saturation lowers how many
requests a second the proxy forwards (docs/performance.md has the figures). So while traffic flows the
worker's judging thread yields: it runs under ``SCHED_IDLE``, taking only CPU time nobody else wants,
and the proxy's latency and throughput stay the proxy's own. It never takes more while the traffic
flows, however far behind it falls: what it may hold is bounded by the backlog instead
(:mod:`mcp_assay.addon.backlog`), which leaves what judging cannot reach to ``mcp-assay validate`` of
the recording. Once the traffic ends (the parent says so as it closes the input, asks it to hurry, or
dies) it judges at its ordinary share for good, so the report comes as soon as it can.

Leaving ``SCHED_IDLE`` needs ``CAP_SYS_NICE`` or a ``RLIMIT_NICE`` of 20, which a thread tries first
(on itself, so nothing is stuck if it is refused). Without either, the worker uses ``SCHED_BATCH``
instead, which any process may leave: it keeps its fair share but never preempts a task that is
running (the forwarding) when records wake it. Where the system has neither policy, nothing changes.
"""

from __future__ import annotations

import os
import threading

__all__ = ["Sharing"]


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

    def take_this_thread(self) -> None:
        """From now on the scheduling is that of the calling thread (the judging thread, once started), which
        starts by yielding."""
        with self._lock:
            self._thread = threading.get_native_id()
        self.yield_to_traffic()

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
