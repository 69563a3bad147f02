"""Behaviour (BEH-03..05): what a principal is offered, and that a refusal changed nothing.

Each principal's ``tools/list`` offers exactly the tools the user's expected table names for it;
a call the server must refuse (a tool the principal may not use, an argument the schema forbids,
a bad or missing credential, a routing header naming another tool, an unknown tool) leaves storage
as it was — a refusal that answers politely after doing the work fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mcp_assay.cases import NO_FACTS, Facts, Phase, Refusal
from mcp_assay.cases import behaviour as behaviour_cases
from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.use import protected_requests
from mcp_assay.spec.rules.behaviour.cases import (
    BehaviourCase,
    answer_of,
    baseline_problem,
    cases,
    first_answer,
    movement,
    summarised,
)
from mcp_assay.spec.rules.shared.reads import ANY_BEHAVIOUR
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import Kind, Message

NO_DIFFERING_LISTS = (
    "no two principals' tools/list results were captured in one era, or they offered the same tools: name them in "
    "expect.tools_by_principal"
)
NO_HIDDEN_CALL = (
    "no tool was called as a principal whose tools/list leaves it out: configure write_tools.<tool>.refusals."
    "principal_without_scope and that principal in expect.tools_by_principal"
)
NO_FORGED_CALL = (
    "no write tool was called with a forged token between witness reads: configure write_tools with a witness "
    "(see the walkthrough) for an HTTP target whose calls carry a credential"
)

__all__ = [
    "per_principal_lists_are_private",
    "forbidden_arguments_are_not_accepted",
    "hidden_tools_are_not_callable",
    "invalid_tokens_have_no_side_effect",
    "principals_are_offered_the_expected_tools",
    "refused_calls_change_nothing",
]


def _advertised_schema(tool: str, ctx: Context) -> dict[str, Any] | None:
    """The inputSchema of ``tool`` from any tools/list result in the log (the latest wins)."""
    found: dict[str, Any] | None = None
    for message in ctx.log.messages():
        if message.kind is not Kind.RESULT or not isinstance(message.result, dict):
            continue
        request = ctx.log.request_of(message)
        if request is None or request.method != "tools/list":
            continue
        tools = message.result.get("tools")
        for item in tools if isinstance(tools, list) else ():
            if isinstance(item, dict) and item.get("name") == tool and isinstance(item.get("inputSchema"), dict):
                found = item["inputSchema"]
    return found


def _forbidden(extra: list[str], schema: Mapping[str, Any] | None) -> tuple[bool, str]:
    """Whether the schema forbids every extra argument, and if not, why not."""
    if schema is None:
        return False, "no tools/list result describes the tool, so its inputSchema is unknown"
    raw = schema.get("properties")
    properties: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    allowed = [name for name in extra if name in properties]
    if allowed:
        return False, f"its inputSchema defines {', '.join(allowed)}, so the arguments are not forbidden"
    if schema.get("additionalProperties") is not False or schema.get("patternProperties"):
        return False, "its inputSchema does not set additionalProperties: false, so extra arguments are allowed"
    return True, ""


def _facts(request: Message, case: BehaviourCase) -> Facts:
    probe = case.probe_of(request)
    return probe.facts if probe is not None else NO_FACTS


def _extra(request: Message, case: BehaviourCase) -> list[str]:
    return list(_facts(request, case).extra or ())


@log_check(
    requirements="BEH-04", level=Level.SHOULD, subject="tool lists captured per principal", follows=ANY_BEHAVIOUR
)
def principals_are_offered_the_expected_tools(ctx: Context) -> Iterator[Finding]:
    """Each principal's tools/list offers exactly the tools the user's expected table names for it.

    Triggered by the behaviour cases' ``principal-list`` requests (one walk per principal of
    ``expect.tools_by_principal``, in every era). A tool offered beyond the table — a write tool
    shown to a reader — and a tool the table expects but the list leaves out are both findings."""
    return summarised(_principals_are_offered_the_expected_tools(ctx))


def _offered(requests: list[Message], ctx: Context) -> tuple[list[str], str | None]:
    """The tool names a principal's tools/list pages offered, and the answer that stopped the walk, if any."""
    offered: list[str] = []
    for request in requests:
        answer = answer_of(request, ctx)
        if answer.kind != "success" or answer.message is None:
            return offered, answer.text
        tools = answer.message.result.get("tools") if isinstance(answer.message.result, dict) else None
        offered += [t["name"] for t in tools or () if isinstance(t, dict) and isinstance(t.get("name"), str)]
    return offered, None


