"""Subscriptions (SUB-): ``subscriptions/listen`` streams and change notifications.

In 2026 change notifications (list changes, resource updates) only travel on listen streams: the
client opens one with a ``subscriptions/listen`` request naming what it wants, the server
acknowledges first and tags every notification with the listen request's id in
``params._meta["io.modelcontextprotocol/subscriptionId"]``. On HTTP a listen stream is the SSE
response to that request; on stdio all subscriptions share the one channel and are told apart
only by that tag. 2025 sessions instead subscribe per resource with ``resources/subscribe``.

The active suite opens listen streams with integer and string ids and with narrow filters, and
changes the server's lists while they are open; these rules judge whatever streams the log holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp_assay.checks import Context, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.jsonrpc import MISSING, Kind, Message
from mcp_assay.spec.rules._streams import (
    ACKNOWLEDGED,
    CANCELLED,
    CHANGE_FILTERS,
    CHANGE_NOTIFICATIONS,
    LISTEN,
    LOG_MESSAGE,
    PROGRESS,
    RESOURCE_UPDATED,
    SUBSCRIPTION_ID_KEY,
    Listen,
    StreamIndex,
    covers,
    describe_id,
    grace,
    index,
    loosely_same_id,
    meta_value,
    params_of,
    request_id_of,
    same_id,
)
from mcp_assay.verdicts import Level, Side

FILTER_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
FLAG_CAPABILITY = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}
LISTEN_FEATURES = {"listen_subscriptions"}


def _listens(ctx: Context) -> Iterator[tuple[StreamIndex, Listen]]:
    idx = index(ctx)
    for listen in idx.listens:
        if ctx.in_scope(listen.request):
            yield idx, listen


def _server_notifications(listen: Listen) -> list[Message]:
    return [m for m in listen.messages if m.sender is Side.SERVER and m.kind is Kind.NOTIFICATION]


def _acks(listen: Listen) -> list[Message]:
    return [m for m in _server_notifications(listen) if m.method == ACKNOWLEDGED]


def _tag(message: Message) -> Any:
    return meta_value(message, SUBSCRIPTION_ID_KEY)


@message_check(
    requirements="SUB-01",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="listen requests",
    features=LISTEN_FEATURES,
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
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
    side=Side.SERVER,
    subject="HTTP listen requests",
    features=LISTEN_FEATURES,
    transports={"http"},
)
def http_listen_answers_are_event_streams(ctx: Context) -> Iterator[Finding]:
    """Over HTTP a listen request is answered with an SSE stream (or refused with a JSON-RPC error)."""
    for _idx, listen in _listens(ctx):
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
    side=Side.SERVER,
    subject="listen streams",
    features=LISTEN_FEATURES,
)
def listen_streams_start_with_the_acknowledgement(ctx: Context) -> Iterator[Finding]:
    """The first message for a subscription is notifications/subscriptions/acknowledged."""
    window = grace(ctx)
    for idx, listen in _listens(ctx):
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
    side=Side.SERVER,
    subject="subscription acknowledgements",
    features=LISTEN_FEATURES,
)
def acknowledgements_name_their_listen_request(ctx: Context) -> Iterator[Finding]:
    """The acknowledgement's subscriptionId is the listen request id, with the same JSON type."""
    idx = index(ctx)
    for ack in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if ack.method != ACKNOWLEDGED:
            continue
        tag = _tag(ack)
        if ack.transport == "http":
            listen = idx.listen_carrying(ack)
            if listen is None:
                yield failed(ack, "an acknowledgement arrived on a stream that answers no listen request")
                continue
            candidates = [listen]
        else:
            candidates = idx.open_listens(ack)
        if tag is MISSING:
            yield failed(ack, f"the acknowledgement has no _meta[{SUBSCRIPTION_ID_KEY!r}]")
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


def _first_ack(listen: Listen) -> Message | None:
    acks = _acks(listen)
    return acks[0] if acks else None


@log_check(
    requirements="SUB-05",
    level=Level.MUST,
    side=Side.SERVER,
    subject="subscription acknowledgements",
    features=LISTEN_FEATURES,
)
def acknowledgements_grant_no_more_than_requested(ctx: Context) -> Iterator[Finding]:
    """The acknowledged filter is a subset of the requested one."""
    for _idx, listen in _listens(ctx):
        ack = _first_ack(listen)
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
    side=Side.SERVER,
    subject="subscription acknowledgements",
    features=LISTEN_FEATURES,
)
def acknowledgements_drop_unsupported_types(ctx: Context) -> Iterator[Finding]:
    """The acknowledgement leaves out types the advertised capabilities cannot back.

    Triggered by a listen request asking for every type (the active suite asks for all four)."""
    for _idx, listen in _listens(ctx):
        ack = _first_ack(listen)
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


