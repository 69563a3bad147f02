"""Authorization, what binds a flow to its authorization server (AUTH-43, 46, 47, 49).

In 2026 a client checks the ``iss`` of the authorization response against the issuer it
recorded and stops when it is missing though advertised, or different (RFC 9207); an
authorization server puts ``iss`` there and says so in its metadata; a client registering
dynamically says what kind of application it is, a URL-form client id is an ``https`` URL with a
path; and a client id goes only to the authorization server that issued it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from mcp_assay.spec.checks import Finding, failed, log_check, not_applicable, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth._oauth_flow import (
    AuthorizationStep,
    OAuthFlow,
    TokenStep,
    flow_applicability,
    oauth_flow,
    speaks_2026,
)
from mcp_assay.spec.rules.auth.documents import origin_of
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.protocol import MODERN_REVISION
from mcp_assay.vocabulary.verdicts import Level

ONLY_2026 = f"the client's MCP traffic is not {MODERN_REVISION}, and this requirement binds 2026 clients only"


def _only_2026(rule: Callable[[Context, OAuthFlow], Iterator[Finding]]) -> Callable[[Context], Iterator[Finding]]:
    """A rule binding 2026 clients: not applicable to a capture whose MCP traffic is older, else given the flow."""

    @functools.wraps(rule)
    def judged(ctx: Context) -> Iterator[Finding]:
        if not speaks_2026(ctx):
            yield not_applicable(ONLY_2026)
            return
        yield from rule(ctx, oauth_flow(ctx))

    return judged


def _answered(flow: OAuthFlow) -> list[AuthorizationStep]:
    """Authorization requests whose redirect the capture shows."""
    return [step for step in flow.authorizations if step.redirect is not None]


def _exchanged_after(flow: OAuthFlow, step: AuthorizationStep) -> TokenStep | None:
    """The first code exchange after ``step`` and before the next authorization request."""
    later = [other.time for other in flow.authorizations if other.time > step.time]
    until = min(later) if later else float("inf")
    return next(
        (token for token in flow.tokens if token.grant == "authorization_code" and step.time < token.time < until),
        None,
    )


@log_check(requirements="AUTH-43", level=Level.MUST, subject="authorization responses", follows=ANY_AUTHORIZATION)
@_only_2026
def clients_check_the_response_issuer(ctx: Context, flow: OAuthFlow) -> Iterator[Finding]:
    """A 2026 client does not redeem a code whose response `iss` is missing (though advertised) or differs."""
    answered = [step for step in _answered(flow) if step.redirect and "code" in step.redirect]
    for step in answered:
        assert step.redirect is not None
        doc = flow.metadata_for_endpoint(step.endpoint)
        issuer = doc.body.get("issuer") if doc is not None and doc.body is not None else None
        advertised = (
            doc is not None
            and doc.body is not None
            and doc.body.get("authorization_response_iss_parameter_supported") is True
        )
        iss = step.redirect.get("iss")
        wrong = None
        if iss is None and advertised:
            wrong = "carried no iss although the metadata advertises authorization_response_iss_parameter_supported"
        elif iss is not None and isinstance(issuer, str) and iss != issuer:
            wrong = f"carried iss {iss!r}, not the recorded issuer {issuer!r}"
        redeemed = _exchanged_after(flow, step)
        if wrong is None:
            yield passed(step.exchange)
        elif redeemed is not None:
            yield failed(redeemed.exchange, f"the authorization response {wrong}, and the client redeemed the code")
        else:
            yield passed(step.exchange, f"the authorization response {wrong}; the client did not redeem the code")
    if not answered:
        yield flow_applicability(ctx, "authorization response (a redirect carrying a code)")


@log_check(requirements="AUTH-49", level=Level.SHOULD, subject="authorization responses", follows=ANY_AUTHORIZATION)
@_only_2026
def authorization_responses_carry_iss(ctx: Context, flow: OAuthFlow) -> Iterator[Finding]:
    """An authorization server puts `iss` into its authorization responses."""
    answered = _answered(flow)
    for step in answered:
        assert step.redirect is not None
        if step.redirect.get("iss"):
            yield passed(step.exchange)
        else:
            yield failed(step.exchange, f"the authorization response from {step.endpoint} carries no iss")
    if not answered:
        yield flow_applicability(ctx, "authorization response")


@log_check(
    requirements="AUTH-49", level=Level.MUST, subject="authorization responses with iss", follows=ANY_AUTHORIZATION
)
@_only_2026
def response_issuers_are_advertised(ctx: Context, flow: OAuthFlow) -> Iterator[Finding]:
    """An authorization server putting `iss` into its responses advertises it in its metadata.

    The metadata member is ``authorization_response_iss_parameter_supported: true``."""
    with_iss = [step for step in _answered(flow) if step.redirect and step.redirect.get("iss")]
    for step in with_iss:
        doc = flow.metadata_for_endpoint(step.endpoint)
        if doc is None or doc.body is None:
            yield unverified(
                f"the metadata of the authorization server at {step.endpoint} is not in the capture", step.exchange
            )
        elif doc.body.get("authorization_response_iss_parameter_supported") is True:
            yield passed(step.exchange)
        else:
            yield failed(
                doc.exchange,
                f"{step.endpoint} puts iss into its authorization responses, but its metadata at {doc.url} does not "
                "advertise authorization_response_iss_parameter_supported: true",
            )
    if not with_iss:
        yield flow_applicability(ctx, "authorization response carrying iss")


def _client_id(step: AuthorizationStep | TokenStep) -> str | None:
    return step.client_id if isinstance(step, TokenStep) else step.params.get("client_id")


@log_check(requirements="AUTH-46", level=Level.MUST, subject="client registrations", follows=ANY_AUTHORIZATION)
def clients_register_in_the_prescribed_form(ctx: Context) -> Iterator[Finding]:
    """A 2026 dynamic registration carries `application_type`; a URL-form `client_id` is https with a path."""
    flow = oauth_flow(ctx)
    modern = speaks_2026(ctx)
    judged = False
    for registration in flow.registrations if modern else []:
        judged = True
        if registration.body.get("application_type"):
            yield passed(registration.exchange)
        else:
            yield failed(registration.exchange, "the dynamic client registration has no application_type")
    seen: set[str] = set()
    for step in flow.steps():
        client_id = _client_id(step)
        if not client_id or client_id in seen or not client_id.lower().startswith(("http://", "https://")):
            continue
        seen.add(client_id)
        judged = True
        parts = urlsplit(client_id)
        if parts.scheme == "https" and parts.path not in ("", "/"):
            yield passed(step.exchange)
        else:
            yield failed(step.exchange, f"the URL-form client_id {client_id} is not an https URL with a path")
    if not judged:
        if flow.registrations:
            yield not_applicable(ONLY_2026.replace("this requirement binds", "application_type binds"))
        else:
            yield flow_applicability(ctx, "client registration or URL-form client_id")


@log_check(requirements="AUTH-47", level=Level.MUST, subject="client ids presented", follows=ANY_AUTHORIZATION)
@_only_2026
def client_ids_stay_with_their_issuer(ctx: Context, flow: OAuthFlow) -> Iterator[Finding]:
    """A 2026 client presents a registered `client_id` only to the authorization server that issued it."""

    def server_of(endpoint: str) -> str:
        doc = flow.metadata_for_endpoint(endpoint)
        issuer = doc.body.get("issuer") if doc is not None and doc.body is not None else None
        return issuer if isinstance(issuer, str) else origin_of(endpoint)

    issued = {
        registration.client_id: server_of(registration.exchange.request.url.split("?")[0])
        for registration in flow.registrations
        if registration.client_id
    }
    judged = False
    for step in flow.steps():
        client_id = _client_id(step)
        if client_id not in issued:
            continue
        judged = True
        presented_to = server_of(step.endpoint)
        if presented_to == issued[client_id]:
            yield passed(step.exchange)
        else:
            yield failed(
                step.exchange,
                f"the client id issued by {issued[client_id]} was presented to {presented_to}",
            )
    if not judged:
        yield flow_applicability(ctx, "client id obtained by registration and presented later")
