"""Cancellation (CAN-01, 08, 09): a cancelled request falls silent; an unknown cancellation changes nothing.

On 2026 Streamable HTTP the client cancels by closing the request's SSE stream; on stdio, in
both revisions, and on 2025 HTTP it writes ``notifications/cancelled``. Either way the server
sends nothing more about that request. Messages a server had already queued may still arrive
shortly after a cancellation; following ambiguity A3, only messages later than a grace window
(setting ``cancel_grace_s``, 1 s by default) count as violations of a MUST, earlier ones as a
SHOULD-level finding. A cancellation naming an unknown or finished request gets no reply, and
the server goes on serving.

The active suite triggers these rules with a slow ``tools/call`` that it cancels, and with
cancellations naming ids that were never sent.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.cancellation._scope import cancel_notices, judged_cancellations, post_answer
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.reads import ANY_CANCELLATION
from mcp_assay.spec.rules.shared.stream_facts import (
    LISTEN,
    Cancellation,
    describe_id,
    grace,
    meta_value,
    request_id_of,
    same_id,
)
from mcp_assay.spec.rules.shared.streams import StreamIndex, index
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import EndReason, HttpExchange


def _late(message: Message, cancellation: Cancellation) -> str:
    return f"{message.time - cancellation.time:.2f} s"


def _what(cancellation: Cancellation) -> str:
    if cancellation.how == "disconnect":
        return f"the client closed the response stream of {cancellation.request.describe()}"
    return f"the client cancelled {cancellation.request.describe()}"


def _recognisable(request: Message) -> bool:
    """Whether traffic about the request could show up on another stream (a progress token, a listen id)."""
    return meta_value(request, "progressToken") is not MISSING or request.method == LISTEN


@log_check(
    requirements="CAN-01",
    level=Level.MUST,
    subject="requests whose stream the client closed",
    features={"per_request_version"},
    follows=ANY_CANCELLATION,
)
def closing_a_stream_cancels_its_request(ctx: Context) -> Iterator[Finding]:
    """Once the client closes a request's SSE stream, nothing more about that request arrives on any stream.

    Triggered by a client disconnect from an unanswered request's response stream (the active
    suite closes a slow ``tools/call`` that carries a ``progressToken`` while a listen stream is
    open). Messages within the grace window are left to CAN-08's SHOULD-level rule."""
    idx = index(ctx)
    window = grace(ctx)
    for cancellation in judged_cancellations(idx.cancellations, ctx, "disconnect"):
        late = [m for m in idx.after_cancellation(cancellation) if m.time > cancellation.time + window]
        if late:
            first = late[0]
            yield failed(first, f"{first.describe()} arrived {_late(first, cancellation)} after {_what(cancellation)}")
        elif _recognisable(cancellation.request):
            yield passed(cancellation.request)
        else:
            yield unverified(
                f"{cancellation.request.describe()} carried no progressToken, so later traffic about it on other "
                "streams could not be recognised",
                cancellation.request,
            )


@log_check(
    requirements="CAN-08",
    level=Level.MUST_NOT,
    subject="cancelled stdio requests",
    features={"per_request_version"},
    transports={"stdio"},
    because=(
        "stdio only: over HTTP the same requirement is judged on the cancelled request's own stream by the stream rules"
    ),
    follows=ANY_CANCELLATION,
)
def cancelled_stdio_requests_get_no_later_messages(ctx: Context) -> Iterator[Finding]:
    """After a stdio cancellation, the server sends no response, progress or log for that request.

    Triggered by a client ``notifications/cancelled`` naming an unanswered request (the active
    suite cancels a slow tool call). Only messages later than the grace window fail this MUST."""
    idx = index(ctx)
    window = grace(ctx)
    for cancellation in judged_cancellations(idx.cancellations, ctx, "notification"):
        late = [m for m in idx.after_cancellation(cancellation) if m.time > cancellation.time + window]
        if late:
            first = late[0]
            yield failed(
                first,
                f"{first.describe()} arrived {_late(first, cancellation)} after {_what(cancellation)} "
                f"(grace window {window:g} s)",
            )
        else:
            yield passed(cancellation.request)


@log_check(requirements="CAN-08", level=Level.SHOULD_NOT, subject="cancelled requests", follows=ANY_CANCELLATION)
def cancelled_requests_are_not_answered(ctx: Context) -> Iterator[Finding]:
    """A server stops answering a request once it was cancelled (no response, progress or log for it).

    Triggered by any cancellation: 2026 stream closes and stdio notices (where only messages
    inside the grace window are judged here; later ones fail the MUST rules), 2025 notices on
    any transport (where the cancellation page only says SHOULD)."""
    idx = index(ctx)
    window = grace(ctx)
    for cancellation in judged_cancellations(idx.cancellations, ctx):
        after = idx.after_cancellation(cancellation)
        modern = idx.revision_has(cancellation.request, "per_request_version")
        judged = [m for m in after if m.time <= cancellation.time + window] if modern else after
        if judged:
            first = judged[0]
            yield failed(first, f"{first.describe()} arrived {_late(first, cancellation)} after {_what(cancellation)}")
        elif not after:
            yield passed(cancellation.request)


