"""Small helpers the rule modules share."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from mcp_assay.spec.checks import Finding, failed, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.validator import SchemaIssue
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import HttpExchange

__all__ = [
    "http_exchange",
    "on_connection",
    "is_int",
    "issues_text",
    "params_of",
    "schema_finding",
]


MAX_ISSUES = 4


def params_of(message: Message) -> dict[str, Any]:
    """``params`` when it is an object, else ``{}``."""
    return message.params if isinstance(message.params, dict) else {}


def is_int(value: Any) -> bool:
    """A JSON integer (``1``), not a boolean and not ``1.0``."""
    return isinstance(value, int) and not isinstance(value, bool)


def issues_text(issues: Iterable[SchemaIssue]) -> str:
    items = list(issues)
    text = "; ".join(issue.render() for issue in items[:MAX_ISSUES])
    if len(items) > MAX_ISSUES:
        text += f"; … {len(items) - MAX_ISSUES} more"
    return text


class ConnectionIndex:
    """MCP HTTP exchanges by client connection, in the order their requests left, found by time."""

    def __init__(self, ctx: Context) -> None:
        grouped: dict[str, list[HttpExchange]] = {}
        for exchange in ctx.log.http_exchanges():
            if exchange.connection:
                grouped.setdefault(exchange.connection, []).append(exchange)
        self._exchanges = {key: sorted(items, key=lambda item: item.request.time) for key, items in grouped.items()}
        self._times = {key: [item.request.time for item in items] for key, items in self._exchanges.items()}

    def between(self, connection: str, start: float, end: float) -> list[HttpExchange]:
        """Exchanges on ``connection`` whose request left strictly between ``start`` and ``end``."""
        times = self._times.get(connection, [])
        low, high = bisect_right(times, start), bisect_left(times, end)
        return self._exchanges.get(connection, [])[low:high]


def on_connection(ctx: Context, connection: str, start: float, end: float) -> list[HttpExchange]:
    """HTTP exchanges sent on one client connection between two moments (an index built once per log)."""
    return ctx.view(ConnectionIndex).between(connection, start, end)


def http_exchange(message: Message, ctx: Context) -> HttpExchange | None:
    exchange = ctx.log.get(message.exchange)
    return exchange if isinstance(exchange, HttpExchange) else None


def schema_finding(message: Message, ctx: Context, *, what: str, ignore_null_id: bool = False) -> Finding:
    """Validate ``message`` against its definition and say how it went."""
    validation = ctx.validate(message)
    if validation is None:
        return unverified(f"cannot tell which revision {message.describe()} belongs to, so no schema applies", message)
    issues = validation.issues
    if ignore_null_id and message.id is None:
        issues = tuple(issue for issue in issues if issue.path != "id")
    if not issues:
        if validation.note and "was not seen" in validation.note:
            return unverified(f"{what}: {validation.note}; only the JSON-RPC envelope could be checked", message)
        return passed(message)
    revision = ctx.log.revision(message)
    return failed(
        message,
        f"{message.describe()} does not match {validation.definition} ({revision}): {issues_text(issues)}",
    )


def error_code(message: Message) -> int | None:
    code = message.error_code
    return code if code is not MISSING and is_int(code) else None


def is_request_like(message: Message) -> bool:
    return message.kind in (Kind.REQUEST, Kind.NOTIFICATION)
