"""Cancellation (CAN-): how requests are cancelled, and that cancelled requests fall silent.

The signal depends on revision and transport. On 2026 Streamable HTTP the client cancels by
closing the request's SSE stream, and a POSTed ``notifications/cancelled`` means nothing (a
server may accept or refuse it). On stdio, in both revisions, and on 2025 HTTP, the client writes
``notifications/cancelled`` naming the request id with its JSON type; a 2025 HTTP disconnect is
not a cancellation. A 2026 server sends ``notifications/cancelled`` only to end a listen stream.

Messages a server had already queued may still arrive shortly after a cancellation; following
ambiguity A3, only messages later than a grace window (setting ``cancel_grace_s``, 1 s by
default) count as violations of a MUST, earlier ones as a SHOULD-level finding. The active suite
triggers these rules with a slow ``tools/call`` that it cancels, and with cancellations naming
ids that were never sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from mcp_assay.checks import Context, Finding, failed, log_check, passed, unverified
from mcp_assay.jsonrpc import MISSING, Kind, Message
from mcp_assay.spec.rules._common import error_code, http_exchange
from mcp_assay.spec.rules._streams import (
    CANCELLED,
    LISTEN,
    Cancellation,
    StreamIndex,
    describe_id,
    grace,
    index,
    meta_value,
    params_of,
    request_id_of,
    same_id,
)
from mcp_assay.verdicts import Level, Side
from mcp_assay.wire import EndReason, HttpExchange


def _cancel_notices(ctx: Context, *, sent_by: Side | None = Side.CLIENT) -> Iterator[Message]:
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=sent_by):
        if message.method == CANCELLED:
            yield message


def _in_scope(cancellations: list[Cancellation], ctx: Context, how: str | None = None) -> Iterator[Cancellation]:
    for cancellation in cancellations:
        if how is not None and cancellation.how != how:
            continue
        if ctx.in_scope(cancellation.request):
            yield cancellation


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
    side=Side.SERVER,
    subject="requests whose stream the client closed",
    features={"per_request_version"},
    transports={"http"},
)
def closing_a_stream_cancels_its_request(ctx: Context) -> Iterator[Finding]:
    """Once the client closes a request's SSE stream, nothing more about that request arrives on any stream.

    Triggered by a client disconnect from an unanswered request's response stream (the active
    suite closes a slow ``tools/call`` that carries a ``progressToken`` while a listen stream is
    open). Messages within the grace window are left to CAN-08's SHOULD-level rule."""
    idx = index(ctx)
    window = grace(ctx)
    for cancellation in _in_scope(idx.cancellations, ctx, "disconnect"):
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
    side=Side.SERVER,
    subject="cancelled stdio requests",
    features={"per_request_version"},
    transports={"stdio"},
)
def cancelled_stdio_requests_get_no_later_messages(ctx: Context) -> Iterator[Finding]:
    """After a stdio cancellation, the server sends no response, progress or log for that request.

    Triggered by a client ``notifications/cancelled`` naming an unanswered request (the active
    suite cancels a slow tool call). Only messages later than the grace window fail this MUST."""
    idx = index(ctx)
    window = grace(ctx)
    for cancellation in _in_scope(idx.cancellations, ctx, "notification"):
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


@log_check(
    requirements="CAN-08",
    level=Level.SHOULD_NOT,
    side=Side.SERVER,
    subject="cancelled requests",
)
def cancelled_requests_are_not_answered(ctx: Context) -> Iterator[Finding]:
    """A server stops answering a request once it was cancelled (no response, progress or log for it).

    Triggered by any cancellation: 2026 stream closes and stdio notices (where only messages
    inside the grace window are judged here; later ones fail the MUST rules), 2025 notices on
    any transport (where the cancellation page only says SHOULD)."""
    idx = index(ctx)
    window = grace(ctx)
    for cancellation in _in_scope(idx.cancellations, ctx):
        after = idx.after_cancellation(cancellation)
        modern = idx.revision_has(cancellation.request, "per_request_version")
        judged = [m for m in after if m.time <= cancellation.time + window] if modern else after
        if judged:
            first = judged[0]
            yield failed(first, f"{first.describe()} arrived {_late(first, cancellation)} after {_what(cancellation)}")
        elif not after:
            yield passed(cancellation.request)


def _post_answer(exchange: HttpExchange) -> tuple[int | None, list[Message]]:
    if exchange.response is None:
        return None, []
    answers = [m for m in exchange.response_messages if m.kind.is_response]
    return exchange.response.status, answers


