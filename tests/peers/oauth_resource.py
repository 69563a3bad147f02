"""A protected resource on loopback for sign-in tests: ``401`` with a challenge to every POST, and its metadata.

Every response is scripted: the challenge (``None`` for a bare 401), the status of the POST (200 for an
open endpoint), and any document at any path (``None`` for a 404); by default the path-scoped Protected
Resource Metadata names ``issuer`` as the authorization server. ``seen`` lists the requests in order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.peers.process import free_port


@dataclass
class Resource:
    """A protected MCP endpoint: 401 with a challenge to every POST, and its metadata at the well-known URIs."""

    issuer: str
    port: int = field(default_factory=free_port)
    challenge: str | None = "default"
    documents: dict[str, Any] = field(default_factory=dict)
    status: int = 401
    seen: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    """The ``Authorization`` header of every POST, as received."""
    host: str = "127.0.0.1"
    """The address it listens on (and is named by)."""

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    @property
    def prm_url(self) -> str:
        return f"http://{self.host}:{self.port}/.well-known/oauth-protected-resource/mcp"

    def prm(self) -> dict[str, Any]:
        return {"resource": self.url, "authorization_servers": [self.issuer], "scopes_supported": ["notes:read"]}


@contextmanager
def serving(resource: Resource) -> Iterator[Resource]:
    """Serve ``resource`` on its port until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            resource.seen.append(f"GET {self.path}")
            document = resource.documents.get(self.path, resource.prm() if self.path.endswith("/mcp") else None)
            self._send(200 if document is not None else 404, document or {"error": "not_found"}, [])

        def do_POST(self) -> None:  # noqa: N802
            resource.seen.append(f"POST {self.path}")
            resource.authorizations.append(self.headers.get("authorization"))
            self.rfile.read(int(self.headers.get("content-length") or 0))
            challenge = resource.challenge
            if challenge == "default":
                challenge = f'Bearer resource_metadata="{resource.prm_url}", scope="notes:read"'
            headers = [("www-authenticate", challenge)] if challenge and resource.status == 401 else []
            self._send(resource.status, {"error": "unauthorized"}, headers)

        def _send(self, status: int, body: object, headers: list[tuple[str, str]]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

    server = ThreadingHTTPServer((resource.host, resource.port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield resource
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
