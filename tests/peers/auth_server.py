"""A protected MCP server: the Python SDK app behind a small bearer-token gate, in two builds.

``--correct`` accepts exactly one static opaque token in ``Authorization: Bearer``, answers
everything else with ``401`` and ``WWW-Authenticate: Bearer resource_metadata="…", scope="…"``
(plus ``error="invalid_token"`` when a token was presented), and serves its Protected Resource
Metadata at the path-scoped well-known URI. ``--sloppy`` answers a bare ``401`` (no challenge),
publishes no metadata, takes the token from ``?access_token=`` too, and accepts any non-empty
bearer string. ``--static`` is a server that protects itself with a static token of its own, not
MCP's OAuth profile (AUTH-AND-BEHAVIOUR §0.3.3): exactly one token is served, a request without
credentials gets ``401`` with a plain ``WWW-Authenticate: Bearer realm="…"`` (no
``resource_metadata``, no ``scope``), a wrong token gets ``403``, and no metadata is published.
``--public-list`` is ``--correct`` with a public part, as published servers often have: a POST whose
JSON-RPC method is one of :data:`PUBLIC` is served without credentials (the SDK answers it, protocol
refusals included), every other one needs the token.

usage: python auth_server.py PORT TOKEN (--correct | --sloppy | --static | --public-list)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from mcp.server import MCPServer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

PRM_PATH = "/.well-known/oauth-protected-resource"
PUBLIC = frozenset({"initialize", "notifications/initialized", "server/discover", "tools/list", "ping"})
"""What ``--public-list`` serves without credentials."""
BODY_LIMIT = 1 << 20
SCOPE = "notes:read"
ISSUER = "https://auth.mcp-assay.invalid"

mcp = MCPServer("AuthFixture", instructions="mcp-assay authorization test peer", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.prompt()
def summarize(text: str) -> str:
    """Summarize a piece of text in one sentence."""
    return f"Summarize the following text in one sentence:\n\n{text}"


class Gate:
    """Bearer-token gate in front of the SDK app (outermost, so it answers before the SDK sees a request)."""

    def __init__(
        self, app: App, *, token: str, port: int, sloppy: bool, static: bool = False, public: bool = False
    ) -> None:
        self.app = app
        self.token = token
        self.sloppy = sloppy
        self.static = static
        self.public = public
        self.resource = f"http://127.0.0.1:{port}/mcp"
        self.metadata_url = f"http://127.0.0.1:{port}{PRM_PATH}/mcp"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path.startswith("/.well-known/"):
            if path == f"{PRM_PATH}/mcp" and not (self.sloppy or self.static):
                await self._json(send, 200, self._metadata(), [])
            else:
                await self._json(send, 404, {"error": "not_found"}, [])
            return
        verdict = self._check(scope)
        if verdict is None:
            await self.app(scope, receive, send)
            return
        if self.public and scope["method"] == "POST":
            body = await _read_body(receive)
            if _method_of(body) in PUBLIC:
                await self.app(scope, _replay(body, receive), send)
                return
        await self._refuse(send, presented=verdict)

    def _metadata(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "authorization_servers": [ISSUER],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
        }

    def _check(self, scope: Scope) -> bool | None:
        """``None`` to serve, else whether credentials were presented (for the challenge's error code)."""
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        authorization = headers.get("authorization")
        scheme, _, credential = (authorization or "").partition(" ")
        bearer = credential.strip() if scheme.lower() == "bearer" else ""
        if self.sloppy:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if bearer or query.get("access_token") == self.token:
                return None
        elif bearer == self.token:
            return None
        return authorization is not None

    async def _refuse(self, send: Send, *, presented: bool) -> None:
        if self.sloppy:
            await self._json(send, 401, {"error": "unauthorized"}, [])
            return
        if self.static:
            if presented:
                await self._json(send, 403, {"error": "forbidden"}, [])
            else:
                await self._json(send, 401, {"error": "unauthorized"}, [("www-authenticate", 'Bearer realm="mcp"')])
            return
        params = [f'resource_metadata="{self.metadata_url}"', f'scope="{SCOPE}"']
        if presented:
            params.append('error="invalid_token"')
        challenge = ("www-authenticate", "Bearer " + ", ".join(params))
        await self._json(send, 401, {"error": "invalid_token" if presented else "unauthorized"}, [challenge])

    @staticmethod
    async def _json(send: Send, status: int, body: dict[str, Any], extra: list[tuple[str, str]]) -> None:
        raw = json.dumps(body).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
        headers += [(name.encode(), value.encode()) for name, value in extra]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": raw})


async def _read_body(receive: Receive) -> bytes:
    """The request body (at most :data:`BODY_LIMIT` bytes are kept)."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")[: BODY_LIMIT - len(body)]
        if not message.get("more_body"):
            return body


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then what the connection says next."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def _method_of(body: bytes) -> object:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    return payload.get("method") if isinstance(payload, dict) else None


def main(argv: list[str]) -> None:
    port, token, build = int(argv[1]), argv[2], argv[3]
    if build not in ("--correct", "--sloppy", "--static", "--public-list"):
        raise SystemExit(__doc__)
    app = Gate(
        mcp.streamable_http_app(), token=token, port=port, sloppy=build == "--sloppy", static=build == "--static",
        public=build == "--public-list",
    )  # fmt: skip
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
