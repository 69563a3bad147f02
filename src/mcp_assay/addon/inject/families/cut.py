"""Stream cuts: one event-stream answer ended before its final response.

2026-07-28 (HTTP-36): the first 2026 request for ordinary work whose client accepts an event
stream is answered, on the server's behalf, with a stream that ends before any answer; the
request never reaches the server, so the client's re-sent work runs once. A correct client
re-sends it as a new request under a new id, never resumes, and does not hang.

2025-11-25 (HTTP-43): the server's own event-stream answer to the first 2025 request for ordinary
work is kept back; the client gets the events before the final response, then an event carrying
an ``id`` and ``retry:``, then the end of the stream. When the client resumes with ``GET`` and
that ``Last-Event-ID`` (after waiting ``retry`` ms, HTTP-43), mcp-assay answers the ``GET`` with
the rest of the server's stream, so the work completes and the server saw one request.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from mcp_assay.addon.inject.actions import CutStream, Made, Reply
from mcp_assay.addon.inject.fault import Fault, FaultFamily, Reaction
from mcp_assay.addon.inject.points import Point
from mcp_assay.spec.rules.http.legacy_streams import client_waits_the_retry_interval
from mcp_assay.spec.rules.http.streams import client_reissues_broken_streams_as_new_requests
from mcp_assay.vocabulary.protocol import Era, MediaType
from mcp_assay.wire.sse import SseEvent, parse_sse

__all__ = ["FAULTS", "CUT_LEGACY", "CUT_MODERN", "FAMILY", "RETRY_MS", "Resumable", "cut_legacy", "cut_modern"]

FAMILY = FaultFamily("cut", 50, "end one event-stream answer before its final response (HTTP)")

RETRY_MS = 500
"""The ``retry:`` a 2025 cut announces: how long the client must wait before resuming."""
_HTTP = frozenset({"http"})
_WORK = "the first request for ordinary work that accepts an event stream"

CUT_MODERN = Fault(
    name="inject-stream-cut",
    family=FAMILY,
    era=Era.MODERN,
    transports=_HTTP,
    point=Point(f"{_WORK} (the server never sees it)", lambda facts: facts.ordinary and facts.streams),
    action=Reply(
        status=200,
        make=lambda facts, _: Made(cut_modern()),
        content_type=MediaType.EVENT_STREAM,
        does="answers, in the server's place, with an event stream that ends before any answer",
    ),
    expects="an event stream ended before its answer, on the server's behalf: the client re-sends the work under a "
    "new id, without resuming (HTTP-36)",
    reactions=(
        Reaction(
            client_reissues_broken_streams_as_new_requests,
            "the client re-sends the same work as a new request under a new id; a `GET` or `Last-Event-ID` "
            "resumption, the same id, or other work without the re-send fails; nothing more is not verified",
        ),
    ),
    rank=50,
    note="ended the event stream of {method} before its answer",
)

CUT_LEGACY = Fault(
    name="inject-stream-cut",
    family=FAMILY,
    era=Era.HANDSHAKE,
    transports=_HTTP,
    point=Point(f"{_WORK}, when the server answers it with one", lambda facts: facts.ordinary and facts.streams),
    action=CutStream(
        retry_ms=RETRY_MS,
        resumption="inject-stream-resume",
        does=f"passes on the server's events before its final response, then an event with an `id` and "
        f"`retry: {RETRY_MS}`, and ends the stream; a `GET` with that `Last-Event-ID` gets the rest",
    ),
    expects=f"the server's event stream ended early after an event with an id and retry: {RETRY_MS}: the client "
    f"waits at least {RETRY_MS} ms, then resumes with GET and Last-Event-ID (HTTP-43)",
    reactions=(
        Reaction(
            client_waits_the_retry_interval,
            "the client's `GET` that resumes the session comes at least `retry` ms after the stream ended; no "
            "resumption is not verified",
        ),
    ),
    rank=51,
    note="cutting the event stream of {method}",
)

FAULTS = (CUT_MODERN, CUT_LEGACY)


def cut_modern() -> bytes:
    """A stream that carries nothing but a comment and ends."""
    return b": mcp-assay ended this stream before its answer\n\n"


@dataclass(frozen=True, slots=True)
class Resumable:
    """What a 2025 cut kept back, handed out to the ``GET`` that resumes after ``event_id``."""

    event_id: str
    rest: bytes
    """The rest of the server's stream, from its final response on."""


def cut_legacy(body: bytes, request_id: Any, retry_ms: int = RETRY_MS) -> tuple[bytes, Resumable] | None:
    """Split the server's stream: what the client gets (the events before the final response, then an event
    with an ``id`` and ``retry``) and what a resumption gets; ``None`` when no final response is there to keep."""
    events = list(parse_sse(body, time=0.0))
    for index, event in enumerate(events):
        if _answers(event, request_id):
            event_id = f"mcp-assay-cut-{secrets.token_hex(4)}"
            marker = SseEvent(time=0.0, id=event_id, retry=retry_ms, data="")
            sent = b"".join(encode_event(item) for item in [*events[:index], marker])
            return sent, Resumable(event_id, b"".join(encode_event(item) for item in events[index:]))
    return None


def _answers(event: SseEvent, request_id: Any) -> bool:
    if not event.carries_message:
        return False
    try:
        message = json.loads(event.data or "")
    except ValueError:
        return False
    return isinstance(message, dict) and ("result" in message or "error" in message) and message.get("id") == request_id


def encode_event(event: SseEvent) -> bytes:
    """One event as ``text/event-stream`` text."""
    lines = []
    if event.comment is not None:
        lines.append(f": {event.comment}")
    if event.event is not None:
        lines.append(f"event: {event.event}")
    if event.id is not None:
        lines.append(f"id: {event.id}")
    if event.retry is not None:
        lines.append(f"retry: {event.retry}")
    if event.data is not None:
        lines.extend(f"data: {line}" for line in event.data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode()
