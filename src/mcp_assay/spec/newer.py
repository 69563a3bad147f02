"""Revisions newer than the window that a peer speaks: said first, because nothing new in them is judged.

mcp-assay judges the revisions it has schemas for (its *window*). A server may already serve a revision
published after them (``2027-…``): its traffic is then judged against what mcp-assay knows, and a reader
of the report must be told so before anything else. This module watches the traffic for a revision
newer than the newest in the window that a server *offers* (``server/discover``'s ``supportedVersions``,
the ``supported`` list of an unsupported-version error, the version ``initialize`` settles on) or
*accepts* (a request declaring it in ``_meta``, sent by a real client, answered with a result). One look
per message, and only the few revisions found are kept, so it costs nothing on a long capture.

What mcp-assay itself answered (an injected fault) says nothing about the server and is skipped. The
report's first lines name what was found (``Target.unknown_revisions``, rendered by
:func:`mcp_assay.report.about.newer_line`), with the window and how to learn whether newer schemas exist
(``mcp-assay spec pull --check``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcp_assay.spec.sources import is_revision_name
from mcp_assay.vocabulary.protocol import ErrorCode, MetaKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import IdKey, Kind, Message
from mcp_assay.wire.model import Exchange, HttpExchange, answered_by_assay, sent_by_assay

__all__ = ["NewerRevisions"]

MAX_PENDING = 1_000
"""Requests declaring a newer revision whose answer is awaited over stdio (bounded: a client may never get one)."""


class NewerRevisions:
    """The revisions newer than ``newest`` a server offered or accepted, and where each was first seen."""

    def __init__(self, newest: str) -> None:
        self._newest = newest
        self.found: dict[str, str] = {}
        """Revision -> how the server showed it speaks it (the first time)."""
        self._pending: dict[tuple[str, IdKey], str] = {}
        """Stdio requests of a real client declaring a newer revision, by connection and id, until answered."""

    def _newer(self, value: Any) -> str | None:
        return value if isinstance(value, str) and is_revision_name(value) and value > self._newest else None

    def _note(self, revision: str | None, how: str) -> None:
        if revision is not None and revision not in self.found:
            self.found[revision] = how

    def see_all(self, exchanges: Iterable[Exchange]) -> None:
        for exchange in exchanges:
            self.see(exchange)

    def see(self, exchange: Exchange) -> None:
        """Look at one finished exchange (an HTTP exchange, a stdio line; anything else is ignored)."""
        if answered_by_assay(exchange):
            return
        messages = exchange.messages if hasattr(exchange, "messages") else ()
        for message in messages:
            if message.sender is Side.SERVER and message.kind in (Kind.RESULT, Kind.ERROR):
                self._offered(message)
        if isinstance(exchange, HttpExchange):
            request = exchange.request_message
            declared = self._declared(request) if request is not None and not sent_by_assay(exchange) else None
            if declared and any(message.kind is Kind.RESULT for message in exchange.response_messages):
                self._note(declared, "it answered a request declaring it with a result")
            return
        for message in messages:  # a stdio line: the answer comes on a line of its own
            if message.id_key is None:
                continue
            key = (getattr(exchange, "connection", ""), message.id_key)
            if message.sender is Side.CLIENT and message.kind is Kind.REQUEST and not sent_by_assay(exchange):
                declared = self._declared(message)
                if declared and len(self._pending) < MAX_PENDING:
                    self._pending[key] = declared
            elif message.sender is Side.SERVER and key in self._pending:
                declared = self._pending.pop(key)
                if message.kind is Kind.RESULT:
                    self._note(declared, "it answered a request declaring it with a result")

    def _declared(self, message: Message) -> str | None:
        params = message.params if isinstance(message.params, dict) else {}
        meta = params.get("_meta")
        return self._newer(meta.get(MetaKey.PROTOCOL_VERSION)) if isinstance(meta, dict) else None

    def _offered(self, message: Message) -> None:
        result, error = message.result, message.error
        if isinstance(result, dict):
            versions = result.get("supportedVersions")
            for version in versions if isinstance(versions, list) else ():
                self._note(self._newer(version), "server/discover lists it in supportedVersions")
            if "serverInfo" in result or "capabilities" in result:
                self._note(self._newer(result.get("protocolVersion")), "initialize settled on it")
        if isinstance(error, dict) and error.get("code") == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            data = error.get("data")
            supported = data.get("supported") if isinstance(data, dict) else None
            for version in supported if isinstance(supported, list) else ():
                self._note(self._newer(version), "an unsupported-version error lists it as supported")
