"""``subscriptions/listen`` (2026-07-28): acknowledgements, subscription ids, filters, teardown.

Each listen stream is kept open until its acknowledgement arrives (bounded by
``--stream-budget-ms``), then closed — which on HTTP is how a client ends a subscription. The
cases: opting into one notification type (the acknowledgement must grant no more), an empty
filter (an acknowledgement granting nothing, then silence, not a subscription to everything), a
string request id (the acknowledgement must carry it with its JSON type), everything at once (types
the capabilities cannot back are to be dropped), and on stdio a cancellation with
``notifications/cancelled``, after which any teardown the server sends must be conformant.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_assay.jsonrpc import Message
from mcp_assay.suite.context import Family, SuiteContext
from mcp_assay.suite.session import ModernClient
from mcp_assay.suite.transports import Reply, StreamControl
from mcp_assay.suite.transports.stdio import StdioTransport

__all__ = ["FAMILY"]

ACK = "notifications/subscriptions/acknowledged"


def _acknowledged(messages: Sequence[Message]) -> bool:
    return any(message.method == ACK for message in messages)


def _one_type(ctx: SuiteContext) -> str:
    for capability, flag in (
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ):
        if ctx.flag(capability, "listChanged"):
            return flag
    return "toolsListChanged"


async def _listen(
    ctx: SuiteContext, name: str, intent: str, notifications: dict[str, Any], *, ident: Any = None, linger: float = 0.0
) -> Reply:
    client = ctx.client
    assert isinstance(client, ModernClient)
    budget = ctx.config.stream_budget_ms / 1000
    ident = client.ids() if ident is None else ident
    reply = await client.request(
        "subscriptions/listen",
        {"notifications": notifications},
        ident=ident,
        probe=ctx.probe(name, intent),
        stream=StreamControl(budget=budget + linger, stop=_acknowledged, linger=linger),
    )
    transport = ctx.transport
    if isinstance(transport, StdioTransport) and reply.response is None:
        # on stdio a client ends its subscription with notifications/cancelled (closing is HTTP's way)
        await client.notify(
            "notifications/cancelled",
            {"requestId": ident, "reason": "mcp-assay closes the subscription"},
            probe=ctx.probe("cancel-listen", "end the subscription: any teardown must be conformant"),
        )
        await transport.observe(0.2)
    return reply


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, ModernClient)
    kind = _one_type(ctx)
    first = await _listen(ctx, "one-type", f"listen opting into {kind} only: the ack grants no more", {kind: True})
    if not _acknowledged(first.messages) and first.response is None:
        ctx.observe("note", detail=f"subscriptions/listen was not acknowledged within {ctx.config.stream_budget_ms} ms")
    silence = min(0.5, ctx.config.stream_budget_ms / 3000)
    await _listen(
        ctx, "empty-filter", "listen with an empty filter: an ack granting nothing, then silence", {}, linger=silence
    )
    await _listen(
        ctx,
        "string-id",
        "listen with a string request id: the ack carries the same string",
        {kind: True},
        ident="mcp-assay-listen",
    )
    everything: dict[str, Any] = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
    resources = ctx.listings.get("resources/list")
    uris = [item["uri"] for item in resources.items if isinstance(item.get("uri"), str)] if resources else []
    if uris:
        everything["resourceSubscriptions"] = uris[:1]
    await _listen(
        ctx, "everything", "listen asking for every type: types the capabilities cannot back are dropped", everything
    )


FAMILY = Family(
    name="listen",
    requirements=frozenset(
        {"SUB-02", "SUB-03", "SUB-04", "SUB-05", "SUB-06", "SUB-07", "SUB-08", "SUB-09", "SUB-11", "CAN-06", "CAN-07"}
    ),
    run=run,
    eras=frozenset({"modern"}),
    description="subscriptions/listen",
)
