"""Tools (TOOL-16..18): ``x-mcp-header`` annotations in tool input schemas.

A 2026 tool may mark properties of its ``inputSchema`` for mirroring into ``Mcp-Param-*``
headers. The annotations must be valid (a tool with a bad one is invalid and HTTP clients drop
it), mirrored integers must stay within the safe range, and sensitive-looking parameters should
not be mirrored into headers at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.behaviour.channels import tool_definition
from mcp_assay.spec.rules.shared.common import http_exchange
from mcp_assay.spec.rules.shared.header_mirroring import HeaderMark, header_marks, value_at
from mcp_assay.spec.rules.shared.server_features import listed_tools, tool_label
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message

SAFE_INTEGER = 2**53 - 1


def _annotated_tools(message: Message, ctx: Context) -> Iterator[tuple[str, list[HeaderMark], list[str]]]:
    """The listed tools whose ``inputSchema`` carries annotations: label, valid marks, problems."""
    listed = listed_tools(message, ctx)
    if listed is None:
        return
    for position, tool in enumerate(listed[1]):
        if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
            marks, problems = header_marks(tool)
            if marks or problems:
                yield tool_label(tool, position), marks, problems


@message_check(
    requirements="TOOL-16",
    level=Level.MUST,
    subject="x-mcp-header annotations",
    features={"per_request_version"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/list"},
)
def x_mcp_header_annotations_are_valid(message: Message, ctx: Context) -> Iterator[Finding]:
    """x-mcp-header values are unique RFC 9110 tokens on integer/string/boolean properties reached via properties."""
    for label, _, problems in _annotated_tools(message, ctx):
        if problems:
            yield failed(message, f"{label}: {'; '.join(problems[:3])}")
        else:
            yield passed(message)


@message_check(
    requirements="TOOL-17",
    level=Level.MUST,
    subject="mirrored integer arguments",
    features={"per_request_version"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    methods={"tools/call"},
)
def mirrored_integers_are_safe_integers(message: Message, ctx: Context) -> Iterator[Finding]:
    """Integer arguments mirrored into Mcp-Param-* headers lie within ±(2^53-1)."""
    if message.method != "tools/call" or not isinstance(message.params, dict):
        return
    arguments = message.params.get("arguments")
    found = tool_definition(message, message.params, ctx)
    if not isinstance(arguments, dict) or found is None or not isinstance(found[0], dict):
        return
    marks, _ = header_marks(found[0])
    exchange = http_exchange(message, ctx)
    for mark in marks:
        if mark.schema.get("type") != "integer":
            continue
        value = value_at(arguments, mark.path)
        mirrored = exchange.request.headers.get(HeaderKey.PARAM_PREFIX + mark.name) if exchange is not None else None
        if value is MISSING or value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > SAFE_INTEGER:
            where = ".".join(mark.path)
            yield failed(message, f"argument {where} = {value} mirrored into Mcp-Param-{mark.name} is unsafe")
        elif mirrored is not None and re.fullmatch(r"-?\d+", mirrored) and abs(int(mirrored)) > SAFE_INTEGER:
            yield failed(message, f"Mcp-Param-{mark.name}: {mirrored} is outside ±(2^53-1)")
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
    subject="x-mcp-header annotations",
    features={"per_request_version"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/list"},
)
def x_mcp_header_is_not_on_sensitive_parameters(message: Message, ctx: Context) -> Iterator[Finding]:
    """x-mcp-header is not put on parameters that look sensitive (passwords, secrets, tokens, keys)."""
    for label, marks, _ in _annotated_tools(message, ctx):
        hits = [
            f"{'.'.join(mark.path)} ({why})"
            for mark in marks
            if (why := _sensitive(mark.path[-1], mark.name, mark.schema)) is not None
        ]
        if hits:
            yield failed(message, f"{label} mirrors a sensitive-looking parameter into a header: {hits[0]}")
        elif marks:
            yield passed(message)
