"""The stub's OAuth 2.1 grants: clients, codes, PKCE, and the tokens it issues.

The token probes mint their tokens directly, but checking an MCP *client* takes an authorization
server the client can complete OAuth against: register itself (RFC 7591), be sent back with a
code (auto-consent, RFC 9207 ``iss`` included), and redeem that code with its PKCE verifier
(RFC 7636) for a token the stub's key signs; or, where the :class:`~mcp_assay.suite.stub.policy.StubPolicy`
offers it, take a token with its client credentials alone (RFC 6749 §4.4). The policy also decides
whether registration is open (and whether it makes every client public whatever it asked for),
which clients exist beforehand, whether consent is given or refused (``access_denied``), and which
advertised grants the token endpoint refuses all the same. A loopback redirect URI matches whatever
port the client listens on (RFC 8252 §7.3). This module holds that state and those decisions;
:mod:`~mcp_assay.suite.stub.server` only turns HTTP requests into calls here and answers back.
Access tokens are minted the way :mod:`~mcp_assay.suite.stub.tokens` mints the control token,
with the client as ``sub``/``client_id``, the granted scope, and the requested resource as ``aud``.
Everything is kept in memory for the life of the stub, behind one lock (the server is threaded).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from mcp_assay.spec.rules.auth.facts import is_loopback_host
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import GRANTS, StubPolicy
from mcp_assay.suite.stub.tokens import LIFETIME_S, control_claims, sign_rs256

__all__ = [
    "AUTH_METHODS",
    "CODE_LIFETIME_S",
    "SECRET_METHODS",
    "GrantError",
    "Grants",
    "single_values",
]

CODE_LIFETIME_S = 120
SECRET_METHODS = ("client_secret_post", "client_secret_basic")
AUTH_METHODS = ("none", *SECRET_METHODS)
_DEFAULT_AUTH_METHOD = "client_secret_basic"
"""RFC 7591 §2: a registration that names no token endpoint auth method gets this one."""
_PKCE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_ECHOED = ("client_name", "scope", "application_type")


class GrantError(Exception):
    """An OAuth error answer: the ``error`` code, a description, and the HTTP status to answer with."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


@dataclass(frozen=True)
class _Client:
    client_id: str
    secret: str | None
    auth_method: str
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...] = GRANTS
    """The grants this client may use (a preset client: every grant the stub offers)."""


@dataclass(frozen=True)
class _Code:
    client_id: str
    redirect_uri: str | None
    """The redirect URI the authorization request named (``None`` when it relied on the only registered one)."""
    challenge: str
    scope: str | None
    resource: str | None
    expires: float


@dataclass(frozen=True)
class _Refresh:
    client_id: str
    scope: str | None
    resource: str | None
    family: str
    """The code the chain of refresh tokens started from: a replayed code revokes the whole chain."""


