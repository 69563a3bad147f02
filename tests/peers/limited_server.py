"""The SDK fixture server behind a rate limit on tool calls, for BEH-11's burst.

At most ``LIMIT`` ``tools/call`` requests are served per ``WINDOW`` seconds; the rest are answered
``429 Too Many Requests`` with ``Retry-After: 1``. Everything else passes straight to the app.

usage: python limited_server.py PORT LIMIT WINDOW
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque

import uvicorn

from tests.peers.asgi import read_body
from tests.peers.auth_server import App, Receive, Scope, Send
from tests.peers.sdk_server import mcp


class Limiter:
    """An ASGI gate counting tool calls in a sliding window."""

    def __init__(self, app: App, limit: int, window: float) -> None:
        self.app, self.limit, self.window = app, limit, window
        self.calls: deque[float] = deque()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, replay = await read_body(receive)
        if b'"tools/call"' in body:
            now = time.monotonic()
            while self.calls and now - self.calls[0] > self.window:
                self.calls.popleft()
            if len(self.calls) >= self.limit:
                raw = json.dumps({"error": "rate_limited", "error_description": "too many tool calls"}).encode()
                headers = [(b"content-type", b"application/json"), (b"retry-after", b"1"),
                           (b"content-length", str(len(raw)).encode())]  # fmt: skip
                await send({"type": "http.response.start", "status": 429, "headers": headers})
                await send({"type": "http.response.body", "body": raw})
                return
            self.calls.append(now)
        await self.app(scope, replay, send)


def main(argv: list[str]) -> None:
    port, limit, window = int(argv[1]), int(argv[2]), float(argv[3])
    uvicorn.run(Limiter(mcp.streamable_http_app(), limit, window), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
