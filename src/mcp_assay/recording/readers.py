"""Typed readers for recording records: one per record type, every field checked where it is read.

A recording is a file: someone may have edited it, a disk may have cut it short, a hostile peer may
have forged it. The :class:`~mcp_assay.recording.records.Assembler` therefore never reads a field
directly. Each record type has one small reader here that returns typed values (finite times,
integer statuses, string header pairs, decoded bodies) or raises :class:`BadRecord` naming the
first field that is not what the format says, so the Assembler can leave the record out with a
note instead of crashing or judging a value nobody sent.

Rules every reader follows: an absent field takes its documented default; ``null`` is accepted
only where the writer itself writes it (an exit's ``code`` and ``stdin_closed``, an event's
optional fields); a time is a finite number of seconds since the epoch that a calendar can show;
fields the format does not define are ignored (a newer writer may add some).
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsontext import is_clean, is_unicode
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
from mcp_assay.wire.sse import SseEvent

__all__ = [
    "BadRecord",
    "BodyRecord",
    "Fields",
    "RequestRecord",
    "payload_bytes",
    "ResponseRecord",
    "readable_url",
    "read_body",
    "read_end",
    "read_event",
    "read_exit",
    "read_http",
    "read_line",
    "read_observation",
    "read_response",
]

MAX_TIME: Final = 253402300799.0
"""9999-12-31T23:59:59Z: the last second a report can print as a date."""
_ABSENT: Final = object()


class BadRecord(ValueError):
    """A record field holds a value of the wrong type or outside what the format allows."""

    def __init__(self, field: str, value: Any, expected: str) -> None:
        super().__init__(field, value, expected)
        self.field = field
        self.expected = expected
        self.shown = _show(value)

    def __str__(self) -> str:
        return f"{self.field!r} is {self.shown}, not {self.expected}"


def _show(value: Any, limit: int = 40) -> str:
    """A value as JSON would spell it (``Infinity``, ``null``), cut short; never raises."""
    if value is _ABSENT:
        return "missing"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) >= 10**limit:
        return "a number too large to use"
    text = (
        ascii(value)
        if isinstance(value, str)
        else type(value).__name__
        if isinstance(value, dict | list)
        else repr(value)
    )
    return text if len(text) <= limit else text[:limit] + "…"


def payload_bytes(text: str) -> bytes:
    """Text read from a recording back to the bytes that were captured (invalid UTF-8 included)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate written as a JSON escape
        return text.encode("utf-8", "surrogatepass")


_OLD_REDACTED_PASSWORD: Final = ":[REDACTED]@"
"""How recordings before 0.1 wrote a URL's redacted password: its brackets make the authority read as an IPv6
literal, so it is read as the ``:REDACTED@`` written now."""


_URLS: dict[str, str | None] = {}
"""What :func:`readable_url` said of each URL it read (a capture names few URLs, each on every request)."""
URLS_KEPT: Final = 256
"""URLs :data:`_URLS` holds at most; past that (or for a URL longer than :data:`URL_KEPT_LENGTH`) each is parsed."""
URL_KEPT_LENGTH: Final = 2048


def readable_url(text: str) -> str | None:
    """``text`` as a URL every rule can take apart (its host and port parse), the redacted password of an older
    recording put in today's form; ``None`` when it is no such URL. Each URL is parsed once (:data:`_URLS`)."""
    known = _URLS.get(text, _ABSENT)
    if known is not _ABSENT:
        return known  # type: ignore[return-value]
    found = _parsed_url(text)
    if len(_URLS) < URLS_KEPT and len(text) <= URL_KEPT_LENGTH:
        _URLS[text] = found
    return found


def _parsed_url(text: str) -> str | None:
    """:func:`readable_url`, worked out."""
    for candidate in (text, text.replace(_OLD_REDACTED_PASSWORD, ":REDACTED@", 1)):
        try:
            parts = urlsplit(candidate)
            parts.port  # noqa: B018 - a port out of range raises only when it is read
        except ValueError:
            continue
        return candidate
    return None


