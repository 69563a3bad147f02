"""What the judging worker holds between recording a record and judging it: a bounded backlog.

The worker reads what the proxy (or the tap) sends on one thread and judges it on another. Reading
writes every record to the recording at once, so the recording is whole whatever judging does, and
the reader keeps up with the traffic: the pipe the proxy writes to (:mod:`mcp_assay.addon.feeder`)
seldom fills, and what the proxy holds back stays short. Judging takes records from this backlog while
the traffic flows, yielding the CPU to the forwarding (:mod:`mcp_assay.addon.sharing`); on a machine the
traffic saturates it cannot keep up, and waiting for it would slow the forwarding or let memory grow with
the traffic.

So the backlog is bounded (:data:`BACKLOG_RECORDS` records, :data:`BACKLOG_BYTES` bytes of their text).
When a record would pass the bound, judging *falls behind for good*: from that record on, new exchanges
are recorded but not judged live, while the exchanges judging had begun are still fed to the end
(so every exchange judged is judged whole), and the report says how many were left and that
``mcp-assay validate RECORDING`` judges them all. What was judged is a prefix of the traffic, which
one judge can judge as it would have judged a capture that ended there; resuming after a gap could not
be (a request judged without the initialization before it).

The counts (received, judged, queued, left unjudged) are what :meth:`JudgingBacklog.status` gives;
with ``MCP_ASSAY_WORKER_STATUS`` naming a file, the worker writes them there twice a second (the
saturation benchmark samples them).
"""

from __future__ import annotations

import collections
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

__all__ = ["BACKLOG_BYTES", "BACKLOG_RECORDS", "JudgingBacklog", "Shortfall"]

BACKLOG_RECORDS = 20_000
"""Records recorded but not yet judged that the worker holds at most (seconds of saturating traffic)."""
BACKLOG_BYTES = 64 * 1024 * 1024
"""Bytes of record text recorded but not yet judged that the worker holds at most."""
_EXCHANGE_STARTS = frozenset({"http", "line", "exit"})
"""Record types that begin an exchange (an HTTP exchange's later records carry its ``x``)."""
_STATUS_EVERY = 0.5


class _Judge(Protocol):
    def judge_only(self, record: Mapping[str, Any]) -> None: ...


class Shortfall:
    """What judging left to ``validate``: counted once it fell behind."""

    def __init__(self) -> None:
        self.since: float | None = None
        """When the first exchange left unjudged was captured (its record's ``t``)."""
        self.exchanges = 0
        self.records = 0

    def __bool__(self) -> bool:
        return self.records > 0


class JudgingBacklog:
    """Records handed from the reading thread to the judging thread, bounded (see the module)."""

    def __init__(
        self,
        session: _Judge,
        *,
        records: int = BACKLOG_RECORDS,
        size: int = BACKLOG_BYTES,
        stop: Callable[[], str] = lambda: "",
        started: Callable[[], None] = lambda: None,
        pace: Callable[[float], None] = lambda last_arrival: None,
        delay: float = 0.0,
    ) -> None:
        """``stop`` returning a reason makes the judging thread judge nothing more (the worker was asked to
        hurry); ``started`` runs first on the judging thread (it sets the thread's scheduling); ``pace`` runs on
        it after each record judged, with when the latest record arrived (it may rest:
        :class:`~mcp_assay.addon.sharing.Pace`); ``delay`` (seconds a record, for tests) slows judging."""
        self._session = session
        self.limit_records = records
        self.limit_size = size
        self._stop = stop
        self._started = started
        self._pace = pace
        self._delay = delay
        self._arrived = time.monotonic()
        """When the latest record was offered."""
        self._items: collections.deque[tuple[Mapping[str, Any], int] | None] = collections.deque()
        self._ready = threading.Condition()
        self._size = 0
        self._open: set[str] = set()
        """Exchanges begun in judging whose later records are still to come."""
        self._torn = False
        self.received = 0
        self.judged = 0
        self.unread = 0
        """Records queued that judging skipped because it was told to stop."""
        self.most_queued = 0
        self.shortfall = Shortfall()
        self._thread = threading.Thread(target=self._run, name="mcp-assay-judge", daemon=True)
        self._thread.start()

    # -- the reading thread ----------------------------------------------------------------------------
    def offer(self, record: Mapping[str, Any], size: int) -> bool:
        """Queue a record (already recorded) for judging; False when it is left to ``validate``."""
        self.received += 1
        self._arrived = time.monotonic()
        kind = record.get("type")
        ident = record.get("x")
        continues = kind not in _EXCHANGE_STARTS and isinstance(ident, str) and ident in self._open
        with self._ready:
            queued, held = len(self._items), self._size + size
            if continues:  # an exchange judging began is judged whole, unless memory would double for it
                if queued >= 2 * self.limit_records or held > 2 * self.limit_size:
                    self._leave(record, kind)
                    self._torn = True
                    return False
            elif self.shortfall or queued >= self.limit_records or held > self.limit_size:
                self._leave(record, kind)
                return False
            if kind == "http" and isinstance(ident, str):
                self._open.add(ident)
            elif kind == "end" and isinstance(ident, str):
                self._open.discard(ident)
            self._items.append((record, size))
            self._size += size
            self.most_queued = max(self.most_queued, len(self._items))
            self._ready.notify()
        return True

    def _leave(self, record: Mapping[str, Any], kind: object) -> None:
        shortfall = self.shortfall
        if not shortfall:
            captured = record.get("t")
            shortfall.since = float(captured) if isinstance(captured, int | float) else time.time()
        shortfall.records += 1
        if kind in _EXCHANGE_STARTS:
            shortfall.exchanges += 1

    def torn(self) -> bool:
        """Whether an exchange judging began lost later records (it is then left out of the verdicts)."""
        return self._torn

    def close(self) -> None:
        """The input ended: judge what is queued (unless told to stop), then return."""
        with self._ready:
            self._items.append(None)
            self._ready.notify()
        self._thread.join()

    # -- the judging thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        self._started()
        while True:
            with self._ready:
                while not self._items:
                    self._ready.wait()
                item = self._items.popleft()
                if item is not None:
                    self._size -= item[1]
            if item is None:
                return
            record = item[0]
            if self._stop():
                self.unread += 1
                continue
            if self._delay:
                time.sleep(self._delay)
            self._session.judge_only(record)
            self.judged += 1
            self._pace(self._arrived)

    # -- what it says ----------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "judged": self.judged,
            "queued": len(self._items),
            "most_queued": self.most_queued,
            "unjudged": self.shortfall.exchanges,
            "unjudged_records": self.shortfall.records,
        }

    def write_status_every(self, path: str | os.PathLike[str], alive: Callable[[], bool]) -> None:
        """Write :meth:`status` (JSON) to ``path`` twice a second while ``alive``, on a thread of its own."""
        target = Path(path)

        def loop() -> None:
            while alive():
                self._write_status(target)
                time.sleep(_STATUS_EVERY)
            self._write_status(target)

        threading.Thread(target=loop, name="mcp-assay-status", daemon=True).start()

    def _write_status(self, target: Path) -> None:
        try:
            partial = target.with_name(target.name + ".part")
            partial.write_text(json.dumps(self.status()), encoding="utf-8")
            partial.replace(target)
        except OSError:
            pass
