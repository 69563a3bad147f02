"""Split a byte stream into lines with bounded memory and constant work per read.

A peer's stderr is not protocol traffic, and nothing bounds it: a server may write hundreds of
megabytes, or one endless line with no newline at all. Joining what was read so far and splitting
it again on every read costs time quadratic in the line and memory equal to it, which throttles
the very server being watched. :class:`LineSplitter` looks for newlines only in the chunk just
read and keeps at most ``limit`` bytes of the line in progress, counting the rest.

The relays (the tap, the pytest fixture's readers) read their pipes with :func:`lines_until_closed`,
so a pipe that fails or is closed under a reading thread ends that thread instead of killing it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Line", "LineSplitter", "Readable", "lines_until_closed"]


class Readable(Protocol):
    """What a relay reads lines from: a pipe's file object, or the tap's own stdin."""

    def readline(self) -> bytes: ...


def lines_until_closed(stream: Readable) -> Iterator[bytes]:
    """A relay's lines: ``stream``'s lines until it ends, or fails or is closed under the reader (which
    another thread may do at any moment); either way the reading thread ends quietly."""
    while True:
        try:
            line = stream.readline()
        except (OSError, ValueError):
            return
        if not line:
            return
        yield line


@dataclass(frozen=True, slots=True)
class Line:
    """One line without its newline: its first ``limit`` bytes, and how many bytes after them were dropped."""

    kept: bytes
    dropped: int = 0

    def text(self) -> str:
        """The kept bytes as text (invalid UTF-8 replaced, a trailing ``\\r`` removed), ``…`` when cut."""
        text = self.kept.decode("utf-8", "replace").rstrip("\r")
        return text + "…" if self.dropped else text


class LineSplitter:
    """Feed chunks as they are read; get back the lines they completed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """Bytes of one line that are kept."""
        self._partial = bytearray()
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[Line]:
        lines: list[Line] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._keep(chunk, start, end)
            lines.append(self._take())
            start = end + 1
        self._keep(chunk, start, len(chunk))
        return lines

    def close(self) -> Line | None:
        """The last line, if the stream ended without a newline."""
        return self._take() if self._partial or self._dropped else None

    def _keep(self, chunk: bytes, start: int, end: int) -> None:
        room = max(self.limit - len(self._partial), 0)
        take = min(room, end - start)
        if take:
            self._partial += chunk[start : start + take]
        self._dropped += end - start - take

    def _take(self) -> Line:
        line = Line(bytes(self._partial), self._dropped)
        self._partial.clear()
        self._dropped = 0
        return line
