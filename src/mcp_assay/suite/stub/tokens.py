"""JWTs for the token-validation probes: one valid control token and its one-property variants.

Every variant is the control token with exactly one thing changed (AUTH-AND-BEHAVIOUR §2.5,
P03..P08), so a server that serves the control and refuses the variant refused it for that
thing. Each variant is a stub token case of :mod:`mcp_assay.cases.tokens`, which names the requirement
its refusal establishes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_assay.cases import Case
from mcp_assay.cases.tokens import stub_token
from mcp_assay.spec.rules.auth.facts import unsigned_jwt
from mcp_assay.suite.stub.keys import SigningKey

__all__ = [
    "FOREIGN_AUDIENCE",
    "FOREIGN_ISSUER",
    "RUN_LIFETIME_S",
    "TokenVariant",
    "control_token",
    "sign_rs256",
    "variants",
]

FOREIGN_AUDIENCE = "https://other-service.mcp-assay.invalid/api"
FOREIGN_ISSUER = "https://evil-issuer.mcp-assay.invalid"
LIFETIME_S = 600
RUN_LIFETIME_S = 3600
"""The run's own stub token outlives any run; a probe's control token needs only minutes."""


def _segments(token: str) -> bytes:
    return token.rsplit(".", 1)[0].encode("ascii")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def sign_rs256(claims: Mapping[str, Any], key: SigningKey, **header: Any) -> str:
    """A JWT signed RS256 by ``key``; ``header`` adds or overrides header fields (``kid``, ``jku``, ``jwk``)."""
    fields = {"alg": "RS256", "typ": "at+jwt", "kid": key.kid, **header}
    fields = {name: value for name, value in fields.items() if value is not None}
    unsigned = unsigned_jwt(claims, fields)
    return f"{_segments(unsigned).decode('ascii')}.{_b64(key.sign(_segments(unsigned)))}"


def _sign_hs256(claims: Mapping[str, Any], secret: bytes, kid: str) -> str:
    unsigned = unsigned_jwt(claims, {"alg": "HS256", "typ": "at+jwt", "kid": kid})
    mac = hmac.new(secret, _segments(unsigned), hashlib.sha256).digest()
    return f"{_segments(unsigned).decode('ascii')}.{_b64(mac)}"


def control_claims(
    issuer: str, audience: str, scopes: Sequence[str], lifetime: int = LIFETIME_S, now: int | None = None
) -> dict[str, Any]:
    now = int(time.time()) if now is None else now
    claims: dict[str, Any] = {
        "iss": issuer,
        "sub": "mcp-assay-stub-principal",
        "aud": audience,
        "iat": now,
        "nbf": now - 5,
        "exp": now + lifetime,
        "client_id": "mcp-assay",
        "jti": f"mcp-assay-{now}-{hashlib.sha256(str(time.perf_counter_ns()).encode()).hexdigest()[:8]}",
    }
    if scopes:
        claims["scope"] = " ".join(scopes)
    return claims


def control_token(
    key: SigningKey, issuer: str, audience: str, scopes: Sequence[str], lifetime: int = LIFETIME_S
) -> str:
    """A token the target must serve: right issuer, audience and key, valid now."""
    return sign_rs256(control_claims(issuer, audience, scopes, lifetime), key)


@dataclass(frozen=True)
class TokenVariant:
    """One probe token: its case (which says the requirement its refusal establishes), what it changes, the token."""

    case: Case
    variant: str
    token: str

    @property
    def name(self) -> str:
        """The variant's short name (``expired``, ``jku`` ...)."""
        return self.case.name.removeprefix("auth-stub-")

    @property
    def requirement(self) -> str:
        """The one requirement its refusal establishes."""
        (requirement,) = self.case.feeds
        return requirement


def variants(
    key: SigningKey, foreign: SigningKey, issuer: str, audience: str, scopes: Sequence[str], foreign_jwks: str
) -> Iterator[TokenVariant]:
    """The control token changed in one property each: lifetime, audience, issuer, then signature."""
    claims = control_claims(issuer, audience, scopes)
    now = claims["iat"]

    def signed(name: str, variant: str, changes: Mapping[str, Any]) -> TokenVariant:
        changed = {k: v for k, v in {**claims, **changes}.items() if v is not None}
        return TokenVariant(stub_token(name), variant, sign_rs256(changed, key))

    yield signed("expired", "exp an hour in the past", {"iat": now - 7200, "nbf": now - 7200, "exp": now - 3600})
    yield signed("not-yet-valid", "nbf an hour in the future", {"nbf": now + 3600})
    yield signed("no-expiry", "no exp claim (a token that never expires)", {"exp": None})
    yield signed("foreign-audience", f"aud {FOREIGN_AUDIENCE}", {"aud": FOREIGN_AUDIENCE})
    yield signed("no-audience", "no aud claim", {"aud": None})
    yield signed("look-alike-audience", f"aud {audience}-evil", {"aud": f"{audience}-evil"})
    yield signed("audience-list", f"aud [{FOREIGN_AUDIENCE}]", {"aud": [FOREIGN_AUDIENCE]})
    yield signed("foreign-issuer", f"iss {FOREIGN_ISSUER}, signed by the trusted key", {"iss": FOREIGN_ISSUER})
    yield signed("no-issuer", "no iss claim, signed by the trusted key", {"iss": None})
    yield TokenVariant(
        stub_token("foreign-key"),
        "signed by an untrusted key under the trusted kid",
        sign_rs256(claims, foreign, kid=key.kid),
    )
    yield TokenVariant(
        stub_token("unknown-kid"), "signed by an untrusted key with its own kid", sign_rs256(claims, foreign)
    )
    yield TokenVariant(
        stub_token("jku"), "signed by an untrusted key announced in a jku header",
        sign_rs256(claims, foreign, jku=foreign_jwks),
    )  # fmt: skip
    yield TokenVariant(
        stub_token("embedded-jwk"), "signed by an untrusted key embedded as a jwk header",
        sign_rs256(claims, foreign, jwk=foreign.jwk()),
    )  # fmt: skip
    for alg in ("none", "None", "NONE"):
        yield TokenVariant(
            stub_token(f"alg-{alg}"), f"unsigned, alg {alg}", unsigned_jwt(claims, {"alg": alg, "typ": "at+jwt"})
        )
    yield TokenVariant(
        stub_token("hs256-confusion"), "HS256 with the trusted public key as the HMAC secret",
        _sign_hs256(claims, key.public_pem(), key.kid),
    )  # fmt: skip