class Fields:
    """Typed access to one record's fields; a present field of the wrong type raises :class:`BadRecord`."""

    __slots__ = ("_record",)

    def __init__(self, record: Mapping[str, Any]) -> None:
        self._record = record

    def _get(self, key: str) -> Any:
        return self._record.get(key, _ABSENT)

    def ident(self) -> str:
        """``x``: the exchange (or line) id, a string (a number is read as its digits)."""
        value = self._get("x")
        if value is _ABSENT:
            return ""
        if isinstance(value, str) and is_unicode(value):
            return value
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**18:
            return str(value)
        raise BadRecord("x", value, "an exchange id (a string)")

    def text(self, key: str, default: str = "") -> str:
        """A string of valid Unicode (a lone surrogate could not be written into any report)."""
        value = self._get(key)
        if value is _ABSENT:
            return default
        if not isinstance(value, str) or not is_unicode(value):
            raise BadRecord(key, value, "a string")
        return value

    def url(self, key: str = "url") -> str:
        """A request's URL: a string that parses as a URL (:func:`readable_url`)."""
        value = self.text(key)
        url = readable_url(value)
        if url is None:
            raise BadRecord(key, value, "a URL")
        return url

    def optional_text(self, key: str) -> str | None:
        value = self._get(key)
        return None if value is _ABSENT or value is None else self.text(key)

    def time(self, key: str = "t", default: float = 0.0) -> float:
        value = self._get(key)
        if value is _ABSENT:
            return default
        return self._seconds(key, value)

    def optional_time(self, key: str) -> float | None:
        value = self._get(key)
        return None if value is _ABSENT or value is None else self._seconds(key, value)

    @staticmethod
    def _seconds(key: str, value: Any) -> float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                seconds = float(value)
            except OverflowError:
                seconds = math.inf
            if math.isfinite(seconds) and 0.0 <= seconds <= MAX_TIME:
                return seconds
        raise BadRecord(key, value, "a time (seconds since the epoch)")

    def integer(
        self, key: str, *, low: int, high: int, default: int | None = None, nullable: bool = False
    ) -> int | None:
        value = self._get(key)
        if value is _ABSENT or (nullable and value is None):
            return default
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        raise BadRecord(key, value, f"an integer from {low} to {high}")

    def flag(self, key: str) -> bool:
        value = self._get(key)
        if value is _ABSENT:
            return False
        if not isinstance(value, bool):
            raise BadRecord(key, value, "true or false")
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
        value = self._get(key)
        if value is _ABSENT and default is not None:
            return default
        if isinstance(value, str) and value in choices:
            return value
        raise BadRecord(key, value, " or ".join(repr(c) for c in choices))

    def strings(self, key: str) -> tuple[str, ...]:
        value = self._get(key)
        if value is _ABSENT:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) and is_unicode(item) for item in value):
            raise BadRecord(key, value, "a list of strings")
        return tuple(value)

    def headers(self, key: str = "headers") -> Headers:
        value = self._get(key)
        if value is _ABSENT:
            return Headers()
        pairs: list[tuple[str, str]] = []
        if isinstance(value, list):  # a plain loop: every record of a long capture has a dozen of these
            for pair in value:
                if not isinstance(pair, list) or len(pair) != 2:
                    break
                name, text = pair
                if not (isinstance(name, str) and isinstance(text, str) and is_unicode(name) and is_unicode(text)):
                    break
                pairs.append((name, text))
            else:
                return Headers(pairs)
        raise BadRecord(key, value, "a list of [name, value] string pairs")

    def hop(self, key: str = "hop") -> Hop | None:
        """The side of a gateway a record crossed; absent (a recording without hops) is ``None``."""
        value = self._get(key)
        if value is _ABSENT or value is None:
            return None
        hop = Hop.read(value)
        if hop is None:
            raise BadRecord(key, value, "'front' or 'back'")
        return hop

    def mapping(self, key: str) -> dict[str, Any] | None:
        value = self._get(key)
        if value is _ABSENT:
            return None
        if not isinstance(value, dict) or not is_clean(value):
            raise BadRecord(key, value, "an object")
        return value

    def payload(self, text_key: str, b64_key: str) -> bytes:
        """A body or line: base64 in ``b64_key`` when it was not UTF-8 text, else text in ``text_key``."""
        encoded = self._get(b64_key)
        if encoded is not _ABSENT:
            if not isinstance(encoded, str):
                raise BadRecord(b64_key, encoded, "base64 text")
            try:
                return base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise BadRecord(b64_key, encoded, "base64 text") from None
        text = self._get(text_key)
        if text is _ABSENT:
            return b""
        if not isinstance(text, str):
            raise BadRecord(text_key, text, "a string")
        return payload_bytes(text)

    def data(self, key: str = "data") -> dict[str, Any]:
        """An observation's payload: an object, or any other JSON value wrapped as ``{"value": …}``."""
        value = self._get(key)
        if value is _ABSENT:
            return {}
        if not is_clean(value):
            raise BadRecord(key, value, "JSON data of valid Unicode text")
        return value if isinstance(value, dict) else {"value": value}


