"""The fast path of reading a recording: records decoded straight into typed structs.

Reading a long recording is mostly reading a few record types (``http``, ``response``, ``body``,
``event``, ``end``, ``observation``, ``line``, ``exit``) hundreds of thousands of times. The readers in
:mod:`mcp_assay.recording.readers` check each field of a decoded dict in Python; here ``msgspec``
decodes a line into a struct whose declared types and ranges are exactly what those readers accept,
so a record that decodes is one the readers would have read to the same values, and the checking
happens in C.

Anything the structs do not settle is *declined* (:func:`decode_record` returns ``None``) and takes
the readers' path unchanged, which reads it, or names its first bad field, as it always did: a field
of the wrong type or out of range, an exchange id written as a number, text that is not valid
Unicode, base64 bodies, a record nested deeper than :data:`~mcp_assay.wire.jsontext.NESTING_CHECKED`,
the ``recording`` and ``close`` records and any type this module does not know. ``msgspec`` keeps the
last of two equal keys, as the readers' :func:`~mcp_assay.wire.jsontext.loads` does, and refuses
lone surrogate escapes and numbers past the float range, which the readers refuse too.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

from mcp_assay.recording.readers import MAX_TIME, payload_bytes, readable_url
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsontext import NESTING_CHECKED
from mcp_assay.wire.model import (
    Ending,
    EndReason,
    Headers,
    Hop,
    HttpRequest,
    Observation,
    Probe,
    ProcessExit,
    StdioLine,
)
from mcp_assay.wire.slots import slot_setters
from mcp_assay.wire.sse import SseEvent

__all__ = [
    "BodyFields",
    "EndFields",
    "EventFields",
    "ExitFields",
    "HttpFields",
    "LineFields",
    "ObservationFields",
    "ResponseFields",
    "TypedRecord",
    "UNSET",
    "decode_record",
    "ending_of",
    "event_of",
    "exit_of",
    "hop_of",
    "line_of",
    "observation_of",
    "payload_of",
    "probe_of",
    "request_of",
]

UNSET: Final = msgspec.UNSET

Time = Annotated[float, msgspec.Meta(ge=0.0, le=MAX_TIME)]
"""``Fields.time``: a finite number of seconds since the epoch a calendar can show (a boolean is no number)."""
Status = Annotated[int, msgspec.Meta(ge=100, le=999)]
Retry = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
ExitCode = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
HopName = Literal["front", "back"]
EndName = Literal["complete", "client-disconnect", "server-disconnect", "error", "open"]
"""The values of :class:`~mcp_assay.wire.model.EndReason` (a test holds them equal)."""


class _Record(msgspec.Struct, tag_field="type", frozen=True):
    """Fields every record has: the exchange id (a string; a number takes the readers' path) and the time."""

    x: str = ""
    t: Time = 0.0


class HttpFields(_Record, tag="http", frozen=True):
    conn: str = ""
    method: str = ""
    url: str = ""
    headers: list[tuple[str, str]] = []
    body: str = ""
    body_b64: str | msgspec.UnsetType = UNSET
    probe: dict[str, Any] | msgspec.UnsetType = UNSET
    hop: HopName | None = None


class ResponseFields(_Record, tag="response", frozen=True):
    status: Status = 0
    reason: str = ""
    headers: list[tuple[str, str]] = []


class BodyFields(_Record, tag="body", frozen=True):
    body: str = ""
    body_b64: str | msgspec.UnsetType = UNSET


class EventFields(_Record, tag="event", frozen=True):
    data: str | None = None
    event: str | None = None
    id: str | None = None
    retry: Retry | None = None
    comment: str | None = None
    incomplete: bool = False


class EndFields(_Record, tag="end", frozen=True):
    reason: EndName = "complete"
    detail: str = ""


class ObservationFields(_Record, tag="observation", frozen=True):
    kind: str = "note"
    data: Any = UNSET
    conn: str = ""


class LineFields(_Record, tag="line", frozen=True, kw_only=True):
    sender: Literal["client", "server"] = msgspec.field(name="from")
    conn: str = ""
    text: str = ""
    b64: str | msgspec.UnsetType = UNSET
    probe: dict[str, Any] | msgspec.UnsetType = UNSET
    hop: HopName | None = None


class ExitFields(_Record, tag="exit", frozen=True):
    conn: str = ""
    code: ExitCode | None = None
    stdin_closed: Time | None = None
    signals: list[str] = []
    hop: HopName | None = None


TypedRecord = (
    HttpFields | ResponseFields | BodyFields | EventFields | EndFields | ObservationFields | LineFields | ExitFields
)
_decoder: Final = msgspec.json.Decoder(TypedRecord)


def decode_record(line: str) -> TypedRecord | None:
    """One JSONL line as a typed record, or ``None`` when the readers' path must read it (see the module)."""
    if len(line) > NESTING_CHECKED and line.count("{") + line.count("[") > NESTING_CHECKED:
        return None  # (a shorter line cannot open that many brackets)
    try:
        record = _decoder.decode(line)
    except (msgspec.DecodeError, UnicodeEncodeError):  # ValidationError is a DecodeError
        return None
    # types compared by identity: ``isinstance`` asks a struct's metaclass, several times slower
    if type(record) is HttpFields:
        if record.body_b64 is not UNSET:
            return None
        url = readable_url(record.url)
        if url is None:
            return None
        if url != record.url:  # an older recording's redacted password, in today's form
            record = msgspec.structs.replace(record, url=url)
    elif type(record) is BodyFields:
        if record.body_b64 is not UNSET:
            return None
    elif type(record) is LineFields:
        if record.b64 is not UNSET:
            return None
    return record


# -- a typed record as the readers would have read it ------------------------------------------------
def hop_of(name: HopName | None) -> Hop | None:
    """``hop``, as :meth:`~mcp_assay.recording.readers.Fields.hop` reads it."""
    return Hop(name) if name is not None else None


def probe_of(value: dict[str, Any] | msgspec.UnsetType) -> Probe | None:
    """``probe``, as the readers read it."""
    return Probe.from_record(value) if isinstance(value, dict) else None


def payload_of(text: str) -> bytes:
    """A body or a line's text, as :meth:`~mcp_assay.recording.readers.Fields.payload` reads it."""
    return payload_bytes(text) if text else b""


def request_of(fields: HttpFields) -> HttpRequest:
    """The request :func:`~mcp_assay.recording.readers.read_http` reads from the same record (its connection, probe
    and hop are read by :class:`~mcp_assay.recording.records.Assembler` with :func:`probe_of` and :func:`hop_of`)."""
    return HttpRequest(
        method=fields.method,
        url=fields.url,
        headers=Headers.of_text(fields.headers),
        body=payload_bytes(fields.body) if fields.body else b"",
        time=fields.t,
    )


_EVENT_FIELDS: Final = slot_setters(SseEvent, "time", "data", "event", "id", "retry", "comment", "incomplete")
"""The slot setters of :class:`~mcp_assay.wire.sse.SseEvent`'s fields (a test reads every field of an event made
here and by the readers, so a field added there and not here fails it)."""


def event_of(fields: EventFields) -> SseEvent:
    """:func:`~mcp_assay.recording.readers.read_event` of the same record: the event its generated ``__init__``
    would make, its fields set through their slots (half the cost: a stream is read one event at a time)."""
    set_time, set_data, set_event, set_id, set_retry, set_comment, set_incomplete = _EVENT_FIELDS
    event: SseEvent = object.__new__(SseEvent)
    set_time(event, fields.t)
    set_data(event, fields.data)
    set_event(event, fields.event)
    set_id(event, fields.id)
    set_retry(event, fields.retry)
    set_comment(event, fields.comment)
    set_incomplete(event, fields.incomplete)
    return event


_END_REASONS: Final = {reason.value: reason for reason in EndReason}
"""Each :class:`~mcp_assay.wire.model.EndReason` by its value (a look-up, not the enum's call)."""


def ending_of(fields: EndFields) -> Ending:
    return Ending(reason=_END_REASONS[fields.reason], time=fields.t, detail=fields.detail)


def line_of(fields: LineFields, ident: str) -> StdioLine:
    """:func:`~mcp_assay.recording.readers.read_line` of the same record."""
    return StdioLine.build(
        id=ident,
        connection=fields.conn,
        sender=Side.CLIENT if fields.sender == "client" else Side.SERVER,
        time=fields.t,
        raw=payload_of(fields.text),
        probe=probe_of(fields.probe),
        hop=hop_of(fields.hop),
    )


def exit_of(fields: ExitFields, ident: str) -> ProcessExit:
    """:func:`~mcp_assay.recording.readers.read_exit` of the same record."""
    return ProcessExit(
        id=ident,
        connection=fields.conn,
        time=fields.t,
        code=fields.code,
        stdin_closed_at=fields.stdin_closed,
        signals=tuple(fields.signals),
        hop=hop_of(fields.hop),
    )


def observation_of(fields: ObservationFields, ident: str) -> Observation:
    """:func:`~mcp_assay.recording.readers.read_observation` of the same record."""
    data = fields.data
    return Observation(
        id=ident,
        time=fields.t,
        kind=fields.kind,
        data={} if data is UNSET else data if isinstance(data, dict) else {"value": data},
        connection=fields.conn,
    )
