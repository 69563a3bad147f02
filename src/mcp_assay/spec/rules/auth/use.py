"""Where the traffic shows authorization in use, and how the AUTH rules read a probe's answer.

Authorization is optional in MCP, so every AUTH rule first asks whether the traffic shows it in
use at an endpoint: a ``401``, a ``403`` with a ``Bearer`` challenge, or a Protected Resource
Metadata (PRM) document published for its origin (client-side rules: a client presenting a
bearer token). Where none of that appears the requirement is *not applicable*, with the reason.

The active suite's ``auth-*`` probes say in their tag which credential they carry
(``credential``: ``none``, ``malformed``, ``invalid``, ``query``). A probe's *refusal* counts only
when the control requests on both sides of it were served: ``auth-control`` with the run's own
credentials, or the control its ``control`` tag names (the stub-token probes use a valid token
from the stub): a server that refuses everything, or one that locked the run out, would pass. Being
*served* with a bad credential needs no control, and neither does a ``401`` to a request that
carries no credential at all: that is what AUTH-09 asks whatever the server does with tokens, so a
run that holds no token of its own (nothing to control with) still judges it.

A server that answers ``401`` but names no ``resource_metadata`` and serves no PRM at either
well-known URI protects itself with a scheme of its own (a static key or token), not MCP's OAuth
profile (AUTH-AND-BEHAVIOUR §0.3.3). Authorization is optional in MCP and HTTP servers only SHOULD
follow the profile, so the catalogue grades the profile's items ``own-auth-scheme``: a failure of
them at such an endpoint counts as a recommendation, with the reason :func:`own_scheme` gives.
A credential it should have refused but served stays a failure in full: that holds for any scheme.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mcp_assay.cases import Case, Credential
from mcp_assay.cases import auth as auth_cases
from mcp_assay.spec.checks import Finding, Gate, grading, not_applicable, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.documents import (
    NOT_CAPTURED,
    Document,
    challenged_metadata_urls,
    home_origin,
    origin_of,
    prm_documents,
)
from mcp_assay.spec.rules.auth.facts import Challenges, Presented, challenges_of, presented, prm_candidates, prm_kind
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Severity
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange, is_well_known
from mcp_assay.wire.traffic import endpoint_of

__all__ = [
    "AuthUse",
    "SentRequest",
    "anonymous_refusal",
    "auth_use",
    "challenge_exchanges",
    "credential_tag",
    "deliberate",
    "gated_http_exchanges",
    "otherwise_malformed",
    "own_scheme",
    "prm_bodies",
    "prm_subjects",
    "protected_requests",
    "refusal_finding",
    "rejected_in_jsonrpc",
    "sent_requests",
    "served_with_result",
    "status_of",
    "unattributable",
    "variant_of",
]

CONTROL = auth_cases.CONTROL
"""Probe name of the suite's control requests (the run's own credentials)."""


def _mcp_endpoints(ctx: Context) -> list[str]:
    """Endpoints that carried MCP messages, in order of first appearance."""
    seen: dict[str, None] = {}
    for exchange in ctx.log.http_exchanges():
        if exchange.messages and not is_well_known(exchange.request):
            seen.setdefault(endpoint_of(exchange), None)
    return list(seen)


def served_with_result(exchange: HttpExchange) -> bool:
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
    return ctx.view(_find_use)


def _find_use(ctx: Context) -> AuthUse:
    endpoints: dict[str, str] = {}
    for exchange in ctx.log.http_exchanges():
        response = exchange.response
        if response is None or response.status not in (401, 403) or is_well_known(exchange.request):
            continue
        endpoint = endpoint_of(exchange)
        if response.status == 401:
            endpoints.setdefault(endpoint, f"{exchange.request.method} {exchange.request.path} got HTTP 401")
        elif response.status == 403 and challenges_of(response.headers).bearer is not None:
            endpoints.setdefault(endpoint, f"{exchange.request.method} {exchange.request.path} got a Bearer 403")
    published = {origin_of(doc.url) for doc in prm_documents(ctx)}
    for endpoint in _mcp_endpoints(ctx):
        if origin_of(endpoint) in published:
            endpoints.setdefault(endpoint, "Protected Resource Metadata is published for its origin")
    if endpoints:
        return AuthUse(endpoints)
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is not None and request.kind is Kind.REQUEST and presented(exchange.request).anonymous:
            if served_with_result(exchange):
                return AuthUse(
                    {},
                    f"authorization is not in use: {endpoint_of(exchange)} served {request.method} without "
                    "credentials, and no Protected Resource Metadata was found",
                )
    return AuthUse(
        {},
        "the traffic shows no authorization in use: no 401, no Bearer challenge and no Protected Resource Metadata",
    )


OWN_SCHEME = (
    "protects itself with a scheme of its own (a 401 naming no resource_metadata, no Protected Resource Metadata at "
    "either well-known URI); authorization is optional in MCP and its OAuth profile only a SHOULD for such a server"
)


def own_scheme(ctx: Context) -> dict[str, str]:
    """Endpoints that protect themselves with a scheme of their own, with the reason (AUTH-AND-BEHAVIOUR §0.3.3).

    One whose well-known URIs were not both fetched is not among them: the traffic cannot tell."""
    return ctx.view(_find_own_scheme)


def _find_own_scheme(ctx: Context) -> dict[str, str]:
    use = auth_use(ctx)
    tried = {doc.url: doc for doc in prm_documents(ctx, served=False)}
    published = {home_origin(doc, ctx) for doc in prm_documents(ctx)}
    named = {endpoint_of(exchange) for exchange in challenged_metadata_urls(ctx).values()}
    refused: set[str] = set()
    for exchange in ctx.log.http_exchanges():
        if exchange.response is not None and exchange.response.status == 401 and not is_well_known(exchange.request):
            refused.add(endpoint_of(exchange))
    found: dict[str, str] = {}
    for endpoint in use.endpoints:
        if endpoint not in refused or endpoint in named or origin_of(endpoint) in published:
            continue
        if all(url in tried for _kind, url in prm_candidates(endpoint)):
            found[endpoint] = f"{endpoint} {OWN_SCHEME}"
    return found


@grading("own-auth-scheme", Severity.SHOULD)
def graded_for_an_own_scheme(ctx: Context, finding: Finding) -> str | None:
    """Why a failure of one of the OAuth profile's items counts as a recommendation here, if it does."""
    found = own_scheme(ctx)
    if not found:
        return None
    subject = finding.subject
    exchange = ctx.log.get(subject.exchange) if isinstance(subject, Message) else subject
    if exchange is None:
        return next(iter(found.values())) if set(found) == set(auth_use(ctx).endpoints) else None
    if not isinstance(exchange, HttpExchange) or served_with_result(exchange):
        return None  # a credential served that should have been refused fails under any scheme
    if prm_kind(exchange.request.url) is not None or exchange.request.url in challenged_metadata_urls(ctx):
        origin = origin_of(exchange.request.url)
        return next((why for endpoint, why in found.items() if origin_of(endpoint) == origin), None)
    return found.get(endpoint_of(exchange))


