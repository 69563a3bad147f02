"""A client's OAuth flow as the capture shows it: challenges, discovery, registration, authorization, token.

The client-side authorization rules (AUTH-39..47) and the authorization server's response rule
(AUTH-49) all read the same story out of one log: which challenge the client got, which metadata
it fetched in which order, what it registered, what it asked the authorization server for, what
came back in the redirect, and whether it went on to the token endpoint. Only a forward proxy
sees the flow whole (the reverse proxy sees no request to another origin), and the suite's own
requests are never a client's flow, so anything it sent on purpose is left out here.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp_assay.spec.checks import Finding, not_applicable, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.documents import Document, metadata_documents
from mcp_assay.spec.rules.auth.facts import Challenge, canonical_uri, challenges_of
from mcp_assay.spec.rules.auth.use import auth_use
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.wire.model import (
    OAUTH_AUTHORIZATION,
    OAUTH_REGISTRATION,
    OAUTH_TOKEN,
    HttpExchange,
    oauth_kind,
    sent_by_assay,
)
from mcp_assay.wire.traffic import endpoint_of

__all__ = [
    "NO_FLOW",
    "AuthorizationStep",
    "ClientChallenge",
    "OAuthFlow",
    "Registration",
    "TokenStep",
    "flow_applicability",
    "issuer_of_metadata_url",
    "oauth_flow",
    "speaks_2026",
]

NO_FLOW = (
    "no client authorization flow appears in the traffic (a forward proxy, `mcp-assay proxy --mode regular`, "
    "sees a client's requests to its authorization server; a reverse proxy does not)"
)


def _first(values: dict[str, list[str]]) -> dict[str, str]:
    return {name: items[0] for name, items in values.items() if items}


@dataclass(frozen=True)
class _Step:
    """One exchange of the flow: where it went, and when."""

    exchange: HttpExchange

    @property
    def endpoint(self) -> str:
        return endpoint_of(self.exchange)

    @property
    def time(self) -> float:
        return self.exchange.request.time


@dataclass(frozen=True)
class ClientChallenge(_Step):
    """A ``401``, or a ``403`` with a Bearer challenge, that a client (not the suite) received."""

    bearer: Challenge | None

    @property
    def time(self) -> float:
        return self.exchange.response.time if self.exchange.response is not None else self.exchange.request.time

    @property
    def insufficient_scope(self) -> bool:
        return self.bearer is not None and self.bearer.get("error") == "insufficient_scope"

    def scopes(self) -> set[str] | None:
        value = self.bearer.get("scope") if self.bearer is not None else None
        return set(value.split()) if value else None


@dataclass(frozen=True)
class AuthorizationStep(_Step):
    """An authorization request and, when the capture shows it, the redirect that answered it."""

    params: dict[str, str]
    redirect: dict[str, str] | None
    """The parameters of the answer's ``Location`` (``code`` or ``error``, ``state``, ``iss``), if any."""

    def scopes(self) -> set[str]:
        return set(self.params.get("scope", "").split())


@dataclass(frozen=True)
class TokenStep(_Step):
    """A token request: its form parameters, and the client id however it was presented."""

    params: dict[str, str]
    client_id: str | None

    @property
    def grant(self) -> str:
        return self.params.get("grant_type", "")


@dataclass(frozen=True)
class Registration(_Step):
    """A dynamic client registration request, and the client id the answer issued."""

    body: dict[str, Any]
    client_id: str | None


@dataclass(frozen=True)
class OAuthFlow:
    """Everything of a client's authorization flow the log holds, each list in time order."""

    challenges: list[ClientChallenge] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    """Metadata fetches the client made (PRM and authorization server metadata)."""
    registrations: list[Registration] = field(default_factory=list)
    authorizations: list[AuthorizationStep] = field(default_factory=list)
    tokens: list[TokenStep] = field(default_factory=list)

    @property
    def started(self) -> bool:
        """Whether the client did anything beyond being challenged."""
        return bool(self.documents or self.registrations or self.authorizations or self.tokens)

    def steps(self) -> list[AuthorizationStep | TokenStep]:
        """Authorization requests, then token requests."""
        return [*self.authorizations, *self.tokens]

    def served_metadata(self) -> list[Document]:
        """Authorization server metadata documents that were served as JSON objects."""
        return [doc for doc in self.documents if doc.kind in ("oauth", "openid") and doc.body is not None]

    def metadata_for_endpoint(self, endpoint: str) -> Document | None:
        """The served authorization server metadata naming ``endpoint`` as one of its endpoints."""
        for doc in self.served_metadata():
            assert doc.body is not None
            for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
                value = doc.body.get(name)
                if isinstance(value, str) and endpoint_of_url(value) == endpoint:
                    return doc
        return None

    def resources(self) -> set[str]:
        """Canonical URIs of the MCP servers in the capture: challenged endpoints and PRM ``resource`` values."""
        found = {canonical_uri(challenge.endpoint) for challenge in self.challenges}
        for doc in self.documents:
            value = doc.body.get("resource") if doc.body is not None else None
            if doc.kind in ("path", "root", "header") and isinstance(value, str):
                found.add(canonical_uri(value))
        return found


