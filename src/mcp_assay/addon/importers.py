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

Importing this module registers both readers with :mod:`mcp_assay.recording.inputs`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp_assay.addon.flows import Decision, classify_request, exchange_of, response_says_mcp
from mcp_assay.recording.inputs import RECORDING, Loaded, Reader
from mcp_assay.recording.readers import payload_bytes as _bytes
from mcp_assay.recording.readers import readable_url
from mcp_assay.vocabulary.errors import RecordingError
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType
from mcp_assay.wire.model import (
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
from mcp_assay.wire.sse import parse_sse
from mcp_assay.wire.traffic import url_endpoint

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
            endpoints.add(url_endpoint(request.url))
            decided.add(exchange.id)
    return [
        exchange
        for exchange in built
        if exchange.id in decided
        or url_endpoint(exchange.request.url) in endpoints
        or classify_request(
            exchange.request.method, exchange.request.url, exchange.request.headers, exchange.request.body, endpoints
        )
        is Decision.MCP
    ]


# -- mitmproxy flow files --------------------------------------------------------------------------
def is_flow_file(path: Path) -> bool:
    """mitmproxy writes tnetstrings: ``<length>:<payload><type>``."""
    return bool(_TNETSTRING_HEAD.match(_head(path)))


MAX_FLOW_PROBLEMS = 20
"""Flows left out that are named one by one; past that they are counted."""


def _flow_states(handle: Any, problems: list[str]) -> Any:
    """Each flow's state in a tnetstring stream, as mitmproxy's own reader takes it, or a problem: a flow mitmproxy
    cannot rebuild (a field missing, of the wrong type, a version it cannot migrate) is left out and the next one
    read, since each flow is framed on its own. A frame that cannot be read ends the file."""
    from mitmproxy import flow as mitm_flow
    from mitmproxy.io import compat, tnetstring

    number = 0
    skipped = 0
    while True:
        try:
            loaded = tnetstring.load(handle)
        except (ValueError, TypeError, IndexError) as exc:
            if str(exc) != "not a tnetstring: empty file":
                if number == 0:
                    raise RecordingError(f"not a readable mitmproxy flow file ({exc})") from None
                problems.append(f"the flow file ends early after {number} flow(s) ({str(exc)[:80]}); "
                                "the flows before that point were read")  # fmt: skip
            break
        number += 1
        try:
            if not isinstance(loaded, dict):
                raise ValueError(f"not a flow but a {type(loaded).__name__}")
            yield number, mitm_flow.Flow.from_state(compat.migrate_flow(loaded))
        except Exception as exc:  # mitmproxy's from_state raises whatever a missing or odd field makes it raise
            skipped += 1
            if skipped <= MAX_FLOW_PROBLEMS:
                problems.append(f"flow {number} could not be read and was left out ({type(exc).__name__}: "
                                f"{str(exc)[:80]})")  # fmt: skip
    if skipped > MAX_FLOW_PROBLEMS:
        problems.append(f"… and {skipped - MAX_FLOW_PROBLEMS} more flow(s) that could not be read")


def read_flow_file(path: Path, prefix: str) -> Loaded:
    try:
        from mitmproxy import http
    except ImportError as exc:  # pragma: no cover - mitmproxy is a dependency
        raise RecordingError(f"{path}: reading mitmproxy flow files needs mitmproxy ({exc})") from exc
    problems: list[str] = []
    built: list[HttpExchange] = []
    noted: dict[str, list[str]] = {}
    try:
        with path.open("rb") as handle:
            for number, flow in _flow_states(handle, problems):
                if not isinstance(flow, http.HTTPFlow):
                    continue
                try:
                    exchange, flow_problems = exchange_of(flow, prefix + str(flow.id))
                except Exception as exc:  # a flow whose fields hold what no live flow holds
                    problems.append(f"flow {number} could not be read and was left out ({type(exc).__name__}: "
                                    f"{str(exc)[:80]})")  # fmt: skip
                    continue
                if readable_url(exchange.request.url) is None:
                    problems.append(f"flow {number}: its request URL is not a URL; left out")
                    continue
                noted[exchange.id] = flow_problems
                built.append(exchange)
    except RecordingError as exc:
        raise RecordingError(f"{path}: {exc}") from None
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read ({exc})") from exc
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


def _field(entry: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = entry.get(name)
    return value if isinstance(value, Mapping) else {}


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
        if readable_url(_text(_field(entry, "request").get("url"))) is None:
            problems.append(f"entry {number}: its request URL is not a URL; skipped")
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
