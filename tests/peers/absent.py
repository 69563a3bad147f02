"""Targets where there is no MCP server to judge, or not quite one: for the runs that must end "not judged".

    python -m tests.peers.absent http PORT get-only        a web page: GET answers HTML, POST 405
    python -m tests.peers.absent http PORT cut-every       the conformant scripted server, every body cut in half
    python -m tests.peers.absent http PORT drop-every      same, but the full length announced and the
                                                           connection closed half way through
    python -m tests.peers.absent http PORT cut-after-selection   discover, initialize and notifications whole,
                                                           every other answer cut in half
    python -m tests.peers.absent stdio REVISION            a hand-written handshake-era server that speaks
                                                           only REVISION (2025-06-18, 2024-11-05 ...)

Over HTTP the answers come from :class:`tests.peers.broken_suite.core.Server` (a conformant
dual-era server), so only the cut is wrong. The stdio server answers ``initialize`` with its one
revision whatever the client offers, as servers built on an older SDK do, refuses
``server/discover`` as a method it does not know, and serves one tool.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from tests.peers.broken_suite.core import Answer, Server

SELECTION = ("server/discover", "initialize")


def _encode(answer: Answer) -> tuple[bytes, str]:
    if answer.events is not None:
        body = b"".join(b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n" for event in answer.events)
        return body, "text/event-stream"
    if answer.body is None:
        return b"", ""
    return json.dumps(answer.body).encode(), "application/json"


def _method(body: bytes) -> str | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    return payload.get("method") if isinstance(payload, dict) and "id" in payload else "notification"


async def _http(port: int, mode: str) -> None:
    core = Server()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method = lines[0].split(" ", 1)[0]
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
            if mode == "get-only":
                page = b"<!doctype html><html><body><h1>Welcome</h1></body></html>"
                status = "200 OK" if method == "GET" else "405 Method Not Allowed"
                writer.write(
                    f"HTTP/1.1 {status}\r\ncontent-type: text/html\r\nallow: GET\r\ncontent-length: {len(page)}\r\n"
                    "connection: close\r\n\r\n".encode()
                    + page
                )
                return
            answer = core.handle_http(method, headers, body)
            payload, content_type = _encode(answer)
            whole = mode == "cut-after-selection" and _method(body) in (*SELECTION, "notification")
            sent = payload if whole or not payload else payload[: len(payload) // 2]
            announced = len(payload) if mode == "drop-every" else len(sent)
            extra = "".join(f"{name}: {value}\r\n" for name, value in answer.headers.items())
            kind = f"content-type: {content_type}\r\n" if content_type else ""
            writer.write(
                f"HTTP/1.1 {answer.status} Answer\r\n{kind}{extra}content-length: {announced}\r\n"
                "connection: close\r\n\r\n".encode()
                + sent
            )
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


TOOL = {
    "name": "echo",
    "description": "Echo the message.",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
}


def _answer(message: Any, revision: str) -> dict[str, Any] | None:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request"}}
    if "id" not in message:
        return None
    ident, method = message["id"], message["method"]
    results: dict[str, Any] = {
        "initialize": {
            "protocolVersion": revision,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "one-revision", "version": "1.0.0"},
        },
        "ping": {},
        "tools/list": {"tools": [TOOL]},
    }
    if method == "tools/call":
        params = message.get("params")
        arguments = params.get("arguments") if isinstance(params, dict) else None
        text = arguments.get("message") if isinstance(arguments, dict) else None
        if not isinstance(text, str):
            return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": "echo needs a message"}}
        return {"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}}
    if method in results:
        return {"jsonrpc": "2.0", "id": ident, "result": results[method]}
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"Method not found: {method}"}}


def _stdio(revision: str) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            answer: dict[str, Any] | None = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "Parse error"},
            }
        else:
            answer = _answer(message, revision)
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1] == "http":
        asyncio.run(_http(int(sys.argv[2]), sys.argv[3]))
    else:
        _stdio(sys.argv[2])
