"""From mitmproxy flows to mcp-assay's wire model, and which flows are MCP at all.

A proxy sees everything its clients send, and in forward mode that includes web pages, package
downloads and telemetry. Only MCP traffic is judged; the rest passes through untouched and
unrecorded. A flow is MCP when its request says so (a JSON-RPC body, an MCP header, or an
endpoint already seen carrying MCP), or, for a plain JSON POST, when the answer says so (an
event stream, or a JSON-RPC body). The authorization metadata of an origin already seen carrying
MCP (``.well-known/oauth-protected-resource`` and friends) is kept too, for the AUTH rules, and
so, once MCP has passed, is a client's OAuth flow wherever its authorization server lives:
authorization server metadata, and authorization, token and registration requests (told by
their shape), which only a forward proxy sees.

The same conversion serves the live addon and the reader for saved flow files
(``mitmdump -w``), so a capture judged later matches what was judged live.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.vocabulary.protocol import HeaderKey, MediaType
from mcp_assay.wire.model import (
    EVENTS_LOST,
    Ending,
    EndReason,
    Headers,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    media_type,
    oauth_request_kind,
)
from mcp_assay.wire.sse import SseEvent, parse_sse
from mcp_assay.wire.traffic import ENDPOINT_URL_KEPT_LENGTH, url_endpoint

__all__ = [
    "MCP_HEADERS",
    "Decision",
    "classify_request",
    "decoded_content",
    "ending_of",
    "exchange_of",
    "headers_of",
    "is_event_stream",
    "jsonrpc_shape",
    "method_and_url",
    "request_of",
    "response_body",
    "response_head",
    "response_says_mcp",
]

MCP_HEADERS = (HeaderKey.PROTOCOL_VERSION, HeaderKey.SESSION_ID, HeaderKey.METHOD, HeaderKey.NAME)
_MCP_HEADERS = frozenset(str(name) for name in MCP_HEADERS)


class Decision(StrEnum):
    """Whether a request is MCP traffic."""

    MCP = "mcp"
    MAYBE = "maybe"
    """A JSON-looking POST without MCP markers: the response decides."""
    NOT = "not"


def _text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def headers_of(fields: Sequence[tuple[bytes, bytes]]) -> Headers:
    """Header fields in wire order, names as sent (values UTF-8, or Latin-1 when not UTF-8).

    Every request and response through the proxy passes here, so a block that is all UTF-8 (all of them,
    in practice) is decoded in one comprehension, and only a block that is not is decoded field by field."""
    try:
        pairs = [(name.decode(), value.decode()) for name, value in fields]
    except UnicodeDecodeError:
        pairs = [(_text(name), _text(value)) for name, value in fields]
    return Headers.of_text(pairs)


def jsonrpc_shape(body: bytes) -> bool | None:
    """True for a JSON-RPC message or batch, False for other JSON, None when not JSON at all."""
    stripped = body.strip()
    if not stripped or stripped[:1] not in (b"{", b"["):
        return None
    try:
        payload: Any = json.loads(stripped)
    except ValueError:
        return None
    items = payload if isinstance(payload, list) else [payload]
    return bool(items) and all(
        isinstance(item, dict) and ("jsonrpc" in item or "method" in item or ("id" in item and "result" in item))
        for item in items
    )


AUTHORIZATION_METADATA = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _is_authorization_metadata(url: str) -> bool:
    path = urlsplit(url).path
    return any(marker in path for marker in AUTHORIZATION_METADATA)


def _is_authorization_server_metadata(url: str) -> bool:
    path = urlsplit(url).path
    return any(marker in path for marker in AUTHORIZATION_METADATA[1:])


def classify_request(method: str, url: str, headers: Headers, body: bytes, known_endpoints: set[str]) -> Decision:
    """Decide from the request alone, when it can be decided."""
    if headers.has_any(_MCP_HEADERS):
        return Decision.MCP
    shape = jsonrpc_shape(body) if body else None
    if shape:
        return Decision.MCP
    if url_endpoint(url) in known_endpoints:
        return Decision.MCP
    if _is_authorization_metadata(url) and _origin(url) in {_origin(known) for known in known_endpoints}:
        return Decision.MCP  # PRM and AS metadata of an MCP server: the AUTH rules judge them
    if known_endpoints and (
        _is_authorization_server_metadata(url)
        or oauth_request_kind(method, url, media_type(headers.get(HeaderKey.CONTENT_TYPE)), body) is not None
    ):
        return Decision.MCP  # a client's OAuth flow, once it speaks MCP through this proxy (AUTH-39..49)
    if method.upper() == "POST" and (
        shape is not None
        or media_type(headers.get(HeaderKey.CONTENT_TYPE)) == MediaType.JSON
        or body[:1] in (b"{", b"[")
    ):
        return Decision.MAYBE
    return Decision.NOT


def is_event_stream(headers: Headers) -> bool:
    return headers.media_type() == MediaType.EVENT_STREAM


def response_says_mcp(headers: Headers, body: bytes | None) -> bool:
    """For an undecided POST: an event stream or a JSON-RPC body makes it MCP."""
    if is_event_stream(headers):
        return True
    return bool(body) and bool(jsonrpc_shape(body or b""))


_CONTENT_ENCODING = "content-encoding"


def decoded_content(message: Any, headers: Headers) -> bytes | None:
    """``message.get_content(strict=False)`` of a mitmproxy request or response: its body with the content-encoding
    removed when possible. ``headers``: the message's own (:func:`headers_of`). Every MCP message through the proxy
    passes here, and almost none is encoded, so the header is looked for in the block already read, and mitmproxy's
    lookup (a dozen calls) is asked only when it is there."""
    raw: bytes | None = message.raw_content
    if raw is None or headers.get(_CONTENT_ENCODING) is None:
        return raw
    content: bytes | None = message.get_content(strict=False)
    return content


def method_and_url(request: Any) -> tuple[str, str]:
    """``request.method`` and ``request.url`` of a mitmproxy request, worked out once per request line.

    mitmproxy builds the URL from six fields in a dozen calls for every request, and a proxy's MCP traffic names
    few URLs, so the answer is kept by those fields as they are held (the key is everything the two read)."""
    data = request.data
    key = (data.method, data.scheme, data.authority, data.host, data.port, data.path)
    known = _REQUEST_LINES.get(key)
    if known is None:
        known = (request.method, request.url)
        short = len(data.path) + len(data.authority) <= ENDPOINT_URL_KEPT_LENGTH
        if short and len(_REQUEST_LINES) < REQUEST_LINES_KEPT:
            _REQUEST_LINES[key] = known
    return known


REQUEST_LINES_KEPT = 256
"""Request lines :func:`method_and_url` keeps at most (a longer one than a kept URL is worked out each time)."""
_REQUEST_LINES: dict[tuple[bytes, bytes, bytes, str, int, bytes], tuple[str, str]] = {}


def request_of(flow: Any) -> HttpRequest:
    """The request of a mitmproxy ``HTTPFlow`` (body with content-encoding removed when possible)."""
    request = flow.request
    headers = headers_of(request.headers.fields)
    body = decoded_content(request, headers)
    if body is None:
        body = request.raw_content or b""
    method, url = method_and_url(request)
    return HttpRequest(
        method=method,
        url=url,
        headers=headers,
        body=body,
        time=float(request.timestamp_start or 0.0),
    )


def response_head(flow: Any) -> tuple[int, str, Headers, float]:
    response = flow.response
    return (
        int(response.status_code),
        response.reason or "",
        headers_of(response.headers.fields),
        float(response.timestamp_start or 0.0),
    )


def response_body(flow: Any, headers: Headers) -> bytes | None:
    """The stored response body (decoded), or ``None`` when it was streamed and not kept. ``headers``: the
    response's own (:func:`response_head`)."""
    response = flow.response
    if response is None or response.raw_content is None:
        return None
    content = decoded_content(response, headers)
    return content if content is not None else bytes(response.raw_content)


