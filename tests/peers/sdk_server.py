"""A small MCP server on the official Python SDK (mcp 2.3.0), used as a real peer in tests.

It serves both revisions on one endpoint (2026-07-28 per request, 2025-11-25 after
``initialize``), over Streamable HTTP or stdio, with tools, resources, a template, a prompt,
progress, logging and list-changed notifications for ``subscriptions/listen``.

usage: python sdk_server.py stdio
       python sdk_server.py http PORT [--json] [--stateless] [--bind-all]  (--bind-all: listen on 0.0.0.0)
"""

from __future__ import annotations

import sys

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("AssayFixture", instructions="mcp-assay test peer", version="1.0.0")

WRITES: list[str] = []


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
async def slow_write(tag: str, delay_ms: int = 300) -> str:
    """Sleep, then append tag to a server-side list (the cancellation witness)."""
    await anyio.sleep(delay_ms / 1000)
    WRITES.append(tag)
    return f"wrote {tag}"


@mcp.tool()
def get_writes() -> list[str]:
    """The tags whose slow writes completed."""
    return list(WRITES)


@mcp.tool()
async def progress_tool(steps: int, ctx: Context) -> str:
    """Report progress `steps` times, 20 ms apart."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, total=steps, message=f"step {i}")
        await anyio.sleep(0.02)
    return f"did {steps} steps"


@mcp.tool()
async def chatty(ctx: Context) -> str:
    """Log at info and error level, then answer."""
    await ctx.info("working")
    await ctx.error("something to report")
    return "done"


@mcp.tool()
async def touch_tools(ctx: Context) -> str:
    """Publish notifications/tools/list_changed to listeners."""
    await ctx.notify_tools_changed()
    return "notified"


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@mcp.resource("info://static")
def static_info() -> str:
    """A static resource."""
    return "static info"


@mcp.prompt()
def summarize(text: str) -> str:
    """Summarize a piece of text in one sentence."""
    return f"Summarize the following text in one sentence:\n\n{text}"


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] == "stdio":
        mcp.run()
        return
    mcp.run(
        transport="streamable-http",
        host="0.0.0.0" if "--bind-all" in argv else "127.0.0.1",  # noqa: S104 - the AUTH-31 fault, on purpose
        port=int(argv[2]),
        json_response="--json" in argv,
        stateless_http="--stateless" in argv,
    )


if __name__ == "__main__":
    main(sys.argv)
