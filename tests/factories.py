"""Hand-built traffic for unit tests of single checks.

``modern()`` / ``legacy()`` build realistic 2026-07-28 and 2025-11-25 HTTP exchanges (headers
included) that individual tests then bend in exactly one place; ``judge()`` runs one check over a
log and returns its verdict.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY, Check
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Side, Verdict
from mcp_assay.wire.model import (
    Ending,
    EndReason,
    Exchange,
    Headers,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    Probe,
    StdioLine,
)
from mcp_assay.wire.sse import SseEvent
from mcp_assay.wire.traffic import ExchangeLog


def as_probe(tag: Probe | Mapping[str, Any] | str | None) -> Probe | None:
    """A probe tag as tests write it (a recording-style dict, or just a name) as the typed value."""
    if tag is None or isinstance(tag, Probe):
        return tag
    if isinstance(tag, str):
        return Probe.from_record({"name": tag})
    return Probe.from_record(tag)


MODERN = "2026-07-28"
LEGACY = "2025-11-25"
URL = "http://127.0.0.1:8000/mcp"
META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO = {"name": "t", "version": "1"}

_ids = itertools.count(1)
_clock = itertools.count(1)


def tick() -> float:
    return 1_700_000_000.0 + next(_clock) / 100


def meta(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    return {
        META_KEY: version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        **extra,
    }


def server_info() -> dict[str, Any]:
    return {"io.modelcontextprotocol/serverInfo": {"name": "fixture", "version": "1.0"}}


def request_body(method: str, ident: Any = 1, params: Any = None, *, version: str | None = MODERN) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is None:
        params = {}
    if version is not None and isinstance(params, dict):
        params = {**params, "_meta": {**meta(version), **params.get("_meta", {})}}
    if params is not None:
        body["params"] = params
    return body


def result_body(result: Any, ident: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def error_body(code: int, message: str = "error", ident: Any = 1, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body: dict[str, Any] = {"jsonrpc": "2.0", "error": error}
    if ident is not None:
        body["id"] = ident
    return body


def encode(body: Any) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body).encode()


def modern_headers(body: Any, **overrides: str | None) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
    }
    if isinstance(body, dict) and isinstance(body.get("method"), str):
        headers["mcp-method"] = body["method"]
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        if body["method"] in ("tools/call", "prompts/get") and isinstance(params.get("name"), str):
            headers["mcp-name"] = params["name"]
        if body["method"] == "resources/read" and isinstance(params.get("uri"), str):
            headers["mcp-name"] = params["uri"]
    for name, value in overrides.items():
        key = name.replace("_", "-").lower()
        if value is None:
            headers.pop(key, None)
        else:
            headers[key] = value
    return headers


def http(
    body: Any,
    response: Any = None,
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    response_headers: Mapping[str, str] | None = None,
    events: Iterable[Any] | None = None,
    method: str = "POST",
    url: str = URL,
    ending: EndReason = EndReason.COMPLETE,
    probe: Mapping[str, Any] | None = None,
    ident: str | None = None,
) -> HttpExchange:
    """One HTTP exchange; ``events`` (JSON values, or SseEvent) make it an SSE response."""
    t0 = tick()
    raw = b"" if body is None else encode(body)
    request = HttpRequest(
        method=method,
        url=url,
        headers=Headers(headers if headers is not None else modern_headers(body)),
        body=raw,
        time=t0,
    )
    if events is not None:
        sse = tuple(
            item if isinstance(item, SseEvent) else SseEvent(time=tick(), data=json.dumps(item), event="message")
            for item in events
        )
        response_obj = HttpResponse(
            status=status,
            headers=Headers(response_headers or {"content-type": "text/event-stream", "x-accel-buffering": "no"}),
            time=t0 + 0.001,
            body=None,
            events=sse,
        )
    elif response is None and status == 202:
        response_obj = HttpResponse(status=status, headers=Headers(response_headers or {}), time=t0 + 0.001, body=b"")
    elif response is None:
        response_obj = HttpResponse(status=status, headers=Headers(response_headers or {}), time=t0 + 0.001, body=b"")
    else:
        response_obj = HttpResponse(
            status=status,
            headers=Headers(response_headers or {"content-type": "application/json"}),
            time=t0 + 0.001,
            body=encode(response),
        )
    return HttpExchange.build(
        id=ident or f"h{next(_ids)}",
        request=request,
        response=response_obj,
        ending=Ending(reason=ending, time=tick()),
        probe=as_probe(probe),
    )


def modern_call(method: str, params: Any, result: Any, *, ident: Any = 1, **kwargs: Any) -> HttpExchange:
    """A well-formed 2026 request and its JSON result."""
    body = request_body(method, ident, params)
    if isinstance(result, dict) and "resultType" not in result and not kwargs.pop("bare", False):
        result = {"resultType": "complete", **result, "_meta": server_info()}
    return http(body, result_body(result, ident), **kwargs)


def initialize_body(
    version: str = LEGACY, *, ident: Any = 0, capabilities: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A 2025 initialize request offering ``version`` and the client's ``capabilities``."""
    params = {"protocolVersion": version, "capabilities": dict(capabilities or {}), "clientInfo": dict(CLIENT_INFO)}
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": params}


