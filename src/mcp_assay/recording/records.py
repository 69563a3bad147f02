"""Recordings: exchanges as JSON Lines, written as they happen and judged again later.

A recording is the evidence behind a report. The proxy, the stdio tap and the active suite all
write the same record stream (one JSON object per line, flushed as it is produced, so memory stays
flat and a killed process still leaves a usable file), and the same :class:`Assembler` turns
records back into exchanges, whether they come from a live capture or from disk. Everything
written passes through a :class:`~mcp_assay.recording.redaction.Redactor` first.

Record types (``format: mcp-assay.recording/1``)::

    {"type": "recording", "format": "mcp-assay.recording/1", "created": ..., "tool": ..., "source": ...,
                         "redacted": true, "integrity": "mcp-assay.chain/1", "catalogue": ..., "schemas": {...},
                         "options": {...}}
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
    {"type": "close",    "t": T, "records": N}

Times are seconds since the epoch. An HTTP exchange without an ``end`` record was still open
when the recording stopped; a recording without its ``close`` record was cut short (a killed capture).

**Integrity.** A recording is evidence, so it is tamper-evident. The header names the tool and its
version, the digests of the requirement catalogue and of the schemas it judged with, and the options it
ran with (redacted, as everything else). Every record, the header first, ends with a ``chain`` member:
the sha256 of the previous record's ``chain`` and of this record's line without its ``chain`` member
(:func:`chain_link`), so editing, removing or inserting a record breaks the chain at that record, and
:func:`verify_recording` names it. Records are redacted before they are written and digested, so a
shared recording verifies; the sha256 of the whole file is what a report names. Recordings from before
the chain still read and judge as they always did; they just cannot be verified.

``hop`` is written only where mcp-assay watched both sides of a gateway
(:class:`~mcp_assay.wire.model.Hop`); a recording without it reads as traffic with no gateway.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcp_assay import __version__
from mcp_assay.recording.readers import (
    BadRecord,
    BodyRecord,
    Fields,
    ResponseRecord,
    payload_bytes,
    read_body,
    read_end,
    read_event,
    read_exit,
    read_http,
    read_line,
    read_observation,
    read_response,
)
from mcp_assay.recording.redaction import Redactor
from mcp_assay.recording.typed import (
    BodyFields,
    EndFields,
    EventFields,
    ExitFields,
    HttpFields,
    LineFields,
    ObservationFields,
    ResponseFields,
    TypedRecord,
    decode_record,
    ending_of,
    event_of,
    exit_of,
    hop_of,
    line_of,
    observation_of,
    payload_of,
    probe_of,
    request_of,
)
from mcp_assay.vocabulary.errors import RecordingError
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire import jsontext
from mcp_assay.wire.model import (
    Ending,
    EndReason,
    Exchange,
    Headers,
    Hop,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    Observation,
    Probe,
    ProcessExit,
    StdioLine,
)
from mcp_assay.wire.sse import SseEvent
from mcp_assay.wire.traffic import ExchangeLog

__all__ = [
    "CHAIN_FORMAT",
    "RECORDING_FORMAT",
    "Assembler",
    "Integrity",
    "Recording",
    "RecordingWriter",
    "body_fields",
    "chain_link",
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
    "verify_recording",
]

RECORDING_FORMAT = "mcp-assay.recording/1"
CHAIN_FORMAT = "mcp-assay.chain/1"
"""The header's ``integrity``: every record carries a ``chain`` member made by :func:`chain_link`."""

log = logging.getLogger("mcp_assay.recording.records")


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
    for key in ("body_b64", "b64"):  # bytes that are not text: scrubbed as bytes before they are encoded again
        if isinstance(record.get(key), str):
            try:
                raw = base64.b64decode(record[key], validate=True)
            except (binascii.Error, ValueError):
                continue
            out[key] = base64.b64encode(redactor.binary(raw)).decode("ascii")
    if kind == "observation":
        out["data"] = redactor.data(record.get("data", {}))
    return out


