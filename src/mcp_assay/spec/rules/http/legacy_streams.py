"""Streamable HTTP (2025): the ``GET`` stream, and resuming broken streams with ``Last-Event-ID``.

A 2025 session may hold several SSE streams at once: the ``GET`` stream for server-initiated
messages and one per POSTed request. Each message travels on one of them; event ids are unique
per session so a client can resume a broken stream, after waiting the announced ``retry``, and
get back only what that stream had not delivered.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.http._exchanges import (
    LEGACY_HTTP,
    accepted_types,
    event_stream_answers,
    final_response,
    http_eras,
    judged_as_client,
    request_posts,
    setting,
)
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.reads import ANY_EXCHANGE_HTTP
from mcp_assay.vocabulary.protocol import Era, HeaderKey, MediaType
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message, id_key
from mcp_assay.wire.model import EndReason, HttpExchange
from mcp_assay.wire.traffic import MessageKey


def _label(message: Message | None) -> str:
    return message.describe() if message is not None else "a POST"


def _legacy_gets(ctx: Context) -> Iterator[HttpExchange]:
    legacy = http_eras(ctx).legacy
    for exchange in ctx.log.http_exchanges():
        if exchange.request.method == "GET" and exchange.id in legacy:
            yield exchange


@log_check(
    requirements="HTTP-38",
    level=Level.MUST,
    side=Side.SERVER,
    subject="2025 GET requests",
    **LEGACY_HTTP,
    because="the server's half: how the endpoint answers a GET",
    follows=ANY_EXCHANGE_HTTP,
)
def legacy_get_opens_a_stream_or_gets_405(ctx: Context) -> Iterator[Finding]:
    """A 2025 GET on the MCP endpoint is answered with text/event-stream or 405.

    A 404 for a GET naming a terminated session, and a 400 for a GET without the session id a
    server requires, are the session rules' answers and are not judged here."""
    for exchange in _legacy_gets(ctx):
        response = exchange.response
        if response is None:
            continue
        session = exchange.request.headers.get(HeaderKey.SESSION_ID)
        if response.is_event_stream or response.status == 405:
            yield passed(exchange)
        elif (response.status == 404 and session is not None) or (response.status == 400 and session is None):
            continue
        else:
            shown = response.headers.get(HeaderKey.CONTENT_TYPE) or "no Content-Type"
            yield failed(
                exchange, f"GET was answered HTTP {response.status} with {shown}; expected an event stream or 405"
            )


@log_check(
    requirements="HTTP-38",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="2025 GET requests",
    **LEGACY_HTTP,
    because="the client's half: the Accept header of its GET",
    follows=ANY_EXCHANGE_HTTP,
)
def legacy_get_accepts_event_streams(ctx: Context) -> Iterator[Finding]:
    """A 2025 client's GET on the MCP endpoint lists text/event-stream in Accept."""
    for exchange in _legacy_gets(ctx):
        if not judged_as_client(exchange):
            continue
        header = exchange.request.headers.get(HeaderKey.ACCEPT)
        if accepted_types(header) & {MediaType.EVENT_STREAM, "text/*", "*/*"}:
            yield passed(exchange)
        else:
            yield failed(exchange, f"the GET's Accept {header!r} does not list text/event-stream")


@log_check(
    requirements="HTTP-39", level=Level.MUST_NOT, subject="2025 GET streams", **LEGACY_HTTP, follows=ANY_EXCHANGE_HTTP
)
def get_streams_carry_no_responses(ctx: Context) -> Iterator[Finding]:
    """A GET-opened 2025 stream carries no JSON-RPC response unless it resumes a request's stream."""
    for exchange in _legacy_gets(ctx):
        response = exchange.response
        if response is None or not response.is_event_stream:
            continue
        if exchange.request.headers.get(HeaderKey.LAST_EVENT_ID) is not None:
            continue  # a resumption may replay a response
        answers = [m for m in exchange.response_messages if m.kind.is_response]
        if answers:
            yield failed(answers[0], f"the GET stream carried {answers[0].describe()}")
        else:
            yield passed(exchange)


