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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcp_assay import __version__
from mcp_assay.errors import RecordingError
from mcp_assay.redaction import Redactor
from mcp_assay.sse import SseEvent
from mcp_assay.traffic import ExchangeLog
from mcp_assay.verdicts import Side
from mcp_assay.wire import (
    Ending,
    EndReason,
    Exchange,
    Headers,
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


def _decode_body(record: Mapping[str, Any], key: str = "body") -> bytes:
    b64_key = f"{key}_b64" if key == "body" else "b64"
    if isinstance(record.get(b64_key), str):
        return base64.b64decode(record[b64_key])
    value = record.get(key)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return b""


def _headers(value: Any) -> Headers:
    if not isinstance(value, list):
        return Headers()
    return Headers((str(pair[0]), str(pair[1])) for pair in value if isinstance(pair, list | tuple) and len(pair) == 2)


@dataclass
class _Open:
    """An HTTP exchange being assembled from its records."""

    record: Mapping[str, Any]
    response: Mapping[str, Any] | None = None
    body: list[bytes] = field(default_factory=list)
    body_time: float | None = None
    events: list[SseEvent] = field(default_factory=list)


class Assembler:
    """Turns a stream of records into finished exchanges, tolerating missing or odd records."""

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        """Prepended to exchange ids, so several recordings can share one log."""
        self._open: dict[str, _Open] = {}
        self.problems: list[str] = []

    def feed(self, record: Mapping[str, Any]) -> list[Exchange]:
        """Consume one record; return the exchanges it completed (usually zero or one)."""
        kind = record.get("type")
        ident = self._prefix + str(record.get("x", ""))
        time = record.get("t")
        t = float(time) if isinstance(time, int | float) and not isinstance(time, bool) else 0.0
        if kind == "http":
            self._open[ident] = _Open(record)
            return []
        if kind in ("response", "body", "event", "end"):
            pending = self._open.get(ident)
            if pending is None:
                self.problems.append(f"{kind} record for unknown exchange {ident!r}")
                return []
            if kind == "response":
                pending.response = record
            elif kind == "body":
                pending.body.append(_decode_body(record))
                pending.body_time = t
            elif kind == "event":
                pending.events.append(_event(record, t))
            else:
                del self._open[ident]
                reason = record.get("reason", "complete")
                try:
                    end_reason = EndReason(reason)
                except ValueError:
                    end_reason = EndReason.ERROR
                return [
                    self._finish(
                        ident, pending, Ending(reason=end_reason, time=t, detail=str(record.get("detail", "")))
                    )
                ]
            return []
        if kind == "line":
            sender = Side.CLIENT if record.get("from") == "client" else Side.SERVER
            raw = _decode_body(record, key="text")
            return [
                StdioLine.build(
                    id=ident, connection=str(record.get("conn", "")), sender=sender, time=t, raw=raw,
                    probe=record.get("probe") if isinstance(record.get("probe"), dict) else None,
                )
            ]  # fmt: skip
        if kind == "exit":
            code = record.get("code")
            closed = record.get("stdin_closed")
            return [
                ProcessExit(
                    id=ident,
                    connection=str(record.get("conn", "")),
                    time=t,
                    code=code if isinstance(code, int) else None,
                    stdin_closed_at=float(closed) if isinstance(closed, int | float) else None,
                    signals=tuple(str(s) for s in record.get("signals", []) if isinstance(s, str)),
                )
            ]
        if kind == "observation":
            data = record.get("data")
            return [
                Observation(
                    id=ident, time=t, kind=str(record.get("kind", "note")),
                    data=data if isinstance(data, dict) else {"value": data}, connection=str(record.get("conn", "")),
                )
            ]  # fmt: skip
        if kind != "recording":
            self.problems.append(f"unknown record type {kind!r}")
        return []

    def _finish(self, ident: str, pending: _Open, ending: Ending) -> HttpExchange:
        record = pending.record
        body = _decode_body(record)
        request = HttpRequest(
            method=str(record.get("method", "")),
            url=str(record.get("url", "")),
            headers=_headers(record.get("headers")),
            body=body,
            time=float(record.get("t", 0.0)),
        )
        response = None
        if pending.response is not None:
            head = pending.response
            content_type = _headers(head.get("headers")).get("content-type") or ""
            streamed = bool(pending.events) or content_type.startswith("text/event-stream")
            response = HttpResponse(
                status=int(head.get("status", 0)),
                reason=str(head.get("reason", "")),
                headers=_headers(head.get("headers")),
                time=float(head.get("t", 0.0)),
                body=None if streamed else b"".join(pending.body),
                events=tuple(pending.events),
            )
        probe = record.get("probe")
        return HttpExchange.build(
            id=ident,
            request=request,
            response=response,
            ending=ending,
            connection=str(record.get("conn", "")),
            probe=probe if isinstance(probe, dict) else None,
        )

    def close(self, time: float | None = None) -> list[Exchange]:
        """Finish every exchange still open (they were open when the capture stopped)."""
        finished: list[Exchange] = []
        for ident, pending in list(self._open.items()):
            last = (
                pending.events[-1].time if pending.events else (pending.body_time or float(pending.record.get("t", 0)))
            )
            finished.append(self._finish(ident, pending, Ending(reason=EndReason.OPEN, time=time or last)))
        self._open.clear()
        return finished


def _event(record: Mapping[str, Any], t: float) -> SseEvent:
    retry = record.get("retry")
    return SseEvent(
        time=t,
        data=record.get("data") if isinstance(record.get("data"), str) else None,
        event=record.get("event") if isinstance(record.get("event"), str) else None,
        id=record.get("id") if isinstance(record.get("id"), str) else None,
        retry=retry if isinstance(retry, int) else None,
        comment=record.get("comment") if isinstance(record.get("comment"), str) else None,
        incomplete=bool(record.get("incomplete", False)),
    )


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


def iter_records(handle: IO[str], problems: list[str]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            problems.append(f"line {number}: not JSON ({exc})")
            continue
        if not isinstance(record, dict):
            problems.append(f"line {number}: not a JSON object")
            continue
        yield record


def read_recording(path: str | Path, log: ExchangeLog | None = None, *, prefix: str = "") -> Recording:
    """Read a JSONL recording into an exchange log (appending to ``log`` when given)."""
    file = Path(path)
    if not file.is_file():
        raise RecordingError(f"{file}: no such recording")
    problems: list[str] = []
    header: Mapping[str, Any] = {}
    target = log if log is not None else ExchangeLog()
    assembler = Assembler(prefix)
    count = 0
    try:
        with file.open(encoding="utf-8", errors="surrogateescape") as handle:
            for record in iter_records(handle, problems):
                count += 1
                if record.get("type") == "recording":
                    header = record
                    continue
                for exchange in assembler.feed(record):
                    target.add(exchange)
    except OSError as exc:
        raise RecordingError(f"{file}: cannot read ({exc})") from exc
    for exchange in assembler.close():
        target.add(exchange)
    problems.extend(assembler.problems)
    if count == 0 or (not header and not len(target)):
        raise RecordingError(f"{file}: not an mcp-assay recording (no records found)")
    if header and header.get("format") not in (None, RECORDING_FORMAT):
        problems.append(f"unknown recording format {header.get('format')!r}; read as {RECORDING_FORMAT}")
    return Recording(file, header, target, problems)
