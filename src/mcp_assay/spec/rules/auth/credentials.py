"""Authorization (AUTH-13, 20, 28, 29, 32, 34): what a server does with bad, misplaced or no credentials.

An invalid or expired token gets ``401``, a malformed credential is never served, a token in the
query string is refused, a protected endpoint serves nothing anonymously beyond what a client
needs before it holds a token, and a 2025 session id is neither a credential nor predictable.
The rules judge answers whatever sent the request: a real client seen by the proxy, or the
active suite's ``auth-*`` probes, whose refusals count only when bracketed by served controls.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mcp_assay.cases import Credential
from mcp_assay.cases import behaviour as behaviour_cases
from mcp_assay.recording.redaction import fingerprint
from mcp_assay.spec.checks import Finding, failed, log_check, not_applicable, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.facts import challenges_of, jwt_claims, presented
from mcp_assay.spec.rules.auth.use import (
    anonymous_refusal,
    auth_use,
    credential_tag,
    gated_http_exchanges,
    otherwise_malformed,
    protected_requests,
    refusal_finding,
    rejected_in_jsonrpc,
    served_with_result,
    status_of,
    variant_of,
)
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.model import HttpExchange, probe_case
from mcp_assay.wire.traffic import endpoint_of

PUBLIC_METHODS = frozenset({"server/discover", "initialize"})
"""Methods a client may need before it holds a token: served anonymously, they are only noted (AUTH-29)."""
EXPIRY_SKEW = 60.0


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


@log_check(requirements="AUTH-13", level=Level.MUST, subject="requests with invalid tokens", follows=ANY_AUTHORIZATION)
def invalid_tokens_get_401(ctx: Context) -> Iterator[Finding]:
    """A request presenting an invalid or expired bearer token is answered 401.

    Triggered by the suite's invalid-token probes (a non-JWT bearer string, a garbage three-part
    string, an unsigned ``alg: none`` JWT, an expired JWT), by a bearer token the server answered
    with ``error="invalid_token"``, and by a JWT whose ``exp`` had passed when it was sent."""
    requests, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    for exchange, request, credentials in requests:
        token = credentials.bearer
        if not token:
            continue
        tag = credential_tag(exchange)
        if exchange.probe is not None and tag not in (Credential.MALFORMED, Credential.INVALID):
            continue  # the suite's other requests carry the run's own token, which is not on trial here
        expired = _expired_when_sent(token, exchange)
        if tag not in (Credential.MALFORMED, Credential.INVALID) and not expired and not _refused_token(exchange):
            continue
        status = status_of(exchange)
        if tag is not None:
            what = f"an invalid token ({variant_of(exchange, tag)})"
        elif expired:
            what = f"the expired JWT {fingerprint(token)}"
        else:
            what = f"the token {fingerprint(token)}"
        if status == 401:
            yield refusal_finding(exchange, ctx, request, f"{what} got 401")
        elif served_with_result(exchange):
            yield failed(request, f"{request.method} with {what} was served")
        else:
            yield failed(request, f"{request.method} with {what} got HTTP {status}, not 401")


@log_check(
    requirements="AUTH-20", level=Level.MUST, subject="requests with malformed credentials", follows=ANY_AUTHORIZATION
)
def malformed_credentials_are_not_served(ctx: Context) -> Iterator[Finding]:
    """Malformed credentials (a non-JWT or empty bearer, Basic auth, a garbage token) are never served.

    Triggered by the suite's credential cases that present a malformed credential and by any request
    with a bare ``Authorization: Bearer``. 401 is expected; 400/403/404 or a JSON-RPC error still
    refuse; a 5xx is a failure (the server broke instead of refusing)."""
    requests, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    for exchange, request, credentials in requests:
        tag = credential_tag(exchange)
        if tag is not Credential.MALFORMED and credentials.bearer != "":
            continue
        variant = variant_of(exchange, "an empty bearer token")
        status = status_of(exchange)
        if served_with_result(exchange):
            yield failed(request, f"{request.method} with {variant} was served")
        elif status >= 500:
            yield failed(request, f"{request.method} with {variant} broke the server (HTTP {status})")
        elif status == 401:
            yield refusal_finding(exchange, ctx, request, f"{variant}: 401")
        elif rejected_in_jsonrpc(exchange):
            yield refusal_finding(exchange, ctx, request, f"{variant}: refused at the JSON-RPC layer (HTTP {status})")
        else:
            yield refusal_finding(exchange, ctx, request, f"{variant}: refused with HTTP {status} (401 expected)")


def _refused_without_query(ctx: Context, like: HttpExchange, method: str | None) -> bool | None:
    """Whether a request like ``like`` (same endpoint, method and ``Authorization``, or none) but without
    query-string credentials was refused (True) or served (False); ``None`` when there was none.

    A suite case names its counterpart (:attr:`~mcp_assay.cases.Case.alone`: a recording has the garbage header
    redacted, so its value cannot be compared there)."""
    endpoint, authorization = endpoint_of(like), like.request.headers.get(HeaderKey.AUTHORIZATION)
    alone = like.probe.case.alone if like.probe is not None else None
    verdict: bool | None = None
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is None or request.method != method or endpoint_of(exchange) != endpoint:
            continue
        credentials = presented(exchange.request)
        if alone is not None:
            if probe_case(exchange) is not alone:
                continue
        elif credentials.query or credentials.other or credentials.authorization != authorization:
            continue
        if served_with_result(exchange):
            return False
        if status_of(exchange) == 401:
            verdict = True
    return verdict


@log_check(
    requirements="AUTH-28", level=Level.SHOULD, subject="requests with query-string tokens", follows=ANY_AUTHORIZATION
)
def query_string_tokens_are_refused(ctx: Context) -> Iterator[Finding]:
    """A token sent only in the query string (`access_token`, `token`) is refused (tool policy).

    Triggered by the suite's ``auth-query-*`` probes (the run's own token in the query, with no or a
    garbage ``Authorization``) and by any request whose only credential is a query token. Being served
    counts only when the same method was refused without credentials: otherwise it is simply public."""
    requests, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    for exchange, request, credentials in requests:
        tag = credential_tag(exchange)
        if tag is not Credential.QUERY and not (
            credentials.query and credentials.authorization is None and not credentials.other
        ):
            continue
        names = ", ".join(sorted({name for name, _ in credentials.query})) or "the query"
        if not served_with_result(exchange):
            yield refusal_finding(
                exchange, ctx, request, f"a token in ?{names} was refused (HTTP {status_of(exchange)})"
            )
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


@log_check(requirements="AUTH-29", level=Level.SHOULD, subject="unauthenticated requests", follows=ANY_AUTHORIZATION)
def unauthenticated_requests_are_not_served(ctx: Context) -> Iterator[Finding]:
    """A protected server requires authentication: an unauthenticated `tools/list` (or other request) gets 401.

    ``server/discover`` and ``initialize`` served without credentials are only noted: a client may
    need them before it holds a token. Not applicable when the server shows no authorization at all."""
    requests, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    for exchange, request, credentials in requests:
        if not credentials.anonymous or otherwise_malformed(exchange) is not None:
            continue
        if served_with_result(exchange):
            if request.method in PUBLIC_METHODS:
                yield passed(request, f"{request.method} is served without credentials (allowed before a token)")
            else:
                yield failed(request, f"{request.method} was served without credentials")
        elif status_of(exchange) == 401:
            yield anonymous_refusal(exchange, ctx, request, f"{request.method} without credentials got 401")


@log_check(
    requirements="AUTH-32",
    level=Level.MUST,
    subject="session requests without credentials",
    features={"handshake"},
    follows=ANY_AUTHORIZATION,
)
def session_ids_are_not_credentials(ctx: Context) -> Iterator[Finding]:
    """A 2025 server does not take `Mcp-Session-Id` for a credential: a session request without a token is refused.

    Triggered by a request that carries a session id but no credentials (the suite's
    ``auth-no-token`` probe in a 2025 run sends the run's own session id) and is otherwise well-formed.
    Serving a request in a session its ``initialize`` opened without credentials says nothing: that id
    was never given for a credential, so what the server serves there is public, which AUTH-29 judges."""
    requests, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    anonymous = _opened_without_credentials(ctx)
    for exchange, request, credentials in requests:
        session = exchange.request.headers.get(HeaderKey.SESSION_ID)
        if session is None or not credentials.anonymous or otherwise_malformed(exchange) is not None:
            continue
        if session in anonymous and served_with_result(exchange):
            yield unverified(
                f"{request.method} with a session id and no credentials was served, but that session was opened "
                "without credentials: its id is no credential to take (whether the method is public: AUTH-29)",
                request,
            )
            continue
        status = status_of(exchange)
        if served_with_result(exchange):
            yield failed(request, f"{request.method} with a session id and no credentials was served")
        elif status == 401:
            yield refusal_finding(exchange, ctx, request, f"{request.method} with only a session id got 401")
        else:
            yield refusal_finding(
                exchange,
                ctx,
                request,
                f"{request.method} with only a session id was refused (HTTP {status}, not the 401 AUTH-09 asks for)",
            )


def _opened_without_credentials(ctx: Context) -> frozenset[str]:
    """Session ids a server issued in answer to an ``initialize`` that carried no credentials."""
    found: set[str] = set()
    for exchange in gated_http_exchanges(ctx):
        request, response = exchange.request_message, exchange.response
        if request is None or request.method != "initialize" or response is None:
            continue
        issued = response.headers.get(HeaderKey.SESSION_ID)
        if issued is not None and presented(exchange.request).anonymous:
            found.add(issued)
    return frozenset(found)


@log_check(
    requirements="AUTH-33",
    level=Level.SHOULD,
    subject="another principal's requests in a session",
    features={"handshake"},
    follows=ANY_AUTHORIZATION,
)
def sessions_are_bound_to_their_principal(ctx: Context) -> Iterator[Finding]:
    """A 2025 session belongs to the principal that opened it: another principal's token with its id is refused.

    Triggered by the behaviour cases' ``session-other-principal`` request: ``tools/list`` with a
    second configured principal's credentials and the ``Mcp-Session-Id`` the first one's
    ``initialize`` was given. Being served means a stolen session id is usable with any valid token."""
    _, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    found = False
    for exchange in gated_http_exchanges(ctx):
        probe = exchange.probe
        request = exchange.request_message
        if probe is None or probe.case is not behaviour_cases.SESSION_OTHER_PRINCIPAL or request is None:
            continue
        found = True
        who, owner = probe.facts.principal or "another principal", probe.facts.owner or "its owner"
        if served_with_result(exchange):
            yield failed(request, f"{request.method} as {who} was served inside the session {owner} opened")
        else:
            yield passed(request, f"{request.method} as {who} inside {owner}'s session got HTTP {status_of(exchange)}")
    if not found:
        yield unverified(
            "no request presented one principal's credentials with another's session id; the behaviour cases send "
            "one in a 2025 HTTP run whose config names two principals with tokens"
        )


_DIGITS = re.compile(r"\d+")


@log_check(
    requirements="AUTH-34",
    level=Level.MUST,
    subject="issued session ids",
    features={"handshake"},
    follows=ANY_AUTHORIZATION,
)
def session_ids_are_unpredictable(ctx: Context) -> Iterator[Finding]:
    """2025 session ids are hard to guess: at least 16 characters, and not a counter (heuristic)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    issued: list[tuple[HttpExchange, str]] = []
    for exchange in gated_http_exchanges(ctx):
        session = exchange.response.headers.get(HeaderKey.SESSION_ID) if exchange.response is not None else None
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
