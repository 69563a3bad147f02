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

A yielding policy is not enough on a small machine: judging on the spare core still slows the
forwarding, since the peers need that core too, and the two cores of a small virtual machine may be
hyperthreads of one physical core. So while the traffic flows judging also keeps to a budget (:class:`Pace`): at most
:data:`TRAFFIC_SHARE` of one core's time, measured on its own thread. Traffic of a few hundred requests
a second needs less than that, and is judged live as before; traffic that saturates the proxy leaves
judging behind, and the backlog's bound decides what ``validate`` judges later. A quiet spell of
:data:`FLOWING_S` lifts the budget, so judging catches up between bursts.

Leaving ``SCHED_IDLE`` needs ``CAP_SYS_NICE`` or a ``RLIMIT_NICE`` of 20, which a thread tries first
(on itself, so nothing is stuck if it is refused). Without either, the worker uses ``SCHED_BATCH``
instead, which any process may leave: it keeps its fair share but never preempts a task that is
running (the forwarding) when records wake it. Where the system has neither policy, nothing changes.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

__all__ = ["FLOWING_S", "TRAFFIC_SHARE", "Pace", "Sharing"]

TRAFFIC_SHARE = 0.1
"""The most of one core's time the judging thread takes while the traffic flows (see the module)."""
FLOWING_S = 0.25
"""Seconds since the last record after which the traffic counts as paused (judging catches up then)."""
_WINDOW_S = 1.0
"""Judging's time is counted over windows this long: a debt older than that is forgiven."""
_LONGEST_REST_S = 0.1
"""The longest one rest lasts, so that the end of the traffic is noticed soon."""


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


class Pace:
    """Keeps the judging thread to :data:`TRAFFIC_SHARE` of a core while the traffic flows (see the module).

    :meth:`after_record` runs on the judging thread after each record it judged: it rests as long as the
    thread's CPU time in the current window is ahead of its share of the window's wall-clock time. The
    clocks are parameters so that a test can drive them."""

    def __init__(
        self,
        ended: Callable[[], bool],
        *,
        share: float = TRAFFIC_SHARE,
        wall: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.thread_time,
        rest: Callable[[float], None] = time.sleep,
    ) -> None:
        self._ended = ended
        self.share = share
        self._wall, self._cpu, self._rest = wall, cpu, rest
        self._window: tuple[float, float] | None = None
        """When the current window began: wall-clock time and the thread's CPU time."""
        self.rested = 0.0
        """Seconds judging rested to keep to its share."""

    def after_record(self, last_arrival: float) -> None:
        """``last_arrival``: when (``time.monotonic``) the latest record reached the worker."""
        now = self._wall()
        if self._ended() or now - last_arrival > FLOWING_S:
            self._window = None  # paused or over: no budget, and a fresh window when it flows again
            return
        if self._window is None or now - self._window[0] > _WINDOW_S:
            self._window = (now, self._cpu())
            return
        began, spent = self._window
        owed = (self._cpu() - spent) / self.share - (now - began)
        if owed > 0:
            pause = min(owed, _LONGEST_REST_S)
            self._rest(pause)
            self.rested += pause