def deliberate(exchange: HttpExchange) -> bool:
    """Sent malformed or without credentials on purpose by the active suite."""
    return exchange.probe is not None and exchange.probe.invalid


PROTOCOL_REFUSALS = frozenset(
    {
        ErrorCode.PARSE_ERROR,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.METHOD_NOT_FOUND,
        ErrorCode.INVALID_PARAMS,
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)
"""JSON-RPC error codes that name what is wrong with a request's protocol, not with its credentials."""
_NEGOTIATION_STATUSES = {406: "its Accept header", 415: "its Content-Type", 421: "its Host"}


def otherwise_malformed(exchange: HttpExchange) -> str | None:
    """Why a request without credentials says nothing of how the server treats credentials, if it does not.

    A status-code requirement judges only requests that are otherwise well-formed: a server may refuse
    the first fault it finds, so a ``400`` for a bad version is no refusal of the missing token. The
    suite's probes say it themselves (malformed on purpose, or naming another version, and not a
    credential case); in anyone else's traffic the answer says it: ``406``/``415``/``421`` refuse a
    header, and a ``4xx`` whose JSON-RPC error is a protocol code names the protocol fault."""
    probe = exchange.probe
    if probe is not None and probe.case.credential is None and (probe.invalid or probe.off_version):
        return f"the suite's {probe.case.name} probe is malformed on purpose ({probe.case.sends})"
    if probe is not None:
        return None
    status = status_of(exchange)
    if status in _NEGOTIATION_STATUSES:
        return f"HTTP {status} refused {_NEGOTIATION_STATUSES[status]}"
    if 400 <= status < 500 and status not in (401, 403):
        for message in exchange.response_messages:
            code = message.error_code if message.kind is Kind.ERROR else None
            if code in PROTOCOL_REFUSALS and not isinstance(code, bool):
                return f"HTTP {status} with error {code} names a fault of the request's protocol"
    return None


def credential_tag(exchange: HttpExchange) -> Credential | None:
    """What a credential case presented (``None`` for any other exchange)."""
    probe = exchange.probe
    return probe.case.credential if probe is not None else None


def gated_http_exchanges(ctx: Context) -> Iterator[HttpExchange]:
    """HTTP exchanges with an MCP server that pass the running check's gates (a client's OAuth flow
    steps, sent to its authorization server, are not among them): found once per gate and window."""
    return iter(_gated(ctx).exchanges)


class SentRequest(NamedTuple):
    """One request of :func:`sent_requests`, with what the client-side authorization rules each ask of it."""

    exchange: HttpExchange
    endpoint: str
    """Where it went (:func:`~mcp_assay.wire.traffic.endpoint_of`)."""
    credentials: Presented
    bearer: str | None
    """``credentials.bearer``."""
    deliberate: bool
    """:func:`deliberate`: the suite sent it malformed or without credentials on purpose."""


def sent_requests(ctx: Context) -> list[SentRequest]:
    """The requests of :func:`gated_http_exchanges` with where they went and the credentials they carried (found
    once per gate and window: the client-side authorization rules walk them all, each asking the same)."""
    gated = _gated(ctx)
    if gated.sent is None:
        gated.sent = [
            SentRequest(exchange, endpoint_of(exchange), found, found.bearer, deliberate(exchange))
            for exchange in gated.exchanges
            for found in (presented(exchange.request),)
        ]
    return gated.sent


@dataclass(slots=True)
class _Gated:
    exchanges: list[HttpExchange]
    sent: list[SentRequest] | None = None


class _GatedHttp:
    """What :func:`gated_http_exchanges` and :func:`sent_requests` found, by check gate, for the log as it is (a
    window's authorization checks share a gate or two)."""

    def __init__(self, ctx: Context) -> None:
        self.by_gate: dict[Gate | None, _Gated] = {}


def _gated(ctx: Context) -> _Gated:
    by_gate = ctx.view(_GatedHttp).by_gate
    gate = ctx.check.gate if ctx.check is not None else None
    found = by_gate.get(gate)
    if found is None:
        oauth = ctx.log.is_oauth_step
        found = by_gate[gate] = _Gated(
            [item for item in ctx.exchanges() if isinstance(item, HttpExchange) and not oauth(item)]
        )
    return found


ProtectedRequest = tuple[HttpExchange, Message, Presented]
"""A JSON-RPC request to a protected endpoint: its exchange, the request and the credentials it carried."""


def protected_requests(ctx: Context) -> tuple[Iterator[ProtectedRequest], Finding | None]:
    """Answered JSON-RPC requests to endpoints where authorization is in use, with their exchange and credentials;
    or, when it is in use nowhere, none and the finding that says so."""
    use = auth_use(ctx)
    if not use.endpoints:
        return iter(()), not_applicable(use.reason)
    return _requests_at(ctx, use), None


def _requests_at(ctx: Context, use: AuthUse) -> Iterator[ProtectedRequest]:
    for exchange in gated_http_exchanges(ctx):
        request = exchange.request_message
        if request is None or request.kind is not Kind.REQUEST or exchange.response is None:
            continue
        if endpoint_of(exchange) in use:
            yield exchange, request, presented(exchange.request)


def _controls(ctx: Context, control: Case) -> list[HttpExchange]:
    return [item for item in ctx.log.http_exchanges() if item.probe is not None and item.probe.case is control]


def unattributable(exchange: HttpExchange, ctx: Context) -> str | None:
    """For a suite probe: why its refusal says nothing (no served control on both sides); ``None`` if it does."""
    probe = exchange.probe
    if probe is None:
        return None
    control = probe.case.control or CONTROL  # the stub-token cases bracket with a stub-minted control
    if probe.case.credential is None or probe.case is control:
        return None
    which = "with the run's own credentials" if control is CONTROL else "with a valid token from the stub"
    controls = _controls(ctx, control)
    sent = exchange.request.time
    before = [item for item in controls if item.request.time < sent]
    after = [item for item in controls if item.request.time > sent]
    if not before or not after:
        return (
            f"no control request {which} on both sides of this probe, so its refusal "
            "cannot be told apart from a server that refuses everything"
        )
    for neighbour in (before[-1], after[0]):
        if not served_with_result(neighbour):
            status = neighbour.response.status if neighbour.response is not None else "no answer"
            return (
                f"the control request {which} got HTTP {status} next to this probe "
                "(lockout, rate limit or an expired token?), so its refusal is not attributable"
            )
    return None


def refusal_finding(exchange: HttpExchange, ctx: Context, subject: Message | HttpExchange, detail: str) -> Finding:
    """A pass for a refusal, unless the probe's controls were not served."""
    why = unattributable(exchange, ctx)
    return unverified(why, subject) if why is not None else passed(subject, detail)


def anonymous_refusal(exchange: HttpExchange, ctx: Context, subject: Message | HttpExchange, detail: str) -> Finding:
    """A pass for a 401 to a request without credentials: the controls, where there are some, only add to it."""
    if exchange.probe is None or exchange.probe.case.credential is None:
        return passed(subject, detail)
    if unattributable(exchange, ctx) is None:
        return passed(subject, f"{detail}; the same request with the run's own credentials was served")
    return passed(subject, f"{detail} (a request without credentials owes a 401 whatever the server does with tokens)")


def variant_of(exchange: HttpExchange, default: str) -> str:
    """The words for what a credential case presented, for findings."""
    variant = exchange.probe.facts.variant if exchange.probe is not None else None
    return variant or default


def status_of(exchange: HttpExchange) -> int:
    return exchange.response.status if exchange.response is not None else 0


def rejected_in_jsonrpc(exchange: HttpExchange) -> bool:
    return _answered_2xx(exchange) and any(m.kind is Kind.ERROR for m in exchange.response_messages)


def prm_subjects(ctx: Context, *, served: bool = True) -> tuple[AuthUse, list[Document], Finding | None]:
    """The PRM fetches for origins where authorization is in use, or the finding that says why there are none.

    With ``served``, a log whose fetches all failed is not verified, blocked by AUTH-01."""
    use = auth_use(ctx)
    if not use.endpoints:
        return use, [], not_applicable(use.reason)
    origins = {origin_of(endpoint) for endpoint in use.endpoints}
    documents = [doc for doc in prm_documents(ctx, served=False) if home_origin(doc, ctx) in origins]
    if not documents:
        return use, [], unverified(f"no Protected Resource Metadata was fetched in the traffic ({NOT_CAPTURED})")
    if served and not any(doc.problem() is None for doc in documents):
        return use, [], unverified("no PRM URL served the document", blocked_by="AUTH-01")
    return use, documents, None


def prm_bodies(ctx: Context) -> Generator[Finding, None, tuple[AuthUse, list[tuple[Document, dict[str, Any]]]]]:
    """The served PRM documents of :func:`prm_subjects` with their JSON objects, the opening of every rule that
    judges their contents: ``use, bodies = yield from prm_bodies(ctx)`` yields the finding that says why there are
    none (and then returns no bodies)."""
    use, documents, reason = prm_subjects(ctx)
    if reason is not None:
        yield reason
        return use, []
    return use, [(doc, doc.body) for doc in documents if doc.body is not None]


def challenge_exchanges(ctx: Context) -> Iterator[tuple[HttpExchange, Challenges]]:
    """Exchanges answered 401, or 403 with a challenge, with their parsed challenges."""
    for exchange in gated_http_exchanges(ctx):
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
