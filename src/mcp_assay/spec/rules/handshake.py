"""The 2025-11-25 handshake and session (HS-): initialize, initialized, and the HTTP session id.

A 2025 session opens with ``initialize`` (the server echoes a version it supports or counters
with another one), the client confirms with ``notifications/initialized``, and from then on both
sides keep to what was negotiated: the version (``MCP-Protocol-Version`` on every HTTP request),
the capabilities, and on Streamable HTTP the ``Mcp-Session-Id`` the server issued, until the
session ends and the id answers ``404``. The rules below rebuild each session from the traffic
(an ``initialize`` on a stdio connection, or the HTTP exchanges carrying the id it issued) and
judge both sides against it; a 2026 exchange never falls under them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.checks import Context, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.jsonrpc import Kind, Message
from mcp_assay.spec.rules._common import error_code, http_exchange
from mcp_assay.spec.rules._envelope import answer_to, canonical, is_probe, memo, meta_version
from mcp_assay.spec.rules._versions import handshake_versions, known_versions, modern_versions
from mcp_assay.traffic import endpoint_of
from mcp_assay.verdicts import Level, Side
from mcp_assay.wire import HttpExchange

PING_DEADLINE = 5.0
"""Seconds within which a ping answer counts as prompt."""

_HANDSHAKE = {"features": {"handshake"}}
_HTTP = {"features": {"handshake"}, "transports": {"http"}}


@dataclass
class _Session:
    """One 2025 session as the traffic shows it."""

    initialize: Message
    answer: Message | None
    transport: str
    place: str
    """The HTTP endpoint, or the stdio connection."""
    session_id: str | None = None
    exchanges: list[HttpExchange] = field(default_factory=list)
    """HTTP exchanges that carried the session id, in capture order (the initialize exchange excluded)."""
    messages: list[Message] = field(default_factory=list)
    """Every message of the session, initialize included, in wire order."""

    @property
    def negotiated(self) -> str | None:
        result = self.answer.result if self.answer is not None and self.answer.kind is Kind.RESULT else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        return version if isinstance(version, str) else None

    @property
    def opened(self) -> float:
        """When the initialize result arrived (or the request left, when it never did)."""
        return self.answer.time if self.answer is not None else self.initialize.time


def _sessions(ctx: Context) -> list[_Session]:
    return memo(ctx, "handshake-sessions", _find_sessions)


def _find_sessions(ctx: Context) -> list[_Session]:
    sessions: list[_Session] = []
    messages = ctx.log.messages()
    by_session_id: dict[str, list[HttpExchange]] = defaultdict(list)
    for item in ctx.log.http_exchanges():
        sid = item.request.headers.get("mcp-session-id")
        if sid is not None:
            by_session_id[sid].append(item)
    by_exchange: dict[str, list[Message]] = defaultdict(list)
    by_connection: dict[str, list[Message]] = defaultdict(list)
    for message in messages:
        by_exchange[message.exchange].append(message)
        if message.transport == "stdio":
            by_connection[ctx.log.session(message) or ""].append(message)
    for request in messages:
        if request.method != "initialize" or request.kind is not Kind.REQUEST or request.sender is not Side.CLIENT:
            continue
        if meta_version(request) is not None:
            continue  # a 2026 envelope on initialize is VER-21/VER-22's business
        answer = answer_to(request, ctx)
        exchange = http_exchange(request, ctx)
        if exchange is not None:
            issued = exchange.response.headers.get("mcp-session-id") if exchange.response is not None else None
            session = _Session(request, answer, "http", endpoint_of(exchange), session_id=issued)
            if issued is not None:
                session.exchanges = [other for other in by_session_id.get(issued, []) if other.id != exchange.id]
                ids = [exchange.id, *(other.id for other in session.exchanges)]
                session.messages = sorted(
                    (m for ident in ids for m in by_exchange.get(ident, [])), key=lambda m: (m.time, m.index)
                )
            else:
                session.messages = list(exchange.messages)
        else:
            connection = ctx.log.session(request) or ""
            session = _Session(request, answer, "stdio", connection)
            session.messages = [m for m in by_connection.get(connection, []) if m.time >= request.time]
        sessions.append(session)
    return sessions


def _client_sessions(ctx: Context) -> list[_Session]:
    """Sessions a client under test opened (the active suite's own sessions say nothing about a client)."""
    return [session for session in _sessions(ctx) if not is_probe(session.initialize, ctx)]


def _ended(ctx: Context) -> dict[str, float]:
    """Session ids the server ended, with the time it became observable (DELETE accepted, or a first 404)."""
    ended: dict[str, float] = {}
    for exchange in ctx.log.http_exchanges():
        sid = exchange.request.headers.get("mcp-session-id")
        if sid is None or exchange.response is None:
            continue
        status = exchange.response.status
        deleted = exchange.request.method == "DELETE" and 200 <= status < 300
        if deleted or status == 404:
            ended.setdefault(sid, exchange.response.time)
    return ended


def _is_legacy_body(exchange: HttpExchange) -> bool:
    request = exchange.request_message
    return request is not None and meta_version(request) is None


# -- HS-01, HS-02, HS-04: opening the session ----------------------------------------------------
@log_check(requirements="HS-01", level=Level.MUST, side=Side.CLIENT, subject="2025 sessions", **_HANDSHAKE)
def initialize_opens_every_session(ctx: Context) -> Iterator[Finding]:
    """initialize is the client's first legacy request (stdio), sent without Mcp-Session-Id (HTTP)."""
    by_connection: dict[str, list[Message]] = defaultdict(list)
    for line in ctx.log.stdio_lines():
        if line.sender is Side.CLIENT and line.probe is None:
            by_connection[line.connection].append(line.message)
    for messages in by_connection.values():
        legacy = [m for m in messages if m.kind is Kind.REQUEST and meta_version(m) is None]
        if not legacy:
            continue
        first = legacy[0]
        if first.method == "initialize":
            yield passed(first)
        elif first.method != "ping":
            yield failed(
                first, f"the client's first legacy request on the connection was {first.describe()}, not initialize"
            )
    for session in _client_sessions(ctx):
        exchange = http_exchange(session.initialize, ctx)
        if exchange is None:
            continue
        carried = exchange.request.headers.get("mcp-session-id")
        if carried is not None:
            yield failed(session.initialize, f"initialize was sent with Mcp-Session-Id {carried!r}")
        else:
            yield passed(session.initialize)


def _implementation_problem(value: Any, what: str) -> str | None:
    if not isinstance(value, dict):
        return f"{what} is missing or not an object"
    missing = [name for name in ("name", "version") if not isinstance(value.get(name), str)]
    return f"{what} lacks a string {' and '.join(missing)}" if missing else None


@message_check(
    requirements="HS-02",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="initialize requests",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    **_HANDSHAKE,
)
def initialize_names_version_capabilities_and_client(message: Message, ctx: Context) -> Finding | None:
    """initialize params hold a string protocolVersion, a capabilities object and clientInfo {name, version}."""
    if message.method != "initialize":
        return None
    params = message.params
    if not isinstance(params, dict):
        return failed(message, "initialize has no params object")
    problems = []
    if not isinstance(params.get("protocolVersion"), str):
        problems.append("protocolVersion is missing or not a string")
    if not isinstance(params.get("capabilities"), dict):
        problems.append("capabilities is missing or not an object")
    info = _implementation_problem(params.get("clientInfo"), "clientInfo")
    if info:
        problems.append(info)
    return failed(message, "; ".join(problems)) if problems else passed(message)


@message_check(
    requirements="HS-04",
    level=Level.MUST,
    side=Side.SERVER,
    subject="initialize results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    **_HANDSHAKE,
)
def initialize_results_name_version_capabilities_and_server(message: Message, ctx: Context) -> Finding | None:
    """The initialize result holds a string protocolVersion, a capabilities object and serverInfo {name, version}."""
    request = ctx.log.request_of(message)
    if request is None or request.method != "initialize" or not isinstance(message.result, dict):
        return None
    result = message.result
    problems = []
    if not isinstance(result.get("protocolVersion"), str):
        problems.append("protocolVersion is missing or not a string")
    if not isinstance(result.get("capabilities"), dict):
        problems.append("capabilities is missing or not an object")
    info = _implementation_problem(result.get("serverInfo"), "serverInfo")
    if info:
        problems.append(info)
    if "instructions" in result and not isinstance(result["instructions"], str):
        problems.append("instructions is not a string")
    return failed(message, "; ".join(problems)) if problems else passed(message)


# -- HS-05, HS-06: version negotiation -----------------------------------------------------------
def _requested(session: _Session) -> str | None:
    params = session.initialize.params
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) else None


