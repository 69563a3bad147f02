"""Cancellations a gateway passes upstream (GW-04, GW-05).

A client cancels a request it sent the gateway: with ``notifications/cancelled`` naming its id (stdio, and
2025 HTTP), or in 2026 over HTTP by closing the request's stream. The upstream knows the request by the id
the *gateway* gave it, so a cancellation passed on must name that id (GW-04): the client's id cancels
nothing there, or another client's request. And it must be passed on at all while the upstream still works
on the request (GW-05), in the upstream's way: a notice, or a closed stream to a 2026 HTTP upstream;
otherwise the work the client gave up on lands anyway.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.gateway._relays import Relays, relays, shown
from mcp_assay.spec.rules.shared.reads import ANY_GATEWAY_RELAY
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.hops import Call, Relay, request_id
from mcp_assay.wire.jsonrpc import Message
from mcp_assay.wire.model import EndReason, HttpExchange

CANCELLED = "notifications/cancelled"
LATE = 0.05
"""Seconds the upstream's answer may follow a cancellation and still have been sent before it arrived."""


def _named(notice: Message) -> object:
    return notice.params.get("requestId") if isinstance(notice.params, dict) else None


def _cancelled(view: Relays, notice: Relay) -> Relay | None:
    """The client's request a front cancellation names (in its session or connection)."""
    ident = request_id(_named(notice.front.request))
    return view.correlation.relay_by_front_id(notice.front.session, ident) if ident is not None else None


@log_check(requirements="GW-04", level=Level.MUST, subject="cancellations passed upstream", follows=ANY_GATEWAY_RELAY)
def gateway_cancels_with_upstream_id(ctx: Context) -> Iterator[Finding]:
    """A cancellation passed upstream names the upstream's id for the request, not the client's."""
    view = relays(ctx)
    for notice in view:
        if notice.method != CANCELLED or notice.back is None or not ctx.in_scope(notice.front.request):
            continue
        passed_on = notice.back.request
        target = _cancelled(view, notice)
        if target is None:
            yield unverified(
                f"the client cancelled request {shown(_named(notice.front.request))}, which is not in the capture",
                passed_on,
            )
            continue
        if target.back is None:
            yield failed(
                passed_on,
                f"the gateway passed on a cancellation of {target.front.request.describe()}, which never reached the "
                f"upstream: it names {shown(_named(passed_on))}, a request the gateway never sent there",
                related=(notice.front.request,),
            )
            continue
        wanted = target.back.request
        if request_id(_named(passed_on)) == wanted.id_key:
            yield passed(passed_on, related=(notice.front.request, wanted))
            continue
        same = " (the client's id, not mapped)" if request_id(_named(passed_on)) == target.front.request.id_key else ""
        yield failed(
            passed_on,
            f"the cancellation the gateway passed upstream names id {shown(_named(passed_on))}{same}; the upstream "
            f"knows the cancelled {target.front.request.describe()} as {wanted.describe()}",
            related=(notice.front.request, wanted),
        )


def _disconnected(call: Call) -> bool:
    return call.ending is EndReason.CLIENT_DISCONNECT and not call.answers


class _Cancels:
    """The window's cancellations, indexed once: what the client cancelled (and when), what reached upstream."""

    def __init__(self, view: Relays) -> None:
        self.client: dict[int, float] = {}
        """The earliest cancellation of each client request, by the id of its relay."""
        self.upstream: dict[tuple[str | None, object], list[Call]] = {}
        """Cancellations the upstream got, by session (or connection) and the id they name."""
        for relay in view:
            if relay.method != CANCELLED:
                continue
            target = _cancelled(view, relay)
            if target is not None and relay.front.start >= target.front.start:
                key = id(target)
                self.client[key] = min(self.client.get(key, relay.front.start), relay.front.start)
        for call in [*view.correlation.unclaimed(), *(relay.back for relay in view if relay.back is not None)]:
            if call.method == CANCELLED:
                self.upstream.setdefault((call.session, request_id(_named(call.request))), []).append(call)

    def when(self, relay: Relay) -> tuple[float | None, str]:
        """When and how the client cancelled the relay's request (``None``: it did not)."""
        noticed = self.client.get(id(relay))
        if noticed is not None:
            return noticed, "cancelled"
        if _disconnected(relay.front) and relay.front.end is not None:
            return relay.front.end, "closed the stream of"
        return None, ""

    def reached(self, work: Call, after: float) -> Message | None:
        """A cancellation the upstream got for ``work`` (by its id, in its session) at or after ``after``."""
        for call in self.upstream.get((work.session, work.request.id_key), ()):
            if call.start >= after - LATE:
                return call.request
        return None


def _refused(view: Relays, notice: Message) -> int | None:
    """The HTTP status the upstream refused a cancellation with (``None``: it took it)."""
    call = view.correlation.call_of(notice)
    exchange = call.exchange if call is not None else None
    if isinstance(exchange, HttpExchange) and exchange.response is not None and exchange.response.status >= 400:
        return exchange.response.status
    return None


@log_check(
    requirements="GW-05",
    level=Level.SHOULD,
    subject="requests the client cancelled while upstream worked",
    follows=ANY_GATEWAY_RELAY,
)
def gateway_passes_cancellations_on(ctx: Context) -> Iterator[Finding]:
    """When the client cancels a request the upstream still works on, the gateway cancels it upstream."""
    view = relays(ctx)
    cancels = _Cancels(view)
    for relay in view:
        work = relay.back
        if work is None or relay.front.is_notification or not ctx.in_scope(relay.front.request):
            continue
        cancelled_at, how = cancels.when(relay)
        if cancelled_at is None:
            continue
        if work.end is not None and work.end <= cancelled_at + LATE and work.ending is not EndReason.CLIENT_DISCONNECT:
            continue  # the upstream had answered already: nothing left to cancel
        if work.ending is EndReason.CLIENT_DISCONNECT and (work.end or 0.0) >= cancelled_at - LATE:
            yield passed(relay.front.request, "the gateway closed the upstream's stream", related=(work.request,))
            continue
        notice = cancels.reached(work, cancelled_at)
        refused = _refused(view, notice) if notice is not None else None
        if notice is not None and refused is None:
            yield passed(relay.front.request, "a cancellation reached the upstream", related=(notice,))
            continue
        if notice is not None:
            yield failed(
                relay.front.request,
                f"the client {how} {relay.front.request.describe()}; the cancellation the gateway passed upstream was "
                f"refused (HTTP {refused}), so {work.request.describe()} went on",
                related=(notice,),
            )
            continue
        landed = f"; the upstream answered {work.end - cancelled_at:.2f} s later" if work.end is not None else ""
        yield failed(
            relay.front.request,
            f"the client {how} {relay.front.request.describe()}; no cancellation of {work.request.describe()} reached "
            f"the upstream{landed}",
            related=(work.request, *work.answers[:1]),
        )
