"""The stub authorization server's HTTP side: metadata, the trusted key set, grants, and a trap.

It serves RFC 8414 metadata (and the OpenID discovery document) naming ``jwks_uri``, the trusted
key set at ``/jwks.json``, a *sink* at ``/sink/`` standing in for an upstream API (a target that
forwards the client's token there is caught, AUTH-27), and an *untrusted* key set at
``/foreign/jwks.json``: the probe token
whose ``jku`` header points there must not make the target fetch it, so every request is noted
(time, method, path, user agent) and the probes read the notes back afterwards. For a real MCP
client it is also a working OAuth 2.1 authorization server: dynamic registration at ``/register``,
an auto-consenting ``/authorize`` and a ``/token`` endpoint for the authorization-code (PKCE) and
refresh grants, whose decisions live in :mod:`~mcp_assay.suite.stub.grants` (the notes never hold
a code, token, verifier or secret: only the path is noted, never the query or body). A run starts
one in a thread for as long as its token probes take; ``mcp-assay stub serve`` keeps one up for a
target that fetches keys only at start-up, and a run that finds it on the port reads its notes
over HTTP (``/_mcp-assay/fetches``) instead.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from mcp_assay.suite.stub.grants import AUTH_METHODS, GrantError, Grants, single_values
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import StubPolicy
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType

__all__ = [
    "AUTHORIZE_PATH",
    "FETCHES_PATH",
    "FOREIGN_JWKS_PATH",
    "REGISTER_PATH",
    "SINK_PATH",
    "TOKEN_PATH",
    "StubServer",
    "documents",
]

FOREIGN_JWKS_PATH = "/foreign/jwks.json"
FETCHES_PATH = "/_mcp-assay/fetches"
SINK_PATH = "/sink/"
"""Where the target's upstream calls go when it is configured to use the stub as its upstream API."""
REGISTER_PATH = "/register"
AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/token"
_BODY_LIMIT = 1 << 20
_NO_STORE = [("cache-control", "no-store"), ("pragma", "no-cache")]
"""RFC 6749 §5.1: token (and client secret) answers must not be cached."""


def documents(
    issuer: str, key: SigningKey, foreign: SigningKey, scopes: Sequence[str] = (), policy: StubPolicy | None = None
) -> dict[str, Any]:
    """Path -> JSON document, everything the stub serves; ``scopes`` (the config's) become ``scopes_supported``.

    The ``policy`` decides the grants advertised, whether ``registration_endpoint`` is named, and the
    ``issuer`` declared (a deliberately wrong one, for testing a client's issuer check)."""
    policy = policy or StubPolicy()
    metadata: dict[str, Any] = {
        "issuer": policy.metadata_issuer or issuer,
        "jwks_uri": f"{issuer}/jwks.json",
        "authorization_endpoint": f"{issuer}{AUTHORIZE_PATH}",
        "token_endpoint": f"{issuer}{TOKEN_PATH}",
        "registration_endpoint": f"{issuer}{REGISTER_PATH}",
        "response_types_supported": ["code"],
        "grant_types_supported": list(policy.grant_types),
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "id_token_signing_alg_values_supported": ["RS256"],
        "subject_types_supported": ["public"],
    }
    if scopes:
        metadata["scopes_supported"] = list(scopes)
    if not policy.registration:
        del metadata["registration_endpoint"]
    return {
        "/.well-known/oauth-authorization-server": metadata,
        "/.well-known/openid-configuration": metadata,
        "/jwks.json": {"keys": [key.jwk()]},
        FOREIGN_JWKS_PATH: {"keys": [foreign.jwk()]},
    }


