"""Versions, sessions, principals and origins across a gateway (GW-12..15).

What the client asked for reaches the upstream as asked: the protocol version a 2026 request names, or a
refusal at the front (GW-12). A session the upstream ended ends the client's too, unless the gateway opens
a new one upstream itself (GW-13). Two principals never share an upstream session or each other's events
(GW-14). And a foreign ``Origin`` is refused at the front or reaches the upstream as it came (GW-15).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.gateway._relays import Relays, answer_of, relays, shown, status_of
from mcp_assay.spec.rules.shared.reads import ANY_GATEWAY_RELAY
from mcp_assay.vocabulary.protocol import HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.hops import Call, Relay, canonical, params_shape
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange


def _header(call: Call, name: str) -> str | None:
    exchange = call.exchange
    return exchange.request.headers.get(name) if isinstance(exchange, HttpExchange) else None


def _version(message: Message) -> object:
    meta = message.meta if message.kind in (Kind.REQUEST, Kind.NOTIFICATION) else None
    return meta.get(MetaKey.PROTOCOL_VERSION) if meta is not None else None


@log_check(
    requirements="GW-12",
    level=Level.SHOULD,
    subject="2026 requests passed upstream",
    features={"per_request_version"},
    follows=ANY_GATEWAY_RELAY,
)
def gateway_passes_version_on(ctx: Context) -> Iterator[Finding]:
    """The version a 2026 request names reaches the upstream unchanged, or the request is refused at the front."""
    for relay in relays(ctx):
        front = relay.front
        if not ctx.in_scope(front.request) or _version(front.request) is None:
            continue
        asked, asked_header = _version(front.request), _header(front, HeaderKey.PROTOCOL_VERSION)
        back = relay.back
        if back is None:
            got = answer_of(front)
            if asked_header not in (None, asked) and (got is None or got.kind is Kind.ERROR):
                yield passed(front.request, "a request whose header and body disagree was refused at the front")
            continue
        sent = _version(back.request)
        if sent is None:
            continue  # the gateway speaks the handshake era upstream: a bridge between eras (GA5)
        sent_header = _header(back, HeaderKey.PROTOCOL_VERSION)
        changed = []
        if sent != asked:
            changed.append(f"_meta version {shown(asked)} became {shown(sent)}")
        if asked_header is not None and isinstance(back.exchange, HttpExchange) and sent_header != asked_header:
            became = f"became {shown(sent_header)}" if sent_header is not None else "was not passed on"
            changed.append(f"MCP-Protocol-Version {shown(asked_header)} {became}")
        if changed:
            yield failed(
                back.request,
                f"{front.request.describe()} reached the upstream under another version: {'; '.join(changed)}",
                related=(front.request,),
            )
        else:
            yield passed(back.request, related=(front.request,))


def _reopened(view_unclaimed: list[Call], relay: Relay) -> Call | None:
    """A request of the same method the gateway sent the upstream in another session while the client waited."""
    back = relay.back
    assert back is not None
    for call in view_unclaimed:
        if (
            call.method == relay.method
            and call.session != back.session
            and back.start <= call.start <= relay.front.open_until
            and (status_of(call) or 200) < 400
        ):
            return call
    return None


@log_check(
    requirements="GW-13",
    level=Level.SHOULD,
    subject="requests the upstream answered with 404 for an ended session",
    features={"handshake"},
    follows=ANY_GATEWAY_RELAY,
)
def gateway_passes_ended_sessions_on(ctx: Context) -> Iterator[Finding]:
    """An upstream 404 for an ended session reaches the client as a 404 for its own, unless the gateway reopened."""
    view = relays(ctx)
    unclaimed: list[Call] | None = None
    for relay in view:
        back = relay.back
        if back is None or back.session is None or status_of(back) != 404 or not ctx.in_scope(relay.front.request):
            continue
        if status_of(relay.front) == 404:
            yield passed(relay.front.request, "the client got 404 for its session", related=(back.request,))
            continue
        if unclaimed is None:
            unclaimed = view.correlation.unclaimed()
        again = _reopened(unclaimed, relay)
        if again is not None:
            yield passed(relay.front.request, "the gateway opened a new upstream session", related=(again.request,))
            continue
        status = status_of(relay.front)
        got = answer_of(relay.front)
        what = f"HTTP {status}" if status is not None else "no answer"
        if got is not None:
            what += f" with {got.describe()}"
        yield failed(
            relay.front.request,
            f"the upstream answered 404 for its ended session {shown(back.session)}; the client got {what} for "
            f"{relay.front.request.describe()}, so it cannot know to start over",
            related=(back.request,),
        )


def _principal(call: Call) -> str | None:
    """Who the client is: its credential, else (no credentials at all) its session."""
    credential = call.credential
    if credential:
        return f"credential {credential}"
    return f"session {call.session}" if call.session else None


def _by_credential(principal: str) -> bool:
    return principal.startswith("credential ")


def _event_key(message: Message) -> tuple[str, str]:
    return (message.method or "", canonical(params_shape(message.method or "", message.params)))


@dataclass(frozen=True, slots=True)
class _Stream:
    """What one client's stream carried on each hop: a relayed request's, or a GET stream and its upstream twin."""

    principal: str
    front: list[Message]
    back: list[Message]
    subject: Message | HttpExchange
    upstream: Message | HttpExchange


def _streams(view: Relays) -> Iterator[tuple[_Stream, str | None]]:
    """Every stream both hops carried, with its principal and the upstream session it used."""
    for relay in view.paired():
        assert relay.back is not None
        principal = _principal(relay.front)
        if principal is not None:
            stream = _Stream(principal, relay.front.stream, relay.back.stream, relay.front.request, relay.back.request)
            yield stream, relay.back.session
    for exchange in view.loose_front():
        twin = view.correlation.twin_of(exchange.id)
        principal = _exchange_principal(exchange)
        if isinstance(twin, HttpExchange) and principal is not None:
            session = twin.request.headers.get(HeaderKey.SESSION_ID)
            yield (
                _Stream(principal, list(exchange.response_messages), list(twin.response_messages), exchange, twin),
                (session),
            )


def _exchange_principal(exchange: HttpExchange) -> str | None:
    credential = exchange.request.headers.get(HeaderKey.AUTHORIZATION)
    if credential:
        return f"credential {credential}"
    session = exchange.request.headers.get(HeaderKey.SESSION_ID)
    return f"session {session}" if session else None


def _unrelayed(stream: _Stream) -> list[Message]:
    """What the client's stream carried that its own upstream stream did not (by method and params)."""
    own = {_event_key(message) for message in stream.back if message.kind is Kind.NOTIFICATION}
    return [m for m in stream.front if m.kind is Kind.NOTIFICATION and _event_key(m) not in own]


