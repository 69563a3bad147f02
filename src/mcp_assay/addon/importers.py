"""Captures other tools made, read as exchanges: mitmproxy flow files and HAR files.

Someone who already has a capture should not have to convert it, so ``mcp-assay validate``
sniffs these formats next to its own recordings:

* **mitmproxy flow files** (``mitmdump -w FILE``, or saved from mitmweb): read with mitmproxy's
  own reader and converted exactly as the live addon converts flows. Only MCP flows are kept.
  mitmproxy does not keep the body of a response it streamed unless ``store_streamed_bodies`` is
  set, so event streams captured without it carry no events (the reader says so).
* **HAR 1.2** (browser developer tools, proxies, ``mitmdump --set hardump=FILE``): every entry
  becomes an exchange; event-stream bodies are parsed with the same SSE parser; times come from
  ``startedDateTime`` and ``timings``.

Importing this module registers both readers with :mod:`mcp_assay.inputs`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp_assay.addon.flows import Decision, classify_request, endpoint_of, exchange_of, response_says_mcp
from mcp_assay.errors import RecordingError
from mcp_assay.inputs import RECORDING, Loaded, Reader
from mcp_assay.protocol import HeaderKey, MediaType
from mcp_assay.record_readers import payload_bytes as _bytes
from mcp_assay.sse import parse_sse
from mcp_assay.wire import (
    EVENTS_LOST,
    Ending,
    EndReason,
    Exchange,
    Headers,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    media_type,
)

__all__ = ["FLOWS", "HAR", "READERS", "is_flow_file", "is_har", "read_flow_file", "read_har"]

_TNETSTRING_HEAD = re.compile(rb"^\d{1,12}:")
_HAR_HEAD = re.compile(rb'^\s*\{\s*"log"\s*:')
_DAY_MS = 86_400_000


def _head(path: Path, size: int = 64) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)


def _mcp_traffic(built: list[HttpExchange]) -> list[HttpExchange]:
    """The exchanges the live addon would have kept, in capture order.

    A first pass finds the MCP endpoints (from each request, or for an undecided POST from its
    answer); the second keeps those and whatever the addon keeps once it knows them: everything
    else sent to an MCP endpoint, the origin's metadata, and a client's OAuth flow."""
    endpoints: set[str] = set()
    decided: set[str] = set()
    for exchange in built:
        request = exchange.request
        decision = classify_request(request.method, request.url, request.headers, request.body, set())
        response = exchange.response
        if decision is Decision.MAYBE and response is not None:
            if response.is_event_stream or response_says_mcp(response.headers, response.body):
                decision = Decision.MCP
        if decision is Decision.MCP:
            endpoints.add(endpoint_of(request.url))
            decided.add(exchange.id)
    return [
        exchange
        for exchange in built
        if exchange.id in decided
        or endpoint_of(exchange.request.url) in endpoints
        or classify_request(
            exchange.request.method, exchange.request.url, exchange.request.headers, exchange.request.body, endpoints
        )
        is Decision.MCP
    ]


# -- mitmproxy flow files --------------------------------------------------------------------------
def is_flow_file(path: Path) -> bool:
    """mitmproxy writes tnetstrings: ``<length>:<payload><type>``."""
    return bool(_TNETSTRING_HEAD.match(_head(path)))


def read_flow_file(path: Path, prefix: str) -> Loaded:
    try:
        from mitmproxy import http
        from mitmproxy.exceptions import FlowReadException
        from mitmproxy.io import FlowReader
    except ImportError as exc:  # pragma: no cover - mitmproxy is a dependency
        raise RecordingError(f"{path}: reading mitmproxy flow files needs mitmproxy ({exc})") from exc
    flows: list[Any] = []
    problems: list[str] = []
    try:
        with path.open("rb") as handle:
            for flow in FlowReader(handle).stream():
                if isinstance(flow, http.HTTPFlow):
                    flows.append(flow)
    except FlowReadException as exc:
        if not flows:
            raise RecordingError(f"{path}: not a readable mitmproxy flow file ({exc})") from exc
        problems.append(f"the flow file ends early ({exc}); the flows before that point were read")
    built: list[HttpExchange] = []
    noted: dict[str, list[str]] = {}
    for flow in flows:
        exchange, flow_problems = exchange_of(flow, prefix + str(flow.id))
        noted[exchange.id] = flow_problems
        built.append(exchange)
    exchanges: list[Exchange] = list(_mcp_traffic(built))
    problems.extend(problem for exchange in exchanges for problem in noted[exchange.id])
    skipped = len(built) - len(exchanges)
    exchanges.sort(key=lambda item: item.ending.time if isinstance(item, HttpExchange) and item.ending else 0.0)
    if skipped:
        problems.append(f"{skipped} flow(s) were not MCP traffic and were left out")
    return Loaded(exchanges, problems, "mitmproxy flows")


# -- HAR -------------------------------------------------------------------------------------------
def is_har(path: Path) -> bool:
    return bool(_HAR_HEAD.match(_head(path, 256)))


def _time(value: Any) -> float:
    if not isinstance(value, str):
        return 0.0
    try:
        return _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _text(value: Any, default: str = "") -> str:
    """A HAR string field as text a report can hold (a lone surrogate becomes U+FFFD); not a string: ``default``."""
    if not isinstance(value, str):
        return default
    return _bytes(value).decode("utf-8", "replace")


def _har_headers(items: Any) -> Headers:
    if not isinstance(items, list):
        return Headers()
    return Headers((_text(item.get("name")), _text(item.get("value"))) for item in items if isinstance(item, Mapping))


def _seconds(value: Any) -> float:
    """A HAR duration in milliseconds as seconds; anything but a finite positive number (or one over a
    day, which no exchange takes) counts as 0."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= _DAY_MS:
        return float(value) / 1000
    return 0.0


