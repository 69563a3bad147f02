"""The official-SDK test server behind HTTP Basic authentication: a request without the expected
``Authorization: Basic`` credential is answered ``401`` before the SDK sees it.

It stands for a server a user reaches as ``http://user:password@host/mcp``; ``mcp-assay proxy --upstream``
with that URL must get through it. Every ``Authorization`` header it is sent is appended to ``LOG`` (a file
named by the third argument), so a test can tell the credential the proxy added from the client's own.

usage: python basic_auth_server.py PORT USER:PASSWORD LOG
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import uvicorn

from tests.peers.sdk_server import mcp


def gate(app: Any, expected: str, log: Path) -> Any:
    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        given = headers.get("authorization", "")
        with log.open("a", encoding="utf-8") as handle:
            handle.write(given + "\n")
        if given != expected:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", b'Basic realm="mcp"'), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return guarded


def main(argv: list[str]) -> None:
    port, pair, log = int(argv[1]), argv[2], Path(argv[3])
    expected = "Basic " + base64.b64encode(pair.encode()).decode()
    app = mcp.streamable_http_app()
    uvicorn.run(gate(app, expected, log), host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main(sys.argv)
