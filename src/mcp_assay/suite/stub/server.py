"""The stub authorization server's HTTP side: metadata, the trusted key set, and a trap.

It serves RFC 8414 metadata (and the OpenID discovery document) naming ``jwks_uri``, the trusted
key set at ``/jwks.json``, a *sink* at ``/sink/`` standing in for an upstream API (a target that
forwards the client's token there is caught, AUTH-27), and an *untrusted* key set at
``/foreign/jwks.json``: the probe token
whose ``jku`` header points there must not make the target fetch it, so every request is noted
(time, method, path, user agent) and the probes read the notes back afterwards. A run starts one
in a thread for as long as its token probes take; ``mcp-assay stub serve`` keeps one up for a
target that fetches keys only at start-up, and a run that finds it on the port reads its notes
over HTTP (``/_mcp-assay/fetches``) instead.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcp_assay.suite.stub.keys import SigningKey

__all__ = ["FETCHES_PATH", "FOREIGN_JWKS_PATH", "SINK_PATH", "StubServer", "documents"]

FOREIGN_JWKS_PATH = "/foreign/jwks.json"
FETCHES_PATH = "/_mcp-assay/fetches"
SINK_PATH = "/sink/"
"""Where the target's upstream calls go when it is configured to use the stub as its upstream API."""


def documents(issuer: str, key: SigningKey, foreign: SigningKey) -> dict[str, Any]:
    """Path -> JSON document, everything the stub serves."""
    metadata = {
        "issuer": issuer,
        "jwks_uri": f"{issuer}/jwks.json",
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code"],
        "code_challenge_methods_supported": ["S256"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "subject_types_supported": ["public"],
    }
    return {
        "/.well-known/oauth-authorization-server": metadata,
        "/.well-known/openid-configuration": metadata,
        "/jwks.json": {"keys": [key.jwk()]},
        FOREIGN_JWKS_PATH: {"keys": [foreign.jwk()]},
    }


class StubServer:
    """The stub, listening in a daemon thread until :meth:`close`."""

    def __init__(self, host: str, port: int, issuer: str, key: SigningKey, foreign: SigningKey) -> None:
        self.fetches: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        served = documents(issuer, key, foreign)
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
                path = self.path.split("?", 1)[0]
                if path == FETCHES_PATH:
                    self._json(200, stub.notes())
                    return
                if path.startswith(SINK_PATH):
                    self._sink()
                    return
                stub._note(self.command, path, self.headers.get("user-agent", ""))
                document = served.get(path)
                self._json(200 if document is not None else 404, document or {"error": "not_found"})

            def do_POST(self) -> None:  # noqa: N802
                if self.path.startswith(SINK_PATH):
                    self._sink()
                    return
                stub._note(self.command, self.path.split("?", 1)[0], self.headers.get("user-agent", ""))
                self._json(400, {"error": "unsupported_grant_type", "error_description": "mcp-assay stub: no grants"})

            do_PUT = do_PATCH = do_DELETE = do_POST  # noqa: N815 - the sink takes any method

            def _sink(self) -> None:
                """An upstream API stand-in: note everything the target sent it, so passthrough can be seen."""
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(min(length, 1 << 20)) if length else b""
                carried = {
                    "query": self.path.partition("?")[2],
                    "headers": "\n".join(f"{name}: {value}" for name, value in self.headers.items()),
                    "body": body.decode("latin-1"),
                }
                stub._note(self.command, self.path.split("?", 1)[0], self.headers.get("user-agent", ""), carried)
                self._json(200, {"ok": True})

            def _json(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
                return

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="mcp-assay-stub", daemon=True)
        self._thread.start()

    def _note(self, method: str, path: str, agent: str, carried: dict[str, str] | None = None) -> None:
        note: dict[str, Any] = {"time": time.time(), "method": method, "path": path, "user_agent": agent}
        if carried is not None:
            note["carried"] = carried  # read back by the run and never recorded: it may hold the token
        with self._lock:
            self.fetches.append(note)

    def notes(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.fetches)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def served_key_ids(document: Mapping[str, Any]) -> set[str]:
    """The kids of a JWKS document (to recognise a stub already listening on the port)."""
    keys = document.get("keys")
    return {str(item.get("kid")) for item in keys if isinstance(item, Mapping)} if isinstance(keys, list) else set()
