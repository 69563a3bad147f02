"""Subscriptions (SUB-01..06): opening a ``subscriptions/listen`` stream and acknowledging it.

In 2026 change notifications (list changes, resource updates) only travel on listen streams: the
client opens one with a ``subscriptions/listen`` request naming what it wants, and the server
acknowledges first, naming the listen request and granting no more than was asked and nothing
it does not support. On HTTP a listen stream is the SSE response to that request.

The active suite opens listen streams with integer and string ids and with narrow filters, and
changes the server's lists while they are open; these rules judge whatever streams the log holds.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.stream_facts import (
    ACKNOWLEDGED,
    LISTEN,
    Listen,
    describe_id,
    grace,
    loosely_same_id,
    same_id,
)
from mcp_assay.spec.rules.shared.streams import StreamIndex, index
from mcp_assay.spec.rules.subscriptions._listens import (
    FILTER_FLAGS,
    FLAG_CAPABILITY,
    LISTEN_FEATURES,
    first_acknowledgement,
    judged_listens,
    subscription_tag,
)
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message


@message_check(
    requirements="SUB-01",
    level=Level.MUST,
    subject="listen requests",
    features=LISTEN_FEATURES,
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    methods={LISTEN},
)
def listen_requests_carry_a_typed_filter(message: Message, ctx: Context) -> Finding | None:
    """A subscriptions/listen request carries a notifications filter with correctly typed members."""
    if message.method != LISTEN:
        return None
    params = message.params
    if not isinstance(params, dict):
        return failed(message, "subscriptions/listen has no params object")
    wanted = params.get("notifications", MISSING)
    if wanted is MISSING:
        return failed(message, "subscriptions/listen has no params.notifications filter")
    if not isinstance(wanted, dict):
        return failed(message, f"params.notifications is a {type(wanted).__name__}, not an object")
    for flag in FILTER_FLAGS:
        if flag in wanted and not isinstance(wanted[flag], bool):
            return failed(message, f"notifications.{flag} is {wanted[flag]!r}, not a boolean")
    uris = wanted.get("resourceSubscriptions", [])
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        return failed(message, "notifications.resourceSubscriptions is not an array of strings")
    return passed(message)


@log_check(
    requirements="SUB-02",
    level=Level.MUST,
    subject="HTTP listen requests",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def http_listen_answers_are_event_streams(ctx: Context) -> Iterator[Finding]:
    """Over HTTP a listen request is answered with an SSE stream (or refused with a JSON-RPC error)."""
    for _idx, listen in judged_listens(ctx):
        exchange = listen.exchange
        if exchange is None or exchange.response is None:
            continue
        response = exchange.response
        answers = [m for m in exchange.response_messages if m.kind.is_response]
        if response.is_event_stream:
            yield passed(listen.request)
        elif answers and all(m.kind is Kind.ERROR for m in answers):
            yield passed(listen.request, f"the listen request was refused with {answers[0].describe()}")
        elif answers:
            yield failed(
                answers[0],
                f"the listen request was answered with {response.content_type or 'no content type'} and a result "
                "instead of an open event stream",
            )
        else:
            yield failed(
                listen.request,
                f"the listen request got HTTP {response.status} ({response.content_type or 'no content type'}) "
                "with neither an event stream nor a JSON-RPC error",
            )


def _watched_until(listen: Listen, idx: StreamIndex) -> float:
    """Until when the capture could have shown messages for the listen."""
    if listen.exchange is not None:
        ending = listen.exchange.ending
        return ending.time if ending is not None else listen.request.time
    later = [m.time for m in idx.by_place.get(listen.place, ())]
    last = max(later) if later else listen.request.time
    return min(listen.end, last)


@log_check(
    requirements="SUB-03",
    level=Level.MUST,
    subject="listen streams",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def listen_streams_start_with_the_acknowledgement(ctx: Context) -> Iterator[Finding]:
    """The first message for a subscription is notifications/subscriptions/acknowledged."""
    window = grace(ctx)
    for idx, listen in judged_listens(ctx):
        server = [m for m in listen.messages if m.sender is Side.SERVER]
        if not server:
            waited = _watched_until(listen, idx) - listen.request.time
            if waited > window:
                yield failed(
                    listen.request, f"no acknowledgement for {listen.request.describe()} within {waited:.1f} s"
                )
            else:
                yield unverified(
                    f"the capture ended {max(waited, 0):.2f} s after {listen.request.describe()}, before any "
                    "acknowledgement could be expected",
                    listen.request,
                )
            continue
        first = server[0]
        if first.method == ACKNOWLEDGED:
            yield passed(first)
        elif first.kind is Kind.ERROR:
            continue  # a refused listen: nothing to acknowledge
        else:
            yield failed(first, f"{first.describe()} came before the acknowledgement of {listen.request.describe()}")


@log_check(
    requirements="SUB-04",
    level=Level.MUST,
    subject="subscription acknowledgements",
    features=LISTEN_FEATURES,
    follows={ACKNOWLEDGED},
)
def acknowledgements_name_their_listen_request(ctx: Context) -> Iterator[Finding]:
    """The acknowledgement's subscriptionId is the listen request id, with the same JSON type."""
    idx = index(ctx)
    for ack in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if ack.method != ACKNOWLEDGED:
            continue
        tag = subscription_tag(ack)
        if ack.transport == "http":
            listen = idx.listen_carrying(ack)
            if listen is None:
                yield failed(ack, "an acknowledgement arrived on a stream that answers no listen request")
                continue
            candidates = [listen]
        else:
            candidates = idx.open_listens(ack)
        if tag is MISSING:
            yield failed(ack, f"the acknowledgement has no _meta['{MetaKey.SUBSCRIPTION_ID}']")
        elif any(same_id(tag, listen.id) for listen in candidates):
            yield passed(ack)
        else:
            loose = [listen for listen in candidates if loosely_same_id(tag, listen.id)]
            if loose:
                yield failed(
                    ack,
                    f"subscriptionId {describe_id(tag)} changes the type of the listen id {describe_id(loose[0].id)}",
                )
            else:
                ids = ", ".join(describe_id(listen.id) for listen in candidates) or "none open"
                yield failed(ack, f"subscriptionId {describe_id(tag)} names no open listen request ({ids})")


