"""The Python SDK fixture server with a wire log: what its HTTP stack received and sent.

The same server as ``sdk_server.py`` (same tools, resources, prompt), wrapped in a small ASGI
layer that writes every request (method, path, headers, body) and every response (status,
headers, each body chunk with the time it was handed to the socket) to a JSONL file. End-to-end
tests compare it with what the client sent and received through the proxy.

usage: python recorded_server.py PORT WIRE_LOG
"""

from __future__ import annotations

import base64
import itertools
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import uvicorn  # noqa: E402
from sdk_server import mcp  # noqa: E402

_numbers = itertools.count(1)
_lock = threading.Lock()


def _headers(pairs: list[tuple[bytes, bytes]]) -> list[list[str]]:
    return [[name.decode("latin-1"), value.decode("latin-1")] for name, value in pairs]


class WireLog:
    """ASGI middleware: log the HTTP traffic of the wrapped app, unchanged."""

    def __init__(self, app: Any, path: Path) -> None:
        self.app = app
        self.handle = path.open("a", encoding="utf-8", buffering=1)

    def write(self, record: dict[str, Any]) -> None:
        with _lock:
            self.handle.write(json.dumps(record) + "\n")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        number = next(_numbers)
        body = bytearray()
        logged = False

        async def receive_logged() -> Any:
            nonlocal logged
            message = await receive()
            if message["type"] == "http.request" and not logged:
                body.extend(message.get("body", b""))
                if not message.get("more_body"):
                    logged = True
                    self.write(
                        {
                            "n": number, "kind": "request", "t": time.time(), "method": scope["method"],
                            "path": scope["path"], "query": scope.get("query_string", b"").decode("latin-1"),
                            "headers": _headers(scope["headers"]), "body": base64.b64encode(bytes(body)).decode(),
                        }
                    )  # fmt: skip
            return message

        async def send_logged(message: Any) -> None:
            if message["type"] == "http.response.start":
                record = {"n": number, "kind": "start", "status": message["status"]}
                self.write({**record, "t": time.time(), "headers": _headers(message.get("headers", []))})
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk:
                    self.write(
                        {"n": number, "kind": "chunk", "t": time.time(), "b64": base64.b64encode(chunk).decode()}
                    )
            await send(message)

        await self.app(scope, receive_logged, send_logged)


def main(argv: list[str]) -> None:
    port, log = int(argv[1]), Path(argv[2])
    app = WireLog(mcp.streamable_http_app(host="127.0.0.1"), log)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
