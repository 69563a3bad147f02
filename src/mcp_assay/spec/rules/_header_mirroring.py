"""How a 2026 request mirrors its body into headers: Base64 sentinels and ``x-mcp-header`` marks.

``Mcp-Name`` and ``Mcp-Param-*`` repeat values from the body; a value that is not safe as plain
header text travels as ``=?base64?…?=``. Which ``tools/call`` arguments are mirrored is declared
by ``x-mcp-header`` annotations in the tool's ``inputSchema``. The header rules, the tool rules
and the suite's parameter-header probes all need the same reading of both, so it lives here.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from mcp_assay.jsonrpc import MISSING
from mcp_assay.spec.rules._common import is_int

__all__ = [
    "HeaderMark",
    "decode_sentinel",
    "encode_sentinel",
    "header_marks",
    "header_text_safe",
    "is_sentinel",
    "looks_like_sentinel_any_case",
    "mirror",
    "needs_encoding",
    "numerically_equal",
    "value_at",
]

SENTINEL_PREFIX = "=?base64?"
SENTINEL_SUFFIX = "?="
TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})
LITERAL_KEYWORDS = frozenset({"const", "enum", "default", "examples", "x-mcp-header"})
"""Schema keywords whose values are data, not subschemas."""


def is_sentinel(value: str) -> bool:
    """``=?base64?…?=`` with the exact lowercase markers."""
    return (
        len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX)
        and value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
    )


def looks_like_sentinel_any_case(value: str) -> bool:
    lowered = value.lower()
    return lowered.startswith(SENTINEL_PREFIX) and lowered.endswith(SENTINEL_SUFFIX)


def decode_sentinel(value: str) -> str | None:
    """The text a sentinel-encoded value carries; ``None`` when the Base64 or the UTF-8 is broken."""
    inner = value[len(SENTINEL_PREFIX) : len(value) - len(SENTINEL_SUFFIX)]
    try:
        return base64.b64decode(inner, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def encode_sentinel(text: str) -> str:
    return SENTINEL_PREFIX + base64.b64encode(text.encode("utf-8")).decode("ascii") + SENTINEL_SUFFIX


def header_text_safe(value: str) -> bool:
    """Only visible ASCII, space and tab (what a plain header value may hold)."""
    return all(ch == "\t" or 0x20 <= ord(ch) <= 0x7E for ch in value)


def needs_encoding(text: str) -> bool:
    """Whether a mirrored value must travel as a Base64 sentinel."""
    return not header_text_safe(text) or text != text.strip(" \t") or is_sentinel(text)


def mirror(value: Any) -> str | None:
    """The header text of a mirrored argument: strings as-is, integers in decimal, ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_int(value):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def numerically_equal(header: str, value: Any) -> bool:
    if not is_int(value):
        return False
    try:
        number = Decimal(header.strip())
    except InvalidOperation:
        return False
    return number.is_finite() and number == Decimal(value)


@dataclass(frozen=True, slots=True)
class HeaderMark:
    """One ``x-mcp-header`` annotation on a property reachable through ``properties`` keys."""

    name: str
    path: tuple[str, ...]
    schema: dict[str, Any]


def _walk_marks(node: Any, chain: tuple[str, ...] | None, marks: list[HeaderMark], problems: list[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _walk_marks(item, None, marks, problems)
        return
    if not isinstance(node, dict):
        return
    if "x-mcp-header" in node:
        if not chain:
            problems.append("an x-mcp-header annotation sits where no properties chain reaches it")
        else:
            marks.append(HeaderMark(name=node["x-mcp-header"], path=chain, schema=node))
    for key, value in node.items():
        if key in LITERAL_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _walk_marks(sub, chain + (str(prop),) if chain is not None else None, marks, problems)
        else:
            _walk_marks(value, None, marks, problems)


def _type_ok(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared in PRIMITIVE_TYPES
    if isinstance(declared, list) and declared:
        kinds = [kind for kind in declared if kind != "null"]
        return len(kinds) == 1 and kinds[0] in PRIMITIVE_TYPES
    return False


def header_marks(tool: Any) -> tuple[list[HeaderMark], list[str]]:
    """The annotations of a tool's ``inputSchema`` and what makes any of them invalid (TOOL-16)."""
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    marks: list[HeaderMark] = []
    problems: list[str] = []
    _walk_marks(schema, (), marks, problems)
    seen: dict[str, str] = {}
    for mark in marks:
        where = ".".join(mark.path)
        name = mark.name
        if not isinstance(name, str) or not name:
            problems.append(f"{where}: x-mcp-header must be a non-empty string")
            continue
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
            problems.append(f"{where}: x-mcp-header {name!r} contains control characters")
        elif not set(name) <= TCHAR:
            problems.append(f"{where}: x-mcp-header {name!r} is not an HTTP token")
        if name.lower() in seen:
            problems.append(f"{where}: x-mcp-header {name!r} repeats {seen[name.lower()]!r} (case-insensitively)")
        seen[name.lower()] = name
        if not _type_ok(mark.schema):
            problems.append(f"{where}: x-mcp-header on a property of type {mark.schema.get('type')!r}")
    return marks, problems


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for step in path:
        if not isinstance(node, dict) or step not in node:
            return MISSING
        node = node[step]
    return node
