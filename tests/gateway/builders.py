"""Hand-built traffic of both hops of a gateway, with times set on purpose (the rules compare them)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_assay.wire.model import Ending, EndReason, Headers, Hop, HttpExchange, HttpRequest, HttpResponse
from mcp_assay.wire.sse import SseEvent
from tests.factories import LEGACY, MODERN, legacy_headers, meta, modern_headers

FRONT_URL = "http://127.0.0.1:9000/mcp"
BACK_URL = "http://127.0.0.1:9001/mcp"
T0 = 1_700_000_000.0

_ids = itertools.count(1)


def request(method: str, ident: Any = 1, params: dict[str, Any] | None = None, *, version: str | None = MODERN) -> (
    dict[str, Any]
):  # fmt: skip
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        body["id"] = ident
    params = dict(params or {})
    if version == MODERN:
        params["_meta"] = {**meta(), **params.get("_meta", {})}
    body["params"] = params
    return body


def result(value: dict[str, Any], ident: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": value}


def error(code: int, ident: Any = 1, message: str = "failed") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def note(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def exchange(
    hop: Hop,
    body: Any,
    *,
    start: float,
    end: float,
    answer: Any = None,
    events: Iterable[tuple[float, Any]] | None = None,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    response_headers: Mapping[str, str] | None = None,
    ending: EndReason = EndReason.COMPLETE,
    session: str | None = None,
    ident: str | None = None,
) -> HttpExchange:
    """One exchange of ``hop``: sent at ``start`` (seconds after :data:`T0`), ended at ``end``; answered with a JSON
    ``answer``, or with ``events`` (time, JSON message) of an event stream."""
    url = FRONT_URL if hop is Hop.FRONT else BACK_URL
    if headers is None:
        headers = (
            legacy_headers(session) if session is not None else modern_headers(body if isinstance(body, dict) else {})
        )
    raw = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
    sent = HttpRequest(method="POST", url=url, headers=Headers(headers), body=raw, time=T0 + start)
    if events is not None:
        sse = tuple(SseEvent(time=T0 + at, data=json.dumps(item), event="message") for at, item in events)
        response = HttpResponse(
            status=status, headers=Headers(response_headers or {"content-type": "text/event-stream"}),
            time=T0 + start + 0.001, events=sse,
        )  # fmt: skip
    else:
        data = json.dumps(answer).encode() if answer is not None else b""
        kind = {"content-type": "application/json"} if answer is not None else {}
        response = HttpResponse(
            status=status, headers=Headers(response_headers or kind), time=T0 + end, body=data
        )  # fmt: skip
    return HttpExchange.build(
        id=ident or f"{hop.value[0]}{next(_ids)}",
        request=sent,
        response=response,
        ending=Ending(reason=ending, time=T0 + end),
        hop=hop,
    )


def front(body: Any, **kwargs: Any) -> HttpExchange:
    return exchange(Hop.FRONT, body, **kwargs)


def back(body: Any, **kwargs: Any) -> HttpExchange:
    return exchange(Hop.BACK, body, **kwargs)


def in_order(*items: HttpExchange) -> list[HttpExchange]:
    """Exchanges in the order a capture finishes them (by their end)."""
    return sorted(items, key=lambda item: item.ending.time if item.ending is not None else item.time)


__all__ = [
    "BACK_URL",
    "FRONT_URL",
    "LEGACY",
    "MODERN",
    "back",
    "error",
    "exchange",
    "front",
    "in_order",
    "note",
    "request",
    "result",
]
