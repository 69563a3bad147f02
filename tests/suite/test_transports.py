"""The suite's transports record what crossed the wire and tell target failures apart."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
import pytest

from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports import StreamControl
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.errors import NoAnswer, ServerExited
from mcp_assay.wire.jsonrpc import Kind, id_key
from mcp_assay.wire.model import EndReason, Exchange, HttpExchange, ProcessExit, StdioLine

PROBE = {"name": "test", "family": "test", "invalid": False, "intent": "test"}

ECHO_SERVER = r"""
import json, sys, time
mode = sys.argv[1]
if mode == "banner":
    print("starting up", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if mode == "exit":
        sys.exit(4)
    if mode == "silent":
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}}), flush=True)
"""


def _ids() -> Any:
    counter = iter(range(1, 1000))
    return lambda prefix: f"{prefix}{next(counter)}"


def stdio_transport(mode: str, recorded: list[Exchange]) -> StdioTransport:
    return StdioTransport(
        [sys.executable, "-c", ECHO_SERVER, mode], recorder=recorded.append, new_id=_ids(), connection="p1", timeout=2
    )


def request(ident: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}).encode()


def test_stdio_records_both_sides_and_returns_the_answer() -> None:
    """Tool-defined: each line is a StdioLine, the process end a ProcessExit with stdin_closed_at."""
    recorded: list[Exchange] = []

    async def scenario() -> Any:
        transport = stdio_transport("echo", recorded)
        await transport.start()
        reply = await transport.send(request(1), probe=PROBE, expect=id_key(1))
        await transport.close()
        return reply

    reply = asyncio.run(scenario())
    assert reply.ok
    lines = [item for item in recorded if isinstance(item, StdioLine)]
    assert [line.sender.value for line in lines] == ["client", "server"]
    assert lines[0].probe == PROBE
    exits = [item for item in recorded if isinstance(item, ProcessExit)]
    assert exits and exits[0].stdin_closed_at is not None


def test_stdio_non_json_on_stdout_is_recorded_as_data_not_taken_for_the_answer() -> None:
    """Spec-mandated (STDIO-02): a banner is evidence for the stdio rules; the real answer still counts."""
    recorded: list[Exchange] = []

    async def scenario() -> Any:
        transport = stdio_transport("banner", recorded)
        await transport.start()
        reply = await transport.send(request(1), probe=PROBE, expect=id_key(1))
        await transport.close()
        return reply

    reply = asyncio.run(scenario())
    assert reply.ok
    kinds = [item.message.kind for item in recorded if isinstance(item, StdioLine)]
    assert Kind.UNPARSEABLE in kinds


def test_stdio_tells_an_exited_server_from_a_silent_one() -> None:
    """Tool-defined: exit -> ServerExited with the code; silence -> NoAnswer within the timeout."""
    recorded: list[Exchange] = []

    async def exited() -> None:
        transport = stdio_transport("exit", recorded)
        await transport.start()
        try:
            await transport.send(request(1), probe=PROBE, expect=id_key(1))
        finally:
            await transport.close()

    with pytest.raises(ServerExited) as info:
        asyncio.run(exited())
    assert info.value.code == 4

    async def silent() -> None:
        transport = stdio_transport("silent", recorded)
        await transport.start()
        try:
            await transport.send(request(1), probe=PROBE, expect=id_key(1), timeout=0.3)
        finally:
            await transport.close()

    with pytest.raises(NoAnswer):
        asyncio.run(silent())


def http_transport(handler: Any, recorded: list[Exchange]) -> HttpTransport:
    return HttpTransport(
        "http://127.0.0.1:9/mcp",
        credentials=Credentials(),
        recorder=recorded.append,
        new_id=_ids(),
        limiter=RateLimiter(),
        timeout=2,
        transport=httpx.MockTransport(handler),
    )


def test_an_open_event_stream_closed_by_the_suite_is_a_client_disconnect() -> None:
    """Tool-defined: a listen stream read until its ack, then closed -> EndReason.CLIENT_DISCONNECT."""
    recorded: list[Exchange] = []

    async def stream() -> Any:
        yield b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",'
        yield b'"params":{"notifications":{}}}\n\n'
        await asyncio.sleep(30)

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    async def scenario() -> Any:
        transport = http_transport(handler, recorded)
        control = StreamControl(budget=2, stop=lambda messages: any(m.method for m in messages))
        try:
            return await transport.send(request(1), probe=PROBE, expect=id_key(1), stream=control)
        finally:
            await transport.close()

    reply = asyncio.run(scenario())
    (exchange,) = [item for item in recorded if isinstance(item, HttpExchange)]
    assert exchange.ending is not None and exchange.ending.reason is EndReason.CLIENT_DISCONNECT
    assert exchange.response is not None and len(exchange.response.events) == 1
    assert reply.closed_by_client and reply.messages[0].method == "notifications/subscriptions/acknowledged"


def test_an_http_answer_that_never_comes_is_no_answer_within_the_timeout() -> None:
    """Tool-defined: the wait for a response head is bounded."""
    recorded: list[Exchange] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(500)

    async def scenario() -> None:
        transport = http_transport(handler, recorded)
        try:
            await transport.send(request(1), probe=PROBE, expect=id_key(1), timeout=0.2)
        finally:
            await transport.close()

    with pytest.raises(NoAnswer):
        asyncio.run(scenario())
    (exchange,) = [item for item in recorded if isinstance(item, HttpExchange)]
    assert exchange.response is None and exchange.probe == PROBE