def _principals_are_offered_the_expected_tools(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    expected = index.expected or {}
    for case in index.by_id.values():
        requests = case.sent(behaviour_cases.PRINCIPAL_LIST)
        if not requests:
            continue
        principal = case.principal
        wanted = expected.get(principal)
        if wanted is None:
            continue
        offered, refused = _offered(requests, ctx)
        subject = first_answer(requests[0], ctx) or requests[0]
        if refused is not None and not offered:
            if wanted:
                yield failed(subject, f"{case.lane}: tools/list as {principal} answered {refused}; expected {wanted}")
            else:
                yield passed(subject)
            continue
        extra = sorted(set(offered) - set(wanted))
        missing = sorted(set(wanted) - set(offered))
        if extra:
            yield failed(
                subject,
                f"{case.lane}: {principal} is offered {', '.join(extra)}, which the expected table does not list "
                f"for {principal}",
            )
        if missing:
            yield failed(subject, f"{case.lane}: {principal} is not offered {', '.join(missing)}, which it expects")
        if not extra and not missing:
            yield passed(subject, f"{case.lane}: {principal} is offered {', '.join(sorted(offered)) or 'no tools'}")


def _refusal_cases(ctx: Context) -> Iterator[tuple[BehaviourCase, Message]]:
    for case in cases(ctx).with_phase(Phase.REFUSAL):
        for request in case.sent(*behaviour_cases.REFUSALS.values()):
            if request.kind is Kind.REQUEST:
                yield case, request


def _what(case: BehaviourCase, request: Message) -> str:
    tool = case.tool
    kind = case.facts.refusal
    if kind is Refusal.EXTRA_ARGUMENTS:
        return f"tools/call {tool} with the forbidden argument(s) {', '.join(_extra(request, case)) or '?'}"
    if kind is Refusal.INVALID_TOKEN:
        return f"tools/call {tool} with an invalid token"
    if kind is Refusal.ANONYMOUS:
        return f"tools/call {tool} without credentials"
    if kind is Refusal.MISMATCHED_NAME:
        header = _facts(request, case).mcp_name or "another tool"
        return f"tools/call {tool} under an Mcp-Name header naming {header}"
    if kind is Refusal.UNKNOWN_TOOL:
        called = request.params.get("name") if isinstance(request.params, dict) else None
        return f"tools/call of the unknown tool {called or '?'} with {tool}'s arguments"
    return f"tools/call {tool} as {case.principal}, who must not be able to use it"


@log_check(requirements="BEH-05", level=Level.MUST, subject="refused calls with witness reads", follows=ANY_BEHAVIOUR)
def refused_calls_change_nothing(ctx: Context) -> Iterator[Finding]:
    """A call that must be refused changes nothing in storage.

    The refusals (AUTH-AND-BEHAVIOUR R1..R6): an argument the strict schema forbids, a principal
    without the scope, an invalid token and no credentials at all (HTTP), an ``Mcp-Name``
    header naming another tool than the body (2026 HTTP), and an unknown tool name carrying the
    write tool's arguments.

    Triggered by the behaviour cases' ``refusal`` calls: the witness is read before the call and
    ``settle_ms`` after it. A refusal is proved with storage, never with the answer: a polite
    error after doing the work fails. Not verified unless the write tool's calibration moved the
    same witness in the same era and transport."""
    return summarised(_refused_calls_change_nothing(ctx))


def _refused_calls_change_nothing(ctx: Context, kinds: frozenset[Refusal] | None = None) -> Iterator[Finding]:
    index = cases(ctx)
    for case, request in _refusal_cases(ctx):
        if kinds is not None and case.facts.refusal not in kinds:
            continue
        problem = baseline_problem(case, index)
        if problem is not None:
            yield unverified(f"{case.lane}: {problem}", request)
            continue
        if case.facts.refusal is Refusal.EXTRA_ARGUMENTS:
            forbidden, why = _forbidden(_extra(request, case), _advertised_schema(case.tool, ctx))
            if not forbidden:
                yield unverified(f"{case.lane}: {case.tool}: {why}", request)
                continue
        moved = movement(case, index)
        answer = answer_of(request, ctx)
        if moved.problem is not None:
            yield unverified(f"{case.lane}: {moved.problem}", request)
        elif moved.moved:
            yield failed(
                request,
                f"{case.lane}: {_what(case, request)} was answered with {answer.text}, yet {moved.describe()}: "
                "the call wrote although it must be refused",
            )
        else:
            yield passed(request, f"{case.lane}: {_what(case, request)}: {answer.text}; {moved.describe()}")


@log_check(
    requirements="AUTH-21",
    level=Level.MUST,
    subject="write calls with an invalid token, with witness reads",
    follows=ANY_BEHAVIOUR,
)
def invalid_tokens_have_no_side_effect(ctx: Context) -> Iterator[Finding]:
    """A write tool called with an invalid token changes nothing in storage: the token is checked first.

    Triggered by the behaviour cases' forged-token refusal (BEH-05 R3): the write tool's own call
    with every secret in its credentials replaced, between two witness reads. A server that runs the
    handler and only then fails the request fails, whatever it answered."""
    _, not_in_use = protected_requests(ctx)
    if not_in_use is not None:
        return iter([not_in_use])
    findings = list(summarised(_refused_calls_change_nothing(ctx, frozenset({Refusal.INVALID_TOKEN}))))
    if not findings:
        findings = [unverified(NO_FORGED_CALL)]
    return iter(findings)


@log_check(
    requirements="AUTH-25",
    level=Level.SHOULD,
    subject="tools/list results of principals offered different tools",
    features={"cache_hints"},
    follows=ANY_BEHAVIOUR,
)
def per_principal_lists_are_private(ctx: Context) -> Iterator[Finding]:
    """tools/list results that differ from one principal to another are marked cacheScope "private".

    Triggered by the behaviour cases' ``principal-list`` walks: where two principals are offered
    different tools in the same era and transport, every page of their lists must say ``private``;
    a ``public`` list lets a shared cache hand one principal's tools to another."""
    _, not_in_use = protected_requests(ctx)
    if not_in_use is not None:
        return iter([not_in_use])
    findings = list(summarised(_per_principal_lists_are_private(ctx)))
    return iter(findings or [unverified(NO_DIFFERING_LISTS)])


def _per_principal_lists_are_private(ctx: Context) -> Iterator[Finding]:
    lanes: dict[tuple[Any, Any], list[tuple[str, list[str], list[Message]]]] = {}
    for case in cases(ctx).by_id.values():
        requests = case.sent(behaviour_cases.PRINCIPAL_LIST)
        revision = ctx.revision(requests[0]) if requests else None
        if revision is None or not revision.has("cache_hints"):
            continue  # an older era's lists have no cache scope
        offered, refused = _offered(requests, ctx)
        if refused is None:
            key = (case.facts.lane, case.facts.transport)
            lanes.setdefault(key, []).append((case.principal, offered, requests))
    for (era, transport), listed in lanes.items():
        if len({frozenset(offered) for _, offered, _ in listed}) < 2:
            continue
        for principal, _, requests in listed:
            for request in requests:
                answer = first_answer(request, ctx)
                result = answer.result if answer is not None and isinstance(answer.result, dict) else {}
                scope = result.get("cacheScope")
                where = f"{era} over {transport}: tools/list as {principal}"
                if scope == "private":
                    yield passed(answer, f"{where} is marked private")
                else:
                    yield failed(answer, f"{where} differs from another principal's yet says cacheScope {scope!r}")


@log_check(
    requirements="AUTH-24",
    level=Level.MUST,
    subject="calls of a tool the caller's tools/list leaves out",
    follows=ANY_BEHAVIOUR,
)
def hidden_tools_are_not_callable(ctx: Context) -> Iterator[Finding]:
    """A tool left out of a principal's tools/list cannot be called by that principal either.

    Triggered by the behaviour cases' call of a write tool as a principal without the scope (BEH-05
    R2), judged against that principal's own tools/list from the same era and transport. Hiding a
    tool is not protecting it: a successful result fails; an error, an ``isError`` result or an
    HTTP refusal passes. Not verified when the principal's list was not captured or offers the tool."""
    _, not_in_use = protected_requests(ctx)
    if not_in_use is not None:
        return iter([not_in_use])
    findings = list(summarised(_hidden_tools_are_not_callable(ctx)))
    return iter(findings or [unverified(NO_HIDDEN_CALL)])


def _hidden_tools_are_not_callable(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    listings: dict[tuple[Any, Any, Any], BehaviourCase] = {}
    for case in index.by_id.values():
        if case.sent(behaviour_cases.PRINCIPAL_LIST):
            listings[(case.facts.lane, case.facts.transport, case.facts.principal)] = case
    for case, request in _refusal_cases(ctx):
        if case.facts.refusal is not Refusal.PRINCIPAL_WITHOUT_SCOPE:
            continue
        tool, principal = case.tool, case.principal
        listing = listings.get((case.facts.lane, case.facts.transport, case.facts.principal))
        if listing is None:
            yield unverified(f"{case.lane}: no tools/list as {principal} was captured (name {principal} in "
                             "expect.tools_by_principal)", request)  # fmt: skip
            continue
        offered, refused = _offered(listing.sent(behaviour_cases.PRINCIPAL_LIST), ctx)
        if refused is not None and not offered:
            yield unverified(f"{case.lane}: tools/list as {principal} answered {refused}", request)
            continue
        if tool in offered:
            yield unverified(f"{case.lane}: {tool} is offered to {principal}, so calling it says nothing about "
                             "hidden tools (BEH-04 judges the offer)", request)  # fmt: skip
            continue
        answer = answer_of(request, ctx)
        if answer.kind == "success":
            yield failed(request, f"{case.lane}: {tool} is not in {principal}'s tools/list, yet {principal}'s call "
                         f"of it was answered with {answer.text}")  # fmt: skip
        elif answer.kind == "none":
            yield unverified(f"{case.lane}: {principal}'s call of {tool} got {answer.text}", request)
        else:
            yield passed(request, f"{case.lane}: {tool}, hidden from {principal}, refused {principal}: {answer.text}")


@log_check(
    requirements="BEH-03", level=Level.MUST, subject="write calls with forbidden arguments", follows=ANY_BEHAVIOUR
)
def forbidden_arguments_are_not_accepted(ctx: Context) -> Iterator[Finding]:
    """A write tool called with an argument its strict inputSchema forbids does not succeed.

    Triggered by the behaviour cases' ``extra_arguments`` refusal: the tool's advertised schema
    sets ``additionalProperties: false``, and the call adds an argument it does not define. A
    successful result means the input was not validated (the witness reads say whether it also
    wrote); a result with ``isError: true`` or a JSON-RPC error passes (which channel is the
    better one is judged elsewhere)."""
    return summarised(_forbidden_arguments_are_not_accepted(ctx))


def _forbidden_arguments_are_not_accepted(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    for case, request in _refusal_cases(ctx):
        if case.facts.refusal is not Refusal.EXTRA_ARGUMENTS:
            continue
        extra = _extra(request, case)
        forbidden, why = _forbidden(extra, _advertised_schema(case.tool, ctx))
        if not forbidden:
            yield unverified(f"{case.lane}: {case.tool}: {why}", request)
            continue
        answer = answer_of(request, ctx)
        if answer.kind == "none":
            yield unverified(f"{case.lane}: the call got no answer", request)
        elif answer.succeeded:
            moved = movement(case, index)
            storage = f"; {moved.describe()}" if moved.problem is None else ""
            yield failed(
                answer.message or request,
                f"{case.lane}: {_what(case, request)} was accepted ({answer.text}){storage}",
            )
        else:
            yield passed(answer.message or request, f"{case.lane}: {_what(case, request)}: {answer.text}")
