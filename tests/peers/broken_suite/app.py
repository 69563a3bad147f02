"""Serve :mod:`core` (optionally with one bug) over Streamable HTTP or stdio.

usage: python -m tests.peers.broken_suite.app http PORT [BUG] [--no-handshake]
       python -m tests.peers.broken_suite.app stdio [BUG]
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator

from tests.peers.broken_suite.core import BUGS, Answer, Server


def encode(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def http_app(server: Server):  # type: ignore[no-untyped-def]
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    async def endpoint(request: Request) -> Response:
        body = await request.body()
        headers = {key.lower(): value for key, value in request.headers.items()}
        answer: Answer = server.handle_http(request.method, headers, body)
        if answer.events is not None:

            async def events() -> AsyncIterator[bytes]:
                for event in answer.events or []:
                    yield b"event: message\ndata: " + encode(event) + b"\n\n"
                while answer.keep_open and not await request.is_disconnected():
                    await asyncio.sleep(0.05)

            extra = {"x-accel-buffering": "no", "cache-control": "no-cache", **answer.headers}
            return StreamingResponse(events(), status_code=answer.status or 200, media_type="text/event-stream",
                                     headers=extra)  # fmt: skip
        if answer.body is None:
            return Response(status_code=answer.status, headers=answer.headers)
        if isinstance(answer.body, bytes):
            return Response(answer.body, status_code=answer.status, headers=answer.headers)
        return Response(encode(answer.body), status_code=answer.status, media_type="application/json",
                        headers=answer.headers)  # fmt: skip

    return Starlette(routes=[Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])])


def serve_http(port: int, bug: str | None, handshake: bool) -> None:
    import uvicorn

    uvicorn.run(http_app(Server(bug, handshake=handshake)), host="127.0.0.1", port=port, log_level="warning")


def serve_stdio(bug: str | None) -> None:
    server = Server(bug)
    out = sys.stdout.buffer
    if bug == "stdout-banner":
        out.write(b"broken-suite starting up\n")
        out.flush()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        answer = server.handle_line(line)
        if answer is None:
            continue
        for item in answer.events or []:
            out.write(encode(item) + b"\n")
        if answer.body is not None:
            out.write(encode(answer.body) + b"\n")
        out.flush()
        if answer.exit:
            sys.exit(3)


def main(argv: list[str]) -> None:
    mode = argv[1]
    args = [item for item in argv[2:] if not item.startswith("--")]
    handshake = "--no-handshake" not in argv
    if mode == "http":
        port = int(args[0])
        bug = args[1] if len(args) > 1 else None
        serve_http(port, bug, handshake)
    else:
        bug = args[0] if args else None
        serve_stdio(bug)
    if bug is not None and bug not in BUGS:
        raise SystemExit(f"unknown bug {bug}")


if __name__ == "__main__":
    main(sys.argv)
