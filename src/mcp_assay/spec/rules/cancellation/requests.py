"""Which requests are cancelled, and how (CAN-10..13): initialize, tasks, 2025 HTTP, abandoned requests.

``initialize`` is never cancelled; a task-augmented request is cancelled with ``tasks/cancel``;
on 2025 HTTP a cancellation is a notice (accepted by the server), never a disconnect; and a
client that gives up on a request cancels it. Whether a client gives up at all shows when an
answer is late: mcp-assay's ``--inject hold`` keeps one answer (and one ``initialize`` answer)
from the client past its timeout, and these rules judge what the client did meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.cancellation._scope import cancel_notices, judged_cancellations
from mcp_assay.spec.rules.shared.common import http_exchange, params_of
from mcp_assay.spec.rules.shared.envelopes import place_of
from mcp_assay.spec.rules.shared.reads import ANY_CANCELLATION
from mcp_assay.spec.rules.shared.stream_facts import CANCELLED, LISTEN, describe_id, request_id_of
from mcp_assay.spec.rules.shared.streams import StreamIndex, index
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.faults import FaultKind, fault_kind_of
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message, id_key
from mcp_assay.wire.model import EndReason, HttpExchange, Probe, StdioLine
from mcp_assay.wire.traffic import message_key


def held_requests(ctx: Context, *, initialize: bool) -> Iterator[tuple[Message, Probe]]:
    """Client requests whose answer mcp-assay held back (``--inject hold``), with the injection's tag: the
    ``initialize`` requests, or the others."""
    for exchange in ctx.log:
        probe = exchange.probe
        if probe is None or fault_kind_of(probe) is not FaultKind.HELD:
            continue
        if isinstance(exchange, HttpExchange) and exchange.request_message is not None:
            request = exchange.request_message
        elif isinstance(exchange, StdioLine) and exchange.sender is Side.CLIENT:
            request = exchange.message
        else:
            continue
        if (request.method == "initialize") is initialize:
            yield request, probe


def _hold_ms(probe: Probe) -> str:
    value = probe.facts.hold_ms
    return f"{value} ms" if value is not None else "its hold"


@log_check(
    requirements="CAN-10",
    level=Level.MUST_NOT,
    subject="client cancellations",
    features={"handshake"},
    follows=ANY_CANCELLATION,
)
def initialize_is_never_cancelled(ctx: Context) -> Iterator[Finding]:
    """A 2025 client never cancels its initialize request.

    Every cancellation of another request passes; so does an ``initialize`` whose answer
    mcp-assay held back past the client's timeout and which the client did not cancel."""
    idx = index(ctx)
    cancelled: set[object] = set()
    for notice in cancel_notices(ctx):
        target = idx.cancelled_request(notice)
        if target is None:
            continue
        if target.method == "initialize":
            cancelled.add(message_key(target))
            yield failed(notice, "the client cancelled its initialize request")
        else:
            yield passed(notice)
    for request, probe in held_requests(ctx, initialize=True):
        if message_key(request) in cancelled or not ctx.in_scope(request):
            continue
        naming = _notice_naming(request, ctx)
        if naming is not None:
            yield failed(request, f"while its answer was held the client cancelled initialize ({naming.describe()})")
        else:
            yield passed(request, f"its answer was held back {_hold_ms(probe)}; the client did not cancel it")


def _notice_naming(request: Message, ctx: Context) -> Message | None:
    """A cancellation the client sent after ``request`` to the same place, naming its id (before a 2025 HTTP
    session exists, a notice has no session of its own to be matched by)."""
    place = place_of(request, ctx)
    for notice in cancel_notices(ctx):
        if notice.time > request.time and place_of(notice, ctx) == place:
            if id_key(params_of(notice).get("requestId", MISSING)) == request.id_key:
                return notice
    return None


def _task_augmented(request: Message) -> bool:
    params = request.params
    return isinstance(params, dict) and isinstance(params.get("task"), dict)


@log_check(
    requirements="CAN-11",
    level=Level.MUST,
    subject="cancellations",
    features={"tasks"},
    follows={CANCELLED, "tasks/cancel"},
)
def task_requests_are_cancelled_with_tasks_cancel(ctx: Context) -> Iterator[Finding]:
    """Task-augmented requests are cancelled with tasks/cancel, never with notifications/cancelled."""
    idx = index(ctx)
    for notice in cancel_notices(ctx, sent_by=None):
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
    because="the server's half: a POSTed notifications/cancelled is answered 202",
    follows={CANCELLED},
)
def legacy_http_cancellations_are_accepted(ctx: Context) -> Iterator[Finding]:
    """A 2025 HTTP server accepts a POSTed notifications/cancelled with 202."""
    for notice in cancel_notices(ctx):
        exchange = http_exchange(notice, ctx)
        if exchange is None or exchange.response is None:
            continue
        if exchange.response.status == 202:
            yield passed(notice)
        else:
            yield failed(notice, f"notifications/cancelled got HTTP {exchange.response.status}, expected 202")


def _resumed(exchange: HttpExchange, ctx: Context) -> bool:
    session = exchange.request.headers.get(HeaderKey.SESSION_ID)
    for other in ctx.log.http_exchanges():
        if other.request.method != "GET" or other.time < exchange.time:
            continue
        if (
            other.request.headers.get(HeaderKey.LAST_EVENT_ID)
            and other.request.headers.get(HeaderKey.SESSION_ID) == session
        ):
            return True
    return False


