"""Authorization probes (AUTH-): no credentials, bad credentials and misplaced credentials, over HTTP.

These need nothing but the target and whatever the run already authenticates with (``-t``); the
probes that need tokens minted for the target by a stub authorization server (audience, issuer,
signature, scope) are not here. In the order of a run:

1. a control request with the run's own credentials (``auth-control``), repeated after every group
   below, so a refusal is attributable (a server that refuses everything, or locked the run out,
   leaves the rules *not verified* rather than passed);
2. Protected Resource Metadata at the path-scoped and root well-known URIs, fetched without
   credentials (``auth-prm-path``, ``auth-prm-root``);
3. the protected request without credentials (``auth-no-token``; in a 2025 run inside the run's
   session, which also asks whether the session id is taken for a credential) and, in 2026,
   ``server/discover`` without credentials; then the ``resource_metadata`` URL its challenge names,
   if the suite may fetch it (https, or http on loopback; never a private or link-local address
   unless the target itself is one; redirects are not followed). A run that holds no credential the
   server takes (its sign-in failed) sends no controls and stops here: no refusal below could be
   attributed;
4. if the request without credentials was served and no PRM exists, the target does not implement
   authorization: a note says so and nothing else is sent (the rules find the AUTH items not
   applicable). If it was served but PRM exists, the method is public and the token probes are
   skipped, since no request the suite can build needs a token;
5. malformed credentials: a bare ``Bearer``, a non-JWT bearer string, ``Basic`` credentials, a
   garbage three-part token;
6. JWTs built locally without any key: unsigned (``alg: none``) and expired with a garbage signature;
7. the run's own token in the query string (``?access_token=``, ``?token=``, and next to a garbage
   ``Authorization``), only when the run has a bearer token of its own.

The run's own token is only ever sent to the target. Every case is a credential case of
:mod:`mcp_assay.cases.auth` (its :attr:`~mcp_assay.cases.Case.credential` says what it presents), sent
with the words for what it presents (``variant``); the rules in :mod:`mcp_assay.spec.rules.auth` judge
the answers.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcp_assay.cases import Case, Facts
from mcp_assay.cases import auth as cases
from mcp_assay.recording.redaction import SECRET_PARAMS
from mcp_assay.spec.rules.auth.facts import canonical_uri, challenges_of, prm_candidates, unsigned_jwt
from mcp_assay.suite.addresses import may_fetch
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.probes._lists import list_params
from mcp_assay.suite.transports import Reply, StreamControl
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.vocabulary.errors import TransportFailure
from mcp_assay.vocabulary.protocol import Header, HeaderKey, MediaType

__all__ = ["FAMILY", "Prober", "ask", "control", "may_fetch", "protected_method"]

NOT_A_JWT = "not-a-jwt"
GARBAGE = "bm90LWEtdG9rZW4.Z2FyYmFnZQ.c2lnbmF0dXJl"
"""Three base64url segments that decode to no JSON at all."""
BASIC = "Basic " + base64.b64encode(b"mcp-assay:not-a-password").decode("ascii")
ISSUER = "https://mcp-assay.invalid"
TOKEN_PROBES = cases.CONTROL.feeds
"""What the credential cases after the first group feed (the control brackets them)."""


def _without_secrets(url: str, credentials: Credentials) -> str:
    """The endpoint with credential-like query parameters removed."""
    parts = urlsplit(url)
    secret = SECRET_PARAMS | {credentials.auth_query_param.lower()}
    query = [
        (name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True) if name.lower() not in secret
    ]
    return urlunsplit(parts._replace(query=urlencode(query)))


class Prober:
    """Clients with other credentials than the run's, sharing its request ids and (2025) its session."""

    def __init__(self, ctx: SuiteContext) -> None:
        base = ctx.transport
        assert isinstance(base, HttpTransport)
        self.ctx = ctx
        self.base = base
        self.own = base.credentials
        self.endpoint = _without_secrets(base.endpoint, self.own)
        self.opened: list[HttpTransport] = []

    def transport(self, credentials: Credentials, url: str | None = None) -> HttpTransport:
        transport = self.base.fresh()
        transport.credentials = credentials
        transport.endpoint = url or self.endpoint
        transport.url = credentials.url(transport.endpoint)
        self.opened.append(transport)
        return transport

    def client(self, credentials: Credentials) -> ModernClient | LegacyClient:
        transport = self.transport(credentials)
        main = self.ctx.client
        if isinstance(main, ModernClient):
            client = ModernClient(transport, main.revision, ids=main.ids)
            client.tools = main.tools
            return client
        legacy = LegacyClient(transport, main.revision, ids=main.ids)
        legacy.session, legacy.negotiated = main.session, main.negotiated
        return legacy

    async def close(self) -> None:
        for transport in self.opened:
            await transport.close()


