"""Subscriptions (SUB-15..17): list changes reach listeners, and the 2025 per-resource subscriptions.

When a listed set changes while a listen stream asked for it, a list-changed notification
reaches that stream, from a server that declared ``listChanged``. 2025 sessions instead
subscribe per resource with ``resources/subscribe`` (answered with an empty result) and get
``notifications/resources/updated`` only for resources they subscribed to.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.stream_facts import CHANGE_FILTERS, RESOURCE_UPDATED, covers, grace
from mcp_assay.spec.rules.shared.streams import StreamIndex, index
from mcp_assay.spec.rules.subscriptions._listens import (
    FLAG_CAPABILITY,
    LISTEN_FEATURES,
    first_acknowledgement,
    server_notifications,
    subscription_tag,
)
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message

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
    subject="list changes seen while a listener was subscribed",
    features=LISTEN_FEATURES,
    follows={"subscriptions/listen"},
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
                ack = first_acknowledgement(listen)
                granted = params_of(ack).get("notifications") if ack is not None else None
                if ack is None or not isinstance(granted, dict) or granted.get(flag) is not True:
                    continue
                if not (idx.before(ack, earlier) and listen.end >= answer.time):
                    continue
                told = [
                    m
                    for m in server_notifications(listen)
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
    subject="list-changed notifications",
    sent_by=Side.SERVER,
    kinds={Kind.NOTIFICATION},
    methods=CHANGE_FILTERS,
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
    subject="resources/subscribe and resources/unsubscribe answers",
    features={"resource_subscribe"},
    follows={"resources/subscribe", "resources/unsubscribe"},
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
    subject="resource update notifications",
    features={"resource_subscribe"},
    follows={RESOURCE_UPDATED},
)
def legacy_resource_updates_follow_subscriptions(ctx: Context) -> Iterator[Finding]:
    """2025 resource updates cover only subscribed URIs and carry no subscriptionId."""
    idx = index(ctx)
    for update in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if update.method != RESOURCE_UPDATED:
            continue
        uri = params_of(update).get("uri")
        if subscription_tag(update) is not MISSING:
            yield failed(update, "a 2025 resource update carries a subscriptionId")
        elif not isinstance(uri, str):
            continue  # the schema rule reports a missing uri
        elif covers(_subscribed(idx, update), uri):
            yield passed(update)
        else:
            yield failed(update, f"resource update for {uri!r}, which the session had not subscribed to")