@log_check(
    requirements="SUB-05",
    level=Level.MUST,
    subject="subscription acknowledgements",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def acknowledgements_grant_no_more_than_requested(ctx: Context) -> Iterator[Finding]:
    """The acknowledged filter is a subset of the requested one."""
    for _idx, listen in judged_listens(ctx):
        ack = first_acknowledgement(listen)
        if ack is None:
            continue
        granted = params_of(ack).get("notifications", MISSING)
        if not isinstance(granted, dict):
            yield failed(ack, "the acknowledgement has no notifications object")
            continue
        asked = listen.filter
        extra = [flag for flag in FILTER_FLAGS if granted.get(flag) is True and asked.get(flag) is not True]
        uris = granted.get("resourceSubscriptions", [])
        wanted_uris = asked.get("resourceSubscriptions", [])
        unasked = [
            uri
            for uri in (uris if isinstance(uris, list) else [])
            if not (isinstance(wanted_uris, list) and uri in wanted_uris)
        ]
        if extra or unasked:
            parts = [*extra, *(f"resourceSubscriptions {uri!r}" for uri in unasked)]
            yield failed(ack, f"the acknowledgement grants what was not requested: {', '.join(parts)}")
        else:
            yield passed(ack)


@log_check(
    requirements="SUB-06",
    level=Level.SHOULD,
    subject="subscription acknowledgements",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def acknowledgements_drop_unsupported_types(ctx: Context) -> Iterator[Finding]:
    """The acknowledgement leaves out types the advertised capabilities cannot back.

    Triggered by a listen request asking for every type (the active suite asks for all four)."""
    for _idx, listen in judged_listens(ctx):
        ack = first_acknowledgement(listen)
        if ack is None:
            continue
        granted = params_of(ack).get("notifications")
        if not isinstance(granted, dict):
            continue
        caps = ctx.capabilities(ack)
        if caps is None:
            yield unverified("the server's capabilities were not seen (no server/discover result)", ack)
            continue
        unbacked = []
        for flag in FILTER_FLAGS:
            section = caps.get(FLAG_CAPABILITY[flag])
            if granted.get(flag) is True and not (isinstance(section, dict) and section.get("listChanged") is True):
                unbacked.append(f"{flag} without {FLAG_CAPABILITY[flag]}.listChanged: true")
        resources = caps.get("resources")
        if granted.get("resourceSubscriptions") and not (
            isinstance(resources, dict) and resources.get("subscribe") is True
        ):
            unbacked.append("resourceSubscriptions without resources.subscribe: true")
        if unbacked:
            yield failed(ack, f"the acknowledgement grants {'; '.join(unbacked)}")
        else:
            yield passed(ack)
