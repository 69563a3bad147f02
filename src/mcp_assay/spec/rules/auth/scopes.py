"""Scopes (AUTH-22, AUTH-15, AUTH-23, AUTH-26): an operation needs its scopes, says which, honours hierarchy,
and cannot be unlocked by naming another tool in ``Mcp-Name``.

Triggered by the suite's scope probes (:mod:`mcp_assay.suite.probes.tokens`, with ``stub.tool_scopes``
in the config): each mapped tool is called with a stub token holding every configured scope but
the tool's own (``auth-scope-lacking``) and, for each ``stub.implies`` entry that covers the tool,
with the broad scope alone (``auth-scope-broad``), between calls holding every scope
(``auth-scope-control``). A call the controls do not bracket with a served result proves nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.cases import Case
from mcp_assay.cases import tokens as cases
from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.facts import challenges_of
from mcp_assay.spec.rules.auth.use import (
    gated_http_exchanges,
    protected_requests,
    refusal_finding,
    served_with_result,
    status_of,
    unattributable,
)
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.model import HttpExchange, Probe

__all__ = [
    "tokens_lacking_a_scope_cannot_borrow_another_tools_name",
    "tokens_lacking_an_operations_scopes_do_not_perform_it",
    "tokens_lacking_several_scopes_get_one_challenge_naming_all",
    "tokens_with_a_broad_scope_get_what_it_implies",
]

NO_SCOPE_PROBES = (
    "no tool was called with a stub token lacking its scopes: map tools to the scopes they need in "
    "stub.tool_scopes (and give their --tool-args)"
)


Probed = tuple[HttpExchange, Probe]


def _subjects(ctx: Context, case: Case, none: str, *, several: bool = False) -> tuple[list[Probed], Finding | None]:
    """The exchanges of the scope case ``case`` (``several``: only for tools needing more than one scope), or the
    finding that says why there are none: authorization not in use, else ``none``."""
    _, not_in_use = protected_requests(ctx)
    if not_in_use is not None:
        return [], not_in_use
    found = []
    for exchange in gated_http_exchanges(ctx):
        probe = exchange.probe
        if probe is not None and probe.case is case and exchange.request_message is not None:
            if not several or len(_needs(probe)) > 1:
                found.append((exchange, probe))
    return found, (None if found else unverified(none))


def _performed(exchange: HttpExchange) -> bool:
    """Served with a result that is not a tool error: the operation ran."""
    if not served_with_result(exchange):
        return False
    results = [m.result for m in exchange.response_messages if m.kind is Kind.RESULT and isinstance(m.result, dict)]
    return not any(result.get("isError") is True for result in results)


def _answer(exchange: HttpExchange) -> str:
    if _performed(exchange):
        return f"HTTP {status_of(exchange)}, a result"
    if served_with_result(exchange):
        return f"HTTP {status_of(exchange)}, a result with isError: true"
    errors = [m for m in exchange.response_messages if m.kind is Kind.ERROR]
    return f"HTTP {status_of(exchange)}" + (", a JSON-RPC error" if errors else "")


def _not_performed(exchange: HttpExchange, ctx: Context, what: str, consequence: str) -> Finding:
    """A call that must not run: performed fails; refused passes between served scope controls."""
    request = exchange.request_message or exchange
    if _performed(exchange):
        return failed(request, f"{what} was performed ({_answer(exchange)}){consequence}")
    return refusal_finding(exchange, ctx, request, f"{what} got {_answer(exchange)}")


def _needs(probe: Probe) -> list[str]:
    return list(probe.facts.needs or ())


@log_check(
    requirements="AUTH-22",
    level=Level.MUST,
    families={cases.declare.family},
    subject="tool calls with a token lacking the tool's scopes",
    follows=ANY_AUTHORIZATION,
)
def tokens_lacking_an_operations_scopes_do_not_perform_it(ctx: Context) -> Iterator[Finding]:
    """A tool called with a token that lacks the scopes the tool needs is not performed."""
    probes, reason = _subjects(ctx, cases.SCOPE_LACKING, NO_SCOPE_PROBES)
    if reason is not None:
        yield reason
        return
    for exchange, probe in probes:
        what = f"tools/call {probe.facts.tool} with a token lacking {' '.join(_needs(probe))}"
        yield _not_performed(exchange, ctx, what, "")


@log_check(
    requirements="AUTH-15",
    level=Level.SHOULD,
    families={cases.declare.family},
    subject="scope challenges for operations needing several scopes",
    follows=ANY_AUTHORIZATION,
)
def tokens_lacking_several_scopes_get_one_challenge_naming_all(ctx: Context) -> Iterator[Finding]:
    """For an operation needing several scopes, the one 403 challenge names all of them (not one per retry)."""
    none = "no operation needing several scopes was called without them (map one in stub.tool_scopes)"
    probes, reason = _subjects(ctx, cases.SCOPE_LACKING, none, several=True)
    if reason is not None:
        yield reason
        return
    for exchange, probe in probes:
        request = exchange.request_message or exchange
        needs = _needs(probe)
        response = exchange.response
        bearer = challenges_of(response.headers).bearer if response is not None else None
        if response is None or response.status != 403 or bearer is None:
            yield unverified(f"tools/call {probe.facts.tool} got no 403 scope challenge "
                             f"({_answer(exchange)}); AUTH-14 judges the refusal's form", request)  # fmt: skip
            continue
        named = str(bearer.get("scope") or "").split()
        missing = [scope for scope in needs if scope not in named]
        if missing:
            scope = " ".join(named) or "(none)"
            yield failed(request, f"the 403 for tools/call {probe.facts.tool} names scope {scope}, not "
                         f"{' '.join(missing)}: a client would need one retry per scope")  # fmt: skip
        else:
            yield passed(request, f"the 403 for tools/call {probe.facts.tool} names {' '.join(needs)}")


@log_check(
    requirements="AUTH-23",
    level=Level.MUST,
    families={cases.declare.family},
    subject="tool calls with a broad scope alone",
    follows=ANY_AUTHORIZATION,
)
def tokens_with_a_broad_scope_get_what_it_implies(ctx: Context) -> Iterator[Finding]:
    """A token holding only a broad scope is served for an operation needing a narrower scope it implies."""
    none = "no tool was called holding only a broad scope: name the hierarchy in stub.implies"
    probes, reason = _subjects(ctx, cases.SCOPE_BROAD, none)
    if reason is not None:
        yield reason
        return
    for exchange, probe in probes:
        request = exchange.request_message or exchange
        what = f"tools/call {probe.facts.tool} holding only {probe.facts.broad}"
        if served_with_result(exchange):
            yield passed(request, f"{what} was served")
            continue
        why = unattributable(exchange, ctx)
        if why is not None:
            yield unverified(why, request)
        else:
            yield failed(request, f"{what}, which implies {' '.join(_needs(probe))}, got {_answer(exchange)}")


@log_check(
    requirements="AUTH-26",
    level=Level.MUST,
    families={cases.declare.family},
    subject="tool calls whose Mcp-Name names a tool the token may call",
    features={"per_request_version"},
    follows=ANY_AUTHORIZATION,
)
def tokens_lacking_a_scope_cannot_borrow_another_tools_name(ctx: Context) -> Iterator[Finding]:
    """Authorization cannot be steered by Mcp-Name: a body naming a tool the token lacks the scope for is refused
    (400 with -32020, or a scope refusal), whatever tool the header names."""
    none = "no tool was called under an Mcp-Name naming another tool the token may call (2026 HTTP, stub.tool_scopes)"
    probes, reason = _subjects(ctx, cases.SCOPE_HEADER_ROUTED, none)
    if reason is not None:
        yield reason
        return
    for exchange, probe in probes:
        what = (
            f"tools/call {probe.facts.tool} with a token lacking {' '.join(_needs(probe))}, under Mcp-Name "
            f"{probe.facts.mcp_name},"
        )
        yield _not_performed(exchange, ctx, what, ": authorization followed the header")
