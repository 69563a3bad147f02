"""An MCP server (official Python SDK) whose one read-only tool fails on some inputs the way servers do.

``hang``: ``pause(units)`` waits ten milliseconds a unit (slow storage), so a large argument outlasts the
client's timeout. ``crash``: ``lookup(key)`` kills its whole process on a key outside ASCII. ``stuck``:
``echo(text)`` answers ASCII text at once, but text outside ASCII takes its one worker for
:data:`STUCK_S` seconds, so every call after it waits too (the server is stuck, not just the call). They are the
targets of the hang and crash cases of ``tests/e2e/test_explore_e2e.py``: ``run --explore`` must report
the hang under RPC-05 (a call inside the schema left unanswered) and the crash as the server no longer
serving (BEH-09), with a note naming the tool; the fixed cases call neither tool with such arguments.

usage: python explore_server.py hang http PORT
       python explore_server.py crash stdio
       python explore_server.py stuck http PORT
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import anyio
from mcp.server import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

READ_ONLY = ToolAnnotations(read_only_hint=True)
STUCK_S = 20.0
"""How long text outside ASCII keeps the ``stuck`` server's one worker (bounded: the test's server stops anyway)."""
_WORKER = anyio.Lock()


async def pause(units: Annotated[int, Field(ge=0, le=1000)] = 0) -> str:
    """Wait ten milliseconds per unit, as slow storage would, then answer."""
    await anyio.sleep(units / 100)
    return f"waited {units} units"


def lookup(key: str = "a") -> str:
    """Look a key up in an index that only holds ASCII keys (and dies on any other)."""
    try:
        key.encode("ascii")
    except UnicodeEncodeError:
        os._exit(7)  # the fault: the whole process goes, not just the call
    return f"no entry for {key}"


async def echo(text: str = "a") -> str:
    """Echo the text back; text outside ASCII stalls the one worker that serves every call."""
    async with _WORKER:
        if not text.isascii():
            await anyio.sleep(STUCK_S)
        return text


def main(argv: list[str]) -> None:
    fault, transport = argv[1], argv[2]
    server = MCPServer(f"ExploreFaults-{fault}", version="1.0.0")
    server.tool(annotations=READ_ONLY)({"hang": pause, "crash": lookup, "stuck": echo}[fault])
    if transport == "stdio":
        server.run()
        return
    server.run(transport="streamable-http", host="127.0.0.1", port=int(argv[3]))


if __name__ == "__main__":
    main(sys.argv)
