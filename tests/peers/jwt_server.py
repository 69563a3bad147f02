"""A protected MCP server that validates JWT access tokens against an issuer's key set, and tool scopes.

The SDK app of :mod:`tests.peers.auth_server` behind a JWT gate (PyJWT): the key comes from
``ISSUER/jwks.json`` by ``kid``, and the token must be RS256, from ``ISSUER``, for this server's
canonical URI and inside its lifetime. Its Protected Resource Metadata names ``ISSUER`` as the
authorization server, so an OAuth client finds where to get its token (the stub's grants).
``--tool-scope add=calc:use`` makes a ``tools/call`` of ``add`` need that scope (``403`` with an
``insufficient_scope`` challenge naming every scope the tool needs otherwise), and ``--implies
calc:admin=calc:use`` lets a broad scope stand in for narrower ones. Each ``--fault`` removes one
check, the way hand-rolled validators do:

- ``skip_aud``: any audience; ``skip_iss``: any issuer; ``skip_exp``: neither exp nor nbf;
- ``exp_optional``: exp is checked when present, and a token without one is taken (it never expires);
  ``iss_optional``: iss is checked when present, and a token without one is taken;
- ``skip_signature``: the signature is not verified at all (alg none, a foreign key, anything);
- ``trust_jku``: a ``jku`` header names the key set to verify with, and it is fetched;
- ``no_tool_scope``: tool scopes are not checked; ``no_hierarchy``: ``--implies`` is ignored;
- ``scope_incremental``: the 403 names only the first missing scope;
- ``passthrough``: ``fetch_upstream`` forwards the caller's ``Authorization`` to the upstream API
  (``--upstream URL``) instead of the server's own downstream credential.

usage: python jwt_server.py PORT ISSUER [--tool-scope TOOL=S1,S2]... [--implies BROAD=S1,S2]... [--upstream URL]
                             [--fault NAME]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx
import jwt
import uvicorn
from mcp.server.mcpserver import Context

from tests.peers.asgi import read_body
from tests.peers.auth_server import Gate, Receive, Scope, Send, mcp

FAULTS = (
    "skip_aud", "skip_iss", "skip_exp", "exp_optional", "iss_optional", "skip_signature", "trust_jku",
    "no_tool_scope", "no_hierarchy", "scope_incremental", "passthrough",
)  # fmt: skip
DOWNSTREAM = "Bearer downstream-service-credential"
UPSTREAM: dict[str, str] = {}


@mcp.tool()
async def fetch_upstream(item: str, ctx: Context) -> str:
    """Fetch an item from the upstream API this server fronts."""
    incoming = (ctx.headers or {}).get("authorization", "")
    credential = incoming if UPSTREAM.get("fault") == "passthrough" else DOWNSTREAM
    async with httpx.AsyncClient(timeout=5.0) as client:
        answer = await client.get(f"{UPSTREAM['url'].rstrip('/')}/items/{item}", headers={"Authorization": credential})
    return f"upstream answered {answer.status_code}"


def _pairs(items: list[str]) -> dict[str, list[str]]:
    return {name: value.split(",") for name, _, value in (item.partition("=") for item in items)}


class JwtGate(Gate):
    def __init__(
        self, app: Any, *, port: int, issuer: str, fault: str | None, tool_scopes: dict[str, list[str]],
        implies: dict[str, list[str]],
    ) -> None:  # fmt: skip
        super().__init__(app, token="", port=port, sloppy=False)
        self.issuer = issuer
        self.fault = fault
        self.tool_scopes = tool_scopes
        self.implies = implies
        self.keys = jwt.PyJWKClient(f"{issuer}/jwks.json", cache_keys=True)

    def _metadata(self) -> dict[str, Any]:
        return {**super()._metadata(), "authorization_servers": [self.issuer]}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/.well-known/"):
            await super().__call__(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        authorization = headers.get("authorization")
        kind, _, credential = (authorization or "").partition(" ")
        token = credential.strip() if kind.lower() == "bearer" else ""
        try:
            claims = self._verify(token) if token else None
        except (jwt.PyJWTError, ValueError, KeyError):
            claims = None
        if claims is None:
            await self._refuse(send, presented=authorization is not None)
            return
        body, receive = await read_body(receive)
        missing, needed = self._missing(claims, body)
        if missing:
            named = missing[:1] if self.fault == "scope_incremental" else needed
            challenge = (
                f'Bearer error="insufficient_scope", scope="{" ".join(named)}", resource_metadata="{self.metadata_url}"'
            )
            await self._json(send, 403, {"error": "insufficient_scope"}, [("www-authenticate", challenge)])
            return
        await self.app(scope, receive, send)

    def _missing(self, claims: dict[str, Any], body: bytes) -> tuple[list[str], list[str]]:
        """The scopes a tools/call needs and the token lacks, and all it needs."""
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            return [], []
        params = payload.get("params") if isinstance(payload, dict) and payload.get("method") == "tools/call" else None
        needed = self.tool_scopes.get(params.get("name"), []) if isinstance(params, dict) else []
        if not needed or self.fault == "no_tool_scope":
            return [], needed
        held = set(str(claims.get("scope", "")).split())
        if self.fault != "no_hierarchy":
            for broad in list(held):
                held.update(self.implies.get(broad, []))
        return [scope for scope in needed if scope not in held], needed

    def _verify(self, token: str) -> dict[str, Any]:
        fault = self.fault
        checked = {"exp": ("skip_exp", "exp_optional"), "iss": ("skip_iss", "iss_optional"), "aud": ("skip_aud",)}
        required = [claim for claim, off in checked.items() if fault not in off]
        options: dict[str, Any] = {
            "require": required,
            "verify_signature": fault != "skip_signature",
            "verify_exp": fault != "skip_exp",
            "verify_nbf": fault != "skip_exp",
            "verify_aud": fault != "skip_aud",
            "verify_iss": fault != "skip_iss",
        }
        if fault == "skip_signature":
            return dict(jwt.decode(token, options=options, audience=self.resource, issuer=self.issuer, leeway=5))
        header = jwt.get_unverified_header(token)
        if fault == "trust_jku" and isinstance(header.get("jku"), str):
            key = jwt.PyJWKClient(header["jku"]).get_signing_key_from_jwt(token).key
        else:
            key = self.keys.get_signing_key_from_jwt(token).key
        issuer: str | None = self.issuer
        if fault == "iss_optional" and "iss" not in jwt.decode(token, options={"verify_signature": False}):
            issuer = None  # PyJWT insists on iss whenever an issuer is given
        audience = self.resource
        return dict(jwt.decode(token, key, algorithms=["RS256"], options=options, audience=audience, issuer=issuer,
                               leeway=5))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("port", type=int)
    parser.add_argument("issuer")
    parser.add_argument("--tool-scope", action="append", default=[])
    parser.add_argument("--implies", action="append", default=[])
    parser.add_argument("--fault", choices=FAULTS)
    parser.add_argument("--upstream", default="http://127.0.0.1:9/")
    args = parser.parse_args()
    UPSTREAM.update(url=args.upstream, fault=args.fault or "")
    app = JwtGate(
        mcp.streamable_http_app(), port=args.port, issuer=args.issuer.rstrip("/"), fault=args.fault,
        tool_scopes=_pairs(args.tool_scope), implies=_pairs(args.implies),
    )  # fmt: skip
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
