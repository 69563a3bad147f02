"""Recordings: exchanges as JSON Lines, written as they happen and judged again later.

A recording is the evidence behind a report. The proxy, the stdio tap and the active suite all
write the same record stream (one JSON object per line, flushed as it is produced, so memory stays
flat and a killed process still leaves a usable file), and the same :class:`Assembler` turns
records back into exchanges, whether they come from a live capture or from disk. Everything
written passes through a :class:`~mcp_assay.redaction.Redactor` first.

Record types (``format: mcp-assay.recording/1``)::

    {"type": "recording", "format": "mcp-assay.recording/1", "created": ..., "tool": ..., "source": ...}
    {"type": "http",     "x": ID, "t": T, "conn": C, "method": M, "url": U, "headers": [[n, v], ...],
                         "body": TEXT | "body_b64": B64, "probe": {...}?}
    {"type": "response", "x": ID, "t": T, "status": S, "reason": R, "headers": [[n, v], ...]}
    {"type": "body",     "x": ID, "t": T, "body": TEXT | "body_b64": B64}
    {"type": "event",    "x": ID, "t": T, "data": D?, "event": E?, "id": I?, "retry": N?, "comment": C?}
    {"type": "end",      "x": ID, "t": T, "reason": complete|client-disconnect|server-disconnect|error|open,
                         "detail": TEXT}
    {"type": "line",     "x": ID, "t": T, "conn": C, "from": client|server, "text": TEXT | "b64": B64,
                         "probe": {...}?}
    {"type": "exit",     "x": ID, "t": T, "conn": C, "code": N?, "stdin_closed": T?, "signals": [...]}
    {"type": "observation", "x": ID, "t": T, "kind": K, "data": {...}}

Times are seconds since the epoch. An HTTP exchange without an ``end`` record was still open
when the recording stopped.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcp_assay import __version__
from mcp_assay.errors import RecordingError
from mcp_assay.record_readers import (
    BadRecord,
    Fields,
    RequestRecord,
    ResponseRecord,
    read_body,
    read_end,
    read_event,
    read_exit,
    read_http,
    read_line,
    read_observation,
    read_response,
)
from mcp_assay.redaction import Redactor
from mcp_assay.sse import SseEvent
from mcp_assay.traffic import ExchangeLog
from mcp_assay.wire import (
    Ending,
    EndReason,
    Exchange,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    Observation,
    ProcessExit,
    StdioLine,
)

__all__ = [
    "RECORDING_FORMAT",
    "Assembler",
    "Recording",
    "RecordingWriter",
    "read_recording",
    "records_of",
]

RECORDING_FORMAT = "mcp-assay.recording/1"


def _encode_body(body: bytes, redactor: Redactor | None, key: str = "body") -> dict[str, str]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return {f"{key}_b64" if key == "body" else "b64": base64.b64encode(body).decode()}
    return {key: redactor.body(text) if redactor else text}


MAX_NOTES = 50
"""Problems an :class:`Assembler` lists one by one; past that it counts them (a forged file may have millions)."""
_HTTP_PARTS = frozenset({"response", "body", "event", "end"})
_SINGLES: dict[str, Callable[[Fields, str], Exchange]] = {
    "line": read_line,
    "exit": read_exit,
    "observation": read_observation,
}


@dataclass
class _Open:
    """An HTTP exchange being assembled from its records."""

    head: RequestRecord | None
    """``None`` when the exchange is left out (one of its records was unreadable)."""
    response: ResponseRecord | None = None
    body: list[bytes] = field(default_factory=list)
    body_time: float | None = None
    events: list[SseEvent] = field(default_factory=list)


class Assembler:
    """Turns a stream of records into finished exchanges; a record it cannot trust becomes a note.

    Each record is read by its type's reader in :mod:`mcp_assay.record_readers`. A record with a
    wrong-typed field is left out, and so is the rest of its HTTP exchange: judging an exchange
    without its response head (or with a status nobody sent) could fail a server for something it
    never did. Records of an unknown type, or for an exchange never opened, are noted and skipped.
    """

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        """Prepended to exchange ids, so several recordings can share one log."""
        self._open: dict[str, _Open] = {}
        self._notes: list[str] = []
        self._unlisted = 0

    @property
    def problems(self) -> list[str]:
        """What was odd about the records, for the report's notes (the first :data:`MAX_NOTES`, then a count)."""
        more = [f"… and {self._unlisted} more problem(s) like these"] if self._unlisted else []
        return [*self._notes, *more]

    def note(self, text: str) -> None:
        if len(self._notes) < MAX_NOTES:
            self._notes.append(text)
        else:
            self._unlisted += 1

    def feed(self, record: Mapping[str, Any], *, line: int | None = None) -> list[Exchange]:
        """Consume one record (``line``: where it was in a file); return the exchanges it completed."""
        kind = record.get("type")
        where = f"line {line}: " if line is not None else ""
        if kind == "recording":
            return []
        single = _SINGLES.get(kind) if isinstance(kind, str) else None
        if single is None and kind != "http" and kind not in _HTTP_PARTS:
            self.note(f"{where}unknown record type {ascii(kind)[:40]}")
            return []
        fields = Fields(record)
        try:
            ident = self._prefix + fields.ident()
        except BadRecord as exc:
            self.note(f"{where}a {kind} record without a usable exchange id was left out ({exc})")
            return []
        try:
            if single is not None:
                return [single(fields, ident)]
            if kind == "http":
                return self._request(ident, read_http(fields), where)
        except BadRecord as exc:
            self.note(f"{where}the {kind} record of {ident!r} was left out: {exc}")
            if kind == "http":
                self._open[ident] = _Open(head=None)
            return []
        return self._part(str(kind), ident, fields, where)

    def _request(self, ident: str, head: RequestRecord, where: str) -> list[Exchange]:
        earlier = self._open.pop(ident, None)
        self._open[ident] = _Open(head=head)
        if earlier is None or earlier.head is None:
            return []
        self.note(f"{where}a second http record for {ident!r}: the first exchange is judged as left open")
        return [self._finish(ident, earlier, Ending(reason=EndReason.OPEN, time=self._last_time(earlier)))]

    def _part(self, kind: str, ident: str, fields: Fields, where: str) -> list[Exchange]:
        pending = self._open.get(ident)
        if pending is None:
            self.note(f"{where}{kind} record for unknown exchange {ident!r}")
            return []
        if pending.head is None:  # already left out, and noted once
            if kind == "end":
                del self._open[ident]
            return []
        try:
            if kind == "response":
                pending.response = read_response(fields)
            elif kind == "body":
                part = read_body(fields)
                pending.body.append(part.body)
                pending.body_time = part.time
            elif kind == "event":
                pending.events.append(read_event(fields))
            else:
                ending = read_end(fields)
                del self._open[ident]
                return [self._finish(ident, pending, ending)]
        except BadRecord as exc:
            pending.head = None
            self.note(
                f"{where}the {kind} record of {ident!r} was left out: {exc}; "
                "the exchange is left out of the judged traffic with it"
            )
        return []

    def _finish(self, ident: str, pending: _Open, ending: Ending) -> HttpExchange:
        head = pending.head
        assert head is not None
        response = None
        if pending.response is not None:
            answer = pending.response
            content_type = answer.headers.get("content-type") or ""
            streamed = bool(pending.events) or content_type.startswith("text/event-stream")
            response = HttpResponse(
                status=answer.status,
                reason=answer.reason,
                headers=answer.headers,
                time=answer.time,
                body=None if streamed else b"".join(pending.body),
                events=tuple(pending.events),
            )
        return HttpExchange.build(
            id=ident,
            request=head.request,
            response=response,
            ending=ending,
            connection=head.connection,
            probe=head.probe,
        )

    @staticmethod
    def _last_time(pending: _Open) -> float:
        if pending.events:
            return pending.events[-1].time
        if pending.body_time is not None:
            return pending.body_time
        return pending.head.request.time if pending.head is not None else 0.0

    def close(self, time: float | None = None) -> list[Exchange]:
        """Finish every exchange still open (they were open when the capture stopped)."""
        finished: list[Exchange] = []
        for ident, pending in list(self._open.items()):
            if pending.head is not None:
                ending = Ending(reason=EndReason.OPEN, time=time or self._last_time(pending))
                finished.append(self._finish(ident, pending, ending))
        self._open.clear()
        return finished


