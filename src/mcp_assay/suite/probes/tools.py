"""Tools: the list, calls the suite is allowed to make, and the error paths.

``tools/list`` is walked to the end and asked again (on a new connection over HTTP) so the rules
can compare the two. The suite invents arguments only for a tool the server says is safe to call:
it calls the tools named in ``--tool-args`` with the arguments given, those ``--generate-args``
names and (unless ``--no-generate-args-read-only``) every tool annotated ``readOnlyHint`` and not
``destructiveHint`` with plain arguments drawn from their ``inputSchema``
(:mod:`mcp_assay.suite.generate`; the report names them and the arguments, ``docs/run.md`` says why
read-only tools are called by default), and, when no read-only tool was called, one tool that needs
no arguments (never one annotated destructive); with none of these, the call cases are not verified
and say why. Every listed tool left out is named in the report with why and the setting that calls
it (an ``untried`` observation, :mod:`mcp_assay.suite.untried`). Error paths use a
tool name that cannot exist, a call without a name, ``arguments`` that are not an object, and —
only for a tool the user allowed arguments for, or one annotated read-only — arguments missing a
required property; for an allowed tool whose ``inputSchema`` sets ``additionalProperties: false``,
also its arguments plus one property the schema does not define. A tool the user names with ``--failing-tool`` is
called once (with its ``--tool-args`` arguments, if any) to see which channel its failure takes.
The rules report the channel of each answer (protocol error or tool result with ``isError``).

Progress and logging ride on the calls the suite may make anyway: every ordinary call carries a
progress token, and in 2026-07-28 each such tool is called once more asking for every log message
(``logLevel: "debug"``, with a token of its own) and read to the end of its stream, so the progress
and log rules have their subjects whenever the tool reports progress or logs; the ordinary call,
which sets no level, is LOG-01's subject. A tool that logged below ``error`` is then called once
asking for ``error`` and above only (LOG-02).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from mcp_assay.cases import NO_FACTS, Case, Facts
from mcp_assay.cases import tools as cases
from mcp_assay.cases.model import left_unsent
from mcp_assay.report.untried import EXPLORE_STEP
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import ModernClient
from mcp_assay.suite.generate import generate_arguments
from mcp_assay.suite.outgoing import encode, validate_outgoing
from mcp_assay.suite.probes._lists import (
    allowed_arguments,
    by_name,
    callable_without_arguments,
    destructive,
    list_again,
    read_only,
    required_arguments,
    walk,
)
from mcp_assay.suite.transports import Reply
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.errors import NoAnswer
from mcp_assay.vocabulary.protocol import MetaKey

__all__ = ["FAMILY", "call_tool"]

NO_SUCH_TOOL = "mcp-assay-no-such-tool"
CANCEL_WATCH = 1.2
"""Seconds to watch for anything the server still sends about a call the suite cancelled."""
CALL_REQUIREMENTS = cases.CALL.feeds | left_unsent(cases.CASES, cases.CALL)
"""What the calls feed: left unjudged when there is no tool to call (the cases that need a call, by their ``needs``)."""
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_MESSAGE = "notifications/message"
EXTRA_PROPERTY = "mcp_assay_unexpected"
"""A property name no tool defines, for the strict-schema case."""


def call_params(ctx: SuiteContext, name: str, arguments: Any, *, progress: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if progress is not None and not ctx.modern:
        params["_meta"] = {"progressToken": progress}
    return params


async def call_tool(
    ctx: SuiteContext,
    name: str,
    arguments: Any,
    *,
    case: Case,
    intent: str | None = None,
    invalid: bool | None = None,
    facts: Facts = NO_FACTS,
    progress: str | None = None,
    log_level: str | None = None,
    capabilities: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Any:
    """One tools/call of ``case`` in the era's shape (progress token and log level in ``_meta`` where given);
    ``invalid`` and ``facts`` for a sending that knows more than its case (:meth:`SuiteContext.probe`)."""
    client = ctx.client
    params = call_params(ctx, name, arguments, progress=progress)
    params.update(extra or {})
    probe = ctx.probe(case, intent, invalid=invalid, facts=facts)
    if isinstance(client, ModernClient):
        meta_extra: dict[str, Any] = {}
        if progress is not None:
            meta_extra["progressToken"] = progress
        if log_level is not None:
            meta_extra[MetaKey.LOG_LEVEL] = log_level
        meta = client.meta(**meta_extra)
        if capabilities is not None:
            meta[MetaKey.CLIENT_CAPABILITIES] = dict(capabilities)
        return await client.request("tools/call", params, meta=meta, probe=probe)
    return await client.request("tools/call", params, probe=probe)


async def _call_or_give_up(
    ctx: SuiteContext,
    name: str,
    arguments: Any,
    *,
    case: Case,
    intent: str,
    progress: str | None = None,
    log_level: str | None = None,
) -> Reply | None:
    """An ordinary call of a tool. One the run chose itself, with generated arguments, that is still running
    after ``--timeout`` is cancelled and noted, not failed; any other call's silence stays a finding.

    How long a tool runs is its own business: the specification leaves the timeout to the caller and asks
    it to cancel what it stops waiting for (notifications/cancelled; in 2026-07-28 over HTTP the closed
    stream is the cancellation). A long-running read-only tool (server-everything's
    trigger-long-running-operation runs 10 s), called only because it is read-only, must not become an
    unanswered request (RPC-05), nor stop the calls of the other tools. A tool the user named, with the
    arguments the user gave, is expected to answer within the timeout the user set."""
    generated = ctx.generated or {}
    if name not in generated or name in ctx.config.tool_args:
        reply: Reply = await call_tool(
            ctx, name, arguments, case=case, intent=intent, progress=progress, log_level=log_level
        )  # fmt: skip
        return reply
    client = ctx.client
    params = call_params(ctx, name, arguments, progress=progress)
    if isinstance(client, ModernClient):
        extra: dict[str, Any] = {} if progress is None else {"progressToken": progress}
        if log_level is not None:
            extra[MetaKey.LOG_LEVEL] = log_level
        body = client.build("tools/call", params, meta=client.meta(**extra))
    else:
        body = client.build("tools/call", params)
    try:
        return await client.send(body, ctx.probe(case, intent))
    except NoAnswer:
        if not ctx.modern or isinstance(ctx.transport, StdioTransport):
            await client.notify(
                "notifications/cancelled",
                {"requestId": body["id"], "reason": "mcp-assay stopped waiting (--timeout)"},
                probe=ctx.probe(cases.CANCEL, f"cancel the tools/call {name} still running after --timeout"),
            )
        detail = (
            f"tools/call {name} was still running after --timeout {ctx.config.timeout:g} s: the run cancelled it "
            "and went on (a long-running tool is no violation; a longer --timeout waits it out)"
        )
        ctx.observe("note", detail=detail)
        return None


def _chosen(ctx: SuiteContext, tools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    names = {tool["name"] for tool in tools if isinstance(tool.get("name"), str)}
    failing = ctx.config.failing_tool
    allowed = allowed_arguments(ctx, tools)
    given = [name for name in ctx.config.tool_args if name in allowed]
    chosen = [
        (name, allowed[name], "with the arguments given in --tool-args" if name in ctx.config.tool_args
         else "with arguments generated from its inputSchema")
        for name in [*given, *(name for name in allowed if name not in ctx.config.tool_args)]
        if name in names and name != failing
    ]  # fmt: skip
    free = [
        tool for tool in callable_without_arguments(tools) if tool["name"] not in allowed and tool["name"] != failing
    ]
    listed = by_name(tools)
    if free and not any(read_only(listed[name]) for name, _, _ in chosen if name in listed):
        chosen.append((free[0]["name"], {}, "needs no arguments"))  # a read-only call already makes the call cases
    return chosen


def _called_elsewhere(config: SuiteConfig, tool: Mapping[str, Any]) -> bool:
    """Whether another part of the run calls ``tool``: the behaviour cases, the rate-limit burst, the failing-tool
    case, or the exploration."""
    name = tool.get("name")
    named: set[Any] = {config.failing_tool}
    behaviour = config.behaviour
    if behaviour is not None:
        named |= set(behaviour.write_tools) | {item.name for item in behaviour.read_tools.values()}
        named |= {witness.tool for witness in behaviour.witnesses.values()}
        named |= {call.tool for handle in behaviour.handles.values() for call in (handle.create, handle.use)}
    if config.rate_limit_probe is not None:
        named.add(config.rate_limit_probe.tool)
    if config.explore:
        named |= set(config.explore_tool)
    return name in named or (config.explore and read_only(tool))


def _note_untried(ctx: SuiteContext, tools: list[dict[str, Any]], called: set[str]) -> None:
    """Say which listed tools the run leaves out, grouped by why, each group with the setting that calls them
    (``NAME`` stands for the group's first tool)."""
    config = ctx.config
    groups: dict[tuple[str, str], list[str]] = {}
    for name, tool in by_name(tools).items():
        if name in called or _called_elsewhere(config, tool):
            continue
        if destructive(tool):
            why, step = "annotated destructiveHint", "only --tool-args '{NAME: {…}}' calls it"
        elif not required_arguments(tool.get("inputSchema")):
            why, step = "need no arguments, but one such call was enough", "--tool-args '{NAME: {}}' calls one too"
        elif read_only(tool) and not config.generate_args_read_only:
            why, step = "need arguments", "--generate-args-read-only draws them for read-only tools"
        elif read_only(tool) or name in config.generate_args:
            reason = generate_arguments(tool.get("inputSchema")).reason or "its inputSchema gives no plain value"
            why, step = f"need arguments no plain value satisfies ({reason})", "--tool-args '{NAME: {…}}'"
        else:
            why = "need arguments, not annotated readOnlyHint"
            step = "--generate-args NAME_ (plain values from its inputSchema) or --tool-args '{NAME: {…}}'"
        groups.setdefault((why, step), []).append(name)
    for (why, step), names in groups.items():
        step = step.replace("NAME_", names[0]).replace("NAME", json.dumps(names[0]))
        if len(names) == 1:
            why = why.replace("need ", "needs ", 1)
        reaches = "one such call was enough" not in why
        ctx.observe("untried", what="tools", names=names, why=why, step=step, reaches=reaches)
    _note_unexplored(ctx, tools, called)


def _takes_arguments(tool: Mapping[str, Any]) -> bool:
    """Whether ``tool``'s inputSchema names any property (an optional one too: exploring varies it)."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return isinstance(properties, Mapping) and bool(properties)


def _note_unexplored(ctx: SuiteContext, tools: list[dict[str, Any]], called: set[str]) -> None:
    """Say which read-only tools that take arguments had only the one plain call with generated arguments, and that
    ``--explore`` tries many (what it would find is not known before it runs, so no requirements are counted)."""
    if ctx.config.explore:
        return
    generated = ctx.generated or {}
    plain = [
        name for name, tool in by_name(tools).items()
        if name in called and name in generated and read_only(tool) and _takes_arguments(tool)
    ]  # fmt: skip
    if plain:
        why = "had one plain call, not explored" if len(plain) == 1 else "had one plain call each, not explored"
        ctx.observe("untried", what="tools", names=plain, why=why, step=EXPLORE_STEP, reaches=False)


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    listing = await walk(ctx, "tools/list", cases.LIST)
    ctx.listings["tools/list"] = listing
    if not listing.ok:
        answer = listing.error.describe() if listing.error is not None else "nothing"
        ctx.skip(
            f"tools/list answered {answer}, so there was no tool to call",
            requirements=left_unsent(cases.CASES, cases.LIST),
            blocked_by="TOOL-02",
        )
        return
    tools = listing.items
    if isinstance(client, ModernClient):
        client.tools = {tool["name"]: tool for tool in tools if isinstance(tool.get("name"), str)}
    await list_again(ctx, "tools/list", cases.LIST_AGAIN)
    unknown = sorted(set(ctx.config.tool_args) - set(by_name(tools)))
    if unknown:
        ctx.observe("note", detail=f"--tool-args names tools the server does not list: {', '.join(unknown)}")
    chosen = _chosen(ctx, tools)
    _note_untried(ctx, tools, {name for name, _, _ in chosen})
    if not chosen:
        ctx.skip(
            "every listed tool needs arguments the suite may not invent (it draws them only for a tool annotated "
            "readOnlyHint) or is annotated destructive, and neither --tool-args nor --generate-args names one — "
            "pass --tool-args '{\"<tool>\": {...}}' or --generate-args <tool>"
            if tools
            else "the server lists no tools, so no call could be made",
            requirements=CALL_REQUIREMENTS,
            case=cases.CALL,
            untried="tools" if tools else None,
        )
    for number, (name, arguments, why) in enumerate(chosen, start=1):
        reply = await _call_or_give_up(
            ctx, name, arguments, case=cases.CALL, intent=f"tools/call {name} ({why})",
            progress=f"mcp-assay-progress-{number}",
        )  # fmt: skip
        if reply is not None:
            ctx.tool_calls.append((name, arguments, reply))
    if chosen:
        await _cancelled_call(ctx, chosen[0][0], chosen[0][1])
    if chosen and ctx.modern:
        await _logged_calls(ctx, chosen)
    await call_tool(ctx, NO_SUCH_TOOL, {}, case=cases.UNKNOWN_TOOL)
    body = client.build("tools/call", {"arguments": {}})
    await client.send(body, ctx.probe(cases.NO_NAME))
    target = chosen[0][0] if chosen else (tools[0]["name"] if tools and isinstance(tools[0].get("name"), str) else None)
    if target is not None:
        await call_tool(ctx, target, "mcp-assay", case=cases.ARGUMENTS_NOT_OBJECT)
    await _bad_arguments(ctx, tools)
    await _extra_property(ctx, by_name(tools), allowed_arguments(ctx, tools))
    await _failing_tool(ctx, tools)


def _levels_below(reply: Reply, threshold: str) -> list[str]:
    """Levels of the log messages in ``reply`` that rank below ``threshold``."""
    floor = LOG_LEVELS.index(threshold)
    found = []
    for message in reply.messages:
        params = message.params if message.method == LOG_MESSAGE and isinstance(message.params, dict) else {}
        level = params.get("level")
        if level in LOG_LEVELS and LOG_LEVELS.index(level) < floor:
            found.append(str(level))
    return found


async def _logged_calls(ctx: SuiteContext, chosen: list[tuple[str, dict[str, Any], str]]) -> None:
    """2026: each tool the suite calls, once more asking for every log message (and progress).

    The first tool that logs below ``error`` is called again asking for ``error`` and above only, so
    LOG-02 sees whether the server keeps to the requested level. Nothing here is sent to a tool the
    suite would not call anyway."""
    chatty: tuple[str, dict[str, Any]] | None = None
    for number, (name, arguments, why) in enumerate(chosen, start=1):
        reply = await _call_or_give_up(
            ctx, name, arguments, case=cases.CALL_LOGGED,
            intent=f"tools/call {name} ({why}) asking for every log message (logLevel debug) and progress: "
            "log messages and progress only on its own stream, before its answer",
            progress=f"mcp-assay-progress-logged-{number}", log_level="debug",
        )  # fmt: skip
        if reply is None:
            continue
        if chatty is None and _levels_below(reply, "error"):
            chatty = (name, arguments)
    if chatty is None:
        ctx.skip(
            "no tool the suite may call logged anything below error when asked for every level, so asking for "
            "error and above only would show nothing",
            requirements=(),
            case=cases.CALL_LOG_ERROR,
        )
        return
    name, arguments = chatty
    await call_tool(
        ctx, name, arguments, case=cases.CALL_LOG_ERROR,
        intent=f"tools/call {name} asking only for error-level log messages: nothing below error",
        log_level="error",
    )  # fmt: skip


async def _cancelled_call(ctx: SuiteContext, name: str, arguments: Mapping[str, Any]) -> None:
    """Call a tool the suite may call and cancel it at once: close the stream (HTTP) or notify (stdio)."""
    client = ctx.client
    params = call_params(ctx, name, arguments, progress="mcp-assay-progress-cancel")
    meta = None
    if isinstance(client, ModernClient):
        meta = client.meta(progressToken="mcp-assay-progress-cancel")
        body = client.build("tools/call", params, meta=meta)
    else:
        body = client.build("tools/call", params)
    probe = ctx.probe(cases.CANCEL_CALL, f"tools/call {name}, cancelled right away: nothing more about it afterwards")
    transport = ctx.transport
    if isinstance(transport, StdioTransport):
        validate_outgoing(ctx.revision, encode(body), invalid=False)
        await transport.send(encode(body), probe=probe.at(ctx.revision.name), expect=None, wait=False)
        await asyncio.sleep(0.02)
        await client.notify(
            "notifications/cancelled",
            {"requestId": body["id"], "reason": "mcp-assay cancels the call"},
            probe=ctx.probe(cases.CANCEL, f"cancel the tools/call {name} just sent"),
        )
        await transport.observe(CANCEL_WATCH)
        return
    reply = await client.send(body, probe, cancel_after=0.02)
    if not ctx.modern and reply.closed_by_client and reply.response is None:
        # in 2025-11-25 a disconnect is not a cancellation: say so with notifications/cancelled
        await client.notify(
            "notifications/cancelled",
            {"requestId": body["id"], "reason": "mcp-assay cancels the call"},
            probe=ctx.probe(cases.CANCEL, f"cancel the tools/call {name} whose stream was closed"),
        )


async def _bad_arguments(ctx: SuiteContext, tools: list[dict[str, Any]]) -> None:
    """TOOL-14: arguments breaking inputSchema, only on a tool the suite is allowed to call with arguments."""
    # a listing may name two tools alike (TOOL-08): each candidate keeps the definition it was chosen by
    named = by_name(tools)
    candidates: list[tuple[str, dict[str, Any], list[str]]] = []
    for name, arguments in allowed_arguments(ctx, tools).items():
        tool = named.get(name)
        required = required_arguments(tool.get("inputSchema")) if tool is not None else []
        if required:
            candidates.append((name, dict(arguments), required))
    if not candidates:
        for tool in tools:
            annotations = tool.get("annotations")
            read_only = isinstance(annotations, dict) and annotations.get("readOnlyHint") is True
            required = required_arguments(tool.get("inputSchema"))
            if read_only and required and isinstance(tool.get("name"), str):
                candidates.append((tool["name"], {}, required))
                break
    if not candidates:
        ctx.skip(
            "no tool with required arguments may be called with bad ones: name one in --tool-args "
            "(its arguments are then varied) or annotate one readOnlyHint",
            requirements={"TOOL-14"},
            case=cases.MISSING_REQUIRED,
            untried="tools",
        )
        return
    name, arguments, required = candidates[0]
    broken = {key: value for key, value in arguments.items() if key != required[0]}
    await call_tool(
        ctx, name, broken, case=cases.MISSING_REQUIRED,
        intent=f"tools/call {name} without its required argument {required[0]!r}: isError (or -32602)",
    )  # fmt: skip


async def _extra_property(
    ctx: SuiteContext, named: Mapping[str, dict[str, Any]], allowed: Mapping[str, dict[str, Any]]
) -> None:
    """BEH-03 / TOOL-14: a property a strict inputSchema does not allow, on a tool the user allowed calls of."""
    strict = [
        (name, dict(arguments))
        for name, arguments in allowed.items()
        if name != ctx.config.failing_tool
        and name in named
        and isinstance(named[name].get("inputSchema"), dict)
        and named[name]["inputSchema"].get("additionalProperties") is False
    ]
    if not strict:
        ctx.skip(
            "no tool named in --tool-args or --generate-args has a strict inputSchema (additionalProperties: false), "
            "so no call carries a property the schema forbids",
            requirements=(),
            case=cases.EXTRA_PROPERTY,
        )
        return
    name, arguments = strict[0]
    await call_tool(
        ctx, name, {**arguments, EXTRA_PROPERTY: True}, case=cases.EXTRA_PROPERTY,
        intent=f"tools/call {name} with {EXTRA_PROPERTY!r}, which its strict inputSchema does not allow: "
        "isError (or -32602)",
    )  # fmt: skip


async def _failing_tool(ctx: SuiteContext, tools: list[dict[str, Any]]) -> None:
    """TOOL-15: the channel a tool failure takes, for the tool the user says fails (--failing-tool)."""
    name = ctx.config.failing_tool
    if name is None:
        ctx.skip(
            "no tool is known to fail: name one with --failing-tool (its arguments come from --tool-args) to see "
            "whether a tool failure comes back as a result with isError: true",
            case=cases.FAILING_TOOL,
        )
        return
    if name not in by_name(tools):
        ctx.skip(
            f"--failing-tool {name}: the server lists no such tool",
            case=cases.FAILING_TOOL,
        )
        return
    arguments = dict(ctx.config.tool_args.get(name, {}))
    await call_tool(
        ctx, name, arguments, case=cases.FAILING_TOOL,
        intent=f"tools/call {name}, which the user says fails: a result with isError: true",
    )  # fmt: skip


FAMILY = ProbeFamily(
    name="tools",
    cases=cases.CASES,
    run=run,
    capability="tools",
    description="tools/list and tools/call",
)
