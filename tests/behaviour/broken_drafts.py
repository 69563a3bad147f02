"""A deliberately broken drafts server (mcp 2.3.0): it answers a refusal politely after writing.

``create_draft`` stores the draft first and only then notices an argument its advertised schema
forbids, answering ``isError: true`` — the call looks refused and the record is there. Two test
routes: ``/_test/count`` (the honest count) and ``/_test/noisy`` (a count that grows on every read,
the witness a busy shared environment gives you).

With ``--eager`` it has a second bug, one layer out: the HTTP app stores a draft for any
``tools/call`` that carries a ``title`` argument before the MCP server has looked at the tool name,
the headers or the caller, so even a call naming an unknown tool writes.

usage: python broken_drafts.py PORT [--eager]
"""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.peers.asgi import read_body

DRAFTS: list[dict[str, Any]] = []
NOISE = [0]


async def create_draft(title: str, ctx: Context, delay_ms: int = 0) -> dict[str, Any]:
    """Create a draft (and only afterwards look at the arguments)."""
    DRAFTS.append({"title": title})
    arguments = (ctx.request_context.params or {}).get("arguments") or {}
    extra = sorted(set(arguments) - {"title", "delay_ms"})
    if extra:
        raise ToolError(f"unexpected argument(s) {', '.join(extra)}")
    return {"id": f"d_{len(DRAFTS)}"}


async def list_drafts() -> dict[str, Any]:
    """How many drafts there are."""
    return {"count": len(DRAFTS)}


def build() -> MCPServer:
    tools = [Tool.from_function(create_draft), Tool.from_function(list_drafts)]
    for tool in tools:
        tool.parameters["additionalProperties"] = False
    server = MCPServer("broken-drafts", version="1.0.0", tools=tools)

    @server.custom_route("/_test/count", methods=["GET"])
    async def count(request: Request) -> Response:
        return JSONResponse({"count": len(DRAFTS)})

    @server.custom_route("/_test/noisy", methods=["GET"])
    async def noisy(request: Request) -> Response:
        NOISE[0] += 1
        return JSONResponse({"count": len(DRAFTS) + NOISE[0]})

    return server


class EagerWrites:
    """The ``--eager`` bug: the side effect runs on the raw request, ahead of every check."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, receive = await read_body(receive)
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        params = payload.get("params") if isinstance(payload, dict) and payload.get("method") == "tools/call" else None
        arguments = params.get("arguments") if isinstance(params, dict) else None
        if isinstance(arguments, dict) and "title" in arguments:
            DRAFTS.append({"title": arguments["title"]})
        await self.app(scope, receive, send)


if __name__ == "__main__":
    app: ASGIApp = build().streamable_http_app(json_response=False, stateless_http=False)
    if "--eager" in sys.argv[2:]:
        app = EagerWrites(app)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
