"""The broken-suite server in process, behind ``httpx.MockTransport``, plus scripted misbehaviour."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx

from tests.peers.broken_suite.core import Server

Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]


def respond(server: Server) -> Handler:
    """An async MockTransport handler answering like ``server`` (event streams sent whole)."""

    async def handler(request: httpx.Request) -> httpx.Response:
        headers = {key.lower(): value for key, value in request.headers.items()}
        answer = server.handle_http(request.method, headers, request.content)
        if answer.events is not None:
            extra = {"content-type": "text/event-stream", "x-accel-buffering": "no", **answer.headers}
            content = _stream(answer.events, answer.keep_open, answer.feed)
            return httpx.Response(answer.status or 200, headers=extra, content=content)
        if answer.body is None:
            return httpx.Response(answer.status, headers=answer.headers)
        if isinstance(answer.body, bytes):
            return httpx.Response(answer.status, headers=answer.headers, content=answer.body)
        extra = {"content-type": "application/json", **answer.headers}
        return httpx.Response(answer.status, headers=extra, content=json.dumps(answer.body).encode())

    return handler


async def _stream(events: list[object], keep_open: bool, feed: list[object] | None = None) -> AsyncIterator[bytes]:
    for event in events:
        yield b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n"
    if not keep_open:
        return
    loop = asyncio.get_running_loop()
    until = loop.time() + 30  # a listen stream stays open until the client closes it
    while loop.time() < until:
        while feed:
            yield b"event: message\ndata: " + json.dumps(feed.pop(0)).encode() + b"\n\n"
        await asyncio.sleep(0.01)


def mock(handler: Handler) -> httpx.MockTransport:
    return httpx.MockTransport(handler)


def silent(seconds: float = 30.0) -> Handler:
    """A server that accepts every request and never answers."""

    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(seconds)
        return httpx.Response(500)

    return handler
