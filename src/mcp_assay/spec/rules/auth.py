"""Authorization (AUTH-): what an HTTP server's OAuth resource-server side shows on the wire.

Authorization is optional in MCP, so every rule here first asks whether the traffic shows it in
use at an endpoint: a ``401``, a ``403`` with a ``Bearer`` challenge, or a Protected Resource
Metadata (PRM) document published for its origin (client-side rules: a client presenting a bearer
token). Where none of that appears the requirement is *not applicable*, with the reason — an
HTTP server that serves ``tools/list`` to anyone and publishes no PRM does not implement
authorization, and is not failed for it.

The rules judge answers whatever sent the request: a real client seen by the proxy, or the
active suite's ``auth-*`` probes (``mcp_assay.suite.probes.auth``), whose tag says which
credential they carry (``credential``: ``none``, ``malformed``, ``invalid``, ``query``). A probe's
*refusal* counts only when the suite's control requests (``auth-control``, sent with the run's own
credentials) on both sides of it were served; otherwise a server that refuses everything, or
locked the run out, would pass. Being *served* with a bad credential needs no control.

Tokens never appear in a finding: a token is named by :func:`~mcp_assay.redaction.fingerprint`,
and the engine scrubs every credential the traffic carried from evidence.
"""

from __future__ import annotations

import json
import re
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

from mcp_assay.checks import Context, Finding, failed, log_check, not_applicable, passed, unverified
from mcp_assay.jsonrpc import Kind, Message
from mcp_assay.redaction import REDACTED, fingerprint
from mcp_assay.spec.rules._auth import (
    AS_METADATA_MARKERS,
    PRM_PATH,
    Challenge,
    Challenges,
    canonical_uri,
    challenges_of,
    is_loopback_host,
    jwt_claims,
    jwt_shaped,
    presented,
    prm_candidates,
    prm_kind,
)
from mcp_assay.traffic import ExchangeLog, endpoint_of
from mcp_assay.verdicts import Level, Side
from mcp_assay.wire import HttpExchange, is_well_known, media_type

__all__ = ["AuthUse", "auth_use", "metadata_documents"]

HTTP = {"transports": {"http"}}
CONTROL = "auth-control"
"""Probe name of the suite's control requests (the run's own credentials)."""
PUBLIC_METHODS = frozenset({"server/discover", "initialize"})
"""Methods a client may need before it holds a token: served anonymously, they are only noted (AUTH-29)."""
OMNIBUS_SCOPES = frozenset({"*", "all", "full-access", "full_access"})
RFC6750_ERRORS = frozenset({"invalid_request", "invalid_token", "insufficient_scope"})
EXPIRY_SKEW = 60.0
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
NOT_CAPTURED = "the proxy records only MCP traffic, so a client's own metadata fetches are not captured"


# == what the traffic shows ========================================================================
_MEMO: weakref.WeakKeyDictionary[ExchangeLog, dict[str, tuple[int, Any]]] = weakref.WeakKeyDictionary()


