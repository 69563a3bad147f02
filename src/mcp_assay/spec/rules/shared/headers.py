"""The header values rules read off every HTTP exchange of a window, read once per window.

Several rules walk the log's HTTP exchanges asking each the same header (``Mcp-Session-Id`` of the
request and of the answer, ``Origin``, ``MCP-Protocol-Version``): :func:`request_headers` and
:func:`response_headers` read one header of every exchange once, as a column beside
:meth:`~mcp_assay.wire.traffic.ExchangeLog.http_exchanges`, for every rule that asks it.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.context import Context
from mcp_assay.wire.model import HttpExchange

__all__ = ["request_headers", "response_headers"]


def request_headers(ctx: Context, name: str) -> Iterator[tuple[HttpExchange, str | None]]:
    """Each of the log's HTTP exchanges with the first value of its request's header ``name`` (``None``: absent)."""
    columns = ctx.view(_Columns)
    return zip(columns.exchanges, columns.column(name, response=False), strict=True)


def response_headers(ctx: Context, name: str) -> Iterator[tuple[HttpExchange, str | None]]:
    """Each of the log's HTTP exchanges with the first value of its answer's header ``name`` (``None``: absent, or
    no answer)."""
    columns = ctx.view(_Columns)
    return zip(columns.exchanges, columns.column(name, response=True), strict=True)


class _Columns:
    """The log's HTTP exchanges and, by header name, the values read of them so far (taking in what the log gained
    since, when a rule asks while it grows)."""

    def __init__(self, ctx: Context) -> None:
        self.exchanges: list[HttpExchange] = []
        self.columns: dict[tuple[str, bool], list[str | None]] = {}
        self.advance(ctx)

    def advance(self, ctx: Context) -> None:
        self.exchanges = ctx.log.http_exchanges()
        for (name, response), values in self.columns.items():
            values.extend(_read(self.exchanges[len(values) :], name, response))

    def column(self, name: str, *, response: bool) -> list[str | None]:
        values = self.columns.get((name, response))
        if values is None:
            values = self.columns[(name, response)] = _read(self.exchanges, name, response)
        return values


def _read(exchanges: list[HttpExchange], name: str, response: bool) -> list[str | None]:
    if response:
        return [item.response.headers.get(name) if item.response is not None else None for item in exchanges]
    return [item.request.headers.get(name) for item in exchanges]