def initialize_result(version: str = LEGACY, capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A 2025 InitializeResult agreeing on ``version``; the server declares ``capabilities`` (default: tools)."""
    declared = {"tools": {"listChanged": False}} if capabilities is None else dict(capabilities)
    return {"protocolVersion": version, "capabilities": declared, "serverInfo": {"name": "fixture", "version": "1.0"}}


def legacy_session(
    session: str = "sess-1", version: str = LEGACY, *, capabilities: Mapping[str, Any] | None = None
) -> list[HttpExchange]:
    """initialize + notifications/initialized for a 2025-11-25 session (the server declares ``capabilities``)."""
    first = http(
        initialize_body(version),
        result_body(initialize_result(version, capabilities), 0),
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
        response_headers={"content-type": "application/json", "mcp-session-id": session},
    )
    return [first, initialized(session)]


def initialized(session: str = "sess-1", **extra: str) -> HttpExchange:
    """The client's notifications/initialized in a 2025 HTTP session."""
    return http(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, status=202, headers=legacy_headers(session, **extra)
    )


def legacy_headers(session: str = "sess-1", **extra: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": LEGACY,
        "mcp-session-id": session,
        **extra,
    }


def legacy_call(
    method: str, params: Any, answer: Any, *, ident: Any = 1, session: str = "sess-1", **kwargs: Any
) -> HttpExchange:
    """A 2025 request in ``session`` answered with ``answer`` (a result object, or an error body)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        body["params"] = params
    response = answer if isinstance(answer, dict) and "error" in answer else result_body(answer, ident)
    return http(body, response, headers=legacy_headers(session), **kwargs)


def stdio(sender: Side, body: Any, *, connection: str = "conn-1", probe: Mapping[str, Any] | None = None) -> StdioLine:
    raw = encode(body) + b"\n"
    return StdioLine.build(
        id=f"s{next(_ids)}", connection=connection, sender=sender, time=tick(), raw=raw, probe=as_probe(probe)
    )


def log_of(*items: Exchange | Iterable[Exchange]) -> ExchangeLog:
    log = ExchangeLog()
    for item in items:
        if isinstance(item, list | tuple):
            for inner in item:
                log.add(inner)
        else:
            log.add(item)  # type: ignore[arg-type]
    return log


def judge(log: ExchangeLog, spec: SpecSet, check: str, **settings: Any) -> Verdict:
    """Run one registered check over ``log``."""
    from mcp_assay.spec import rules  # noqa: F401

    (verdict,) = evaluate(log, spec, checks=[REGISTRY[check]], settings=settings)
    return verdict


def rules_of(*areas: str) -> list[Check]:
    """The registered checks of some rule areas: an area is a package or module under ``spec/rules/``
    (``http`` holds ``http/headers.py``, ``http/streams.py`` …)."""
    from mcp_assay.spec import rules  # noqa: F401

    def family(check: Check) -> str:
        parts = check.func.__module__.split(".")
        area = parts[parts.index("rules") + 1] if "rules" in parts else ""
        return area if area in areas else ""

    return [check for check in REGISTRY.values() if family(check)]