def _memo[T](ctx: Context, key: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per log and length: every AUTH rule asks the same questions of the same log."""
    entries = _MEMO.setdefault(ctx.log, {})
    cached = entries.get(key)
    if cached is None or cached[0] != len(ctx.log):
        cached = (len(ctx.log), compute())
        entries[key] = cached
    return cast(T, cached[1])


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def _mcp_endpoints(ctx: Context) -> list[str]:
    """Endpoints that carried MCP messages, in order of first appearance."""
    seen: dict[str, None] = {}
    for exchange in ctx.log.http_exchanges():
        if exchange.messages and not is_well_known(exchange.request):
            seen.setdefault(endpoint_of(exchange), None)
    return list(seen)


def _json_object(exchange: HttpExchange) -> dict[str, Any] | None:
    response = exchange.response
    if response is None or response.body is None:
        return None
    try:
        value = json.loads(response.body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class Document:
    """A metadata document fetch: the exchange, what kind it is, and the JSON object when one was served."""

    exchange: HttpExchange
    kind: str
    """``path``, ``root`` or ``header`` (PRM), ``oauth`` or ``openid`` (authorization server metadata)."""
    body: dict[str, Any] | None
    """The JSON object, when the answer was 200 with the JSON media type and an object body (else ``None``)."""

    @property
    def url(self) -> str:
        return self.exchange.request.url

    @property
    def status(self) -> int | None:
        return self.exchange.response.status if self.exchange.response is not None else None

    def problem(self) -> str | None:
        """Why this is not a served document (``None`` when it is)."""
        response = self.exchange.response
        if response is None:
            return "got no answer"
        if response.status != 200:
            return f"answered HTTP {response.status}"
        if response.content_type != "application/json":
            return (
                f"answered with Content-Type {response.headers.get('content-type') or '(none)'}, not application/json"
            )
        if self.body is None:
            return "answered with a body that is not a JSON object"
        return None


def _challenged_metadata_urls(ctx: Context) -> dict[str, HttpExchange]:
    """``resource_metadata`` URLs named by Bearer challenges, with the first exchange naming each."""
    return _memo(ctx, "challenged", lambda: _find_challenged(ctx))


def _find_challenged(ctx: Context) -> dict[str, HttpExchange]:
    urls: dict[str, HttpExchange] = {}
    for exchange in ctx.log.http_exchanges():
        if exchange.response is None:
            continue
        bearer = challenges_of(exchange.response.headers).bearer
        url = bearer.get("resource_metadata") if bearer is not None else None
        if url:
            urls.setdefault(url, exchange)
    return urls


def metadata_documents(ctx: Context) -> list[Document]:
    """Every PRM and authorization server metadata fetch in the log (``GET``/``HEAD``)."""
    return _memo(ctx, "documents", lambda: _find_documents(ctx))


def _find_documents(ctx: Context) -> list[Document]:
    named = _challenged_metadata_urls(ctx)
    documents = []
    for exchange in ctx.log.http_exchanges():
        request = exchange.request
        if request.method not in ("GET", "HEAD"):
            continue
        path = urlsplit(request.url).path
        kind = prm_kind(request.url)
        if kind is None and request.url in named:
            kind = "header"
        elif kind is None and AS_METADATA_MARKERS[0] in path:
            kind = "oauth"
        elif kind is None and AS_METADATA_MARKERS[1] in path:
            kind = "openid"
        if kind is not None:
            response = exchange.response
            shown = response is not None and response.status == 200 and response.content_type == "application/json"
            documents.append(Document(exchange, kind, _json_object(exchange) if shown else None))
    return documents


def _prm_documents(ctx: Context, *, served: bool = True) -> list[Document]:
    return [
        doc
        for doc in metadata_documents(ctx)
        if doc.kind in ("path", "root", "header") and (not served or doc.problem() is None)
    ]


def _served(exchange: HttpExchange) -> bool:
    """Answered 2xx with a JSON-RPC result."""
    response = exchange.response
    return (
        response is not None
        and 200 <= response.status < 300
        and any(message.kind is Kind.RESULT for message in exchange.response_messages)
    )


def _answered_2xx(exchange: HttpExchange) -> bool:
    return exchange.response is not None and 200 <= exchange.response.status < 300


@dataclass(frozen=True)
class AuthUse:
    """Where the traffic shows authorization in use, and if nowhere, why the AUTH items do not apply."""

    endpoints: Mapping[str, str] = field(default_factory=dict)
    """Endpoint -> the first sign of authorization seen for it."""
    reason: str = ""

    def __contains__(self, endpoint: object) -> bool:
        return endpoint in self.endpoints


def auth_use(ctx: Context) -> AuthUse:
    """Endpoints where the *server* shows authorization in use: a 401, a 403 with a Bearer challenge, or PRM."""
    return _memo(ctx, "use", lambda: _find_use(ctx))


def _find_use(ctx: Context) -> AuthUse:
    endpoints: dict[str, str] = {}
    for exchange in ctx.log.http_exchanges():
        response = exchange.response
        if response is None or is_well_known(exchange.request):
            continue
        endpoint = endpoint_of(exchange)
        if response.status == 401:
            endpoints.setdefault(endpoint, f"{exchange.request.method} {exchange.request.path} got HTTP 401")
        elif response.status == 403 and challenges_of(response.headers).bearer is not None:
            endpoints.setdefault(endpoint, f"{exchange.request.method} {exchange.request.path} got a Bearer 403")
    published = {_origin(doc.url) for doc in _prm_documents(ctx)}
    for endpoint in _mcp_endpoints(ctx):
        if _origin(endpoint) in published:
            endpoints.setdefault(endpoint, "Protected Resource Metadata is published for its origin")
    if endpoints:
        return AuthUse(endpoints)
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is not None and request.kind is Kind.REQUEST and presented(exchange.request).anonymous:
            if _served(exchange):
                return AuthUse(
                    {},
                    f"authorization is not in use: {endpoint_of(exchange)} served {request.method} without "
                    "credentials, and no Protected Resource Metadata was found",
                )
    return AuthUse(
        {},
        "the traffic shows no authorization in use: no 401, no Bearer challenge and no Protected Resource Metadata",
    )


def _client_tokens(ctx: Context) -> set[str]:
    """Endpoints a client presented a non-empty bearer token to (probes marked invalid left out)."""
    endpoints = set()
    for exchange in ctx.log.http_exchanges():
        if _deliberate(exchange):
            continue
        if presented(exchange.request).bearer:
            endpoints.add(endpoint_of(exchange))
    return endpoints


def _deliberate(exchange: HttpExchange) -> bool:
    """Sent malformed or without credentials on purpose by the active suite."""
    return bool(exchange.probe and exchange.probe.get("invalid"))


def _credential_tag(exchange: HttpExchange) -> str | None:
    probe = exchange.probe or {}
    name = str(probe.get("name", ""))
    if not name.startswith("auth-"):
        return None
    value = probe.get("credential")
    return str(value) if value is not None else None


def _http_exchanges(ctx: Context) -> Iterator[HttpExchange]:
    """HTTP exchanges that pass the running check's gates."""
    for exchange in ctx.exchanges():
        if isinstance(exchange, HttpExchange):
            yield exchange


def _requests_at(ctx: Context, use: AuthUse) -> Iterator[tuple[HttpExchange, Message]]:
    """JSON-RPC requests to endpoints where authorization is in use, with their exchange."""
    for exchange in _http_exchanges(ctx):
        request = exchange.request_message
        if request is None or request.kind is not Kind.REQUEST or exchange.response is None:
            continue
        if endpoint_of(exchange) in use:
            yield exchange, request


# == bracketing ===================================================================================
def _controls(ctx: Context) -> list[HttpExchange]:
    return [item for item in ctx.log.http_exchanges() if (item.probe or {}).get("name") == CONTROL]


def _unattributable(exchange: HttpExchange, ctx: Context) -> str | None:
    """For a suite probe: why its refusal says nothing (no served control on both sides); ``None`` if it does."""
    probe = exchange.probe or {}
    name = str(probe.get("name", ""))
    if not name.startswith("auth-") or name == CONTROL:
        return None
    controls = _controls(ctx)
    sent = exchange.request.time
    before = [item for item in controls if item.request.time < sent]
    after = [item for item in controls if item.request.time > sent]
    if not before or not after:
        return (
            "no control request with the run's own credentials on both sides of this probe, so its refusal "
            "cannot be told apart from a server that refuses everything"
        )
    for control in (before[-1], after[0]):
        if not _served(control):
            status = control.response.status if control.response is not None else "no answer"
            return (
                f"the control request with the run's own credentials got HTTP {status} next to this probe "
                "(lockout, rate limit or an expired token?), so its refusal is not attributable"
            )
    return None


def _refused(exchange: HttpExchange, ctx: Context, subject: Message | HttpExchange, detail: str) -> Finding:
    """A pass for a refusal, unless the probe's controls were not served."""
    why = _unattributable(exchange, ctx)
    return unverified(why, subject) if why is not None else passed(subject, detail)


def _variant(exchange: HttpExchange, default: str) -> str:
    """What a suite probe sent (its ``variant`` tag), for findings."""
    probe: Mapping[str, Any] = exchange.probe or {}
    return str(probe.get("variant") or default)


def _status(exchange: HttpExchange) -> int:
    return exchange.response.status if exchange.response is not None else 0


def _rejected_in_jsonrpc(exchange: HttpExchange) -> bool:
    return _answered_2xx(exchange) and any(m.kind is Kind.ERROR for m in exchange.response_messages)


# == A. Protected Resource Metadata ================================================================
def _home(doc: Document, ctx: Context) -> str:
    """The origin a PRM fetch speaks for: its own, or for a challenge's URL the challenging endpoint's."""
    challenge = _challenged_metadata_urls(ctx).get(doc.url) if doc.kind == "header" else None
    return _origin(challenge.request.url if challenge is not None else doc.url)


def _prm_subjects(ctx: Context, *, served: bool = True) -> tuple[AuthUse, list[Document], Finding | None]:
    """The PRM fetches for origins where authorization is in use, or the finding that says why there are none.

    With ``served``, a log whose fetches all failed is not verified, blocked by AUTH-01."""
    use = auth_use(ctx)
    if not use.endpoints:
        return use, [], not_applicable(use.reason)
    origins = {_origin(endpoint) for endpoint in use.endpoints}
    documents = [doc for doc in _prm_documents(ctx, served=False) if _home(doc, ctx) in origins]
    if not documents:
        return use, [], unverified(f"no Protected Resource Metadata was fetched in the traffic ({NOT_CAPTURED})")
    if served and not any(doc.problem() is None for doc in documents):
        return use, [], unverified("no PRM URL served the document", blocked_by="AUTH-01")
    return use, documents, None


@log_check(requirements="AUTH-01", level=Level.MUST, side=Side.SERVER, subject="metadata fetches", **HTTP)
def protected_resource_metadata_is_served(ctx: Context) -> Iterator[Finding]:
    """A protected server serves its Protected Resource Metadata: 200, application/json, a JSON object.

    Triggered by a ``GET`` of the path-scoped or root ``/.well-known/oauth-protected-resource`` URI or
    of a challenge's ``resource_metadata`` URL (the suite fetches all three). One candidate serving it
    is enough; a ``200`` that is not a JSON object fails."""
    _use, documents, reason = _prm_subjects(ctx, served=False)
    if reason is not None:
        yield reason
        return
    by_origin: dict[str, list[Document]] = defaultdict(list)
    for doc in documents:
        by_origin[_home(doc, ctx)].append(doc)
    for origin, docs in by_origin.items():
        good = [doc for doc in docs if doc.problem() is None]
        for doc in docs:
            problem = doc.problem()
            if problem is None:
                yield passed(doc.exchange, f"the {doc.kind} PRM URL serves the document")
            elif doc.status == 200:
                yield failed(doc.exchange, f"the {doc.kind} PRM URL {urlsplit(doc.url).path} {problem}")
        if not good:
            tried = ", ".join(f"{doc.kind} {urlsplit(doc.url).path}: {doc.problem()}" for doc in docs)
            yield failed(docs[0].exchange, f"no PRM URL of {origin} serves the document ({tried})")


@log_check(requirements="AUTH-02", level=Level.MUST, side=Side.SERVER, subject="metadata documents", **HTTP)
def protected_resource_metadata_names_authorization_servers(ctx: Context) -> Iterator[Finding]:
    """The PRM document lists at least one authorization server issuer URL in `authorization_servers`."""
    _use, documents, reason = _prm_subjects(ctx)
    if reason is not None:
        yield reason
        return
    for doc in documents:
        if doc.body is None:
            continue
        servers = doc.body.get("authorization_servers")
        if servers is None and "authorization_server" in doc.body:
            yield failed(
                doc.exchange, "the PRM has a singular authorization_server instead of the authorization_servers array"
            )
        elif not isinstance(servers, list) or not servers:
            shown = "missing" if servers is None else json.dumps(servers)[:80]
            yield failed(doc.exchange, f"authorization_servers is {shown}, not an array with at least one issuer URL")
        else:
            bad = [item for item in servers if not _issuer_url(item)]
            if bad:
                yield failed(
                    doc.exchange,
                    f"authorization_servers holds values that are not issuer URLs: {json.dumps(bad)[:120]}",
                )
            else:
                yield passed(doc.exchange)


def _issuer_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not parts.query and not parts.fragment


def _described_endpoints(doc: Document, use: AuthUse, ctx: Context) -> list[str]:
    """The endpoint(s) a PRM document speaks for: from a path-scoped URL itself, the endpoint whose challenge
    named it, else every protected endpoint of its origin."""
    if doc.kind == "path":
        parts = urlsplit(doc.url)
        return [f"{parts.scheme}://{parts.netloc}{parts.path[len(PRM_PATH) :]}"]
    challenge = _challenged_metadata_urls(ctx).get(doc.url) if doc.kind == "header" else None
    if challenge is not None:
        return [endpoint_of(challenge)]
    return [endpoint for endpoint in use.endpoints if _origin(endpoint) == _origin(doc.url)]


@log_check(requirements="AUTH-03", level=Level.MUST, side=Side.SERVER, subject="metadata documents", **HTTP)
def protected_resource_metadata_names_this_server(ctx: Context) -> Iterator[Finding]:
    """The PRM `resource` is this server's canonical URI (a path prefix of it for root or header discovery).

    Compared in canonical form (case of scheme and host, default port and a trailing slash aside);
    a document fetched from the path-scoped URI must name that endpoint exactly."""
    use, documents, reason = _prm_subjects(ctx)
    if reason is not None:
        yield reason
        return
    for doc in documents:
        if doc.body is None:
            continue
        resource = doc.body.get("resource")
        if not isinstance(resource, str) or not resource:
            yield failed(doc.exchange, "the PRM has no resource string")
            continue
        if urlsplit(resource).fragment or "#" in resource:
            yield failed(doc.exchange, f"the PRM resource {resource!r} carries a fragment")
            continue
        for endpoint in _described_endpoints(doc, use, ctx):
            mine, theirs = canonical_uri(endpoint), canonical_uri(resource)
            if mine == theirs:
                yield passed(doc.exchange, f"resource names {endpoint}")
            elif doc.kind != "path" and (mine.startswith(theirs + "/") or mine == theirs):
                yield passed(
                    doc.exchange, f"resource {resource!r} is a path prefix of {endpoint} ({doc.kind} discovery)"
                )
            else:
                yield failed(
                    doc.exchange, f"the {doc.kind} PRM names resource {resource!r}, which does not identify {endpoint}"
                )


@log_check(requirements="AUTH-03", level=Level.SHOULD, side=Side.SERVER, subject="metadata documents", **HTTP)
def protected_resource_metadata_uses_the_canonical_form(ctx: Context) -> Iterator[Finding]:
    """The PRM `resource` is written in canonical form: lowercase scheme and host, no query, no stray trailing slash."""
    use, documents, reason = _prm_subjects(ctx)
    if reason is not None:
        yield reason
        return
    for doc in documents:
        resource = doc.body.get("resource") if doc.body is not None else None
        if not isinstance(resource, str) or not resource:
            continue
        parts = urlsplit(resource)
        problems = []
        head = resource[: resource.find(parts.netloc) + len(parts.netloc)] if parts.netloc else resource
        if head != head.lower():
            problems.append("uppercase letters in the scheme or host")
        if parts.query:
            problems.append("a query")
        endpoints = _described_endpoints(doc, use, ctx)
        if parts.path.endswith("/") and not any(urlsplit(item).path.endswith("/") for item in endpoints):
            problems.append("a trailing slash the endpoint does not have")
        if problems:
            yield failed(doc.exchange, f"the PRM resource {resource!r} has {', '.join(problems)}")
        else:
            yield passed(doc.exchange)


def _challenge_exchanges(ctx: Context) -> Iterator[tuple[HttpExchange, Challenges]]:
    """Exchanges answered 401, or 403 with a challenge, with their parsed challenges."""
    for exchange in _http_exchanges(ctx):
        response = exchange.response
        if response is None or response.status not in (401, 403):
            continue
        parsed = challenges_of(response.headers)
        if response.status == 403 and not parsed.fields and not _mentions_scope(exchange):
            continue
        yield exchange, parsed


def _mentions_scope(exchange: HttpExchange) -> bool:
    body = exchange.response.body if exchange.response is not None else None
    return b"insufficient_scope" in (body or b"")


@log_check(requirements="AUTH-04", level=Level.MUST, side=Side.SERVER, subject="protected endpoints", **HTTP)
def protected_resource_metadata_is_discoverable(ctx: Context) -> Iterator[Finding]:
    """A protected server names its PRM in the 401 challenge (`resource_metadata`) or serves it at a well-known URI.

    Failed only when the 401 challenges name no ``resource_metadata`` and both well-known URIs were
    tried without success; having just one of the two is fine (clients rely on the header)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    served = {doc.url: doc for doc in _prm_documents(ctx)}
    tried = {doc.url: doc for doc in _prm_documents(ctx, served=False)}
    for endpoint in use.endpoints:
        refusals = [
            (exchange, parsed)
            for exchange, parsed in _challenge_exchanges(ctx)
            if endpoint_of(exchange) == endpoint and _status(exchange) == 401
        ]
        header = [exchange for exchange, parsed in refusals if parsed.bearer and parsed.bearer.get("resource_metadata")]
        candidates = prm_candidates(endpoint)
        wellknown = [kind for kind, url in candidates if url in served]
        if header or wellknown:
            ways = []
            if header:
                ways.append("the challenge's resource_metadata")
            ways.extend(f"the {kind} well-known URI" for kind in wellknown)
            shown = header[0] if header else served[dict(candidates)[wellknown[0]]].exchange
            yield passed(shown, f"{endpoint}: PRM discoverable through {' and '.join(ways)}")
        elif refusals and all(url in tried for _kind, url in candidates):
            statuses = ", ".join(f"{kind}: {tried[url].problem()}" for kind, url in candidates)
            yield failed(
                refusals[0][0],
                f"{endpoint}: the 401 challenge names no resource_metadata and no well-known URI serves PRM "
                f"({statuses})",
            )
        else:
            subject = refusals[0][0] if refusals else None
            yield unverified(
                f"{endpoint}: the 401 challenges name no resource_metadata and the well-known URIs were not both "
                f"fetched ({NOT_CAPTURED})",
                subject,
            )


@log_check(requirements="AUTH-05", level=Level.MUST, side=Side.SERVER, subject="advertised metadata URLs", **HTTP)
def advertised_resource_metadata_resolves(ctx: Context) -> Iterator[Finding]:
    """The `resource_metadata` URL a challenge advertises serves the PRM document (a dangling URL breaks clients)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    fetches = metadata_documents(ctx)
    for url, challenge in _challenged_metadata_urls(ctx).items():
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            yield failed(challenge, f"the challenge's resource_metadata {url!r} is not an absolute http(s) URL")
            continue
        mine = [doc for doc in fetches if doc.url == url]
        if not mine:
            yield unverified(f"the resource_metadata URL {parts.path} was not fetched in the traffic", challenge)
            continue
        problem = mine[-1].problem()
        if problem is None:
            yield passed(mine[-1].exchange, f"resource_metadata {parts.path} serves the PRM")
        else:
            yield failed(mine[-1].exchange, f"the challenge's resource_metadata URL {parts.path} {problem}")


def _scopes(value: Any) -> list[str]:
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    if isinstance(value, str):
        return value.split()
    return []


@log_check(requirements="AUTH-06", level=Level.SHOULD_NOT, side=Side.SERVER, subject="advertised scopes", **HTTP)
def resource_server_does_not_advertise_offline_access(ctx: Context) -> Iterator[Finding]:
    """The resource server advertises no `offline_access` scope, in PRM `scopes_supported` or a challenge `scope`."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for doc in _prm_documents(ctx):
        if doc.body is None:
            continue
        if "offline_access" in _scopes(doc.body.get("scopes_supported")):
            yield failed(doc.exchange, "PRM scopes_supported lists offline_access")
        else:
            yield passed(doc.exchange)
    for exchange, parsed in _challenge_exchanges(ctx):
        scope = parsed.bearer.get("scope") if parsed.bearer is not None else None
        if scope is None:
            continue
        if "offline_access" in scope.split():
            yield failed(exchange, "the challenge scope names offline_access")
        else:
            yield passed(exchange)


@log_check(requirements="AUTH-07", level=Level.SHOULD, side=Side.SERVER, subject="metadata documents", **HTTP)
def protected_resource_metadata_offers_no_query_tokens(ctx: Context) -> Iterator[Finding]:
    """PRM `bearer_methods_supported`, when present, leaves out `query` (policy: MCP forbids tokens in URIs)."""
    _use, documents, reason = _prm_subjects(ctx)
    if reason is not None:
        yield reason
        return
    for doc in documents:
        if doc.body is None:
            continue
        methods = doc.body.get("bearer_methods_supported")
        if isinstance(methods, list) and "query" in methods:
            yield failed(doc.exchange, "PRM bearer_methods_supported offers query")
        else:
            yield passed(doc.exchange)


@log_check(requirements="AUTH-08", level=Level.MAY, side=Side.SERVER, subject="metadata documents", **HTTP)
def protected_resource_metadata_avoids_omnibus_scopes(ctx: Context) -> Iterator[Finding]:
    """PRM `scopes_supported` avoids catch-all scopes such as `*`, `all` or `full-access` (advisory)."""
    _use, documents, reason = _prm_subjects(ctx)
    if reason is not None:
        yield reason
        return
    for doc in documents:
        if doc.body is None:
            continue
        listed = _scopes(doc.body.get("scopes_supported"))
        broad = sorted(OMNIBUS_SCOPES.intersection(item.lower() for item in listed))
        if broad:
            yield failed(doc.exchange, f"scopes_supported offers catch-all scopes {broad}")
        else:
            yield passed(doc.exchange)


# == B. Challenges and status codes ================================================================
@log_check(requirements="AUTH-09", level=Level.MUST, side=Side.SERVER, subject="unauthenticated requests", **HTTP)
def unauthenticated_requests_get_401(ctx: Context) -> Iterator[Finding]:
    """A protected endpoint answers a request that carries no credentials at all with 401.

    Triggered by any JSON-RPC request without ``Authorization``, token-like query parameter, API key
    or cookie (the suite's ``auth-no-token`` probe). A served (2xx) request means the method is
    public (AUTH-29 judges that); a 403 to a request with an ``Origin`` is an Origin refusal, and a
    404/400 to one carrying a session id is judged by AUTH-32."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    public = 0
    for exchange, request in _requests_at(ctx, use):
        if not presented(exchange.request).anonymous:
            continue
        status = _status(exchange)
        headers = exchange.request.headers
        if status == 401:
            yield _refused(exchange, ctx, request, f"{request.method} without credentials got 401")
        elif 200 <= status < 300:
            public += 1
        elif status == 403 and headers.get("origin") is not None:
            continue
        elif status in (400, 404) and headers.get("mcp-session-id") is not None:
            continue
        else:
            yield failed(request, f"{request.method} without credentials got HTTP {status}, not 401")
    if public:
        yield unverified(f"{public} unauthenticated request(s) were served: those methods are public (see AUTH-29)")


@log_check(requirements="AUTH-10", level=Level.MUST, side=Side.SERVER, subject="401 and scope 403 answers", **HTTP)
def refusals_carry_a_bearer_challenge(ctx: Context) -> Iterator[Finding]:
    """Every 401, and every 403 for missing scope, carries `WWW-Authenticate` with a `Bearer` challenge."""
    use = auth_use(ctx)
    found = False
    for exchange, parsed in _challenge_exchanges(ctx):
        found = True
        status = _status(exchange)
        if not parsed.fields:
            yield failed(exchange, f"HTTP {status} without a WWW-Authenticate challenge")
        elif parsed.bearer is None:
            schemes = ", ".join(parsed.schemes()) or "nothing readable"
            extra = f" ({'; '.join(parsed.problems)})" if parsed.problems else ""
            yield failed(exchange, f"HTTP {status} challenges with {schemes}, no Bearer challenge{extra}")
        else:
            yield passed(exchange)
    if not found and not use.endpoints:
        yield not_applicable(use.reason)


def _bearer_401s(ctx: Context) -> Iterator[tuple[HttpExchange, Challenge | None]]:
    """401 answers with their Bearer challenge; once ``(first 401, None)`` when none of them has one."""
    bare: HttpExchange | None = None
    found = False
    for exchange, parsed in _challenge_exchanges(ctx):
        if _status(exchange) != 401:
            continue
        if parsed.bearer is None:
            bare = bare or exchange
            continue
        found = True
        yield exchange, parsed.bearer
    if not found and bare is not None:
        yield bare, None


@log_check(requirements="AUTH-11", level=Level.SHOULD, side=Side.SERVER, subject="401 challenges", **HTTP)
def unauthorized_challenges_name_scopes(ctx: Context) -> Iterator[Finding]:
    """The Bearer challenge of a 401 names the scopes needed in a `scope` parameter."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, bearer in _bearer_401s(ctx):
        if bearer is None:
            yield unverified("the 401 answers carry no Bearer challenge to read", exchange, blocked_by="AUTH-10")
        elif (bearer.get("scope") or "").strip():
            yield passed(exchange)
        else:
            yield failed(exchange, "the 401 Bearer challenge has no scope parameter")


@log_check(requirements="AUTH-12", level=Level.SHOULD, side=Side.SERVER, subject="Bearer challenges", **HTTP)
def challenge_error_codes_follow_rfc_6750(ctx: Context) -> Iterator[Finding]:
    """Challenge `error` codes follow RFC 6750: none without credentials, `invalid_token` for a refused token.

    A ``403``'s ``insufficient_scope`` belongs to AUTH-14 and is not judged here."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, bearer in _bearer_401s(ctx):
        if bearer is None:
            yield unverified("the 401 answers carry no Bearer challenge to read", exchange, blocked_by="AUTH-10")
            continue
        error = bearer.get("error")
        credentials = presented(exchange.request)
        if error is not None and error not in RFC6750_ERRORS:
            yield failed(exchange, f"the challenge uses error={error!r}, which RFC 6750 does not define")
        elif credentials.anonymous:
            if error is None:
                yield passed(exchange)
            else:
                yield failed(exchange, f"a request without credentials got a challenge with error={error!r}")
        elif credentials.bearer:
            if error in ("invalid_token", "invalid_request"):
                yield passed(exchange)
            else:
                yield failed(exchange, 'a refused bearer token got a challenge without error="invalid_token"')
        else:
            yield passed(exchange)


@log_check(requirements="AUTH-14", level=Level.SHOULD, side=Side.SERVER, subject="scope refusals", **HTTP)
def scope_refusals_carry_a_complete_challenge(ctx: Context) -> Iterator[Finding]:
    """A 403 for missing scope challenges with `error="insufficient_scope"`, `scope` and `resource_metadata`.

    Judged on every 403 that carries a Bearer challenge or names ``insufficient_scope``; the suite
    cannot provoke one without a token lacking scope (which needs a stub authorization server)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, parsed in _challenge_exchanges(ctx):
        if _status(exchange) != 403 or endpoint_of(exchange) not in use:
            continue
        bearer = parsed.bearer
        if bearer is None:
            yield failed(exchange, "the scope refusal carries no Bearer challenge")
            continue
        missing = [name for name in ("scope", "resource_metadata") if not (bearer.get(name) or "").strip()]
        if bearer.get("error") != "insufficient_scope":
            missing.insert(0, 'error="insufficient_scope"')
        if missing:
            yield failed(exchange, f"the 403 challenge lacks {', '.join(missing)}")
        else:
            yield passed(exchange)


# == C. Token validation ==========================================================================
def _expired_when_sent(token: str, exchange: HttpExchange) -> bool:
    claims = jwt_claims(token)
    expiry = claims.get("exp") if claims is not None else None
    return isinstance(expiry, int | float) and not isinstance(expiry, bool) and expiry < exchange.time - EXPIRY_SKEW


def _refused_token(exchange: HttpExchange) -> bool:
    response = exchange.response
    if response is None:
        return False
    bearer = challenges_of(response.headers).bearer
    return response.status == 401 or (bearer is not None and bearer.get("error") == "invalid_token")


@log_check(requirements="AUTH-13", level=Level.MUST, side=Side.SERVER, subject="requests with invalid tokens", **HTTP)
def invalid_tokens_get_401(ctx: Context) -> Iterator[Finding]:
    """A request presenting an invalid or expired bearer token is answered 401.

    Triggered by the suite's invalid-token probes (a non-JWT bearer string, a garbage three-part
    string, an unsigned ``alg: none`` JWT, an expired JWT), by a bearer token the server answered
    with ``error="invalid_token"``, and by a JWT whose ``exp`` had passed when it was sent."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, request in _requests_at(ctx, use):
        token = presented(exchange.request).bearer
        if not token:
            continue
        tag = _credential_tag(exchange)
        if exchange.probe is not None and tag not in ("malformed", "invalid"):
            continue  # the suite's other requests carry the run's own token, which is not on trial here
        expired = _expired_when_sent(token, exchange)
        if tag not in ("malformed", "invalid") and not expired and not _refused_token(exchange):
            continue
        status = _status(exchange)
        if tag is not None:
            what = f"an invalid token ({_variant(exchange, tag)})"
        elif expired:
            what = f"the expired JWT {fingerprint(token)}"
        else:
            what = f"the token {fingerprint(token)}"
        if status == 401:
            yield _refused(exchange, ctx, request, f"{what} got 401")
        elif _served(exchange):
            yield failed(request, f"{request.method} with {what} was served")
        else:
            yield failed(request, f"{request.method} with {what} got HTTP {status}, not 401")


@log_check(
    requirements="AUTH-20", level=Level.MUST, side=Side.SERVER, subject="requests with malformed credentials", **HTTP
)
def malformed_credentials_are_not_served(ctx: Context) -> Iterator[Finding]:
    """Malformed credentials (a non-JWT or empty bearer, Basic auth, a garbage token) are never served.

    Triggered by the suite's ``auth-*`` probes tagged ``credential: malformed`` and by any request
    with a bare ``Authorization: Bearer``. 401 is expected; 400/403/404 or a JSON-RPC error still
    refuse; a 5xx is a failure (the server broke instead of refusing)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, request in _requests_at(ctx, use):
        credentials = presented(exchange.request)
        tag = _credential_tag(exchange)
        if tag != "malformed" and credentials.bearer != "":
            continue
        variant = _variant(exchange, "an empty bearer token")
        status = _status(exchange)
        if _served(exchange):
            yield failed(request, f"{request.method} with {variant} was served")
        elif status >= 500:
            yield failed(request, f"{request.method} with {variant} broke the server (HTTP {status})")
        elif status == 401:
            yield _refused(exchange, ctx, request, f"{variant}: 401")
        elif _rejected_in_jsonrpc(exchange):
            yield _refused(exchange, ctx, request, f"{variant}: refused at the JSON-RPC layer (HTTP {status})")
        else:
            yield _refused(exchange, ctx, request, f"{variant}: refused with HTTP {status} (401 expected)")


# == E. query tokens, anonymous access ==========================================================
def _refused_without_query(ctx: Context, like: HttpExchange, method: str | None) -> bool | None:
    """Whether a request like ``like`` (same endpoint, method and ``Authorization``, or none) but without
    query-string credentials was refused (True) or served (False); ``None`` when there was none.

    A suite probe names its counterpart in its ``alone`` tag (a recording has the garbage header redacted,
    so its value cannot be compared there)."""
    endpoint, authorization = endpoint_of(like), like.request.headers.get("authorization")
    alone = (like.probe or {}).get("alone")
    verdict: bool | None = None
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is None or request.method != method or endpoint_of(exchange) != endpoint:
            continue
        credentials = presented(exchange.request)
        if alone is not None:
            if (exchange.probe or {}).get("name") != alone:
                continue
        elif credentials.query or credentials.other or credentials.authorization != authorization:
            continue
        if _served(exchange):
            return False
        if _status(exchange) == 401:
            verdict = True
    return verdict


@log_check(
    requirements="AUTH-28", level=Level.SHOULD, side=Side.SERVER, subject="requests with query-string tokens", **HTTP
)
def query_string_tokens_are_refused(ctx: Context) -> Iterator[Finding]:
    """A token sent only in the query string (`access_token`, `token`) is refused (tool policy).

    Triggered by the suite's ``auth-query-*`` probes (the run's own token in the query, with no or a
    garbage ``Authorization``) and by any request whose only credential is a query token. Being served
    counts only when the same method was refused without credentials: otherwise it is simply public."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, request in _requests_at(ctx, use):
        credentials = presented(exchange.request)
        tag = _credential_tag(exchange)
        if tag != "query" and not (credentials.query and credentials.authorization is None and not credentials.other):
            continue
        names = ", ".join(sorted({name for name, _ in credentials.query})) or "the query"
        if not _served(exchange):
            yield _refused(exchange, ctx, request, f"a token in ?{names} was refused (HTTP {_status(exchange)})")
            continue
        extra = " next to a garbage Authorization header" if credentials.authorization is not None else ""
        refused = _refused_without_query(ctx, exchange, request.method)
        if refused:
            yield failed(request, f"{request.method} with the token in ?{names}{extra} was served")
        else:
            alone = "the same Authorization alone" if extra else "no credentials"
            why = "was served too" if refused is False else "was never refused"
            yield unverified(
                f"{request.method} with a token in ?{names}{extra} was served, but the request with {alone} {why}, "
                "so the query token may simply have been ignored",
                request,
            )