@log_check(
    requirements="CAN-12",
    level=Level.SHOULD_NOT,
    side=Side.CLIENT,
    subject="2025 HTTP requests whose stream the client dropped",
    features={"handshake"},
    because="the client's half: it cancels by notification, not by dropping the connection",
    follows=ANY_CANCELLATION,
)
def legacy_http_clients_do_not_cancel_by_disconnecting(ctx: Context) -> Iterator[Finding]:
    """A 2025 HTTP client that drops a request's stream also POSTs notifications/cancelled or resumes it.

    In 2025 a disconnect is not a cancellation: the server keeps working on the request."""
    idx = index(ctx)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        exchange = http_exchange(request, ctx)
        if exchange is None or request.index != 0 or not exchange.client_disconnected:
            continue
        if request.method == "initialize":
            continue  # initialize must never be cancelled (CAN-10): dropping it is the only way to give up
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
    requirements="CAN-13", level=Level.SHOULD, subject="requests the client gave up on", follows=ANY_CANCELLATION
)
def clients_cancel_requests_they_abandon(ctx: Context) -> Iterator[Finding]:
    """A client cancels a request it stops waiting for (timeout), instead of leaving it open.

    Every observed cancellation passes; a request left unanswered and uncancelled while the
    client carried on for longer than ``request_timeout_s`` (300 s by default) is flagged."""
    idx = index(ctx)
    limit_setting: Any = ctx.settings.get("request_timeout_s", 300.0)
    limit = float(limit_setting) if isinstance(limit_setting, int | float) else 300.0
    for cancellation in judged_cancellations(idx.cancellations, ctx):
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


@log_check(
    requirements="CAN-13",
    level=Level.SHOULD,
    subject="requests whose answer mcp-assay held back",
    follows=ANY_CANCELLATION,
)
def clients_cancel_requests_whose_answer_is_late(ctx: Context) -> Iterator[Finding]:
    """A client whose timeout passes while an answer is late cancels the request, in its era's way.

    The subjects are the requests whose answer ``--inject hold`` kept back: one the client
    cancelled (2026 HTTP: it closed the stream; stdio and 2025: ``notifications/cancelled`` naming
    its id, type and value) passes. One it cancelled in another era's way fails: on 2026 HTTP a
    POSTed notice with the stream kept open (the server may ignore the notice and keep working), on
    2025 HTTP a dropped stream without the notice. So does a notice naming its id only as text
    (``"2"`` for ``2``: it names no request), and the work re-sent without cancelling the first.
    One whose answer the client waited for is not verified (its timeout, if it has one, is longer
    than the hold)."""
    idx = index(ctx)
    for request, probe in held_requests(ctx, initialize=False):
        if not ctx.in_scope(request):
            continue
        cancellation = idx.cancel_of.get(message_key(request))
        exchange = http_exchange(request, ctx)
        modern_http = exchange is not None and idx.revision_has(request, "per_request_version")
        if cancellation is not None:
            how = "closed its stream" if cancellation.how == "disconnect" else "sent notifications/cancelled"
            yield passed(request, f"the client gave up after {cancellation.time - request.time:.2f} s and {how}")
        elif exchange is not None and exchange.client_disconnected:
            yield failed(
                request,
                f"the client dropped {request.describe()} without notifications/cancelled; in 2025 a disconnect "
                "does not cancel",
            )
        elif modern_http and (notice := _notice_naming(request, ctx)) is not None:
            yield failed(
                request,
                f"the client POSTed {notice.describe()} but kept the stream of {request.describe()} open; on 2026 "
                "HTTP closing the stream is the cancellation",
            )
        elif (loose := _notice_naming_loosely(request, idx)) is not None:
            yield failed(
                request,
                f"the client's {loose.describe()} names id {describe_id(request_id_of(loose))}, not "
                f"{describe_id(request.id)}: it cancels no request",
            )
        elif (again := _resent(request, idx)) is not None:
            yield failed(request, f"the client re-sent the work ({again.describe()}) without cancelling the first")
        else:
            yield unverified(
                f"the client waited out the hold ({_hold_ms(probe)}) for {request.describe()}: its timeout, if any, "
                "is longer",
                request,
            )


def _notice_naming_loosely(request: Message, idx: StreamIndex) -> Message | None:
    """A client notice after ``request`` in its place whose requestId equals its id only as text."""
    for message in idx.following(request):
        if message.sender is Side.CLIENT and message.method == CANCELLED and message.kind is Kind.NOTIFICATION:
            if any(message_key(named) == message_key(request) for named in idx.requests_named_loosely(message)):
                return message
    return None


def _resent(request: Message, idx: StreamIndex) -> Message | None:
    """A later request of the same client for the same method and params, sent before any answer to ``request``."""
    answered = idx.first_answer(request)
    deadline = answered.time if answered is not None else float("inf")
    for message in idx.by_place.get(idx.place(request), ()):
        if message.sender is not Side.CLIENT or message.kind is not Kind.REQUEST or message is request:
            continue
        if request.time < message.time < deadline and message.method == request.method:
            if _work(message) == _work(request):
                return message
    return None


def _work(request: Message) -> dict[str, Any] | None:
    """A request's params without ``_meta``: what two requests for the same work share."""
    params = request.params
    return {key: value for key, value in params.items() if key != "_meta"} if isinstance(params, dict) else None