def _negotiated_by_server(ctx: Context, sessions: list[_Session], place: str) -> set[str]:
    """Versions the server has echoed in some initialize result (so it supports them)."""
    return {
        session.negotiated
        for session in sessions
        if session.negotiated is not None
        and session.negotiated == _requested(session)
        and (session.transport == "stdio" or session.place == place)
    }


@log_check(requirements="HS-05", level=Level.MUST, side=Side.SERVER, subject="initialize answers", **_HANDSHAKE)
def supported_requested_versions_are_echoed(ctx: Context) -> Iterator[Finding]:
    """When the client requests a version the server supports, the initialize result names exactly that version.

    Triggered by any initialize naming a published handshake revision; a counter-offer is a
    failure when the server echoed the requested version in another session."""
    sessions = _sessions(ctx)
    for session in sessions:
        requested = _requested(session)
        if requested is None or requested not in handshake_versions(ctx) or session.answer is None:
            continue
        if session.negotiated == requested:
            yield passed(session.answer)
            continue
        supported = _negotiated_by_server(ctx, sessions, session.place)
        answered = session.negotiated or f"an error ({error_code(session.answer)})"
        if requested in supported:
            yield failed(
                session.answer, f"the client asked for {requested}, which the server supports, and got {answered}"
            )
        else:
            yield unverified(
                f"the server answered {answered} to {requested}; whether it supports {requested} is not known",
                session.answer,
            )