MAX_NOTES = 50
"""Problems an :class:`Assembler` lists one by one; past that it counts them (a forged file may have millions)."""
_HTTP_PARTS = frozenset({"response", "body", "event", "end"})
_SINGLES: dict[str, Callable[[Fields, str], Exchange]] = {
    "line": read_line,
    "exit": read_exit,
    "observation": read_observation,
}


_Part = ResponseRecord | BodyRecord | SseEvent | Ending
"""What a ``response``, ``body``, ``event`` or ``end`` record adds to an open exchange."""
_PART_READERS: dict[str, Callable[[Fields], _Part]] = {
    "response": read_response,
    "body": read_body,
    "event": read_event,
    "end": read_end,
}
_Head = tuple[int, str, Headers, float]
"""A response head: status, reason, headers, time."""
_NOTHING: tuple[()] = ()
"""What a record that finished no exchange gives."""


def _where(line: int | None) -> str:
    """Where a record was, for a note (``line 7: ``)."""
    return f"line {line}: " if line is not None else ""


class _Open:
    """An HTTP exchange being assembled from its records (a plain class: a long recording opens one per request)."""

    __slots__ = ("body", "body_time", "connection", "events", "hop", "probe", "request", "response")

    def __init__(self, request: HttpRequest | None, connection: str = "", probe: Probe | None = None,
                 hop: Hop | None = None) -> None:  # fmt: skip
        self.request = request
        """``None`` when the exchange is left out (one of its records was unreadable)."""
        self.connection = connection
        self.probe = probe
        self.hop = hop
        self.response: _Head | None = None
        self.body: list[bytes] = []
        self.body_time: float | None = None
        self.events: list[SseEvent] = []


