"""Tools (TOOL-16..18): ``x-mcp-header`` annotations in tool input schemas.

A 2026 tool may mark properties of its ``inputSchema`` for mirroring into ``Mcp-Param-*``
headers. The annotations must be valid (a tool with a bad one is invalid and HTTP clients drop
it), mirrored integers must stay within the safe range, and sensitive-looking parameters should
not be mirrored into headers at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from mcp_assay.checks import Context, Finding, failed, message_check, passed
from mcp_assay.jsonrpc import MISSING, Kind, Message
from mcp_assay.spec.rules._common import http_exchange
from mcp_assay.spec.rules._server_features import listed_tools, tool_label
from mcp_assay.spec.rules.channels import tool_definition
from mcp_assay.verdicts import Level, Side

__all__ = ["schema_positions", "x_mcp_header_problems"]

HEADER_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
HEADER_TYPES = frozenset({"integer", "string", "boolean"})
SAFE_INTEGER = 2**53 - 1
X_MCP_HEADER = "x-mcp-header"
_SCHEMA_MAPS = ("patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_SCHEMA_ONE = (
    "additionalProperties", "items", "contains", "propertyNames", "unevaluatedItems",
    "unevaluatedProperties", "not", "if", "then", "else", "additionalItems", "$ref",
)  # fmt: skip
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAX_POSITIONS = 50_000


def schema_positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every subschema object, with its path of ``properties`` names when it is reachable from the
    root through ``properties`` alone (``()`` for the root, ``None`` when reached any other way)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    visited = 0
    while stack and visited < _MAX_POSITIONS:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        visited += 1
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub) for name, sub in value.items())
            elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())
            elif keyword in _SCHEMA_LISTS and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _SCHEMA_ONE and isinstance(value, dict):
                stack.append((None, value))


def x_mcp_header_problems(schema: Any) -> tuple[list[str], list[tuple[tuple[str, ...], str, dict[str, Any]]]]:
    """Invalid ``x-mcp-header`` annotations in an ``inputSchema``, and the valid ones (path, header, property)."""
    problems: list[str] = []
    valid: list[tuple[tuple[str, ...], str, dict[str, Any]]] = []
    seen: dict[str, str] = {}
    for path, node in schema_positions(schema):
        if X_MCP_HEADER not in node:
            continue
        value = node[X_MCP_HEADER]
        where = ".".join(path) if path else "the schema root" if path == () else "a subschema"
        if not path:
            problems.append(f"{X_MCP_HEADER} on {where}, which is not reachable through properties alone")
            continue
        if not isinstance(value, str) or not value:
            problems.append(f"{X_MCP_HEADER} on {where} is {json.dumps(value)[:40]}, not a non-empty string")
            continue
        if not HEADER_TOKEN.fullmatch(value):
            problems.append(f"{X_MCP_HEADER} on {where} is {value[:60]!r}, not an RFC 9110 token")
            continue
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in HEADER_TYPES:
            problems.append(f"{X_MCP_HEADER} on {where}, whose type is {json.dumps(kind)}, not integer/string/boolean")
            continue
        if value.lower() in seen:
            problems.append(f"{X_MCP_HEADER} {value!r} on {where} repeats the one on {seen[value.lower()]}")
            continue
        seen[value.lower()] = where
        valid.append((path, value, node))
    return problems, valid


def _annotated_tools(message: Message, ctx: Context) -> Iterator[tuple[str, dict[str, Any], Any]]:
    listed = listed_tools(message, ctx)
    if listed is None:
        return
    for position, tool in enumerate(listed[1]):
        if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
            schema = tool["inputSchema"]
            if any(X_MCP_HEADER in node for _, node in schema_positions(schema)):
                yield tool_label(tool, position), tool, schema


@message_check(
    requirements="TOOL-16",
    level=Level.MUST,
    side=Side.SERVER,
    subject="x-mcp-header annotations",
    features={"per_request_version"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def x_mcp_header_annotations_are_valid(message: Message, ctx: Context) -> Iterator[Finding]:
    """x-mcp-header values are unique RFC 9110 tokens on integer/string/boolean properties reached via properties."""
    for label, _, schema in _annotated_tools(message, ctx):
        problems, _ = x_mcp_header_problems(schema)
        if problems:
            yield failed(message, f"{label}: {'; '.join(problems[:3])}")
        else:
            yield passed(message)


@message_check(
    requirements="TOOL-17",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="mirrored integer arguments",
    features={"per_request_version"},
    transports={"http"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
)
def mirrored_integers_are_safe_integers(message: Message, ctx: Context) -> Iterator[Finding]:
    """Integer arguments mirrored into Mcp-Param-* headers lie within ±(2^53-1)."""
    if message.method != "tools/call" or not isinstance(message.params, dict):
        return
    arguments = message.params.get("arguments")
    found = tool_definition(message, message.params, ctx)
    if not isinstance(arguments, dict) or found is None or not isinstance(found[0], dict):
        return
    _, annotated = x_mcp_header_problems(found[0].get("inputSchema"))
    exchange = http_exchange(message, ctx)
    for path, header, node in annotated:
        if node.get("type") != "integer":
            continue
        value: Any = arguments
        for part in path:
            value = value.get(part, MISSING) if isinstance(value, dict) else MISSING
        mirrored = exchange.request.headers.get(f"mcp-param-{header}") if exchange is not None else None
        if value is MISSING or value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > SAFE_INTEGER:
            yield failed(message, f"argument {'.'.join(path)} = {value} mirrored into Mcp-Param-{header} is unsafe")
        elif mirrored is not None and re.fullmatch(r"-?\d+", mirrored) and abs(int(mirrored)) > SAFE_INTEGER:
            yield failed(message, f"Mcp-Param-{header}: {mirrored} is outside ±(2^53-1)")
        else:
            yield passed(message)


_SENSITIVE_WORDS = frozenset(
    {"password", "passwd", "passphrase", "secret", "token", "apikey", "authorization", "credential",
     "credentials", "ssn", "cookie", "privatekey", "accesskey", "bearer"}
)  # fmt: skip
_SENSITIVE_DESCRIPTION = re.compile(
    r"\b(password|passphrase|secret|api[ _-]?key|access[ _-]?token|bearer|credentials?|social security)\b", re.I
)


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def _sensitive(name: str, header: str, node: dict[str, Any]) -> str | None:
    for text in (name, header):
        words = _words(text)
        joined = {a + b for a, b in zip(words, words[1:], strict=False)}
        hit = (set(words) | joined) & _SENSITIVE_WORDS
        if hit:
            return f"{text!r} looks like {sorted(hit)[0]}"
    description = node.get("description")
    if isinstance(description, str):
        match = _SENSITIVE_DESCRIPTION.search(description)
        if match:
            return f"its description mentions {match.group(0)!r}"
    return None


@message_check(
    requirements="TOOL-18",
    level=Level.SHOULD_NOT,
    side=Side.SERVER,
    subject="x-mcp-header annotations",
    features={"per_request_version"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def x_mcp_header_is_not_on_sensitive_parameters(message: Message, ctx: Context) -> Iterator[Finding]:
    """x-mcp-header is not put on parameters that look sensitive (passwords, secrets, tokens, keys)."""
    for label, _, schema in _annotated_tools(message, ctx):
        _, annotated = x_mcp_header_problems(schema)
        hits = [
            f"{'.'.join(path)} ({why})"
            for path, header, node in annotated
            if (why := _sensitive(path[-1], header, node)) is not None
        ]
        if hits:
            yield failed(message, f"{label} mirrors a sensitive-looking parameter into a header: {hits[0]}")
        elif annotated:
            yield passed(message)