@log_check(
    requirements="CAN-02",
    level=Level.MAY,
    side=Side.SERVER,
    subject="cancellation notices POSTed on 2026 HTTP",
    features={"per_request_version"},
    transports={"http"},
)
def http_cancel_notices_are_accepted_or_refused(ctx: Context) -> Iterator[Finding]:
    """A POSTed notifications/cancelled is answered 202 (accepted) or with a 4xx refusal, never a response."""
    for notice in _cancel_notices(ctx):
        exchange = http_exchange(notice, ctx)
        if exchange is None or exchange.response is None:
            continue
        status, answers = _post_answer(exchange)
        with_id = [m for m in answers if m.id is not MISSING and m.id is not None]
        if status == 202 and not answers:
            yield passed(notice)
        elif status is not None and 400 <= status < 500 and not with_id:
            yield passed(notice, f"the notice was refused with HTTP {status}")
        elif with_id:
            yield failed(with_id[0], f"the notice was answered with {with_id[0].describe()} (HTTP {status})")
        else:
            yield failed(notice, f"the notice got HTTP {status}; expected 202 or a 4xx")


@log_check(
    requirements="CAN-02",
    level=Level.MAY,
    side=Side.CLIENT,
    subject="2026 HTTP cancellations",
    features={"per_request_version"},
    transports={"http"},
)
def http_clients_cancel_by_closing_the_stream(ctx: Context) -> Iterator[Finding]:
    """2026 HTTP clients cancel by closing the response stream; a POSTed notifications/cancelled is only noted."""
    idx = index(ctx)
    for notice in _cancel_notices(ctx):
        if notice.transport == "http":
            yield failed(
                notice,
                "noted: the client POSTed notifications/cancelled; on 2026 HTTP closing the response stream is the "
                "cancellation signal and the server may ignore the notice",
            )
    for cancellation in _in_scope(idx.cancellations, ctx, "disconnect"):
        yield passed(cancellation.request)


@log_check(
    requirements="CAN-03",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="stdio cancellations",
    features={"per_request_version"},
    transports={"stdio"},
)
def stdio_cancellations_repeat_the_request_id_exactly(ctx: Context) -> Iterator[Finding]:
    """A stdio cancellation names the request id with the same JSON type and value (1 is not "1")."""
    idx = index(ctx)
    for notice in _cancel_notices(ctx):
        wanted = request_id_of(notice)
        if wanted is MISSING:
            continue  # the schema rule (CAN-05) reports a missing requestId
        if idx.cancelled_request(notice) is not None:
            yield passed(notice)
            continue
        loose = idx.requests_named_loosely(notice)
        if loose:
            yield failed(
                notice,
                f"requestId {describe_id(wanted)} does not match the id {describe_id(loose[-1].id)} of "
                f"{loose[-1].describe()}",
            )


@log_check(
    requirements="CAN-04",
    level=Level.MUST,
    side=Side.BOTH,
    subject="cancellation notices",
)
def cancellations_name_requests_their_sender_issued(ctx: Context) -> Iterator[Finding]:
    """A notifications/cancelled names a request its sender issued earlier (2025: in the same direction).

    A cancellation that crosses the answer is a tolerated race and passes."""
    idx = index(ctx)
    for notice in _cancel_notices(ctx, sent_by=None):
        if notice.sender is Side.SERVER and idx.revision_has(notice, "per_request_version"):
            continue  # a 2026 server's cancellations are CAN-06's concern
        wanted = request_id_of(notice)
        if wanted is MISSING or not isinstance(params_of(notice), dict):
            continue
        target = idx.cancelled_request(notice)
        who = "client" if notice.sender is Side.CLIENT else "server"
        if target is not None:
            answer = idx.first_answer(target)
            if answer is not None and idx.before(answer, notice):
                yield passed(notice, f"the cancellation of {target.describe()} crossed its answer (a tolerated race)")
            else:
                yield passed(notice)
            continue
        loose = idx.requests_named_loosely(notice)
        hint = f"; {loose[-1].describe()} has the id {describe_id(loose[-1].id)}" if loose else ""
        yield failed(notice, f"the {who} cancelled id {describe_id(wanted)}, which it never used for a request{hint}")


@log_check(
    requirements="CAN-05",
    level=Level.MUST,
    side=Side.BOTH,
    subject="cancellation notices",
    features={"handshake"},
)
def legacy_cancellations_name_a_request(ctx: Context) -> Iterator[Finding]:
    """A 2025 notifications/cancelled carries requestId (only tasks go without, and tasks use tasks/cancel)."""
    for notice in _cancel_notices(ctx, sent_by=None):
        if request_id_of(notice) is MISSING:
            yield failed(notice, "notifications/cancelled carries no requestId")
        else:
            yield passed(notice)


