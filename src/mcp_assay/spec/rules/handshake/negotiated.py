"""Keeping to what a 2025 session negotiated (HS-10..15, 17): the version header, capabilities, ping.

From the initialize result on, both sides keep to the negotiated version (``MCP-Protocol-Version``
on every HTTP request; a server rejects an invalid one and tolerates a missing one) and use only
the capabilities both declared; either side answers a ping promptly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp_assay.cases import handshake
from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.handshake._sessions import (
    HANDSHAKE,
    Session,
    all_sessions,
    client_sessions,
    ended_sessions,
)
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.envelopes import answer_to, canonical, is_probe, meta_version
from mcp_assay.spec.rules.shared.headers import request_headers
from mcp_assay.spec.rules.shared.reads import ANY_SESSION
from mcp_assay.spec.rules.versions._eras import known_versions, offered_version
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange, sent_by_assay
from mcp_assay.wire.traffic import endpoint_of

PING_DEADLINE = 5.0
"""Seconds within which a ping answer counts as prompt."""


def _is_legacy_body(exchange: HttpExchange) -> bool:
    request = exchange.request_message
    return request is not None and meta_version(request) is None


def _later_exchanges(session: Session, ctx: Context) -> list[HttpExchange]:
    return [e for e in session.exchanges if e.request.time > session.initialize.time and not sent_by_assay(e)]


@log_check(
    requirements="HS-10",
    level=Level.SHOULD,
    subject="requests in 2025 HTTP sessions",
    **HANDSHAKE,
    transports={"http"},
    because="only HTTP repeats the negotiated version on every request (the MCP-Protocol-Version header)",
    follows=ANY_SESSION,
)
def clients_keep_to_the_negotiated_version(ctx: Context) -> Iterator[Finding]:
    """Requests in a session send MCP-Protocol-Version equal to the negotiated version."""
    for session in client_sessions(ctx):
        version = session.negotiated
        if version is None:
            continue
        for exchange in _later_exchanges(session, ctx):
            header = exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION)
            if header is None:
                continue  # HS-11's finding
            subject = exchange.request_message or exchange
            if header == version:
                yield passed(subject)
            else:
                yield failed(subject, f"MCP-Protocol-Version is {header!r} in a session that negotiated {version}")


@log_check(
    requirements="HS-10",
    level=Level.SHOULD,
    subject="initialize results naming a version no revision defines",
    follows=ANY_SESSION,
)
def clients_leave_a_version_they_cannot_use(ctx: Context) -> Iterator[Finding]:
    """A client whose initialize result names a version no revision defines goes no further with that server.

    The lifecycle page has a client that does not support the version the server chose disconnect,
    and no client supports a version no revision was published under (``--inject version``
    counter-offers one). The client's next message to that place decides: a new ``initialize``
    starts over and passes, anything else (``notifications/initialized``, a request in the session
    or without one) fails; on stdio, closing the connection passes. Nothing more on HTTP is not
    verified: a disconnect leaves no trace there. Requests in another session are another client's,
    and 2026 requests another era's. Not gated on a revision: the session such an answer opens
    belongs to none."""
    known = known_versions(ctx)
    for answer in ctx.log.messages():
        if answer.kind is not Kind.RESULT or not isinstance(answer.result, dict):
            continue
        request = ctx.log.request_of(answer)
        chosen = answer.result.get("protocolVersion")
        if request is None or request.method != "initialize" or is_probe(request, ctx) or not isinstance(chosen, str):
            continue
        if chosen in known or chosen == offered_version(request):
            continue
        following, closed = _after(answer, ctx)
        if following is not None and following.method == "initialize":
            yield passed(request, f"after the server chose {chosen} the client started over ({following.describe()})")
        elif following is not None:
            yield failed(
                request, f"the server chose {chosen}, which no revision defines, and the client went on "
                f"({following.describe()}) instead of disconnecting",
            )  # fmt: skip
        elif closed:
            yield passed(request, f"after the server chose {chosen} the client closed the connection")
        else:
            yield unverified(f"the client sent nothing more after the server chose {chosen}", request)


def _after(answer: Message, ctx: Context) -> tuple[Message | None, bool]:
    """The client's next message to the place ``answer`` came from, and whether a stdio connection closed first."""
    exchange = ctx.log.get(answer.exchange)
    if isinstance(exchange, HttpExchange):
        issued = exchange.response.headers.get(HeaderKey.SESSION_ID) if exchange.response is not None else None
        for other in ctx.log.http_exchanges():
            message = other.request_message
            if other.request.time <= answer.time or sent_by_assay(other) or message is None:
                continue
            if endpoint_of(other) != endpoint_of(exchange) or meta_version(message) is not None:
                continue
            if other.request.headers.get(HeaderKey.SESSION_ID) in (None, issued):
                return message, False
        return None, False
    connection = getattr(exchange, "connection", None)
    for line in ctx.log.stdio_lines():
        if line.connection == connection and line.sender is Side.CLIENT and line.time > answer.time:
            return line.message, False
    closed = any(item.connection == connection and item.time >= answer.time for item in ctx.log.process_exits())
    return None, closed