def event_record(ident: str, event: SseEvent, redactor: Redactor | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "event", "x": ident, "t": event.time}
    scrub = redactor.text if redactor else (lambda text: text)
    if event.comment is not None:
        record["comment"] = scrub(event.comment)
    if event.data is not None:
        record["data"] = scrub(event.data)
    if event.event is not None:
        record["event"] = event.event
    if event.id is not None:
        record["id"] = event.id
    if event.retry is not None:
        record["retry"] = event.retry
    if event.incomplete:
        record["incomplete"] = True
    return record


def records_of(exchange: Exchange, redactor: Redactor | None = None) -> Iterator[dict[str, Any]]:
    """The records that describe a finished exchange (the inverse of :class:`Assembler`)."""
    headers_of = (
        (lambda pairs: [list(p) for p in redactor.headers(pairs)])
        if redactor
        else (lambda pairs: [list(p) for p in pairs])
    )
    if isinstance(exchange, HttpExchange):
        request = exchange.request
        head: dict[str, Any] = {
            "type": "http", "x": exchange.id, "t": request.time, "conn": exchange.connection,
            "method": request.method, "url": redactor.url(request.url) if redactor else request.url,
            "headers": headers_of(request.headers),
        }  # fmt: skip
        if request.body:
            head.update(_encode_body(request.body, redactor))
        if exchange.probe is not None:
            head["probe"] = dict(exchange.probe)
        yield head
        response = exchange.response
        if response is not None:
            yield {
                "type": "response", "x": exchange.id, "t": response.time, "status": response.status,
                "reason": response.reason, "headers": headers_of(response.headers),
            }  # fmt: skip
            if response.body:
                yield {"type": "body", "x": exchange.id, "t": response.time, **_encode_body(response.body, redactor)}
            for event in response.events:
                yield event_record(exchange.id, event, redactor)
        ending = exchange.ending
        if ending is not None and ending.reason is not EndReason.OPEN:
            yield {
                "type": "end",
                "x": exchange.id,
                "t": ending.time,
                "reason": ending.reason.value,
                "detail": ending.detail,
            }
    elif isinstance(exchange, StdioLine):
        line: dict[str, Any] = {
            "type": "line", "x": exchange.id, "t": exchange.time, "conn": exchange.connection,
            "from": exchange.sender.value, **_encode_body(exchange.raw, redactor, key="text"),
        }  # fmt: skip
        if exchange.probe is not None:
            line["probe"] = dict(exchange.probe)
        yield line
    elif isinstance(exchange, ProcessExit):
        yield {
            "type": "exit", "x": exchange.id, "t": exchange.time, "conn": exchange.connection, "code": exchange.code,
            "stdin_closed": exchange.stdin_closed_at, "signals": list(exchange.signals),
        }  # fmt: skip
    elif isinstance(exchange, Observation):
        data = json.loads(redactor.text(json.dumps(exchange.data))) if redactor else dict(exchange.data)
        yield {"type": "observation", "x": exchange.id, "t": exchange.time, "kind": exchange.kind, "data": data}


