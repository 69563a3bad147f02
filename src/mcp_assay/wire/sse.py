"""Incremental ``text/event-stream`` parsing that sees events as they arrive.

mitmproxy hands the addon network chunks, and a chunk boundary is not an event boundary: a line
may be split anywhere, even between the ``\\r`` and ``\\n`` of one line ending. The parser follows
the WHATWG event-stream rules (``\\r\\n``, ``\\n`` and ``\\r`` endings, ``:`` comments, ``id``,
``event``, ``retry`` and ``data`` fields, one optional leading space stripped) and reports every
block, including the empty-data priming events that carry only an id, because those are facts a
conformance check needs.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SseEvent", "SseParser", "parse_sse"]

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True, kw_only=True)
class SseEvent:
    """One dispatched block of an event stream, or one comment line."""

    time: float
    data: str | None = None
    """The joined ``data`` lines; ``None`` when the block had no data field at all."""
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comment: str | None = None
    """Set (and nothing else) for a ``:`` comment line such as a keep-alive ``: ping``."""
    incomplete: bool = False
    """The stream ended before the blank line that dispatches this block."""

    @property
    def is_comment(self) -> bool:
        return self.comment is not None

    @property
    def carries_message(self) -> bool:
        """True when the block has non-empty data, i.e. a JSON-RPC message should be in it."""
        return self.data is not None and self.data.strip() != ""


class SseParser:
    """Feed bytes as they arrive; completed events go to ``on_event`` immediately."""

    def __init__(self, on_event: Callable[[SseEvent], None]) -> None:
        self._on_event = on_event
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending: list[str] = []
        """Pieces of the line in progress (joined once, when its end arrives)."""
        self._skip_lf = False
        self._started = False
        self._data: list[str] | None = None
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._fields_seen = False
        self.decoding_errors = False

    def feed(self, chunk: bytes, time: float) -> None:
        """Consume one network chunk; an empty chunk means the stream ended.

        Work is proportional to the chunk: line ends are searched in the new text only, and a line
        split across chunks is joined once, when its end arrives."""
        if not chunk:
            self.close(time)
            return
        text = self._decoder.decode(chunk)
        if "\ufffd" in text:
            self.decoding_errors = True
        if not self._started and text:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        self._scan(text, time)

    def close(self, time: float) -> None:
        """End of stream: a block without its terminating blank line is reported as incomplete."""
        self._scan(self._decoder.decode(b"", final=True), time)
        if self._pending:
            # a final line without a terminator still counts as a field line of the open block
            self._line("".join(self._pending), time)
            self._pending.clear()
        if self._fields_seen:
            self._dispatch(time, incomplete=True)

    def _scan(self, text: str, time: float) -> None:
        if self._skip_lf and text:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        start = 0
        for end in _LINE_END.finditer(text):
            piece = text[start : end.start()]
            if self._pending:
                self._pending.append(piece)
                piece = "".join(self._pending)
                self._pending.clear()
            self._line(piece, time)
            start = end.end()
            # a \r ending the chunk may be the first half of a \r\n split across chunks
            self._skip_lf = end.group() == "\r" and start == len(text)
        if start < len(text):
            self._pending.append(text[start:])

    def _line(self, line: str, time: float) -> None:
        if line == "":
            if self._fields_seen:
                self._dispatch(time, incomplete=False)
            return
        if line.startswith(":"):
            self._on_event(SseEvent(time=time, comment=line[1:].removeprefix(" ")))
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        self._fields_seen = True
        if name == "data":
            if self._data is None:
                self._data = []
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)

    def _dispatch(self, time: float, *, incomplete: bool) -> None:
        data = None if self._data is None else "\n".join(self._data)
        self._on_event(
            SseEvent(
                time=time,
                data=data,
                event=self._event,
                id=self._id,
                retry=self._retry,
                incomplete=incomplete,
            )
        )
        self._data = None
        self._event = None
        self._id = None
        self._retry = None
        self._fields_seen = False


def parse_sse(body: bytes, time: float = 0.0) -> list[SseEvent]:
    """Parse a complete event-stream body in one go (recordings, HAR files, tests)."""
    events: list[SseEvent] = []
    parser = SseParser(events.append)
    parser.feed(body, time)
    parser.close(time)
    return events
