"""Authorization (AUTH-01..08): the Protected Resource Metadata an HTTP server publishes.

A protected server serves PRM (200, ``application/json``, an object) that names its
authorization servers and itself in canonical form, is discoverable from its ``401`` challenges
or the well-known paths, and keeps to the advice on scopes and query tokens.

Authorization is optional in MCP: where the traffic shows it nowhere, these rules are *not
applicable*, with the reason — an HTTP server that serves ``tools/list`` to anyone and publishes
no PRM does not implement authorization, and is not failed for it. Tokens never appear in a
finding: a token is named by :func:`~mcp_assay.recording.redaction.fingerprint`, and the engine scrubs
every credential the traffic carried from evidence.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.spec.checks import Finding, failed, log_check, not_applicable, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.documents import (
    NOT_CAPTURED,
    Document,
    challenged_metadata_urls,
    home_origin,
    metadata_documents,
    origin_of,
    prm_documents,
)
from mcp_assay.spec.rules.auth.facts import PRM_PATH, canonical_uri, prm_candidates
from mcp_assay.spec.rules.auth.use import (
    AuthUse,
    auth_use,
    challenge_exchanges,
    prm_bodies,
    prm_subjects,
    status_of,
)
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.traffic import endpoint_of

OMNIBUS_SCOPES = frozenset({"*", "all", "full-access", "full_access"})


@log_check(requirements="AUTH-01", level=Level.MUST, subject="metadata fetches", follows=ANY_AUTHORIZATION)
def protected_resource_metadata_is_served(ctx: Context) -> Iterator[Finding]:
    """A protected server serves its Protected Resource Metadata: 200, application/json, a JSON object.

    Triggered by a ``GET`` of the path-scoped or root ``/.well-known/oauth-protected-resource`` URI or
    of a challenge's ``resource_metadata`` URL (the suite fetches all three). One candidate serving it
    is enough; a ``200`` that is not a JSON object fails."""
    _use, documents, reason = prm_subjects(ctx, served=False)
    if reason is not None:
        yield reason
        return
    by_origin: dict[str, list[Document]] = defaultdict(list)
    for doc in documents:
        by_origin[home_origin(doc, ctx)].append(doc)
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


@log_check(requirements="AUTH-02", level=Level.MUST, subject="metadata documents", follows=ANY_AUTHORIZATION)
def protected_resource_metadata_names_authorization_servers(ctx: Context) -> Iterator[Finding]:
    """The PRM document lists at least one authorization server issuer URL in `authorization_servers`."""
    _use, bodies = yield from prm_bodies(ctx)
    for doc, body in bodies:
        servers = body.get("authorization_servers")
        if servers is None and "authorization_server" in body:
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
    challenge = challenged_metadata_urls(ctx).get(doc.url) if doc.kind == "header" else None
    if challenge is not None:
        return [endpoint_of(challenge)]
    return [endpoint for endpoint in use.endpoints if origin_of(endpoint) == origin_of(doc.url)]


@log_check(requirements="AUTH-03", level=Level.MUST, subject="metadata documents", follows=ANY_AUTHORIZATION)
def protected_resource_metadata_names_this_server(ctx: Context) -> Iterator[Finding]:
    """The PRM `resource` is this server's canonical URI (a path prefix of it for root or header discovery).

    Compared in canonical form (case of scheme and host, default port and a trailing slash aside);
    a document fetched from the path-scoped URI must name that endpoint exactly."""
    use, bodies = yield from prm_bodies(ctx)
    for doc, body in bodies:
        resource = body.get("resource")
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


@log_check(requirements="AUTH-03", level=Level.SHOULD, subject="metadata documents", follows=ANY_AUTHORIZATION)
def protected_resource_metadata_uses_the_canonical_form(ctx: Context) -> Iterator[Finding]:
    """The PRM `resource` is written in canonical form: lowercase scheme and host, no query, no stray trailing slash."""
    use, bodies = yield from prm_bodies(ctx)
    for doc, body in bodies:
        resource = body.get("resource")
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


@log_check(requirements="AUTH-04", level=Level.MUST, subject="protected endpoints", follows=ANY_AUTHORIZATION)
def protected_resource_metadata_is_discoverable(ctx: Context) -> Iterator[Finding]:
    """A protected server names its PRM in the 401 challenge (`resource_metadata`) or serves it at a well-known URI.

    Failed only when the 401 challenges name no ``resource_metadata`` and both well-known URIs were
    tried without success; having just one of the two is fine (clients rely on the header)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    served = {doc.url: doc for doc in prm_documents(ctx)}
    tried = {doc.url: doc for doc in prm_documents(ctx, served=False)}
    for endpoint in use.endpoints:
        refusals = [
            (exchange, parsed)
            for exchange, parsed in challenge_exchanges(ctx)
            if endpoint_of(exchange) == endpoint and status_of(exchange) == 401
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


@log_check(requirements="AUTH-05", level=Level.MUST, subject="advertised metadata URLs", follows=ANY_AUTHORIZATION)
def advertised_resource_metadata_resolves(ctx: Context) -> Iterator[Finding]:
    """The `resource_metadata` URL a challenge advertises serves the PRM document (a dangling URL breaks clients)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    fetches = metadata_documents(ctx)
    for url, challenge in challenged_metadata_urls(ctx).items():
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


@log_check(requirements="AUTH-06", level=Level.SHOULD_NOT, subject="advertised scopes", follows=ANY_AUTHORIZATION)
def resource_server_does_not_advertise_offline_access(ctx: Context) -> Iterator[Finding]:
    """The resource server advertises no `offline_access` scope, in PRM `scopes_supported` or a challenge `scope`."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for doc in prm_documents(ctx):
        if doc.body is None:
            continue
        if "offline_access" in _scopes(doc.body.get("scopes_supported")):
            yield failed(doc.exchange, "PRM scopes_supported lists offline_access")
        else:
            yield passed(doc.exchange)
    for exchange, parsed in challenge_exchanges(ctx):
        scope = parsed.bearer.get("scope") if parsed.bearer is not None else None
        if scope is None:
            continue
        if "offline_access" in scope.split():
            yield failed(exchange, "the challenge scope names offline_access")
        else:
            yield passed(exchange)


@log_check(requirements="AUTH-07", level=Level.SHOULD, subject="metadata documents", follows=ANY_AUTHORIZATION)
def protected_resource_metadata_offers_no_query_tokens(ctx: Context) -> Iterator[Finding]:
    """PRM `bearer_methods_supported`, when present, leaves out `query` (policy: MCP forbids tokens in URIs)."""
    _use, bodies = yield from prm_bodies(ctx)
    for doc, body in bodies:
        methods = body.get("bearer_methods_supported")
        if isinstance(methods, list) and "query" in methods:
            yield failed(doc.exchange, "PRM bearer_methods_supported offers query")
        else:
            yield passed(doc.exchange)


@log_check(requirements="AUTH-08", level=Level.MAY, subject="metadata documents", follows=ANY_AUTHORIZATION)
def protected_resource_metadata_avoids_omnibus_scopes(ctx: Context) -> Iterator[Finding]:
    """PRM `scopes_supported` avoids catch-all scopes such as `*`, `all` or `full-access` (advisory)."""
    _use, bodies = yield from prm_bodies(ctx)
    for doc, body in bodies:
        listed = _scopes(body.get("scopes_supported"))
        broad = sorted(OMNIBUS_SCOPES.intersection(item.lower() for item in listed))
        if broad:
            yield failed(doc.exchange, f"scopes_supported offers catch-all scopes {broad}")
        else:
            yield passed(doc.exchange)