def protected_method(ctx: SuiteContext) -> str:
    """The protected request: a list of what the server offers (tools first)."""
    for capability, method in (("tools", "tools/list"), ("prompts", "prompts/list"), ("resources", "resources/list")):
        if ctx.advertises(capability) is not False:
            return method
    return "ping" if ctx.revision.has("ping") else "server/discover"


async def control(ctx: SuiteContext, method: str) -> Reply:
    return await ctx.client.request(
        method,
        list_params(ctx) if method.endswith("/list") else ({} if ctx.modern else None),
        probe=ctx.probe(cases.CONTROL),
        allow_refusal=True,
    )


async def ask(
    ctx: SuiteContext,
    client: ModernClient | LegacyClient,
    method: str,
    case: Case,
    intent: str,
    *,
    variant: str,
    authorization: str | None = None,
) -> Reply:
    params: dict[str, Any] | None = list_params(ctx) if method.endswith("/list") else ({} if ctx.modern else None)
    headers = {Header.AUTHORIZATION: authorization} if authorization is not None else None
    probe = ctx.probe(case, intent, facts=Facts(variant=variant))
    return await client.request(method, params, probe=probe, headers=headers, allow_refusal=True)


async def _fetch(ctx: SuiteContext, prober: Prober, url: str, kind: str) -> Reply | None:
    """``GET`` a metadata URL without any credential; a failure to connect is a note, not a finding."""
    transport = prober.transport(prober.own.anonymous(), url)
    probe = ctx.probe(cases.PRM_FETCHES[kind], f"Protected Resource Metadata ({kind}): 200 and a JSON object")
    try:
        return await transport.send(
            b"",
            probe=probe.at(ctx.revision.name),
            expect=None,
            headers={Header.ACCEPT: MediaType.JSON},
            method="GET",
            allow_refusal=True,
            stream=StreamControl(budget=ctx.short_timeout),
            timeout=min(ctx.config.timeout, 5.0),
        )
    except TransportFailure as exc:
        ctx.observe("note", detail=f"authorization: the {kind} metadata URL could not be fetched: {exc}")
        return None


def _prm_served(reply: Reply | None) -> bool:
    return reply is not None and reply.status == 200 and reply.content_type == MediaType.JSON


def _jwts(endpoint: str) -> Iterator[tuple[Case, str, str]]:
    """(case, variant, token) for tokens built here without any key; none may be accepted."""
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": canonical_uri(endpoint), "sub": "mcp-assay-probe", "iat": now}
    yield (
        cases.ALG_NONE,
        "an unsigned alg:none JWT",
        unsigned_jwt({**claims, "exp": now + 600}, {"alg": "none", "typ": "JWT"}),
    )
    yield (
        cases.EXPIRED_JWT,
        "an expired JWT with a garbage signature",
        unsigned_jwt(
            {**claims, "iat": now - 7200, "exp": now - 3600},
            {"alg": "RS256", "typ": "JWT", "kid": "mcp-assay-probe"},
            b"mcp-assay garbage signature",
        ),
    )


async def run(ctx: SuiteContext) -> None:
    prober = Prober(ctx)
    try:
        await _run(ctx, prober)
    finally:
        await prober.close()