def single_values(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Request parameters as a mapping; a repeated one is an error (RFC 6749 §3.1, §3.2)."""
    values: dict[str, str] = {}
    for name, value in pairs:
        if name in values:
            raise GrantError("invalid_request", f"parameter {name} given more than once")
        values[name] = value
    return values


def _absolute(uri: str) -> bool:
    parts = urlsplit(uri)
    return bool(parts.scheme and (parts.netloc or parts.path)) and not parts.fragment and "#" not in uri


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode("ascii")


def _with_query(uri: str, params: Mapping[str, str]) -> str:
    """``uri`` with ``params`` added to the query it already has (RFC 6749 §3.1.2: keep the existing query)."""
    parts = urlsplit(uri)
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *params.items()])
    return urlunsplit(parts._replace(query=query))


class Grants:
    """Registered clients, outstanding codes and refresh tokens of one stub, and the answers they lead to."""

    def __init__(
        self, issuer: str, key: SigningKey, scopes: Sequence[str] = (), *, lifetime: int = LIFETIME_S,
        code_lifetime: int = CODE_LIFETIME_S, policy: StubPolicy | None = None,
    ) -> None:  # fmt: skip
        self.issuer = issuer
        self.key = key
        self.policy = policy or StubPolicy()
        self.scopes = tuple(scopes)
        """Granted when an authorization request names no scope (what the run's own token holds)."""
        self.lifetime = lifetime
        self.code_lifetime = code_lifetime
        self._clients: dict[str, _Client] = {}
        self._codes: dict[str, _Code] = {}
        self._redeemed: set[str] = set()
        self._refresh: dict[str, _Refresh] = {}
        self._lock = threading.Lock()
        for preset in self.policy.clients:
            method = SECRET_METHODS[1] if preset.secret is not None else "none"
            self._clients[preset.client_id] = _Client(
                preset.client_id, preset.secret, method, preset.redirect_uris, self.policy.grant_types
            )

    # -- registration (RFC 7591) ------------------------------------------------------------------

    def register(self, body: Any) -> dict[str, Any]:
        """Register a client from its metadata; the answer is the client information response (201)."""
        if not isinstance(body, Mapping):
            raise GrantError("invalid_client_metadata", "the registration request must be a JSON object")
        method = _choice(body, "token_endpoint_auth_method", AUTH_METHODS, _DEFAULT_AUTH_METHOD)
        grant_types = _subset(body, "grant_types", self.policy.grant_types, ["authorization_code"])
        public = self.policy.public_registration
        if public:  # whatever was asked: a public authorization_code client, and the answer says so
            method, grant_types = "none", ["authorization_code"]
        redirected = "authorization_code" in grant_types
        response_types = (
            ["code"] if public else _subset(body, "response_types", ("code",), ["code"], empty=not redirected)
        )
        redirect_uris = _redirect_uris(body.get("redirect_uris"), required=redirected and not public)
        if "client_credentials" in grant_types and method not in SECRET_METHODS:
            raise GrantError("invalid_client_metadata", "client_credentials needs a client that authenticates")
        echoed = {name: body[name] for name in _ECHOED if body.get(name) is not None}
        if any(not isinstance(value, str) for value in echoed.values()):
            raise GrantError("invalid_client_metadata", f"{', '.join(echoed)}: expected strings")
        client = _Client(
            client_id=f"stub-client-{secrets.token_urlsafe(12)}",
            secret=secrets.token_urlsafe(32) if method in SECRET_METHODS else None,
            auth_method=method,
            redirect_uris=tuple(redirect_uris),
            grant_types=tuple(grant_types),
        )
        with self._lock:
            self._clients[client.client_id] = client
        answer: dict[str, Any] = {"client_id": client.client_id, "client_id_issued_at": int(time.time())}
        if client.secret is not None:
            answer.update(client_secret=client.secret, client_secret_expires_at=0)
        answer.update(
            redirect_uris=redirect_uris, token_endpoint_auth_method=method, grant_types=grant_types,
            response_types=response_types, **echoed,
        )  # fmt: skip
        return answer

    # -- authorization endpoint (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 9207) -------------------------

    def authorize(self, params: Mapping[str, str]) -> str:
        """Consent at once: the Location to send the user agent to, with a code or an error.

        A request whose client or redirect URI cannot be trusted raises :class:`GrantError`
        instead (answered directly: RFC 6749 §4.1.2.1 forbids redirecting it)."""
        client = self._client(params.get("client_id"))
        redirect_uri = _registered_redirect(client, params.get("redirect_uri"))
        answer = {"state": params["state"]} if "state" in params else {}
        try:
            if "authorization_code" not in client.grant_types or "authorization_code" not in self.policy.grant_types:
                raise GrantError("unauthorized_client", "this client may not use the authorization_code grant")
            if self.policy.consent == "deny":
                raise GrantError("access_denied", "the resource owner denied the request (stub consent: deny)")
            code = self._issue_code(client, params)
        except GrantError as error:
            return _with_query(redirect_uri, {"error": error.error, "error_description": error.description,
                                              **answer, "iss": self.issuer})  # fmt: skip
        return _with_query(redirect_uri, {"code": code, **answer, "iss": self.issuer})

    def _client(self, client_id: str | None) -> _Client:
        with self._lock:
            client = self._clients.get(client_id or "")
        if client is None:
            raise GrantError("invalid_client", "client_id missing or not registered with this stub")
        return client

    def _issue_code(self, client: _Client, params: Mapping[str, str]) -> str:
        response_type = params.get("response_type")
        if not response_type:
            raise GrantError("invalid_request", "response_type is required")
        if response_type != "code":
            raise GrantError("unsupported_response_type", "the stub issues authorization codes only")
        challenge = params.get("code_challenge")
        if not challenge or not _PKCE.fullmatch(challenge):
            raise GrantError("invalid_request", "code_challenge is required (PKCE, 43-128 unreserved characters)")
        if params.get("code_challenge_method") != "S256":
            raise GrantError("invalid_request", "code_challenge_method must be S256")
        resource = params.get("resource")
        if resource is not None and not _absolute(resource):
            raise GrantError("invalid_target", "resource must be an absolute URI without a fragment")
        code = secrets.token_urlsafe(32)
        grant = _Code(
            client_id=client.client_id, redirect_uri=params.get("redirect_uri"), challenge=challenge,
            scope=params.get("scope") or (" ".join(self.scopes) or None), resource=resource,
            expires=time.monotonic() + self.code_lifetime,
        )  # fmt: skip
        with self._lock:
            now = time.monotonic()
            self._codes = {key: kept for key, kept in self._codes.items() if kept.expires > now}
            self._codes[code] = grant
        return code

    # -- token endpoint (RFC 6749 §3.2, §4.1.3, §6; RFC 7636 §4.6; RFC 8707) --------------------------

    def token(self, form: Mapping[str, str], authorization: str | None) -> dict[str, Any]:
        """Answer a token request (form parameters and the ``Authorization`` header) with a token response."""
        grant_type = form.get("grant_type")
        if not grant_type:
            raise GrantError("invalid_request", "grant_type is required")
        offered = self.policy.grant_types
        if grant_type not in offered:
            raise GrantError("unsupported_grant_type", f"the stub grants {', '.join(offered)} only")
        client = self._authenticate(form, authorization)
        if grant_type != "refresh_token" and grant_type not in client.grant_types:
            raise GrantError("unauthorized_client", f"this client did not register for {grant_type}")
        if grant_type in self.policy.refused_grants:
            raise GrantError("unauthorized_client", f"{grant_type} is advertised but not given to this client (stub "
                             "policy refused_grants)")  # fmt: skip
        if grant_type == "authorization_code":
            return self._redeem_code(client, form)
        if grant_type == "client_credentials":
            return self._client_credentials(client, form)
        return self._redeem_refresh(client, form)

    def _authenticate(self, form: Mapping[str, str], authorization: str | None) -> _Client:
        """The client making the request, authenticated the way it registered (RFC 6749 §2.3.1)."""
        basic = _basic_credentials(authorization)
        client_id = basic[0] if basic else form.get("client_id")
        if basic and form.get("client_id") not in (None, basic[0]):
            raise GrantError("invalid_request", "client_id differs from the authenticated client")
        if basic and "client_secret" in form:
            raise GrantError("invalid_request", "more than one client authentication method used")
        with self._lock:
            client = self._clients.get(client_id or "")
        if client is None:
            raise GrantError("invalid_client", "client_id missing or not registered with this stub", 401)
        secret = basic[1] if basic else form.get("client_secret")
        if client.secret is None:
            if secret is not None:
                raise GrantError("invalid_client", "this client registered without a secret", 401)
            return client
        if secret is None or not secrets.compare_digest(secret, client.secret):
            raise GrantError("invalid_client", "client authentication failed", 401)
        return client

    def _redeem_code(self, client: _Client, form: Mapping[str, str]) -> dict[str, Any]:
        code = form.get("code")
        if not code:
            raise GrantError("invalid_request", "code is required")
        with self._lock:
            grant = self._codes.pop(code, None)
            replayed = grant is None and code in self._redeemed
            if replayed:
                self._revoke_family(code)
            if grant is not None:
                self._redeemed.add(code)
        if grant is None:
            raise GrantError("invalid_grant", "authorization code already used" if replayed else "unknown code")
        _check_code(grant, client, form)
        resource = _resource(form, grant.resource)
        return self._tokens(client.client_id, grant.scope, resource, family=code)

    def _redeem_refresh(self, client: _Client, form: Mapping[str, str]) -> dict[str, Any]:
        presented = form.get("refresh_token")
        if not presented:
            raise GrantError("invalid_request", "refresh_token is required")
        with self._lock:
            held = self._refresh.get(presented)
            if held is not None and held.client_id == client.client_id:
                del self._refresh[presented]  # rotated: a refresh token is good once (OAuth 2.1 §4.3.1)
        if held is None or held.client_id != client.client_id:
            raise GrantError("invalid_grant", "refresh token unknown, used, revoked, or of another client")
        scope = form.get("scope") or held.scope
        if not set((scope or "").split()) <= set((held.scope or "").split()):
            raise GrantError("invalid_scope", "a refresh can narrow the granted scope, not widen it")
        return self._tokens(client.client_id, scope, _resource(form, held.resource), family=held.family)

    def _client_credentials(self, client: _Client, form: Mapping[str, str]) -> dict[str, Any]:
        """RFC 6749 §4.4: a confidential client's own token; no refresh token (§4.4.3)."""
        if client.secret is None:
            raise GrantError("unauthorized_client", "client_credentials is for clients that authenticate")
        scope = form.get("scope") or (" ".join(self.scopes) or None)
        answer: dict[str, Any] = {
            "access_token": self.mint(client.client_id, scope, _resource(form, None)),
            "token_type": "Bearer",
            "expires_in": self.lifetime,
        }
        if scope:
            answer["scope"] = scope
        return answer

    def _revoke_family(self, family: str) -> None:
        """RFC 6749 §4.1.2: a replayed code revokes what was issued on it (caller holds the lock)."""
        self._refresh = {key: held for key, held in self._refresh.items() if held.family != family}

    def _tokens(self, client_id: str, scope: str | None, resource: str | None, *, family: str) -> dict[str, Any]:
        refresh = secrets.token_urlsafe(32)
        with self._lock:
            self._refresh[refresh] = _Refresh(client_id, scope, resource, family)
        answer: dict[str, Any] = {
            "access_token": self.mint(client_id, scope, resource),
            "token_type": "Bearer",
            "expires_in": self.lifetime,
            "refresh_token": refresh,
        }
        if scope:
            answer["scope"] = scope
        return answer

    def mint(self, client_id: str, scope: str | None, resource: str | None) -> str:
        """An access token as :func:`~mcp_assay.suite.stub.tokens.control_token` mints it, for this client."""
        claims = control_claims(self.issuer, resource or "", (scope or "").split(), self.lifetime)
        claims.update(sub=client_id, client_id=client_id)
        if resource is None:
            del claims["aud"]
        return sign_rs256(claims, self.key)


def _redirect_uris(value: Any, *, required: bool) -> list[str]:
    """RFC 7591 §2: redirect URIs are required of clients that use redirect-based grants."""
    if value is None and not required:
        return []
    if not isinstance(value, list) or not value or not all(isinstance(uri, str) and _absolute(uri) for uri in value):
        raise GrantError("invalid_redirect_uri", "redirect_uris must be a non-empty list of absolute URIs")
    return list(value)


def _choice(body: Mapping[str, Any], name: str, known: Sequence[str], default: str) -> str:
    value = body.get(name)
    if value is None:
        return default
    if value not in known:
        raise GrantError("invalid_client_metadata", f"{name} {value!r}: the stub supports {', '.join(known)}")
    return str(value)


def _subset(
    body: Mapping[str, Any], name: str, known: Sequence[str], default: list[str], *, empty: bool = False
) -> list[str]:
    value = body.get(name)
    if value is None:
        return [] if empty else default
    if not isinstance(value, list) or (not value and not empty) or not all(item in known for item in value):
        raise GrantError("invalid_client_metadata", f"{name}: the stub supports {', '.join(known)}")
    return [str(item) for item in value]


def _registered_redirect(client: _Client, requested: str | None) -> str:
    """The redirect URI to answer at: the one requested if registered, else the only one registered."""
    if requested is None and len(client.redirect_uris) == 1:
        return client.redirect_uris[0]
    if requested is None or not any(_same_redirect(uri, requested) for uri in client.redirect_uris):
        raise GrantError("invalid_request", "redirect_uri missing or not registered for this client")
    return requested


def _same_redirect(registered: str, requested: str) -> bool:
    """Exactly the registered URI; for an http loopback one, any port (RFC 8252 §7.3)."""
    if registered == requested:
        return True
    mine, theirs = urlsplit(registered), urlsplit(requested)
    if mine.scheme != "http" or theirs.scheme != "http" or not is_loopback_host(mine.hostname or ""):
        return False
    same = (mine.hostname, mine.path, mine.query) == (theirs.hostname, theirs.path, theirs.query)
    return same and not theirs.fragment


def _basic_credentials(authorization: str | None) -> tuple[str, str] | None:
    """``client_id`` and secret from ``Authorization: Basic`` (each form-urlencoded, RFC 6749 §2.3.1)."""
    scheme, _, encoded = (authorization or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise GrantError("invalid_client", "malformed Basic credentials", 401) from None
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise GrantError("invalid_client", "malformed Basic credentials", 401)
    return unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))


def _check_code(grant: _Code, client: _Client, form: Mapping[str, str]) -> None:
    if grant.expires <= time.monotonic():
        raise GrantError("invalid_grant", "authorization code expired")
    if grant.client_id != client.client_id:
        raise GrantError("invalid_grant", "authorization code was issued to another client")
    if grant.redirect_uri is not None and form.get("redirect_uri") != grant.redirect_uri:
        raise GrantError("invalid_grant", "redirect_uri differs from the authorization request's")
    verifier = form.get("code_verifier")
    if not verifier or not _PKCE.fullmatch(verifier):
        raise GrantError("invalid_grant", "code_verifier missing or malformed")
    if not secrets.compare_digest(_s256(verifier), grant.challenge):
        raise GrantError("invalid_grant", "code_verifier does not match the code_challenge")


def _resource(form: Mapping[str, str], granted: str | None) -> str | None:
    """The token's audience: the token request's resource, which must be the authorized one if both name one."""
    requested = form.get("resource")
    if requested is None:
        return granted
    if not _absolute(requested):
        raise GrantError("invalid_target", "resource must be an absolute URI without a fragment")
    if granted is not None and requested != granted:
        raise GrantError("invalid_target", "resource differs from the one authorized")
    return requested