@log_check(requirements="AUTH-29", level=Level.SHOULD, side=Side.SERVER, subject="unauthenticated requests", **HTTP)
def unauthenticated_requests_are_not_served(ctx: Context) -> Iterator[Finding]:
    """A protected server requires authentication: an unauthenticated `tools/list` (or other request) gets 401.

    ``server/discover`` and ``initialize`` served without credentials are only noted: a client may
    need them before it holds a token. Not applicable when the server shows no authorization at all."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, request in _requests_at(ctx, use):
        if not presented(exchange.request).anonymous:
            continue
        if _served(exchange):
            if request.method in PUBLIC_METHODS:
                yield passed(request, f"{request.method} is served without credentials (allowed before a token)")
            else:
                yield failed(request, f"{request.method} was served without credentials")
        elif _status(exchange) == 401:
            yield _refused(exchange, ctx, request, f"{request.method} without credentials got 401")


# == G. 2025 sessions ==============================================================================
@log_check(
    requirements="AUTH-32",
    level=Level.MUST,
    side=Side.SERVER,
    subject="session requests without credentials",
    features={"handshake"},
    **HTTP,
)
def session_ids_are_not_credentials(ctx: Context) -> Iterator[Finding]:
    """A 2025 server does not take `Mcp-Session-Id` for a credential: a session request without a token is refused.

    Triggered by a request that carries a session id but no credentials (the suite's
    ``auth-no-token`` probe in a 2025 run sends the run's own session id)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, request in _requests_at(ctx, use):
        if exchange.request.headers.get("mcp-session-id") is None or not presented(exchange.request).anonymous:
            continue
        status = _status(exchange)
        if _served(exchange):
            yield failed(request, f"{request.method} with a session id and no credentials was served")
        elif status == 401:
            yield _refused(exchange, ctx, request, f"{request.method} with only a session id got 401")
        else:
            yield _refused(
                exchange,
                ctx,
                request,
                f"{request.method} with only a session id was refused (HTTP {status}, not the 401 AUTH-09 asks for)",
            )


_DIGITS = re.compile(r"\d+")


@log_check(
    requirements="AUTH-34",
    level=Level.MUST,
    side=Side.SERVER,
    subject="issued session ids",
    features={"handshake"},
    **HTTP,
)
def session_ids_are_unpredictable(ctx: Context) -> Iterator[Finding]:
    """2025 session ids are hard to guess: at least 16 characters, and not a counter (heuristic)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    issued: list[tuple[HttpExchange, str]] = []
    for exchange in _http_exchanges(ctx):
        session = exchange.response.headers.get("mcp-session-id") if exchange.response is not None else None
        if session and endpoint_of(exchange) in use and session not in [item for _, item in issued]:
            issued.append((exchange, session))
    previous: str | None = None
    for exchange, session in issued:
        if len(session) < 16:
            yield failed(exchange, f"a session id of only {len(session)} characters")
        elif previous is not None and _counter_step(previous, session):
            yield failed(exchange, "two consecutive session ids differ only in a number")
        else:
            yield passed(exchange)
        previous = session


def _counter_step(first: str, second: str) -> bool:
    if _DIGITS.sub("#", first) != _DIGITS.sub("#", second):
        return False
    numbers = list(zip(_DIGITS.findall(first), _DIGITS.findall(second), strict=False))
    changed = [(a, b) for a, b in numbers if a != b]
    return len(changed) == 1 and abs(int(changed[0][1]) - int(changed[0][0])) <= 1000


# == I. client side =================================================================================
@log_check(requirements="AUTH-36", level=Level.MUST, side=Side.CLIENT, subject="client requests", **HTTP)
def clients_send_the_token_on_every_request(ctx: Context) -> Iterator[Finding]:
    """Once a client has presented a bearer token to an endpoint, each later request there carries one.

    Requests are grouped by endpoint and ``User-Agent`` so two clients behind one proxy are not mixed up."""
    lanes: dict[tuple[str, str], list[HttpExchange]] = defaultdict(list)
    for exchange in _http_exchanges(ctx):
        if _deliberate(exchange) or is_well_known(exchange.request):
            continue
        lanes[(endpoint_of(exchange), exchange.request.headers.get("user-agent") or "")].append(exchange)
    any_token = False
    for (endpoint, _agent), exchanges in lanes.items():
        started = False
        for exchange in sorted(exchanges, key=lambda item: item.time):
            token = presented(exchange.request).bearer
            subject: Message | HttpExchange = exchange.request_message or exchange
            if token:
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


@log_check(requirements="AUTH-37", level=Level.MUST_NOT, side=Side.CLIENT, subject="client request URIs", **HTTP)
def clients_keep_tokens_out_of_query_strings(ctx: Context) -> Iterator[Finding]:
    """A client never puts an access token in a request URI's query string.

    A query parameter named ``access_token``, ``token``, ``api_key``, ``key``, ``jwt`` or ``auth``
    counts when its value is JWT-shaped or equals a bearer token seen in the traffic (values a recording
    already redacted cannot be compared, and count as clean)."""
    bearers = {
        token
        for exchange in ctx.log.http_exchanges()
        if (token := presented(exchange.request).bearer) and REDACTED not in token
    }
    use = auth_use(ctx)
    clients = _client_tokens(ctx)
    found = False
    for exchange in _http_exchanges(ctx):
        if _deliberate(exchange):
            continue
        subject: Message | HttpExchange = exchange.request_message or exchange
        leaked = [
            (name, value)
            for name, value in presented(exchange.request).query
            if REDACTED not in value and (jwt_shaped(value) or value in bearers)
        ]
        if leaked:
            found = True
            named = ", ".join(f"{name} ({fingerprint(value)})" for name, value in leaked)
            yield failed(subject, f"the request URI carries an access token in the query: {named}")
        elif endpoint_of(exchange) in use or endpoint_of(exchange) in clients:
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


@log_check(requirements="AUTH-38", level=Level.MUST_NOT, side=Side.CLIENT, subject="readable bearer JWTs", **HTTP)
def clients_send_only_tokens_meant_for_the_server(ctx: Context) -> Iterator[Finding]:
    """A client sends a server only tokens issued for it: a readable JWT's `aud` names the server (heuristic).

    Also its ``iss`` is one of the PRM ``authorization_servers`` when the traffic holds that document.
    Claims are read without verification; opaque tokens give no evidence either way."""
    issuers: dict[str, set[str]] = defaultdict(set)
    for doc in _prm_documents(ctx):
        servers = doc.body.get("authorization_servers") if doc.body is not None else None
        for server in servers if isinstance(servers, list) else []:
            if isinstance(server, str):
                issuers[_home(doc, ctx)].add(server.rstrip("/"))
    tokens = False
    for exchange in _http_exchanges(ctx):
        token = presented(exchange.request).bearer
        if _deliberate(exchange) or not token:
            continue
        tokens = True
        claims = jwt_claims(token)
        if claims is None:
            continue
        subject: Message | HttpExchange = exchange.request_message or exchange
        endpoint = endpoint_of(exchange)
        issuer = claims.get("iss")
        known = issuers.get(_origin(endpoint))
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


# == J. authorization server ======================================================================
def _redirect_uris(exchange: HttpExchange) -> list[str]:
    request = exchange.request
    values = [value for name, value in parse_qsl(urlsplit(request.url).query) if name == "redirect_uri"]
    if request.body and media_type(request.headers.get("content-type")) == "application/x-www-form-urlencoded":
        text = request.body.decode("utf-8", "replace")
        values.extend(value for name, value in parse_qsl(text) if name == "redirect_uri")
    elif request.body and request.content_type == "application/json" and not exchange.messages:
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("redirect_uris"), list):
            values.extend(item for item in body["redirect_uris"] if isinstance(item, str))
    return values


@log_check(requirements="AUTH-48", level=Level.MUST, side=Side.BOTH, subject="authorization URLs", **HTTP)
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
    for exchange in _http_exchanges(ctx):
        if not _deliberate(exchange):
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


@log_check(requirements="AUTH-50", level=Level.MUST, side=Side.SERVER, subject="OpenID discovery documents", **HTTP)
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