def _judged_on_stream(message: Message) -> bool:
    """Stream content SUB-07/SUB-14 judge: change notifications, not the ack, teardown, progress or logs."""
    return message.method not in (ACKNOWLEDGED, CANCELLED, PROGRESS, LOG_MESSAGE)


@log_check(
    requirements="SUB-07",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="listen stream notifications",
    features=LISTEN_FEATURES,
)
def listen_streams_carry_only_requested_types(ctx: Context) -> Iterator[Finding]:
    """A listen stream carries only the notification types (and resource URIs) the client asked for.

    Triggered by any listen stream; the active suite opens one with an empty filter and expects silence.
    An acknowledged stream that carried nothing it was not asked for passes as a whole."""
    for _idx, listen in _listens(ctx):
        clean = True
        acknowledged = False
        for message in _server_notifications(listen):
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
    side=Side.SERVER,
    subject="listen stream notifications",
    features=LISTEN_FEATURES,
)
def listen_notifications_carry_the_subscription_id(ctx: Context) -> Iterator[Finding]:
    """Every notification on a listen stream carries the listen id as its subscriptionId (list changes too)."""
    idx = index(ctx)
    for _idx, listen in _listens(ctx):
        if listen.exchange is None:
            continue
        for message in _server_notifications(listen):
            if message.method == ACKNOWLEDGED:
                continue  # SUB-04
            tag = _tag(message)
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
        tag = _tag(message)
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
    side=Side.SERVER,
    subject="listen streams",
    features=LISTEN_FEATURES,
)
def listen_streams_carry_no_progress_or_log(ctx: Context) -> Iterator[Finding]:
    """notifications/progress and notifications/message never travel on a listen stream."""
    idx = index(ctx)
    for _idx, listen in _listens(ctx):
        bad = [m for m in _server_notifications(listen) if m.method in (PROGRESS, LOG_MESSAGE)]
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
    side=Side.SERVER,
    subject="change notifications",
    features=LISTEN_FEATURES,
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
        elif _tag(message) is MISSING:
            yield failed(message, f"{message.method} on stdio carries no subscriptionId")
        else:
            yield passed(message)


@log_check(
    requirements="SUB-11",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="listen results",
    features=LISTEN_FEATURES,
)
def listen_results_close_the_subscription_cleanly(ctx: Context) -> Iterator[Finding]:
    """A listen result is complete, names the subscription in _meta, carries nothing else and ends the stream."""
    for _idx, listen in _listens(ctx):
        results = [m for m in listen.messages if m.kind is Kind.RESULT and same_id(m.id, listen.id)]
        if not results:
            continue
        result = results[0]
        body = result.result if isinstance(result.result, dict) else {}
        problems = []
        if body.get("resultType") != "complete":
            problems.append(f"resultType is {body.get('resultType', 'missing')!r}")
        tag = meta_value(result, SUBSCRIPTION_ID_KEY)
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
    side=Side.CLIENT,
    subject="subscriptions the client ended",
    features=LISTEN_FEATURES,
)
def clients_end_subscriptions_by_closing_or_cancelling(ctx: Context) -> Iterator[Finding]:
    """Clients end a subscription by closing its SSE stream (HTTP) or cancelling its id (stdio)."""
    idx = index(ctx)
    window = grace(ctx)
    for _idx, listen in _listens(ctx):
        if listen.ended_by == "client":
            yield passed(listen.request)
    for notice in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.CLIENT):
        if notice.method != CANCELLED or notice.transport != "http":
            continue
        for listen in idx.listens:
            if listen.exchange is None or not same_id(request_id_of(notice), listen.id):
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
    side=Side.SERVER,
    subject="notifications delivered while several subscriptions were open",
    features=LISTEN_FEATURES,
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
        tag = _tag(message)
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


LISTS = (
    ("tools/list", "tools", "name", "notifications/tools/list_changed", "toolsListChanged"),
    ("prompts/list", "prompts", "name", "notifications/prompts/list_changed", "promptsListChanged"),
    ("resources/list", "resources", "uri", "notifications/resources/list_changed", "resourcesListChanged"),
)


def _full_list(request: Message, answer: Message, member: str, key: str) -> frozenset[str] | None:
    if answer.kind is not Kind.RESULT or not isinstance(answer.result, dict):
        return None
    if params_of(request).get("cursor") is not None or answer.result.get("nextCursor") is not None:
        return None  # only complete single-page lists can be compared
    items = answer.result.get(member)
    if not isinstance(items, list):
        return None
    return frozenset(str(item.get(key)) for item in items if isinstance(item, dict))


