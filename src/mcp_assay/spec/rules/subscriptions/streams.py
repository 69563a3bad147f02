"""Subscriptions (SUB-07..14): what travels on a listen stream, and how a subscription ends.

A listen stream carries only the notification types its filter asked for, each tagged with the
listen request's id in ``params._meta["io.modelcontextprotocol/subscriptionId"]``, and no
progress or log messages; change notifications travel nowhere else. On stdio all subscriptions
share the one channel and are told apart only by that tag. A subscription ends with a clean
result from the server, or with the client closing the stream or cancelling the request.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Every, Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.stream_facts import (
    ACKNOWLEDGED,
    CANCELLED,
    CHANGE_FILTERS,
    CHANGE_NOTIFICATIONS,
    LISTEN,
    LOG_MESSAGE,
    PROGRESS,
    RESOURCE_UPDATED,
    describe_id,
    grace,
    loosely_same_id,
    meta_value,
    request_id_of,
    same_id,
)
from mcp_assay.spec.rules.shared.streams import index
from mcp_assay.spec.rules.subscriptions._listens import (
    LISTEN_FEATURES,
    judged_listens,
    server_notifications,
    subscription_tag,
)
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message


def _judged_on_stream(message: Message) -> bool:
    """Stream content SUB-07/SUB-14 judge: change notifications, not the ack, teardown, progress or logs."""
    return message.method not in (ACKNOWLEDGED, CANCELLED, PROGRESS, LOG_MESSAGE)


@log_check(
    requirements="SUB-07",
    level=Level.MUST_NOT,
    subject="listen stream notifications",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def listen_streams_carry_only_requested_types(ctx: Context) -> Iterator[Finding]:
    """A listen stream carries only the notification types (and resource URIs) the client asked for.

    Triggered by any listen stream; the active suite opens one with an empty filter and expects silence.
    An acknowledged stream that carried nothing it was not asked for passes as a whole."""
    for _idx, listen in judged_listens(ctx):
        clean = True
        acknowledged = False
        for message in server_notifications(listen):
            acknowledged = acknowledged or message.method == ACKNOWLEDGED
            if not _judged_on_stream(message):
                continue
            if listen.wants(message):
                yield passed(message)
                continue
            clean = False
            if message.method == RESOURCE_UPDATED:
                uri = params_of(message).get("uri")
                yield failed(message, f"resource update for {uri!r}, which {listen.request.describe()} did not list")
            else:
                flag = CHANGE_FILTERS.get(message.method or "", "")
                asked = f" (no {flag}: true)" if flag else ""
                yield failed(message, f"{message.method} on the stream of {listen.request.describe()}{asked}")
        if clean and acknowledged:
            yield passed(listen.request, f"{listen.request.describe()} carried only what it asked for")


@log_check(
    requirements="SUB-08",
    level=Level.MUST,
    subject="listen stream notifications",
    features=LISTEN_FEATURES,
    follows=Every(
        "a subscriptionId on a stdio notification of any method is judged, with a listen in the window or none"
    ),
)
def listen_notifications_carry_the_subscription_id(ctx: Context) -> Iterator[Finding]:
    """Every notification on a listen stream carries the listen id as its subscriptionId (list changes too)."""
    idx = index(ctx)
    for _idx, listen in judged_listens(ctx):
        if listen.exchange is None:
            continue
        for message in server_notifications(listen):
            if message.method == ACKNOWLEDGED:
                continue  # SUB-04
            tag = subscription_tag(message)
            if same_id(tag, listen.id):
                yield passed(message)
            elif tag is MISSING:
                yield failed(message, f"{message.method} on a listen stream carries no subscriptionId")
            else:
                yield failed(
                    message, f"subscriptionId {describe_id(tag)} is not the listen id {describe_id(listen.id)}"
                )
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if message.transport != "stdio" or message.method == ACKNOWLEDGED:
            continue
        tag = subscription_tag(message)
        if tag is MISSING:
            continue  # untagged change notifications on stdio are SUB-10's concern
        listens = idx.open_listens(message)
        if any(same_id(tag, listen.id) for listen in listens):
            yield passed(message)
        else:
            loose = [listen for listen in listens if loosely_same_id(tag, listen.id)]
            hint = f"; the listen id is {describe_id(loose[0].id)}" if loose else ""
            yield failed(message, f"subscriptionId {describe_id(tag)} names no open listen request{hint}")


@log_check(
    requirements="SUB-09",
    level=Level.MUST_NOT,
    subject="listen streams",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def listen_streams_carry_no_progress_or_log(ctx: Context) -> Iterator[Finding]:
    """notifications/progress and notifications/message never travel on a listen stream."""
    idx = index(ctx)
    for _idx, listen in judged_listens(ctx):
        bad = [m for m in server_notifications(listen) if m.method in (PROGRESS, LOG_MESSAGE)]
        token = meta_value(listen.request, "progressToken")
        if listen.exchange is None and token is not MISSING:
            for message in idx.by_place.get(listen.place, ()):
                if (
                    message.method == PROGRESS
                    and message.sender is Side.SERVER
                    and same_id(params_of(message).get("progressToken", MISSING), token)
                    and listen.open_at(message.time)
                    and not any(m is message for m in bad)
                ):
                    bad.append(message)
        if bad:
            yield failed(bad[0], f"{bad[0].method} travelled on the listen stream of {listen.request.describe()}")
        elif listen.messages:
            yield passed(listen.request)


@log_check(
    requirements="SUB-10",
    level=Level.MUST,
    subject="change notifications",
    features=LISTEN_FEATURES,
    follows=CHANGE_NOTIFICATIONS,
)
def change_notifications_travel_only_on_listen_streams(ctx: Context) -> Iterator[Finding]:
    """List-changed and resource-updated notifications appear only on listen streams (stdio: tagged)."""
    idx = index(ctx)
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if message.method not in CHANGE_NOTIFICATIONS:
            continue
        if message.transport == "http":
            if idx.listen_carrying(message) is not None:
                yield passed(message)
            else:
                carrier = idx.carrier_request(message)
                where = (
                    f"the stream of {carrier.describe()}" if carrier is not None else "a stream that is not a listen"
                )
                yield failed(message, f"{message.method} travelled on {where}")
        elif subscription_tag(message) is MISSING:
            yield failed(message, f"{message.method} on stdio carries no subscriptionId")
        else:
            yield passed(message)


@log_check(
    requirements="SUB-11",
    level=Level.SHOULD,
    subject="listen results",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def listen_results_close_the_subscription_cleanly(ctx: Context) -> Iterator[Finding]:
    """A listen result is complete, names the subscription in _meta, carries nothing else and ends the stream."""
    for _idx, listen in judged_listens(ctx):
        results = [m for m in listen.messages if m.kind is Kind.RESULT and same_id(m.id, listen.id)]
        if not results:
            continue
        result = results[0]
        body = result.result if isinstance(result.result, dict) else {}
        problems = []
        if body.get("resultType") != "complete":
            problems.append(f"resultType is {body.get('resultType', 'missing')!r}")
        tag = meta_value(result, MetaKey.SUBSCRIPTION_ID)
        if not same_id(tag, listen.id):
            problems.append(
                "no subscriptionId in _meta" if tag is MISSING else f"subscriptionId {describe_id(tag)} is not the id"
            )
        extra = sorted(set(body) - {"resultType", "_meta"})
        if extra:
            problems.append(f"it carries {', '.join(extra)}")
        if listen.exchange is not None:
            after = [m for m in listen.messages if m.index > result.index]
            if after:
                problems.append(f"{after[0].describe()} followed it on the stream")
        if problems:
            yield failed(result, f"the listen result for {listen.request.describe()}: {'; '.join(problems)}")
        else:
            yield passed(result)


@log_check(
    requirements="SUB-13",
    level=Level.MUST,
    subject="subscriptions the client ended",
    features=LISTEN_FEATURES,
    follows={LISTEN},
)
def clients_end_subscriptions_by_closing_or_cancelling(ctx: Context) -> Iterator[Finding]:
    """Clients end a subscription by closing its SSE stream (HTTP) or cancelling its id (stdio)."""
    idx = index(ctx)
    window = grace(ctx)
    for _idx, listen in judged_listens(ctx):
        if listen.ended_by == "client":
            yield passed(listen.request)
    for notice in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.CLIENT):
        if notice.method != CANCELLED or notice.transport != "http":
            continue
        for listen in idx.listens_with_id(request_id_of(notice)):
            if listen.exchange is None:
                continue
            if listen.request.time > notice.time:
                continue
            if listen.end > notice.time + window:
                yield failed(
                    notice,
                    f"the client POSTed notifications/cancelled for {listen.request.describe()} and kept its stream "
                    "open; over HTTP a subscription ends when the client closes the stream",
                )


@log_check(
    requirements="SUB-14",
    level=Level.MUST,
    subject="notifications delivered while several subscriptions were open",
    features=LISTEN_FEATURES,
    follows=CHANGE_NOTIFICATIONS,
)
def notifications_reach_only_subscriptions_that_asked(ctx: Context) -> Iterator[Finding]:
    """With several subscriptions open, each notification goes to (and names) one that asked for it."""
    idx = index(ctx)
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if message.method not in CHANGE_NOTIFICATIONS:
            continue
        open_now = idx.open_listens(message)
        if len(open_now) < 2:
            continue
        tag = subscription_tag(message)
        named = [listen for listen in open_now if same_id(tag, listen.id)]
        carrying = idx.listen_carrying(message)
        if message.transport == "http":
            if carrying is None:
                continue  # SUB-10
            if named and named[0] is not carrying:
                yield failed(
                    message,
                    f"{message.method} on the stream of {carrying.request.describe()} names the subscription "
                    f"{describe_id(tag)}",
                )
                continue
            target = carrying
        else:
            if not named:
                continue  # SUB-08 / SUB-10
            target = named[0]
        if target.wants(message):
            yield passed(message)
        else:
            others = [listen for listen in open_now if listen is not target and listen.wants(message)]
            if others:
                yield failed(
                    message,
                    f"{message.method} went to {target.request.describe()}, which did not ask for it, while "
                    f"{others[0].request.describe()} did",
                )