class RecordingWriter:
    """Appends records to a JSONL file as they happen, redacting first. Thread-safe."""

    def __init__(self, path: str | Path, redactor: Redactor, *, source: str) -> None:
        self.path = Path(path)
        self.redactor = redactor
        self._lock = threading.Lock()
        self._handle: IO[str] = self.path.open("w", encoding="utf-8", buffering=1)
        self.write(
            {
                "type": "recording",
                "format": RECORDING_FORMAT,
                "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "tool": f"mcp-assay {__version__}",
                "source": source,
                "redacted": True,
            }
        )

    def write(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            if not self._handle.closed:
                self._handle.write(line + "\n")

    def http_request(
        self, ident: str, request: HttpRequest, *, connection: str = "", probe: Mapping[str, Any] | None = None
    ) -> None:
        for name, value in request.headers:
            self.redactor.learn_header(name, value)
        self.redactor.learn_url(request.url)
        record: dict[str, Any] = {
            "type": "http", "x": ident, "t": request.time, "conn": connection, "method": request.method,
            "url": self.redactor.url(request.url), "headers": [list(p) for p in self.redactor.headers(request.headers)],
        }  # fmt: skip
        if request.body:
            record.update(_encode_body(request.body, self.redactor))
        if probe is not None:
            record["probe"] = dict(probe)
        self.write(record)

    def http_response(
        self, ident: str, status: int, reason: str, headers: Iterable[tuple[str, str]], time: float
    ) -> None:
        pairs = list(headers)
        for name, value in pairs:
            self.redactor.learn_header(name, value)
        self.write(
            {"type": "response", "x": ident, "t": time, "status": status, "reason": reason,
             "headers": [list(p) for p in self.redactor.headers(pairs)]}
        )  # fmt: skip

    def http_body(self, ident: str, body: bytes, time: float) -> None:
        if body:
            self.write({"type": "body", "x": ident, "t": time, **_encode_body(body, self.redactor)})

    def sse_event(self, ident: str, event: SseEvent) -> None:
        self.write(event_record(ident, event, self.redactor))

    def http_end(self, ident: str, reason: EndReason, time: float, detail: str = "") -> None:
        self.write({"type": "end", "x": ident, "t": time, "reason": reason.value, "detail": self.redactor.text(detail)})

    def exchange(self, exchange: Exchange) -> None:
        """Write a finished exchange in one go (used by the active suite and converters)."""
        if isinstance(exchange, HttpExchange):
            for name, value in exchange.request.headers:
                self.redactor.learn_header(name, value)
            self.redactor.learn_url(exchange.request.url)
        for record in records_of(exchange, self.redactor):
            self.write(record)

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                self._handle.close()


@dataclass
class Recording:
    """A recording read back: its header, the exchange log, and anything odd found in the file."""

    path: Path
    header: Mapping[str, Any]
    log: ExchangeLog
    problems: list[str]


def iter_records(handle: IO[str], note: Callable[[str], None]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object in a JSONL file with its line number; any other line is noted and skipped."""
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            note(f"line {number}: not JSON ({str(exc)[:80]})")
            continue
        if not isinstance(record, dict):
            note(f"line {number}: not a JSON object")
            continue
        yield number, record


def read_recording(path: str | Path, log: ExchangeLog | None = None, *, prefix: str = "") -> Recording:
    """Read a JSONL recording into an exchange log (appending to ``log`` when given)."""
    file = Path(path)
    if not file.is_file():
        raise RecordingError(f"{file}: no such recording")
    header: Mapping[str, Any] = {}
    target = log if log is not None else ExchangeLog()
    assembler = Assembler(prefix)
    count = 0
    try:
        with file.open(encoding="utf-8", errors="surrogateescape") as handle:
            for number, record in iter_records(handle, assembler.note):
                count += 1
                if record.get("type") == "recording":
                    header = record
                    continue
                for exchange in assembler.feed(record, line=number):
                    target.add(exchange)
    except OSError as exc:
        raise RecordingError(f"{file}: cannot read ({exc})") from exc
    for exchange in assembler.close():
        target.add(exchange)
    problems = assembler.problems
    if count == 0 or (not header and not len(target)):
        raise RecordingError(f"{file}: not an mcp-assay recording (no records found)")
    if header and header.get("format") not in (None, RECORDING_FORMAT):
        problems.append(f"unknown recording format {ascii(header.get('format'))[:60]}; read as {RECORDING_FORMAT}")
    return Recording(file, header, target, problems)
