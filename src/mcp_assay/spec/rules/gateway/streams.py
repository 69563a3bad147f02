"""What a request's stream carried upstream, and what of it reached the client (GW-01..03, GW-06, GW-07, GW-16).

The upstream may send notifications (progress, log messages) on a request's stream before its answer, and
in 2025 requests of its own (sampling, elicitation). A gateway between them owes the client the same stream:
every notification while the client's stream is open (GW-01), in the upstream's order and before the answer
(GW-02), as it arrives rather than once the answer came (GW-03), naming the client's progress token (GW-06)
and subscription id (GW-07); and the upstream's requests with the client's answers to them (GW-16).

A notification upstream is matched to one on the client's stream by its method and params (``_meta`` and
the progress token left out: those a gateway maps), in order.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.gateway._relays import answer_of, relays, shown
from mcp_assay.spec.rules.shared.reads import ANY_GATEWAY_RELAY
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.hops import Relay, canonical, params_shape
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Hop

HELD = 0.25
"""Seconds before its answer an upstream notification must have come for holding it back to be judged (GW-03)."""


def _notifications(messages: list[Message]) -> list[Message]:
    return [message for message in messages if message.kind is Kind.NOTIFICATION]


def _key(message: Message) -> tuple[str, str]:
    return (message.method or "", canonical(params_shape(message.method or "", message.params)))


def pairs(relay: Relay) -> list[tuple[Message, Message | None]]:
    """Each upstream notification of the relay that came while the client's stream was open, with the notification
    on the client's stream it became (``None``: it never reached the client), matched in order: one that says the
    same first, else the next of the same method (one the gateway changed on the way)."""
    return [(upstream, relayed) for upstream, relayed, _ in matched(relay)]


def matched(relay: Relay) -> list[tuple[Message, Message | None, bool]]:
    """:func:`pairs`, each pair saying whether the relayed notification says what the upstream's said."""
    back = relay.back
    if back is None:
        return []
    front = relay.front
    fronts = _notifications(front.stream)
    used = [False] * len(fronts)
    upstream = [notice for notice in _notifications(back.stream) if notice.time < front.open_until]
    found: list[tuple[Message, int | None, bool]] = []
    position = 0
    for notice in upstream:
        key = _key(notice)
        match = next((i for i in range(position, len(fronts)) if not used[i] and _key(fronts[i]) == key), None)
        if match is None:
            match = next((i for i in range(len(fronts)) if not used[i] and _key(fronts[i]) == key), None)
        if match is not None:
            used[match] = True
            position = max(position, match + 1)
        found.append((notice, match, match is not None))
    for number, (notice, match, _) in enumerate(found):  # what the gateway changed: the next of the same method
        if match is None:
            other = next((i for i in range(len(fronts)) if not used[i] and fronts[i].method == notice.method), None)
            if other is not None:
                used[other] = True
                found[number] = (notice, other, False)
    return [(notice, fronts[match] if match is not None else None, exact) for notice, match, exact in found]


def _judged(ctx: Context, relay: Relay) -> bool:
    return relay.back is not None and ctx.in_scope(relay.front.request)


@log_check(
    requirements="GW-01",
    level=Level.SHOULD,
    subject="upstream notifications on a relayed request's stream",
    follows=ANY_GATEWAY_RELAY,
)
def gateway_relays_stream_notifications(ctx: Context) -> Iterator[Finding]:
    """A notification the upstream sent on a request's stream reaches the client on that request's stream."""
    for relay in relays(ctx):
        if not _judged(ctx, relay):
            continue
        assert relay.back is not None
        found = pairs(relay)
        lost = [upstream for upstream, relayed in found if relayed is None]
        if lost:
            first = lost[0]
            some = f"{len(lost)} of the {len(found)} notifications" if len(found) > 1 else "the notification"
            yield failed(
                relay.front.request,
                f"the upstream sent {some} on the stream of {relay.back.request.describe()} while the client's stream "
                f"of {relay.front.request.describe()} was open ({first.describe()} first); "
                f"{'they' if len(lost) > 1 else 'it'} never reached the client",
                related=(first,),
            )
        elif found:
            last, relayed = found[-1]
            yield passed(relayed, f"{len(found)} upstream notification(s) reached the client", related=(last,))


@log_check(
    requirements="GW-02", level=Level.SHOULD, subject="relayed notifications of one request", follows=ANY_GATEWAY_RELAY
)
def gateway_keeps_stream_order(ctx: Context) -> Iterator[Finding]:
    """The notifications of one request reach the client in the upstream's order, and before its answer."""
    for relay in relays(ctx):
        if not _judged(ctx, relay):
            continue
        assert relay.back is not None
        matched = [(upstream, relayed) for upstream, relayed in pairs(relay) if relayed is not None]
        if not matched:
            continue
        back_answer, front_answer = answer_of(relay.back), answer_of(relay.front)
        problem = ""
        subject: Message | None = None
        for (first, first_relayed), (second, second_relayed) in zip(matched, matched[1:], strict=False):
            assert first_relayed is not None and second_relayed is not None
            if _order(second_relayed) < _order(first_relayed):
                problem = f"the upstream sent {first.describe()} before {second.describe()}; the client got them the "
                problem += "other way round"
                subject = second_relayed
                break
        if not problem and back_answer is not None and front_answer is not None:
            for upstream, relayed in matched:
                assert relayed is not None
                if upstream.time <= back_answer.time and _order(relayed) > _order(front_answer):
                    problem = (
                        f"the upstream sent {upstream.describe()} before its answer; the client got it after the "
                        f"answer to {relay.front.request.describe()}"
                    )
                    subject = relayed
                    break
        if problem:
            yield failed(subject, problem, related=(relay.back.request,))
        else:
            yield passed(matched[-1][1], f"{len(matched)} relayed notification(s) in the upstream's order")


