"""A listen stream that watches a write land (2026-07-28): the notifications a real change brings.

The other listen cases only see acknowledgements, because nothing changes while they listen. Here
a write tool the user configured (``write_tools.<name>.changes`` in ``--config``: the resources a
call changes) is called while a subscription to those resources is open, as the tool's principal
(the run's own credentials when it names none), with the arguments the config gives: never a tool
or arguments the user did not name. Whatever the server then sends on the stream is judged by the
subscription rules: every notification names its subscription (SUB-08), carries only what was
asked for (SUB-07), and is not progress or a log message (SUB-09). A write that brought no
notification at all is noted, since ``notifications/resources/updated`` is what a subscriber is
waiting for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from mcp_assay.cases import Facts
from mcp_assay.cases import listen as cases
from mcp_assay.suite.behaviour.config import WriteTool
from mcp_assay.suite.behaviour.lanes import Lane, Unavailable
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import ModernClient
from mcp_assay.suite.transports import Reply, StreamControl
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.wire.jsonrpc import Message

__all__ = ["FAMILY"]

ACK = "notifications/subscriptions/acknowledged"
REQUIREMENTS = cases.LISTEN_WRITES.feeds
SETTLE = 0.5
"""Seconds the stream stays open after the write's answer, for a notification sent after it."""
CALL_ALLOWANCE = 2.0
"""Seconds the stream stays open for the write itself, after the acknowledgement (at most --timeout)."""


def _writer(ctx: SuiteContext) -> WriteTool | None:
    behaviour = ctx.config.behaviour
    tools = [tool for tool in behaviour.write_tools.values() if tool.changes] if behaviour is not None else []
    return tools[0] if tools else None


def _until_acknowledged(event: asyncio.Event) -> Callable[[Sequence[Message]], bool]:
    def stop(messages: Sequence[Message]) -> bool:
        if any(message.method == ACK for message in messages):
            event.set()
        return False

    return stop


async def run(ctx: SuiteContext) -> None:
    tool = _writer(ctx)
    if tool is None:
        ctx.skip(
            "no write tool names the resources it changes: add `changes: [<uri>, …]` to an entry of write_tools in "
            "--config, and a listen stream subscribed to them watches a call of it",
            requirements=REQUIREMENTS,
            case=cases.LISTEN_WRITES,
        )
        return
    if not ctx.flag("resources", "subscribe"):
        ctx.skip(
            f"the server does not advertise resources.subscribe, so no listen stream can subscribe to what "
            f"{tool.name} changes",
            requirements=REQUIREMENTS,
            case=cases.LISTEN_WRITES,
        )
        return
    if ctx.connect is None or ctx.config.behaviour is None:
        ctx.skip("harness error: this run cannot open connections of its own", requirements=REQUIREMENTS)
        return
    lane = Lane(
        revision=ctx.revision, transport=ctx.transport.kind, config=ctx.config, behaviour=ctx.config.behaviour,
        connect=ctx.connect, tools={}, main=ctx.client,
    )  # fmt: skip
    try:
        await _watch_a_write(ctx, lane, tool)
    except Unavailable as exc:
        ctx.skip(f"{tool.name} could not be called as its principal: {exc}", requirements=REQUIREMENTS,
                 case=cases.LISTEN_WRITES)  # fmt: skip
    finally:
        await lane.close()


async def _watch_a_write(ctx: SuiteContext, lane: Lane, tool: WriteTool) -> None:
    client = await lane.client(tool.principal)
    assert isinstance(client, ModernClient)
    notifications: dict[str, Any] = {"resourceSubscriptions": list(tool.changes)}
    if ctx.flag("resources", "listChanged"):
        notifications["resourcesListChanged"] = True
    linger = min(ctx.config.timeout, CALL_ALLOWANCE) + SETTLE
    budget = ctx.config.stream_budget_ms / 1000 + linger
    acknowledged = asyncio.Event()
    ident = client.ids()
    shown = ", ".join(tool.changes)

    async def listen() -> Reply:
        return await client.request(
            "subscriptions/listen",
            {"notifications": notifications},
            ident=ident,
            probe=ctx.probe(
                cases.LISTEN_WRITES,
                f"listen for updates of {shown} while {tool.name} changes them: every notification names this "
                "subscription",
            ),
            stream=StreamControl(budget=budget, stop=_until_acknowledged(acknowledged), linger=linger),
        )

    async def write() -> Reply | None:
        try:
            async with asyncio.timeout(ctx.config.stream_budget_ms / 1000):
                await acknowledged.wait()
        except TimeoutError:
            ctx.observe("note", detail=f"the listen stream for {shown} was not acknowledged in time, so "
                                       f"{tool.name} was not called while it was open")  # fmt: skip
            return None
        return await ctx.tolerant(
            client.request(
                "tools/call",
                {"name": tool.name, "arguments": dict(tool.arguments)},
                probe=ctx.probe(
                    cases.WRITE_WHILE_LISTENING,
                    f"tools/call {tool.name} (the configured write) while a subscription to {shown} is open",
                    facts=Facts(principal=tool.principal),
                ),
                timeout=min(ctx.config.timeout, CALL_ALLOWANCE),
            )
        )

    listened, called = await asyncio.gather(listen(), write())
    if isinstance(client.transport, StdioTransport):
        await client.notify(
            "notifications/cancelled",
            {"requestId": ident, "reason": "mcp-assay closes the subscription"},
            probe=ctx.probe(cases.WRITES_CANCEL_LISTEN),
        )
    if called is None:
        return
    arrived = [message for message in listened.messages if message.method not in (None, ACK)]
    if not called.ok:
        ctx.observe("note", detail=f"{tool.name}, called while listening, answered {called.describe()}: nothing "
                                   "was written for the subscription to report")  # fmt: skip
    elif not arrived:
        ctx.observe(
            "note",
            detail=f"{tool.name} was served while a subscription to {shown} was open, and no notification reached "
            "the stream (a subscriber waits for notifications/resources/updated)",
        )


FAMILY = ProbeFamily(
    name="listen-writes",
    cases=cases.WRITES_CASES,
    run=run,
    eras=frozenset({Era.MODERN}),
    capability="resources",
    description="a listen stream subscribed to what a configured write tool changes, while it is called",
)