def _session_key(exchange: HttpExchange) -> str:
    session = exchange.request.headers.get(HeaderKey.SESSION_ID)
    if session is None and exchange.response is not None:
        session = exchange.response.headers.get(HeaderKey.SESSION_ID)
    if session is not None:
        return f"session:{session}"
    return f"connection:{exchange.connection}" if exchange.connection else ""


def _legacy_event_streams(ctx: Context) -> Iterator[HttpExchange]:
    return iter(http_eras(ctx).legacy_streams)


def _resumption(exchange: HttpExchange) -> bool:
    return exchange.request.method == "GET" and exchange.request.headers.get(HeaderKey.LAST_EVENT_ID) is not None


@log_check(
    requirements="HTTP-40",
    level=Level.MUST_NOT,
    subject="messages on 2025 streams",
    **LEGACY_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def messages_travel_on_one_stream_only(ctx: Context) -> Iterator[Finding]:
    """A 2025 server sends each message on one stream only, never broadcast across connected streams."""
    window = setting(ctx, "broadcast_window_s", 1.0)
    seen: dict[tuple[str, str | None, Any], list[tuple[Message, HttpExchange]]] = defaultdict(list)
    texts: dict[MessageKey, str] = {}
    streams = [(exchange, _session_key(exchange)) for exchange in _legacy_event_streams(ctx)]
    shared = {scope for scope, count in Counter(scope for _, scope in streams).items() if scope and count > 1}
    for exchange, scope in streams:
        if scope not in shared:  # the only stream of its session (or of none): no other stream to have sent it on
            yield from (passed(message) for message in exchange.response_messages)
            continue
        for message in exchange.response_messages:
            # messages alike (the same method and id) first; only those are written out to compare them whole
            key = (scope, message.method, _comparable_id(message))
            twins = [
                (twin, where)
                for twin, where in seen[key]
                if where.id != exchange.id
                and abs(twin.time - message.time) <= window
                and not (_resumption(where) or _resumption(exchange))
                and _text(twin, texts) == _text(message, texts)
            ]
            if scope and twins:
                yield failed(message, f"{message.describe()} was also sent on another stream of the session")
            else:
                yield passed(message)
            seen[key].append((message, exchange))


def _comparable_id(message: Message) -> Any:
    """The message's id key, a NaN id made equal to every other (two messages written out alike have ids alike)."""
    ident = message.id_key
    return ("float", "nan") if ident is not None and ident[0] == "float" and ident[1] != ident[1] else ident


def _text(message: Message, texts: dict[MessageKey, str]) -> str:
    """The message written out with sorted keys (once per message)."""
    text = texts.get(message.key)
    if text is None:
        text = texts[message.key] = json.dumps(message.payload, sort_keys=True, default=str)
    return text


@log_check(requirements="HTTP-41", level=Level.MUST, subject="SSE event ids", **LEGACY_HTTP, follows=ANY_EXCHANGE_HTTP)
def event_ids_are_unique_per_session(ctx: Context) -> Iterator[Finding]:
    """2025 SSE event ids, when used, are unique across all streams of the session."""
    seen: dict[tuple[str, str], HttpExchange] = {}
    for exchange in _legacy_event_streams(ctx):
        scope = _session_key(exchange)
        if not scope:
            continue
        assert exchange.response is not None
        for event in exchange.response.events:
            if not event.id:
                continue
            earlier = seen.get((scope, event.id))
            if earlier is not None and not _resumption(exchange):
                where = "the same stream" if earlier.id == exchange.id else "another stream"
                yield failed(exchange.request_message or exchange, f"event id {event.id!r} was already used on {where}")
            else:
                yield passed(exchange.request_message or exchange)
            seen.setdefault((scope, event.id), exchange)


@log_check(
    requirements="HTTP-42", level=Level.SHOULD, subject="2025 POST streams", **LEGACY_HTTP, follows=ANY_EXCHANGE_HTTP
)
def post_streams_are_primed_and_announce_retry(ctx: Context) -> Iterator[Finding]:
    """A 2025 POST stream opens with an id-only priming event, and a retry precedes any early close.

    The stream of a request the client cancelled before it ended owes no response, so its close is not early."""
    for exchange, request in event_stream_answers(ctx, Era.HANDSHAKE):
        assert exchange.response is not None
        events = [event for event in exchange.response.events if not event.is_comment]
        if not events:
            continue
        first = events[0]
        if first.id and not (first.data or "").strip():
            yield passed(request)
        else:
            yield failed(
                request,
                f"the stream for {request.describe()} does not start with a priming event (an id and empty data)",
            )
        ending = exchange.ending
        unfinished = final_response(exchange, request) is None
        if unfinished and ending is not None and ending.reason in (EndReason.COMPLETE, EndReason.SERVER_DISCONNECT):
            if ctx.log.cancellation(request, before=ending.time) is not None:
                continue  # the client cancelled it: the stream owes no response, so its close is not early
            if not any(event.retry is not None for event in events):
                yield failed(
                    request, f"the server closed the stream for {request.describe()} early without a retry field"
                )


@log_check(
    requirements="HTTP-43",
    level=Level.MUST,
    subject="reconnections after retry",
    **LEGACY_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def client_waits_the_retry_interval(ctx: Context) -> Iterator[Finding]:
    """After the server closed a 2025 stream announcing retry: N, the client waits N ms before reconnecting."""
    for exchange in _legacy_event_streams(ctx):
        ending = exchange.ending
        response = exchange.response
        request = exchange.request_message
        if ending is None or response is None or ending.reason not in (EndReason.COMPLETE, EndReason.SERVER_DISCONNECT):
            continue
        if request is not None and request.kind is Kind.REQUEST and final_response(exchange, request) is not None:
            continue
        retries = [event.retry for event in response.events if event.retry is not None]
        if not retries:
            continue
        wait = retries[-1] / 1000
        scope = _session_key(exchange)
        reconnect = next(
            (
                other
                for other in ctx.log.http_exchanges()
                if other.request.method == "GET"
                and other.request.time >= ending.time
                and _session_key(other) == scope
                and judged_as_client(other)
            ),
            None,
        )
        if reconnect is None:
            yield unverified(
                f"the stream ended early after retry: {retries[-1]} and the client did not resume it within the "
                "capture",
                request or exchange,
            )
            continue
        waited = reconnect.request.time - ending.time
        if waited + 1e-3 < wait:
            yield failed(
                reconnect, f"the client reconnected after {waited * 1000:.0f} ms; retry asked for {retries[-1]} ms"
            )
        else:
            yield passed(reconnect)


@log_check(
    requirements="HTTP-44",
    level=Level.MUST_NOT,
    subject="2025 stream resumptions",
    **LEGACY_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def resumptions_replay_only_the_broken_stream(ctx: Context) -> Iterator[Finding]:
    """A GET with Last-Event-ID replays only messages of the stream that broke."""
    origins: dict[tuple[str, str], HttpExchange] = {}
    for exchange in _legacy_event_streams(ctx):
        assert exchange.response is not None
        last = exchange.request.headers.get(HeaderKey.LAST_EVENT_ID)
        if _resumption(exchange) and last is not None:
            origin = origins.get((_session_key(exchange), last))
            if origin is None:
                yield unverified(f"the stream that sent event id {last!r} is not in the capture", exchange)
            else:
                yield from _judge_replay(exchange, origin)
        for event in exchange.response.events:
            if event.id:
                origins.setdefault((_session_key(exchange), event.id), exchange)


def _judge_replay(exchange: HttpExchange, origin: HttpExchange) -> Iterator[Finding]:
    request = origin.request_message if origin.request.method == "POST" else None
    token = (request.meta or {}).get("progressToken", MISSING) if request is not None else MISSING
    wrong: Message | None = None
    for message in exchange.response_messages:
        if message.kind.is_response and (request is None or message.id_key != request.id_key):
            wrong = message
        elif message.method == "notifications/progress" and request is not None:
            if id_key(params_of(message).get("progressToken", MISSING)) != id_key(token):
                wrong = message
        if wrong is not None:
            yield failed(wrong, f"the resumed stream replayed {wrong.describe()}, which belonged to another stream")
            return
    yield passed(exchange)


@log_check(
    requirements="HTTP-45",
    level=Level.SHOULD,
    subject="2025 stream notifications",
    **LEGACY_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def stream_messages_relate_to_their_stream(ctx: Context) -> Iterator[Finding]:
    """Progress on a 2025 POST stream concerns its request; the GET stream carries none for in-flight requests."""
    tokens: dict[tuple[str, tuple[str, Any] | None], Message] = {}
    legacy = http_eras(ctx).legacy
    for exchange, request in request_posts(ctx):
        token = (request.meta or {}).get("progressToken", MISSING)
        if token is not MISSING and exchange.id in legacy:
            tokens[(_session_key(exchange), id_key(token))] = request
    for exchange in _legacy_event_streams(ctx):
        opener = exchange.request_message
        own = (opener.meta or {}).get("progressToken", MISSING) if opener is not None else MISSING
        for message in exchange.response_messages:
            if message.method != "notifications/progress":
                continue
            sent = id_key(params_of(message).get("progressToken", MISSING))
            if exchange.request.method == "POST":
                if own is not MISSING and sent == id_key(own):
                    yield passed(message)
                else:
                    yield failed(
                        message,
                        f"progress for another request's token on the stream of {_label(opener)}",
                    )
            elif not _resumption(exchange):
                owner = tokens.get((_session_key(exchange), sent))
                if owner is not None and owner.time <= message.time:
                    answers = ctx.log.responses_to(owner)
                    if not answers or min(a.time for a in answers) >= message.time:
                        yield failed(message, f"progress for the in-flight {owner.describe()} went to the GET stream")
                        continue
                yield passed(message)


@log_check(
    requirements="HTTP-46", level=Level.SHOULD, subject="2025 POST streams", **LEGACY_HTTP, follows=ANY_EXCHANGE_HTTP
)
def post_streams_deliver_their_response(ctx: Context) -> Iterator[Finding]:
    """A 2025 POST stream eventually delivers the response to its request (possibly after a resumption).

    A request the client cancelled (``notifications/cancelled`` before the stream ended) is owed none."""
    for exchange, request in event_stream_answers(ctx, Era.HANDSHAKE):
        if final_response(exchange, request) is not None:
            yield passed(request)
            continue
        if _resumed_answer(ctx, exchange, request):
            yield passed(request, "the response arrived on a resumed stream")
            continue
        ending = exchange.ending
        if ending is not None and ctx.log.cancellation(request, before=ending.time) is not None:
            continue  # a request the client cancelled is owed no response
        if ending is not None and ending.reason is EndReason.COMPLETE:
            yield failed(request, f"the stream for {request.describe()} ended without its response")
        else:
            how = ending.reason.value if ending is not None else "unknown"
            yield unverified(f"the stream for {request.describe()} ended ({how}) before any response", request)


def _resumed_answer(ctx: Context, exchange: HttpExchange, request: Message) -> bool:
    scope = _session_key(exchange)
    for other in _legacy_event_streams(ctx):
        if _resumption(other) and _session_key(other) == scope and other.request.time >= request.time:
            if any(m.kind.is_response and m.id_key == request.id_key for m in other.response_messages):
                return True
    return False