def _order(message: Message) -> tuple[float, int]:
    return (message.time, message.index)


@log_check(
    requirements="GW-03",
    level=Level.SHOULD,
    subject="upstream notifications sent well before the answer",
    follows=ANY_GATEWAY_RELAY,
)
def gateway_does_not_hold_events(ctx: Context) -> Iterator[Finding]:
    """A notification the upstream sent well before its answer reaches the client before that answer came."""
    for relay in relays(ctx):
        if not _judged(ctx, relay):
            continue
        assert relay.back is not None
        answer = answer_of(relay.back)
        if answer is None:
            continue
        for upstream, relayed in pairs(relay):
            if relayed is None or upstream.time > answer.time - HELD:
                continue
            if relayed.time >= answer.time:
                yield failed(
                    relayed,
                    f"the upstream sent {upstream.describe()} {answer.time - upstream.time:.2f} s before its answer; "
                    f"the gateway passed it on only {relayed.time - answer.time:.3f} s after the answer came (the "
                    "stream was held back)",
                    related=(upstream,),
                )
            else:
                yield passed(relayed, "relayed as it came", related=(upstream,))


@log_check(
    requirements="GW-06",
    level=Level.MUST,
    subject="progress notifications relayed to the client",
    follows=ANY_GATEWAY_RELAY,
)
def gateway_maps_progress_tokens(ctx: Context) -> Iterator[Finding]:
    """A relayed progress notification names the progressToken the client gave its request."""
    for relay in relays(ctx):
        if not _judged(ctx, relay):
            continue
        assert relay.back is not None
        meta = relay.front.request.meta
        if meta is None or "progressToken" not in meta:
            continue
        token = meta["progressToken"]
        back_meta = relay.back.request.meta or {}
        upstream_token = back_meta.get("progressToken")
        for notice in _notifications(relay.front.stream):
            if notice.method != "notifications/progress" or not isinstance(notice.params, dict):
                continue
            named = notice.params.get("progressToken")
            if named == token and type(named) is type(token):
                yield passed(notice, related=(relay.back.request,))
                continue
            unmapped = " (the token the gateway gave the upstream, not mapped back)" if named == upstream_token else ""
            yield failed(
                notice,
                f"{notice.describe()} names progressToken {shown(named)}{unmapped}; the client's "
                f"{relay.front.request.describe()} gave {shown(token)}",
                related=(relay.back.request,),
            )


@log_check(
    requirements="GW-07",
    level=Level.MUST,
    subject="notifications relayed on a listen stream",
    features={"listen_subscriptions"},
    follows=ANY_GATEWAY_RELAY,
)
def gateway_maps_subscription_ids(ctx: Context) -> Iterator[Finding]:
    """A notification relayed on a subscriptions/listen stream carries the client's subscription id."""
    for relay in relays(ctx):
        if relay.method != "subscriptions/listen" or not _judged(ctx, relay):
            continue
        assert relay.back is not None
        own = relay.front.request.id
        upstream = relay.back.request.id
        for notice in _notifications(relay.front.stream):
            meta = notice.meta
            if meta is None or MetaKey.SUBSCRIPTION_ID not in meta:
                continue
            named = meta[MetaKey.SUBSCRIPTION_ID]
            if named == own and type(named) is type(own):
                yield passed(notice, related=(relay.back.request,))
                continue
            unmapped = " (the upstream's id, not mapped back)" if named == upstream else ""
            yield failed(
                notice,
                f"{notice.describe()} names subscription {shown(named)}{unmapped}; the client's listen request is "
                f"id {shown(own)}",
                related=(relay.back.request,),
            )


@log_check(
    requirements="GW-16",
    level=Level.SHOULD,
    subject="requests the upstream sent on a relayed request's stream",
    features={"handshake"},
    follows=ANY_GATEWAY_RELAY,
)
def gateway_relays_server_requests(ctx: Context) -> Iterator[Finding]:
    """A request the upstream sends while answering reaches the client, and the client's answer the upstream."""
    view = relays(ctx)
    for relay in view:
        if not _judged(ctx, relay):
            continue
        assert relay.back is not None
        fronts = [message for message in relay.front.stream if message.kind is Kind.REQUEST]
        for asked in (message for message in relay.back.stream if message.kind is Kind.REQUEST):
            key = _key(asked)
            twin = next((message for message in fronts if _key(message) == key), None)
            if twin is None:
                if asked.time < relay.front.open_until:
                    yield failed(
                        relay.front.request,
                        f"the upstream asked {asked.describe()} while answering {relay.back.request.describe()}; it "
                        "never reached the client",
                        related=(asked,),
                    )
                continue
            fronts.remove(twin)
            if twin.id_key is None or asked.id_key is None:
                continue
            answer = view.correlation.answer_to(Hop.FRONT, relay.front.session, twin.id_key)
            if answer is None:
                continue  # the client did not answer: nothing to pass on
            upstream = view.correlation.answer_to(Hop.BACK, relay.back.session, asked.id_key)
            if upstream is not None:
                yield passed(answer, related=(asked, upstream))
                continue
            wrong = view.correlation.answer_to(Hop.BACK, relay.back.session, twin.id_key)
            how = "reached the upstream under the client's id, not" if wrong is not None else "never reached the"
            yield failed(
                answer,
                f"the client answered {twin.describe()}; the answer {how} upstream's {asked.describe()}",
                related=tuple(item for item in (asked, wrong) if item is not None),
            )
