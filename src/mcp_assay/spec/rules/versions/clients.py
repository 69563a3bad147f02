"""The client's choice of era (VER-10..14): advertised versions, discover first, and no falling back.

A 2026 client names a version the server advertised, opens a stdio connection with
``server/discover``, stays modern once a modern answer or refusal arrived instead of falling
back to ``initialize``, and remembers that decision instead of rediscovering before every request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.envelopes import answer_to, is_probe, meta_version, place_of, same_client
from mcp_assay.spec.rules.shared.reads import ANY_VERSION
from mcp_assay.spec.rules.versions._eras import (
    MODERN,
    MODERN_ERRORS,
    code_text,
    discover_before,
    modern_requests,
    modern_versions,
    offered_version,
    retry_in_handshake_era,
    supported_versions,
)
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange, sent_by_assay
from mcp_assay.wire.traffic import endpoint_of


@log_check(
    requirements="VER-10", level=Level.SHOULD, subject="requests after a discover", **MODERN, follows=ANY_VERSION
)
def clients_use_an_advertised_version(ctx: Context) -> Iterator[Finding]:
    """After a discover, the client's requests name a version from supportedVersions."""
    for request in modern_requests(ctx):  # the client's requests that name a version in _meta
        version = meta_version(request)
        assert version is not None
        if is_probe(request, ctx):
            continue
        supported = supported_versions(discover_before(ctx, request))
        if supported is None:
            continue
        if version in supported:
            yield passed(request)
        else:
            yield failed(request, f"{request.describe()} names {version}, but discover advertised {supported}")


def _stdio_client_messages(ctx: Context) -> dict[str, list[Message]]:
    by_connection: dict[str, list[Message]] = defaultdict(list)
    for line in ctx.log.stdio_lines():
        if line.sender is Side.CLIENT:
            by_connection[line.connection].append(line.message)
    return by_connection


@log_check(
    requirements="VER-11",
    level=Level.SHOULD,
    subject="stdio connections of 2026 clients",
    **MODERN,
    follows=ANY_VERSION,
)
def stdio_clients_open_with_discover(ctx: Context) -> Iterator[Finding]:
    """A 2026 client's first message to a freshly started stdio server is server/discover."""
    modern = modern_versions(ctx)
    for messages in _stdio_client_messages(ctx).values():
        if not messages or is_probe(messages[0], ctx):
            continue
        if not any(meta_version(message) in modern for message in messages):
            continue
        first = messages[0]
        if first.method == "server/discover":
            yield passed(first)
        else:
            yield failed(first, f"the client opened the stdio connection with {first.describe()}, not server/discover")


def _modern_answer(answer: Message | None) -> bool:
    if answer is None:
        return False
    return answer.kind is Kind.RESULT or error_code(answer) in MODERN_ERRORS


@log_check(requirements="VER-12", level=Level.MUST_NOT, subject="stdio discover probes", **MODERN, follows=ANY_VERSION)
def stdio_clients_stay_modern_after_a_modern_answer(ctx: Context) -> Iterator[Finding]:
    """A stdio client that got a DiscoverResult or a modern error never falls back to initialize.

    An ``initialize`` offering a version from a ``-32022`` whose ``data.supported`` lists only
    handshake-era versions is the retry VER-05 asks for, not a fallback."""
    for messages in _stdio_client_messages(ctx).values():
        for index, request in enumerate(messages):
            if request.method != "server/discover" or request.kind is not Kind.REQUEST or is_probe(request, ctx):
                continue
            answer = answer_to(request, ctx)
            if not _modern_answer(answer) or answer is None:
                continue
            fallback = [m for m in messages[index + 1 :] if m.method == "initialize" and m.time > answer.time]
            if not fallback:
                yield passed(request, f"discover was answered with {code_text(answer)}; the client stayed modern")
            elif retry_in_handshake_era(answer, fallback[0], ctx):
                offered = offered_version(fallback[0])
                yield passed(request, f"-32022 listed only handshake-era versions; the client retried in {offered}")
            else:
                yield failed(
                    request, f"the client sent initialize after discover was answered with {code_text(answer)}"
                )


def _next_client_exchange(exchange: HttpExchange, request: Message, ctx: Context) -> HttpExchange | None:
    """The client's next request to the endpoint, on whatever connection its HTTP stack picks after a 4xx (one
    naming another ``clientInfo`` is another client's)."""
    after = exchange.response.time if exchange.response is not None else exchange.request.time
    for other in ctx.log.http_exchanges():
        message = other.request_message
        if other.request.time <= after or sent_by_assay(other) or message is None:
            continue
        if endpoint_of(other) != endpoint_of(exchange) or not same_client(message, request):
            continue
        return other
    return None


@log_check(
    requirements="VER-13", level=Level.SHOULD, subject="modern refusals to HTTP clients", **MODERN, follows=ANY_VERSION
)
def http_clients_stay_modern_after_a_modern_refusal(ctx: Context) -> Iterator[Finding]:
    """After a 400 with -32020/-32021/-32022 (or 404 with -32601) the HTTP client stays modern, no initialize.

    The finding names the refused request (refused by the server, or by mcp-assay's ``--inject``) and
    judges the client's next request to the endpoint, on any connection.
    An ``initialize`` offering a version from a ``-32022`` whose ``data.supported`` lists only
    handshake-era versions is the retry VER-05 asks for, not a fallback."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if sent_by_assay(exchange) or request is None or meta_version(request) is None or exchange.response is None:
            continue
        status = exchange.response.status
        errors = [m for m in exchange.response_messages if m.kind is Kind.ERROR]
        codes = [error_code(m) for m in errors]
        modern = (status == 400 and any(code in MODERN_ERRORS for code in codes)) or (
            status == 404 and ErrorCode.METHOD_NOT_FOUND in codes
        )
        if not modern:
            continue
        refusal = f"HTTP {status} with {code_text(errors[0])}" if errors else f"HTTP {status}"
        following = _next_client_exchange(exchange, request, ctx)
        if following is None or following.request_message is None:
            yield unverified(f"the client sent nothing more to the endpoint after {refusal}", request)
            continue
        after = following.request_message
        if after.method != "initialize" or meta_version(after) is not None:
            yield passed(request, f"after {refusal} the client stayed modern ({after.describe()})")
        elif retry_in_handshake_era(errors[0] if errors else None, after, ctx):
            yield passed(request, f"-32022 listed only handshake-era versions; the client retried in "
                         f"{offered_version(after)} with initialize")  # fmt: skip
        else:
            yield failed(request, f"the client fell back to initialize after {refusal}")


@log_check(requirements="VER-14", level=Level.SHOULD, subject="client request sequences", **MODERN, follows=ANY_VERSION)
def clients_do_not_rediscover_before_every_request(ctx: Context) -> Iterator[Finding]:
    """The client remembers the era decision instead of sending server/discover before every request (heuristic)."""
    sequences: dict[str, list[Message]] = defaultdict(list)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if is_probe(request, ctx):
            continue
        exchange = http_exchange(request, ctx)
        key = place_of(request, ctx) + (
            "#" + exchange.connection if exchange is not None and exchange.connection else ""
        )
        sequences[key].append(request)
    for requests in sequences.values():
        work = [index for index, request in enumerate(requests) if request.method != "server/discover"]
        if len(work) < 3:
            continue
        preceded = [index for index in work if index > 0 and requests[index - 1].method == "server/discover"]
        if len(preceded) == len(work):
            yield failed(
                requests[work[-1]], f"each of the client's {len(work)} requests was preceded by its own server/discover"
            )
        else:
            yield passed(requests[work[-1]])