@log_check(
    requirements="CAN-06",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="server cancellation notices",
    features={"per_request_version"},
)
def servers_cancel_only_listen_requests(ctx: Context) -> Iterator[Finding]:
    """A 2026 server sends notifications/cancelled only to end an open subscriptions/listen."""
    idx = index(ctx)
    for notice in _cancel_notices(ctx, sent_by=Side.SERVER):
        wanted = request_id_of(notice)
        listens = [
            listen
            for listen in idx.open_listens(notice)
            if same_id(listen.id, wanted) and (notice.transport != "http" or idx.listen_carrying(notice) is listen)
        ]
        if listens:
            yield passed(notice)
        else:
            named = idx.cancelled_request(_as_client(notice)) if wanted is not MISSING else None
            what = f" it names {named.describe()}" if named is not None else ""
            yield failed(
                notice,
                f"the server sent notifications/cancelled for id {describe_id(wanted)}, not an open listen;{what}",
            )


def _as_client(notice: Message) -> Message:
    """The notice seen as if the client had sent it, to look the id up among the client's requests."""
    return replace(notice, sender=Side.CLIENT)


@log_check(
    requirements="CAN-07",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="subscriptions the server ended",
    features={"listen_subscriptions"},
)
def servers_end_subscriptions_explicitly(ctx: Context) -> Iterator[Finding]:
    """A server ending a subscription sends the listen result or notifications/cancelled first (A2: either)."""
    idx = index(ctx)
    for listen in idx.listens:
        if not ctx.in_scope(listen.request):
            continue
        if listen.ended_by in ("result", "server-cancel"):
            yield passed(listen.request)
        elif listen.ended_by == "server-close":
            yield failed(
                listen.request,
                f"the server closed the stream of {listen.request.describe()} without a listen result or "
                "notifications/cancelled",
            )


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
    for notice in _cancel_notices(ctx):
        why = _unknown(notice, idx)
        if why is not None:
            yield notice, why


def _stdio_replies(notice: Message, idx: StreamIndex, window: float) -> list[Message]:
    """Server responses that look like a reply to the notice: no id, or the id it names answered again."""
    wanted = request_id_of(notice)
    replies = []
    for message in idx.by_place.get(idx.place(notice), ()):
        if message.sender is not Side.SERVER or not idx.before(notice, message):
            continue
        if message.time > notice.time + window:
            break
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
    side=Side.SERVER,
    subject="cancellations of unknown or finished requests",
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
            status, answers = _post_answer(exchange)
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
    side=Side.SERVER,
    subject="requests after a cancellation of an unknown request",
)
def servers_keep_serving_after_unknown_cancellations(ctx: Context) -> Iterator[Finding]:
    """After a cancellation it cannot apply, the server still answers the next request.

    Triggered by a client ``notifications/cancelled`` naming no request in flight, followed by
    another request in the same session, connection or endpoint."""
    idx = index(ctx)
    for notice, why in _unknown_notices(ctx, idx):
        following = [
            request
            for request in idx.requests.get((idx.place(notice), Side.CLIENT), ())
            if idx.before(notice, request) and request.method != LISTEN
        ]
        if not following:
            continue
        request = following[0]
        answer = idx.first_answer(request)
        if answer is None:
            if _still_waiting(request, ctx):
                continue
            yield failed(request, f"{request.describe()} after a cancellation ({why}) was never answered")
        elif answer.kind is Kind.ERROR and error_code(answer) == -32603:
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


@log_check(
    requirements="CAN-10",
    level=Level.MUST_NOT,
    side=Side.CLIENT,
    subject="client cancellations",
    features={"handshake"},
)
def initialize_is_never_cancelled(ctx: Context) -> Iterator[Finding]:
    """A 2025 client never cancels its initialize request."""
    idx = index(ctx)
    for notice in _cancel_notices(ctx):
        target = idx.cancelled_request(notice)
        if target is None:
            continue
        if target.method == "initialize":
            yield failed(notice, "the client cancelled its initialize request")
        else:
            yield passed(notice)


def _task_augmented(request: Message) -> bool:
    params = request.params
    return isinstance(params, dict) and isinstance(params.get("task"), dict)


