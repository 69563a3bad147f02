"""Tools (TOOL-): tool definitions, tool call results, and how errors around tools are reported.

Tool-supplied schemas are judged with :mod:`mcp_assay.spec.toolschema`, which never fetches a
remote ``$ref``. Several rules here answer the active suite's probes (an unknown tool name, a
malformed call, arguments that break the ``inputSchema``); they judge the server's answer
whenever such a request shows up, whoever sent it, and read what the request meant from the
traffic (the latest complete ``tools/list``) before falling back to the probe's tag.

The helpers for content blocks, capability declarations and error classes are shared with the
resources, prompts and completion rules.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from mcp_assay.checks import Context, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.jsonrpc import MISSING, Kind, Message
from mcp_assay.spec.revisions import Revision
from mcp_assay.spec.rules._common import JSONRPC_STANDARD_CODES, MCP_DEFINED_CODES, error_code, http_exchange
from mcp_assay.spec.rules.channels import (
    EXPLAIN,
    FAILING_TOOL_PROBE,
    UNKNOWN_TOOL_PROBE,
    argument_violation,
    channel_of,
    malformed_call,
    tool_call,
    tool_definition,
)
from mcp_assay.spec.rules.pagination import list_changed_between, listing_for, walks
from mcp_assay.spec.toolschema import review_schema, validate_instance
from mcp_assay.spec.validator import FORMAT_CHECKER, SchemaIssue, canonical
from mcp_assay.verdicts import Level, Side

__all__ = [
    "ENVELOPE_CODES",
    "answered_method",
    "capability_declared",
    "content_block_issues",
    "declared_capability_is_served",
    "filtered_issues",
    "is_base64",
    "is_input_required",
    "is_uri",
    "probe_named",
    "protocol_error",
    "schema_positions",
    "x_mcp_header_problems",
]

ENVELOPE_CODES = frozenset({-32020, -32021, -32022})
"""Codes that reject a request's envelope (headers, version, capabilities) before its method runs."""
PROTOCOL_CODES = JSONRPC_STANDARD_CODES | MCP_DEFINED_CODES | {-32002, -32042}
"""Codes that report a protocol-level problem rather than a failure inside a tool or a handler."""
_NEUTRAL_CODES = PROTOCOL_CODES | {-32800, -32001}
"""Also not a handler failure: request cancelled (-32800) and request timeout (-32001), as SDKs use them."""

TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
HEADER_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
HEADER_TYPES = frozenset({"integer", "string", "boolean"})
SAFE_INTEGER = 2**53 - 1
X_MCP_HEADER = "x-mcp-header"

BLOCK_DEFS = {
    "text": "TextContent",
    "image": "ImageContent",
    "audio": "AudioContent",
    "resource_link": "ResourceLink",
    "resource": "EmbeddedResource",
}


# -- shared helpers ------------------------------------------------------------------------------
def answered_method(message: Message, ctx: Context) -> tuple[Message, str] | None:
    """The request a server answer replies to, with its method."""
    request = ctx.log.request_of(message)
    if request is None or request.method is None:
        return None
    return request, request.method


def is_input_required(message: Message) -> bool:
    return message.kind is Kind.RESULT and message.result_type == "input_required"


def probe_named(message: Message, ctx: Context, *names: str) -> bool:
    """The exchange carrying ``message`` is an active-suite probe with one of ``names``."""
    probe = ctx.probe(message)
    return probe is not None and probe.get("name") in names


def protocol_error(code: int | None) -> bool:
    return code in _NEUTRAL_CODES


