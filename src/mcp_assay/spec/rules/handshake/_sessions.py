"""2025 sessions rebuilt from the traffic, for the handshake and session rules.

A 2025 session opens with ``initialize``; on stdio it is the rest of that connection, on
Streamable HTTP the exchanges carrying the ``Mcp-Session-Id`` the server issued with its answer,
until the server ends it (a ``DELETE`` accepted, or a first ``404`` for the id). Every handshake
rule judges one side against the sessions found here, worked out once per log.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.facts import presented
from mcp_assay.spec.rules.shared.common import http_exchange
from mcp_assay.spec.rules.shared.envelopes import answer_to, is_probe, meta_version
from mcp_assay.spec.rules.shared.headers import request_headers, response_headers
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange, answered_by_assay
from mcp_assay.wire.traffic import endpoint_of

__all__ = ["HANDSHAKE", "Session", "all_sessions", "client_sessions", "ended_sessions"]

HANDSHAKE: dict[str, Any] = {"features": {"handshake"}}


@dataclass
class Session:
    """One 2025 session as the traffic shows it."""

    initialize: Message
    answer: Message | None
    transport: str
    place: str
    """The HTTP endpoint, or the stdio connection."""
    session_id: str | None = None
    exchanges: list[HttpExchange] = field(default_factory=list)
    """HTTP exchanges that carried the session id, in capture order (the initialize exchange excluded)."""
    messages: list[Message] = field(default_factory=list)
    """Every message of the session, initialize included, in wire order."""

    @property
    def negotiated(self) -> str | None:
        result = self.answer.result if self.answer is not None and self.answer.kind is Kind.RESULT else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        return version if isinstance(version, str) else None

    @property
    def opened(self) -> float:
        """When the initialize result arrived (or the request left, when it never did)."""
        return self.answer.time if self.answer is not None else self.initialize.time


def all_sessions(ctx: Context) -> list[Session]:
    return ctx.view(_find_sessions)


def _find_sessions(ctx: Context) -> list[Session]:
    sessions: list[Session] = []
    messages = ctx.log.messages()
    by_session_id: dict[str, list[HttpExchange]] = defaultdict(list)
    for item, sid in request_headers(ctx, HeaderKey.SESSION_ID):
        if sid is not None:
            by_session_id[sid].append(item)
    by_exchange: dict[str, list[Message]] = defaultdict(list)
    by_connection: dict[str, list[Message]] = defaultdict(list)
    for message in messages:
        by_exchange[message.exchange].append(message)
        if message.transport == "stdio":
            by_connection[ctx.log.session(message) or ""].append(message)
    for request in messages:
        if request.method != "initialize" or request.kind is not Kind.REQUEST or request.sender is not Side.CLIENT:
            continue
        if meta_version(request) is not None:
            continue  # a 2026 envelope on initialize is VER-21/VER-22's business
        answer = answer_to(request, ctx)
        exchange = http_exchange(request, ctx)
        if exchange is not None:
            issued = exchange.response.headers.get(HeaderKey.SESSION_ID) if exchange.response is not None else None
            session = Session(request, answer, "http", endpoint_of(exchange), session_id=issued)
            if issued is not None:
                session.exchanges = [other for other in by_session_id.get(issued, []) if other.id != exchange.id]
                ids = [exchange.id, *(other.id for other in session.exchanges)]
                session.messages = sorted(
                    (m for ident in ids for m in by_exchange.get(ident, [])), key=lambda m: (m.time, m.index)
                )
            else:
                session.messages = list(exchange.messages)
        else:
            connection = ctx.log.session(request) or ""
            session = Session(request, answer, "stdio", connection)
            session.messages = [m for m in by_connection.get(connection, []) if m.time >= request.time]
        sessions.append(session)
    return sessions


def client_sessions(ctx: Context) -> list[Session]:
    """Sessions a client under test opened (the active suite's own sessions say nothing about a client)."""
    return [session for session in all_sessions(ctx) if not is_probe(session.initialize, ctx)]


def ended_sessions(ctx: Context) -> Mapping[str, float]:
    """Session ids the server ended, with the time it became observable (DELETE accepted, or a first 404).

    A ``404`` mcp-assay injected ends nothing on the server: the server never saw that request. Nor does a
    ``404`` to a request made with other credentials than the session's own: a server that refuses another
    principal a session it did not open (AUTH-33) keeps that session for its owner. Found once per window."""
    return ctx.view(_find_ended)


def _find_ended(ctx: Context) -> Mapping[str, float]:
    ended: dict[str, float] = {}
    owners: dict[str, tuple[str | None, tuple[tuple[str, str], ...]]] = {}
    for (exchange, sid), (_, issued) in zip(
        request_headers(ctx, HeaderKey.SESSION_ID), response_headers(ctx, HeaderKey.SESSION_ID), strict=True
    ):
        if sid is None and issued is not None:
            owners.setdefault(issued, _credentials(exchange))
        if sid is None or exchange.response is None or answered_by_assay(exchange):
            continue
        status = exchange.response.status
        deleted = exchange.request.method == "DELETE" and 200 <= status < 300
        if status == 404 and sid in owners and _credentials(exchange) != owners[sid]:
            continue  # another principal refused: says nothing of the session's end
        if deleted or status == 404:
            ended.setdefault(sid, exchange.response.time)
    return ended


def _credentials(exchange: HttpExchange) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """Who a request speaks for, as far as the traffic shows: its Authorization value and token parameters."""
    carried = presented(exchange.request)
    return carried.authorization, carried.query
