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
    Probe,
    ProcessExit,
    StdioLine,
)

__all__ = [
    "RECORDING_FORMAT",
    "Assembler",
    "Recording",
    "RecordingWriter",
    "body_fields",
    "end_record",
    "event_record",
    "exit_record",
    "http_record",
    "line_record",
    "observation_record",
    "read_recording",
    "records_of",
    "redact_record",
    "stream_recording",
    "response_record",
]

RECORDING_FORMAT = "mcp-assay.recording/1"


# -- writing: one builder per record type --------------------------------------------------------
def body_fields(body: bytes, key: str = "body") -> dict[str, str]:
    """A body as a record field: UTF-8 text when it is text, base64 otherwise."""
    try:
        return {key: body.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{key}_b64" if key == "body" else "b64": base64.b64encode(body).decode()}


def http_record(
    ident: str, request: HttpRequest, *, connection: str = "", probe: Probe | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "http", "x": ident, "t": request.time, "conn": connection, "method": request.method,
        "url": request.url, "headers": [list(pair) for pair in request.headers],
    }  # fmt: skip
    if request.body:
        record.update(body_fields(request.body))
    if probe is not None:
        record["probe"] = probe.to_record()
    return record


def response_record(
    ident: str, status: int, reason: str, headers: Iterable[tuple[str, str]], time: float
) -> dict[str, Any]:
    return {
        "type": "response", "x": ident, "t": time, "status": status, "reason": reason,
        "headers": [list(pair) for pair in headers],
    }  # fmt: skip


def end_record(ident: str, reason: EndReason, time: float, detail: str = "") -> dict[str, Any]:
    return {"type": "end", "x": ident, "t": time, "reason": reason.value, "detail": detail}


def line_record(
    ident: str, connection: str, sender: Side, time: float, raw: bytes, probe: Probe | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "line", "x": ident, "t": time, "conn": connection, "from": sender.value}
    record.update(body_fields(raw, "text"))
    if probe is not None:
        record["probe"] = probe.to_record()
    return record


def exit_record(
    ident: str, connection: str, time: float, code: int | None, stdin_closed: float | None, signals: Iterable[str]
) -> dict[str, Any]:
    return {
        "type": "exit", "x": ident, "t": time, "conn": connection, "code": code,
        "stdin_closed": stdin_closed, "signals": list(signals),
    }  # fmt: skip


def observation_record(
    ident: str, time: float, kind: str, data: Mapping[str, Any], connection: str = ""
) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "observation", "x": ident, "t": time, "kind": kind, "data": dict(data)}
    if connection:
        record["conn"] = connection
    return record


def event_record(ident: str, event: SseEvent) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "event", "x": ident, "t": event.time}
    if event.comment is not None:
        record["comment"] = event.comment
    if event.data is not None:
        record["data"] = event.data
    if event.event is not None:
        record["event"] = event.event
    if event.id is not None:
        record["id"] = event.id
    if event.retry is not None:
        record["retry"] = event.retry
    if event.incomplete:
        record["incomplete"] = True
    return record