@log_check(
    requirements="HS-06",
    level=Level.MUST,
    side=Side.SERVER,
    subject="initialize with an unsupported version",
    **_HANDSHAKE,
)
def unsupported_requested_versions_get_a_counter_offer(ctx: Context) -> Iterator[Finding]:
    """An initialize naming a version the server cannot support gets a counter-offer of a supported one, never an echo.

    Triggered by an initialize naming no published handshake revision, such as the active suite's
    ``1900-01-01`` probe. An error reply instead of a counter-offer is reported (A17, as a SHOULD)."""
    supported_anywhere = handshake_versions(ctx)
    for session in _sessions(ctx):
        requested = _requested(session)
        if requested is None or requested in supported_anywhere or session.answer is None:
            continue
        if session.answer.kind is Kind.ERROR:
            yield failed(
                session.answer,
                f"initialize naming {requested} was refused with code {error_code(session.answer)}"
                " instead of a counter-offer",
            )
        elif session.negotiated == requested:
            yield failed(session.answer, f"the server echoed the unsupported version {requested}")
        elif session.negotiated not in supported_anywhere:
            yield failed(
                session.answer, f"the server countered with {session.negotiated!r}, which is no handshake revision"
            )
        else:
            yield passed(session.answer)


# -- HS-07 .. HS-09: the order of the opening messages ---------------------------------------------
@log_check(requirements="HS-07", level=Level.SHOULD_NOT, side=Side.CLIENT, subject="2025 sessions", **_HANDSHAKE)
def clients_wait_for_the_initialize_result(ctx: Context) -> Iterator[Finding]:
    """Before the initialize result arrives the client sends no request other than ping."""
    for session in _client_sessions(ctx):
        until = session.answer.time if session.answer is not None else float("inf")
        start = session.initialize.time
        if session.transport == "stdio":
            early = [
                m
                for m in session.messages
                if m.sender is Side.CLIENT and m.kind is Kind.REQUEST and start < m.time < until and m.method != "ping"
            ]
        else:
            exchange = http_exchange(session.initialize, ctx)
            if exchange is None or not exchange.connection:
                yield unverified(
                    "the capture has no connection ids, so HTTP requests cannot be tied to the client that initialized",
                    session.initialize,
                )
                continue
            early = [
                other.request_message
                for other in ctx.log.http_exchanges()
                if other.connection == exchange.connection
                and other.request_message is not None
                and other.request_message.kind is Kind.REQUEST
                and other.request_message.method != "ping"
                and start < other.request.time < until
            ]
        if early:
            yield failed(early[0], f"the client sent {early[0].describe()} before the initialize result arrived")
        else:
            yield passed(session.initialize)


def _initialized_time(session: _Session) -> float | None:
    for message in session.messages:
        if (
            message.sender is Side.CLIENT
            and message.method == "notifications/initialized"
            and message.time >= session.initialize.time
        ):
            return message.time
    return None


