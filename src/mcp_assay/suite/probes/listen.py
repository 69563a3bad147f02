"""``subscriptions/listen`` (2026-07-28): acknowledgements, subscription ids, filters, teardown.

Each listen stream is kept open until its acknowledgement arrives (bounded by
``--stream-budget-ms``), then closed — which on HTTP is how a client ends a subscription. The
cases: opting into one notification type (the acknowledgement must grant no more), an empty
filter (an acknowledgement granting nothing, then silence, not a subscription to everything), a
string request id (the acknowledgement must carry it with its JSON type), everything at once (types
the capabilities cannot back are to be dropped), and on stdio a cancellation with
``notifications/cancelled``, after which any teardown the server sends must be conformant.

Where the server advertises ``listChanged`` or ``resources.subscribe``, two subscriptions with
different filters are held open together (for at most ``--stream-budget-ms``, and never more than
a second): once both are acknowledged the lists they cover are read, the tools the suite already
called are called once more with the same arguments (never another tool), and the lists are read
again. Whatever the server then sends must reach only the subscription that asked for it (SUB-14),
on its listen stream (SUB-07, SUB-08, SUB-10), and a list that changed must have been announced to
its listener (SUB-15).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from mcp_assay.cases import Case
from mcp_assay.cases import listen as cases
from mcp_assay.cases.model import left_unsent
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import ModernClient
from mcp_assay.suite.probes.tools import call_tool
from mcp_assay.suite.transports import Reply, StreamControl
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.wire.jsonrpc import Message

__all__ = ["FAMILY"]

ACK = "notifications/subscriptions/acknowledged"
CONCURRENT_WINDOW = 1.0
"""Seconds two concurrent subscriptions stay open at most (less when --stream-budget-ms is smaller)."""
LISTS = (
    ("tools", "toolsListChanged", "tools/list"),
    ("prompts", "promptsListChanged", "prompts/list"),
    ("resources", "resourcesListChanged", "resources/list"),
)


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
    ctx: SuiteContext,
    case: Case,
    intent: str | None,
    notifications: dict[str, Any],
    *,
    ident: Any = None,
    linger: float = 0.0,
) -> Reply:
    client = ctx.client
    assert isinstance(client, ModernClient)
    budget = ctx.config.stream_budget_ms / 1000
    ident = client.ids() if ident is None else ident
    reply = await client.request(
        "subscriptions/listen",
        {"notifications": notifications},
        ident=ident,
        probe=ctx.probe(case, intent),
        stream=StreamControl(budget=budget + linger, stop=_acknowledged, linger=linger),
    )
    transport = ctx.transport
    if isinstance(transport, StdioTransport) and reply.response is None:
        # on stdio a client ends its subscription with notifications/cancelled (closing is HTTP's way)
        await client.notify(
            "notifications/cancelled",
            {"requestId": ident, "reason": "mcp-assay closes the subscription"},
            probe=ctx.probe(cases.CANCEL_LISTEN),
        )
        await transport.observe(0.2)
    return reply


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, ModernClient)
    kind = _one_type(ctx)
    first = await _listen(ctx, cases.ONE_TYPE, f"listen opting into {kind} only: the ack grants no more", {kind: True})
    if not _acknowledged(first.messages) and first.response is None:
        ctx.observe("note", detail=f"subscriptions/listen was not acknowledged within {ctx.config.stream_budget_ms} ms")
    silence = min(0.5, ctx.config.stream_budget_ms / 3000)
    await _listen(ctx, cases.EMPTY_FILTER, None, {}, linger=silence)
    await _listen(ctx, cases.STRING_ID, None, {kind: True}, ident="mcp-assay-listen")
    everything: dict[str, Any] = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
    resources = ctx.listings.get("resources/list")
    uris = [item["uri"] for item in resources.items if isinstance(item.get("uri"), str)] if resources else []
    if uris:
        everything["resourceSubscriptions"] = uris[:1]
    await _listen(ctx, cases.EVERYTHING, None, everything)
    await _concurrent(ctx, uris)


def _filters(ctx: SuiteContext, uris: list[str]) -> list[tuple[dict[str, Any], str]]:
    """Filters the server's capabilities can back, one notification type each, with a description."""
    filters: list[tuple[dict[str, Any], str]] = [
        ({flag: True}, flag) for capability, flag, _ in LISTS if ctx.flag(capability, "listChanged")
    ]
    if uris and ctx.flag("resources", "subscribe"):
        filters.append(({"resourceSubscriptions": uris[:1]}, f"updates of {uris[0]}"))
    return filters


