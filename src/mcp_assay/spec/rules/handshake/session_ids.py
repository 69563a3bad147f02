"""The 2025 HTTP session id (HS-18..23): issued once, sent on every request, ended with a 404.

A server issues ``Mcp-Session-Id`` (visible ASCII) only with the initialize result; the client
sends it on every later request, re-initializes after a ``404`` for it and names it when it
ends the session with ``DELETE``; a server answers a request without it with ``400`` and one
naming an ended session with ``404``.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.handshake._sessions import HANDSHAKE, all_sessions, client_sessions, ended_sessions
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.envelopes import meta_version
from mcp_assay.spec.rules.shared.headers import request_headers, response_headers
from mcp_assay.spec.rules.shared.reads import ANY_SESSION
from mcp_assay.spec.rules.versions._eras import modern_versions
from mcp_assay.vocabulary.protocol import ErrorCode, HeaderKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange, sent_by_assay
from mcp_assay.wire.traffic import endpoint_of


def _visible_ascii(value: str) -> bool:
    return bool(value) and all(0x21 <= ord(char) <= 0x7E for char in value)


def _issued_session_ids(ctx: Context) -> Iterator[tuple[HttpExchange, str]]:
    modern = modern_versions(ctx)
    for exchange, issued in response_headers(ctx, HeaderKey.SESSION_ID):
        if issued is None or ctx.log.exchange_revision(exchange.id) in modern:
            continue  # no session id issued (or no answer); 2026 responses carrying one are HTTP-33's concern
        if exchange.request.headers.get(HeaderKey.SESSION_ID) != issued:
            yield exchange, issued


def _initialize_result(exchange: HttpExchange) -> Message | None:
    request = exchange.request_message
    if request is None or request.method != "initialize":
        return None
    return next((m for m in exchange.response_messages if m.kind is Kind.RESULT), None)


@log_check(requirements="HS-18", level=Level.MUST, subject="issued session ids", **HANDSHAKE, follows=ANY_SESSION)
def session_ids_are_visible_ascii(ctx: Context) -> Iterator[Finding]:
    """A session id issued with the InitializeResult consists of visible ASCII only."""
    for exchange, issued in _issued_session_ids(ctx):
        result = _initialize_result(exchange)
        if result is None:
            continue
        if _visible_ascii(issued):
            yield passed(result)
        else:
            yield failed(result, f"the session id {issued!r} is not only visible ASCII (0x21-0x7E)")


@log_check(requirements="HS-18", level=Level.SHOULD, subject="issued session ids", **HANDSHAKE, follows=ANY_SESSION)
def session_ids_come_only_with_the_initialize_result(ctx: Context) -> Iterator[Finding]:
    """A session id is issued on the response carrying the InitializeResult, not on other answers.

    The transport page names that response as the place a session id is assigned without saying it may
    appear nowhere else, so a fresh id minted on another answer (e.g. a 400 refusal) is a SHOULD-level finding.
    """
    for exchange, issued in _issued_session_ids(ctx):
        result = _initialize_result(exchange)
        if result is not None:
            yield passed(result)
            continue
        request = exchange.request_message
        subject: Message | HttpExchange = request or exchange
        what = request.describe() if request is not None else f"{exchange.request.method} {exchange.request.path}"
        assert exchange.response is not None
        yield failed(subject, f"the response to {what} (HTTP {exchange.response.status}) issued session id {issued!r}")


@log_check(
    requirements="HS-19",
    level=Level.MUST,
    subject="requests after a session was issued",
    **HANDSHAKE,
    follows=ANY_SESSION,
)
def clients_send_the_session_id_on_every_request(ctx: Context) -> Iterator[Finding]:
    """Once a session id was issued, the client's later legacy requests to that endpoint carry Mcp-Session-Id."""
    modern = modern_versions(ctx)
    issued_at: dict[str, float] = {}
    for session in client_sessions(ctx):
        if session.session_id is not None:
            issued_at.setdefault(session.place, session.opened)
    if not issued_at:
        return  # no session id was issued: nothing to judge
    for exchange in ctx.log.http_exchanges():
        place = endpoint_of(exchange)
        if place not in issued_at or exchange.request.time <= issued_at[place] or sent_by_assay(exchange):
            continue
        request = exchange.request_message
        if request is not None and (request.method == "initialize" or meta_version(request) is not None):
            continue
        if exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION) in modern:
            continue
        subject: Message | HttpExchange = request or exchange
        if exchange.request.headers.get(HeaderKey.SESSION_ID) is not None:
            yield passed(subject)
        else:
            what = request.describe() if request is not None else exchange.request.method
            yield failed(subject, f"{what} was sent without Mcp-Session-Id after the server issued one")


