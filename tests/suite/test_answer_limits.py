"""An event stream of more events than mcp-assay reads is cut at its event limit: many tiny events cost
far more memory than their bytes, so the byte limit alone (tests/suite/test_transport_limits.py) does not
bound them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_assay.cases import Case
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports import http as http_transport
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.vocabulary.errors import NoAnswer
from mcp_assay.wire.model import EndReason, Exchange, HttpExchange, Observation, Probe

PROBE = Probe(case=Case(name="test", family="test", registered=False), intent="test")
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


def test_an_event_stream_flood_stops_at_the_event_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a server that streams notifications without end is read up to EVENT_LIMIT events."""
    monkeypatch.setattr(http_transport, "EVENT_LIMIT", 200)  # read when the transport is made
    note = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'

    async def flood() -> AsyncIterator[bytes]:
        for _ in range(100_000):
            yield note * 10

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=flood())

    recorded: list[Exchange] = []
    with pytest.raises(NoAnswer, match="within 200 events"):
        _send(handler, recorded)
    (exchange,) = [item for item in recorded if isinstance(item, HttpExchange)]
    assert exchange.response is not None and len(exchange.response.events) <= 210
    assert exchange.ending is not None and exchange.ending.reason is EndReason.CLIENT_DISCONNECT
    notes = [str(item.data["detail"]) for item in recorded if isinstance(item, Observation) and item.kind == "note"]
    assert any("passed 200 events" in note and exchange.id in note for note in notes), notes
