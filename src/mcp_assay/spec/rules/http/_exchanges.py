"""What the Streamable HTTP rule modules share: header names, the era of an exchange, request POSTs.

The era comes from revision features, never from dates: a request is served under 2026 rules
when its ``MCP-Protocol-Version`` header names a revision with per-request versioning
(:func:`modern_route`); 2025 stream rules apply to exchanges attributed to a handshake revision.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.revisions import Revision
from mcp_assay.spec.rules.shared.common import error_code, params_of
from mcp_assay.spec.rules.shared.envelopes import meta_version
from mcp_assay.vocabulary.protocol import Era, Header, HeaderKey
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import HttpExchange, sent_by_assay

__all__ = [
    "HttpEras",
    "LEGACY_HTTP",
    "MODERN_HTTP",
    "NAMED_METHODS",
    "STANDARD_HEADERS",
    "accepted_types",
    "body_modern",
    "error_text",
    "errors_of",
    "event_stream_answers",
    "final_response",
    "first_code",
    "header_version",
    "http_eras",
    "is_modern",
    "judged_as_client",
    "later_requests",
    "legacy_exchange",
    "modern_exchange",
    "modern_route",
    "rendered",
    "request_posts",
    "setting",
    "tool_of",
]

NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""Methods whose ``Mcp-Name`` header mirrors a body field, and that field."""
STANDARD_HEADERS: dict[str, str] = {
    HeaderKey.PROTOCOL_VERSION: Header.PROTOCOL_VERSION,
    HeaderKey.METHOD: Header.METHOD,
    HeaderKey.NAME: Header.NAME,
}
MODERN_HTTP: dict[str, Any] = {"features": {"per_request_version"}}
LEGACY_HTTP: dict[str, Any] = {"features": {"handshake"}}


def is_modern(revision: Revision | None) -> bool:
    return revision is not None and revision.has("per_request_version")


def header_version(exchange: HttpExchange) -> str | None:
    value = exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION)
    return value.strip() if value is not None else None


def modern_route(exchange: HttpExchange, ctx: Context) -> bool:
    """The ``MCP-Protocol-Version`` header names a 2026-style revision: 2026 rules apply unambiguously."""
    return is_modern(ctx.spec.get(header_version(exchange)))


def body_modern(exchange: HttpExchange, ctx: Context) -> bool:
    request = exchange.request_message
    return request is not None and is_modern(ctx.spec.get(meta_version(request)))


def modern_exchange(exchange: HttpExchange, ctx: Context) -> bool:
    """The header or the body names a 2026-style revision (worked out once per exchange: many HTTP rules ask)."""
    known = ctx.view(_Eras).modern
    found = known.get(exchange.id)
    if found is None:
        found = known[exchange.id] = modern_route(exchange, ctx) or body_modern(exchange, ctx)
    return found


class _Eras:
    """Whether each exchange asked about is served under 2026 rules, by exchange id."""

    def __init__(self, ctx: Context) -> None:
        self.modern: dict[str, bool] = {}

    def advance(self, ctx: Context) -> None:
        """The log grew: what is known stays true (it depends on the exchange alone)."""


def legacy_exchange(exchange: HttpExchange, ctx: Context) -> bool:
    if modern_exchange(exchange, ctx):
        return False
    revision = ctx.exchange_revision(exchange)
    return revision is not None and revision.has("handshake")


def judged_as_client(exchange: HttpExchange) -> bool:
    """Deliberately malformed probes are the suite's doing, never held against the client."""
    return not (exchange.probe is not None and exchange.probe.invalid)


def request_posts(ctx: Context, *, client: bool = False) -> Iterator[tuple[HttpExchange, Message]]:
    """POSTed JSON-RPC requests (not notifications) with their exchange (with ``client``, those
    :func:`judged_as_client`)."""
    posts = ctx.view(_RequestPosts)
    return iter(posts.client if client else posts.posts)


class _RequestPosts:
    """The request POSTs of the log, found once for the score of HTTP rules that walk them (taking in what the log
    gained since, when a rule asks while it grows)."""

    def __init__(self, ctx: Context) -> None:
        self.posts: list[tuple[HttpExchange, Message]] = []
        self.client: list[tuple[HttpExchange, Message]] = []
        """The posts :func:`judged_as_client`."""
        self.seen = 0
        self.advance(ctx)

    def advance(self, ctx: Context) -> None:
        exchanges = ctx.log.http_exchanges()
        for exchange in exchanges[self.seen :]:
            request = exchange.request_message
            if exchange.request.method == "POST" and request is not None and request.kind is Kind.REQUEST:
                self.posts.append((exchange, request))
                if judged_as_client(exchange):
                    self.client.append((exchange, request))
        self.seen = len(exchanges)


