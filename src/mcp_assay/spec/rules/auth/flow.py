"""Authorization, what a client asks its authorization server for (AUTH-41, 42, 44, 45).

Every authorization and token request names the MCP server as ``resource``; the code is
protected with PKCE ``S256``, and a client does not go on with an authorization server whose
metadata lists no PKCE methods; authorization requests carry ``state``; and the scopes asked
for follow the challenge (or PRM), growing to the union on a step-up, with the retries capped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth._oauth_flow import (
    AuthorizationStep,
    ClientChallenge,
    OAuthFlow,
    flow_applicability,
    oauth_flow,
)
from mcp_assay.spec.rules.auth.facts import canonical_uri
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.verdicts import Level

STEP_UP_RETRIES = 3
"""Re-authorizations for the same challenge beyond which a client is looping (the spec's example cap)."""


@log_check(
    requirements="AUTH-41", level=Level.MUST, subject="authorization and token requests", follows=ANY_AUTHORIZATION
)
def clients_name_the_resource(ctx: Context) -> Iterator[Finding]:
    """Authorization and token requests carry `resource` with the MCP server's canonical URI."""
    flow = oauth_flow(ctx)
    known = flow.resources()
    steps = flow.steps()
    for step in steps:
        what = "authorization request" if isinstance(step, AuthorizationStep) else "token request"
        value = step.params.get("resource")
        if not value:
            yield failed(step.exchange, f"the {what} to {step.endpoint} has no resource parameter")
        elif not known or canonical_uri(value) in known:
            yield passed(step.exchange)
        else:
            yield failed(
                step.exchange,
                f"the {what} names resource {value}, which is not the canonical URI of the MCP server "
                f"({', '.join(sorted(known))})",
            )
    if not steps:
        yield flow_applicability(ctx, "authorization or token request")


@log_check(
    requirements="AUTH-42", level=Level.MUST, subject="authorization and token requests", follows=ANY_AUTHORIZATION
)
def clients_use_pkce_s256(ctx: Context) -> Iterator[Finding]:
    """Authorization requests carry an S256 `code_challenge`, code exchanges a `code_verifier`, and a client
    does not go on with an authorization server whose metadata lists no PKCE methods."""
    flow = oauth_flow(ctx)
    for step in flow.authorizations:
        method = step.params.get("code_challenge_method")
        doc = flow.metadata_for_endpoint(step.endpoint)
        methods = doc.body.get("code_challenge_methods_supported") if doc is not None and doc.body else None
        if not step.params.get("code_challenge"):
            yield failed(step.exchange, "the authorization request has no code_challenge")
        elif method != "S256":
            shown = f"code_challenge_method {method}" if method else "no code_challenge_method (plain)"
            yield failed(step.exchange, f"the authorization request uses {shown}, not S256")
        elif doc is not None and not (isinstance(methods, list) and methods):
            yield failed(
                step.exchange,
                f"the metadata at {doc.url} lists no code_challenge_methods_supported, and the client went on "
                "to authorize there",
            )
        else:
            yield passed(step.exchange)
    exchanges = [step for step in flow.tokens if step.grant == "authorization_code"]
    for token in exchanges:
        if token.params.get("code_verifier"):
            yield passed(token.exchange)
        else:
            yield failed(token.exchange, "the authorization code was exchanged without a code_verifier")
    if not flow.authorizations and not exchanges:
        yield flow_applicability(ctx, "authorization request or code exchange")


@log_check(requirements="AUTH-44", level=Level.SHOULD, subject="authorization requests", follows=ANY_AUTHORIZATION)
def clients_send_state(ctx: Context) -> Iterator[Finding]:
    """Authorization requests carry a `state` parameter."""
    flow = oauth_flow(ctx)
    for step in flow.authorizations:
        if step.params.get("state"):
            yield passed(step.exchange)
        else:
            yield failed(step.exchange, "the authorization request has no state parameter")
    if not flow.authorizations:
        yield flow_applicability(ctx, "authorization request")


def _prm_scopes(flow: OAuthFlow, after: float) -> set[str] | None:
    """``scopes_supported`` of the first served PRM document fetched after ``after``."""
    for doc in flow.documents:
        if doc.kind in ("path", "root", "header") and doc.body is not None and doc.exchange.request.time >= after:
            values = doc.body.get("scopes_supported")
            if isinstance(values, list):
                return {value for value in values if isinstance(value, str)}
            return None
    return None


def _challenge_before(flow: OAuthFlow, step: AuthorizationStep) -> ClientChallenge | None:
    earlier = [challenge for challenge in flow.challenges if challenge.time <= step.time]
    return earlier[-1] if earlier else None


@log_check(requirements="AUTH-45", level=Level.SHOULD, subject="authorization requests", follows=ANY_AUTHORIZATION)
def clients_ask_for_the_challenged_scopes(ctx: Context) -> Iterator[Finding]:
    """The first authorization asks for the challenge's `scope` (else PRM `scopes_supported`); a step-up asks
    for the union with what was asked before; re-authorizations for one challenge are capped."""
    flow = oauth_flow(ctx)
    retries: Counter[str] = Counter()
    asked: set[str] = set()
    judged = False
    for step in flow.authorizations:
        challenge = _challenge_before(flow, step)
        if challenge is None:
            asked = step.scopes()
            continue
        judged = True
        named = challenge.scopes()
        if challenge.insufficient_scope:
            retries[challenge.exchange.id] += 1
            wanted = asked | (named or set())
            if retries[challenge.exchange.id] > STEP_UP_RETRIES:
                yield failed(
                    step.exchange,
                    f"the client re-authorized {retries[challenge.exchange.id]} times for one insufficient_scope "
                    "challenge",
                )
            elif wanted <= step.scopes():
                yield passed(step.exchange)
            else:
                yield failed(
                    step.exchange,
                    f"the step-up authorization asks for {sorted(step.scopes())}, not the union of what was asked "
                    f"before and the challenge's scope ({sorted(wanted)})",
                )
        else:
            wanted_first = named if named is not None else _prm_scopes(flow, challenge.time)
            source = "the challenge's scope" if named is not None else "PRM scopes_supported"
            if wanted_first is None or step.scopes() == wanted_first:
                yield passed(step.exchange)
            else:
                yield failed(
                    step.exchange,
                    f"the authorization asks for {sorted(step.scopes())}, not {source} ({sorted(wanted_first)})",
                )
        asked = step.scopes()
    if not judged:
        yield flow_applicability(ctx, "authorization request following a challenge")