@log_check(
    requirements="GW-14",
    level=Level.MUST,
    subject="upstream sessions and events of several principals",
    follows=ANY_GATEWAY_RELAY,
)
def gateway_keeps_principals_apart(ctx: Context) -> Iterator[Finding]:
    """Two principals never share an upstream session, and one's notifications never reach the other."""
    yield from _apart(ctx, credentials=True)


@log_check(
    requirements="GW-17",
    level=Level.SHOULD,
    subject="upstream sessions of client sessions without credentials",
    follows=ANY_GATEWAY_RELAY,
)
def gateway_keeps_client_sessions_apart(ctx: Context) -> Iterator[Finding]:
    """Two client sessions without credentials never share an upstream session, nor each other's events."""
    yield from _apart(ctx, credentials=False)


def _apart(ctx: Context, *, credentials: bool) -> Iterator[Finding]:
    """Whether the streams of different principals (credentials, or sessions that carry none) stayed apart."""
    view = relays(ctx)
    judged = [
        (stream, session)
        for stream, session in _streams(view)
        if _by_credential(stream.principal) is credentials and _in_scope(ctx, stream.subject)
    ]
    if len({stream.principal for stream, _ in judged}) < 2:
        return  # one principal: nothing to keep apart
    sources: dict[tuple[str, str], set[str]] = {}
    for stream, _ in judged:
        for notice in stream.back:
            if notice.kind is Kind.NOTIFICATION:
                sources.setdefault(_event_key(notice), set()).add(stream.principal)
    owner: dict[str, tuple[str, _Stream]] = {}
    shared: set[str] = set()
    who = "principals" if credentials else "client sessions"
    for stream, session in judged:
        if session is not None:
            first = owner.setdefault(session, (stream.principal, stream))
            if first[0] != stream.principal and session not in shared:
                shared.add(session)
                yield failed(
                    stream.upstream,
                    f"upstream session {shown(session)} serves two {who}: {_what(stream.subject)} of one, and "
                    f"{_what(first[1].subject)} of another",
                    related=(stream.subject, first[1].subject),
                )
                continue
        leaked = next((m for m in _unrelayed(stream) if sources.get(_event_key(m), set()) - {stream.principal}), None)
        if leaked is not None:
            yield failed(
                leaked,
                f"{leaked.describe()} on the stream of {_what(stream.subject)} came from the upstream stream of "
                f"another of the {who}",
                related=(stream.subject,),
            )
        else:
            yield passed(stream.subject, related=(stream.upstream,))


def _in_scope(ctx: Context, subject: Message | HttpExchange) -> bool:
    if isinstance(subject, Message):
        return ctx.in_scope(subject)
    return True


def _what(subject: Message | HttpExchange) -> str:
    if isinstance(subject, Message):
        return subject.describe()
    return f"{subject.request.method} stream"


def _foreign(call: Call) -> str | None:
    """The request's Origin when it names another host than the request went to (``None`` otherwise)."""
    origin = _header(call, HeaderKey.ORIGIN)
    host = _header(call, HeaderKey.HOST)
    if not origin or not host:
        return None
    named = urlsplit(origin).netloc.lower()
    return origin if named and named != host.lower() else None


@log_check(requirements="GW-15", level=Level.MUST, subject="requests with a foreign Origin", follows=ANY_GATEWAY_RELAY)
def gateway_checks_origin(ctx: Context) -> Iterator[Finding]:
    """A foreign Origin is refused at the front with 403, or reaches the upstream unchanged; never dropped."""
    for relay in relays(ctx):
        origin = _foreign(relay.front)
        if origin is None or not ctx.in_scope(relay.front.request):
            continue
        if status_of(relay.front) == 403:
            yield passed(relay.front.request, "refused at the front with 403")
            continue
        back = relay.back
        if back is None or not isinstance(back.exchange, HttpExchange):
            continue  # the gateway answered itself, or its upstream has no Origin (stdio): the front's Origin rule
        passed_on = _header(back, HeaderKey.ORIGIN)
        if passed_on == origin:
            yield passed(back.request, "the Origin reached the upstream unchanged", related=(relay.front.request,))
            continue
        served = (status_of(back) or 200) < 400 and (status_of(relay.front) or 200) < 400
        if served:
            what = f"as {shown(passed_on)}" if passed_on else "without it"
            yield failed(
                relay.front.request,
                f"a request with the foreign Origin {shown(origin)} reached the upstream {what}, and was served",
                related=(back.request,),
            )