class Assembler:
    """Turns a stream of records into finished exchanges; a record it cannot trust becomes a note.

    Each record is read by its type's reader in :mod:`mcp_assay.recording.readers` (:meth:`feed`), or arrives
    already read by :mod:`~mcp_assay.recording.typed` (:meth:`take`). A record with a
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
        where = _where(line)
        if kind in ("recording", "close"):
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
                head = read_http(fields)
                return list(self._request(ident, _Open(head.request, head.connection, head.probe, head.hop), line))
        except BadRecord as exc:
            self.note(f"{where}the {kind} record of {ident!r} was left out: {exc}")
            if kind == "http":
                self._open[ident] = _Open(None)
            return []
        return self._part(str(kind), ident, fields, line)

    def _request(self, ident: str, opened: _Open, line: int | None) -> Sequence[Exchange]:
        earlier = self._open.pop(ident, None)
        self._open[ident] = opened
        if earlier is None or earlier.request is None:
            return _NOTHING
        self.note(f"{_where(line)}a second http record for {ident!r}: the first exchange is judged as left open")
        return [self._finish(ident, earlier, Ending(reason=EndReason.OPEN, time=self._last_time(earlier)))]

    def take(self, record: TypedRecord, line: int | None = None) -> Sequence[Exchange]:
        """Consume one record the fast path decoded (:mod:`~mcp_assay.recording.typed`), as :meth:`feed` would the
        same record; return the exchanges it completed."""
        return _TAKERS[type(record)](self, record, line)

    def _take_http(self, record: HttpFields, line: int | None) -> Sequence[Exchange]:
        opened = _Open(request_of(record), record.conn, probe_of(record.probe), hop_of(record.hop))
        return self._request(self._prefix + record.x, opened, line)

    def _take_line(self, record: LineFields, line: int | None) -> Sequence[Exchange]:
        return (line_of(record, self._prefix + record.x),)

    def _take_exit(self, record: ExitFields, line: int | None) -> Sequence[Exchange]:
        return (exit_of(record, self._prefix + record.x),)

    def _take_observation(self, record: ObservationFields, line: int | None) -> Sequence[Exchange]:
        return (observation_of(record, self._prefix + record.x),)

    def _take_response(self, record: ResponseFields, line: int | None) -> Sequence[Exchange]:
        pending = self._pending("response", self._prefix + record.x, line)
        if pending is not None:
            pending.response = (record.status, record.reason, Headers.of_text(record.headers), record.t)
        return _NOTHING

    def _take_body(self, record: BodyFields, line: int | None) -> Sequence[Exchange]:
        pending = self._pending("body", self._prefix + record.x, line)
        if pending is not None:
            pending.body.append(payload_of(record.body))
            pending.body_time = record.t
        return _NOTHING

    def _take_event(self, record: EventFields, line: int | None) -> Sequence[Exchange]:
        pending = self._pending("event", self._prefix + record.x, line)
        if pending is not None:
            pending.events.append(event_of(record))
        return _NOTHING

    def _take_end(self, record: EndFields, line: int | None) -> Sequence[Exchange]:
        ident = self._prefix + record.x
        pending = self._pending("end", ident, line)
        if pending is None:
            return _NOTHING
        del self._open[ident]
        return (self._finish(ident, pending, ending_of(record)),)

    def _part(self, kind: str, ident: str, fields: Fields, line: int | None) -> list[Exchange]:
        pending = self._pending(kind, ident, line)
        if pending is None:
            return []
        try:
            part = _PART_READERS[kind](fields)
        except BadRecord as exc:
            pending.request = None
            self.note(
                f"{_where(line)}the {kind} record of {ident!r} was left out: {exc}; "
                "the exchange is left out of the judged traffic with it"
            )
            return []
        if isinstance(part, ResponseRecord):
            pending.response = (part.status, part.reason, part.headers, part.time)
        elif isinstance(part, BodyRecord):
            pending.body.append(part.body)
            pending.body_time = part.time
        elif isinstance(part, SseEvent):
            pending.events.append(part)
        else:
            del self._open[ident]
            return [self._finish(ident, pending, part)]
        return []

    def _pending(self, kind: str, ident: str, line: int | None) -> _Open | None:
        """The open exchange a ``kind`` record adds to; ``None`` (noted) when there is none, or it is left out."""
        pending = self._open.get(ident)
        if pending is None:
            self.note(f"{_where(line)}{kind} record for unknown exchange {ident!r}")
            return None
        if pending.request is None:  # already left out, and noted once
            if kind == "end":
                del self._open[ident]
            return None
        return pending

    def _finish(self, ident: str, pending: _Open, ending: Ending) -> HttpExchange:
        request = pending.request
        assert request is not None
        response = None
        if pending.response is not None:
            status, reason, headers, time = pending.response
            events = pending.events
            streamed = bool(events) or (headers.get(HeaderKey.CONTENT_TYPE) or "").startswith(MediaType.EVENT_STREAM)
            response = HttpResponse(
                status=status,
                reason=reason,
                headers=headers,
                time=time,
                body=None if streamed else b"".join(pending.body),
                events=tuple(events),
            )
        return HttpExchange.build(
            id=ident,
            request=request,
            response=response,
            ending=ending,
            connection=pending.connection,
            probe=pending.probe,
            hop=pending.hop,
        )

    @staticmethod
    def _last_time(pending: _Open) -> float:
        if pending.events:
            return pending.events[-1].time
        if pending.body_time is not None:
            return pending.body_time
        return pending.request.time if pending.request is not None else 0.0

    def close(self, time: float | None = None) -> list[Exchange]:
        """Finish every exchange still open (they were open when the capture stopped)."""
        finished: list[Exchange] = []
        for ident, pending in list(self._open.items()):
            if pending.request is not None:
                ending = Ending(reason=EndReason.OPEN, time=time or self._last_time(pending))
                finished.append(self._finish(ident, pending, ending))
        self._open.clear()
        return finished


_TAKERS: dict[type, Callable[[Assembler, Any, int | None], Sequence[Exchange]]] = {
    HttpFields: Assembler._take_http,
    ResponseFields: Assembler._take_response,
    BodyFields: Assembler._take_body,
    EventFields: Assembler._take_event,
    EndFields: Assembler._take_end,
    LineFields: Assembler._take_line,
    ExitFields: Assembler._take_exit,
    ObservationFields: Assembler._take_observation,
}
"""What :meth:`Assembler.take` does with each typed record (functions, not an assembler's bound methods: those
would hold the assembler in a reference cycle)."""


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


_CHAIN_MEMBER = re.compile(r',"chain":"([0-9a-f]{64})"\}$')
_CHAIN_MEMBER_BYTES = re.compile(rb',"chain":"([0-9a-f]{64})"\}$')
""":data:`_CHAIN_MEMBER` in a line's bytes (it is ASCII, so it matches where it matches the line's text)."""


def chain_link(previous: str, line: str) -> str:
    """The ``chain`` of a record: sha256 of the previous record's chain (``""`` for the header), a newline,
    and the record's line as written without its ``chain`` member."""
    return hashlib.sha256(payload_bytes(f"{previous}\n{line}")).hexdigest()


