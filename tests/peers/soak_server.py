"""A minimal, fast MCP-shaped HTTP server for soak tests: thousands of exchanges in seconds.

    python tests/peers/soak_server.py PORT

Plain asyncio and HTTP/1.1 keep-alive, no SDK, so the proxy and the judging are what a soak test
measures. Every POST gets a 2026-07-28 answer with the request's id: ``tools/call`` of the tool
``stream`` opens an event stream (chunked), sends one progress notification and then holds the
stream open until the client goes away (the client is meant to disconnect mid-stream); anything
else gets a JSON ``tools/list``-shaped result.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

HOLD_S = 30.0
"""How long a stream is held open waiting for the client to leave (bounded: the server never waits forever)."""


def _result(ident: Any) -> bytes:
    result = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def _read_request(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            message = await _read_request(reader)
            ident = message.get("id") if message else None
            params = message.get("params") if message else None
            name = params.get("name") if isinstance(params, dict) else None
            if message is not None and message.get("method") == "tools/call" and name == "stream":
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                )
                progress = {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": str(ident), "progress": 1},
                }
                writer.write(_chunk(b"event: message\ndata: " + json.dumps(progress).encode() + b"\n\n"))
                await writer.drain()
                await asyncio.wait_for(reader.read(1), timeout=HOLD_S)  # returns b"" when the client leaves
                return
            body = _result(ident)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, TimeoutError, ValueError):
        return
    finally:
        writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(_serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
