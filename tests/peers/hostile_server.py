"""A server that floods its peer, to show that mcp-assay's memory follows its limits, not the peer.

    python tests/peers/hostile_server.py http PORT body BYTES     every POST: a JSON answer of BYTES bytes
    python tests/peers/hostile_server.py http PORT sse            every POST: 64 KiB events, without end
    python tests/peers/hostile_server.py stdio lines BYTES        BYTES of stderr in 100-byte lines, then echo
    python tests/peers/hostile_server.py stdio raw BYTES          BYTES of stderr with no newline, then echo

Over HTTP the answers are valid JSON-RPC (one huge string member), so only their size is hostile.
Over stdio the server floods stderr first and then answers each request line with a result, until
its stdin ends. Every mode is bounded by its arguments or by the peer going away.
"""

from __future__ import annotations

import asyncio
import json
import sys

CHUNK = 64 * 1024


async def _http(port: int, mode: str, size: int) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.lower().split(b"\r\n")
            length = next((int(line[15:]) for line in lines if line.startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            if mode == "sse":
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
                notice = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * CHUNK}}
                event = b"event: message\ndata: " + json.dumps(notice).encode() + b"\n\n"
                while True:
                    writer.write(event)
                    await writer.drain()
            prefix, suffix = b'{"jsonrpc":"2.0","id":1,"result":{"pad":"', b'"}}'
            padding = size - len(prefix) - len(suffix)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                + f"content-length: {size}\r\n\r\n".encode()
                + prefix
            )
            block = b"x" * CHUNK
            while padding > 0:
                writer.write(block[: min(CHUNK, padding)])
                padding -= CHUNK
                await writer.drain()
            writer.write(suffix)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def _stdio(mode: str, size: int) -> None:
    err = sys.stderr.buffer
    block = (b"e" * 99 + b"\n") if mode == "lines" else b"e" * 100
    for _ in range(size // len(block)):
        err.write(block)
    err.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request:
            print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "http":
        asyncio.run(_http(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 0))
    else:
        _stdio(sys.argv[2], int(sys.argv[3]))
