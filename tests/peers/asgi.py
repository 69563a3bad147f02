"""A request body read ahead by a test fixture's ASGI gate, and handed on to the app unchanged."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]


async def read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The whole body, and a ``receive`` that gives the app the same body first, then the real stream."""
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = bool(message.get("more_body"))
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return body, replay
