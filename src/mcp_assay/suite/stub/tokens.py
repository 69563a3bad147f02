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
from mcp_assay.cases.tokens import STUB_PREFIX, STUB_TOKENS
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
        return self.case.name.removeprefix(STUB_PREFIX)

    @property
    def requirement(self) -> str:
        """The one requirement its refusal establishes."""
        (requirement,) = self.case.feeds
        return requirement


def variants(
    key: SigningKey, foreign: SigningKey, issuer: str, audience: str, scopes: Sequence[str], foreign_jwks: str
) -> Iterator[TokenVariant]:
    """The control token changed in one property each, one per stub token case and in the registry's order
    (lifetime, audience, issuer, then signature)."""
    claims = control_claims(issuer, audience, scopes)
    now = claims["iat"]

    def signed(changes: Mapping[str, Any]) -> str:
        return sign_rs256({k: v for k, v in {**claims, **changes}.items() if v is not None}, key)

    def unsigned(alg: str) -> tuple[str, str]:
        return f"unsigned, alg {alg}", unsigned_jwt(claims, {"alg": alg, "typ": "at+jwt"})

    built: dict[str, tuple[str, str]] = {
        "expired": ("exp an hour in the past", signed({"iat": now - 7200, "nbf": now - 7200, "exp": now - 3600})),
        "not-yet-valid": ("nbf an hour in the future", signed({"nbf": now + 3600})),
        "no-expiry": ("no exp claim (a token that never expires)", signed({"exp": None})),
        "foreign-audience": (f"aud {FOREIGN_AUDIENCE}", signed({"aud": FOREIGN_AUDIENCE})),
        "no-audience": ("no aud claim", signed({"aud": None})),
        "look-alike-audience": (f"aud {audience}-evil", signed({"aud": f"{audience}-evil"})),
        "audience-list": (f"aud [{FOREIGN_AUDIENCE}]", signed({"aud": [FOREIGN_AUDIENCE]})),
        "foreign-issuer": (f"iss {FOREIGN_ISSUER}, signed by the trusted key", signed({"iss": FOREIGN_ISSUER})),
        "no-issuer": ("no iss claim, signed by the trusted key", signed({"iss": None})),
        "foreign-key": ("signed by an untrusted key under the trusted kid", sign_rs256(claims, foreign, kid=key.kid)),
        "unknown-kid": ("signed by an untrusted key with its own kid", sign_rs256(claims, foreign)),
        "jku": ("signed by an untrusted key announced in a jku header", sign_rs256(claims, foreign, jku=foreign_jwks)),
        "embedded-jwk": (
            "signed by an untrusted key embedded as a jwk header",
            sign_rs256(claims, foreign, jwk=foreign.jwk()),
        ),
        "alg-none": unsigned("none"),
        "alg-None": unsigned("None"),
        "alg-NONE": unsigned("NONE"),
        "hs256-confusion": (
            "HS256 with the trusted public key as the HMAC secret",
            _sign_hs256(claims, key.public_pem(), key.kid),
        ),
    }
    for case in STUB_TOKENS:
        variant, token = built[case.name.removeprefix(STUB_PREFIX)]
        yield TokenVariant(case, variant, token)
