"""A user's own small server on the official Python SDK (mcp 2.3.0), with one bug of its own.

The ``inventory`` tool (read-only, no arguments, so a plain ``run`` calls it) advertises an outputSchema written
by hand, whose ``count`` is an integer, and answers with ``structuredContent`` whose ``count`` is a string: the
server's own bug (TOOL-10), not the SDK's, which publishes a hand-built schema without validating against it. The
rest is the SDK's, unmodified, so the report shows the SDK's known findings beside the server's own one.

usage: python sdk_own_bug_server.py stdio
       python sdk_own_bug_server.py http PORT
"""

from __future__ import annotations

import json
import sys

from mcp.server import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations

STOCK = {"count": "three", "items": ["apple", "pear", "plum"]}
"""What the tool answers: ``count`` should be the integer 3."""
STOCK_SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer", "minimum": 0}, "items": {"type": "array", "items": {"type": "string"}}},
    "required": ["count", "items"],
}


def inventory() -> CallToolResult:
    """How many items are in stock, and which."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(STOCK))], structured_content=STOCK)


tool = Tool.from_function(
    inventory, annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
)
tool.fn_metadata.output_schema = STOCK_SCHEMA  # written by hand; the SDK advertises it and does not check it
mcp = MCPServer("inventory", version="0.1.0", tools=[tool])


@mcp.resource("info://stock")
def stock_note() -> str:
    """A note about the stock."""
    return "counted every morning"


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] == "stdio":
        mcp.run()
        return
    mcp.run(transport="streamable-http", host="127.0.0.1", port=int(argv[2]))


if __name__ == "__main__":
    main(sys.argv)
