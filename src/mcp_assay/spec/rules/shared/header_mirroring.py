"""How a 2026 request mirrors its body into headers: Base64 sentinels and ``x-mcp-header`` marks.

``Mcp-Name`` and ``Mcp-Param-*`` repeat values from the body; a value that is not safe as plain
header text travels as ``=?base64?…?=``. Which ``tools/call`` arguments are mirrored is declared
by ``x-mcp-header`` annotations in the tool's ``inputSchema``. The header rules, the tool rules
and the suite's parameter-header probes all need the same reading of both, so it lives here.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from mcp_assay.spec.rules.shared.common import is_int
from mcp_assay.wire.jsonrpc import MISSING
from mcp_assay.wire.jsontext import fingerprint

__all__ = [
    "X_MCP_HEADER",
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
X_MCP_HEADER = "x-mcp-header"
HEADER_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An RFC 9110 ``token`` (``1*tchar``)."""
HEADER_TYPES = frozenset({"integer", "string", "boolean"})
_SCHEMA_MAPS = ("patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_SCHEMA_ONE = (
    "additionalProperties", "items", "contains", "propertyNames", "unevaluatedItems",
    "unevaluatedProperties", "not", "if", "then", "else", "additionalItems", "$ref",
)  # fmt: skip
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAX_POSITIONS = 50_000


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
    return _HEADER_TEXT.fullmatch(value) is not None


_HEADER_TEXT = re.compile(r"[\t\x20-\x7e]*")


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
    """One valid ``x-mcp-header`` annotation on a property reachable through ``properties`` keys."""

    name: str
    path: tuple[str, ...]
    schema: dict[str, Any]


def _schema_positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every subschema object in document order, with its path of ``properties`` names when it is
    reachable from the root through ``properties`` alone (``()`` for the root, ``None`` when reached
    any other way)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    visited = 0
    while stack and visited < _MAX_POSITIONS:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        visited += 1
        yield path, node
        children: list[tuple[tuple[str, ...] | None, Any]] = []
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                children.extend(((*path, name) if path is not None else None, sub) for name, sub in value.items())
            elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
                children.extend((None, sub) for sub in value.values())
            elif keyword in _SCHEMA_LISTS and isinstance(value, list):
                children.extend((None, sub) for sub in value)
            elif keyword in _SCHEMA_ONE and isinstance(value, dict):
                children.append((None, value))
        stack.extend(reversed(children))


def _mirrorable_type(schema: dict[str, Any]) -> bool:
    # A nullable property (["string", "null"]) may be marked too: a null value just sends no header (HTTP-18).
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared in HEADER_TYPES
    if isinstance(declared, list) and declared:
        kinds = [kind for kind in declared if kind != "null"]
        return len(kinds) == 1 and kinds[0] in HEADER_TYPES
    return False


def header_marks(tool: Any) -> tuple[list[HeaderMark], list[str]]:
    """The valid ``x-mcp-header`` marks of a tool's ``inputSchema``, and what makes any other invalid (TOOL-16):
    worked out once per schema value (a server lists the same tools again and again, each time as new objects,
    and the rules ask for every call)."""
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    value = fingerprint(schema) if isinstance(schema, dict) else None  # tells clean values apart, keys in order
    known = _MARKS.get(value) if value is not None else None
    if known is None:
        marks, problems = _marks_of(schema)
        known = (tuple(marks), tuple(problems))
        if value is not None and len(value) <= _HELD_TEXT:
            if len(_MARKS) >= _HELD:
                _MARKS.clear()
            _MARKS[value] = known
    return list(known[0]), list(known[1])


_MARKS: dict[bytes, tuple[tuple[HeaderMark, ...], tuple[str, ...]]] = {}
_HELD = 1024
_HELD_TEXT = 64 * 1024
"""The longest schema text :data:`_MARKS` keeps (so that what it holds stays small)."""


def _marks_of(schema: Any) -> tuple[list[HeaderMark], list[str]]:
    marks: list[HeaderMark] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path, node in _schema_positions(schema):
        if X_MCP_HEADER not in node:
            continue
        value = node[X_MCP_HEADER]
        where = ".".join(path) if path else "the schema root" if path == () else "a subschema"
        if not path:
            problems.append(f"{X_MCP_HEADER} on {where}, which is not reachable through properties alone")
        elif not isinstance(value, str) or not value:
            problems.append(f"{X_MCP_HEADER} on {where} is {json.dumps(value)[:40]}, not a non-empty string")
        elif not HEADER_TOKEN.fullmatch(value):
            problems.append(f"{X_MCP_HEADER} on {where} is {value[:60]!r}, not an RFC 9110 token")
        elif not _mirrorable_type(node):
            kind = json.dumps(node.get("type"))
            problems.append(f"{X_MCP_HEADER} on {where}, whose type is {kind}, not integer/string/boolean")
        elif value.lower() in seen:
            problems.append(f"{X_MCP_HEADER} {value!r} on {where} repeats the one on {seen[value.lower()]}")
        else:
            seen[value.lower()] = where
            marks.append(HeaderMark(name=value, path=path, schema=node))
    return marks, problems


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for step in path:
        if not isinstance(node, dict) or step not in node:
            return MISSING
        node = node[step]
    return node
