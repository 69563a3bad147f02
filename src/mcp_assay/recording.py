"""Recordings: exchanges as JSON Lines, written as they happen and judged again later.

A recording is the evidence behind a report. The proxy, the stdio tap and the active suite all
write the same record stream (one JSON object per line, flushed as it is produced, so memory stays
flat and a killed process still leaves a usable file), and the same :class:`Assembler` turns
records back into exchanges, whether they come from a live capture or from disk. Everything
written passes through a :class:`~mcp_assay.redaction.Redactor` first.

Record types (``format: mcp-assay.recording/1``)::

    {"type": "recording", "format": "mcp-assay.recording/1", "created": ..., "tool": ..., "source": ...}
    {"type": "http",     "x": ID, "t": T, "conn": C, "method": M, "url": U, "headers": [[n, v], ...],
                         "body": TEXT | "body_b64": B64, "probe": {...}?, "hop": front|back?}
    {"type": "response", "x": ID, "t": T, "status": S, "reason": R, "headers": [[n, v], ...]}
    {"type": "body",     "x": ID, "t": T, "body": TEXT | "body_b64": B64}
    {"type": "event",    "x": ID, "t": T, "data": D?, "event": E?, "id": I?, "retry": N?, "comment": C?}
    {"type": "end",      "x": ID, "t": T, "reason": complete|client-disconnect|server-disconnect|error|open,
                         "detail": TEXT}
    {"type": "line",     "x": ID, "t": T, "conn": C, "from": client|server, "text": TEXT | "b64": B64,
                         "probe": {...}?, "hop": front|back?}
    {"type": "exit",     "x": ID, "t": T, "conn": C, "code": N?, "stdin_closed": T?, "signals": [...], "hop": ...?}
    {"type": "observation", "x": ID, "t": T, "kind": K, "data": {...}}

Times are seconds since the epoch. An HTTP exchange without an ``end`` record was still open
when the recording stopped. ``hop`` is written only where mcp-assay watched both sides of a gateway
(:class:`~mcp_assay.wire.Hop`); a recording without it reads as traffic with no gateway.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcp_assay import __version__, jsontext
from mcp_assay.errors import RecordingError
from mcp_assay.protocol import HeaderKey, MediaType
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
from mcp_assay.verdicts import Side
from mcp_assay.wire import (
    Ending,
    EndReason,
    Exchange,
    Hop,
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
    "open_new",
    "read_recording",
    "records_of",
    "redact_record",
    "stream_recording",
    "response_record",
]

RECORDING_FORMAT = "mcp-assay.recording/1"

log = logging.getLogger("mcp_assay.recording")


# -- writing: one builder per record type --------------------------------------------------------
def body_fields(body: bytes, key: str = "body") -> dict[str, str]:
    """A body as a record field: UTF-8 text when it is text, base64 otherwise."""
    try:
        return {key: body.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{key}_b64" if key == "body" else "b64": base64.b64encode(body).decode()}


def http_record(
    ident: str, request: HttpRequest, *, connection: str = "", probe: Probe | None = None, hop: Hop | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "http", "x": ident, "t": request.time, "conn": connection, "method": request.method,
        "url": request.url, "headers": [list(pair) for pair in request.headers],
    }  # fmt: skip
    if request.body:
        record.update(body_fields(request.body))
    if probe is not None:
        record["probe"] = probe.to_record()
    if hop is not None:
        record["hop"] = hop.value
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
    ident: str,
    connection: str,
    sender: Side,
    time: float,
    raw: bytes,
    probe: Probe | None = None,
    hop: Hop | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "line", "x": ident, "t": time, "conn": connection, "from": sender.value}
    record.update(body_fields(raw, "text"))
    if probe is not None:
        record["probe"] = probe.to_record()
    if hop is not None:
        record["hop"] = hop.value
    return record


def exit_record(
    ident: str,
    connection: str,
    time: float,
    code: int | None,
    stdin_closed: float | None,
    signals: Iterable[str],
    hop: Hop | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "exit", "x": ident, "t": time, "conn": connection, "code": code,
        "stdin_closed": stdin_closed, "signals": list(signals),
    }  # fmt: skip
    if hop is not None:
        record["hop"] = hop.value
    return record


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
        if single is None and kind != "http" and not (isinstance(kind, str) and kind in _HTTP_PARTS):
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
            content_type = answer.headers.get(HeaderKey.CONTENT_TYPE) or ""
            streamed = bool(pending.events) or content_type.startswith(MediaType.EVENT_STREAM)
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
            hop=head.hop,
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


def records_of(exchange: Exchange, redactor: Redactor | None = None) -> Iterator[dict[str, Any]]:
    """The records that describe a finished exchange (the inverse of :class:`Assembler`), redacted when a
    redactor is given."""
    for record in _raw_records_of(exchange):
        yield redact_record(record, redactor) if redactor is not None else record


def _raw_records_of(exchange: Exchange) -> Iterator[dict[str, Any]]:
    if isinstance(exchange, HttpExchange):
        yield http_record(
            exchange.id, exchange.request, connection=exchange.connection, probe=exchange.probe, hop=exchange.hop
        )
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
        yield line_record(line.id, line.connection, line.sender, line.time, line.raw, line.probe, line.hop)
    elif isinstance(exchange, ProcessExit):
        yield exit_record(
            exchange.id, exchange.connection, exchange.time, exchange.code, exchange.stdin_closed_at, exchange.signals,
            exchange.hop,
        )  # fmt: skip
    elif isinstance(exchange, Observation):
        yield observation_record(exchange.id, exchange.time, exchange.kind, exchange.data, exchange.connection)


SIBLINGS = 10_000
"""Numbered siblings tried before a recording gives up on a name."""


def open_new(path: str | Path) -> tuple[Path, IO[str]]:
    """A new file for a recording at ``path`` or, when that is taken, at its first free numbered sibling
    (``session.jsonl`` -> ``session-2.jsonl``, ``session-3.jsonl`` ...): a recording is evidence and is never
    overwritten. Each name is created exclusively, so two sessions started at once never share a file."""
    path = Path(path)
    for number in range(1, SIBLINGS + 1):
        candidate = path if number == 1 else path.with_name(f"{path.stem}-{number}{path.suffix}")
        try:
            return candidate, candidate.open("x", encoding="utf-8", buffering=1)
        except FileExistsError:
            continue
    raise FileExistsError(f"{path} and {SIBLINGS - 1} numbered siblings of it exist already")


class RecordingWriter:
    """Appends records to a JSONL file as they happen, redacting first. Thread-safe.

    A file already at ``path`` is kept: the recording goes to a numbered sibling (:func:`open_new`), which
    :attr:`path` names, and a warning says so."""

    def __init__(self, path: str | Path, redactor: Redactor, *, source: str) -> None:
        self.requested = Path(path)
        """The path asked for; :attr:`path` is where the recording went."""
        self.redactor = redactor
        self._lock = threading.Lock()
        self.path, self._handle = open_new(self.requested)
        if self.path != self.requested:
            log.warning("mcp-assay: %s exists already; this recording goes to %s", self.requested, self.path)
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


def iter_records(handle: IO[str], note: Callable[[str], None]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object in a JSONL file with its line number; any other line is noted and skipped."""
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = jsontext.loads(line)
        except (ValueError, RecursionError) as exc:
            note(f"line {number}: not JSON ({str(exc)[:80]})")
            continue
        if not isinstance(record, dict):
            note(f"line {number}: not a JSON object")
            continue
        yield number, record


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
            for number, record in iter_records(handle, assembler.note):
                count += 1
                if record.get("type") == "recording":
                    found = record
                    continue
                for exchange in assembler.feed(record, line=number):
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
        problems.append(f"unknown recording format {ascii(found.get('format'))[:60]}; read as {RECORDING_FORMAT}")
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