class StubServer:
    """The stub, listening in a daemon thread until :meth:`close`."""

    def __init__(
        self, host: str, port: int, issuer: str, key: SigningKey, foreign: SigningKey, scopes: Sequence[str] = (),
        *, policy: StubPolicy | None = None,
    ) -> None:  # fmt: skip
        self.fetches: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.grants = Grants(issuer, key, scopes, policy=policy)
        served = documents(issuer, key, foreign, scopes, policy)
        endpoints = {TOKEN_PATH: "token"} | ({REGISTER_PATH: "register"} if self.grants.policy.registration else {})
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
                if path == AUTHORIZE_PATH:
                    self._authorize()
                    return
                document = served.get(path)
                self._json(200 if document is not None else 404, document or {"error": "not_found"})

            def do_POST(self) -> None:  # noqa: N802
                path = self.path.split("?", 1)[0]
                if path.startswith(SINK_PATH):
                    self._sink()
                    return
                stub._note(self.command, path, self.headers.get("user-agent", ""))
                endpoint = {"register": self._register, "token": self._token}.get(endpoints.get(path, ""))
                if endpoint is None:
                    self._json(404, {"error": "not_found"})
                elif self.command != "POST":
                    self._json(405, {"error": "method_not_allowed"}, [("allow", "POST")])
                else:
                    endpoint()

            do_PUT = do_PATCH = do_DELETE = do_POST  # noqa: N815 - the sink takes any method

            def _authorize(self) -> None:
                """Auto-consent: 302 back to the client with a code (or an error), or 400 when that is unsafe."""
                try:
                    params = single_values(parse_qsl(self.path.partition("?")[2], keep_blank_values=True))
                    location = stub.grants.authorize(params)
                except GrantError as error:
                    self._json(error.status, error.body(), _NO_STORE)
                    return
                self.send_response(302)
                self.send_header("location", location)
                for name, value in _NO_STORE:
                    self.send_header(name, value)
                self.send_header("content-length", "0")
                self.end_headers()

            def _register(self) -> None:
                try:
                    metadata = json.loads(self._body())
                except ValueError:
                    self._json(400, GrantError("invalid_client_metadata", "the body is not JSON").body(), _NO_STORE)
                    return
                try:
                    self._json(201, stub.grants.register(metadata), _NO_STORE)
                except GrantError as error:
                    self._json(error.status, error.body(), _NO_STORE)

            def _token(self) -> None:
                try:
                    form = single_values(parse_qsl(self._form(), keep_blank_values=True))
                    self._json(200, stub.grants.token(form, self.headers.get(HeaderKey.AUTHORIZATION)), _NO_STORE)
                except GrantError as error:
                    challenge: list[tuple[str, str]] = (
                        [(HeaderKey.WWW_AUTHENTICATE, 'Basic realm="mcp-assay-stub"')] if error.status == 401 else []
                    )
                    self._json(error.status, error.body(), _NO_STORE + challenge)

            def _form(self) -> str:
                """The token request's form body (RFC 6749 §3.2: application/x-www-form-urlencoded, UTF-8)."""
                kind = (self.headers.get(HeaderKey.CONTENT_TYPE) or "").split(";", 1)[0].strip().lower()
                if kind != "application/x-www-form-urlencoded":
                    raise GrantError("invalid_request", "the token request must be application/x-www-form-urlencoded")
                try:
                    return self._body().decode("utf-8")
                except UnicodeDecodeError:
                    raise GrantError("invalid_request", "the token request is not UTF-8") from None

            def _body(self) -> bytes:
                length = int(self.headers.get("content-length") or 0)
                return self.rfile.read(min(length, _BODY_LIMIT)) if length > 0 else b""

            def _sink(self) -> None:
                """An upstream API stand-in: note everything the target sent it, so passthrough can be seen."""
                body = self._body()
                carried = {
                    "query": self.path.partition("?")[2],
                    "headers": "\n".join(f"{name}: {value}" for name, value in self.headers.items()),
                    "body": body.decode("latin-1"),
                }
                stub._note(self.command, self.path.split("?", 1)[0], self.headers.get("user-agent", ""), carried)
                self._json(200, {"ok": True})

            def _json(self, status: int, body: object, headers: Sequence[tuple[str, str]] = ()) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header(HeaderKey.CONTENT_TYPE, MediaType.JSON)
                self.send_header("content-length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
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
