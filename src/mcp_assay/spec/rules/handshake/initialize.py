"""The 2025-11-25 handshake (HS-01..09): ``initialize``, the version it settles, and ``initialized``.

A 2025 session opens with ``initialize`` (the server echoes a version it supports or counters
with another one), and the client confirms with ``notifications/initialized`` before the session
carries anything else. A 2026 exchange never falls under these rules.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.handshake._sessions import HANDSHAKE, Session, all_sessions, client_sessions
from mcp_assay.spec.rules.shared.common import error_code, http_exchange, on_connection
from mcp_assay.spec.rules.shared.envelopes import meta_version, place_of
from mcp_assay.spec.rules.shared.reads import ANY_SESSION
from mcp_assay.spec.rules.versions._eras import handshake_versions, refused_supported, supported_versions
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import EndReason, sent_by_assay


@log_check(requirements="HS-01", level=Level.MUST, subject="2025 sessions", **HANDSHAKE, follows=ANY_SESSION)
def initialize_opens_every_session(ctx: Context) -> Iterator[Finding]:
    """initialize is the client's first legacy request (stdio), sent without Mcp-Session-Id (HTTP)."""
    by_connection: dict[str, list[Message]] = defaultdict(list)
    for line in ctx.log.stdio_lines():
        if line.sender is Side.CLIENT and not sent_by_assay(line):
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
    for session in client_sessions(ctx):
        exchange = http_exchange(session.initialize, ctx)
        if exchange is None:
            continue
        carried = exchange.request.headers.get(HeaderKey.SESSION_ID)
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
    subject="initialize requests",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    **HANDSHAKE,
    methods={"initialize"},
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
    subject="initialize results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    **HANDSHAKE,
    off_version=True,
    methods={"initialize"},
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


def _requested(session: Session) -> str | None:
    params = session.initialize.params
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) else None


class _SaidSupported:
    """Versions the server itself says it supports, per place (any stdio connection: one program): named in an
    initialize result, echoed or as a counter-offer (a server counters only with a version it supports); listed in
    an error's ``data.supported`` (``-32022``, or the ``-32602`` A17 shows); listed in its discover results'
    ``supportedVersions``. Read from the log in one pass, when first asked (linear in the traffic)."""

    STDIO = "stdio"

    def __init__(self, ctx: Context, sessions: list[Session]) -> None:
        self.ctx = ctx
        self.sessions = sessions
        self._by_place: dict[str, set[str]] | None = None

    def _read(self) -> dict[str, set[str]]:
        by_place: dict[str, set[str]] = defaultdict(set)
        for session in self.sessions:
            if session.negotiated is not None:
                by_place[self._key(session.transport, session.place)].add(session.negotiated)
        for message in self.ctx.log.messages():
            if message.sender is not Side.SERVER or message.kind not in (Kind.RESULT, Kind.ERROR):
                continue
            if message.kind is Kind.ERROR:
                found = refused_supported(message) or ()
            else:
                request = self.ctx.log.request_of(message)
                discovered = request is not None and request.method == "server/discover"
                found = (supported_versions(message) or ()) if discovered else ()
            if found:
                place = place_of(message, self.ctx) if message.transport != "stdio" else ""
                by_place[self._key(message.transport, place)].update(found)
        return by_place

    def _key(self, transport: str, place: str) -> str:
        return self.STDIO if transport == "stdio" else place

    def at(self, session: Session) -> set[str]:
        """What the server said it supports where ``session`` ran (every stdio connection counts for stdio)."""
        if self._by_place is None:
            self._by_place = self._read()
        said = set(self._by_place.get(self.STDIO, ()))  # one program answers every stdio connection
        if session.transport != "stdio":
            said |= self._by_place.get(session.place, set())
        return said


@log_check(
    requirements="HS-05",
    level=Level.MUST,
    subject="initialize answers",
    **HANDSHAKE,
    off_version=True,
    follows=ANY_SESSION,
)
def supported_requested_versions_are_echoed(ctx: Context) -> Iterator[Finding]:
    """When the client requests a version the server supports, the initialize result names exactly that version.

    Triggered by any initialize naming a published handshake revision. Whether the server supports it is
    judged by what the server itself says: a counter-offer (or a refusal) fails when the server named the
    requested version elsewhere, echoing it in another session or offering it in return for another (the
    suite's ``1900-01-01`` and ``2025-03-26`` offers get such answers), listing it in an error's
    ``data.supported`` or in its discover result's ``supportedVersions``. A counter-offer is what the spec
    asks only when the server does not support the version, so one it says nothing about is not verified."""
    sessions = all_sessions(ctx)
    supported_at = _SaidSupported(ctx, sessions)
    for session in sessions:
        requested = _requested(session)
        if requested is None or requested not in handshake_versions(ctx) or session.answer is None:
            continue
        if session.negotiated == requested:
            yield passed(session.answer)
            continue
        supported = supported_at.at(session)
        answered = session.negotiated or f"an error ({error_code(session.answer)})"
        if requested in supported:
            yield failed(
                session.answer,
                f"the client asked for {requested}, which the server says it supports, and got {answered}",
            )
        else:
            yield unverified(
                f"the server answered {answered} to {requested}; whether it supports {requested} is not known",
                session.answer,
            )