@log_check(
    requirements="CAN-11",
    level=Level.MUST,
    side=Side.BOTH,
    subject="cancellations",
    features={"tasks"},
)
def task_requests_are_cancelled_with_tasks_cancel(ctx: Context) -> Iterator[Finding]:
    """Task-augmented requests are cancelled with tasks/cancel, never with notifications/cancelled."""
    idx = index(ctx)
    for notice in _cancel_notices(ctx, sent_by=None):
        target = idx.cancelled_request(notice)
        if target is None:
            continue
        if _task_augmented(target):
            yield failed(
                notice, f"{target.describe()} is task-augmented but was cancelled with notifications/cancelled"
            )
        else:
            yield passed(notice)
    for message in ctx.messages(kinds={Kind.REQUEST}):
        if message.method == "tasks/cancel":
            yield passed(message)


@log_check(
    requirements="CAN-12",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="cancellation notices POSTed on 2025 HTTP",
    features={"handshake"},
    transports={"http"},
)
def legacy_http_cancellations_are_accepted(ctx: Context) -> Iterator[Finding]:
    """A 2025 HTTP server accepts a POSTed notifications/cancelled with 202."""
    for notice in _cancel_notices(ctx):
        exchange = http_exchange(notice, ctx)
        if exchange is None or exchange.response is None:
            continue
        if exchange.response.status == 202:
            yield passed(notice)
        else:
            yield failed(notice, f"notifications/cancelled got HTTP {exchange.response.status}, expected 202")


def _resumed(exchange: HttpExchange, ctx: Context) -> bool:
    session = exchange.request.headers.get("mcp-session-id")
    for other in ctx.log.http_exchanges():
        if other.request.method != "GET" or other.time < exchange.time:
            continue
        if other.request.headers.get("last-event-id") and other.request.headers.get("mcp-session-id") == session:
            return True
    return False


@log_check(
    requirements="CAN-12",
    level=Level.SHOULD_NOT,
    side=Side.CLIENT,
    subject="2025 HTTP requests whose stream the client dropped",
    features={"handshake"},
    transports={"http"},
)
def legacy_http_clients_do_not_cancel_by_disconnecting(ctx: Context) -> Iterator[Finding]:
    """A 2025 HTTP client that drops a request's stream also POSTs notifications/cancelled or resumes it.

    In 2025 a disconnect is not a cancellation: the server keeps working on the request."""
    idx = index(ctx)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        exchange = http_exchange(request, ctx)
        if exchange is None or request.index != 0 or not exchange.client_disconnected:
            continue
        if idx.first_answer(request) is not None:
            continue
        cancellation = idx.cancel_of.get((request.exchange, request.index))
        if cancellation is not None or _resumed(exchange, ctx):
            yield passed(request)
        else:
            yield failed(
                request,
                f"the client dropped the stream of {request.describe()} without notifications/cancelled or a resume; "
                "in 2025 a disconnect does not cancel",
            )


def _client_went_on(request: Message, idx: StreamIndex, limit: float) -> Message | None:
    for message in idx.by_place.get(idx.place(request), ()):
        if message.sender is Side.CLIENT and message.time > request.time + limit:
            return message
    return None


@log_check(
    requirements="CAN-13",
    level=Level.SHOULD,
    side=Side.CLIENT,
    subject="requests the client gave up on",
)
def clients_cancel_requests_they_abandon(ctx: Context) -> Iterator[Finding]:
    """A client cancels a request it stops waiting for (timeout), instead of leaving it open.

    Every observed cancellation passes; a request left unanswered and uncancelled while the
    client carried on for longer than ``request_timeout_s`` (300 s by default) is flagged."""
    idx = index(ctx)
    limit_setting: Any = ctx.settings.get("request_timeout_s", 300.0)
    limit = float(limit_setting) if isinstance(limit_setting, int | float) else 300.0
    for cancellation in _in_scope(idx.cancellations, ctx):
        if cancellation.request.method != LISTEN:  # ending a subscription is not giving up on a request
            yield passed(cancellation.request)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if request.method == LISTEN or idx.first_answer(request) is not None:
            continue
        if (request.exchange, request.index) in idx.cancel_of:
            continue
        exchange = http_exchange(request, ctx)
        if exchange is not None and exchange.ending is not None and exchange.ending.reason is not EndReason.OPEN:
            continue  # the stream ended: the client closed it or the server dropped it
        later = _client_went_on(request, idx, limit)
        if later is not None:
            yield failed(
                request,
                f"{request.describe()} was never answered nor cancelled, while the client went on "
                f"{later.time - request.time:.0f} s later",
            )