def _unknown(notice: Message, idx: StreamIndex) -> str | None:
    """Why a client cancellation names no request in flight (``None`` when it names one)."""
    params = notice.params
    if not isinstance(params, dict):
        return "it is malformed (no params object)"
    wanted = params.get("requestId", MISSING)
    if wanted is MISSING:
        return "it has no requestId"
    if not (isinstance(wanted, str) or (isinstance(wanted, int) and not isinstance(wanted, bool))):
        return f"its requestId {wanted!r} is not a string or integer"
    target = idx.cancelled_request(notice)
    if target is None:
        return f"no request used the id {describe_id(wanted)}"
    answer = idx.first_answer(target)
    if answer is not None and idx.before(answer, notice):
        return f"{target.describe()} had already been answered"
    return None


def _unknown_notices(ctx: Context, idx: StreamIndex) -> Iterator[tuple[Message, str]]:
    for notice in cancel_notices(ctx):
        why = _unknown(notice, idx)
        if why is not None:
            yield notice, why


def _stdio_replies(notice: Message, idx: StreamIndex, window: float) -> list[Message]:
    """Server responses that look like a reply to the notice: no id, or the id it names answered again."""
    wanted = request_id_of(notice)
    replies = []
    for message in idx.following(notice):
        if message.time > notice.time + window:
            break
        if message.sender is not Side.SERVER:
            continue
        if message.kind is Kind.ERROR and (message.id is MISSING or message.id is None):
            replies.append(message)
        elif message.kind.is_response and wanted is not MISSING and same_id(message.id, wanted):
            request = idx.ctx.log.request_of(message)
            first = idx.first_answer(request) if request is not None else None
            if first is not None and first is not message and idx.before(first, notice):
                replies.append(message)
    return replies


@log_check(
    requirements="CAN-09",
    level=Level.MUST_NOT,
    subject="cancellations of unknown or finished requests",
    follows=ANY_CANCELLATION,
)
def unknown_cancellations_get_no_reply(ctx: Context) -> Iterator[Finding]:
    """A cancellation for an unknown or finished request (or a malformed one) gets no JSON-RPC reply.

    Triggered by a client ``notifications/cancelled`` naming no request in flight (the active
    suite sends one for an id it never used). HTTP: ``202``, or a 4xx whose body has no id."""
    idx = index(ctx)
    window = grace(ctx)
    for notice, why in _unknown_notices(ctx, idx):
        exchange = http_exchange(notice, ctx)
        if exchange is not None:
            status, answers = post_answer(exchange)
            if status is None:
                continue
            with_id = [m for m in answers if m.id is not MISSING and m.id is not None]
            if status == 202 and not answers:
                yield passed(notice)
            elif 400 <= status < 500 and not with_id:
                yield passed(notice, f"the cancellation ({why}) was refused with HTTP {status}")
            else:
                reply = with_id[0] if with_id else notice
                yield failed(reply, f"the cancellation ({why}) got HTTP {status} with {len(answers)} JSON-RPC answers")
            continue
        replies = _stdio_replies(notice, idx, window)
        if replies:
            yield failed(replies[0], f"the server replied with {replies[0].describe()} to a cancellation ({why})")
        else:
            yield passed(notice)


@log_check(
    requirements="CAN-09",
    level=Level.SHOULD,
    subject="requests after a cancellation of an unknown request",
    follows=ANY_CANCELLATION,
)
def servers_keep_serving_after_unknown_cancellations(ctx: Context) -> Iterator[Finding]:
    """After a cancellation it cannot apply, the server still answers the next request.

    Triggered by a client ``notifications/cancelled`` naming no request in flight, followed by
    another request in the same session, connection or endpoint."""
    idx = index(ctx)
    for notice, why in _unknown_notices(ctx, idx):
        request = idx.next_request(notice, Side.CLIENT)
        if request is None:
            continue
        answer = idx.first_answer(request)
        if answer is None:
            if _still_waiting(request, ctx):
                continue
            yield failed(request, f"{request.describe()} after a cancellation ({why}) was never answered")
        elif answer.kind is Kind.ERROR and error_code(answer) == ErrorCode.INTERNAL_ERROR:
            yield failed(answer, f"{request.describe()} after a cancellation ({why}) failed with an internal error")
        else:
            yield passed(request)


def _still_waiting(request: Message, ctx: Context) -> bool:
    """True when the capture may simply have stopped before the answer (open stream, stdio still running)."""
    exchange = ctx.log.get(request.exchange)
    if isinstance(exchange, HttpExchange):
        return exchange.ending is None or exchange.ending.reason is EndReason.OPEN
    connection = getattr(exchange, "connection", "")
    exits = [item for item in ctx.log.process_exits() if item.connection == connection]
    return not exits
