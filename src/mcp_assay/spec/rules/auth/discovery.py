"""Authorization, a client's discovery (AUTH-39, AUTH-40).

After a challenge a client finds the server's Protected Resource Metadata where the challenge
says, or else at the path-scoped well-known URI before the root one; it then tries the
authorization server's metadata URIs in the prescribed order, and does not use metadata whose
``issuer`` is not the issuer it built the URL from.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth._oauth_flow import (
    OAuthFlow,
    endpoint_of_url,
    flow_applicability,
    issuer_of_metadata_url,
    oauth_flow,
)
from mcp_assay.spec.rules.auth.documents import Document
from mcp_assay.spec.rules.auth.facts import prm_candidates
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.verdicts import Level

PRM_KINDS = ("path", "root", "header")


def _bare(url: str) -> str:
    return endpoint_of_url(url).rstrip("/")


@log_check(requirements="AUTH-39", level=Level.MUST, subject="PRM discoveries", follows=ANY_AUTHORIZATION)
def clients_discover_prm_where_told(ctx: Context) -> Iterator[Finding]:
    """After a 401 a client fetches PRM from the challenge's `resource_metadata`, else path-scoped before root."""
    flow = oauth_flow(ctx)
    fetches = [doc for doc in flow.documents if doc.kind in PRM_KINDS]
    used: set[str] = set()
    judged = False
    for challenge in flow.challenges:
        if challenge.exchange.response is None or challenge.exchange.response.status != 401:
            continue
        following = next(
            (doc for doc in fetches if doc.exchange.id not in used and doc.exchange.request.time >= challenge.time),
            None,
        )
        if following is None:
            continue  # a client may know the metadata already
        used.add(following.exchange.id)
        judged = True
        named = challenge.bearer.get("resource_metadata") if challenge.bearer is not None else None
        if named:
            if following.url == named:
                yield passed(following.exchange)
            else:
                yield failed(
                    following.exchange,
                    f"the 401 from {challenge.endpoint} named resource_metadata {named}, but the client's next "
                    f"PRM fetch was {following.url}",
                )
            continue
        candidates = [url for _, url in prm_candidates(challenge.endpoint)]
        if _bare(following.url) == _bare(candidates[0]):
            yield passed(following.exchange)
        elif any(_bare(following.url) == _bare(url) for url in candidates):
            yield failed(
                following.exchange,
                f"after a 401 without resource_metadata the client fetched the root PRM URI {following.url} "
                f"before the path-scoped {candidates[0]}",
            )
        else:
            yield failed(
                following.exchange,
                f"after a 401 without resource_metadata the client's next PRM fetch was {following.url}, "
                f"not {candidates[0]}",
            )
    if not judged:
        yield flow_applicability(ctx, "Protected Resource Metadata fetch following a 401")


def metadata_candidates(issuer: str) -> list[str]:
    """The authorization server metadata URIs to try for ``issuer``, in the order the spec gives."""
    bare = issuer.rstrip("/")
    origin_end = bare.find("/", bare.find("//") + 2)
    origin, path = (bare, "") if origin_end < 0 else (bare[:origin_end], bare[origin_end:])
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def _named_issuers(flow: OAuthFlow) -> list[str]:
    """Authorization servers the served PRM documents name, in order of appearance."""
    found: dict[str, None] = {}
    for doc in flow.documents:
        values = doc.body.get("authorization_servers") if doc.kind in PRM_KINDS and doc.body is not None else None
        for value in values if isinstance(values, list) else []:
            if isinstance(value, str):
                found.setdefault(value, None)
    return list(found)


def _used(doc: Document, flow: OAuthFlow) -> bool:
    """Whether the client sent an authorization, token or registration request to an endpoint ``doc`` names."""
    assert doc.body is not None
    named = {
        endpoint_of_url(value)
        for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint")
        if isinstance(value := doc.body.get(name), str)
    }
    steps = flow.steps()
    return any(step.endpoint in named for step in steps) or any(
        endpoint_of_url(reg.exchange.request.url) in named for reg in flow.registrations
    )


@log_check(
    requirements="AUTH-40", level=Level.MUST, subject="authorization server discoveries", follows=ANY_AUTHORIZATION
)
def clients_discover_authorization_servers_in_order(ctx: Context) -> Iterator[Finding]:
    """A client tries the metadata URIs in the prescribed order and does not use metadata naming another issuer."""
    flow = oauth_flow(ctx)
    judged = False
    for issuer in _named_issuers(flow):
        order = [_bare(url) for url in metadata_candidates(issuer)]
        fetched = [doc for doc in flow.documents if doc.kind in ("oauth", "openid") and _bare(doc.url) in order]
        if not fetched:
            continue
        judged = True
        positions = list(dict.fromkeys(order.index(_bare(doc.url)) for doc in fetched))
        if positions[0] != 0:
            yield failed(
                fetched[0].exchange, f"for issuer {issuer} the client first fetched {fetched[0].url}, not {order[0]}"
            )
        elif positions != sorted(positions):
            yield failed(
                fetched[-1].exchange,
                f"for issuer {issuer} the client tried the metadata URIs out of order: "
                + ", ".join(order[position] for position in positions),
            )
        else:
            yield passed(fetched[0].exchange)
        for doc in fetched:
            if doc.body is None:
                continue
            built_from = issuer_of_metadata_url(doc.url)
            served = doc.body.get("issuer")
            if built_from is None or served == built_from:
                continue
            if _used(doc, flow):
                yield failed(
                    doc.exchange,
                    f"the metadata at {doc.url} names issuer {served!r}, not {built_from!r}, and the client used "
                    "its endpoints anyway",
                )
            else:
                yield passed(doc.exchange, f"the metadata at {doc.url} names another issuer; the client left it")
    if not judged:
        yield flow_applicability(ctx, "authorization server metadata fetch for an issuer named in PRM")