@log_check(requirements="HS-08", level=Level.MUST, side=Side.CLIENT, subject="successful initializations", **_HANDSHAKE)
def clients_confirm_with_initialized(ctx: Context) -> Iterator[Finding]:
    """After a successful initialize result the client sends notifications/initialized before other work."""
    for session in _client_sessions(ctx):
        if session.answer is None or session.answer.kind is not Kind.RESULT:
            continue
        if session.transport == "http" and session.session_id is None:
            continue  # without a session id the follow-up messages cannot be attributed
        later = [
            m
            for m in session.messages
            if m.sender is Side.CLIENT
            and m.time > session.initialize.time
            and m is not session.initialize
            and m.kind in (Kind.REQUEST, Kind.NOTIFICATION)
            and m.method != "ping"
        ]
        if not later:
            yield unverified("the client sent nothing after the initialize result", session.answer)
        elif later[0].method == "notifications/initialized":
            if later[0].kind is Kind.REQUEST:
                yield failed(later[0], "notifications/initialized was sent with an id")
            else:
                yield passed(later[0])
        else:
            yield failed(later[0], f"the client sent {later[0].describe()} before notifications/initialized")


@log_check(requirements="HS-09", level=Level.SHOULD_NOT, side=Side.SERVER, subject="2025 sessions", **_HANDSHAKE)
def servers_wait_for_initialized_before_requests(ctx: Context) -> Iterator[Finding]:
    """Before notifications/initialized arrives the server sends no request other than ping."""
    for session in _sessions(ctx):
        if session.answer is None or session.answer.kind is not Kind.RESULT:
            continue
        confirmed = _initialized_time(session)
        until = confirmed if confirmed is not None else float("inf")
        early = [
            m
            for m in session.messages
            if m.sender is Side.SERVER and m.kind is Kind.REQUEST and m.method != "ping" and m.time < until
        ]
        if early:
            yield failed(early[0], f"the server sent {early[0].describe()} before notifications/initialized")
        elif confirmed is not None:
            yield passed(session.answer)


# -- HS-10 .. HS-13: the version header --------------------------------------------------------------
def _later_exchanges(session: _Session, ctx: Context) -> list[HttpExchange]:
    return [e for e in session.exchanges if e.request.time > session.initialize.time and e.probe is None]


@log_check(
    requirements="HS-10", level=Level.SHOULD, side=Side.CLIENT, subject="requests in 2025 HTTP sessions", **_HTTP
)
def clients_keep_to_the_negotiated_version(ctx: Context) -> Iterator[Finding]:
    """Requests in a session send MCP-Protocol-Version equal to the negotiated version."""
    for session in _client_sessions(ctx):
        version = session.negotiated
        if version is None:
            continue
        for exchange in _later_exchanges(session, ctx):
            header = exchange.request.headers.get("mcp-protocol-version")
            if header is None:
                continue  # HS-11's finding
            subject = exchange.request_message or exchange
            if header == version:
                yield passed(subject)
            else:
                yield failed(subject, f"MCP-Protocol-Version is {header!r} in a session that negotiated {version}")


@log_check(requirements="HS-11", level=Level.MUST, side=Side.CLIENT, subject="requests in 2025 HTTP sessions", **_HTTP)
def session_requests_carry_the_version_header(ctx: Context) -> Iterator[Finding]:
    """Every HTTP request after initialize (POST, GET, DELETE) carries MCP-Protocol-Version."""
    for session in _client_sessions(ctx):
        if session.negotiated is None:
            continue
        for exchange in _later_exchanges(session, ctx):
            subject = exchange.request_message or exchange
            if exchange.request.headers.get("mcp-protocol-version") is not None:
                yield passed(subject)
            else:
                what = subject.describe() if isinstance(subject, Message) else exchange.request.method
                yield failed(subject, f"{what} in session {session.session_id!r} has no MCP-Protocol-Version header")


@log_check(
    requirements="HS-12", level=Level.MUST, side=Side.SERVER, subject="requests with an invalid version header", **_HTTP
)
def invalid_version_headers_get_400(ctx: Context) -> Iterator[Finding]:
    """A session request whose MCP-Protocol-Version names no published revision gets HTTP 400.

    Triggered by such a request inside a live session (the active suite sends ``1900-01-01``)."""
    issued = {session.session_id for session in _sessions(ctx) if session.session_id is not None}
    ended = _ended(ctx)
    known = known_versions(ctx)
    for exchange in ctx.log.http_exchanges():
        sid = exchange.request.headers.get("mcp-session-id")
        header = exchange.request.headers.get("mcp-protocol-version")
        if sid not in issued or header is None or header in known or exchange.response is None:
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