async def _run(ctx: SuiteContext, prober: Prober) -> None:
    method = protected_method(ctx)
    anonymous = prober.client(prober.own.anonymous())
    if ctx.tokenless is None:  # a run without a credential of its own has nothing to control with
        await control(ctx, method)
    found = False
    fetched: set[str] = set()
    for kind, url in prm_candidates(prober.endpoint):
        fetched.add(url)
        found = _prm_served(await _fetch(ctx, prober, url, kind)) or found
    session = " inside the run's session" if isinstance(anonymous, LegacyClient) and anonymous.session else ""
    intent = f"{method} without credentials{session}: 401 with a Bearer challenge"
    first = await ask(ctx, anonymous, method, cases.NO_TOKEN, intent, variant="no credentials")
    if ctx.modern and method != "server/discover":
        await ask(
            ctx, anonymous, "server/discover", cases.NO_TOKEN_DISCOVER,
            "server/discover without credentials: 401, or served (allowed before a token)", variant="no credentials",
        )  # fmt: skip
    bearer = challenges_of(first.headers).bearer
    advertised = bearer.get("resource_metadata") if bearer is not None else None
    if advertised and advertised not in fetched:
        refusal = may_fetch(advertised, prober.endpoint)
        if refusal is None:
            found = _prm_served(await _fetch(ctx, prober, advertised, "header")) or found
        else:
            ctx.observe(
                "note", detail=f"authorization: the challenge's resource_metadata URL was not fetched ({refusal})"
            )
    if ctx.tokenless is not None and not first.ok:
        ctx.skip(
            f"not sent: {ctx.tokenless}, so a refused bad credential could not be told apart from a server that "
            "refuses everything",
            requirements=TOKEN_PROBES,
        )
        return
    await control(ctx, method)
    if first.ok:
        if not found:
            ctx.observe(
                "note",
                detail=f"authorization: the target does not implement it ({method} is served without credentials and "
                "no Protected Resource Metadata was found); the AUTH items do not apply",
            )
            return
        ctx.skip(
            f"{method} is served without credentials although Protected Resource Metadata exists, so no request the "
            "suite can build needs a token (the credential probes were not sent)",
            requirements=TOKEN_PROBES,
        )
        return
    await _malformed(ctx, anonymous, method)
    await control(ctx, method)
    for case, variant, token in _jwts(prober.endpoint):
        await ask(
            ctx, anonymous, method, case, f"{method} with {variant}: 401", variant=variant,
            authorization=f"Bearer {token}",
        )  # fmt: skip
    await control(ctx, method)
    await _query(ctx, prober, method)


async def _malformed(ctx: SuiteContext, client: ModernClient | LegacyClient, method: str) -> None:
    for case, value in (
        (cases.EMPTY_BEARER, "Bearer"),
        (cases.NOT_A_JWT, f"Bearer {NOT_A_JWT}"),
        (cases.BASIC, BASIC),
        (cases.GARBAGE_TOKEN, f"Bearer {GARBAGE}"),
    ):
        await ask(
            ctx, client, method, case, f"{method} with {case.sends}: {case.expects}", variant=case.sends,
            authorization=value,
        )  # fmt: skip


async def _query(ctx: SuiteContext, prober: Prober, method: str) -> None:
    own = prober.own
    if not own.token or own.auth_mode != "header" or own.auth_header.lower() != HeaderKey.AUTHORIZATION:
        ctx.skip(
            "the run has no bearer token of its own in the Authorization header (-t), so a token in the query "
            "string cannot be tried",
            requirements=cases.QUERY_TOKEN.feeds,
        )
        return
    bare = own.anonymous()
    for case, parameter, authorization in (
        (cases.QUERY_ACCESS_TOKEN, "access_token", None),
        (cases.QUERY_TOKEN, "token", None),
        (cases.QUERY_WITH_GARBAGE_HEADER, "access_token", f"Bearer {NOT_A_JWT}"),
    ):
        credentials = Credentials(token=own.token, auth_mode="query", auth_query_param=parameter, headers=bare.headers)
        client = prober.client(credentials)
        # the rules compare the garbage-header case with the same header alone (its case's ``alone``)
        await ask(
            ctx, client, method, case, f"{method} with {case.sends}: refused (401), MCP forbids query tokens",
            variant=case.sends, authorization=authorization,
        )  # fmt: skip
    await control(ctx, method)


FAMILY = ProbeFamily(
    name="auth",
    cases=cases.CASES,
    run=run,
    transports=frozenset({"http"}),
    description="authorization: metadata discovery, challenges, missing, malformed and query-string credentials",
)
