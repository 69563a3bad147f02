"""Reading a request's envelope: ``params._meta``, the answer it got, where it was sent, and key grammar.

The envelope, version, result and handshake rules all ask the same small questions of a message
(which version its ``_meta`` names, which capabilities it declares, which answer and HTTP status
it got, whether the active suite sent it, which endpoint or stdio connection it travelled on);
those answers and the ``_meta`` key grammar live here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import http_exchange
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange, sent_by_assay
from mcp_assay.wire.traffic import endpoint_of

__all__ = [
    "answer_to",
    "canonical",
    "client_capabilities",
    "client_info",
    "http_status",
    "is_probe",
    "meta_key_problem",
    "meta_objects",
    "meta_version",
    "place_of",
    "request_meta",
    "same_client",
]


_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX = rf"{_LABEL}(?:\.{_LABEL})*/"
_NAME = r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
META_KEY = re.compile(rf"(?:{_PREFIX})?{_NAME}")
"""The ``_meta`` key grammar: an optional reverse-DNS prefix ending in ``/``, then a name."""
PREFIXED_KEY = re.compile(rf"{_PREFIX}{_NAME}")

USER_DATA_MEMBERS = frozenset({"arguments", "structuredContent", "inputSchema", "outputSchema", "requestedSchema"})
"""Members whose values are application data or JSON Schemas: a ``_meta`` inside them is not MCP's."""


def request_meta(message: Message) -> dict[str, Any] | None:
    """``params._meta`` of a request or notification, when it is an object (the message read it once)."""
    kind = message.kind
    return message.meta if kind is Kind.REQUEST or kind is Kind.NOTIFICATION else None


def meta_version(message: Message) -> str | None:
    """The protocol version a request names in ``_meta`` (``None`` when absent or not a string)."""
    kind = message.kind
    meta = message.meta if kind is Kind.REQUEST or kind is Kind.NOTIFICATION else None  # request_meta, inline
    value = meta.get(MetaKey.PROTOCOL_VERSION) if meta is not None else None
    return value if isinstance(value, str) else None


def client_capabilities(message: Message) -> dict[str, Any] | None:
    """The client capabilities a 2026 request declares in ``_meta``."""
    meta = request_meta(message)
    value = meta.get(MetaKey.CLIENT_CAPABILITIES) if meta is not None else None
    return value if isinstance(value, dict) else None


def http_status(message: Message, ctx: Context) -> int | None:
    """The HTTP status of the response that carried (or answered) a message; ``None`` off HTTP."""
    exchange = http_exchange(message, ctx)
    if exchange is None or exchange.response is None:
        return None
    return exchange.response.status


def answer_to(request: Message, ctx: Context) -> Message | None:
    """The first response to a request, if the capture has one."""
    answers = ctx.log.responses_to(request)
    return answers[0] if answers else None


def is_probe(message: Message, ctx: Context) -> bool:
    """True when the active suite sent (or provoked) this message: such traffic says nothing about the client."""
    return sent_by_assay(ctx.log.get(message.exchange))


def client_info(request: Message) -> Any:
    """The ``clientInfo`` a 2026 request names in ``_meta``, or ``None``."""
    return (request_meta(request) or {}).get(MetaKey.CLIENT_INFO)


def same_client(a: Message, b: Message) -> bool:
    """Whether two requests to one place may come from one client: not when each names another ``clientInfo`` in
    ``_meta`` (two clients behind one proxy share an endpoint, and a 2026 HTTP client has no session to tell it by;
    a 2025 ``initialize`` is not compared, since a client may name itself differently in each era)."""
    first, second = client_info(a), client_info(b)
    return first is None or second is None or first == second


def place_of(message: Message, ctx: Context) -> str:
    """Where a client talks to a server: the HTTP endpoint, or the stdio connection."""
    exchange = ctx.log.get(message.exchange)
    if exchange is None:
        return ""
    if isinstance(exchange, HttpExchange):
        return endpoint_of(exchange)
    return f"stdio:{getattr(exchange, 'connection', '')}"


def canonical(value: Any) -> str:
    """Key-order-independent JSON text of a value (an absent member renders as ``null``)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=lambda _: None)


def meta_objects(message: Message) -> tuple[tuple[str, dict[str, Any]], ...]:
    """Every ``_meta`` object in a message's params or result, with its path (``result.tools[0]._meta``).

    The rules that ask run on one message after another: the last message's walk is kept for the next."""
    held = _LAST_WALK[0]
    if held[0] is message:
        return held[1]
    found = tuple(_meta_objects(message))
    _LAST_WALK[0] = (message, found)
    return found


_LAST_WALK: list[tuple[Message | None, tuple[tuple[str, dict[str, Any]], ...]]] = [(None, ())]


def _meta_objects(message: Message) -> Iterator[tuple[str, dict[str, Any]]]:
    payload = message.payload
    if not isinstance(payload, dict):
        return
    raw = message.raw
    # each _meta object is a member named "_meta" in the text the payload was read from, unless its name is spelt
    # with escapes (each \u00XX, the name's letters being ASCII): without any, the walk stops once it has found as
    # many as the text names, or does not start
    left = -1 if b"\\u00" in raw else raw.count(b'"_meta"')
    if left == 0:
        return
    if left == 1:  # the commonest: the one _meta of the params or the result, found without a walk
        for member in ("params", "result"):
            node = payload.get(member)
            if isinstance(node, dict) and "_meta" in node:
                if isinstance(node["_meta"], dict):
                    yield f"{member}._meta", node["_meta"]
                return
    for member in ("params", "result"):
        if member in payload:
            for parts, meta in _walk(payload[member], [member]):
                yield "".join(parts), meta
                left -= 1
                if left == 0:
                    return


def _walk(node: Any, parts: list[str]) -> Iterator[tuple[list[str], dict[str, Any]]]:
    """The ``_meta`` objects under ``node``; the path is kept as parts and joined only for what is found."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "_meta":
                if isinstance(value, dict):
                    yield [*parts, "._meta"], value
                continue  # values inside _meta are the owner's business, not nested _meta objects
            if key in USER_DATA_MEMBERS or not isinstance(value, dict | list):
                continue
            parts.append(f".{key}")
            yield from _walk(value, parts)
            parts.pop()
    elif isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, dict | list):
                parts.append(f"[{index}]")
                yield from _walk(item, parts)
                parts.pop()


def meta_key_problem(key: str, *, prefix_required: bool = False) -> str | None:
    """Why a key breaks the ``_meta`` key grammar, or ``None`` when it is well formed."""
    pattern = PREFIXED_KEY if prefix_required else META_KEY
    if pattern.fullmatch(key):
        return None
    if prefix_required and "/" not in key:
        return f"{key!r} has no prefix (a reverse-DNS name followed by '/')"
    if "/" in key:
        prefix, name = key.rsplit("/", 1)
        labels = prefix.split(".")
        bad = [label for label in labels if not re.fullmatch(_LABEL, label)]
        if bad or key.count("/") > 1:
            shown = bad[0] if bad else prefix
            return f"{key!r} has a malformed prefix label {shown!r} (labels start with a letter, end alphanumeric)"
        return f"{key!r} has a malformed name {name!r} (alphanumeric at both ends; '-', '_', '.' inside)"
    return f"{key!r} is not alphanumeric at both ends with only '-', '_', '.' inside"
