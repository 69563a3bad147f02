"""What an injection case decides on: the facts of one client request, and of the head of its answer.

A case lands on a kind of request (its *point*), and some actions can only be confirmed once the
answer's head is known (a stream to cut, a session id to respell). Both transports describe what
they see in these terms, so a case's point and an action's condition are written once, with no
knowledge of mitmproxy or of the tap.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.vocabulary.protocol import Era, HeaderKey, MediaType, MetaKey

__all__ = ["NOT_ORDINARY", "AnswerHead", "Point", "RequestFacts"]

NOT_ORDINARY = frozenset({"initialize", "server/discover", "subscriptions/listen", "ping"})
"""Methods whose answers are not ordinary work (the connection's setup, a subscription, a ping)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFacts:
    """What a case's point needs to know about one client message, whatever carried it."""

    transport: str
    """``http`` or ``stdio``."""
    method: str | None
    ident: Any = None
    """The request's ``id`` (``None`` for a notification)."""
    is_request: bool = False
    era: Era | None = None
    """:attr:`Era.MODERN` for a request carrying the 2026 ``_meta`` version, else :attr:`Era.HANDSHAKE`."""
    version: str | None = None
    """The version the request declares (2026 ``_meta``; else the 2025 header or ``initialize`` offer)."""
    session_id: str | None = None
    streams: bool = False
    """The client accepts an event stream for the answer (HTTP ``Accept``; always on stdio)."""
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """The message's ``params`` (empty when it has none): for a point that depends on what is asked."""
    capabilities: Mapping[str, Any] | None = field(default=None, compare=False)
    """The capabilities the client declares on this message (2026: ``_meta`` clientCapabilities; 2025: an
    ``initialize``'s ``capabilities``); ``None`` when it declares none here."""

    @classmethod
    def of(cls, body: bytes, *, transport: str, headers: Mapping[str, str] | None = None) -> RequestFacts | None:
        """The facts of a JSON-RPC message (``None`` for anything that is not one JSON object)."""
        try:
            payload = json.loads(body)
        except ValueError:
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("method"), str):
            return None
        raw_params = payload.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        declared = meta.get(MetaKey.PROTOCOL_VERSION)
        lowered = {name.lower(): value for name, value in (headers or {}).items()}
        version: str | None
        if isinstance(declared, str):
            era, version = Era.MODERN, declared
        else:
            offered = params.get("protocolVersion") if payload["method"] == "initialize" else None
            era = Era.HANDSHAKE
            version = offered if isinstance(offered, str) else lowered.get(HeaderKey.PROTOCOL_VERSION)
        accept = lowered.get(HeaderKey.ACCEPT, "")
        capabilities = meta.get(MetaKey.CLIENT_CAPABILITIES)  # 2026: on every request
        if era is Era.HANDSHAKE:
            capabilities = params.get("capabilities") if payload["method"] == "initialize" else None
        return cls(
            transport=transport,
            method=payload["method"],
            ident=payload.get("id"),
            is_request="id" in payload,
            era=era,
            version=version,
            session_id=lowered.get(HeaderKey.SESSION_ID),
            streams=transport == "stdio" or MediaType.EVENT_STREAM in accept or "*/*" in accept,
            params=params,
            capabilities=capabilities if isinstance(capabilities, dict) else None,
        )

    @property
    def ordinary(self) -> bool:
        """A request for ordinary work (not the connection's setup, a subscription or a ping)."""
        return self.is_request and self.method not in NOT_ORDINARY


@dataclass(frozen=True, slots=True)
class Point:
    """Where a case lands: a kind of request, in words (for the docs) and as a test."""

    text: str
    test: Callable[[RequestFacts], bool]

    def __call__(self, facts: RequestFacts) -> bool:
        return self.test(facts)


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerHead:
    """The head of the server's answer to a candidate request (HTTP), as an action's condition reads it."""

    status: int
    content_type: str = ""
    http1: bool = True
    """HTTP/1 keeps header names as sent; HTTP/2 and later write them in lower case."""
    names: frozenset[str] = frozenset()
    """The answer's header names, lowercased."""

    @property
    def streamed(self) -> bool:
        return self.content_type.lower().startswith(MediaType.EVENT_STREAM)