def endpoint_of_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def issuer_of_metadata_url(url: str) -> str | None:
    """The issuer an authorization server metadata URL was built from (RFC 8414 §3, OpenID Discovery)."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path
    for marker in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        if path.startswith(marker):
            return origin + path[len(marker) :].rstrip("/")
        if marker == "/.well-known/openid-configuration" and path.endswith(marker):
            return origin + path[: -len(marker)]
    return None


def _redirect_of(exchange: HttpExchange) -> dict[str, str] | None:
    response = exchange.response
    if response is None or not 300 <= response.status < 400:
        return None
    location = response.headers.get("location")
    if not location:
        return None
    parts = urlsplit(location)
    return _first(parse_qs(parts.query, keep_blank_values=True)) | _first(
        parse_qs(parts.fragment, keep_blank_values=True)
    )


def _basic_client_id(exchange: HttpExchange) -> str | None:
    value = exchange.request.headers.get(HeaderKey.AUTHORIZATION) or ""
    scheme, _, credential = value.partition(" ")
    if scheme.lower() != "basic" or not credential:
        return None
    try:
        decoded = base64.b64decode(credential.strip()).decode("utf-8")
    except ValueError:
        return None
    return decoded.partition(":")[0] or None


def _issued_client_id(exchange: HttpExchange) -> str | None:
    response = exchange.response
    if response is None or response.body is None or not 200 <= response.status < 300:
        return None
    try:
        answer = json.loads(response.body)
    except ValueError:
        return None
    value = answer.get("client_id") if isinstance(answer, dict) else None
    return value if isinstance(value, str) else None


def oauth_flow(ctx: Context) -> OAuthFlow:
    """The client's flow in this log (worked out once per log)."""
    return ctx.view(_find_flow)


def _find_flow(ctx: Context) -> OAuthFlow:
    flow = OAuthFlow()
    for exchange in ctx.log.http_exchanges():
        response = exchange.response
        if sent_by_assay(exchange) or response is None or response.status not in (401, 403):
            continue
        bearer = challenges_of(response.headers).bearer
        if response.status == 401 or bearer is not None:
            flow.challenges.append(ClientChallenge(exchange, bearer))
    flow.documents.extend(doc for doc in metadata_documents(ctx) if not sent_by_assay(doc.exchange))
    for exchange in ctx.log.oauth_exchanges():
        if sent_by_assay(exchange):
            continue
        kind = oauth_kind(exchange.request)
        request = exchange.request
        if kind == OAUTH_AUTHORIZATION:
            params = _first(parse_qs(urlsplit(request.url).query, keep_blank_values=True))
            flow.authorizations.append(AuthorizationStep(exchange, params, _redirect_of(exchange)))
        elif kind == OAUTH_TOKEN:
            params = _first(parse_qs(request.body.decode("utf-8", "replace"), keep_blank_values=True))
            flow.tokens.append(TokenStep(exchange, params, params.get("client_id") or _basic_client_id(exchange)))
        elif kind == OAUTH_REGISTRATION:
            body = json.loads(request.body)  # oauth_kind read it as a JSON object already
            flow.registrations.append(Registration(exchange, dict(body), _issued_client_id(exchange)))
    for items in (flow.challenges, flow.authorizations, flow.tokens):
        items.sort(key=lambda item: item.time)
    flow.registrations.sort(key=lambda item: item.time)
    flow.documents.sort(key=lambda doc: doc.exchange.request.time)
    return flow


def flow_applicability(ctx: Context, what: str) -> Finding:
    """The finding for a log without ``what``: unverified where authorization is in use, else not applicable."""
    use = auth_use(ctx)
    if use.endpoints or oauth_flow(ctx).started:
        return unverified(f"no {what} appears in the traffic: {NO_FLOW}")
    return not_applicable(use.reason)


def speaks_2026(ctx: Context) -> bool:
    """Whether the client's MCP traffic in the log uses a revision with per-request versioning (2026)."""
    for message in ctx.log.messages():
        revision = ctx.revision(message)
        if revision is not None and revision.has("per_request_version"):
            return True
    return False