@log_check(
    requirements="HS-06",
    level=Level.MUST,
    subject="initialize with an unsupported version",
    **HANDSHAKE,
    off_version=True,
    follows=ANY_SESSION,
)
def unsupported_requested_versions_get_a_counter_offer(ctx: Context) -> Iterator[Finding]:
    """An initialize naming a version the server cannot support gets a counter-offer of a supported one, never an echo.

    Triggered by an initialize naming no published handshake revision, such as the active suite's
    ``1900-01-01`` probe. An error reply instead of a counter-offer is reported (A17, as a SHOULD)."""
    supported_anywhere = handshake_versions(ctx)
    for session in all_sessions(ctx):
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


@log_check(
    requirements="HS-06",
    level=Level.SHOULD,
    subject="counter-offers",
    **HANDSHAKE,
    off_version=True,
    follows=ANY_SESSION,
)
def counter_offers_name_the_newest_supported_version(ctx: Context) -> Iterator[Finding]:
    """A counter-offer to an unsupported version names the newest version the server supports.

    Judged against what the server itself says it supports (initialize results, ``data.supported``
    lists, discover's ``supportedVersions``), among the handshake revisions an initialize can agree
    on; the newest published handshake revision is the newest any server can offer."""
    sessions = all_sessions(ctx)
    supported_at = _SaidSupported(ctx, sessions)
    published = handshake_versions(ctx)
    newest = max(published)
    for session in sessions:
        requested, offered = _requested(session), session.negotiated
        if requested is None or requested in published or offered is None or offered not in published:
            continue  # an echo, an error or an unpublished counter-offer: the MUST half's findings
        said = {version for version in supported_at.at(session) if version in published}
        newer = sorted(version for version in said if version > offered)
        assert session.answer is not None
        if newer:
            yield failed(
                session.answer,
                f"the counter-offer to {requested} is {offered}, but the server also supports the newer {newer[-1]}",
            )
        elif offered == newest or said - {offered}:
            yield passed(session.answer, f"the counter-offer to {requested} is {offered}, the newest it supports")
        else:
            yield unverified(
                f"the server counter-offered {offered} to {requested} and names no other version, so whether "
                "that is its newest is not known",
                session.answer,
            )


@log_check(requirements="HS-07", level=Level.SHOULD_NOT, subject="2025 sessions", **HANDSHAKE, follows=ANY_SESSION)
def clients_wait_for_the_initialize_result(ctx: Context) -> Iterator[Finding]:
    """Before the initialize result arrives the client sends no request other than ping."""
    for session in client_sessions(ctx):
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
            ending = exchange.ending if exchange is not None else None
            if session.answer is None and ending is not None and ending.reason is not EndReason.OPEN:
                continue  # refused before JSON-RPC (a 401, say): no handshake began, a new initialize may follow
            if exchange is None or not exchange.connection:
                yield unverified(
                    "the capture has no connection ids, so HTTP requests cannot be tied to the client that initialized",
                    session.initialize,
                )
                continue
            early = [
                other.request_message
                for other in on_connection(ctx, exchange.connection, start, until)
                if other.request_message is not None
                and other.request_message.kind is Kind.REQUEST
                and other.request_message.method != "ping"
            ]
        if early:
            yield failed(early[0], f"the client sent {early[0].describe()} before the initialize result arrived")
        else:
            yield passed(session.initialize)


def _initialized_time(session: Session) -> float | None:
    for message in session.messages:
        if (
            message.sender is Side.CLIENT
            and message.method == "notifications/initialized"
            and message.time >= session.initialize.time
        ):
            return message.time
    return None


@log_check(
    requirements="HS-08", level=Level.MUST, subject="successful initializations", **HANDSHAKE, follows=ANY_SESSION
)
def clients_confirm_with_initialized(ctx: Context) -> Iterator[Finding]:
    """After a successful initialize result the client sends notifications/initialized before other work."""
    for session in client_sessions(ctx):
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


@log_check(requirements="HS-09", level=Level.SHOULD_NOT, subject="2025 sessions", **HANDSHAKE, follows=ANY_SESSION)
def servers_wait_for_initialized_before_requests(ctx: Context) -> Iterator[Finding]:
    """Before notifications/initialized arrives the server sends no request other than ping."""
    for session in all_sessions(ctx):
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
