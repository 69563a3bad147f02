"""The SDK fixture server with what a gateway test needs to see the hop behind the gateway.

A gateway's faults show on the wire between it and the upstream; this server reports that hop
in-band, so a test talking to the gateway's front can prove what reached the back:

- ``witness`` answers with what arrived here: the request id, the protocol version, the session id
  and the MCP headers (a rewritten id, a dropped ``MCP-Protocol-Version``, a stale ``Mcp-Name``,
  two users on one upstream session);
- ``tracked_write`` notes that it started (``started``) before it sleeps and writes: a test cancels a call
  known to be running, whatever the machine's load;
- ``gate`` sends a progress notification, then waits until ``release`` opens its gate (or a bound
  passes): a notification held to the end of the call cannot reach the client before the release;
- ``announce`` sends a session-level log message (2025-11-25: the standalone GET stream) or a
  tools list-changed event (2026-07-28: ``subscriptions/listen``), tagged by the caller;
- ``tools/list`` and ``resources/list`` come in pages of three (a dropped ``nextCursor`` hides the
  rest); ``blob://raw`` is binary that is not UTF-8 (a relay that re-encodes it changes it);
- ``ask`` elicits the caller's name (a server-to-client request in 2025-11-25, an input-required round in
  2026-07-28);
- every tool of ``sdk_server.py`` (``add`` answers ``structuredContent``, ``slow_write`` and
  ``get_writes`` witness cancellation, ``progress_tool``, ``chatty``).

usage: python witness_server.py stdio
       python witness_server.py http PORT [--json] [--stateless]
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ListResourcesResult, ListToolsResult, PaginatedRequestParams
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sdk_server  # noqa: E402 - the fixture's tools, registered again below

PAGE = 3
BLOB = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE, 0x80, 0xC3, 0x28])
"""Bytes that are not UTF-8 (a PNG signature, then invalid sequences)."""
GATE_BOUND_S = 3.0
GATES: dict[str, anyio.Event] = {}
WITNESSED_HEADERS = ("mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "authorization", "origin")


def _page(items: list[Any], params: PaginatedRequestParams | None) -> tuple[list[Any], str | None]:
    start = int(params.cursor[1:]) if params is not None and params.cursor else 0
    end = start + PAGE
    return items[start:end], (f"p{end}" if end < len(items) else None)


class PagedServer(MCPServer):
    """``MCPServer`` whose tool and resource lists come in pages of ``PAGE``."""

    async def _handle_list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        tools, cursor = _page(await self.list_tools(), params)
        return ListToolsResult(tools=tools, next_cursor=cursor)

    async def _handle_list_resources(self, ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        resources, cursor = _page(await self.list_resources(), params)
        return ListResourcesResult(resources=resources, next_cursor=cursor)


mcp = PagedServer("AssayWitness", instructions="mcp-assay gateway test upstream", version="1.0.0")
for tool in (
    sdk_server.add,
    sdk_server.slow_write,
    sdk_server.get_writes,
    sdk_server.progress_tool,
    sdk_server.chatty,
    sdk_server.touch_tools,
):
    mcp.tool()(tool)
mcp.prompt()(sdk_server.summarize)


@mcp.tool()
async def witness(ctx: Context) -> dict[str, Any]:
    """What reached this server: request id, protocol version, session id and MCP headers."""
    headers = ctx.headers or {}
    return {
        "requestId": ctx.request_id,
        "protocolVersion": ctx.protocol_version,
        "sessionId": headers.get("mcp-session-id"),
        "headers": {name: headers[name] for name in WITNESSED_HEADERS if name in headers},
    }


STARTED: list[str] = []


@mcp.tool()
async def tracked_write(tag: str, delay_ms: int = 1500) -> str:
    """Note that the call started (``started``), sleep, then append tag to the writes (``get_writes``): a test
    cancels once the call is known to run, and then sees whether the write landed."""
    STARTED.append(tag)
    await anyio.sleep(delay_ms / 1000)
    sdk_server.WRITES.append(tag)
    return f"wrote {tag}"


@mcp.tool()
def started() -> list[str]:
    """The tags whose tracked writes have started."""
    return list(STARTED)


@mcp.tool()
async def gate(key: str, ctx: Context) -> str:
    """Report progress once, then wait until ``release(key)`` (at most GATE_BOUND_S)."""
    event = GATES.setdefault(key, anyio.Event())
    await ctx.report_progress(1, total=2, message=f"waiting at {key}")
    opened = False
    with anyio.move_on_after(GATE_BOUND_S):
        await event.wait()
        opened = True
    await ctx.report_progress(2, total=2, message=f"past {key}")
    GATES.pop(key, None)
    return f"{key}: {'released' if opened else 'timed out'}"


@mcp.tool()
def release(key: str) -> bool:
    """Open the gate ``key``; true when a call was waiting at it."""
    event = GATES.get(key)
    if event is None:
        GATES[key] = anyio.Event()
        GATES[key].set()
        return False
    event.set()
    return True


@mcp.tool()
async def announce(tag: str, ctx: Context) -> str:
    """A notification that belongs to no request: a session log entry (2025) or tools list-changed (2026)."""
    if ctx.protocol_version == "2026-07-28":
        await ctx.notify_tools_changed()
    else:
        await ctx.request_context.session.send_log_message(level="info", data=tag, logger="announce")
    return f"announced {tag}"


class Caller(BaseModel):
    name: str


@mcp.tool()
async def ask(ctx: Context) -> str:
    """Ask the client who is there (elicitation: a server request in 2025, an input-required round in 2026)."""
    answer = await ctx.elicit("Who is there?", Caller)
    return f"hello {answer.data.name}" if answer.action == "accept" else answer.action


@mcp.resource("blob://raw", mime_type="application/octet-stream")
def raw_blob() -> bytes:
    """Binary content that is not UTF-8."""
    return BLOB


@mcp.resource("info://static")
def static_info() -> str:
    """A static resource."""
    return "static info"


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


def _page_item(index: int) -> None:
    def read() -> str:
        return f"page item {index}"

    read.__name__ = f"page_item_{index}"
    mcp.resource(f"info://page/{index}")(read)


for _index in range(1, 5):
    _page_item(_index)


def blob_base64() -> str:
    return base64.b64encode(BLOB).decode()


if __name__ == "__main__":
    sdk_server.mcp = mcp  # sdk_server.main runs whatever server its module names
    sdk_server.main(sys.argv)