@log_check(
    requirements="SUB-15",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="list changes seen while a listener was subscribed",
    features=LISTEN_FEATURES,
)
def list_changes_reach_listeners(ctx: Context) -> Iterator[Finding]:
    """When a list it advertised listChanged for changes, the server notifies opted-in listeners.

    Triggered by two list results that differ while an acknowledged listen stream asking for
    that list's changes stayed open (the active suite changes the list with a fixture tool)."""
    idx = index(ctx)
    window = grace(ctx)
    for method, member, key, notification, flag in LISTS:
        previous: dict[str, tuple[Message, frozenset[str]]] = {}
        for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
            if request.method != method:
                continue
            answer = idx.first_answer(request)
            listed = _full_list(request, answer, member, key) if answer is not None else None
            if answer is None or listed is None:
                continue
            place = idx.place(request)
            before = previous.get(place)
            previous[place] = (answer, listed)
            if before is None or before[1] == listed:
                continue
            earlier = before[0]
            caps = ctx.capabilities(answer) or {}
            section = caps.get(member)
            if not (isinstance(section, dict) and section.get("listChanged") is True):
                continue
            for listen in idx.listens:
                if listen.place != place or not ctx.in_scope(listen.request):
                    continue
                ack = _first_ack(listen)
                granted = params_of(ack).get("notifications") if ack is not None else None
                if ack is None or not isinstance(granted, dict) or granted.get(flag) is not True:
                    continue
                if not (idx.before(ack, earlier) and listen.end >= answer.time):
                    continue
                told = [
                    m
                    for m in _server_notifications(listen)
                    if m.method == notification and earlier.time < m.time <= answer.time + window
                ]
                if told:
                    yield passed(told[0])
                else:
                    yield failed(
                        answer,
                        f"the {member} list changed between two {method} results, but the stream of "
                        f"{listen.request.describe()} carried no {notification}",
                    )


@message_check(
    requirements="SUB-16",
    level=Level.SHOULD_NOT,
    side=Side.SERVER,
    subject="list-changed notifications",
    sent_by=Side.SERVER,
    kinds={Kind.NOTIFICATION},
)
def list_changed_needs_the_list_changed_capability(message: Message, ctx: Context) -> Finding | None:
    """No list-changed notification for a list whose capability lacks listChanged: true."""
    if message.method not in CHANGE_FILTERS:
        return None
    member = FLAG_CAPABILITY[CHANGE_FILTERS[message.method]]
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified("the server's capabilities were not seen, so listChanged cannot be compared", message)
    section = caps.get(member)
    if isinstance(section, dict) and section.get("listChanged") is True:
        return passed(message)
    shown = "absent" if section is None else f"{section!r}"
    return failed(message, f"{message.method} although the {member} capability is {shown}")


def _empty_result(message: Message) -> bool:
    return isinstance(message.result, dict) and not (set(message.result) - {"_meta"})


@log_check(
    requirements="SUB-17",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="resources/subscribe and resources/unsubscribe answers",
    features={"resource_subscribe"},
)
def legacy_subscribe_requests_return_empty_results(ctx: Context) -> Iterator[Finding]:
    """A server advertising resources.subscribe answers resources/subscribe and unsubscribe with {}."""
    idx = index(ctx)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if request.method not in ("resources/subscribe", "resources/unsubscribe"):
            continue
        answer = idx.first_answer(request)
        if answer is None:
            continue
        caps = ctx.capabilities(answer) or {}
        resources = caps.get("resources")
        if not (isinstance(resources, dict) and resources.get("subscribe") is True):
            continue
        if answer.kind is Kind.RESULT and _empty_result(answer):
            yield passed(answer)
        else:
            yield failed(answer, f"{request.method} answered {answer.describe()} although resources.subscribe is true")


def _subscribed(idx: StreamIndex, update: Message) -> list[Any]:
    """URIs the session had subscribed to (and not unsubscribed from) when ``update`` went out."""
    uris: list[Any] = []
    for request in idx.requests.get((idx.place(update), Side.CLIENT), ()):
        if not idx.before(request, update):
            break
        uri = params_of(request).get("uri")
        answer = idx.first_answer(request)
        if answer is None or answer.kind is not Kind.RESULT:
            continue
        if request.method == "resources/subscribe":
            uris.append(uri)
        elif request.method == "resources/unsubscribe" and idx.before(answer, update):
            uris = [item for item in uris if item != uri]
    return uris


@log_check(
    requirements="SUB-17",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="resource update notifications",
    features={"resource_subscribe"},
)
def legacy_resource_updates_follow_subscriptions(ctx: Context) -> Iterator[Finding]:
    """2025 resource updates cover only subscribed URIs and carry no subscriptionId."""
    idx = index(ctx)
    for update in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if update.method != RESOURCE_UPDATED:
            continue
        uri = params_of(update).get("uri")
        if _tag(update) is not MISSING:
            yield failed(update, "a 2025 resource update carries a subscriptionId")
        elif not isinstance(uri, str):
            continue  # the schema rule reports a missing uri
        elif covers(_subscribed(idx, update), uri):
            yield passed(update)
        else:
            yield failed(update, f"resource update for {uri!r}, which the session had not subscribed to")
