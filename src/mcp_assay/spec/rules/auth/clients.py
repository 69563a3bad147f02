"""Authorization, client side and authorization servers (AUTH-36..38, 48, 50).

A client sends its bearer token on every request to a protected server, never in the query
string, and only tokens meant for that server; the authorization server URLs in the metadata
and a client's redirect URIs use HTTPS, and OpenID discovery lists the PKCE methods. A client's
own metadata fetches are not captured by the proxy, so some of these are judged only on the
requests it sends.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from operator import attrgetter
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcp_assay.recording.redaction import REDACTED, fingerprint
from mcp_assay.spec.checks import Finding, failed, log_check, not_applicable, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.documents import NOT_CAPTURED, home_origin, metadata_documents, origin_of, prm_documents
from mcp_assay.spec.rules.auth.facts import canonical_uri, is_loopback_host, jwt_claims, jwt_shaped, presented
from mcp_assay.spec.rules.auth.use import SentRequest, auth_use, deliberate, sent_requests
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.protocol import MediaType
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import Message
from mcp_assay.wire.model import HttpExchange, is_well_known
from mcp_assay.wire.traffic import endpoint_of

AS_URL_FIELDS = (
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "jwks_uri",
    "introspection_endpoint",
    "revocation_endpoint",
    "userinfo_endpoint",
    "device_authorization_endpoint",
    "pushed_authorization_request_endpoint",
)


class _Bearers:
    """The bearer tokens the window's requests carried (those a recording redacted left out), and the endpoints a
    client presented a non-empty one to (probes marked invalid left out): found once per window."""

    def __init__(self, ctx: Context) -> None:
        self.tokens: set[str] = set()
        self.endpoints: set[str] = set()
        for exchange in ctx.log.http_exchanges():
            token = presented(exchange.request).bearer
            if token and REDACTED not in token:
                self.tokens.add(token)
            if token and not deliberate(exchange):
                self.endpoints.add(endpoint_of(exchange))


_SENT_AT = attrgetter("exchange.time")


@log_check(requirements="AUTH-36", level=Level.MUST, subject="client requests", follows=ANY_AUTHORIZATION)
def clients_send_the_token_on_every_request(ctx: Context) -> Iterator[Finding]:
    """Once a client has presented a bearer token to an endpoint, each later request there carries one.

    Requests are grouped by endpoint and ``User-Agent`` so two clients behind one proxy are not mixed up."""
    lanes: dict[tuple[str, str], list[SentRequest]] = defaultdict(list)
    for sent in sent_requests(ctx):
        exchange = sent.exchange
        if sent.deliberate or is_well_known(exchange.request):
            continue
        lanes[(sent.endpoint, exchange.request.headers.get("user-agent") or "")].append(sent)
    any_token = False
    for (endpoint, _agent), lane in lanes.items():
        started = False
        for sent in sorted(lane, key=_SENT_AT):
            exchange = sent.exchange
            subject: Message | HttpExchange = exchange.request_message or exchange
            if sent.bearer:
                if started:
                    yield passed(subject)
                started = any_token = True
            elif started:
                what = exchange.request_message.describe() if exchange.request_message else exchange.request.method
                yield failed(
                    subject,
                    f"{what} to {endpoint} carries no Authorization: Bearer after the client had presented a token",
                )
    if not any_token:
        yield not_applicable("no client presented a bearer token to an MCP endpoint")


@log_check(requirements="AUTH-37", level=Level.MUST_NOT, subject="client request URIs", follows=ANY_AUTHORIZATION)
def clients_keep_tokens_out_of_query_strings(ctx: Context) -> Iterator[Finding]:
    """A client never puts an access token in a request URI's query string.

    A query parameter named ``access_token``, ``token``, ``api_key``, ``key``, ``jwt`` or ``auth``
    counts when its value is JWT-shaped or equals a bearer token seen in the traffic (values a recording
    already redacted cannot be compared, and count as clean)."""
    bearers = ctx.view(_Bearers)
    use = auth_use(ctx)
    found = False
    for sent in sent_requests(ctx):
        if sent.deliberate:
            continue
        exchange = sent.exchange
        subject: Message | HttpExchange = exchange.request_message or exchange
        leaked = [
            (name, value)
            for name, value in sent.credentials.query
            if REDACTED not in value and (jwt_shaped(value) or value in bearers.tokens)
        ]
        if leaked:
            found = True
            named = ", ".join(f"{name} ({fingerprint(value)})" for name, value in leaked)
            yield failed(subject, f"the request URI carries an access token in the query: {named}")
        elif sent.endpoint in use or sent.endpoint in bearers.endpoints:
            found = True
            yield passed(subject)
    if not found:
        yield not_applicable(use.reason or "no client presented a bearer token")


def _audience_names(audience: Any, endpoint: str) -> bool:
    wanted = canonical_uri(endpoint)
    for value in audience if isinstance(audience, list) else [audience]:
        if isinstance(value, str) and (wanted == canonical_uri(value) or wanted.startswith(canonical_uri(value) + "/")):
            return True
    return False


@log_check(requirements="AUTH-38", level=Level.MUST_NOT, subject="readable bearer JWTs", follows=ANY_AUTHORIZATION)
def clients_send_only_tokens_meant_for_the_server(ctx: Context) -> Iterator[Finding]:
    """A client sends a server only tokens issued for it: a readable JWT's `aud` names the server (heuristic).

    Also its ``iss`` is one of the PRM ``authorization_servers`` when the traffic holds that document.
    Claims are read without verification; opaque tokens give no evidence either way."""
    issuers: dict[str, set[str]] = defaultdict(set)
    for doc in prm_documents(ctx):
        servers = doc.body.get("authorization_servers") if doc.body is not None else None
        for server in servers if isinstance(servers, list) else []:
            if isinstance(server, str):
                issuers[home_origin(doc, ctx)].add(server.rstrip("/"))
    tokens = False
    for sent in sent_requests(ctx):
        token = sent.bearer
        if sent.deliberate or not token:
            continue
        tokens = True
        claims = jwt_claims(token)
        if claims is None:
            continue
        exchange = sent.exchange
        subject: Message | HttpExchange = exchange.request_message or exchange
        endpoint = sent.endpoint
        issuer = claims.get("iss")
        known = issuers.get(origin_of(endpoint))
        if "aud" in claims and not _audience_names(claims["aud"], endpoint):
            yield failed(
                subject,
                f"the JWT {fingerprint(token)} is for audience {json.dumps(claims['aud'])[:120]}, not {endpoint}",
            )
        elif known and isinstance(issuer, str) and issuer.rstrip("/") not in known:
            yield failed(
                subject,
                f"the JWT {fingerprint(token)} comes from {issuer}, not from an authorization server the PRM lists",
            )
        else:
            yield passed(subject)
    if not tokens:
        yield not_applicable("no client presented a bearer token to an MCP endpoint")


def _redirect_uris(exchange: HttpExchange) -> list[str]:
    request = exchange.request
    values = (
        [value for name, value in parse_qsl(urlsplit(request.url).query) if name == "redirect_uri"]
        if "?" in request.url  # no query to read (most requests): not worth parsing
        else []
    )
    if not request.body:
        return values
    kind = request.content_type
    if kind == "application/x-www-form-urlencoded":
        text = request.body.decode("utf-8", "replace")
        values.extend(value for name, value in parse_qsl(text) if name == "redirect_uri")
    elif kind == MediaType.JSON and not exchange.messages:
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("redirect_uris"), list):
            values.extend(item for item in body["redirect_uris"] if isinstance(item, str))
    return values


@log_check(requirements="AUTH-48", level=Level.MUST, subject="authorization URLs", follows=ANY_AUTHORIZATION)
def authorization_urls_use_https(ctx: Context) -> Iterator[Finding]:
    """Authorization server URLs are `https`, and redirect URIs are `https` or loopback.

    Judged on PRM ``authorization_servers``, on the endpoints in authorization server metadata and
    on ``redirect_uri`` values the traffic shows. Plain ``http`` on loopback passes as a test set-up."""
    use = auth_use(ctx)
    seen: set[tuple[str, str]] = set()
    urls: list[tuple[HttpExchange, str, str]] = []
    for doc in metadata_documents(ctx):
        if doc.body is None:
            continue
        if doc.kind in ("path", "root", "header"):
            values = doc.body.get("authorization_servers")
            for value in values if isinstance(values, list) else []:
                if isinstance(value, str):
                    urls.append((doc.exchange, "authorization server", value))
        else:
            for name in AS_URL_FIELDS:
                value = doc.body.get(name)
                if isinstance(value, str):
                    urls.append((doc.exchange, name, value))
    sent = [item.exchange for item in sent_requests(ctx) if not item.deliberate]
    for exchange in [*sent, *(item for item in ctx.log.oauth_exchanges() if not deliberate(item))]:
        urls.extend((exchange, "redirect URI", value) for value in _redirect_uris(exchange))
    for exchange, what, url in urls:
        if (what, url) in seen:
            continue
        seen.add((what, url))
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme == "https":
            yield passed(exchange)
        elif parts.scheme == "http" and is_loopback_host(host):
            yield passed(exchange, f"the {what} {url} is plain http on loopback (accepted as a test set-up)")
        else:
            yield failed(exchange, f"the {what} {url} is neither https nor loopback")
    if not urls:
        if use.endpoints:
            yield unverified(f"no authorization server URL or redirect URI appears in the traffic ({NOT_CAPTURED})")
        else:
            yield not_applicable(use.reason)


@log_check(requirements="AUTH-50", level=Level.MUST, subject="OpenID discovery documents", follows=ANY_AUTHORIZATION)
def openid_metadata_lists_pkce_methods(ctx: Context) -> Iterator[Finding]:
    """An authorization server's OpenID Connect discovery document includes `code_challenge_methods_supported`."""
    use = auth_use(ctx)
    documents = [doc for doc in metadata_documents(ctx) if doc.kind == "openid" and doc.body is not None]
    for doc in documents:
        methods = doc.body.get("code_challenge_methods_supported") if doc.body is not None else None
        if isinstance(methods, list) and methods:
            yield passed(doc.exchange)
        else:
            yield failed(doc.exchange, "the OpenID discovery document has no code_challenge_methods_supported")
    if not documents:
        if use.endpoints:
            yield unverified(
                "no OpenID Connect discovery document appears in the traffic (the suite does not fetch "
                f"authorization server metadata, and {NOT_CAPTURED})"
            )
        else:
            yield not_applicable(use.reason)
