"""The two hops of the judged window, matched once for every GW rule (:class:`~mcp_assay.wire.hops.Correlation`).

Every GW rule reads the same view: the relays of the window (each client request with what the gateway sent
upstream for it), built once and brought up to date as the window grows. A window holding traffic of one hop
only (or of none: no gateway was watched) has no relay, and the GW rules find nothing to judge in it.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.wire.hops import Call, Correlation, Relay
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Hop, HttpExchange

__all__ = ["HOPS_FOLLOWED", "Relays", "answer_of", "relays", "shown", "status_of"]

HOPS_FOLLOWED = None
"""What GW log checks follow: every window (a window's hops are read whole)."""


class Relays:
    """The window's correlation, taking in the log as it grows (:meth:`Context.view`)."""

    def __init__(self, ctx: Context) -> None:
        self.correlation = Correlation(keep=None)
        self._loose: list[HttpExchange] = []
        self._seen = 0
        self.advance(ctx)

    def advance(self, ctx: Context) -> None:
        items = ctx.log.items
        for item in items[self._seen :]:
            self.correlation.add(item)
            if (
                isinstance(item, HttpExchange)
                and item.hop is Hop.FRONT
                and self.correlation.call_of_exchange(item) is None
            ):
                self._loose.append(item)
        self._seen = len(items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.correlation.settle()
        return iter(self.correlation)

    def paired(self) -> list[Relay]:
        """Relays whose request reached the upstream."""
        return [relay for relay in self if relay.back is not None]

    def loose_front(self) -> list[HttpExchange]:
        """The front hop's exchanges that carried no request (a GET stream, an answer the client posted)."""
        return [item for item in self._loose if self.correlation.twin_of(item.id) is not None]


def relays(ctx: Context) -> Relays:
    """The relays of the judged window, built once for every rule."""
    return ctx.view(Relays)


def answer_of(call: Call) -> Message | None:
    """The call's answer (its first response), if it got one."""
    return call.answers[0] if call.answers else None


def status_of(call: Call) -> int | None:
    """The HTTP status of the call's exchange (``None`` over stdio or without a response)."""
    exchange = call.exchange
    if isinstance(exchange, HttpExchange) and exchange.response is not None:
        return exchange.response.status
    return None


def shown(value: Any, limit: int = 80) -> str:
    """A JSON value for a finding's text, cut short."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def kind_of(message: Message | None) -> str:
    if message is None:
        return "no answer"
    if message.kind is Kind.ERROR:
        return f"error {message.error_code}"
    return message.kind.value