class RecordingWriter:
    """Appends records to a JSONL file as they happen, redacting first, each chained to the ones before it.
    Thread-safe.

    A file already at ``path`` is kept: the recording goes to a numbered sibling (:func:`open_new`), which
    :attr:`path` names, and a warning says so. ``about`` adds to the header what the recording was made with
    (the catalogue and schema digests, the options); it is redacted like every record."""

    def __init__(
        self, path: str | Path, redactor: Redactor, *, source: str, about: Mapping[str, Any] | None = None
    ) -> None:
        self.requested = Path(path)
        """The path asked for; :attr:`path` is where the recording went."""
        self.redactor = redactor
        self._lock = threading.Lock()
        self._chain = ""
        self._digest = hashlib.sha256()
        self.records = 0
        """Records written so far, the header and the closing record included."""
        self.sha256: str | None = None
        """The sha256 of the whole file, once it is closed (what a report names)."""
        self.path, self._handle = open_new(self.requested)
        if self.path != self.requested:
            log.warning("mcp-assay: %s exists already; this recording goes to %s", self.requested, self.path)
        header: dict[str, Any] = {
            "type": "recording",
            "format": RECORDING_FORMAT,
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "tool": f"mcp-assay {__version__}",
            "source": source,
            "redacted": True,
            "integrity": CHAIN_FORMAT,
        }
        for key, value in (about or {}).items():
            header.setdefault(key, value)
        self.write(redactor.data(header, urls=True))

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record (already redacted), chained to the one before it."""
        if "chain" in record:
            record = {key: value for key, value in record.items() if key != "chain"}
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        data = payload_bytes(text)
        with self._lock:
            if self._handle.closed:
                return
            self._chain = hashlib.sha256(self._chain.encode() + b"\n" + data).hexdigest()  # chain_link, encoded once
            member = f',"chain":"{self._chain}"}}\n'
            self._digest.update(data[:-1])
            self._digest.update(member.encode())
            self.records += 1
            self._handle.write(text[:-1] + member)

    def exchange(self, exchange: Exchange) -> None:
        """Write a finished exchange in one go (the active suite and converters), redacted."""
        for record in records_of(exchange, self.redactor):
            self.write(record)

    def close(self) -> None:
        """Write the closing record (it says the recording was not cut short) and close the file."""
        with self._lock:
            closed = self._handle.closed
        if closed:
            return
        self.write({"type": "close", "t": _dt.datetime.now(_dt.UTC).timestamp(), "records": self.records + 1})
        with self._lock:
            if not self._handle.closed:
                self._handle.close()
                self.sha256 = self._digest.hexdigest()

    def evidence(self) -> dict[str, Any]:
        """What a report says of this recording: where it is, its sha256 (once closed), its chain."""
        shown: dict[str, Any] = {"file": str(self.path), "records": self.records, "chain": "whole"}
        if self.sha256 is not None:
            shown["sha256"] = self.sha256
        return shown


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
        record = _record_of(number, line, note)
        if record is not None:
            yield number, record


def _record_of(number: int, line: str, note: Callable[[str], None]) -> dict[str, Any] | None:
    """The JSON object on one line; ``None`` (noted, unless the line is blank) for anything else."""
    if not line.strip():
        return None
    try:
        record = jsontext.loads(line)
    except (ValueError, RecursionError) as exc:
        note(f"line {number}: not JSON ({str(exc)[:80]})")
        return None
    if not isinstance(record, dict):
        note(f"line {number}: not a JSON object")
        return None
    return record


def stream_recording(
    path: str | Path, problems: list[str], *, prefix: str = "", header: dict[str, Any] | None = None
) -> Iterator[Exchange]:
    """The exchanges of a JSONL recording as they are read (memory follows one exchange, not the file).

    Odd records go to ``problems``; the ``recording`` record is copied into ``header`` when given.
    Raises :class:`RecordingError` when the file cannot be read or holds no record at all.

    Each line is first decoded by the fast path (:func:`~mcp_assay.recording.typed.decode_record`); a line it
    declines is read as a dict by :func:`iter_records`' rules and the readers, exactly as before."""
    file = Path(path)
    if not file.is_file():
        raise RecordingError(f"{file}: no such recording")
    found: dict[str, Any] = {}
    assembler = Assembler(prefix)
    takers = _TAKERS  # Assembler.take, without its own call (once per line)
    count = exchanges = 0
    try:
        with file.open(encoding="utf-8", errors="surrogateescape") as handle:
            for number, line in enumerate(handle, start=1):
                typed = decode_record(line)
                if typed is not None:
                    count += 1
                    finished = takers[type(typed)](assembler, typed, number)
                else:
                    record = _record_of(number, line, assembler.note)
                    if record is None:
                        continue
                    count += 1
                    if record.get("type") == "recording":
                        found = record
                        continue
                    finished = assembler.feed(record, line=number)
                for exchange in finished:
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


