"""Authorization (AUTH-09..12, 14): ``401`` for unauthenticated requests, and the challenges refusals carry.

A request without credentials to a protected endpoint gets ``401``; a ``401`` (and a ``403`` for
missing scope) carries a ``Bearer`` challenge that names the scopes needed and uses the RFC 6750
error codes.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, not_applicable, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.facts import Challenge, presented
from mcp_assay.spec.rules.auth.use import (
    anonymous_refusal,
    auth_use,
    challenge_exchanges,
    otherwise_malformed,
    protected_requests,
    status_of,
)
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.model import HttpExchange
from mcp_assay.wire.traffic import endpoint_of

RFC6750_ERRORS = frozenset({"invalid_request", "invalid_token", "insufficient_scope"})


@log_check(requirements="AUTH-09", level=Level.MUST, subject="unauthenticated requests", follows=ANY_AUTHORIZATION)
def unauthenticated_requests_get_401(ctx: Context) -> Iterator[Finding]:
    """A protected endpoint answers a request that carries no credentials at all with 401.

    Triggered by any JSON-RPC request without ``Authorization``, token-like query parameter, API key
    or cookie (the suite's ``auth-no-token`` probe) that is otherwise well-formed (a request malformed
    for another reason may be refused for that reason first: :func:`otherwise_malformed`). A served
    (2xx) request means the method is public (AUTH-29 judges that); a 403 to a request with an
    ``Origin`` is an Origin refusal, and a 404/400 to one carrying a session id is judged by AUTH-32."""
    requests, reason = protected_requests(ctx)
    if reason is not None:
        yield reason
        return
    public = 0
    malformed: str | None = None
    for exchange, request, credentials in requests:
        if not credentials.anonymous:
            continue
        why = otherwise_malformed(exchange)
        if why is not None:
            malformed = malformed or why
            continue
        status = status_of(exchange)
        headers = exchange.request.headers
        if status == 401:
            yield anonymous_refusal(exchange, ctx, request, f"{request.method} without credentials got 401")
        elif 200 <= status < 300:
            public += 1
        elif status == 403 and headers.get(HeaderKey.ORIGIN) is not None:
            continue
        elif status in (400, 404) and headers.get(HeaderKey.SESSION_ID) is not None:
            continue
        else:
            yield failed(request, f"{request.method} without credentials got HTTP {status}, not 401")
    if public:
        yield unverified(f"{public} unauthenticated request(s) were served: those methods are public (see AUTH-29)")
    if malformed is not None:
        yield unverified(
            "no well-formed request without credentials was refused or served here; the malformed ones say nothing "
            f"of credentials, a server may refuse the first fault it finds ({malformed})"
        )


@log_check(requirements="AUTH-10", level=Level.MUST, subject="401 and scope 403 answers", follows=ANY_AUTHORIZATION)
def refusals_carry_a_bearer_challenge(ctx: Context) -> Iterator[Finding]:
    """Every 401, and every 403 for missing scope, carries `WWW-Authenticate` with a `Bearer` challenge."""
    use = auth_use(ctx)
    found = False
    for exchange, parsed in challenge_exchanges(ctx):
        found = True
        status = status_of(exchange)
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


def _bearer_401s(ctx: Context) -> tuple[list[tuple[HttpExchange, Challenge]], Finding | None]:
    """401 answers with their Bearer challenge; or, when authorization is in use nowhere or none of the 401s
    has a Bearer challenge, none and the finding that says so."""
    use = auth_use(ctx)
    if not use.endpoints:
        return [], not_applicable(use.reason)
    bare: HttpExchange | None = None
    found: list[tuple[HttpExchange, Challenge]] = []
    for exchange, parsed in challenge_exchanges(ctx):
        if status_of(exchange) != 401:
            continue
        if parsed.bearer is None:
            bare = bare or exchange
        else:
            found.append((exchange, parsed.bearer))
    if not found and bare is not None:
        return [], unverified("the 401 answers carry no Bearer challenge to read", bare, blocked_by="AUTH-10")
    return found, None


@log_check(requirements="AUTH-11", level=Level.SHOULD, subject="401 challenges", follows=ANY_AUTHORIZATION)
def unauthorized_challenges_name_scopes(ctx: Context) -> Iterator[Finding]:
    """The Bearer challenge of a 401 names the scopes needed in a `scope` parameter."""
    challenges, reason = _bearer_401s(ctx)
    if reason is not None:
        yield reason
        return
    for exchange, bearer in challenges:
        if (bearer.get("scope") or "").strip():
            yield passed(exchange)
        else:
            yield failed(exchange, "the 401 Bearer challenge has no scope parameter")


@log_check(requirements="AUTH-12", level=Level.SHOULD, subject="Bearer challenges", follows=ANY_AUTHORIZATION)
def challenge_error_codes_follow_rfc_6750(ctx: Context) -> Iterator[Finding]:
    """Challenge `error` codes follow RFC 6750: none without credentials, `invalid_token` for a refused token.

    A ``403``'s ``insufficient_scope`` belongs to AUTH-14 and is not judged here."""
    challenges, reason = _bearer_401s(ctx)
    if reason is not None:
        yield reason
        return
    for exchange, bearer in challenges:
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


@log_check(requirements="AUTH-14", level=Level.SHOULD, subject="scope refusals", follows=ANY_AUTHORIZATION)
def scope_refusals_carry_a_complete_challenge(ctx: Context) -> Iterator[Finding]:
    """A 403 for missing scope challenges with `error="insufficient_scope"`, `scope` and `resource_metadata`.

    Judged on every 403 that carries a Bearer challenge or names ``insufficient_scope``; the suite
    cannot provoke one without a token lacking scope (which needs a stub authorization server)."""
    use = auth_use(ctx)
    if not use.endpoints:
        yield not_applicable(use.reason)
        return
    for exchange, parsed in challenge_exchanges(ctx):
        if status_of(exchange) != 403 or endpoint_of(exchange) not in use:
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