def is_base64(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def is_uri(value: Any) -> bool:
    return isinstance(value, str) and FORMAT_CHECKER.conforms(value, "uri")


def filtered_issues(
    issues: tuple[SchemaIssue, ...], roots: tuple[str, ...], exclude: tuple[str, ...] = ()
) -> list[SchemaIssue]:
    """Issues at or below one of ``roots`` (regular expressions over issue paths), minus ``exclude``.

    A root ``result.tools`` also keeps "'tools' is a required property" reported on ``result``."""
    kept = []
    for issue in issues:
        if any(re.match(f"(?:{pattern})(?:[.\\[]|$)", issue.path) for pattern in exclude):
            continue
        for root in roots:
            parent, _, leaf = root.rpartition(r"\.")
            if re.match(f"(?:{root})(?:[.\\[]|$)", issue.path) or (
                re.fullmatch(parent, issue.path) and issue.message.startswith(f"'{leaf}' is a required property")
            ):
                kept.append(issue)
                break
    return kept


def shape_finding(
    message: Message, ctx: Context, *, roots: tuple[str, ...], exclude: tuple[str, ...] = (), what: str
) -> Finding:
    """Validate ``message`` against its definition, keeping only issues under ``roots``."""
    validation = ctx.validate(message)
    if validation is None:
        return unverified(f"cannot tell which revision {message.describe()} belongs to, so no schema applies", message)
    if validation.note and "was not seen" in validation.note:
        return unverified(f"{what}: {validation.note}", message)
    issues = filtered_issues(validation.issues, roots, exclude)
    if not issues:
        return passed(message)
    text = "; ".join(issue.render() for issue in issues[:4])
    more = f"; … {len(issues) - 4} more" if len(issues) > 4 else ""
    return failed(message, f"{what} does not match {validation.definition} ({ctx.log.revision(message)}): {text}{more}")


def capability_declared(message: Message, ctx: Context, capability: str, methods: frozenset[str]) -> Finding | None:
    """A successful answer to one of ``methods`` comes from a server that declared ``capability``."""
    if message.kind is not Kind.RESULT:
        return None
    answered = answered_method(message, ctx)
    if answered is None or answered[1] not in methods:
        return None
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified(
            f"the server's capabilities were not captured (no server/discover or initialize answer), so whether it "
            f"declared {capability} is unknown",
            message,
        )
    if capability in caps:
        return passed(message)
    declared = ", ".join(sorted(caps)) or "none"
    return failed(message, f"the server served {answered[1]} without declaring {capability} (it declared: {declared})")


def declared_capability_is_served(message: Message, ctx: Context, capability: str, method: str) -> Finding | None:
    """A server that declared ``capability`` answers a plain ``method`` request with a result."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != method:
        return None
    request = answered[0]
    probe = ctx.probe(request)
    if probe is not None and probe.get("invalid"):
        return None
    if isinstance(request.params, dict) and "cursor" in request.params:
        return None  # a cursor the server may reject is PAGE-05's concern
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified(
            f"the server's capabilities were not captured, so whether it declared {capability} is unknown", message
        )
    if capability not in caps:
        return None
    if message.kind is Kind.RESULT:
        return passed(message)
    code = error_code(message)
    if code in ENVELOPE_CODES:
        return unverified(f"{method} was refused at the envelope (code {code}) before the method ran", message)
    validation = ctx.validate(request)
    if validation is not None and not validation.ok:
        return None  # the request itself was malformed
    return failed(message, f"the server declares {capability} but answered {method} with error code {code}")


def _iso8601(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def content_block_issues(
    block: Any, revision: Revision, path: str, *, base64_data: bool = True, byte_format: bool = True
) -> list[str]:
    """What is wrong with one content block, dispatched on its ``type``."""
    if not isinstance(block, dict):
        return [f"{path}: a content block is an object, not {type(block).__name__}"]
    kind = block.get("type")
    definition = BLOCK_DEFS.get(kind) if isinstance(kind, str) else None
    if definition is None:
        return [f"{path}: unknown content block type {kind!r}"]
    issues = [
        issue.render()
        for issue in revision.validator.validate_def(definition, block, prefix=path)
        if byte_format or "is not a 'byte'" not in issue.message
    ]
    if base64_data:
        if kind in ("image", "audio") and isinstance(block.get("data"), str) and not is_base64(block["data"]):
            issues.append(f"{path}.data: not valid base64")
        resource = block.get("resource")
        if kind == "resource" and isinstance(resource, dict) and "blob" in resource and not is_base64(resource["blob"]):
            issues.append(f"{path}.resource.blob: not valid base64")
    annotations = block.get("annotations")
    if isinstance(annotations, dict) and "lastModified" in annotations and not _iso8601(annotations["lastModified"]):
        issues.append(f"{path}.annotations.lastModified: {annotations['lastModified']!r} is not an ISO 8601 time")
    return list(dict.fromkeys(issues))


# -- tool schemas --------------------------------------------------------------------------------
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


def _tools_of(message: Message, ctx: Context) -> tuple[str, list[Any]] | None:
    if message.kind is not Kind.RESULT or not isinstance(message.result, dict):
        return None
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != "tools/list":
        return None
    tools = message.result.get("tools")
    return ("tools/list", tools) if isinstance(tools, list) else None


def _tool_label(tool: Any, position: int) -> str:
    name = tool.get("name") if isinstance(tool, dict) else None
    return f"tool {name!r}" if isinstance(name, str) else f"tools[{position}]"


@message_check(
    requirements="TOOL-05",
    level=Level.MUST,
    side=Side.SERVER,
    subject="tools/list results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def tool_lists_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """tools/list results hold a tools array of Tool objects (name and inputSchema required)."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != "tools/list" or is_input_required(message):
        return None
    return shape_finding(
        message,
        ctx,
        roots=(r"result\.tools", r"result\.nextCursor"),
        exclude=(r"result\.tools\[\d+\]\.inputSchema", r"result\.tools\[\d+\]\.outputSchema"),
        what="the tools/list result",
    )


def _tool_schemas(message: Message, ctx: Context, member: str, object_only: bool) -> Iterator[Finding]:
    """Judge every tool's ``member`` schema: an object, ``"type": "object"`` when required, what the
    revision's own Tool definition says of it, and valid in its dialect."""
    listed = _tools_of(message, ctx)
    if listed is None:
        return
    validation = ctx.validate(message)
    revision = ctx.log.revision(message)
    for position, tool in enumerate(listed[1]):
        if not isinstance(tool, dict) or member not in tool:
            continue  # a missing inputSchema is TOOL-05's concern
        label = _tool_label(tool, position)
        schema = tool[member]
        if not isinstance(schema, dict):
            yield failed(message, f"{label} has an {member} that is {json.dumps(schema)[:60]}, not an object")
            continue
        if object_only and schema.get("type") != "object":
            shown = json.dumps(schema.get("type")) if "type" in schema else "missing"
            yield failed(message, f'{label} has an {member} whose type is {shown}, not "object"')
            continue
        issues = filtered_issues(validation.issues, (rf"result\.tools\[{position}\]\.{member}",)) if validation else []
        if issues:
            text = "; ".join(issue.render() for issue in issues[:3])
            yield failed(message, f"{label} has an {member} that {revision} does not allow: {text}")
            continue
        review = review_schema(schema)
        if review.problems:
            yield failed(message, f"{label} has an invalid {member}: {'; '.join(review.problems[:3])}")
        elif review.blocked is not None:
            yield unverified(f"{label}: {review.blocked}", message)
        else:
            yield passed(message)


@message_check(
    requirements="TOOL-06",
    level=Level.MUST,
    side=Side.SERVER,
    subject="tool input schemas",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def input_schemas_are_object_schemas(message: Message, ctx: Context) -> Iterator[Finding]:
    """Each inputSchema is an object with "type": "object" that is a valid schema in its dialect."""
    yield from _tool_schemas(message, ctx, "inputSchema", object_only=True)


@message_check(
    requirements="TOOL-07",
    level=Level.MUST,
    side=Side.SERVER,
    subject="tool output schemas",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def output_schemas_are_valid_schemas(message: Message, ctx: Context) -> Iterator[Finding]:
    """Each outputSchema is a valid schema in its dialect (2025: an object schema with "type": "object")."""
    revision = ctx.revision(message)
    object_only = revision is not None and revision.has("output_schema_object_only")
    yield from _tool_schemas(message, ctx, "outputSchema", object_only=object_only)


@log_check(requirements="TOOL-08", level=Level.SHOULD, side=Side.SERVER, subject="tool listings")
def tool_names_are_well_formed_and_unique(ctx: Context) -> Iterator[Finding]:
    """Tool names are 1-128 characters of [A-Za-z0-9_.-] and unique within the server's list."""
    for walk in walks(ctx, "tools/list"):
        answers = [page.answer for page in walk.pages if page.answer is not None and page.result is not None]
        if not answers or not ctx.in_scope(answers[0]):
            continue
        names = [tool.get("name") for tool in walk.items() if isinstance(tool, dict)]
        strings = [name for name in names if isinstance(name, str)]
        bad = [name for name in strings if not TOOL_NAME.fullmatch(name)]
        repeated = [name for name, count in Counter(strings).items() if count > 1]
        if bad:
            shown = ", ".join(repr(name[:60]) for name in bad[:3])
            yield failed(answers[-1], f"tool names outside 1-128 characters of [A-Za-z0-9_.-]: {shown}")
        if repeated:
            yield failed(answers[-1], f"tool names listed more than once: {', '.join(map(repr, repeated[:3]))}")
        if not bad and not repeated and strings:
            yield passed(answers[-1])


def _call_of(message: Message, ctx: Context) -> tuple[Message, dict[str, Any]] | None:
    """For an answer to tools/call: the request and its params (when they are an object)."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != "tools/call":
        return None
    params = answered[0].params
    return answered[0], params if isinstance(params, dict) else {}


@message_check(
    requirements="TOOL-09",
    level=Level.MUST,
    side=Side.SERVER,
    subject="tools/call results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
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


def _tool_definition(request: Message, params: dict[str, Any], ctx: Context) -> tuple[Any, bool] | None:
    """The tool a call names, from the listing (``None`` when no listing was captured), and whether
    the listing is complete."""
    listing = listing_for(request, ctx, "tools/list")
    if listing is None:
        return None
    name = params.get("name")
    return (listing.items.get(name) if isinstance(name, str) else None), listing.complete


@message_check(
    requirements="TOOL-10",
    level=Level.MUST,
    side=Side.SERVER,
    subject="results of tools with an outputSchema",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def structured_content_matches_the_output_schema(message: Message, ctx: Context) -> Finding | None:
    """A tool with an outputSchema returns structuredContent that validates against it (isError results aside)."""
    call = _call_of(message, ctx)
    if call is None or is_input_required(message) or not isinstance(message.result, dict):
        return None
    if message.result.get("isError") is True:
        return None
    request, params = call
    found = _tool_definition(request, params, ctx)
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
    side=Side.SERVER,
    subject="results with structuredContent",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def structured_content_is_mirrored_as_text(message: Message, ctx: Context) -> Finding | None:
    """A result with structuredContent also carries it serialised as JSON in a text block."""
    if _call_of(message, ctx) is None or not isinstance(message.result, dict):
        return None
    if "structuredContent" not in message.result or is_input_required(message):
        return None
    wanted = canonical(message.result["structuredContent"])
    content = message.result.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                if canonical(json.loads(block["text"])) == wanted:
                    return passed(message)
            except (ValueError, RecursionError):
                continue
    return failed(message, "structuredContent is not repeated as JSON in any text content block")


def _envelope_refusal(message: Message) -> Finding | None:
    code = error_code(message)
    if message.kind is Kind.ERROR and code in ENVELOPE_CODES:
        return unverified(f"the request was refused at the envelope (code {code}) before the method ran", message)
    return None


@message_check(
    requirements=("TOOL-12", "BEH-01"),
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="answers to calls of unknown tools",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR, Kind.UNPARSEABLE},
    tags=(EXPLAIN,),
)
def unknown_tools_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A tools/call naming a tool that does not exist gets protocol error -32602 (not a tool result, not -32601).

    Triggered by a tools/call that the active suite tags with the probe name ``unknown-tool``,
    or by a call of a name absent from a complete captured ``tools/list`` that the server does
    not serve normally (an unlisted tool that works is hidden, not unknown). The reason names the
    channel the answer took. The HTTP status of a protocol error is recorded, not judged (200 and
    400 are both seen, ⚠A5); a 5xx is a server failure, not an answer on either channel."""
    call = tool_call(message, ctx)
    if call is None:
        return None
    request, params = call
    name = params.get("name")
    if not isinstance(name, str):
        return None
    probed = probe_named(request, ctx, UNKNOWN_TOOL_PROBE)
    found = tool_definition(request, params, ctx)
    known_missing = found is not None and found[0] is None and found[1]
    if not known_missing and not probed:
        return None
    channel = channel_of(message, ctx)
    what = f"unknown tool {name[:60]!r}: {channel}"
    if channel.kind == "protocol-error" and channel.code in ENVELOPE_CODES:
        return unverified(f"{what}, refused at the envelope before the method ran", message)
    if channel.kind == "success" and not probed and not channel.server_error:
        return None
    if channel.server_error:
        return failed(message, f"{what}: a server error, where the spec describes protocol error -32602")
    if channel.kind == "protocol-error" and channel.code == -32602:
        return passed(message, f"{what}, the channel and code the spec describes")
    if channel.kind == "protocol-error":
        return failed(message, f"{what}; the spec describes -32602 (-32601 would mean the method is unknown)")
    if channel.kind == "tool-error":
        return failed(message, f"{what}; an unknown tool is a protocol error (-32602), not a tool execution error")
    if channel.kind == "success":
        return failed(message, f"{what}: served as if the tool existed")
    return failed(message, f"{what}, where the spec describes protocol error -32602")


@message_check(
    requirements="TOOL-13",
    level=Level.MUST,
    side=Side.SERVER,
    subject="answers to malformed tool calls",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
)
def malformed_tool_calls_get_an_error(message: Message, ctx: Context) -> Finding | None:
    """A tools/call that breaks CallToolRequest (no name, arguments not an object) gets a JSON-RPC error.

    Triggered by any tools/call whose params lack ``name``, carry a non-string ``name``, or carry
    ``arguments`` that is not an object."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != "tools/call":
        return None
    reason = malformed_call(answered[0].params)
    if reason is None:
        return None
    if message.kind is Kind.ERROR:
        return passed(message)
    return failed(message, f"a tools/call whose {reason} was answered with a result instead of an error")


@message_check(
    requirements=("TOOL-14", "BEH-03"),
    level=Level.MUST,
    side=Side.SERVER,
    subject="answers to calls with invalid arguments",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    tags=(EXPLAIN,),
)
def invalid_tool_arguments_never_succeed(message: Message, ctx: Context) -> Finding | None:
    """Arguments that break the tool's inputSchema get -32602 or a result with isError: true.

    Triggered by a tools/call whose ``arguments`` fail the ``inputSchema`` of the captured
    ``tools/list`` (a missing required property, a wrong type, a property a schema with
    ``additionalProperties: false`` does not allow), or by one the active suite tags with the probe
    name ``invalid-tool-arguments``. Both error channels are allowed (⚠A4); the reason says which
    one the server used (which one is preferred is judged by BEH-03's channel check)."""
    call = tool_call(message, ctx)
    if call is None:
        return None
    request, params = call
    if malformed_call(params) is not None:
        return None
    violation = argument_violation(request, params, ctx)
    if violation is None:
        return None
    channel = channel_of(message, ctx)
    what = f"tools/call {str(params.get('name'))[:60]!r} with arguments breaking its inputSchema ({violation})"
    if channel.kind == "protocol-error" and channel.code in ENVELOPE_CODES:
        return unverified(f"{what}: refused at the envelope ({channel}) before the method ran", message)
    if channel.kind == "input-required":
        return None
    if channel.kind == "protocol-error":
        detail = "" if channel.code == -32602 else "; -32602 is the code for invalid params"
        return passed(message, f"{what}: refused as {channel}, a channel ⚠A4 allows{detail}")
    if channel.kind == "tool-error":
        return passed(message, f"{what}: refused as a {channel}, a channel ⚠A4 allows")
    return failed(message, f"{what} were served as a normal success ({channel})")


def _may_be_a_tool_failure(request: Message, params: dict[str, Any], ctx: Context) -> bool:
    """False for calls whose error is about the call, not the tool: deliberately malformed probes, an
    unknown tool, arguments that break the inputSchema."""
    if ctx.deliberately_invalid(request) or malformed_call(params) is not None:
        return False
    found = tool_definition(request, params, ctx)
    if found is not None and found[0] is None and found[1]:
        return False
    return argument_violation(request, params, ctx) is None


@message_check(
    requirements="TOOL-15",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="tool failures",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    tags=(EXPLAIN,),
)
def tool_failures_are_results_with_is_error(message: Message, ctx: Context) -> Finding | None:
    """Failures inside a tool come back as results with isError: true, not as JSON-RPC errors.

    Judges every tools/call answer that reports a failure. Only a call the active suite tags
    ``failing-tool`` (the tool named with ``--failing-tool``, which the user says fails) tells a
    tool failure from a protocol problem for certain: there a JSON-RPC error of any code fails,
    and a plain success leaves the case unverified. Elsewhere ``-32603`` cannot be told apart
    from a fault of the server and is only noted."""
    call = tool_call(message, ctx)
    if call is None:
        return None
    request, params = call
    channel = channel_of(message, ctx)
    name = str(params.get("name"))[:60]
    if probe_named(request, ctx, FAILING_TOOL_PROBE):
        what = f"the failing tool {name!r} (--failing-tool) answered with a {channel}"
        if channel.kind == "tool-error":
            return passed(message, f"{what}, the channel the spec asks for")
        if channel.kind == "protocol-error":
            return failed(message, f"{what}; a tool's own failure belongs in a result with isError: true")
        if channel.kind == "input-required":
            return unverified(f"{what}, so the failure was not reached", message)
        return unverified(f"{what}: it did not fail this time, so there was no failure to observe", message)
    if not _may_be_a_tool_failure(request, params, ctx):
        return None
    if message.kind is Kind.RESULT:
        if channel.kind != "tool-error":
            return None
        return passed(message, f"tool {name!r} reported a failure as a {channel}")
    code = error_code(message)
    if code == -32603:
        return unverified(
            "a tools/call got -32603 (internal error); mcp-assay cannot tell whether a tool failure hid behind it "
            "(name a tool that fails with --failing-tool to find out)",
            message,
        )
    if protocol_error(code):
        return None
    return failed(message, f"a tools/call failure was reported as JSON-RPC error {code}, not as isError: true")


def _annotated_tools(message: Message, ctx: Context) -> Iterator[tuple[str, dict[str, Any], Any]]:
    listed = _tools_of(message, ctx)
    if listed is None:
        return
    for position, tool in enumerate(listed[1]):
        if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
            schema = tool["inputSchema"]
            if any(X_MCP_HEADER in node for _, node in schema_positions(schema)):
                yield _tool_label(tool, position), tool, schema


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
    found = _tool_definition(message, message.params, ctx)
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


@message_check(
    requirements="TOOL-19",
    level=Level.MUST,
    side=Side.SERVER,
    subject="tools/call results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
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
    side=Side.SERVER,
    subject="tool results with embedded resources",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
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


@message_check(
    requirements="TOOL-01",
    level=Level.MUST,
    side=Side.SERVER,
    subject="tools/list and tools/call results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def servers_serving_tools_declare_tools(message: Message, ctx: Context) -> Finding | None:
    """A server that serves tools/list or tools/call declares the tools capability."""
    return capability_declared(message, ctx, "tools", frozenset({"tools/list", "tools/call"}))


@message_check(
    requirements="TOOL-02",
    level=Level.MUST,
    side=Side.SERVER,
    subject="answers to tools/list",
    capability="tools",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
)
def declared_tools_are_listed(message: Message, ctx: Context) -> Finding | None:
    """A server declaring tools answers tools/list with a result.

    Triggered by any well-formed ``tools/list`` without a cursor."""
    return declared_capability_is_served(message, ctx, "tools", "tools/list")


def listing_consistency(ctx: Context, method: str, *, order: bool) -> Iterator[Finding]:
    """Compare consecutive complete listings of one server and credentials taken close together.

    ``order=False`` compares the sets (TOOL-03 and friends), ``order=True`` compares the order of
    identical sets (TOOL-04)."""
    window = float(ctx.settings.get("listing_window_s", 60.0))
    member, ident = {
        "tools/list": ("tools", "name"),
        "prompts/list": ("prompts", "name"),
        "resources/list": ("resources", "uri"),
    }[method]
    latest: dict[tuple[str, str], Any] = {}
    for walk in walks(ctx, method):
        answer = walk.pages[-1].answer
        if not walk.complete or answer is None or not ctx.in_scope(answer):
            continue
        keys: list[str] = [
            item[ident] if isinstance(item, dict) and isinstance(item.get(ident), str) else canonical(item)
            for item in walk.items()
        ]
        slot = (walk.key, walk.credentials)
        earlier = latest.get(slot)
        latest[slot] = (walk, keys)
        if earlier is None:
            continue
        before, before_keys = earlier
        if walk.start - before.end > window or list_changed_between(ctx, method, before.start, walk.end):
            continue
        subject = answer
        if not order:
            gained = sorted(set(keys) - set(before_keys))
            lost = sorted(set(before_keys) - set(keys))
            if gained or lost:
                change = ", ".join([f"+{k}" for k in gained[:3]] + [f"-{k}" for k in lost[:3]])
                yield failed(subject, f"two {method} listings {walk.start - before.end:.1f}s apart differ: {change}")
            else:
                yield passed(subject)
        elif sorted(keys) == sorted(before_keys):
            if keys == before_keys:
                yield passed(subject)
            else:
                yield failed(subject, f"the same {member} came back in a different order from {method}")


@log_check(
    requirements="TOOL-03",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="repeated tool listings",
    features={"per_request_version"},
)
def tool_lists_do_not_depend_on_the_connection(ctx: Context) -> Iterator[Finding]:
    """The set of tools does not change with the connection or earlier requests (same credentials).

    Compares complete ``tools/list`` walks with the same credentials taken within
    ``listing_window_s`` seconds (default 60) of each other with no list-changed notification
    between them; the active suite provokes this by listing on fresh connections and after calls."""
    yield from listing_consistency(ctx, "tools/list", order=False)


@log_check(
    requirements="TOOL-04",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="repeated tool listings",
    features={"per_request_version"},
)
def tool_list_order_is_deterministic(ctx: Context) -> Iterator[Finding]:
    """Identical tools/list requests over an unchanged tool set return the tools in the same order."""
    yield from listing_consistency(ctx, "tools/list", order=True)