@log_check(
    requirements="HS-11", level=Level.MUST, subject="requests in 2025 HTTP sessions", **HANDSHAKE, follows=ANY_SESSION
)
def session_requests_carry_the_version_header(ctx: Context) -> Iterator[Finding]:
    """Every HTTP request after initialize (POST, GET, DELETE) carries MCP-Protocol-Version."""
    for session in client_sessions(ctx):
        if session.negotiated is None:
            continue
        for exchange in _later_exchanges(session, ctx):
            subject = exchange.request_message or exchange
            if exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION) is not None:
                yield passed(subject)
            else:
                what = subject.describe() if isinstance(subject, Message) else exchange.request.method
                yield failed(subject, f"{what} in session {session.session_id!r} has no MCP-Protocol-Version header")


@log_check(
    requirements="HS-12",
    level=Level.MUST,
    subject="requests with an invalid version header",
    **HANDSHAKE,
    off_version=True,
    follows=ANY_SESSION,
)
def invalid_version_headers_get_400(ctx: Context) -> Iterator[Finding]:
    """A session request whose MCP-Protocol-Version names no published revision, or one the server does not
    support, gets HTTP 400.

    Triggered by such a request inside a live session: the active suite sends ``1900-01-01``, and (its
    ``published-version-header`` case) a published revision the server declined when a new connection
    offered it in ``initialize``."""
    issued = {session.session_id for session in all_sessions(ctx) if session.session_id is not None}
    if not issued:
        return  # no session id was issued: nothing to judge
    ended = ended_sessions(ctx)
    known = known_versions(ctx) - _declined(ctx)
    for exchange, sid in request_headers(ctx, HeaderKey.SESSION_ID):
        if sid not in issued:
            continue
        header = exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION)
        if header is None or header in known or exchange.response is None:
            continue
        if sid is not None and sid in ended and ended[sid] < exchange.request.time:
            continue  # an ended session answers 404 (HS-21)
        subject = exchange.request_message or exchange
        if exchange.response.status == 400:
            yield passed(subject)
        else:
            yield failed(
                subject,
                f"MCP-Protocol-Version {header!r} was answered with HTTP {exchange.response.status}, expected 400",
            )


def _declined(ctx: Context) -> frozenset[str]:
    """Published revisions the server declined: offered in the suite's ``published-version-header`` initialize
    and answered with another version."""
    declined = set()
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if exchange.probe is None or not exchange.probe.of_case(handshake.PUBLISHED_VERSION_HEADER):
            continue
        if request is None or request.method != "initialize" or not isinstance(request.params, dict):
            continue
        offered = request.params.get("protocolVersion")
        answered = [m.result.get("protocolVersion") for m in exchange.response_messages if isinstance(m.result, dict)]
        if isinstance(offered, str) and any(isinstance(item, str) and item != offered for item in answered):
            declined.add(offered)
    return frozenset(declined)


