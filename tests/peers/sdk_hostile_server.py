"""A server that is faithful to everything but ``tools/list``, whose answer trips the client reading it.

    python -m tests.peers.sdk_hostile_server PORT deep DEPTH       tools/list: a member nested DEPTH arrays deep
    python -m tests.peers.sdk_hostile_server PORT digits DIGITS    tools/list: an id of DIGITS digits
    python -m tests.peers.sdk_hostile_server PORT meta-digits DIGITS
        tools/list: tools[0]._meta holds a number of DIGITS digits; tools/call results lack content
    python -m tests.peers.sdk_hostile_server PORT huge BYTES       tools/list: a JSON answer of BYTES bytes
    python -m tests.peers.sdk_hostile_server PORT endless          tools/list: a chunked JSON body without end

Everything else is answered by the broken-suite core (:mod:`tests.peers.broken_suite.core`) as the
specification asks, so a run selects its revisions, hands the SDK cross-check a server that
advertises tools, and only the listing is hostile. Deep nesting and long numbers are valid JSON that
a parser with limits (the SDK's) refuses; the huge and endless bodies are streamed from one block,
so this process stays small whatever its peer reads. Every answer closes its connection.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from tests.peers.broken_suite.core import Server
from tests.peers.hostile import Behaviour, _shape

CHUNK = 64 * 1024


def _method(body: bytes) -> str | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    return payload.get("method") if isinstance(payload, dict) else None


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} Hostile", "connection: close", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _listing(core: Server, method: str, headers: dict[str, str], body: bytes, mode: str, size: int) -> bytes:
    """The faithful tools/list answer (as one JSON body), broken as ``mode`` says (not huge or endless)."""
    answer = _shape(core.handle_http(method, headers, body), Behaviour(framing="json"))
    message: dict[str, Any] = json.loads(answer.body)
    if "result" not in message:  # a refusal (a probe's bad version, say) stays as the core answers it
        text = json.dumps(message)
    elif mode == "deep":
        message["result"]["nested"] = "[" * size + "]" * size
        text = json.dumps(message).replace('"' + "[" * size + "]" * size + '"', "[" * size + "]" * size)
    elif mode == "meta-digits":
        message["result"]["tools"][0]["_meta"] = {"n": "\x00digits"}
        text = json.dumps(message).replace('"\\u0000digits"', "7" * size)
    else:
        message["id"] = "\x00digits"
        text = json.dumps(message).replace('"\\u0000digits"', "7" * size)
    return _head(answer.status, {"content-type": "application/json", "content-length": str(len(text))}) + text.encode()


def _without_content(core: Server, method: str, headers: dict[str, str], body: bytes) -> bytes:
    """The faithful tools/call answer with ``content`` taken out of its result (TOOL-09, RES-04)."""
    answer = _shape(core.handle_http(method, headers, body), Behaviour(framing="json"))
    message: dict[str, Any] = json.loads(answer.body)
    if isinstance(message.get("result"), dict):
        message["result"].pop("content", None)
    text = json.dumps(message).encode()
    return _head(answer.status, {"content-type": "application/json", "content-length": str(len(text))}) + text


async def _stream(writer: asyncio.StreamWriter, mode: str, size: int) -> None:
    """A tools/list answer of ``size`` bytes (one long string member), or one that never ends."""
    prefix, suffix = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[],"pad":"', b'"}}'
    block = b"x" * CHUNK
    if mode == "endless":
        writer.write(_head(200, {"content-type": "application/json", "transfer-encoding": "chunked"}))
        frame = f"{len(block):x}\r\n".encode() + block + b"\r\n"
        writer.write(f"{len(prefix):x}\r\n".encode() + prefix + b"\r\n")
        while True:
            writer.write(frame)
            await writer.drain()
    writer.write(_head(200, {"content-type": "application/json", "content-length": str(size)}) + prefix)
    padding = size - len(prefix) - len(suffix)
    while padding > 0:
        writer.write(block[: min(CHUNK, padding)])
        padding -= CHUNK
        await writer.drain()
    writer.write(suffix)
    await writer.drain()


async def main(port: int, mode: str, size: int) -> None:
    core = Server()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *lines = head.decode("latin-1").split("\r\n")
            headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)
                       if name}  # fmt: skip
            body = await reader.readexactly(int(headers.get("content-length") or 0))
            method = request_line.split(" ", 1)[0]
            if method == "POST" and mode == "meta-digits" and _method(body) == "tools/call":
                writer.write(_without_content(core, method, headers, body))
            elif method == "POST" and _method(body) == "tools/list":
                if mode in ("huge", "endless"):
                    await _stream(writer, mode, size)
                else:
                    writer.write(_listing(core, method, headers, body, mode, size))
            else:
                reply = _shape(core.handle_http(method, headers, body), Behaviour())
                extra = {} if reply.stream else {"content-length": str(len(reply.body))}
                writer.write(_head(reply.status, {**reply.headers, **extra}) + reply.body)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0))
