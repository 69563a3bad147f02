"""Records to the judging worker's stdin, written by the thread that feeds them, in batches, never blocking it.

The proxy and the stdio tap hand every record to the judging worker (:mod:`mcp_assay.addon.worker`) as one
line of JSON on its stdin. Who writes those lines matters more than what they cost: at saturation, a writer
thread that took the records, wrote them as JSON and sent them cost mitmproxy 5 to 7% of its throughput, against
1 to 2% when mitmproxy's own thread wrote the same lines (an A/B of the two at 400 to 500 requests a second,
docs/performance.md). What cost more than the writing was the second thread taking the interpreter lock from
mitmproxy's event loop for every batch.

So the thread that feeds a record queues it, and once :data:`BATCH_RECORDS` have gathered it writes them as
lines in one call (a small record costs a quarter of what it costs written alone) and sends the batch itself,
with a write that never blocks (the pipe is non-blocking: a full pipe takes part of a batch or none of it, and
the rest waits its turn). A thread of our own is still needed, but only for three things the feeding thread
cannot do without waiting: it sends a batch that did not fill before a quiet spell (after :data:`BATCH_DELAY`
seconds, so that a live finding is not held back), it sends what a full pipe refused once the pipe drains, and
it sends the rest at the end of input. Under steady traffic that thread seldom has anything to send.

A fed record is written when its batch goes, not when it is fed: whoever feeds one leaves it unchanged after.
"""

from __future__ import annotations

import collections
import logging
import os
import select
import threading
from collections.abc import Callable, Sequence
from typing import IO, Final

__all__ = ["BATCH_DELAY", "BATCH_RECORDS", "LineFeeder"]

log = logging.getLogger("mcp_assay.worker")


BATCH_DELAY: Final = 0.02
"""Seconds a batch that has not filled waits for more lines before the feeder's thread sends it."""
BATCH_RECORDS: Final = 64
"""Records that make a batch worth sending at once, by the thread that fed the last of them."""
_DRAIN_WAIT: Final = 0.1
"""Seconds the feeder's thread waits at most for a full pipe to take more, before it looks again."""


class LineFeeder[Item]:
    """Sends items to a pipe as lines, in order, in batches; :meth:`feed` never blocks and never raises.

    Items fed from several threads go in the order they were fed. Feeding takes no lock that another thread may
    hold (a thread holding a lock can lose the interpreter lock, and the proxy's thread would wait for both): an
    item goes on a deque, and whoever sends takes the right to send without waiting for it, or leaves the batch
    to the one sending. Once the pipe breaks (the reader went away) every item fed is counted in
    :attr:`dropped` instead."""

    def __init__(
        self,
        pipe: IO[bytes],
        lines_of: Callable[[Sequence[Item]], bytes],
        first: bytes = b"",
        *,
        batch_delay: float = BATCH_DELAY,
        name: str = "mcp-assay-feed",
    ) -> None:
        """``pipe``: the write end, written through its descriptor and closed at the end of input (the feeder owns
        it from now on). ``lines_of``: a batch of items as their lines, each with its newline (it drops an item it
        cannot write; should it raise, the batch is lost and said once). ``first``: a line written at once, before
        any other and while the pipe still blocks (the worker's settings: a fresh pipe has room for them)."""
        self._pipe = pipe
        self._fd = fd = pipe.fileno()
        self.broken = False
        self.dropped = 0
        """Lines not sent because the pipe had broken."""
        try:
            while first:
                first = first[os.write(fd, first) :]
            os.set_blocking(fd, False)
        except OSError:
            self.broken = True
        self.batch_delay = batch_delay
        self._lines_of = lines_of
        self._lost = 0
        """Batches ``lines_of`` could not write."""
        self._lines: collections.deque[Item] = collections.deque()
        self._sending = threading.Lock()
        """Held by whoever writes to the pipe; the feeding thread only ever tries it."""
        self._unsent = b""
        """Bytes of a batch the pipe refused (it was full): they go before any line fed since (sender only)."""
        self._sent_batches = 0
        """Batches sent so far: the thread leaves the lines to the feeding thread while it keeps sending."""
        self._asleep = False
        """The thread waits for a line (after a quiet spell): the next line fed wakes it."""
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._closing = False
        self._shut = False
        """The pipe is closed (under :attr:`_sending`): its descriptor may already name another file."""
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def feed(self, item: Item) -> None:
        """Queue an item; send the batch now if it is full and nobody else is sending."""
        if self._closing:
            return
        if self.broken:
            self.dropped += 1
            return
        lines = self._lines
        lines.append(item)
        if len(lines) >= BATCH_RECORDS and not self._unsent and self._sending.acquire(blocking=False):
            try:
                self._send()
            finally:
                self._sending.release()
        elif self._asleep:  # the first item after a quiet spell: the thread sends it if no batch fills
            self._asleep = False  # once: setting the event for every item until the thread runs costs a lock each
            self._wake.set()

    def waiting(self) -> int:
        """Items and refused bytes not yet in the pipe (a batch refused in part counts as one)."""
        return len(self._lines) + (1 if self._unsent else 0)

    def end(self) -> None:
        """The end of input: the thread sends every item fed, as fast as the reader takes them, then closes the
        pipe (:meth:`join` waits for that). Items fed after this are not sent."""
        self._closing = True
        self._stop.set()
        self._wake.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    # -- sending ---------------------------------------------------------------------------------------
    def _send(self) -> None:
        """Write what is queued as far as the pipe takes it without blocking (:attr:`_sending` is held)."""
        if self._shut:
            return
        lines = self._lines
        batch = [lines.popleft() for _ in range(len(lines))]
        try:
            text = self._lines_of(batch) if batch else b""
        except Exception:
            text = b""
            self._lost += 1
            if self._lost == 1:
                log.exception("mcp-assay: %d record(s) could not be written for the judging worker", len(batch))
        data = self._unsent + text if self._unsent else text
        self._sent_batches += 1
        try:
            written = os.write(self._fd, data)
        except BlockingIOError:
            written = 0
        except OSError:
            self._break()
            return
        self._unsent = data[written:]

    def _break(self) -> None:
        if not self.broken:
            self.broken = True
            log.warning("mcp-assay: the judging process went away; traffic keeps flowing unjudged")
        self._unsent = b""
        self._lines.clear()

    # -- the thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._closing:
            if not self._lines and not self._unsent:
                self._wake.clear()
                self._asleep = True
                if not self._lines and not self._closing:
                    self._wake.wait()
                self._asleep = False
            seen = self._sent_batches
            self._stop.wait(self.batch_delay)  # a batch gathers, or the feeding thread sends it
            if self._sent_batches != seen and not self._unsent:
                continue  # the traffic keeps sending: what is left goes with its next batch
            self._send_all(wait=False)
        self._send_all(wait=True)
        with self._sending:  # a feeding thread that passed its check of the end before it came sends nothing now
            self._shut = True
            try:
                self._pipe.close()
            except OSError:
                pass

    def _send_all(self, *, wait: bool) -> None:
        """Send what is queued; what a full pipe refused, as it drains (``wait``: everything, else only what was
        refused, so that the lines fed meanwhile are left to the feeding thread's batches)."""
        with self._sending:
            if not self.broken and (self._lines or self._unsent):
                self._send()
        while not self.broken and (self._unsent or (wait and self._lines)):
            try:
                select.select([], [self._fd], [], _DRAIN_WAIT)
            except (OSError, ValueError):
                self._break()
                return
            with self._sending:
                if not self.broken:
                    self._send()