def redact_record(record: Mapping[str, Any], redactor: Redactor) -> dict[str, Any]:
    """The record as it may be written to disk: credentials learnt from it, then scrubbed."""
    out = dict(record)
    kind = record.get("type")
    if kind in ("http", "response"):
        pairs = [(str(name), str(value)) for name, value in record.get("headers", [])]
        for name, value in pairs:
            redactor.learn_header(name, value)
        if kind == "http":
            redactor.learn_url(str(record.get("url", "")))
            out["url"] = redactor.url(str(record.get("url", "")))
        out["headers"] = [list(pair) for pair in redactor.headers(pairs)]
    for key in ("body", "text"):
        if isinstance(record.get(key), str):
            out[key] = redactor.body(record[key])
    for key in ("data", "comment", "detail"):
        if isinstance(record.get(key), str):
            out[key] = redactor.text(record[key])
    if kind == "observation":
        out["data"] = json.loads(redactor.text(json.dumps(record.get("data", {}))))
    return out


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
                    probe=Probe.from_record(record.get("probe")),
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
        return HttpExchange.build(
            id=ident,
            request=request,
            response=response,
            ending=ending,
            connection=str(record.get("conn", "")),
            probe=Probe.from_record(record.get("probe")),
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


def records_of(exchange: Exchange, redactor: Redactor | None = None) -> Iterator[dict[str, Any]]:
    """The records that describe a finished exchange (the inverse of :class:`Assembler`), redacted when a
    redactor is given."""
    for record in _raw_records_of(exchange):
        yield redact_record(record, redactor) if redactor is not None else record


def _raw_records_of(exchange: Exchange) -> Iterator[dict[str, Any]]:
    if isinstance(exchange, HttpExchange):
        yield http_record(exchange.id, exchange.request, connection=exchange.connection, probe=exchange.probe)
        response = exchange.response
        if response is not None:
            yield response_record(exchange.id, response.status, response.reason, response.headers, response.time)
            if response.body:
                yield {"type": "body", "x": exchange.id, "t": response.time, **body_fields(response.body)}
            for event in response.events:
                yield event_record(exchange.id, event)
        ending = exchange.ending
        if ending is not None and ending.reason is not EndReason.OPEN:
            yield end_record(exchange.id, ending.reason, ending.time, ending.detail)
    elif isinstance(exchange, StdioLine):
        line = exchange
        yield line_record(line.id, line.connection, line.sender, line.time, line.raw, line.probe)
    elif isinstance(exchange, ProcessExit):
        yield exit_record(
            exchange.id, exchange.connection, exchange.time, exchange.code, exchange.stdin_closed_at, exchange.signals
        )
    elif isinstance(exchange, Observation):
        yield observation_record(exchange.id, exchange.time, exchange.kind, exchange.data, exchange.connection)


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

    def exchange(self, exchange: Exchange) -> None:
        """Write a finished exchange in one go (the active suite and converters), redacted."""
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


def stream_recording(
    path: str | Path, problems: list[str], *, prefix: str = "", header: dict[str, Any] | None = None
) -> Iterator[Exchange]:
    """The exchanges of a JSONL recording as they are read (memory follows one exchange, not the file).

    Odd records go to ``problems``; the ``recording`` record is copied into ``header`` when given.
    Raises :class:`RecordingError` when the file cannot be read or holds no record at all."""
    file = Path(path)
    if not file.is_file():
        raise RecordingError(f"{file}: no such recording")
    found: dict[str, Any] = {}
    assembler = Assembler(prefix)
    count = exchanges = 0
    try:
        with file.open(encoding="utf-8", errors="surrogateescape") as handle:
            for record in iter_records(handle, problems):
                count += 1
                if record.get("type") == "recording":
                    found = record
                    continue
                for exchange in assembler.feed(record):
                    exchanges += 1
                    yield exchange
    except OSError as exc:
        raise RecordingError(f"{file}: cannot read ({exc})") from exc
    for exchange in assembler.close():
        exchanges += 1
        yield exchange
    problems.extend(assembler.problems)
    if count == 0 or (not found and not exchanges):
        raise RecordingError(f"{file}: not an mcp-assay recording (no records found)")
    if found and found.get("format") not in (None, RECORDING_FORMAT):
        problems.append(f"unknown recording format {found.get('format')!r}; read as {RECORDING_FORMAT}")
    if header is not None:
        header.update(found)


def read_recording(path: str | Path, log: ExchangeLog | None = None, *, prefix: str = "") -> Recording:
    """Read a JSONL recording into an exchange log (appending to ``log`` when given)."""
    problems: list[str] = []
    header: dict[str, Any] = {}
    target = log if log is not None else ExchangeLog()
    for exchange in stream_recording(path, problems, prefix=prefix, header=header):
        target.add(exchange)
    return Recording(Path(path), header, target, problems)
