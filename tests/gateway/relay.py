"""A minimal HTTP-to-HTTP MCP gateway for the tests of mcp-assay's gateway judging (not a product).

It relays every request to one upstream endpoint and streams each answer back as it comes, passing
headers on (hop-by-hop ones aside), so a client disconnect closes the upstream stream too. A couple of
relay faults can be switched on to see them found and blamed on the gateway; the project's fuller
faulty gateway lives with the test peers.

usage: python relay.py PORT UPSTREAM_URL [--hold] [--drop-notifications] [--strip-origin]
  --hold                 buffer every event stream until it ends, then send it whole
  --drop-notifications   leave out the notifications of every event stream
  --strip-origin         do not pass the client's Origin on
"""

from __future__ import annotations

import sys

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

HOP_BY_HOP = {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "accept-encoding"}


def app(upstream: str, faults: set[str]) -> Starlette:
    client = httpx.AsyncClient(timeout=httpx.Timeout(60.0))
    dropped = HOP_BY_HOP | ({"origin"} if "--strip-origin" in faults else set())

    async def relay(request: Request) -> Response:
        body = await request.body()
        headers = [
            (name, value) for name, value in request.headers.raw if name.decode("latin-1").lower() not in dropped
        ]
        outgoing = client.build_request(request.method, upstream, headers=headers, content=body)
        answer = await client.send(outgoing, stream=True)
        passed = {
            name: value
            for name, value in answer.headers.items()
            if name.lower() not in HOP_BY_HOP | {"content-encoding"}
        }
        streaming = answer.headers.get("content-type", "").startswith("text/event-stream")

        async def chunks():  # type: ignore[no-untyped-def]
            try:
                if streaming and "--hold" in faults:
                    yield b"".join([chunk async for chunk in answer.aiter_bytes()])
                elif streaming and "--drop-notifications" in faults:
                    buffer = b""
                    async for chunk in answer.aiter_bytes():
                        buffer += chunk
                        while b"\n\n" in buffer or b"\r\n\r\n" in buffer:
                            cut = min(i for i in (buffer.find(b"\n\n"), buffer.find(b"\r\n\r\n")) if i >= 0)
                            size = 4 if buffer[cut : cut + 4] == b"\r\n\r\n" else 2
                            event, buffer = buffer[: cut + size], buffer[cut + size :]
                            if b'"method":"notifications/' not in event.replace(b" ", b""):
                                yield event
                    if buffer:
                        yield buffer
                else:
                    async for chunk in answer.aiter_bytes():
                        yield chunk
            finally:
                await answer.aclose()

        return StreamingResponse(chunks(), status_code=answer.status_code, headers=passed)

    return Starlette(routes=[Route("/mcp", relay, methods=["GET", "POST", "DELETE"])])


def main(argv: list[str]) -> None:
    port, upstream, faults = int(argv[1]), argv[2], set(argv[3:])
    uvicorn.run(app(upstream, faults), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