# -- integrity: is the chain whole? ------------------------------------------------------------------
MAX_BREAKS = 10
"""Breaks of the chain named one by one; past that they are counted."""


@dataclass
class Integrity:
    """What a recording's chain says about it: whole, broken (where), or absent (an older recording)."""

    path: Path
    sha256: str = ""
    """Of the whole file, as ``sha256sum`` prints it."""
    records: int = 0
    chained: bool = False
    """The header announces a chain (:data:`CHAIN_FORMAT`)."""
    breaks: list[str] = field(default_factory=list)
    """Each record that does not follow from the ones before it: its line, what it is, and why."""
    unlisted: int = 0
    closed: bool = False
    """The recording ends with its ``close`` record, and holds as many records as it says."""
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        """``whole``, ``broken`` or ``unchained`` (no chain to verify)."""
        if not self.chained:
            return "unchained"
        return "broken" if self.breaks else "whole"

    def summary(self) -> str:
        """One line: the file's digest and what its chain says."""
        digest = f"sha256:{self.sha256}"
        if self.state == "unchained":
            return (
                f"{digest}; no digest chain (written before recordings carried one, or not by mcp-assay): it cannot "
                "be verified"
            )
        if self.state == "broken":
            more = f" (and {self.unlisted} more)" if self.unlisted else ""
            return f"{digest}; CHAIN BROKEN: {'; '.join(self.breaks)}{more}: this is not the recording that was written"
        ending = "" if self.closed else "; it has no closing record: it was cut short (a capture that was killed) or " \
            "records were removed from its end"  # fmt: skip
        return f"{digest}; chain whole ({self.records} records){ending}"

    def evidence(self) -> dict[str, Any]:
        """The report's account of this file (``Target.evidence``)."""
        shown: dict[str, Any] = {"file": str(self.path), "sha256": self.sha256, "records": self.records}
        shown["chain"] = self.state
        if self.breaks:
            shown["breaks"] = [*self.breaks, *([f"… and {self.unlisted} more"] if self.unlisted else [])]
        if self.chained and not self.closed:
            shown["closed"] = False
        return shown

    def _broken(self, text: str) -> None:
        if len(self.breaks) < MAX_BREAKS:
            self.breaks.append(text)
        else:
            self.unlisted += 1


