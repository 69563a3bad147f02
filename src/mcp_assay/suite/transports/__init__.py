"""What the suite's two transports share: the reply to one request, stream control, and failures.

A transport only moves bytes and records what crossed the wire (every HTTP exchange, every stdio
line, the process ending); it never judges. Failures of the *target* as a thing to talk to (it
cannot be reached, it exited, it never answered) are raised as :class:`~mcp_assay.vocabulary.errors.TransportFailure` so
the
runner can report them as what they are instead of as protocol findings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp_assay.wire.jsonrpc import MISSING, IdKey, Kind, Message
from mcp_assay.wire.model import Exchange, Headers, Probe

__all__ = [
    "Recorder",
    "Reply",
    "StreamControl",
    "Transport",
]


Recorder = Callable[[Exchange], None]
"""Where a transport puts what it saw, as it sees it."""


@dataclass
class StreamControl:
    """How long to keep a response stream open, and when to close it (listen streams, slow calls)."""

    budget: float
    """Seconds to keep the stream open at most."""
    stop: Callable[[Sequence[Message]], bool] = lambda messages: False
    """Called with the server messages so far; ``True`` closes the stream (after ``linger``)."""
    linger: float = 0.0
    """Seconds to keep observing after ``stop`` said yes (e.g. to see that nothing else arrives)."""


@dataclass
class Reply:
    """What came back for one request the suite sent."""

    exchange: str
    """Id of the HTTP exchange, or of the stdio line that carried the request."""
    request: Message | None
    response: Message | None = None
    """The JSON-RPC response with the request's id (or an id-less error answering it)."""
    messages: tuple[Message, ...] = ()
    """Every server message that belongs to this request (notifications included)."""
    status: int | None = None
    """HTTP status (``None`` on stdio)."""
    headers: Headers = field(default_factory=Headers)
    content_type: str | None = None
    closed_by_client: bool = False
    body: bytes = b""

    @property
    def result(self) -> Any:
        return self.response.result if self.response is not None and self.response.kind is Kind.RESULT else MISSING

    @property
    def ok(self) -> bool:
        """A JSON-RPC result object came back."""
        return isinstance(self.result, dict)

    @property
    def error(self) -> Mapping[str, Any] | None:
        if self.response is not None and self.response.kind is Kind.ERROR and isinstance(self.response.error, dict):
            return self.response.error
        return None

    @property
    def error_code(self) -> int | None:
        error = self.error
        code = error.get("code") if error is not None else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    def describe(self) -> str:
        """``HTTP 404, error -32601`` / ``result`` / ``no JSON-RPC answer`` for notes and reasons."""
        parts = []
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.response is None:
            parts.append("no JSON-RPC answer")
        elif self.response.kind is Kind.ERROR:
            message = self.error.get("message") if self.error else None
            parts.append(f"error {self.error_code}" + (f" ({str(message)[:120]})" if message else ""))
        elif self.response.kind is Kind.RESULT:
            parts.append("a result")
        else:
            parts.append(self.response.describe())
        return ", ".join(parts)


def final_response(messages: Sequence[Message], expect: IdKey | None) -> Message | None:
    """The response answering ``expect``; an id-less error counts when nothing else answers."""
    idless: Message | None = None
    for message in messages:
        if not message.kind.is_response:
            continue
        if expect is not None and message.id_key == expect:
            return message
        if message.kind is Kind.ERROR and message.id is MISSING and idless is None:
            idless = message
        if message.kind is Kind.ERROR and message.id is None and idless is None:
            idless = message
    if idless is None:
        # an array answering a batch probe still ends the wait
        idless = next((m for m in messages if m.kind is Kind.BATCH), None)
    return idless


class Transport(Protocol):
    """The operations probes use, whichever wire is underneath."""

    kind: str

    async def send(
        self,
        body: bytes,
        *,
        probe: Probe,
        expect: IdKey | None,
        headers: Mapping[str, str | bytes] | None = None,
        stream: StreamControl | None = None,
        timeout: float | None = None,
        wait: bool = True,
    ) -> Reply: ...