@log_check(
    requirements="HS-13",
    level=Level.SHOULD,
    subject="requests without a version header",
    **HANDSHAKE,
    off_version=True,
    follows=ANY_SESSION,
)
def missing_version_headers_are_tolerated(ctx: Context) -> Iterator[Finding]:
    """A legacy request with neither MCP-Protocol-Version nor a session is served (as 2025-03-26) or gets 400 (A22)."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        headers = exchange.request.headers
        if request is None or request.kind not in (Kind.REQUEST, Kind.NOTIFICATION) or request.method == "initialize":
            continue
        if (
            not _is_legacy_body(exchange)
            or headers.get(HeaderKey.PROTOCOL_VERSION) is not None
            or headers.get(HeaderKey.SESSION_ID) is not None
        ):
            continue
        if exchange.response is None:
            continue
        status = exchange.response.status
        if 200 <= status < 300 or status == 400:
            yield passed(request)
        else:
            yield failed(request, f"a request without MCP-Protocol-Version got HTTP {status}, neither served nor 400")


def _capabilities_of(session: Session) -> tuple[dict[str, Any], dict[str, Any]]:
    params = session.initialize.params if isinstance(session.initialize.params, dict) else {}
    client = params.get("capabilities")
    result = session.answer.result if session.answer is not None and session.answer.kind is Kind.RESULT else None
    server = result.get("capabilities") if isinstance(result, dict) else None
    return (client if isinstance(client, dict) else {}), (server if isinstance(server, dict) else {})


def _server_message_problem(
    message: Message, client: dict[str, Any], server: dict[str, Any], subscribed: set[str]
) -> str | None:
    """What is wrong with a capability-bound server message ("" when nothing), or ``None`` when it is not bound."""
    params = message.params if isinstance(message.params, dict) else {}
    method = message.method or ""
    if method == "sampling/createMessage":
        sampling = client.get("sampling")
        if not isinstance(sampling, dict):
            return "sampling/createMessage although the client did not declare sampling"
        if ("tools" in params or "toolChoice" in params) and "tools" not in sampling:
            return "sampling/createMessage with tools although the client did not declare sampling.tools"
        return ""
    if method == "roots/list":
        return "" if "roots" in client else "roots/list although the client did not declare roots"
    if method == "elicitation/create":
        elicitation = client.get("elicitation")
        if not isinstance(elicitation, dict):
            return "elicitation/create although the client did not declare elicitation"
        mode = params.get("mode", "form")
        if mode == "url" and "url" not in elicitation:
            return "a URL-mode elicitation although the client declared no elicitation.url"
        if mode == "form" and elicitation and "form" not in elicitation:
            return "a form-mode elicitation although the client declared elicitation without form"
        return ""
    if method.startswith("notifications/") and method.endswith("/list_changed") and method.count("/") == 2:
        family = method.split("/")[1]
        if family == "roots":
            return None  # a client notification
        declared = server.get(family)
        if isinstance(declared, dict) and declared.get("listChanged") is True:
            return ""
        return f"{method} although the server's {family} capability does not set listChanged: true"
    if method == "notifications/resources/updated":
        uri = params.get("uri")
        if uri in subscribed:
            return ""
        return f"notifications/resources/updated for {uri!r}, which the client did not subscribe to"
    return None


@log_check(
    requirements="HS-14", level=Level.MUST, subject="capability-bound server messages", **HANDSHAKE, follows=ANY_SESSION
)
def servers_use_only_negotiated_capabilities(ctx: Context) -> Iterator[Finding]:
    """The server sends sampling, roots, elicitation, list-changed and resource-update messages only as negotiated."""
    for session in all_sessions(ctx):
        client, server = _capabilities_of(session)
        subscribed: set[str] = set()
        for message in session.messages:
            params = message.params if isinstance(message.params, dict) else {}
            if message.sender is Side.CLIENT and message.method == "resources/subscribe":
                subscribed.add(str(params.get("uri")))
            elif message.sender is Side.CLIENT and message.method == "resources/unsubscribe":
                subscribed.discard(str(params.get("uri")))
            if message.sender is not Side.SERVER or message.kind not in (Kind.REQUEST, Kind.NOTIFICATION):
                continue
            problem = _server_message_problem(message, client, server, subscribed)
            if problem is None:
                continue
            yield failed(message, f"the server sent {problem}") if problem else passed(message)


SERVER_CAPABILITY_OF = (
    ("resources/subscribe", ("resources", "subscribe")),
    ("resources/unsubscribe", ("resources", "subscribe")),
    ("tools/", ("tools", None)),
    ("prompts/", ("prompts", None)),
    ("resources/", ("resources", None)),
    ("logging/setLevel", ("logging", None)),
    ("completion/complete", ("completions", None)),
)


def _client_message_problem(message: Message, client: dict[str, Any], server: dict[str, Any]) -> str | None:
    method = message.method or ""
    if method == "notifications/roots/list_changed":
        roots = client.get("roots")
        if isinstance(roots, dict) and roots.get("listChanged") is True:
            return ""
        return "notifications/roots/list_changed although it did not declare roots.listChanged"
    for prefix, (capability, flag) in SERVER_CAPABILITY_OF:
        if method == prefix or (prefix.endswith("/") and method.startswith(prefix)):
            declared = server.get(capability)
            if not isinstance(declared, dict):
                return f"{method} although the server did not declare {capability}"
            if flag is not None and declared.get(flag) is not True:
                return f"{method} although the server did not declare {capability}.{flag}: true"
            return ""
    return None


@log_check(
    requirements="HS-15", level=Level.MUST, subject="capability-bound client messages", **HANDSHAKE, follows=ANY_SESSION
)
def clients_use_only_negotiated_capabilities(ctx: Context) -> Iterator[Finding]:
    """The client uses tools, prompts, resources, subscriptions, logging and completion only as the server declared.

    A session whose result names a version no revision defines negotiated nothing (the client was to
    disconnect, HS-10), so there are no negotiated capabilities to keep to."""
    known = known_versions(ctx)
    for session in all_sessions(ctx):
        if session.answer is None or session.answer.kind is not Kind.RESULT or session.negotiated not in known:
            continue
        client, server = _capabilities_of(session)
        for message in session.messages:
            if message.sender is not Side.CLIENT or message.kind not in (Kind.REQUEST, Kind.NOTIFICATION):
                continue
            if ctx.deliberately_invalid(message) or message.time < session.opened:
                continue
            problem = _client_message_problem(message, client, server)
            if problem is None:
                continue
            yield failed(message, f"the client sent {problem}") if problem else passed(message)


@log_check(requirements="HS-17", level=Level.MUST, subject="ping requests", **HANDSHAKE, follows=ANY_SESSION)
def pings_get_a_prompt_empty_result(ctx: Context) -> Iterator[Finding]:
    """A ping (either direction) is answered promptly with an empty result {}."""
    for request in ctx.messages(kinds={Kind.REQUEST}):
        if request.method != "ping":
            continue
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        who = "the server" if answer.sender is Side.SERVER else "the client"
        if answer.kind is not Kind.RESULT:
            yield failed(answer, f"{who} answered ping with error {error_code(answer)}")
        elif not isinstance(answer.result, dict) or set(answer.result) - {"_meta"}:
            yield failed(answer, f"{who} answered ping with {canonical(answer.result)[:120]}, not an empty result")
        elif answer.time - request.time > PING_DEADLINE:
            yield failed(answer, f"{who} took {answer.time - request.time:.1f} s to answer ping")
        else:
            yield passed(answer)
