"""A newcomer's first server on the official Python SDK: one read-only tool that needs an argument, one resource.

The tool's ``structuredContent`` breaks its own ``outputSchema`` (``celsius`` a string where the schema
says number): the SDK checks the returned ``CallToolResult`` in pydantic's lax mode, which takes "21.5"
for a number, and sends the string as it was. A run must call the tool to see it (TOOL-10).

usage: python first_server.py stdio | http PORT
"""

import sys
from typing import Annotated, TypedDict

from mcp.server import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

mcp = MCPServer("weather", version="0.1.0")


class Reading(TypedDict):
    city: str
    celsius: float


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: str) -> Annotated[CallToolResult, Reading]:
    """Today's temperature in a city."""
    reading = {"city": city, "celsius": "21.5"}  # the fault: a string where the outputSchema says number
    return CallToolResult(content=[TextContent(type="text", text=f"{city}: 21.5 °C")], structured_content=reading)


@mcp.resource("weather://cities", mime_type="text/plain")
def cities() -> str:
    """The cities the forecast knows."""
    return "Paris\nOslo\nLima"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
