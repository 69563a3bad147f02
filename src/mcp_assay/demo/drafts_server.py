"""A small drafts server on the official Python SDK (mcp 2.3.0), in a naive and a hardened build.

Three tools: ``list_drafts`` (read-only; the count is in ``structuredContent``), ``read_draft``
(one draft by id) and ``create_draft`` (a write, with a ``delay_ms`` knob that stands in for slow
storage). Drafts live in a JSON file (``--store``), so a test route, a shell command and the
``list_drafts`` tool all see the same records: they are the witnesses mcp-assay reads to prove
what a call did or did not change.

The two builds advertise the same tools and differ in exactly nine behaviours: five the behaviour
cases catch, and four input-dependent faults of ``list_drafts`` (whose ``status``, ``limit`` and
``query`` arguments are optional) that only ``run --explore`` reaches, since the fixed cases call it
with no arguments:

============================  ===============================  ==================================
behaviour                     naive                            hardened
============================  ===============================  ==================================
caller gives up (cancel)      the slow write is shielded and   the wait is abortable and the
                              lands anyway                     commit re-checks before writing
argument schema               ``additionalProperties: false``  arguments are checked against it;
                              is advertised but extras are     an extra key is a tool error and
                              dropped and the write happens    nothing is written
who is offered create_draft   every principal, and anyone may  only writers; others get -32602
                              call it                          (as for any unknown tool) and
                                                               never see it listed
draft handles                 any caller may read any draft    a draft is readable by its owner
2025 sessions (HTTP)          any valid token may use any      a session belongs to the role that
                              session id                       opened it; another gets 404
``limit`` bounds (1..50)      advertised, not enforced: 0 or   refused (a tool error), like every
                              51 lists as if they were valid   argument outside the schema
``status: "archived"``        ``count`` comes back ``null``,   ``count`` is 0: structuredContent
                              breaking the outputSchema        keeps to the outputSchema
``query`` outside ASCII       crashes into -32603 whose        matched like any text
                              message carries the traceback
``query`` over 64 characters  echoed as an image block whose   echoed in the text block only
                              ``data`` is not base64
============================  ===============================  ==================================

Principals: over HTTP, bearer tokens named after their role (``--token reader=SECRET``,
``--token writer=SECRET``, or ``DRAFTS_READER_TOKEN`` / ``DRAFTS_WRITER_TOKEN``); with no token
configured every caller is a writer. Over stdio the process runs as one principal (``--as`` or
``DRAFTS_PRINCIPAL``, writer by default), the way stdio servers take credentials from their
environment. 2026-07-28 is served in SSE mode and 2025-11-25 statefully, so a client's
cancellation reaches the handler in both eras.

It ships inside the package (so ``mcp-assay demo`` can start it after a plain ``pip install``);
``examples/servers/drafts_server.py`` runs this module.

usage: python -m mcp_assay.demo.drafts_server --build naive|hardened --store FILE [--token ROLE=TOKEN ...] http PORT
       python -m mcp_assay.demo.drafts_server --build naive|hardened --store FILE [--as ROLE] stdio
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from jsonschema import Draft202012Validator
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ContentBlock, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_assay.vocabulary.protocol import ErrorCode, Header, HeaderKey

__all__ = ["ROLES", "build", "main"]

ROLES = ("reader", "writer")
WRITE_TOOLS = frozenset({"create_draft"})
ECHO_LIMIT = 64
"""Queries longer than this are echoed back as an attachment (where the naive build's fault lives)."""
LIST_ARGUMENTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"enum": ["draft", "archived"], "description": "only drafts in this state"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20, "description": "at most this many"},
        "query": {"type": "string", "maxLength": 200, "description": "only drafts whose title contains it"},
    },
    "additionalProperties": False,
}
"""``list_drafts``'s advertised inputSchema (both builds; only the hardened one holds callers to it)."""
DRAFT_LIST: dict[str, Any] = {
    "type": "object",
    "properties": {
        "drafts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "string"}},
                "required": ["id", "title", "status"],
            },
        },
        "count": {"type": "integer", "minimum": 0},
    },
    "required": ["drafts", "count"],
}
"""``list_drafts``'s advertised outputSchema."""


# -- storage -------------------------------------------------------------------------------------
class Store:
    """Drafts in one JSON file, rewritten atomically on every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            self._write([])

    def drafts(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        drafts = data.get("drafts") if isinstance(data, dict) else None
        return [item for item in drafts if isinstance(item, dict)] if isinstance(drafts, list) else []

    def add(self, draft: dict[str, Any]) -> None:
        self._write([*self.drafts(), draft])

    def _write(self, drafts: list[dict[str, Any]]) -> None:
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"drafts": drafts}, indent=1), encoding="utf-8")
        os.replace(temporary, self.path)


# -- principals ----------------------------------------------------------------------------------
class Principals:
    """Who is calling: a bearer token's role over HTTP, the process's role over stdio."""

    def __init__(self, tokens: Mapping[str, str], stdio_role: str) -> None:
        self.by_token = {token: role for role, token in tokens.items()}
        self.stdio_role = stdio_role

    @property
    def enforced(self) -> bool:
        return bool(self.by_token)

    def role(self, headers: Mapping[str, str] | None) -> str | None:
        """The caller's role; ``None`` for an HTTP caller with no known token when tokens are configured."""
        if headers is None:
            return self.stdio_role
        if not self.enforced:
            return "writer"
        scheme, _, token = (headers.get(HeaderKey.AUTHORIZATION) or "").partition(" ")
        return self.by_token.get(token.strip()) if scheme.lower() == "bearer" else None


