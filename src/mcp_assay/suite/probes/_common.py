"""Helpers the probe families share: walking paginated lists, picking what may be called."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_assay.suite.context import Listing, SuiteContext
from mcp_assay.suite.session import LegacyClient, ModernClient

__all__ = [
    "LIST_KEYS",
    "by_name",
    "callable_without_arguments",
    "fresh_lister",
    "list_params",
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


async def fresh_lister(ctx: SuiteContext) -> ModernClient | LegacyClient | None:
    """A client on a new connection (HTTP) or process (2025 stdio) that may ask for a list.

    A 2026 request needs nothing before it. A 2025 client must open its own session first — a list
    request without one is refused (400 on HTTP) and says nothing about the list — so the new client
    completes a handshake of its own; ``None`` when there is no new connection to be had or the
    server refuses the second session."""
    fresh = await ctx.fresh_client()
    if not isinstance(fresh, LegacyClient):
        return fresh
    reply = await fresh.initialize(
        ctx.revision.name,
        ctx.probe("fresh-initialize", f"initialize a second session offering {ctx.revision.name}, to list again"),
    )
    if not reply.ok:
        return None
    await fresh.initialized(ctx.probe("fresh-initialized", "notifications/initialized for the second session"))
    return fresh


async def walk(
    ctx: SuiteContext, method: str, *, client: ModernClient | LegacyClient | None = None, label: str = "list"
) -> Listing:
    """Follow ``nextCursor`` from the first page to the end, at most ``--page-limit`` pages."""
    client = client or ctx.client
    key = LIST_KEYS[method]
    listing = Listing(method)
    cursor: str | None = None
    for page in range(1, ctx.config.page_limit + 1):
        name = f"{label}" if page == 1 else f"{label}-page-{page}"
        intent = f"{method} page {page}" + (" (following nextCursor)" if cursor is not None else "")
        reply = await client.request(method, list_params(ctx, cursor), probe=ctx.probe(name, intent))
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
