"""Lines to the judging worker's stdin, written by the thread that makes them, in batches, never blocking it.

The proxy and the stdio tap hand every record to the judging worker (:mod:`mcp_assay.addon.worker`) as one
line of JSON on its stdin. Who writes those lines matters more than what they cost: at saturation, a writer
thread that took the records, wrote them as JSON and sent them cost mitmproxy 5 to 7% of its throughput, against
1 to 2% when mitmproxy's own thread wrote the same lines (an A/B of the two at 400 to 500 requests a second,
docs/performance.md). Writing a record as JSON takes about 1.5 µs; what cost more was the second thread taking
the interpreter lock from mitmproxy's event loop for every batch.

So the thread that feeds a record writes it as its line at once, and sends the batch itself once
:data:`BATCH_RECORDS` lines have gathered, with a write that never blocks (the pipe is non-blocking: a full
pipe takes part of a batch or none of it, and the rest waits its turn). A thread of our own is still needed,
but only for three things the feeding thread cannot do without waiting: it sends a batch that did not fill
before a quiet spell (after :data:`BATCH_DELAY` seconds, so that a live finding is not held back), it sends
what a full pipe refused once the pipe drains, and it sends the rest at the end of input. Under steady
traffic that thread seldom has anything to send.
"""

from __future__ import annotations

import logging
import os
import select
import threading
from typing import IO, Final

__all__ = ["BATCH_DELAY", "BATCH_RECORDS", "LineFeeder"]

log = logging.getLogger("mcp_assay.worker")

BATCH_DELAY: Final = 0.02
"""Seconds a batch that has not filled waits for more lines before the feeder's thread sends it."""
BATCH_RECORDS: Final = 64
"""Lines that make a batch worth sending at once, by the thread that fed the last of them."""
_DRAIN_WAIT: Final = 0.1
"""Seconds the feeder's thread waits at most for a full pipe to take more, before it looks again."""


class LineFeeder:
    """Sends lines to a pipe in order, in batches; :meth:`feed` never blocks and never raises.

    Thread-safe: lines fed from several threads go in the order they were fed. Once the pipe breaks (the
    reader went away) every line fed is counted in :attr:`dropped` instead."""

    def __init__(
        self, pipe: IO[bytes], first: bytes = b"", *, batch_delay: float = BATCH_DELAY, name: str = "mcp-assay-feed"
    ) -> None:
        """``pipe``: the write end, written through its descriptor and closed at the end of input (the feeder owns
        it from now on). ``first``: a line written at once, before any other and while the pipe still blocks (the
        worker's settings: a fresh pipe has room for them)."""
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
        self._lock = threading.Lock()
        self._lines: list[bytes] = []
        self._unsent = b""
        """Bytes of a batch the pipe refused (it was full): they go before any line fed since."""
        self._sent_batches = 0
        """Batches sent so far: the thread leaves a batch to the feeding thread while it keeps sending."""
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def feed(self, line: bytes) -> None:
        """Queue a line (with its newline); send the batch now if it is full and the pipe has room."""
        with self._lock:
            if self._closing:
                return
            if self.broken:
                self.dropped += 1
                return
            lines = self._lines
            lines.append(line)
            if len(lines) >= BATCH_RECORDS and not self._unsent:
                self._send()
            elif len(lines) == 1 and not self._wake.is_set():
                self._wake.set()  # the first line of a batch: the thread sends it after a quiet spell

    def waiting(self) -> int:
        """Lines and refused bytes not yet in the pipe (a line refused in part counts as one)."""
        with self._lock:
            return len(self._lines) + (1 if self._unsent else 0)

    def end(self) -> None:
        """The end of input: the thread sends every line fed, as fast as the reader takes them, then closes the
        pipe (:meth:`join` waits for that). Lines fed after this are not sent."""
        with self._lock:
            self._closing = True
        self._stop.set()
        self._wake.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    # -- the thread ------------------------------------------------------------------------------------
    def _send(self) -> None:
        """Write what is queued (the lock is held) as far as the pipe takes it without blocking."""
        data = self._unsent + b"".join(self._lines) if self._unsent else b"".join(self._lines)
        self._lines.clear()
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

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if not self._closing:
                with self._lock:
                    seen = self._sent_batches
                self._pause(self.batch_delay)
                with self._lock:
                    if self._sent_batches != seen and not self._unsent and not self._closing:
                        continue  # the feeding thread keeps sending: what it queued goes with its next batch
            with self._lock:
                self._wake.clear()
                if self._lines or self._unsent:
                    self._send()
            self._drain()
            if self._closing:
                self._finish()
                return

    def _pause(self, seconds: float) -> None:
        """Rest while a batch gathers, unless the input ends."""
        self._stop.wait(seconds)

    def _drain(self) -> None:
        """Send what a full pipe refused, as it takes more (the feeding thread leaves it to this thread)."""
        while True:
            with self._lock:
                if not self._unsent or self.broken:
                    return
            try:
                select.select([], [self._fd], [], _DRAIN_WAIT)
            except (OSError, ValueError):
                with self._lock:
                    self._break()
                return
            with self._lock:
                if self._unsent:
                    self._send()

    def _finish(self) -> None:
        """The end of input: send every line still queued, then close the pipe."""
        with self._lock:
            if (self._lines or self._unsent) and not self.broken:
                self._send()
        self._drain()
        try:
            self._pipe.close()
        except OSError:
            pass
