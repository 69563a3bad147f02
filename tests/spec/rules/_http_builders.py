"""Hand-built Streamable HTTP traffic for the HTTP- rules: requests bent in one header at a time.

``post()`` builds a 2026 request POST with the headers a conforming client sends (lowercase
names, as httpx and the SDK client write them) and lets a test override any one of them;
``sse()`` and ``legacy_stream()`` build event-stream answers; ``marked_tools()`` advertises a tool
whose ``inputSchema`` mirrors arguments into ``Mcp-Param-*`` headers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_assay.wire.model import Ending, EndReason, Headers, HttpExchange, HttpRequest, HttpResponse
from mcp_assay.wire.sse import SseEvent
from tests.factories import (
    LEGACY,
    URL,
    error_body,
    http,
    legacy_headers,
    modern_call,
    modern_headers,
    request_body,
    result_body,
    server_info,
    tick,
)

SSE_HEADERS = {"content-type": "text/event-stream", "x-accel-buffering": "no"}
QUERY_TOOL = {
    "name": "query",
    "description": "Run a query in a region",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "sql": {"type": "string"},
        },
        "required": ["sql"],
    },
}
BROKEN_TOOL = {
    "name": "broken",
    "inputSchema": {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}},
    },
}
PLAIN_TOOL = {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}}}
_ids = iter(range(1, 1_000_000))


def complete(result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"resultType": "complete", **(result or {}), "_meta": server_info()}


def marked_tools(*tools: Any) -> HttpExchange:
    """A 2026 ``tools/list`` answer advertising ``tools`` (default: the marked query tool and a plain one)."""
    listed = list(tools) or [QUERY_TOOL, PLAIN_TOOL]
    return modern_call(
        "tools/list", {}, {"tools": listed, "ttlMs": 0, "cacheScope": "private"}, ident=next(_ids) + 1000
    )


def post(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    ident: Any = None,
    answer: Any = "result",
    status: int | None = None,
    headers: Mapping[str, str | None] | None = None,
    version: str | None = "2026-07-28",
    probe: Mapping[str, Any] | None = None,
    response_headers: Mapping[str, str] | None = None,
    body: Any = None,
) -> HttpExchange:
    """A 2026 request POST with conforming headers, then ``headers`` overrides (``None`` removes one).

    ``answer`` is ``"result"`` (a complete result), an int (a JSON-RPC error with that code) or a
    ready response body; ``status`` defaults to 200 for results, 400 for errors (404 for -32601)."""
    ident = next(_ids) if ident is None else ident
    payload = body if body is not None else request_body(method, ident, dict(params or {}), version=version)
    wire = modern_headers(payload)
    for name, value in (headers or {}).items():
        for existing in [key for key in wire if key.lower() == name.lower()]:
            del wire[existing]
        if value is not None:
            wire[name] = value
    if answer == "result":
        response: Any = result_body(complete(), ident)
        code_status = 200
    elif isinstance(answer, int):
        response = error_body(answer, "rejected", ident)
        code_status = 404 if answer == -32601 else 400
    else:
        response = answer
        code_status = 200
    return http(
        payload,
        response,
        status=status if status is not None else code_status,
        headers=wire,
        probe=probe,
        response_headers=response_headers,
    )


def call(arguments: Mapping[str, Any], *, tool: str = "query", **kwargs: Any) -> HttpExchange:
    return post("tools/call", {"name": tool, "arguments": dict(arguments)}, **kwargs)


def event(
    message: Any = None,
    *,
    id: str | None = None,
    retry: int | None = None,
    data: str | None = None,
    at: float | None = None,
) -> SseEvent:
    text = data if data is not None else (json.dumps(message) if message is not None else None)
    when = tick() if at is None else at + 0.002
    return SseEvent(time=when, data=text, event="message" if message is not None else None, id=id, retry=retry)


def comment(text: str = "ping") -> SseEvent:
    return SseEvent(time=tick(), comment=text)


def stream(
    request: Mapping[str, Any],
    events: Iterable[SseEvent | Mapping[str, Any]],
    *,
    headers: Mapping[str, str],
    method: str = "POST",
    ending: EndReason = EndReason.COMPLETE,
    ending_at: float | None = None,
    response_headers: Mapping[str, str] | None = None,
    status: int = 200,
    at: float | None = None,
) -> HttpExchange:
    """An SSE answer with explicit control over events, when it was sent and how it ended."""
    t0 = tick() if at is None else at
    built = tuple(item if isinstance(item, SseEvent) else event(item, at=t0) for item in events)
    raw = json.dumps(request).encode() if request else b""
    exchange_id = f"x{next(_ids)}"
    last = max([t0, *(item.time for item in built)])
    return HttpExchange.build(
        id=exchange_id,
        request=HttpRequest(method=method, url=URL, headers=Headers(headers), body=raw, time=t0),
        response=HttpResponse(
            status=status, headers=Headers(response_headers or SSE_HEADERS), time=t0 + 0.001, events=built
        ),
        ending=Ending(reason=ending, time=ending_at if ending_at is not None else last + 0.001),
    )


def sse(method: str, params: Mapping[str, Any] | None, events: Iterable[Any], **kwargs: Any) -> HttpExchange:
    """A 2026 request answered with an SSE stream."""
    ident = kwargs.pop("ident", None)
    ident = next(_ids) if ident is None else ident
    body = request_body(method, ident, dict(params or {}))
    return stream(body, events, headers=modern_headers(body), **kwargs)


def legacy_request(method: str, ident: Any, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        body["params"] = dict(params)
    return body


def legacy_stream(
    body: Mapping[str, Any], events: Iterable[Any], *, session: str = "sess-1", **kwargs: Any
) -> HttpExchange:
    """A 2025 POST in ``session`` answered with an SSE stream."""
    return stream(body, events, headers=legacy_headers(session), **kwargs)


def legacy_get(
    events: Iterable[Any], *, session: str = "sess-1", last_event_id: str | None = None, **kwargs: Any
) -> HttpExchange:
    headers = {"accept": "text/event-stream", "mcp-protocol-version": LEGACY, "mcp-session-id": session}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    headers.update(kwargs.pop("headers", {}))
    return stream({}, events, headers=headers, method="GET", **kwargs)


def result(ident: Any, value: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return result_body(dict(value or {}), ident)


def progress(token: Any, value: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": value}}


def notification(method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        body["params"] = dict(params)
    return body


def unanswered(method: str, headers: Mapping[str, str | None]) -> HttpExchange:
    """A 2026 request POST whose connection died before any response head arrived."""
    body = request_body(method, next(_ids))
    wire = {**modern_headers(body), **{k: v for k, v in headers.items() if v is not None}}
    t0 = tick()
    return HttpExchange.build(
        id=f"x{next(_ids)}",
        request=HttpRequest(method="POST", url=URL, headers=Headers(wire), body=json.dumps(body).encode(), time=t0),
        ending=Ending(reason=EndReason.SERVER_DISCONNECT, time=t0 + 0.01),
    )
