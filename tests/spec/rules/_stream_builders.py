"""Hand-built streams with explicit times, for the cancellation, subscription, log and progress rules.

These rules care about *when* things crossed the wire (a cancellation, a grace window, a stream
that stayed open), so unlike ``tests.factories`` every builder here takes times in seconds after a
fixed base. Discover results built with ``tests.factories`` come earlier than any of these.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Ending, EndReason, Headers, HttpExchange, HttpRequest, HttpResponse, StdioLine
from mcp_assay.wire.sse import SseEvent
from tests.factories import (
    URL,
    as_probe,
    initialize_body,
    initialize_result,
    legacy_headers,
    meta,
    modern_headers,
    result_body,
    server_info,
)

BASE = 1_800_000_000.0
SUB = "io.modelcontextprotocol/subscriptionId"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
ACK = "notifications/subscriptions/acknowledged"
CAPS = {"tools": {"listChanged": True}, "prompts": {"listChanged": True}, "resources": {"subscribe": True}}

_counter = iter(range(1, 1_000_000))


def at(seconds: float) -> float:
    return BASE + seconds


def req(method: str, ident: Any = 1, params: Mapping[str, Any] | None = None, **extra_meta: Any) -> dict[str, Any]:
    """A 2026 request; ``extra_meta`` goes into ``params._meta`` (``progressToken``, ``logLevel``)."""
    body_params = dict(params or {})
    additions = {LOG_LEVEL if key == "logLevel" else key: value for key, value in extra_meta.items()}
    body_params["_meta"] = {**meta(), **additions}
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": body_params}


def legacy_req(
    method: str, ident: Any = 1, params: Mapping[str, Any] | None = None, **extra_meta: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    body_params = dict(params or {})
    if extra_meta:
        body_params["_meta"] = dict(extra_meta)
    if body_params:
        body["params"] = body_params
    return body


def note(method: str, params: Mapping[str, Any] | None = None, **tags: Any) -> dict[str, Any]:
    """A notification; ``sub=`` puts a subscriptionId into ``params._meta``."""
    body_params = dict(params or {})
    if "sub" in tags:
        body_params["_meta"] = {SUB: tags["sub"]}
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if body_params or "sub" in tags:
        body["params"] = body_params
    return body


def cancel(request_id: Any, **extra: Any) -> dict[str, Any]:
    return note("notifications/cancelled", {"requestId": request_id, **extra})


def progress(token: Any, value: float, total: float | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"progressToken": token, "progress": value}
    if total is not None:
        params["total"] = total
    return note("notifications/progress", params)


def log(level: str, data: Any = "working", **tags: Any) -> dict[str, Any]:
    return note("notifications/message", {"level": level, "data": data}, **tags)


def ack(sub: Any, granted: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return note(ACK, {"notifications": dict(granted or {})}, sub=sub)


def done(ident: Any = 1, **result: Any) -> dict[str, Any]:
    """A complete 2026 result."""
    return result_body({"resultType": "complete", **result, "_meta": server_info()}, ident)


def sse(
    body: Any,
    events: Iterable[tuple[float, Any]],
    *,
    start: float,
    end: float | None = None,
    reason: EndReason = EndReason.COMPLETE,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    response_headers: Mapping[str, str] | None = None,
    probe: Mapping[str, Any] | None = None,
) -> HttpExchange:
    """A POST answered with an SSE stream; ``events`` are (seconds, JSON body) pairs."""
    stream = tuple(SseEvent(time=at(t), data=json.dumps(item), event="message") for t, item in events)
    last = max([start, *(t for t, _ in events)])
    return HttpExchange.build(
        id=f"x{next(_counter)}",
        request=HttpRequest(
            method="POST",
            url=URL,
            headers=Headers(headers if headers is not None else modern_headers(body)),
            body=json.dumps(body).encode(),
            time=at(start),
        ),
        response=HttpResponse(
            status=status,
            headers=Headers(response_headers or {"content-type": "text/event-stream", "x-accel-buffering": "no"}),
            time=at(start) + 0.001,
            events=stream,
        ),
        ending=Ending(reason=reason, time=at(end if end is not None else last + 0.001)),
        probe=as_probe(probe),
    )


def post(
    body: Any,
    response: Any = None,
    *,
    start: float,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    reason: EndReason = EndReason.COMPLETE,
    probe: Mapping[str, Any] | None = None,
) -> HttpExchange:
    """A POST answered with a JSON body (or an empty one, e.g. ``202``)."""
    raw = b"" if response is None else json.dumps(response).encode()
    content_type = {"content-type": "application/json"} if response is not None else {}
    return HttpExchange.build(
        id=f"x{next(_counter)}",
        request=HttpRequest(
            method="POST",
            url=URL,
            headers=Headers(headers if headers is not None else modern_headers(body)),
            body=json.dumps(body).encode(),
            time=at(start),
        ),
        response=HttpResponse(status=status, headers=Headers(content_type), time=at(start) + 0.002, body=raw),
        ending=Ending(reason=reason, time=at(start) + 0.003),
        probe=as_probe(probe),
    )


def legacy_sse(
    body: Any, events: Iterable[tuple[float, Any]], *, start: float, session: str = "sess-1", **kwargs: Any
) -> HttpExchange:
    return sse(body, events, start=start, headers=legacy_headers(session), **kwargs)


def legacy_post(
    body: Any, response: Any = None, *, start: float, session: str = "sess-1", **kwargs: Any
) -> HttpExchange:
    return post(body, response, start=start, headers=legacy_headers(session), **kwargs)


def line(sender: Side, body: Any, t: float, connection: str = "conn-1") -> StdioLine:
    raw = json.dumps(body).encode() + b"\n"
    return StdioLine.build(id=f"s{next(_counter)}", connection=connection, sender=sender, time=at(t), raw=raw)


def client(body: Any, t: float, connection: str = "conn-1") -> StdioLine:
    return line(Side.CLIENT, body, t, connection)


def server(body: Any, t: float, connection: str = "conn-1") -> StdioLine:
    return line(Side.SERVER, body, t, connection)


def discover(capabilities: Mapping[str, Any] | None = None, *, start: float = -10.0) -> HttpExchange:
    """A 2026 HTTP discover advertising ``capabilities``."""
    result = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": dict(CAPS if capabilities is None else capabilities),
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": server_info(),
    }
    return post(req("server/discover", "d"), result_body(result, "d"), start=start)


def stdio_discover(
    capabilities: Mapping[str, Any] | None = None, *, t: float = -10.0, connection: str = "conn-1"
) -> list[StdioLine]:
    result = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": dict(CAPS if capabilities is None else capabilities),
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": server_info(),
    }
    return [
        client(req("server/discover", "d"), t, connection),
        server(result_body(result, "d"), t + 0.001, connection),
    ]


def legacy_init(
    capabilities: Mapping[str, Any] | None = None, *, session: str = "sess-1", start: float = -10.0
) -> list[HttpExchange]:
    """initialize + initialized for a 2025 HTTP session advertising ``capabilities``."""
    init = initialize_body()
    result = initialize_result(capabilities=capabilities or {})
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    first = HttpExchange.build(
        id=f"x{next(_counter)}",
        request=HttpRequest(
            method="POST", url=URL, headers=Headers(headers), body=json.dumps(init).encode(), time=at(start)
        ),
        response=HttpResponse(
            status=200,
            headers=Headers({"content-type": "application/json", "mcp-session-id": session}),
            time=at(start) + 0.001,
            body=json.dumps(result_body(result, 0)).encode(),
        ),
        ending=Ending(reason=EndReason.COMPLETE, time=at(start) + 0.002),
    )
    initialized = legacy_post(note("notifications/initialized"), start=start + 0.01, status=202, session=session)
    return [first, initialized]


def legacy_stdio_init(capabilities: Mapping[str, Any] | None = None, *, t: float = -10.0) -> list[StdioLine]:
    init = initialize_body()
    result = initialize_result(capabilities=capabilities or {})
    return [
        client(init, t),
        server(result_body(result, 0), t + 0.001),
        client(note("notifications/initialized"), t + 0.002),
    ]
