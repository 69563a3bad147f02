"""An HTTP answer larger than mcp-assay reads is cut at its limit: memory stays bounded, nothing is judged
on the part that was not read, and the case says why instead of blaming the server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports import TooLarge
from mcp_assay.suite.transports import http as http_transport
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.wire import EndReason, Exchange, HttpExchange, Observation

PROBE = {"name": "test", "family": "test", "invalid": False, "intent": "test"}
REQUEST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


def _transport(handler: Any, recorded: list[Exchange]) -> HttpTransport:
    counter = iter(range(1, 1000))
    return HttpTransport(
        "http://127.0.0.1:9/mcp",
        credentials=Credentials(),
        recorder=recorded.append,
        new_id=lambda prefix: f"{prefix}{next(counter)}",
        limiter=RateLimiter(),
        timeout=5,
        transport=httpx.MockTransport(handler),
    )


def _send(handler: Any, recorded: list[Exchange]) -> None:
    async def scenario() -> None:
        transport = _transport(handler, recorded)
        try:
            await transport.send(REQUEST, probe=PROBE, expect=("int", 1))
        finally:
            await transport.close()

    asyncio.run(scenario())


def test_a_json_body_past_the_limit_is_not_read_to_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a body past BODY_LIMIT stops the read; the exchange keeps no half body to misjudge."""
    monkeypatch.setattr(http_transport, "BODY_LIMIT", 64 * 1024)
    sent = {"chunks": 0}

    async def flood() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc":"2.0","id":1,"result":{"tools":["'
        for _ in range(10_000):
            sent["chunks"] += 1
            yield b"x" * 4096

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json"}, content=flood())

    recorded: list[Exchange] = []
    with pytest.raises(TooLarge, match="limit"):
        _send(handler, recorded)
    assert sent["chunks"] < 1000
    (exchange,) = [item for item in recorded if isinstance(item, HttpExchange)]
    assert exchange.ending is not None and exchange.ending.reason is EndReason.CLIENT_DISCONNECT
    assert "limit" in exchange.ending.detail
    assert exchange.response is not None and not exchange.response.body
    assert [item.kind for item in recorded if isinstance(item, Observation)] == ["note"]


def test_an_event_stream_flood_stops_at_the_event_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a server that streams notifications without end is read up to EVENT_LIMIT events."""
    monkeypatch.setattr(http_transport, "EVENT_LIMIT", 200)
    note = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'

    async def flood() -> AsyncIterator[bytes]:
        for _ in range(100_000):
            yield note * 10

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=flood())

    recorded: list[Exchange] = []
    with pytest.raises(TooLarge, match="200 events"):
        _send(handler, recorded)
    (exchange,) = [item for item in recorded if isinstance(item, HttpExchange)]
    assert exchange.response is not None and len(exchange.response.events) <= 210
    assert exchange.ending is not None and exchange.ending.reason is EndReason.CLIENT_DISCONNECT