def _named(number: int, record: Any) -> str:
    """``line 7 (the response record of exchange 'x3')``, as far as the line can be read."""
    if not isinstance(record, dict):
        return f"line {number}"
    kind, ident = record.get("type"), record.get("x")
    what = f"the {ascii(kind)[1:-1][:20]} record" if isinstance(kind, str) else "a record"
    of = f" of exchange {ascii(ident)[:40]}" if isinstance(ident, str | int) and not isinstance(ident, bool) else ""
    return f"line {number} ({what}{of})"


def _text(line: bytes) -> str:
    """A line's bytes as the text a reader reads (what is not UTF-8 kept as surrogate escapes)."""
    return line.decode("utf-8", "surrogateescape")


def _loads(text: str) -> Any:
    try:
        return jsontext.loads(text)
    except (ValueError, RecursionError):
        return None


def verify_recording(path: str | Path) -> Integrity:
    """Walk a recording's chain (one pass, memory of one line): the file's sha256 and every record that does
    not follow from the ones before it. Never raises for what the file holds; a file that cannot be read is a
    :class:`RecordingError`.

    A header that does not declare the chain while the records after it carry one was changed (the chain cannot
    be taken away by editing the header); a file none of whose records carries one is *unchained*."""
    file = Path(path)
    result = Integrity(path=file)
    digest = hashlib.sha256()
    previous = b""
    expected_records: int | None = None
    last_close = False
    header_line = 0
    try:
        with file.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                digest.update(raw)
                # the line's bytes are searched and digested as they are (its text, written back with
                # surrogateescape as payload_bytes does, is those bytes): decoded only to be read as JSON
                line = raw.rstrip(b"\r\n")
                if line[:1] != b"{" and not line.decode("utf-8", "surrogateescape").strip():
                    continue
                result.records += 1
                member = _CHAIN_MEMBER_BYTES.search(line, max(0, len(line) - 80))
                if result.records == 1:
                    header_line = number
                    record = _loads(_text(line)) if line.startswith(b'{"type":"recording"') else None
                    if isinstance(record, dict) and record.get("type") == "recording":
                        result.header = {key: value for key, value in record.items() if key != "chain"}
                        result.chained = record.get("integrity") == CHAIN_FORMAT
                    if not result.chained and member is None:
                        continue
                    result.chained = True
                elif not result.chained:
                    if member is None:
                        continue
                    result.chained = True  # the records carry a chain their header does not declare
                    result._broken(
                        f"line {header_line} (the header) does not declare the chain the records after it carry (it "
                        "was changed or replaced)"
                    )
                    previous = member.group(1)
                    continue
                last_close = line.startswith(b'{"type":"close"')
                if last_close:
                    record = _loads(_text(line))
                    count = record.get("records") if isinstance(record, dict) else None
                    expected_records = count if isinstance(count, int) and not isinstance(count, bool) else -1
                if member is None:
                    result._broken(f"{_named(number, _loads(_text(line)))} carries no chain digest")
                    previous = b""
                    continue
                # chain_link(previous, text without its member), the line's bytes as they are
                link = hashlib.sha256(previous + b"\n" + line[: member.start()] + b"}").hexdigest()
                if link.encode() != member.group(1):
                    result._broken(
                        f"{_named(number, _loads(_text(line)))} does not follow from the line before it (it was "
                        "changed, or a record before it was removed or inserted)"
                    )
                previous = member.group(1)  # follow the chain as written, so each later break is named on its own
    except OSError as exc:
        raise RecordingError(f"{file}: cannot read ({exc})") from exc
    result.sha256 = digest.hexdigest()
    result.closed = last_close and expected_records == result.records
    if result.chained and last_close and expected_records != result.records:
        result._broken(
            f"the closing record counts {expected_records} records, the file holds {result.records} (records were "
            "removed or inserted)"
        )
    return result