def http_eras(ctx: Context) -> HttpEras:
    """Which of the log's HTTP exchanges (:meth:`~mcp_assay.wire.traffic.ExchangeLog.http_exchanges`) are served under
    which rules, worked out once per window: the HTTP rules ask it of every exchange they walk."""
    return ctx.view(HttpEras)


class HttpEras:
    """The ids of the log's HTTP exchanges that :func:`modern_route`, :func:`modern_exchange` and
    :func:`legacy_exchange` hold for, and the event-stream answers of the first and the last, in log order (taking
    in what the log gained since, when a rule asks while it grows).

    A rule walking the log's HTTP exchanges asks a set, not a function, of each."""

    def __init__(self, ctx: Context) -> None:
        self.routed: set[str] = set()
        self.modern: set[str] = set()
        self.legacy: set[str] = set()
        self.routed_streams: list[HttpExchange] = []
        self.legacy_streams: list[HttpExchange] = []
        self.seen = 0
        self.advance(ctx)

    def advance(self, ctx: Context) -> None:
        exchanges = ctx.log.http_exchanges()
        for exchange in exchanges[self.seen :]:
            stream = exchange.response is not None and exchange.response.is_event_stream
            routed = modern_route(exchange, ctx)
            if routed:
                self.routed.add(exchange.id)
                if stream:
                    self.routed_streams.append(exchange)
            if routed or body_modern(exchange, ctx):  # modern_exchange
                self.modern.add(exchange.id)
            elif (revision := ctx.exchange_revision(exchange)) is not None and revision.has("handshake"):
                self.legacy.add(exchange.id)  # legacy_exchange
                if stream:
                    self.legacy_streams.append(exchange)
        self.seen = len(exchanges)


def errors_of(exchange: HttpExchange) -> list[Message]:
    return [m for m in exchange.response_messages if m.kind is Kind.ERROR]


def first_code(exchange: HttpExchange) -> int | None:
    errors = errors_of(exchange)
    return error_code(errors[0]) if errors else None


def final_response(exchange: HttpExchange, request: Message) -> Message | None:
    for message in exchange.response_messages:
        if message.kind.is_response and message.id_key is not None and message.id_key == request.id_key:
            return message
    return None


def error_text(message: Message | None) -> str:
    if message is None or not isinstance(message.error, dict):
        return ""
    text = message.error.get("message")
    return text if isinstance(text, str) else ""


def rendered(value: Any) -> str:
    """A JSON rendering of a body value for a finding (``absent`` for a missing member)."""
    return "absent" if value is MISSING else json.dumps(value, default=str)


def tool_of(request: Message, ctx: Context) -> Any:
    """The definition of the tool a ``tools/call`` names, from ``tools/list`` in the log (``None``: unseen)."""
    name = params_of(request).get("name")
    tools = ctx.log.tools(request)
    if tools is None or not isinstance(name, str):
        return None
    return tools.get(name)


def setting(ctx: Context, name: str, default: float) -> float:
    value: Any = ctx.settings.get(name, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) and number >= 0 else default


def event_stream_answers(ctx: Context, era: Era) -> Iterator[tuple[HttpExchange, Message]]:
    """POST-opened SSE responses to requests, of one era (``modern`` or ``legacy``)."""
    eras = http_eras(ctx)
    ids = eras.routed if era is Era.MODERN else eras.legacy if era is Era.HANDSHAKE else set()
    for exchange, request in request_posts(ctx):
        if exchange.id in ids and exchange.response is not None and exchange.response.is_event_stream:
            yield exchange, request


def later_requests(ctx: Context, after: float) -> list[tuple[HttpExchange, Message]]:
    return [(e, r) for e, r in request_posts(ctx) if r.time > after and not sent_by_assay(e)]


def accepted_types(value: str | None) -> frozenset[str]:
    """The media types an ``Accept`` header accepts (lower-cased, those with ``q=0`` left out), read once per value:
    a client sends the same one on every request."""
    known = _ACCEPTED.get(value)
    if known is None:
        known = frozenset(_accepted_types(value))
        if len(_ACCEPTED) < 256:
            _ACCEPTED[value] = known
    return known


_ACCEPTED: dict[str | None, frozenset[str]] = {}


def _accepted_types(value: str | None) -> set[str]:
    kinds: set[str] = set()
    for item in (value or "").split(","):
        media, *parameters = [part.strip() for part in item.split(";")]
        if not media:
            continue
        quality = next((p.split("=", 1)[1].strip() for p in parameters if p.lower().startswith("q=")), "1")
        try:
            if float(quality) == 0:
                continue
        except ValueError:
            pass
        kinds.add(media.lower())
    return kinds
