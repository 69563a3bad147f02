"""The vocabulary of the stream rules: notification names, id equality, listens and cancellations.

Cancellation, subscription, logging and progress rules compare ids and tokens by JSON type
(``1`` is not ``"1"``), read ``_meta`` values, rank log levels, and talk about the same two
things: a ``subscriptions/listen`` request with the server messages that belong to it, and a
client's cancellation of one of its requests. :mod:`._streams` finds them in a log.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import MISSING, Message, id_key
from mcp_assay.wire.model import HttpExchange

__all__ = [
    "ACKNOWLEDGED",
    "CANCELLED",
    "CHANGE_FILTERS",
    "CHANGE_NOTIFICATIONS",
    "Cancellation",
    "LISTEN",
    "LOG_LEVELS",
    "LOG_MESSAGE",
    "Listen",
    "PROGRESS",
    "RESOURCE_UPDATED",
    "covers",
    "describe_id",
    "grace",
    "level_rank",
    "loosely_same_id",
    "meta_of",
    "meta_value",
    "request_id_of",
    "same_id",
    "server_messages",
]

LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"
LOG_MESSAGE = "notifications/message"
RESOURCE_UPDATED = "notifications/resources/updated"
CHANGE_FILTERS = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}
"""List-changed notification -> the listen filter flag that opts into it."""
CHANGE_NOTIFICATIONS = frozenset({*CHANGE_FILTERS, RESOURCE_UPDATED})
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""Syslog severities, lowest first."""


def same_id(a: Any, b: Any) -> bool:
    """JSON-RPC ids (and tokens) are equal only with the same JSON type: ``1`` is not ``"1"``."""
    key = id_key(a)
    return key is not None and key == id_key(b)


def loosely_same_id(a: Any, b: Any) -> bool:
    """Equal once both are written as text (``1`` and ``"1"``): a type confusion, not a match."""
    if isinstance(a, bool) or isinstance(b, bool) or a is MISSING or b is MISSING:
        return False
    return isinstance(a, int | str) and isinstance(b, int | str) and str(a) == str(b)


def meta_of(message: Message) -> dict[str, Any]:
    """``params._meta`` of a request or notification, ``result._meta`` of a result (``{}`` if absent)."""
    return message.meta or {}


def meta_value(message: Message, key: str) -> Any:
    return meta_of(message).get(key, MISSING)


def level_rank(level: Any) -> int | None:
    return LOG_LEVELS.index(level) if isinstance(level, str) and level in LOG_LEVELS else None


def describe_id(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}" (string)'
    if isinstance(value, bool):
        return f"{value!r} (boolean)"
    if isinstance(value, int):
        return f"{value} (integer)"
    return f"{value!r} ({type(value).__name__})"


@dataclass(eq=False)
class Listen:
    """One ``subscriptions/listen`` request and everything the server sent for it."""

    request: Message
    place: str
    exchange: HttpExchange | None
    """The HTTP exchange whose response is the listen stream (``None`` on stdio)."""
    messages: list[Message] = field(default_factory=list)
    """Server messages belonging to the subscription, in order: the stream (HTTP) or the tagged lines (stdio)."""
    end: float = math.inf
    """When the subscription ended (``inf`` while still open at the end of the capture)."""
    ended_by: str = "open"
    """``open``, ``client`` (stream closed or cancelled), ``result``, ``error``, ``server-cancel``,
    ``server-close`` (the server ended the HTTP stream), ``transport``."""

    @property
    def id(self) -> Any:
        return self.request.id

    @property
    def filter(self) -> dict[str, Any]:
        params = self.request.params
        wanted = params.get("notifications") if isinstance(params, dict) else None
        return wanted if isinstance(wanted, dict) else {}

    def open_at(self, time: float) -> bool:
        return self.request.time <= time <= self.end

    def wants(self, notification: Message) -> bool:
        """Whether the listen request opted into this notification (by type, and URI for updates)."""
        method = notification.method
        if method in CHANGE_FILTERS:
            return self.filter.get(CHANGE_FILTERS[method]) is True
        if method == RESOURCE_UPDATED:
            uri = notification.params.get("uri") if isinstance(notification.params, dict) else None
            return isinstance(uri, str) and covers(self.filter.get("resourceSubscriptions"), uri)
        return False


def covers(subscribed: Any, uri: str) -> bool:
    """``uri`` is a subscribed URI or one of its sub-resources (the schema allows the latter)."""
    if not isinstance(subscribed, list):
        return False
    for item in subscribed:
        if not isinstance(item, str):
            continue
        if uri == item or uri.startswith(item.rstrip("/") + "/"):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Cancellation:
    """A client's cancellation of one of its requests, as the revision and transport define it."""

    request: Message
    time: float
    how: str
    """``disconnect`` (2026 HTTP: the client closed the response stream) or ``notification``."""
    notice: Message | None = None
    """The ``notifications/cancelled`` message, for ``notification`` cancellations."""


def request_id_of(message: Message) -> Any:
    return params_of(message).get("requestId", MISSING)


def grace(ctx: Context) -> float:
    """Seconds after a cancellation during which messages already on their way are tolerated (A3)."""
    value = ctx.settings.get("cancel_grace_s", 1.0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 1.0


def server_messages(messages: Iterable[Message]) -> Iterator[Message]:
    return (message for message in messages if message.sender is Side.SERVER)
