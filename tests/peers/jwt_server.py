"""A protected MCP server that validates JWT access tokens against an issuer's key set, in six builds.

The SDK app behind :class:`tests.peers.auth_server.Gate`, whose token check is replaced by PyJWT:
the key comes from ``ISSUER/jwks.json`` by ``kid``, and the token must be RS256, from ``ISSUER``,
for this server's canonical URI, and inside its lifetime. Each ``--fault`` removes one of those
checks, the way hand-rolled validators do:

- ``skip_aud``: any audience; ``skip_iss``: any issuer; ``skip_exp``: neither exp nor nbf;
- ``skip_signature``: the signature is not verified at all (alg none, a foreign key, anything);
- ``trust_jku``: a ``jku`` header names the key set to verify with, and it is fetched.

usage: python jwt_server.py PORT ISSUER [--fault NAME]
"""

from __future__ import annotations

import sys
from typing import Any

import jwt
import uvicorn

from tests.peers.auth_server import Gate, Scope, mcp

FAULTS = ("skip_aud", "skip_iss", "skip_exp", "skip_signature", "trust_jku")


class JwtGate(Gate):
    def __init__(self, app: Any, *, port: int, issuer: str, fault: str | None) -> None:
        super().__init__(app, token="", port=port, sloppy=False)
        self.issuer = issuer
        self.fault = fault
        self.keys = jwt.PyJWKClient(f"{issuer}/jwks.json", cache_keys=True)

    def _check(self, scope: Scope) -> bool | None:
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        authorization = headers.get("authorization")
        scheme, _, credential = (authorization or "").partition(" ")
        token = credential.strip() if scheme.lower() == "bearer" else ""
        if not token:
            return authorization is not None
        try:
            self._verify(token)
        except (jwt.PyJWTError, ValueError, KeyError):
            return True
        return None

    def _verify(self, token: str) -> None:
        fault = self.fault
        checked = {"exp": "skip_exp", "iss": "skip_iss", "aud": "skip_aud"}
        required = [claim for claim, off in checked.items() if fault != off]
        options: dict[str, Any] = {
            "require": required,
            "verify_signature": fault != "skip_signature",
            "verify_exp": fault != "skip_exp",
            "verify_nbf": fault != "skip_exp",
            "verify_aud": fault != "skip_aud",
            "verify_iss": fault != "skip_iss",
        }
        if fault == "skip_signature":
            jwt.decode(token, options=options, audience=self.resource, issuer=self.issuer, leeway=5)
            return
        header = jwt.get_unverified_header(token)
        if fault == "trust_jku" and isinstance(header.get("jku"), str):
            key = jwt.PyJWKClient(header["jku"]).get_signing_key_from_jwt(token).key
        else:
            key = self.keys.get_signing_key_from_jwt(token).key
        jwt.decode(
            token, key, algorithms=["RS256"], options=options, audience=self.resource, issuer=self.issuer, leeway=5
        )


def main(argv: list[str]) -> None:
    if len(argv) not in (3, 5) or (len(argv) == 5 and (argv[3] != "--fault" or argv[4] not in FAULTS)):
        raise SystemExit(__doc__)
    port, issuer = int(argv[1]), argv[2].rstrip("/")
    fault = argv[4] if len(argv) == 5 else None
    app = JwtGate(mcp.streamable_http_app(), port=port, issuer=issuer, fault=fault)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