@log_check(
    requirements="HS-13", level=Level.SHOULD, side=Side.SERVER, subject="requests without a version header", **_HTTP
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
            or headers.get("mcp-protocol-version") is not None
            or headers.get("mcp-session-id") is not None
        ):
            continue
        if exchange.response is None:
            continue
        status = exchange.response.status
        if 200 <= status < 300 or status == 400:
            yield passed(request)
        else:
            yield failed(request, f"a request without MCP-Protocol-Version got HTTP {status}, neither served nor 400")


# -- HS-14, HS-15: keeping to negotiated capabilities ------------------------------------------------
def _capabilities_of(session: _Session) -> tuple[dict[str, Any], dict[str, Any]]:
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
    requirements="HS-14", level=Level.MUST, side=Side.SERVER, subject="capability-bound server messages", **_HANDSHAKE
)
def servers_use_only_negotiated_capabilities(ctx: Context) -> Iterator[Finding]:
    """The server sends sampling, roots, elicitation, list-changed and resource-update messages only as negotiated."""
    for session in _sessions(ctx):
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
    requirements="HS-15", level=Level.MUST, side=Side.CLIENT, subject="capability-bound client messages", **_HANDSHAKE
)
def clients_use_only_negotiated_capabilities(ctx: Context) -> Iterator[Finding]:
    """The client uses tools, prompts, resources, subscriptions, logging and completion only as the server declared."""
    for session in _sessions(ctx):
        if session.answer is None or session.answer.kind is not Kind.RESULT:
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


# -- HS-17: ping ------------------------------------------------------------------------------------
@log_check(requirements="HS-17", level=Level.MUST, side=Side.BOTH, subject="ping requests", **_HANDSHAKE)
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


# -- HS-18 .. HS-23: the HTTP session id ------------------------------------------------------------
def _visible_ascii(value: str) -> bool:
    return bool(value) and all(0x21 <= ord(char) <= 0x7E for char in value)


def _issued_session_ids(ctx: Context) -> Iterator[tuple[HttpExchange, str]]:
    modern = modern_versions(ctx)
    for exchange in ctx.log.http_exchanges():
        if exchange.response is None or ctx.log.exchange_revision(exchange.id) in modern:
            continue  # 2026 responses carrying a session id are HTTP-33's concern
        issued = exchange.response.headers.get("mcp-session-id")
        if issued is not None and exchange.request.headers.get("mcp-session-id") != issued:
            yield exchange, issued


def _initialize_result(exchange: HttpExchange) -> Message | None:
    request = exchange.request_message
    if request is None or request.method != "initialize":
        return None
    return next((m for m in exchange.response_messages if m.kind is Kind.RESULT), None)


@log_check(requirements="HS-18", level=Level.MUST, side=Side.SERVER, subject="issued session ids", **_HTTP)
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


@log_check(requirements="HS-18", level=Level.SHOULD, side=Side.SERVER, subject="issued session ids", **_HTTP)
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
    requirements="HS-19", level=Level.MUST, side=Side.CLIENT, subject="requests after a session was issued", **_HTTP
)
def clients_send_the_session_id_on_every_request(ctx: Context) -> Iterator[Finding]:
    """Once a session id was issued, the client's later legacy requests to that endpoint carry Mcp-Session-Id."""
    modern = modern_versions(ctx)
    issued_at: dict[str, float] = {}
    for session in _client_sessions(ctx):
        if session.session_id is not None:
            issued_at.setdefault(session.place, session.opened)
    for exchange in ctx.log.http_exchanges():
        place = endpoint_of(exchange)
        if place not in issued_at or exchange.request.time <= issued_at[place] or exchange.probe is not None:
            continue
        request = exchange.request_message
        if request is not None and (request.method == "initialize" or meta_version(request) is not None):
            continue
        if exchange.request.headers.get("mcp-protocol-version") in modern:
            continue
        subject: Message | HttpExchange = request or exchange
        if exchange.request.headers.get("mcp-session-id") is not None:
            yield passed(subject)
        else:
            what = request.describe() if request is not None else exchange.request.method
            yield failed(subject, f"{what} was sent without Mcp-Session-Id after the server issued one")


