"""Helpers the probe families share: walking paginated lists, picking what may be called."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp_assay.cases import Case
from mcp_assay.suite.context import Listing, SuiteContext
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.generate import generate_arguments

__all__ = [
    "LIST_KEYS",
    "allowed_arguments",
    "by_name",
    "callable_without_arguments",
    "destructive",
    "list_again",
    "list_params",
    "read_only",
    "required_arguments",
    "walk",
]

LIST_KEYS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}


def list_params(ctx: SuiteContext, cursor: str | None = None) -> dict[str, Any] | None:
    """Params of a list request: modern requests always carry params (``_meta``), legacy ones only a cursor."""
    if cursor is not None:
        return {"cursor": cursor}
    return {} if ctx.modern else None


async def list_again(ctx: SuiteContext, method: str, case: Case) -> None:
    """Walk ``method`` a second time, on a new connection where there is one (HTTP): what TOOL-03/04, PRM-03 and
    RSRC-03 compare. Those are 2026 requirements; in 2025-11-25 a list may depend on the session, and no
    requirement compares two (cursor stability is the pagination family's), so a handshake run lists once."""
    if not ctx.modern:
        return
    fresh = await ctx.fresh_client()
    await walk(ctx, method, case, client=fresh or ctx.client)


async def walk(
    ctx: SuiteContext, method: str, case: Case, *, client: ModernClient | LegacyClient | None = None
) -> Listing:
    """Follow ``nextCursor`` from the first page to the end, at most ``--page-limit`` pages (each page sent as
    that page of the paged ``case``)."""
    client = client or ctx.client
    key = LIST_KEYS[method]
    listing = Listing(method)
    cursor: str | None = None
    for page in range(1, ctx.config.page_limit + 1):
        intent = f"{method} page {page}" + (" (following nextCursor)" if cursor is not None else "")
        reply = await client.request(method, list_params(ctx, cursor), probe=ctx.probe(case.page(page), intent))
        if not reply.ok:
            listing.error = reply
            return listing
        listing.pages.append(reply)
        items = reply.result.get(key)
        if isinstance(items, list):
            listing.items.extend(item for item in items if isinstance(item, dict))
        next_cursor = reply.result.get("nextCursor")
        if not isinstance(next_cursor, str):
            return listing
        if next_cursor in listing.cursors:
            listing.cursors.append(next_cursor)
            return listing  # a reissued cursor would loop forever; the pagination rules judge it
        listing.cursors.append(next_cursor)
        cursor = next_cursor
    listing.truncated = True
    ctx.observe(
        "page-limit",
        method=method,
        pages=ctx.config.page_limit,
        detail=f"{method} still had a nextCursor after {ctx.config.page_limit} pages (--page-limit)",
    )
    return listing


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Listed items by their string ``name``; the first of two items named alike wins (the rules judge the pair)."""
    named: dict[str, dict[str, Any]] = {}
    for item in items:
        name = item.get("name")
        if isinstance(name, str):
            named.setdefault(name, item)
    return named


def required_arguments(schema: Any) -> list[str]:
    """The ``required`` property names of a tool's ``inputSchema``."""
    if not isinstance(schema, dict):
        return []
    required = schema.get("required")
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


def _hint(tool: Mapping[str, Any], name: str) -> Any:
    annotations = tool.get("annotations")
    return annotations.get(name) if isinstance(annotations, dict) else None


def callable_without_arguments(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tools the suite may call on its own: no required arguments; read-only ones first, destructive ones never."""
    usable = [
        tool
        for tool in tools
        if isinstance(tool.get("name"), str)
        and not required_arguments(tool.get("inputSchema"))
        and _hint(tool, "destructiveHint") is not True
    ]
    return sorted(usable, key=lambda tool: 0 if _hint(tool, "readOnlyHint") is True else 1)


def read_only(tool: Mapping[str, Any]) -> bool:
    """Whether the server annotates ``tool`` read-only and not destructive: what the run calls with generated
    arguments unless ``--no-generate-args-read-only``."""
    return _hint(tool, "readOnlyHint") is True and _hint(tool, "destructiveHint") is not True


def destructive(tool: Mapping[str, Any]) -> bool:
    return _hint(tool, "destructiveHint") is True


def _generated(ctx: SuiteContext, tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Arguments drawn from the inputSchema of each tool ``--generate-args`` names, and (unless
    ``--no-generate-args-read-only``) of each tool annotated read-only, with notes saying which."""
    config = ctx.config
    named = set(config.generate_args)
    listed = {tool["name"]: tool for tool in tools if isinstance(tool.get("name"), str)}
    generated: dict[str, dict[str, Any]] = {}
    for name, tool in listed.items():
        if name in config.tool_args or name == config.failing_tool:
            continue
        trusted = config.generate_args_read_only and _hint(tool, "readOnlyHint") is True
        if name not in named and not (trusted and _hint(tool, "destructiveHint") is not True):
            continue
        made = generate_arguments(tool.get("inputSchema"))
        if made.arguments is None:
            asked = "--generate-args" if name in named else "annotated readOnlyHint"
            ctx.observe("note", detail=f"no plain arguments could be drawn for {name} ({asked}): {made.reason}")
            continue
        generated[name] = made.arguments
    unknown = sorted(named - set(listed))
    if unknown:
        ctx.observe("note", detail=f"--generate-args names tools the server does not list: {', '.join(unknown)}")
    if generated:
        shown = "; ".join(
            f"{name} {json.dumps(arguments, sort_keys=True)[:200]}" for name, arguments in generated.items()
        )
        ctx.observe(
            "generated-arguments",
            tools={name: dict(arguments) for name, arguments in generated.items()},
            because={name: "--generate-args" if name in named else "readOnlyHint" for name in generated},
        )
        ctx.observe("note", detail=f"tools called with arguments generated from their inputSchema: {shown}")
    return generated


def allowed_arguments(ctx: SuiteContext, tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The arguments the suite may call each tool with: ``--tool-args`` as given, and those ``--generate-args``
    allows drawn from the schema (once per run; a tool the user allowed neither way is never in it)."""
    if ctx.generated is None:
        ctx.generated = _generated(ctx, tools)
    return {**ctx.generated, **{name: dict(arguments) for name, arguments in ctx.config.tool_args.items()}}
