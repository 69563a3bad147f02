"""Token handling (AUTH-16..19, AUTH-27): a token changed in one property is refused, and none is passed on.

Triggered by the suite's stub token cases (:data:`mcp_assay.cases.tokens.STUB_TOKENS`): each carries a
token minted by a stand-in authorization server the target trusts, identical to the control token
except for one property, and its case feeds the requirement its refusal establishes. Being
served with a result fails. Any refusal passes (401, 403, 400, a JSON-RPC error, even a 5xx: the
token was not honoured; AUTH-13 judges the status) provided the stub's control token was served on
both sides of it, else it is not verified. Without stub-token probes these requirements are not
verified: only a token the target trusts can show what it checks.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.cases import tokens as cases
from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.use import (
    gated_http_exchanges,
    protected_requests,
    refusal_finding,
    rejected_in_jsonrpc,
    served_with_result,
    status_of,
    variant_of,
)
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.model import HttpExchange, probe_case

__all__ = [
    "tokens_are_not_passed_upstream",
    "tokens_for_another_audience_are_refused",
    "tokens_from_a_foreign_issuer_are_refused",
    "tokens_outside_their_lifetime_are_refused",
    "tokens_with_an_untrusted_signature_are_refused",
]

FOREIGN_KEYS = "/foreign/jwks.json"
NO_STUB = (
    "no token minted by a stand-in authorization server the target trusts was sent, and only such a token shows "
    "what the server checks (the suite sends them when its config has a `stub` section)"
)


def _stub_probes(ctx: Context, requirement: str) -> list[HttpExchange]:
    """The exchanges of the stub token cases whose refusal establishes ``requirement``."""
    found = []
    for exchange in gated_http_exchanges(ctx):
        case = probe_case(exchange)
        if case is None or requirement not in case.feeds:
            continue
        if case in cases.STUB_TOKENS or (not case.registered and case.control is cases.STUB_CONTROL):
            found.append(exchange)  # an older recording's stub token names its requirement and control itself
    return found


def _judge(ctx: Context, requirement: str) -> Iterator[Finding]:
    _, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    probes = _stub_probes(ctx, requirement)
    if not probes:
        yield unverified(NO_STUB)
        return
    for exchange in probes:
        subject = exchange.request_message or exchange
        method = exchange.request_message.method if exchange.request_message is not None else "the request"
        what = f"{method} with a stub token ({variant_of(exchange, '?')})"
        if served_with_result(exchange):
            yield failed(subject, f"{what} was served")
            continue
        answer = f"HTTP {status_of(exchange)}" + (", a JSON-RPC error" if rejected_in_jsonrpc(exchange) else "")
        yield refusal_finding(exchange, ctx, subject, f"{what} got {answer}")


@log_check(
    requirements="AUTH-16",
    level=Level.MUST,
    families={cases.declare.family},
    subject="stub tokens for another audience",
    follows=ANY_AUTHORIZATION,
)
def tokens_for_another_audience_are_refused(ctx: Context) -> Iterator[Finding]:
    """A token whose aud does not name the server (another service, none, a look-alike, a list without it) is
    refused."""
    return _judge(ctx, "AUTH-16")


@log_check(
    requirements="AUTH-17",
    level=Level.MUST,
    families={cases.declare.family},
    subject="stub tokens from a foreign issuer",
    follows=ANY_AUTHORIZATION,
)
def tokens_from_a_foreign_issuer_are_refused(ctx: Context) -> Iterator[Finding]:
    """A token signed by the trusted key but naming another issuer is refused."""
    return _judge(ctx, "AUTH-17")


@log_check(
    requirements="AUTH-18",
    level=Level.MUST,
    families={cases.declare.family},
    subject="stub tokens with an untrusted signature or algorithm",
    follows=ANY_AUTHORIZATION,
)
def tokens_with_an_untrusted_signature_are_refused(ctx: Context) -> Iterator[Finding]:
    """Tokens signed by an untrusted key (under the trusted kid, its own, via jku or an embedded jwk), unsigned
    (alg none in any case) or HMAC-signed with the public key are refused, and the key set a jku header names is
    never fetched."""
    yield from _judge(ctx, "AUTH-18")
    jku = next((item for item in _stub_probes(ctx, "AUTH-18") if probe_case(item) is cases.stub_token("jku")), None)
    for fetch in ctx.log.observations("stub-fetch"):
        if FOREIGN_KEYS in str(fetch.data.get("path", "")):
            agent = fetch.data.get("user_agent") or "no user agent"
            yield failed(
                jku.request_message if jku is not None and jku.request_message is not None else jku,
                f"the target fetched the untrusted key set a token's jku header named ({fetch.data.get('url')}, "
                f"{agent}): it lets a token choose the key that verifies it",
            )


@log_check(
    requirements="AUTH-19",
    level=Level.MUST,
    families={cases.declare.family},
    subject="stub tokens outside their lifetime",
    follows=ANY_AUTHORIZATION,
)
def tokens_outside_their_lifetime_are_refused(ctx: Context) -> Iterator[Finding]:
    """A token whose exp has passed, or whose nbf lies in the future, is refused."""
    return _judge(ctx, "AUTH-19")


@log_check(
    requirements="AUTH-27",
    level=Level.MUST_NOT,
    families={cases.declare.family},
    subject="upstream requests made while serving a stub token",
    follows=ANY_AUTHORIZATION,
)
def tokens_are_not_passed_upstream(ctx: Context) -> Iterator[Finding]:
    """The server never forwards the client's token to an upstream API, in a header, the query or the body.

    Triggered by the suite's ``auth-passthrough`` call (``stub.passthrough_tool``, a tool that calls
    an upstream API the target points at the stub's sink) and the ``stub-sink`` notes of what reached
    the sink meanwhile, each saying where, if anywhere, the call's token appeared."""
    _, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    calls = [item for item in gated_http_exchanges(ctx) if probe_case(item) is cases.PASSTHROUGH]
    if not calls:
        yield unverified("no passthrough call was made: name a tool that calls an upstream API in "
                         "stub.passthrough_tool and point the target's upstream at the stub's /sink/")  # fmt: skip
        return
    subject = calls[-1].request_message or calls[-1]
    sinks = ctx.log.observations("stub-sink")
    if not sinks:
        yield unverified("the stub's sink received no upstream request during the passthrough call: point the "
                         "target's upstream API at <stub issuer>/sink/", subject)  # fmt: skip
        return
    for sink in sinks:
        places = [str(place) for place in sink.data.get("carried_token_in") or ()]
        upstream = f"the upstream {sink.data.get('method')} {sink.data.get('path')} made for {sink.data.get('tool')}"
        if places:
            yield failed(subject, f"{upstream} carried the client's token in its {' and '.join(places)}")
        else:
            yield passed(subject, f"{upstream} carried no copy of the client's token")