def ending_of(flow: Any, *, response_started: bool) -> tuple[EndReason, str]:
    """How a flow that reached the ``error`` hook ended."""
    message = str(getattr(flow.error, "msg", "") or "")
    lowered = message.lower()
    if "client disconnected" in lowered:
        return EndReason.CLIENT_DISCONNECT, message
    if "server disconnected" in lowered or "peer closed" in lowered or (response_started and "killed" not in lowered):
        return EndReason.SERVER_DISCONNECT, message
    return EndReason.ERROR, message


def exchange_of(flow: Any, ident: str | None = None) -> tuple[HttpExchange, list[str]]:
    """A finished flow (from a flow file) as an exchange, and what could not be recovered."""
    problems: list[str] = []
    ident = ident or str(flow.id)
    request = request_of(flow)
    response: HttpResponse | None = None
    ending: Ending
    if flow.response is not None:
        status, reason, headers, head_time = response_head(flow)
        body = response_body(flow, headers)
        if is_event_stream(headers):
            events: tuple[SseEvent, ...] = ()
            if body is None and flow.error is not None:
                problems.append(
                    f"flow {ident}: mitmproxy keeps no body for an event stream that ended with an error "
                    f"({flow.error.msg}), such as a listen stream the client closed; its events cannot be judged "
                    "(the addon's own recording keeps them)"
                )
            elif body is None:
                problems.append(
                    f"flow {ident}: the event stream was streamed and not stored; its events cannot be judged "
                    "(capture with --set store_streamed_bodies=true to keep them)"
                )
            else:
                events = tuple(parse_sse(body, time=head_time))
            response = HttpResponse(status=status, reason=reason, headers=headers, time=head_time, events=events)
        else:
            response = HttpResponse(status=status, reason=reason, headers=headers, time=head_time, body=body or b"")
    if flow.error is not None and response is not None and response.is_event_stream and not response.events:
        # the capture lost what the stream carried: judge it like a stream still open when capture stopped
        detail = f"{flow.error.msg} ({EVENTS_LOST})"
        ending = Ending(reason=EndReason.OPEN, time=float(flow.error.timestamp or request.time), detail=detail)
    elif flow.error is not None:
        reason_, detail = ending_of(flow, response_started=flow.response is not None)
        end_time = float(getattr(flow.error, "timestamp", 0.0) or request.time)
        ending = Ending(reason=reason_, time=end_time, detail=detail)
    elif flow.response is not None:
        ending = Ending(reason=EndReason.COMPLETE, time=float(flow.response.timestamp_end or request.time))
    else:
        ending = Ending(reason=EndReason.OPEN, time=request.time)
    exchange = HttpExchange.build(
        id=ident,
        request=request,
        response=response,
        ending=ending,
        connection=str(getattr(flow.client_conn, "id", "") or ""),
    )
    return exchange, problems
