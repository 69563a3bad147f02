"""Streamable HTTP (2026): what a request's SSE response stream may carry, and what a broken one means.

A 2026 response stream belongs to its request: it carries notifications about that request and
then the final response, is not resumable, and is not buffered by proxies. A client whose stream
broke re-sends the work as a new request instead of resuming.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from mcp_assay.spec.checks import Every, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.http._exchanges import (
    MODERN_HTTP,
    event_stream_answers,
    final_response,
    http_eras,
    later_requests,
    modern_route,
    rendered,
    request_posts,
    setting,
)
from mcp_assay.spec.rules.shared.common import http_exchange, params_of
from mcp_assay.spec.rules.shared.envelopes import meta_version
from mcp_assay.spec.rules.shared.reads import ANY_EXCHANGE_HTTP
from mcp_assay.spec.rules.shared.stream_facts import ACKNOWLEDGED, CHANGE_NOTIFICATIONS, LISTEN
from mcp_assay.vocabulary.protocol import Era, HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message, id_key
from mcp_assay.wire.model import EndReason, HttpExchange, sent_by_assay

LISTEN_STREAM_ONLY = CHANGE_NOTIFICATIONS | {ACKNOWLEDGED}
"""Notifications that travel only on a ``subscriptions/listen`` stream."""


@log_check(
    requirements="HTTP-27",
    level=Level.MUST,
    subject="notifications on request streams",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def request_streams_carry_only_notifications_about_their_request(ctx: Context) -> Iterator[Finding]:
    """Before its final response, a request's SSE stream carries only notifications about that request.

    ``subscriptions/listen`` streams are judged by the SUB rules; ``notifications/message`` is
    judged by the LOG rules (which know the request's ``logLevel``)."""
    for exchange, request in event_stream_answers(ctx, Era.MODERN):
        if request.method == LISTEN:
            continue
        token = (request.meta or {}).get("progressToken", MISSING)
        for message in exchange.response_messages:
            if message.kind.is_response:
                break
            if message.kind is not Kind.NOTIFICATION:
                continue
            meta = message.meta or {}
            if MetaKey.SUBSCRIPTION_ID in meta or message.method in LISTEN_STREAM_ONLY:
                yield failed(
                    message, f"{message.method} belongs on a subscriptions/listen stream, not on {request.describe()}'s"
                )
            elif message.method == "notifications/progress":
                sent = params_of(message).get("progressToken", MISSING)
                if token is not MISSING and id_key(sent) == id_key(token):
                    yield passed(message)
                else:
                    asked = "no progressToken" if token is MISSING else f"progressToken {rendered(token)}"
                    yield failed(
                        message, f"progress for token {rendered(sent)} on the stream of a request with {asked}"
                    )


@message_check(
    requirements="HTTP-28", level=Level.MUST_NOT, subject="messages on SSE streams",
    sent_by=Side.SERVER, **MODERN_HTTP,
    methods=Every("a request of any method on a 2026 stream breaks it"),
)  # fmt: skip
def sse_streams_carry_no_server_requests(message: Message, ctx: Context) -> Finding | None:
    """No JSON-RPC request (method plus id) travels on a 2026 SSE stream."""
    exchange = http_exchange(message, ctx)
    if exchange is None or exchange.response is None or not exchange.response.is_event_stream:
        return None
    if not modern_route(exchange, ctx):
        return None
    if message.kind is Kind.REQUEST:
        return failed(message, f"the server sent a request ({message.describe()}) on an SSE stream")
    return passed(message)


@log_check(requirements="HTTP-29", level=Level.SHOULD, subject="SSE request streams", follows=ANY_EXCHANGE_HTTP)
def final_responses_end_their_streams(ctx: Context) -> Iterator[Finding]:
    """After the final JSON-RPC response no more data events follow, and the server closes the stream."""
    limit = setting(ctx, "sse_close_grace_s", 2.0)
    for exchange, request in request_posts(ctx):
        response = exchange.response
        if response is None or not response.is_event_stream:
            continue
        final = final_response(exchange, request)
        if final is None:
            continue
        later = [m for m in exchange.response_messages if m.index > final.index]
        if later:
            yield failed(later[0], f"{len(later)} message(s) followed the final response to {request.describe()}")
            continue
        ending = exchange.ending
        if ending is not None and ending.reason in (EndReason.OPEN, EndReason.CLIENT_DISCONNECT):
            lingered = ending.time - final.time
            if lingered > limit:
                yield failed(
                    final, f"the stream stayed open {lingered:.1f} s after the final response to {request.describe()}"
                )
                continue
        yield passed(final)


@log_check(
    requirements="HTTP-30", level=Level.SHOULD, subject="SSE responses", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def sse_responses_disable_proxy_buffering(ctx: Context) -> Iterator[Finding]:
    """Every 2026 SSE response carries X-Accel-Buffering: no.

    Header names are case-insensitive, header values are not: the value is exactly ``no`` (surrounding
    whitespace aside, which HTTP strips)."""
    for exchange in http_eras(ctx).routed_streams:
        response = exchange.response
        assert response is not None
        subject = exchange.request_message or exchange
        value = response.headers.get("x-accel-buffering")
        if value is not None and value.strip() == "no":
            yield passed(subject)
        elif value is not None and value.strip().lower() == "no":
            yield failed(subject, f"the SSE response has X-Accel-Buffering: {value.strip()}; header values are "
                         "case-sensitive and the value is `no`")  # fmt: skip
        else:
            shown = "no X-Accel-Buffering header" if value is None else f"X-Accel-Buffering: {value}"
            yield failed(subject, f"the SSE response has {shown}")


@log_check(
    requirements="HTTP-34", level=Level.SHOULD, subject="2026 SSE responses", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def streams_are_not_resumable(ctx: Context) -> Iterator[Finding]:
    """2026 SSE streams carry no event ids and a Last-Event-ID header replays nothing (INFO, ⚠A18)."""
    for exchange in http_eras(ctx).routed_streams:
        response = exchange.response
        assert response is not None
        subject = exchange.request_message or exchange
        request = exchange.request_message
        if exchange.request.headers.get(HeaderKey.LAST_EVENT_ID) is not None and request is not None:
            foreign = [m for m in exchange.response_messages if m.kind.is_response and m.id_key != request.id_key]
            if foreign:
                yield failed(foreign[0], f"a request with Last-Event-ID got {foreign[0].describe()} replayed")
                continue
        ids = [event.id for event in response.events if event.id]
        if ids:
            yield failed(subject, f"the stream numbers its events (id {ids[0]!r}); 2026 streams are not resumable")
        else:
            yield passed(subject)


def _resume_label(exchange: HttpExchange) -> str:
    with_id = " with Last-Event-ID" if exchange.request.headers.get(HeaderKey.LAST_EVENT_ID) is not None else ""
    return exchange.request.method + with_id


def _same_work(a: Message, b: Message) -> bool:
    def strip(message: Message) -> str:
        params = {key: value for key, value in params_of(message).items() if key != "_meta"}
        return json.dumps([message.method, params], sort_keys=True, default=str)

    return strip(a) == strip(b)


@log_check(
    requirements="HTTP-36",
    level=Level.MUST,
    subject="broken response streams",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def client_reissues_broken_streams_as_new_requests(ctx: Context) -> Iterator[Finding]:
    """When a 2026 response stream breaks before its final response, the client re-sends the work under a new id.

    It never tries to resume (no ``GET``, no ``Last-Event-ID``). A stream the server ended (or
    dropped) without the answer broke, whether the server or mcp-assay's ``--inject cut`` ended
    it; a stream the client closed itself is a cancellation, not a break. A client that went on
    with other requests and never re-sent the work fails; one that sent nothing more is not
    verified."""
    for exchange, request in event_stream_answers(ctx, Era.MODERN):
        ending = exchange.ending
        if sent_by_assay(exchange) or request.method == LISTEN or ending is None:
            continue
        if ending.reason not in (EndReason.SERVER_DISCONNECT, EndReason.ERROR, EndReason.COMPLETE):
            continue
        if final_response(exchange, request) is not None:
            continue
        resumes = [
            other
            for other in ctx.log.http_exchanges()
            if other.request.time > ending.time
            and not sent_by_assay(other)
            and other.request.headers.get(HeaderKey.SESSION_ID) is None  # a 2025 session's own resumption
            and (other.request.method == "GET" or other.request.headers.get(HeaderKey.LAST_EVENT_ID) is not None)
        ]
        if resumes:
            yield failed(
                request,
                f"after the stream of {request.describe()} broke the client tried to resume it "
                f"({_resume_label(resumes[0])}, {resumes[0].id})",
            )
            continue
        later = [r for _, r in later_requests(ctx, ending.time) if meta_version(r) is not None]  # 2026 work only
        again = next((r for r in later if _same_work(r, request)), None)
        if again is None and later:
            yield failed(
                request,
                f"the stream of {request.describe()} ended without its answer and the client went on "
                f"({later[0].describe()}) without re-sending the work",
            )
        elif again is None:
            yield unverified(f"{request.describe()} broke and the client sent nothing more within the capture", request)
        elif again.id_key == request.id_key:
            yield failed(request, f"the client re-sent {request.describe()} under the same id")
        else:
            yield passed(request, f"the client re-sent the work as {again.describe()}")