@log_check(
    requirements="HS-20", level=Level.SHOULD, side=Side.SERVER, subject="legacy requests without a session id", **_HTTP
)
def sessionless_requests_get_400(ctx: Context) -> Iterator[Finding]:
    """A server that issues session ids answers a non-initialize legacy request lacking Mcp-Session-Id with 400.

    Triggered by such a request (the active suite sends one after a session was issued)."""
    issued_at: dict[str, float] = {}
    for session in _sessions(ctx):
        if session.session_id is not None:
            issued_at.setdefault(session.place, session.opened)
    modern = modern_versions(ctx)
    for exchange in ctx.log.http_exchanges():
        place = endpoint_of(exchange)
        request = exchange.request_message
        if place not in issued_at or exchange.request.time <= issued_at[place] or exchange.response is None:
            continue
        if request is None or request.kind is not Kind.REQUEST or request.method == "initialize":
            continue
        if meta_version(request) is not None or exchange.request.headers.get("mcp-protocol-version") in modern:
            continue
        if exchange.request.headers.get("mcp-session-id") is not None:
            continue
        if exchange.response.status == 400:
            yield passed(request)
        else:
            yield failed(
                request,
                f"{request.describe()} without Mcp-Session-Id got HTTP {exchange.response.status}, expected 400",
            )


@log_check(
    requirements="HS-21", level=Level.MUST, side=Side.SERVER, subject="requests naming an ended session", **_HTTP
)
def ended_sessions_answer_404(ctx: Context) -> Iterator[Finding]:
    """After a session ended (DELETE accepted, or a 404 for it), requests carrying its id get 404.

    Triggered by a request with the old id after the end (the active suite sends one after DELETE)."""
    ended = _ended(ctx)
    for exchange in ctx.log.http_exchanges():
        sid = exchange.request.headers.get("mcp-session-id")
        if sid is None or sid not in ended or exchange.request.time <= ended[sid] or exchange.response is None:
            continue
        subject = exchange.request_message or exchange
        if exchange.response.status == 404:
            yield passed(subject)
        else:
            yield failed(
                subject, f"a request for the ended session {sid!r} got HTTP {exchange.response.status}, expected 404"
            )


@log_check(requirements="HS-22", level=Level.MUST, side=Side.CLIENT, subject="404s for a session id", **_HTTP)
def clients_reinitialize_after_a_session_404(ctx: Context) -> Iterator[Finding]:
    """After a 404 to a request that carried a session id, the client starts over with initialize and no session id."""
    exchanges = ctx.log.http_exchanges()
    for exchange in exchanges:
        sid = exchange.request.headers.get("mcp-session-id")
        if sid is None or exchange.response is None or exchange.response.status != 404 or exchange.probe is not None:
            continue
        if exchange.request.method == "DELETE":
            continue
        if any(error_code(m) == -32601 for m in exchange.response_messages):
            continue  # an unknown method, not an ended session
        after = exchange.response.time
        later = [
            other
            for other in exchanges
            if other.request.time > after and other.probe is None and endpoint_of(other) == endpoint_of(exchange)
        ]
        stale = [other for other in later if other.request.headers.get("mcp-session-id") == sid]
        fresh = [
            other
            for other in later
            if other.request_message is not None
            and other.request_message.method == "initialize"
            and other.request.headers.get("mcp-session-id") is None
        ]
        subject = exchange.request_message or exchange
        if stale and (not fresh or stale[0].request.time < fresh[0].request.time):
            yield failed(stale[0].request_message or stale[0], f"the client kept using session {sid!r} after a 404")
        elif fresh:
            yield passed(fresh[0].request_message or fresh[0])
        else:
            yield unverified(f"the client sent nothing more after the 404 for session {sid!r}", subject)


@log_check(requirements="HS-23", level=Level.SHOULD, side=Side.CLIENT, subject="session DELETE requests", **_HTTP)
def session_deletes_name_the_session(ctx: Context) -> Iterator[Finding]:
    """A client ending a session sends DELETE with its Mcp-Session-Id."""
    modern = modern_versions(ctx)
    for exchange in ctx.log.http_exchanges():
        if exchange.request.method != "DELETE" or exchange.probe is not None:
            continue
        if exchange.request.headers.get("mcp-protocol-version") in modern:
            continue  # DELETE against a 2026 endpoint is HTTP-32's concern
        if exchange.request.headers.get("mcp-session-id") is not None:
            yield passed(exchange)
        else:
            yield failed(exchange, "DELETE was sent without Mcp-Session-Id, so it names no session to end")
