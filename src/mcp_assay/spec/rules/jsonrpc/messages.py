"""JSON-RPC basics (RPC-01..06, 10, 11): message shape, ids, one answer per request, notifications.

These rules hold in every revision and on every transport: every message is a UTF-8 JSON-RPC
2.0 object, request ids are strings or integers never reused, each request gets exactly one
response carrying a result or an error, and notifications carry no id and get no answer.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, Passes, failed, log_check, message_check, passed, passed_each, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import http_exchange, is_int
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE, ANY_PAIRING
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message, parser_limit
from mcp_assay.wire.model import EndReason


def _who(message: Message) -> str:
    return "the server" if message.sender is Side.SERVER else "the client"


SHOWN_ID = 40
"""An id whose text is longer is shown by its start and its length: a 4,301-digit id would fill the screen."""


def _shown_id(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_ID else f"{text[:SHOWN_ID]}… ({len(text):,} characters)"


@message_check(requirements="RPC-01", level=Level.MUST, subject="messages", methods=ANY_ENVELOPE)
def messages_are_jsonrpc_2_0_objects(message: Message, ctx: Context) -> Finding | None:
    """Every message is a JSON object with "jsonrpc": "2.0"."""
    if message.kind is Kind.BATCH:
        return None  # judged as a batch (RPC-14)
    if message.kind is Kind.UNPARSEABLE:
        limit = parser_limit(message)
        if limit is not None:
            return unverified(f"mcp-assay could not read a message {_who(message)} sent: {limit}", message)
        if message.transport == "stdio":
            return None  # a non-JSON line on stdio is named by STDIO-01/02/03, not judged twice
        problems = "; ".join(p.detail for p in message.problems if p.code in ("syntax", "bom"))
        return failed(message, f"{_who(message)} sent something that is not JSON: {problems}")
    if message.kind is Kind.INVALID:
        shape = "; ".join(p.detail for p in message.problems if p.code == "shape")
        return failed(message, f"{_who(message)} sent JSON that is not a JSON-RPC message: {shape}")
    if message.member("jsonrpc") != "2.0":
        return failed(message, f'{message.describe()} has jsonrpc {message.member("jsonrpc")!r}, expected "2.0"')
    return passed(message)


@message_check(requirements="RPC-02", level=Level.MUST, subject="messages", methods=ANY_ENVELOPE)
def messages_are_utf8(message: Message, ctx: Context) -> Finding:
    """Messages are UTF-8 encoded."""
    bad = [p.detail for p in message.problems if p.code == "encoding"]
    if bad:
        return failed(message, f"{_who(message)} sent a message that is {bad[0]}")
    return passed(message)


@message_check(requirements="RPC-03", level=Level.MUST, subject="requests", kinds={Kind.REQUEST}, methods=ANY_ENVELOPE)
def request_ids_are_strings_or_integers(message: Message, ctx: Context) -> Finding:
    """Request ids are strings or integers (never null, boolean, fractional, object or array)."""
    ident = message.id
    if isinstance(ident, str) or is_int(ident):
        return passed(message)
    text = "null" if ident is None else repr(ident)
    return failed(message, f"{message.describe()} uses id {text} ({type(ident).__name__})")


@log_check(requirements="RPC-04", level=Level.MUST_NOT, subject="requests", follows=ANY_PAIRING)
def request_ids_are_not_reused(ctx: Context) -> Iterator[Finding]:
    """A sender does not reuse an id while it is still in flight (2025: within the session at all)."""
    seen: dict[tuple[str, Side, tuple[str, object]], list[Message]] = defaultdict(list)
    for message in ctx.messages(kinds={Kind.REQUEST}):
        key = message.id_key
        if key is None:
            continue
        exchange = ctx.log.get(message.exchange)
        scope = ctx.log.session(message) or (exchange.connection if exchange is not None else "")
        earlier = seen[(scope, message.sender, key)]
        revision = ctx.revision(message)
        handshake = revision is not None and revision.has("handshake")
        clash = None
        for previous in earlier:
            answers = ctx.log.responses_to(previous)
            answered = bool(answers) and min(answer.time for answer in answers) <= message.time
            still_open = not answered and not _over(previous, ctx, before=message.time)
            if handshake or still_open:
                clash = previous
                break
        if clash is not None and not scope:
            # a capture without sessions or connections (a HAR file) cannot tell two clients apart,
            # and two clients may well number their requests alike
            yield unverified(
                f"{message.describe()} shares its id with an earlier request, but the capture names no "
                "session or connection, so whether one client sent both is unknown",
                message,
            )
        elif clash is not None:
            why = "earlier in the session" if handshake else "while that request was still in flight"
            yield failed(message, f"{message.describe()} reuses the id of a request sent {why}")
        else:
            yield passed(message)
        earlier.append(message)


def _over(request: Message, ctx: Context, before: float) -> bool:
    """Whether ``request`` could no longer be answered by ``before``: the sender cancelled it, or the
    HTTP exchange it travelled in had ended (refused with a 401, say), so no answer can come on it."""
    exchange = http_exchange(request, ctx)
    ending = exchange.ending if exchange is not None else None
    if ending is not None and ending.reason is not EndReason.OPEN and ending.time <= before:
        return True
    return _cancelled(request, ctx, before)


def _cancelled(request: Message, ctx: Context, before: float = math.inf) -> bool:
    """Whether the sender gave up on ``request`` (closed its stream or sent a cancellation) by ``before``."""
    exchange = http_exchange(request, ctx)
    if exchange is not None and exchange.client_disconnected and exchange.ending and exchange.ending.time <= before:
        return True
    return ctx.log.cancellation(request, before=before) is not None


def _answers_an_unreadable_request(message: Message, ctx: Context) -> bool:
    """An error in the same HTTP exchange as a malformed body (no method, a batch ...) answers that body."""
    exchange = http_exchange(message, ctx)
    request = exchange.request_message if exchange is not None else None
    return request is not None and request.kind in (Kind.INVALID, Kind.BATCH, Kind.UNPARSEABLE)


@log_check(requirements="RPC-05", level=Level.MUST, subject="requests and responses", follows=ANY_PAIRING)
def each_request_gets_exactly_one_response(ctx: Context) -> Iterator[Finding | Passes]:
    """Each request gets exactly one response with the same id; nothing answers an id never sent."""
    passes: list[Message] = []
    for message in ctx.messages(kinds={Kind.RESULT, Kind.ERROR}):
        if message.id is MISSING or message.id is None:
            continue  # errors about unreadable requests carry no id (RPC-09)
        if ctx.deliberately_invalid(message):
            continue  # the active suite's response to a request that never existed, sent on purpose
        if ctx.log.request_of(message) is None and not _answers_an_unreadable_request(message, ctx):
            answered = f"{_who(message)} answered id {_shown_id(message.id)}"
            yield failed(message, f"{answered}, which no request in the traffic used")
    for request in ctx.messages(kinds={Kind.REQUEST}):
        answers = ctx.log.responses_to(request)
        if len(answers) > 1:
            yield failed(answers[1], f"{request.describe()} was answered {len(answers)} times")
        elif len(answers) == 1:
            passes.append(request)
        elif request.method == "subscriptions/listen" or _cancelled(request, ctx):
            continue
        else:
            exchange = http_exchange(request, ctx)
            if exchange is not None and exchange.ending is not None and exchange.ending.reason is EndReason.COMPLETE:
                if exchange.response is not None and exchange.response.status < 400:
                    yield failed(request, f"the response stream for {request.describe()} ended without an answer")
    yield passed_each(passes)


@message_check(
    requirements="RPC-06",
    level=Level.MUST,
    side=Side.BOTH,
    subject="responses",
    because="in 2025-11-25 either side answers requests (a client answers a server's sampling or elicitation request)",
    methods=ANY_ENVELOPE,
)
def responses_carry_exactly_one_of_result_or_error(message: Message, ctx: Context) -> Finding | None:
    """A response carries exactly one of result or error, and that member is an object."""
    if message.kind is Kind.INVALID and isinstance(message.payload, dict):
        payload = message.payload
        if "result" in payload and "error" in payload:
            return failed(message, f"{_who(message)} sent a response with both result and error")
        if "id" in payload and "method" not in payload:
            return failed(message, f"{_who(message)} sent a response with neither result nor error")
        return None
    if message.kind is Kind.RESULT and not isinstance(message.result, dict):
        return failed(message, f"{message.describe()} has a result that is not an object: {message.result!r}"[:300])
    if message.kind is Kind.ERROR and not isinstance(message.error, dict):
        return failed(message, f"{message.describe()} has an error that is not an object")
    if message.kind.is_response:
        return passed(message)
    return None


@message_check(
    requirements="RPC-10",
    level=Level.MUST_NOT,
    subject="notifications",
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
    methods=ANY_ENVELOPE,
)
def notifications_carry_no_id(message: Message, ctx: Context) -> Finding | None:
    """Notifications (methods defined as notifications) carry no id."""
    revision = ctx.revision(message)
    if revision is None or message.method is None:
        return None
    defined_as_notification = message.method in revision.validator.notification_defs
    if not defined_as_notification:
        return None
    if message.kind is Kind.REQUEST:
        return failed(message, f"{message.method} is a notification but was sent with an id")
    return passed(message)


@log_check(requirements="RPC-11", level=Level.MUST_NOT, subject="client notifications", follows=ANY_PAIRING)
def notifications_are_not_answered(ctx: Context) -> Iterator[Finding]:
    """Nobody answers a notification with a JSON-RPC response.

    HTTP: a response with an id in the body of a notification POST; an id-less (or null-id) error is
    how HTTP-06 lets a server refuse one, so it is no answer. stdio: a server response without an id
    (a notification has none to echo) written after a client notification and before the client's
    next line, while no earlier malformed client line is still waiting for its id-less error."""
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.CLIENT):
        exchange = http_exchange(message, ctx)
        if exchange is None or exchange.response is None:
            continue
        answers = [m for m in exchange.response_messages if m.kind.is_response and m.id not in (MISSING, None)]
        if answers:
            yield failed(answers[0], f"{message.method} was answered with {answers[0].describe()}")
        else:
            yield passed(message)
    yield from _stdio_notification_answers(ctx)


def _stdio_notification_answers(ctx: Context) -> Iterator[Finding]:
    connections: dict[str, list[Message]] = defaultdict(list)
    for line in ctx.log.stdio_lines():
        if ctx.in_scope(line.message):
            connections[line.connection].append(line.message)
    for messages in connections.values():
        unreadable = 0
        notification: Message | None = None
        answered = False
        for message in sorted(messages, key=lambda item: item.time):
            if message.sender is Side.CLIENT:
                if notification is not None and not answered:
                    yield passed(notification)
                notification = message if message.kind is Kind.NOTIFICATION else None
                answered = False
                if message.kind in (Kind.BATCH, Kind.UNPARSEABLE) or (
                    message.kind is Kind.INVALID and message.id in (MISSING, None)
                ):
                    unreadable += 1
                continue
            if not message.kind.is_response or message.id not in (MISSING, None):
                continue
            if unreadable:
                unreadable -= 1  # an id-less error answering an earlier malformed line
            elif notification is not None and not answered:
                answered = True
                yield failed(message, f"{notification.method} was answered with {message.describe()}")
        if notification is not None and not answered:
            yield passed(notification)