class BearerGate:
    """Answers 401 on the MCP endpoint to callers without a configured token (test routes stay open)."""

    def __init__(self, app: ASGIApp, principals: Principals) -> None:
        self.app = app
        self.principals = principals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.principals.enforced and not scope["path"].startswith("/_test/"):
            headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
            if self.principals.role(headers) is None:
                response = JSONResponse(
                    {"error": "invalid_token"},
                    status_code=401,
                    headers={Header.WWW_AUTHENTICATE: 'Bearer realm="drafts"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SessionBinding:
    """The hardened build's 2025 sessions: each belongs to the role that opened it.

    The SDK hands out ``Mcp-Session-Id`` values and accepts any of them from any caller; this gate
    notes the role whose request was answered with a new session id, and answers a request that
    presents that id with another role's token ``404`` with the very answer the SDK gives for an
    unknown session (a JSON-RPC error without the request's id)."""

    def __init__(self, app: ASGIApp, principals: Principals) -> None:
        self.app = app
        self.principals = principals
        self.owners: dict[str, str | None] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        role = self.principals.role(headers)
        session = headers.get(HeaderKey.SESSION_ID)
        if session is not None and session in self.owners and self.owners[session] != role:
            error = {"code": ErrorCode.INVALID_REQUEST, "message": "Session not found"}
            await JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=404)(scope, receive, send)
            return

        async def noting(message: Any) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.decode("latin-1").lower() == HeaderKey.SESSION_ID:
                        self.owners.setdefault(value.decode("latin-1"), role)
            await send(message)

        await self.app(scope, receive, noting)


def _headers_of(request: Any) -> Mapping[str, str] | None:
    headers = getattr(request, "headers", None)
    return headers if headers is not None else None


# -- the server ----------------------------------------------------------------------------------
class Draft(BaseModel):
    id: str
    title: str
    body: str
    status: str


class Created(BaseModel):
    id: str
    status: str


def build(build_name: str, store: Store, principals: Principals) -> MCPServer:
    """The drafts server for one build (``naive`` or ``hardened``)."""
    hardened = build_name == "hardened"

    def caller(ctx: Context) -> str:
        return principals.role(ctx.headers) or "anonymous"

    def strict(ctx: Context, name: str) -> None:
        """The hardened build holds callers to the advertised schema: an argument it does not define is refused,
        and so is any value the schema does not allow (a bound, a length, an enum)."""
        if not hardened:
            return  # the naive build lets the SDK drop unknown arguments and carries on
        arguments = (ctx.request_context.params or {}).get("arguments") or {}
        extra = sorted(set(arguments) - set(schemas[name].get("properties", {})))
        if extra:
            raise ToolError(f"Invalid arguments for {name}: unexpected {', '.join(map(repr, extra))}")
        problem = next(Draft202012Validator(schemas[name]).iter_errors(arguments), None)
        if problem is not None:
            raise ToolError(f"Invalid arguments for {name}: {problem.message}")

    async def list_drafts(
        ctx: Context, status: str | None = None, limit: int = 20, query: str | None = None
    ) -> CallToolResult:
        """List drafts (id, title, status) and how many there are; optionally by status or title, at most limit."""
        strict(ctx, "list_drafts")
        drafts = [d for d in store.drafts() if status in (None, d.get("status", "draft"))]
        if query is not None:
            if not hardened:
                try:  # the naive build's title index is ASCII, and it reports its crashes with their traceback
                    needle = query.encode("ascii").lower().decode()
                except UnicodeEncodeError as exc:
                    trace = "".join(traceback.format_exception(exc))
                    raise MCPError(ErrorCode.INTERNAL_ERROR, f"internal error while listing drafts:\n{trace}") from exc
            else:
                needle = query.casefold()
            drafts = [d for d in drafts if needle in str(d.get("title", "")).casefold()]
        summaries = [{"id": d["id"], "title": d["title"], "status": d["status"]} for d in drafts][: max(limit, 0)]
        payload: dict[str, Any] = {"drafts": summaries, "count": len(summaries)}
        if status == "archived" and not hardened:
            payload["count"] = None  # the naive build's archive is not counted yet, and says so with null
        content: list[ContentBlock] = [TextContent(type="text", text=json.dumps(payload))]
        if query is not None and len(query) > ECHO_LIMIT and not hardened:
            # the naive build attaches a long query as a "query card" image, and forgets to base64-encode it
            content.append(ImageContent(type="image", data=f"query:{query}", mime_type="image/png"))
        return CallToolResult(content=content, structured_content=payload)

    async def read_draft(draft_id: str, ctx: Context) -> Draft:
        """Read one draft, body included."""
        strict(ctx, "read_draft")
        for draft in store.drafts():
            if draft.get("id") != draft_id:
                continue
            if hardened and draft.get("owner") != caller(ctx):
                break  # a handle is not a credential: someone else's draft reads as missing
            return Draft(id=draft["id"], title=draft["title"], body=draft["body"], status=draft["status"])
        raise ToolError(f"no draft {draft_id!r}")

    async def create_draft(title: str, body: str, ctx: Context, delay_ms: int = 0) -> Created:
        """Create an unpublished draft. This server cannot publish; drafts stay unpublished."""
        strict(ctx, "create_draft")
        draft = {"id": f"d_{secrets.token_hex(4)}", "title": title, "body": body, "status": "draft"}
        draft["owner"] = caller(ctx)
        if hardened:
            await anyio.sleep(delay_ms / 1000)  # abortable: a cancelled call stops here
            await anyio.lowlevel.checkpoint()  # and a cancel that arrived meanwhile stops it before the commit
            store.add(draft)
        else:
            with anyio.CancelScope(shield=True):  # the naive build finishes the write whatever the caller does
                await anyio.sleep(delay_ms / 1000)
                store.add(draft)
        return Created(id=draft["id"], status="draft")

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    tools = [
        Tool.from_function(list_drafts, annotations=read_only),
        Tool.from_function(read_draft, annotations=read_only),
        Tool.from_function(
            create_draft,
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
        ),
    ]
    for tool in tools:
        tool.parameters["additionalProperties"] = False  # both builds advertise strict schemas
    listing = tools[0]  # list_drafts: its schemas are written out, and its result built by hand (see the table)
    listing.parameters.clear()
    listing.parameters.update(json.loads(json.dumps(LIST_ARGUMENTS)))
    listing.fn_metadata.output_schema = json.loads(json.dumps(DRAFT_LIST))
    schemas = {tool.name: tool.parameters for tool in tools}

    def offered(tool: Any, role: str | None) -> bool:
        return not hardened or tool not in WRITE_TOOLS or role == "writer"

    async def guard(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """The hardened build's gate: a caller sees and calls only the tools its role may use."""
        if not hardened or ctx.request_id is None:
            return await call_next(ctx)
        role = principals.role(_headers_of(ctx.request))
        name = (ctx.params or {}).get("name")
        if ctx.method == "tools/call" and isinstance(name, str) and (name not in schemas or not offered(name, role)):
            raise MCPError(
                ErrorCode.INVALID_PARAMS, f"Unknown tool: {name}"
            )  # a protocol error, as for any unknown tool
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"), list):
            kept = [tool for tool in result["tools"] if not isinstance(tool, dict) or offered(tool.get("name"), role)]
            result = {**result, "tools": kept}
        return result

    server = MCPServer(
        "drafts",
        version="1.0.0",
        instructions=f"blog drafts ({build_name} build); this server cannot publish",
        tools=tools,
        middleware=[guard],
    )

    async def count(request: Request) -> Response:
        return JSONResponse({"count": len(store.drafts())})

    server.custom_route("/_test/drafts/count", methods=["GET"])(count)  # the witness route (test only)

    return server


# -- command line --------------------------------------------------------------------------------
def _tokens(given: list[str]) -> dict[str, str]:
    tokens = {
        role: os.environ[f"DRAFTS_{role.upper()}_TOKEN"]
        for role in ROLES
        if os.environ.get(f"DRAFTS_{role.upper()}_TOKEN")
    }
    for item in given:
        role, sep, token = item.partition("=")
        if not sep or role not in ROLES or not token:
            raise SystemExit(f"--token {item!r}: expected ROLE=TOKEN with ROLE one of {', '.join(ROLES)}")
        tokens[role] = token
    return tokens


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Blog drafts MCP server (naive or hardened build).")
    parser.add_argument("--build", choices=("naive", "hardened"), required=True)
    parser.add_argument("--store", type=Path, required=True, help="JSON file holding the drafts")
    parser.add_argument("--token", action="append", default=[], metavar="ROLE=TOKEN", help="HTTP bearer token")
    parser.add_argument("--as", dest="role", choices=ROLES, default=os.environ.get("DRAFTS_PRINCIPAL") or "writer")
    parser.add_argument("transport", choices=("http", "stdio"))
    parser.add_argument("port", type=int, nargs="?", default=8765)
    args = parser.parse_args(argv)
    principals = Principals(_tokens(args.token), args.role)
    server = build(args.build, Store(args.store), principals)
    if args.transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app: ASGIApp = server.streamable_http_app(json_response=False, stateless_http=False)
    if args.build == "hardened":
        app = SessionBinding(app, principals)
    uvicorn.run(BearerGate(app, principals), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