def _watch(acknowledged: asyncio.Event) -> Callable[[Sequence[Message]], bool]:
    """A stream control that notes the acknowledgement and keeps the stream open to the end of its budget."""

    def stop(messages: Sequence[Message]) -> bool:
        if _acknowledged(messages):
            acknowledged.set()
        return False

    return stop


async def _concurrent(ctx: SuiteContext, uris: list[str]) -> None:
    """Two subscriptions with different filters at once: notifications must not cross over (SUB-14)."""
    client = ctx.client
    assert isinstance(client, ModernClient)
    filters = _filters(ctx, uris)
    if not filters:
        ctx.skip(
            "the server advertises neither listChanged nor resources.subscribe, so no notification could reach "
            "either of two concurrent subscriptions",
            requirements=left_unsent(cases.CASES, cases.CONCURRENT),
            case=cases.CONCURRENT,
        )
        return
    (first, first_label), (second, second_label) = filters[0], (filters[1] if len(filters) > 1 else ({}, "nothing"))
    ack_wait = ctx.config.stream_budget_ms / 1000  # as long as one subscription gets: a loaded host is slow
    window = ack_wait + min(CONCURRENT_WINDOW, ack_wait)
    acknowledged = (asyncio.Event(), asyncio.Event())
    idents = (client.ids(), client.ids())

    async def listen(number: int, notifications: dict[str, Any], label: str, other: str) -> Reply:
        return await client.request(
            "subscriptions/listen",
            {"notifications": notifications},
            ident=idents[number],
            probe=ctx.probe(
                cases.CONCURRENT,
                f"listen for {label} while another subscription listens for {other}: "
                "each notification goes only to a subscription that asked for it",
            ),
            stream=StreamControl(budget=window, stop=_watch(acknowledged[number])),
        )

    async def work() -> None:
        try:
            async with asyncio.timeout(ack_wait):
                await acknowledged[0].wait()
                await acknowledged[1].wait()
        except TimeoutError:
            ctx.observe("note", detail=f"two concurrent subscriptions were not both acknowledged within {ack_wait:g} s")
            return
        await _while_listening(ctx, client)

    outcomes = await asyncio.gather(
        listen(0, first, first_label, second_label),
        listen(1, second, second_label, first_label),
        work(),
        return_exceptions=True,
    )
    transport = ctx.transport
    if isinstance(transport, StdioTransport):
        for ident, listened in zip(idents, outcomes[:2], strict=True):
            if isinstance(listened, Reply) and listened.response is None:
                await client.notify(
                    "notifications/cancelled",
                    {"requestId": ident, "reason": "mcp-assay closes the subscription"},
                    probe=ctx.probe(cases.CANCEL_LISTEN),
                )
        await transport.observe(0.2)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


async def _while_listening(ctx: SuiteContext, client: ModernClient) -> None:
    """Read the lists, call again what the suite already called, read the lists again."""
    methods = [method for capability, _, method in LISTS if ctx.flag(capability, "listChanged")]
    for method in methods:
        await client.request(
            method, {}, probe=ctx.probe(cases.LIST_WHILE_LISTENING, f"{method} while two subscriptions are open")
        )
    called: dict[str, Any] = {}
    for name, arguments, _reply in ctx.tool_calls:
        called.setdefault(name, arguments)
    for name, arguments in called.items():
        await call_tool(
            ctx, name, arguments, case=cases.CALL_WHILE_LISTENING,
            intent=f"tools/call {name} again (as already called) while two subscriptions are open: "
            "a list change it causes goes only to the subscription that asked for it",
        )  # fmt: skip
    for method in methods:
        await client.request(
            method, {}, probe=ctx.probe(cases.LIST_WHILE_LISTENING, f"{method} again: a changed list was announced")
        )


FAMILY = ProbeFamily(
    name="listen",
    cases=cases.CASES,
    run=run,
    eras=frozenset({Era.MODERN}),
    description="subscriptions/listen",
)
