"""The sign-in's client side of OAuth: registering a client, PKCE, and asking the token endpoint.

One function, :func:`auth_method`, picks how the client authenticates from what the token endpoint
supports, and both the registration and every token request go through it: RFC 7591 makes
``token_endpoint_auth_method`` a statement of what the client *will* do, so registering one method
and sending another is a contradiction a server may reject. When the server registers a different
method or other grant types than the ones asked for, its answer wins: :class:`Client` keeps what
was registered, and the flow decides the grant from it. Registrations are ``application_type: native`` and
state ``grant_types`` and ``response_types`` explicitly (``[]`` for ``client_credentials``, which
never visits the authorization endpoint). PKCE is ``S256`` only (RFC 7636 §4.2). A token
endpoint's OAuth error (RFC 6749 §5.2) is :class:`Refused`, so the flow can tell a refused grant
from a failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus, urlencode

from mcp_assay.suite.oauth.http import OAuthHttp
from mcp_assay.suite.oauth.steps import Narrator, SignInFailed, Step
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType

__all__ = ["SECRET_METHODS", "Client", "Refused", "auth_method", "pkce", "register", "request_token"]

SECRET_METHODS = ("client_secret_basic", "client_secret_post")
_PUBLIC_ORDER = ("none", *SECRET_METHODS)
CLIENT_NAME = "mcp-assay"


@dataclass(frozen=True)
class Client:
    """A client the sign-in acts as: its id, its secret if it has one, and how it authenticates."""

    client_id: str
    secret: str | None
    method: str
    grant_types: tuple[str, ...] | None = None
    """The grant types the authorization server registered; ``None``: not known (a client given by the user)."""

    def authenticate(self, form: dict[str, str], headers: dict[str, str]) -> None:
        """Put the client's authentication on a token request (RFC 6749 §2.3.1; ``none``: just the id)."""
        if self.method == "client_secret_basic" and self.secret is not None:
            pair = f"{quote_plus(self.client_id)}:{quote_plus(self.secret)}"
            headers[HeaderKey.AUTHORIZATION] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
            return
        form["client_id"] = self.client_id
        if self.method == "client_secret_post" and self.secret is not None:
            form["client_secret"] = self.secret


class Refused(SignInFailed):
    """The token endpoint answered an OAuth error (RFC 6749 §5.2): ``error`` is its code, ``answer`` the whole of it."""

    def __init__(self, why: str, error: str, answer: str) -> None:
        super().__init__(Step.TOKEN, why)
        self.error = error
        self.answer = answer


def auth_method(supported: Sequence[str] | None, *, public: bool) -> str | None:
    """The client authentication to use: ``none`` for a public client where offered, else a secret method.

    Without ``token_endpoint_auth_methods_supported`` the server supports ``client_secret_basic``
    (RFC 8414 §2). ``None``: nothing the sign-in can do is offered."""
    offered = list(supported) if supported is not None else ["client_secret_basic"]
    order = _PUBLIC_ORDER if public else SECRET_METHODS
    return next((method for method in order if method in offered), None)


def pkce() -> tuple[str, str]:
    """A fresh verifier (86 unreserved characters) and its ``S256`` challenge (RFC 7636 §4.1, §4.2)."""
    verifier = secrets.token_urlsafe(64)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


async def register(
    http: OAuthHttp,
    url: str,
    *,
    method: str,
    grant_types: Sequence[str],
    redirect_uris: Sequence[str] = (),
    scope: str | None,
    narrator: Narrator,
) -> Client:
    """RFC 7591 §3.1: register a native client; its ``client_id`` is required in the answer (§3.2.1)."""
    metadata: dict[str, Any] = {
        "client_name": CLIENT_NAME,
        "application_type": "native",
        "token_endpoint_auth_method": method,
        "grant_types": list(grant_types),
        "response_types": ["code"] if "authorization_code" in grant_types else [],
    }
    if redirect_uris:
        metadata["redirect_uris"] = list(redirect_uris)
    if scope:
        metadata["scope"] = scope
    answer = await http.send(
        "POST", url, Step.REGISTRATION,
        headers={HeaderKey.CONTENT_TYPE: MediaType.JSON, HeaderKey.ACCEPT: MediaType.JSON},
        content=json.dumps(metadata).encode(),
    )  # fmt: skip
    body = answer.json
    if body is not None:
        narrator.secret(_string(body, "client_secret"))
        narrator.secret(_string(body, "registration_access_token"))
    if answer.status not in (200, 201) or body is None:
        raise SignInFailed(Step.REGISTRATION, f"{url} answered {answer.oauth_error()}")
    client_id = _string(body, "client_id")
    if not client_id:
        raise SignInFailed(Step.REGISTRATION, f"{url} answered without a client_id (RFC 7591 §3.2.1 requires one)")
    registered = _string(body, "token_endpoint_auth_method") or method
    if registered not in _PUBLIC_ORDER:
        raise SignInFailed(Step.REGISTRATION, f"the client was registered for {registered}, which mcp-assay cannot do")
    secret = _string(body, "client_secret")
    if registered in SECRET_METHODS and not secret:
        raise SignInFailed(Step.REGISTRATION, f"the client was registered for {registered} but given no client_secret")
    if registered != method:
        narrator.note(f"asked to register for {method}; the server registered {registered}, which is used")
    granted = body.get("grant_types")
    if not isinstance(granted, list) or not all(isinstance(item, str) for item in granted):
        granted = list(grant_types)  # RFC 7591 §3.2.1 has the answer hold them; absent, assume those asked for
    return Client(client_id, secret if registered in SECRET_METHODS else None, registered, tuple(granted))


async def request_token(
    http: OAuthHttp, url: str, form: Mapping[str, str], client: Client, narrator: Narrator
) -> tuple[str, Mapping[str, Any]]:
    """The access token from a token request (RFC 6749 §3.2, §5.1), and the whole answer; errors per §5.2."""
    fields = dict(form)
    headers: dict[str, str] = {
        HeaderKey.CONTENT_TYPE: "application/x-www-form-urlencoded",
        HeaderKey.ACCEPT: MediaType.JSON,
    }
    client.authenticate(fields, headers)
    answer = await http.send("POST", url, Step.TOKEN, headers=headers, content=urlencode(fields).encode())
    body = answer.json or {}
    for name in ("access_token", "refresh_token", "id_token"):
        narrator.secret(_string(body, name))
    token = _string(body, "access_token")
    if answer.status != 200 or not token:
        reason = answer.oauth_error() if answer.status != 200 else "HTTP 200 without an access_token"
        error = body.get("error")
        if answer.status != 200 and isinstance(error, str):
            raise Refused(f"{url} answered {reason}", error, reason)
        raise SignInFailed(Step.TOKEN, f"{url} answered {reason}")
    kind = body.get("token_type")
    if not isinstance(kind, str):
        narrator.note("the token answer has no token_type (RFC 6749 §5.1 requires it); using it as a Bearer token")
    elif kind.lower() != "bearer":
        raise SignInFailed(Step.TOKEN, f"the token is of type {kind!r}; mcp-assay presents Bearer tokens only")
    return token, body


def _string(body: Mapping[str, Any], name: str) -> str | None:
    value = body.get(name)
    return value if isinstance(value, str) and value else None
