"""A deliberately broken stdio MCP server: it prints a banner on stdout before speaking MCP, and
pretty-prints one answer over several lines. Both break the stdio framing (STDIO-02, STDIO-01).

It speaks 2026-07-28 (``server/discover``) and, after ``initialize``, 2025-11-25, answers ``ping``,
answers other methods with -32601, and stays silent on a line that is not JSON (RPC-12) or not a
valid request (RPC-13). ``--fixed`` is the same server with those faults fixed: no banner, every
answer on one line, -32700 and -32600 errors (what ``mcp-assay replay`` is checked against).

usage: python stdio_server.py [--fixed]
"""

from __future__ import annotations

import json
import sys

SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "broken-stdio", "version": "1.0.0"}}
FIXED = "--fixed" in sys.argv[1:]


def write(message: dict[str, object], *, pretty: bool = False) -> None:
    text = json.dumps(message, indent=2 if pretty and not FIXED else None)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(ident: object, result: dict[str, object], *, pretty: bool = False) -> None:
    write({"jsonrpc": "2.0", "id": ident, "result": result}, pretty=pretty)


def error(ident: object, code: int, text: str) -> None:
    """An error answer; without an id when the request's could not be read (MCP leaves it out, RPC-09)."""
    message: dict[str, object] = {"jsonrpc": "2.0", "error": {"code": code, "message": text}}
    if ident is not None:
        message["id"] = ident
    write(message)


def main() -> None:
    if not FIXED:
        sys.stdout.write("broken-stdio v1.0 starting up...\n")
        sys.stdout.flush()
    legacy = False
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            if FIXED:
                error(None, -32700, "Parse error")
            continue
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            if FIXED:
                error(message.get("id") if isinstance(message, dict) else None, -32600, "Invalid Request")
            continue
        if "id" not in message:
            continue
        if method == "initialize":
            legacy = True
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "broken-stdio", "version": "1.0.0"},
            }
            answer(message["id"], result)
        elif method == "ping" and legacy:
            answer(message["id"], {})
        elif method == "server/discover":
            answer(
                message["id"],
                {
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "ttlMs": 0,
                    "cacheScope": "private",
                    "_meta": SERVER_META,
                },
            )
        elif method == "tools/list":
            result: dict[str, object] = {"tools": []}
            if not legacy:
                result = {"resultType": "complete", **result, "ttlMs": 0, "cacheScope": "private", "_meta": SERVER_META}
            answer(message["id"], result, pretty=True)
        else:
            error(message["id"], -32601, "Method not found")


if __name__ == "__main__":
    main()
