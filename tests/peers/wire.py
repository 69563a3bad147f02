"""Both ends of the wire, for proving that a proxy in the middle changed nothing.

``RecordingTransport`` wraps the HTTP transport the SDK client uses and keeps what the client
sent and received (each body chunk with its arrival time); ``read_server_log`` reads what
``recorded_server.py`` received and sent. ``compare`` pairs the two views request by request and
lists every difference in the parts that matter to MCP: bodies, the MCP and auth headers, status,
content type, and the response bytes.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

COMPARED_REQUEST_HEADERS = (
    "content-type",
    "accept",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
    "authorization",
    "last-event-id",
)
COMPARED_RESPONSE_HEADERS = ("content-type", "mcp-session-id", "x-accel-buffering", "cache-control")


@dataclass
class WireExchange:
    """One request/response as one end of the connection saw it."""

    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    time: float
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[tuple[float, bytes]] = field(default_factory=list)

    def header(self, name: str, response: bool = False) -> str | None:
        pairs = self.response_headers if response else self.headers
        values = [value for key, value in pairs if key.lower() == name]
        return ", ".join(values) if values else None

    @property
    def response_body(self) -> bytes:
        return b"".join(chunk for _, chunk in self.chunks)

    def label(self) -> str:
        try:
            method = json.loads(self.body).get("method") if self.body else None
        except ValueError:
            method = "?"
        return f"{self.method} {self.path} {method or ''}".strip()


class _RecordedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, entry: WireExchange) -> None:
        self.inner = inner
        self.entry = entry

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.entry.chunks.append((time.time(), bytes(chunk)))
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class RecordingTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that records what the client sent and received."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx2.AsyncHTTPTransport()
        self.exchanges: list[WireExchange] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        entry = WireExchange(
            method=request.method,
            path=request.url.path,
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw],
            body=body,
            time=time.time(),
        )
        self.exchanges.append(entry)
        response = await self.inner.handle_async_request(request)
        entry.status = response.status_code
        entry.response_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_RecordedStream(response.stream, entry),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def read_server_log(path: Path) -> list[WireExchange]:
    """What ``recorded_server.py`` saw, one entry per request, in arrival order."""
    entries: dict[int, WireExchange] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        number = record["n"]
        if record["kind"] == "request":
            entries[number] = WireExchange(
                method=record["method"],
                path=record["path"],
                headers=[(k, v) for k, v in record["headers"]],
                body=base64.b64decode(record["body"]),
                time=record["t"],
            )
        elif number in entries and record["kind"] == "start":
            entries[number].status = record["status"]
            entries[number].response_headers = [(k, v) for k, v in record["headers"]]
        elif number in entries and record["kind"] == "chunk":
            entries[number].chunks.append((record["t"], base64.b64decode(record["b64"])))
    return sorted(entries.values(), key=lambda entry: entry.time)


def compare(client: list[WireExchange], server: list[WireExchange]) -> list[str]:
    """Differences between the two ends, as sentences (empty: the middle was transparent)."""
    problems: list[str] = []
    unmatched = list(server)
    for sent in client:
        match = next(
            (
                seen
                for seen in unmatched
                if seen.method == sent.method
                and seen.body == sent.body
                and seen.header("mcp-session-id") == sent.header("mcp-session-id")
            ),
            None,
        )
        if match is None:
            problems.append(f"{sent.label()}: the server never received this request as the client sent it")
            continue
        unmatched.remove(match)
        for name in COMPARED_REQUEST_HEADERS:
            if sent.header(name) != match.header(name):
                problems.append(f"{sent.label()}: {name} sent {sent.header(name)!r}, received {match.header(name)!r}")
        if sent.status != match.status:
            problems.append(f"{sent.label()}: server answered {match.status}, client got {sent.status}")
        for name in COMPARED_RESPONSE_HEADERS:
            if sent.header(name, True) != match.header(name, True):
                problems.append(
                    f"{sent.label()}: response {name} sent {match.header(name, True)!r}, "
                    f"received {sent.header(name, True)!r}"
                )
        received, sent_back = sent.response_body, match.response_body
        if not sent_back.startswith(received) or (len(received) < len(sent_back) and _completed(sent)):
            problems.append(f"{sent.label()}: the client received other bytes than the server sent")
    return problems


def _completed(entry: WireExchange) -> bool:
    """Whether the client read the response to its end (a stream it closed early is a prefix)."""
    content_type = entry.header("content-type", True) or ""
    return not content_type.startswith("text/event-stream")