# -- HTTP: a request record opens an exchange; response, body, event and end records complete it ---
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRecord:
    """An ``http`` record: the request that opens an exchange."""

    request: HttpRequest
    connection: str
    probe: Probe | None
    hop: Hop | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseRecord:
    """A ``response`` record: the response head."""

    status: int
    reason: str
    headers: Headers
    time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyRecord:
    """A ``body`` record: (a part of) a response body that was not streamed."""

    body: bytes
    time: float


def read_http(fields: Fields) -> RequestRecord:
    request = HttpRequest(
        method=fields.text("method"),
        url=fields.url(),
        headers=fields.headers(),
        body=fields.payload("body", "body_b64"),
        time=fields.time(),
    )
    probe = Probe.from_record(fields.mapping("probe"))
    return RequestRecord(request=request, connection=fields.text("conn"), probe=probe, hop=fields.hop())


def read_response(fields: Fields) -> ResponseRecord:
    status = fields.integer("status", low=100, high=999, default=0)
    assert status is not None
    return ResponseRecord(status=status, reason=fields.text("reason"), headers=fields.headers(), time=fields.time())


def read_body(fields: Fields) -> BodyRecord:
    return BodyRecord(body=fields.payload("body", "body_b64"), time=fields.time())


def read_event(fields: Fields) -> SseEvent:
    return SseEvent(
        time=fields.time(),
        data=fields.optional_text("data"),
        event=fields.optional_text("event"),
        id=fields.optional_text("id"),
        retry=fields.integer("retry", low=0, high=2**53, nullable=True),
        comment=fields.optional_text("comment"),
        incomplete=fields.flag("incomplete"),
    )


_END_REASONS = tuple(reason.value for reason in EndReason)


def read_end(fields: Fields) -> Ending:
    reason = fields.choice("reason", _END_REASONS, default=EndReason.COMPLETE.value)
    return Ending(reason=EndReason(reason), time=fields.time(), detail=fields.text("detail"))


# -- stdio and observations: one record, one item ---------------------------------------------------
def read_line(fields: Fields, ident: str) -> StdioLine:
    sender = Side.CLIENT if fields.choice("from", ("client", "server")) == "client" else Side.SERVER
    return StdioLine.build(
        id=ident,
        connection=fields.text("conn"),
        sender=sender,
        time=fields.time(),
        raw=fields.payload("text", "b64"),
        probe=Probe.from_record(fields.mapping("probe")),
        hop=fields.hop(),
    )


def read_exit(fields: Fields, ident: str) -> ProcessExit:
    return ProcessExit(
        id=ident,
        connection=fields.text("conn"),
        time=fields.time(),
        code=fields.integer("code", low=-(2**31), high=2**31 - 1, nullable=True),
        stdin_closed_at=fields.optional_time("stdin_closed"),
        signals=fields.strings("signals"),
        hop=fields.hop(),
    )


def read_observation(fields: Fields, ident: str) -> Observation:
    return Observation(
        id=ident,
        time=fields.time(),
        kind=fields.text("kind", "note"),
        data=fields.data(),
        connection=fields.text("conn"),
    )
