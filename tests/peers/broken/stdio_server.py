"""A deliberately broken stdio MCP server: it prints a banner on stdout before speaking MCP, and
pretty-prints one answer over several lines. Both break the stdio framing (STDIO-02, STDIO-01).

usage: python stdio_server.py
"""

from __future__ import annotations

import json
import sys

SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "broken-stdio", "version": "1.0.0"}}


def answer(ident: object, result: dict[str, object], *, pretty: bool = False) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}, indent=2 if pretty else None)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main() -> None:
    sys.stdout.write("broken-stdio v1.0 starting up...\n")
    sys.stdout.flush()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue
        if message.get("method") == "server/discover":
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
        elif message.get("method") == "tools/list":
            result = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private", "_meta": SERVER_META}
            answer(message["id"], result, pretty=True)


if __name__ == "__main__":
    main()
