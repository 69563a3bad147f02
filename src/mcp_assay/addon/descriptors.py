"""The stdio tap's own standard streams, read and written on their file descriptors.

The tap relays its stdin, stdout and stderr from threads, and a relay thread may stay blocked in one
of them for good: the client holds stdin open after the server died, or nobody drains stdout. Through
``sys.stdin.buffer`` and friends, such a thread holds the buffered object's lock while it waits, and
the interpreter flushes and closes exactly those objects when it exits: it then cannot take the lock
and aborts ("Fatal Python error: _enter_buffered_busy ... possibly due to daemon threads", status
134) after the report was written and instead of the server's exit code. A :class:`Descriptor` calls
``os.read`` and ``os.write`` itself, holds no lock the interpreter knows of, and so a relay blocked
in it costs nothing at exit.
"""

from __future__ import annotations

import os

__all__ = ["READ_SIZE", "Descriptor", "standard_streams"]

READ_SIZE = 65536
"""Bytes asked of the descriptor per read."""


class Descriptor:
    """One standard stream of this process: ``readline`` for input, ``write`` for output, unbuffered."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = bytearray()
        self._start = 0
        """Where the next line starts in ``_pending``."""
        self._scanned = 0
        """How far ``_pending`` is known to hold no newline (each byte is searched once)."""
        self.closed = False

    def readline(self) -> bytes:
        """The next line with its newline; at end of input what is left (``b""``: nothing)."""
        while True:
            end = self._pending.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._pending[self._start : end + 1])
                self._start = self._scanned = end + 1
                return line
            if self._start:
                del self._pending[: self._start]
                self._start = 0
            self._scanned = len(self._pending)
            chunk = os.read(self.fd, READ_SIZE)
            if not chunk:
                line = bytes(self._pending)
                self._pending.clear()
                self._scanned = 0
                return line
            self._pending += chunk

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]
        return len(data)

    def flush(self) -> None:
        """Nothing is buffered here."""

    def close(self) -> None:
        """End this stream for the peer at the other end (it reads end of file) while keeping its descriptor
        number taken: ``/dev/null`` takes its place, so no file opened later lands on it by accident."""
        if self.closed:
            return
        self.closed = True
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, self.fd)
        finally:
            os.close(null)


def standard_streams() -> tuple[Descriptor, Descriptor, Descriptor]:
    """This process's stdin, stdout and stderr as :class:`Descriptor` objects."""
    return Descriptor(0), Descriptor(1), Descriptor(2)
