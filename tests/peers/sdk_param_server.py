"""A small MCP server on the official Python SDK (mcp 2.3.0) whose tools exercise the error channels
and the ``Mcp-Param-*`` headers, used as a real peer by the probe tests.

* ``lookup`` marks ``region`` (string) and ``limit`` (integer, optional) with ``x-mcp-header``
  (through pydantic ``json_schema_extra``), and its arguments model forbids extra properties, which
  is what puts ``additionalProperties: false`` in its ``inputSchema``;
* ``explode`` always fails (a tool execution error);
* ``echo`` is a plain tool without marks.

usage: python sdk_param_server.py stdio
       python sdk_param_server.py http PORT
"""

from __future__ import annotations

import sys
from typing import Annotated

from mcp.server import MCPServer
from pydantic import ConfigDict, Field

mcp = MCPServer("ParamFixture", instructions="mcp-assay channel and header peer", version="1.0.0")


@mcp.tool()
def lookup(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    limit: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Limit"})] = 10,
) -> str:
    """Look entries up in one region (region and limit are mirrored into Mcp-Param headers)."""
    return f"{limit} entries in {region}"


@mcp.tool()
def explode(reason: str = "boom") -> str:
    """Always fails, so a caller can see how a tool failure is reported."""
    raise RuntimeError(f"explode failed: {reason}")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def _strict(name: str) -> None:
    """Make a tool's arguments model refuse unknown properties (``additionalProperties: false`` on the wire)."""
    tool = mcp._tool_manager.get_tool(name)  # noqa: SLF001 - a test fixture reaching into the SDK on purpose
    assert tool is not None
    base = tool.fn_metadata.arg_model
    strict = type(base.__name__, (base,), {"model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True)})
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)


_strict("lookup")


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] == "stdio":
        mcp.run()
        return
    mcp.run(transport="streamable-http", host="127.0.0.1", port=int(argv[2]))


if __name__ == "__main__":
    main(sys.argv)
