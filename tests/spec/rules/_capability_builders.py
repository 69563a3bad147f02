"""Hand-built traffic for the tools, resources, prompts, pagination, completion and MRTR rules.

Each builder returns one realistic exchange (2026-07-28 unless it says legacy) that a test then
bends in one place; ``caps()`` builds the server/discover that tells the rules which
capabilities the server declared (a 2025 session's come from ``tests.factories.legacy_session``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_assay.wire.model import HttpExchange
from tests.factories import error_body, http, modern_call, modern_headers, request_body

CACHE = {"ttlMs": 0, "cacheScope": "private"}

ADD = {
    "name": "add",
    "description": "Add two numbers.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    },
}
ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}

SUMMARIZE = {
    "name": "summarize",
    "description": "Summarize a text.",
    "arguments": [{"name": "text", "required": True}],
}


def caps(capabilities: Mapping[str, Any] | None = None) -> HttpExchange:
    """A 2026 server/discover declaring ``capabilities`` (default: tools, resources, prompts)."""
    declared = dict(capabilities) if capabilities is not None else {"tools": {}, "resources": {}, "prompts": {}}
    result = {"supportedVersions": ["2026-07-28"], "capabilities": declared, **CACHE}
    return modern_call("server/discover", {}, result, ident="d")


def listing(method: str, items: list[Any], *, member: str, cursor: str | None = None, next_cursor: str | None = None,
            ident: Any = 1, **kw: Any) -> HttpExchange:  # fmt: skip
    params = {"cursor": cursor} if cursor is not None else {}
    result: dict[str, Any] = {member: items, **CACHE}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return modern_call(method, params, result, ident=ident, **kw)


def tools_list(tools: list[Any], **kw: Any) -> HttpExchange:
    return listing("tools/list", tools, member="tools", **kw)


def prompts_list(prompts: list[Any], **kw: Any) -> HttpExchange:
    return listing("prompts/list", prompts, member="prompts", **kw)


def resources_list(resources: list[Any], **kw: Any) -> HttpExchange:
    return listing("resources/list", resources, member="resources", **kw)


def call(name: Any, arguments: Any, result: Any, *, ident: Any = 2, **kw: Any) -> HttpExchange:
    """A 2026 tools/call answered with ``result`` (a CallToolResult object)."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return modern_call("tools/call", params, result, ident=ident, **kw)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def failing(method: str, params: Any, code: int, message: str = "error", *, ident: Any = 3, status: int = 200,
            probe: Mapping[str, Any] | None = None, data: Any = None) -> HttpExchange:  # fmt: skip
    """A 2026 request answered with a JSON-RPC error."""
    body = request_body(method, ident, params)
    return http(body, error_body(code, message, ident, data), status=status, probe=probe, headers=modern_headers(body))


def answered(method: str, params: Any, result: Any, *, ident: Any = 3, probe: Mapping[str, Any] | None = None,
             **kw: Any) -> HttpExchange:  # fmt: skip
    """A 2026 request answered with ``result`` (resultType/_meta added unless present)."""
    return modern_call(method, params, result, ident=ident, probe=probe, **kw)
