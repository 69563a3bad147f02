"""A fast MCP-like HTTP server for the proxy's saturation benchmark (not a peer under test).

    python tests/bench/fast_server.py PORT

Answers every POST with a 2026-07-28 ``tools/list`` result (one tool) carrying the request's id, as
``application/json``, on keep-alive HTTP/1.1 connections, from one asyncio protocol with no framework
under it: a few tens of microseconds a request, so the proxy in front of it is what saturates.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys

_ID = re.compile(rb'"id"\s*:\s*("[^"]*"|-?\d+)')
_LENGTH = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.IGNORECASE)
_TOOLS = {
    "tools": [
        {
            "name": "add",
            "description": "Add two numbers",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        }
    ]
}
_HEAD = (
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n"
    "mcp-protocol-version: 2026-07-28\r\n\r\n"
)


def answer(ident: bytes) -> bytes:
    body = b'{"jsonrpc":"2.0","id":' + ident + b',"result":' + json.dumps(_TOOLS).encode() + b"}"
    return _HEAD.format(length=len(body)).encode() + body


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            length = _LENGTH.search(self.buffer[: end + 2])
            size = int(length.group(1)) if length else 0
            if len(self.buffer) < end + 4 + size:
                return
            body = self.buffer[end + 4 : end + 4 + size]
            self.buffer = self.buffer[end + 4 + size :]
            found = _ID.search(body)
            assert self.transport is not None
            self.transport.write(answer(found.group(1) if found else b"null"))


async def serve(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(_Protocol, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
