"""Listen streams as the subscription rules read them: the filter flags, acknowledgements, tags.

The stream index (:mod:`._streams`) finds every ``subscriptions/listen`` request and the messages
that belong to it; the subscription rules judge only the listens in scope, and ask the same
things of each: the server's notifications on it, its acknowledgements, and the
``subscriptionId`` a notification is tagged with.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.stream_facts import ACKNOWLEDGED, Listen, meta_value
from mcp_assay.spec.rules.shared.streams import StreamIndex, index
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind, Message

__all__ = [
    "FILTER_FLAGS",
    "FLAG_CAPABILITY",
    "LISTEN_FEATURES",
    "acknowledgements_of",
    "first_acknowledgement",
    "judged_listens",
    "server_notifications",
    "subscription_tag",
]

FILTER_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
FLAG_CAPABILITY = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}
LISTEN_FEATURES = {"listen_subscriptions"}


def judged_listens(ctx: Context) -> Iterator[tuple[StreamIndex, Listen]]:
    idx = index(ctx)
    for listen in idx.listens:
        if ctx.in_scope(listen.request):
            yield idx, listen


def server_notifications(listen: Listen) -> list[Message]:
    return [m for m in listen.messages if m.sender is Side.SERVER and m.kind is Kind.NOTIFICATION]


def acknowledgements_of(listen: Listen) -> list[Message]:
    return [m for m in server_notifications(listen) if m.method == ACKNOWLEDGED]


def subscription_tag(message: Message) -> Any:
    return meta_value(message, MetaKey.SUBSCRIPTION_ID)


def first_acknowledgement(listen: Listen) -> Message | None:
    acks = acknowledgements_of(listen)
    return acks[0] if acks else None
