"""A deliberately broken Streamable HTTP MCP server: one scenario per path, one fault per scenario.

``/ok/mcp`` (and every ``/client-*/mcp``) behaves: 2026-07-28 per request, 2025-11-25 after
``initialize``, with the header and envelope checks a server must make. Every other path breaks
exactly one thing, named in ``tests/peers/broken/__init__.py``. Plain Starlette (it comes with the
``mcp`` package), because the official SDK will not misbehave on purpose.

usage: python http_server.py PORT
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "broken-fixture", "version": "1.0.0"}}
ADD = {
    "name": "add",
    "description": "Add two integers.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
CACHE = {"ttlMs": 0, "cacheScope": "private"}
STREAM_LIMIT_S = 10.0


def _message(payload: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + json.dumps(payload).encode() + b"\n\n"


def _error(ident: Any, code: int, message: str, status: int) -> JSONResponse:
    body: dict[str, Any] = {"jsonrpc": "2.0", "error": {"code": code, "message": message}}
    body["id"] = ident
    return JSONResponse(body, status_code=status)


def _result(ident: Any, result: dict[str, Any], *, content_type: str = "application/json") -> Response:
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result})
    return Response(body, media_type=content_type)


def _sse(events: list[dict[str, Any]]) -> Response:
    async def stream() -> AsyncIterator[bytes]:
        for event in events:
            yield _message(event)
            await asyncio.sleep(0.01)

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"})


def _complete(result: dict[str, Any], *, cache: bool = False) -> dict[str, Any]:
    return {"resultType": "complete", **result, **(CACHE if cache else {}), "_meta": SERVER_META}


def discover(scenario: str) -> dict[str, Any]:
    result = _complete(
        {
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}, "completions": {}},
        },
        cache=True,
    )
    if scenario == "versions":
        del result["supportedVersions"]
    return result


def tools_list(scenario: str) -> dict[str, Any]:
    if scenario == "mrtr":
        return {"resultType": "input_required", "requestState": "opaque-state", "_meta": SERVER_META}
    tool = {key: value for key, value in ADD.items() if not (scenario == "tools" and key == "inputSchema")}
    result = _complete({"tools": [tool]}, cache=True)
    if scenario == "results":
        del result["resultType"]
    return result


def tools_call(scenario: str, ident: Any, params: dict[str, Any]) -> Response:
    result = _complete({"content": [{"type": "text", "text": "3"}], "isError": False})
    token = params.get("_meta", {}).get("progressToken")
    if token is None and scenario not in ("cancellation", "logging"):
        return _result(ident, result)
    events: list[dict[str, Any]] = []
    if token is not None:
        quoted = "not-the-request-token" if scenario == "progress" else token
        for step in (1, 2):
            events.append(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": quoted, "progress": step, "total": 2},
                }
            )
    if scenario == "logging":
        events.append({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}})
    if scenario == "cancellation":
        events.append({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": ident}})
    events.append({"jsonrpc": "2.0", "id": ident, "result": result})
    return _sse(events)


def listen(scenario: str, ident: Any, params: dict[str, Any], request: Request) -> Response:
    wanted = params.get("notifications")
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": wanted if isinstance(wanted, dict) else {}, "_meta": {SUBSCRIPTION_KEY: ident}},
    }
    changed = {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUBSCRIPTION_KEY: ident}},
    }
    order = [changed, ack] if scenario == "subscriptions" else [ack, changed]

    async def stream() -> AsyncIterator[bytes]:
        for event in order:
            yield _message(event)
            await asyncio.sleep(0.02)
        waited = 0.0
        while waited < STREAM_LIMIT_S and not await request.is_disconnected():
            await asyncio.sleep(0.05)
            waited += 0.05

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"})


def initialize(scenario: str, ident: Any) -> Response:
    result: dict[str, Any] = {
        "protocolVersion": LEGACY,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "broken-fixture", "version": "1.0.0"},
    }
    if scenario == "handshake":
        del result["serverInfo"]
    response = _result(ident, result)
    response.headers["mcp-session-id"] = f"session-{scenario}"
    return response


async def endpoint(request: Request) -> Response:
    scenario = request.path_params["scenario"]
    if request.method != "POST":
        return Response(status_code=405, headers={"allow": "POST"})
    try:
        body = json.loads(await request.body())
    except ValueError:
        return _error(None, -32700, "Parse error", 400)
    if isinstance(body, list):
        return _error(None, -32600, "Batches are not accepted", 400)
    if not isinstance(body, dict) or not isinstance(body.get("method"), str):
        return _error(None, -32600, "Invalid request", 400)
    method, ident = body["method"], body.get("id")
    params = body.get("params") if isinstance(body.get("params"), dict) else {}
    if "id" not in body:
        return Response(status_code=202)
    modern = request.headers.get("mcp-protocol-version") == MODERN
    if method == "initialize" and not modern:
        return initialize(scenario, ident)
    if not modern:
        if method == "tools/list" and request.headers.get("mcp-session-id"):
            return _result(ident, {"tools": [ADD]})
        return _error(ident, -32600, "Bad Request: no session", 400)
    meta = params.get("_meta")
    if (
        not isinstance(meta, dict)
        or VERSION_KEY not in meta
        or "io.modelcontextprotocol/clientCapabilities" not in meta
    ):
        return _error(ident, -32602, "params._meta must carry the protocol version and client capabilities", 400)
    if request.headers.get("mcp-method") != method or meta.get(VERSION_KEY) != MODERN:
        return _error(ident, -32020, "a standard header does not match the request body", 400)
    if method == "server/discover":
        return _result(ident, discover(scenario))
    if method == "tools/list":
        content_type = "text/plain" if scenario == "http" else "application/json"
        return _result(ident, tools_list(scenario), content_type=content_type)
    if method == "tools/call":
        return tools_call(scenario, ident, params)
    if method == "resources/list":
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            return _error(ident, -32602, "Invalid cursor", 400)
        result = _complete({"resources": [{"uri": "info://a", "name": "a"}]}, cache=True)
        if scenario == "pagination":
            result["nextCursor"] = 7
        return _result(ident, result)
    if method == "resources/read":
        item: dict[str, Any] = {"uri": params.get("uri"), "mimeType": "text/plain", "text": "hello"}
        if scenario == "resources":
            del item["uri"]
        return _result(ident, _complete({"contents": [item]}, cache=True))
    if method == "prompts/get":
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict) or not all(isinstance(value, str) for value in arguments.values()):
            return _error(ident, -32602, "Prompt arguments must be strings", 400)
        role = "system" if scenario == "prompts" else "user"
        return _result(ident, _complete({"messages": [{"role": role, "content": {"type": "text", "text": "hi"}}]}))
    if method == "completion/complete":
        values = [f"value-{n}" for n in range(101 if scenario == "completion" else 1)]
        return _result(ident, _complete({"completion": {"values": values, "total": len(values), "hasMore": False}}))
    if method == "subscriptions/listen":
        wanted = params.get("notifications")
        if not isinstance(wanted, dict) or not all(
            isinstance(value, bool) for key, value in wanted.items() if key != "resourceSubscriptions"
        ):
            return _error(ident, -32602, "Invalid subscription filter", 400)
        return listen(scenario, ident, params, request)
    code = -32603 if scenario == "jsonrpc" else -32601
    return _error(ident, code, "Method not found", 404)


app = Starlette(routes=[Route("/{scenario}/mcp", endpoint, methods=["GET", "POST", "DELETE"])])


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
