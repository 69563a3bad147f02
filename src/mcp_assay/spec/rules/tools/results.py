"""Tools (TOOL-09..11, 19, 20): what a complete ``tools/call`` result holds.

A result carries a content array of well-formed blocks, an optional ``isError`` and, for a tool
with an ``outputSchema``, ``structuredContent`` that validates against it and is repeated as
JSON text. The tool's definition comes from the latest ``tools/list`` in the log.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.spec.checks import Finding, failed, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.behaviour.channels import tool_definition
from mcp_assay.spec.rules.shared.answers import answer_to
from mcp_assay.spec.rules.shared.server_features import content_block_issues, is_input_required, shape_finding
from mcp_assay.spec.toolschema import validate_instance
from mcp_assay.spec.validator import canonical
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message


def _call_of(message: Message, ctx: Context) -> tuple[Message, dict[str, Any]] | None:
    """For an answer to tools/call: the request and its params (when they are an object)."""
    return answer_to(message, ctx, "tools/call")


@message_check(
    requirements="TOOL-09",
    level=Level.MUST,
    subject="tools/call results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/call"},
)
def tool_results_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """A complete tools/call result has a content array, an optional boolean isError and a valid structuredContent."""
    if _call_of(message, ctx) is None or is_input_required(message):
        return None
    return shape_finding(
        message,
        ctx,
        roots=(r"result\.content", r"result\.isError", r"result\.structuredContent"),
        exclude=(r"result\.content\[\d+\]",),
        what="the tools/call result",
    )


@message_check(
    requirements="TOOL-10",
    level=Level.MUST,
    subject="results of tools with an outputSchema",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/call"},
)
def structured_content_matches_the_output_schema(message: Message, ctx: Context) -> Finding | None:
    """A tool with an outputSchema returns structuredContent that validates against it (isError results aside)."""
    call = _call_of(message, ctx)
    if call is None or is_input_required(message) or not isinstance(message.result, dict):
        return None
    if message.result.get("isError") is True:
        return None
    request, params = call
    found = tool_definition(request, params, ctx)
    if found is None:
        return unverified("no tools/list was captured, so the tool's outputSchema is unknown", message)
    tool, _ = found
    if not isinstance(tool, dict):
        return unverified(f"the tool {params.get('name')!r} is not in the captured tools/list", message)
    if "outputSchema" not in tool:
        return None
    name = tool.get("name")
    if "structuredContent" not in message.result:
        return failed(message, f"tool {name!r} declares an outputSchema but its result has no structuredContent")
    review = validate_instance(tool["outputSchema"], message.result["structuredContent"], "result.structuredContent")
    if review.blocked is not None:
        return unverified(f"tool {name!r}: {review.blocked}", message)
    if review.issues:
        text = "; ".join(issue.render() for issue in review.issues[:3])
        return failed(message, f"tool {name!r} returned structuredContent that breaks its outputSchema: {text}")
    return passed(message)


@message_check(
    requirements="TOOL-11",
    level=Level.SHOULD,
    subject="results with structuredContent",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/call"},
)
def structured_content_is_mirrored_as_text(message: Message, ctx: Context) -> Finding | None:
    """A result with structuredContent also carries it serialised as JSON in a text block."""
    if _call_of(message, ctx) is None or not isinstance(message.result, dict):
        return None
    if "structuredContent" not in message.result or is_input_required(message):
        return None
    try:
        mirrored = _mirrored(message.result)
    except RecursionError:  # nested deeper than a comparison in Python goes: compared as text, as it always was
        mirrored = _mirrored_as_text(message.result)
    if mirrored:
        return passed(message)
    return failed(message, "structuredContent is not repeated as JSON in any text content block")


def _mirrored(result: dict[str, Any]) -> bool:
    """Whether a text block holds the JSON of ``structuredContent``: :func:`_mirrored_as_text`, without writing either
    value's canonical text (:func:`same_json`), and without reading a block that cannot hold an object when an object
    is wanted."""
    wanted = result["structuredContent"]
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            if type(wanted) is dict and not text.lstrip().startswith("{"):
                continue  # no JSON object: json.loads would give something else, or fail
            try:
                if same_json(json.loads(text), wanted):
                    return True
            except ValueError:
                continue
    return False


def _mirrored_as_text(result: dict[str, Any]) -> bool:
    wanted = canonical(result["structuredContent"])
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                if canonical(json.loads(block["text"])) == wanted:
                    return True
            except (ValueError, RecursionError):
                continue
    return False


def same_json(first: Any, second: Any) -> bool:
    """Whether two values read from JSON have the same canonical text (:func:`~mcp_assay.spec.validator.canonical`):
    the same type at every place (``1``, ``1.0`` and ``true`` differ), objects with the same members in any order,
    floats written alike (``-0.0`` is not ``0.0``; ``NaN`` is ``NaN``)."""
    kind = type(first)
    if kind is not type(second):
        return False
    if kind is dict:
        return len(first) == len(second) and all(
            key in second and same_json(value, second[key]) for key, value in first.items()
        )
    if kind is list:
        return len(first) == len(second) and all(map(same_json, first, second))
    if kind is float:
        return repr(first) == repr(second)
    if kind is str or kind is int or kind is bool or first is None:
        return bool(first == second)
    return canonical(first) == canonical(second)


@message_check(
    requirements="TOOL-19",
    level=Level.MUST,
    subject="tools/call results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/call"},
)
def tool_content_blocks_are_well_formed(message: Message, ctx: Context) -> Finding | None:
    """Content blocks match their type (base64 data decoded, annotations in range, lastModified ISO 8601)."""
    if _call_of(message, ctx) is None or is_input_required(message) or not isinstance(message.result, dict):
        return None
    content = message.result.get("content")
    revision = ctx.revision(message)
    if not isinstance(content, list) or revision is None:
        return None
    issues = [
        issue
        for position, block in enumerate(content)
        for issue in content_block_issues(block, revision, f"result.content[{position}]")
    ]
    if issues:
        return failed(message, "; ".join(issues[:4]) + (f"; … {len(issues) - 4} more" if len(issues) > 4 else ""))
    return passed(message)


@message_check(
    requirements="TOOL-20",
    level=Level.SHOULD,
    subject="tool results with embedded resources",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/call"},
)
def embedded_resources_come_with_the_resources_capability(message: Message, ctx: Context) -> Finding | None:
    """A server whose tools return embedded resources declares the resources capability."""
    if _call_of(message, ctx) is None or not isinstance(message.result, dict):
        return None
    content = message.result.get("content")
    if not isinstance(content, list) or not any(isinstance(b, dict) and b.get("type") == "resource" for b in content):
        return None
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified(
            "the server's capabilities were not captured, so whether it declared resources is unknown", message
        )
    if "resources" in caps:
        return passed(message)
    return failed(message, "a tool returned an embedded resource, but the server does not declare resources")
