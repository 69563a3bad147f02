"""Server-sent events for the gateway: read the upstream's event stream line by line, write the front's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    """One SSE event: its data (JSON when ``message`` is set) or a comment line."""

    data: str = ""
    event: str | None = None
    ident: str | None = None
    comment: str | None = None
    message: dict[str, Any] | None = field(default=None, repr=False)


async def events(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    """Parse lines (any of ``\\r\\n``, ``\\n``, ``\\r`` already split) into events; data that is JSON is decoded."""
    data: list[str] = []
    name: str | None = None
    ident: str | None = None
    async for line in lines:
        if line == "":
            if data:
                text = "\n".join(data)
                yield Event(data=text, event=name, ident=ident, message=_json(text))
            data, name, ident = [], None, None
            continue
        if line.startswith(":"):
            yield Event(comment=line[1:].strip())
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "data":
            data.append(value)
        elif key == "event":
            name = value
        elif key == "id":
            ident = value
    if data:
        text = "\n".join(data)
        yield Event(data=text, event=name, ident=ident, message=_json(text))


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def frame(message: dict[str, Any]) -> bytes:
    """One ``message`` event (no id: the gateway does not offer resumption of its own streams)."""
    return b"event: message\ndata: " + json.dumps(message, separators=(",", ":")).encode() + b"\n\n"


def comment(text: str) -> bytes:
    return f": {text}\n\n".encode()