def _ms(timings: Mapping[str, Any], *names: str) -> float:
    return sum(_seconds(timings.get(name)) for name in names)


def _har_body(content: Mapping[str, Any]) -> bytes:
    text = content.get("text")
    if not isinstance(text, str):
        return b""
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text)
        except ValueError:
            return _bytes(text)
    return _bytes(text)


def _har_exchange(entry: Mapping[str, Any], ident: str) -> HttpExchange:
    request_data = entry.get("request") if isinstance(entry.get("request"), Mapping) else {}
    response_data = entry.get("response") if isinstance(entry.get("response"), Mapping) else {}
    timings = entry.get("timings") if isinstance(entry.get("timings"), Mapping) else {}
    assert isinstance(request_data, Mapping) and isinstance(response_data, Mapping) and isinstance(timings, Mapping)
    started = _time(entry.get("startedDateTime"))
    post = request_data.get("postData") if isinstance(request_data.get("postData"), Mapping) else {}
    assert isinstance(post, Mapping)
    request = HttpRequest(
        method=_text(request_data.get("method"), "GET"),
        url=_text(request_data.get("url")),
        headers=_har_headers(request_data.get("headers")),
        body=_har_body(post),
        time=started,
    )
    status = response_data.get("status")
    finished = started + _seconds(entry.get("time"))
    if not isinstance(status, int) or status <= 0:
        detail = _text(response_data.get("_error") or entry.get("_error")) or "no response in the capture"
        return HttpExchange.build(
            id=ident, request=request, ending=Ending(reason=EndReason.ERROR, time=finished, detail=detail)
        )
    head = started + _ms(timings, "blocked", "dns", "connect", "send", "wait")
    headers = _har_headers(response_data.get("headers"))
    content = response_data.get("content") if isinstance(response_data.get("content"), Mapping) else {}
    assert isinstance(content, Mapping)
    body = _har_body(content)
    content_type = media_type(headers.get(HeaderKey.CONTENT_TYPE)) or media_type(_text(content.get("mimeType")))
    if content_type == MediaType.EVENT_STREAM:
        response = HttpResponse(
            status=status,
            reason=_text(response_data.get("statusText")),
            headers=headers,
            time=head,
            events=tuple(parse_sse(body, time=head)),
        )
        if not body:
            # HAR writers keep no body for a stream that was cut off (a listen stream the client
            # closed): what it carried is unknown, so it is judged like a stream still open
            detail = EVENTS_LOST
            return HttpExchange.build(
                id=ident,
                request=request,
                response=response,
                ending=Ending(reason=EndReason.OPEN, time=finished, detail=detail),
            )
    else:
        response = HttpResponse(
            status=status, reason=_text(response_data.get("statusText")), headers=headers, time=head, body=body
        )
    return HttpExchange.build(
        id=ident, request=request, response=response, ending=Ending(reason=EndReason.COMPLETE, time=finished)
    )


def read_har(path: Path, prefix: str) -> Loaded:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
        entries = data["log"]["entries"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"{path}: not a readable HAR file ({exc})") from exc
    if not isinstance(entries, list):
        raise RecordingError(f"{path}: log.entries is not a list")
    built: list[HttpExchange] = []
    problems: list[str] = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, Mapping):
            problems.append(f"entry {number} is not an object; skipped")
            continue
        exchange = _har_exchange(entry, f"{prefix}har{number}")
        if exchange.ending is not None and exchange.ending.reason is EndReason.OPEN and exchange.response is not None:
            problems.append(f"entry {number}: an event stream without a body; its events cannot be judged")
        built.append(exchange)
    final = _mcp_traffic(built)
    skipped = len(built) - len(final)
    if skipped:
        problems.append(f"{skipped} HAR entr{'y was' if skipped == 1 else 'ies were'} not MCP traffic and left out")
    final.sort(key=lambda item: item.ending.time if item.ending else item.request.time)
    return Loaded(list(final), problems, "har")


FLOWS = Reader("a mitmproxy flow file", is_flow_file, read_flow_file)
HAR = Reader("a HAR file", is_har, read_har)
READERS = (FLOWS, HAR, RECORDING)
"""Every capture format ``mcp-assay validate`` reads, in the order files are tried."""