@log_check(
    requirements="HS-20",
    level=Level.SHOULD,
    subject="legacy requests without a session id",
    **HANDSHAKE,
    off_version=True,
    follows=ANY_SESSION,
)
def sessionless_requests_get_400(ctx: Context) -> Iterator[Finding]:
    """A server that issues session ids answers a non-initialize legacy request lacking Mcp-Session-Id with 400.

    Triggered by such a request (the active suite sends one after a session was issued)."""
    issued_at: dict[str, float] = {}
    for session in all_sessions(ctx):
        if session.session_id is not None:
            issued_at.setdefault(session.place, session.opened)
    if not issued_at:
        return  # no session id was issued: nothing to judge
    modern = modern_versions(ctx)
    for exchange in ctx.log.http_exchanges():
        place = endpoint_of(exchange)
        request = exchange.request_message
        if place not in issued_at or exchange.request.time <= issued_at[place] or exchange.response is None:
            continue
        if request is None or request.kind is not Kind.REQUEST or request.method == "initialize":
            continue
        if meta_version(request) is not None or exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION) in modern:
            continue
        if exchange.request.headers.get(HeaderKey.SESSION_ID) is not None:
            continue
        if exchange.response.status == 400:
            yield passed(request)
        else:
            yield failed(
                request,
                f"{request.describe()} without Mcp-Session-Id got HTTP {exchange.response.status}, expected 400",
            )


@log_check(
    requirements="HS-21", level=Level.MUST, subject="requests naming an ended session", **HANDSHAKE, follows=ANY_SESSION
)
def ended_sessions_answer_404(ctx: Context) -> Iterator[Finding]:
    """After a session ended (DELETE accepted, or a 404 for it), requests carrying its id get 404.

    Triggered by a request with the old id after the end (the active suite sends one after DELETE)."""
    ended = ended_sessions(ctx)
    if not ended:
        return  # no session ended: nothing to judge
    for exchange, sid in request_headers(ctx, HeaderKey.SESSION_ID):
        if sid is None or sid not in ended or exchange.request.time <= ended[sid] or exchange.response is None:
            continue
        subject = exchange.request_message or exchange
        if exchange.response.status == 404:
            yield passed(subject)
        else:
            yield failed(
                subject, f"a request for the ended session {sid!r} got HTTP {exchange.response.status}, expected 404"
            )


@log_check(requirements="HS-22", level=Level.MUST, subject="404s for a session id", **HANDSHAKE, follows=ANY_SESSION)
def clients_reinitialize_after_a_session_404(ctx: Context) -> Iterator[Finding]:
    """After a 404 to a request that carried a session id, the client starts over with initialize and no session id.

    The finding names the request that got the ``404`` (whether the server or mcp-assay's ``--inject
    session`` sent it) and says what the client did next: its next 2025 use of the endpoint is a new
    ``initialize`` without a session id. A request with the ended id, or one with no id that is not
    that ``initialize``, fails. A ``DELETE`` of the old session is no use of it; requests in another
    session are another client's, and 2026 requests are another era's; a client that sent nothing
    more to the endpoint is not verified."""
    exchanges = ctx.log.http_exchanges()
    modern = modern_versions(ctx)
    for exchange, sid in request_headers(ctx, HeaderKey.SESSION_ID):
        if sid is None or exchange.response is None or exchange.response.status != 404 or sent_by_assay(exchange):
            continue
        if exchange.request.method == "DELETE":
            continue
        if any(error_code(m) == ErrorCode.METHOD_NOT_FOUND for m in exchange.response_messages):
            continue  # an unknown method, not an ended session
        after = exchange.response.time
        following = sorted(
            (
                other
                for other in exchanges
                if other.request.time > after
                and not sent_by_assay(other)
                and endpoint_of(other) == endpoint_of(exchange)
                and other.request.method != "DELETE"
                and other.request.headers.get(HeaderKey.SESSION_ID) in (None, sid)
                and not _modern(other, modern)
            ),
            key=lambda other: other.request.time,
        )
        subject = exchange.request_message or exchange
        if not following:
            yield unverified(f"the client sent nothing more to the endpoint after the 404 for session {sid!r}", subject)
            continue
        first = following[0]
        message = first.request_message
        what = message.describe() if message is not None else first.request.method
        if first.request.headers.get(HeaderKey.SESSION_ID) == sid:
            yield failed(subject, f"after the 404 the client kept using session {sid!r}: {what} ({first.id})")
        elif message is not None and message.method == "initialize":
            yield passed(subject, f"after the 404 the client started over with initialize (exchange {first.id})")
        else:
            yield failed(
                subject, f"after the 404 the client went on without starting over with initialize: {what} ({first.id})"
            )


def _modern(exchange: HttpExchange, modern: frozenset[str]) -> bool:
    request = exchange.request_message
    if request is not None and meta_version(request) is not None:
        return True
    return exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION) in modern


@log_check(
    requirements="HS-23",
    level=Level.SHOULD,
    side=Side.CLIENT,
    subject="session DELETE requests",
    **HANDSHAKE,
    because="the client's half: its DELETE names the session (a server may refuse with 405)",
    follows=ANY_SESSION,
)
def session_deletes_name_the_session(ctx: Context) -> Iterator[Finding]:
    """A client ending a session sends DELETE with its Mcp-Session-Id."""
    modern = modern_versions(ctx)
    for exchange in ctx.log.http_exchanges():
        if exchange.request.method != "DELETE" or sent_by_assay(exchange):
            continue
        if exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION) in modern:
            continue  # DELETE against a 2026 endpoint is HTTP-32's concern
        if exchange.request.headers.get(HeaderKey.SESSION_ID) is not None:
            yield passed(exchange)
        else:
            yield failed(exchange, "DELETE was sent without Mcp-Session-Id, so it names no session to end")
