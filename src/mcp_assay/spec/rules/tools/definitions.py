"""Tools (TOOL-01..08): the tools capability, and the tool definitions ``tools/list`` returns.

Tool-supplied schemas are judged with :mod:`mcp_assay.spec.toolschema`, which never fetches a
remote ``$ref``. A server's tool list does not depend on the connection, and comes back in the
same order while nothing changed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.pagination import walks
from mcp_assay.spec.rules.shared.server_features import (
    capability_declared,
    completes,
    declared_capability_is_served,
    filtered_issues,
    listed_tools,
    listing_consistency,
    shape_finding,
    tool_label,
)
from mcp_assay.spec.toolschema import review_schema
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message

TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@message_check(
    requirements="TOOL-05",
    level=Level.MUST,
    subject="tools/list results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/list"},
)
def tool_lists_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """tools/list results hold a tools array of Tool objects (name and inputSchema required)."""
    if not completes(message, ctx, "tools/list"):
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
    listed = listed_tools(message, ctx)
    if listed is None:
        return
    validation = ctx.validate(message)
    revision = ctx.log.revision(message)
    issued = validation.issues if validation else ()
    for position, tool in enumerate(listed[1]):
        if not isinstance(tool, dict) or member not in tool:
            continue  # a missing inputSchema is TOOL-05's concern
        schema = tool[member]
        if not isinstance(schema, dict):
            label = tool_label(tool, position)
            yield failed(message, f"{label} has an {member} that is {json.dumps(schema)[:60]}, not an object")
            continue
        if object_only and schema.get("type") != "object":
            shown = json.dumps(schema.get("type")) if "type" in schema else "missing"
            yield failed(message, f'{tool_label(tool, position)} has an {member} whose type is {shown}, not "object"')
            continue
        issues = filtered_issues(issued, (rf"result\.tools\[{position}\]\.{member}",)) if issued else []
        if issues:
            text = "; ".join(issue.render() for issue in issues[:3])
            yield failed(
                message, f"{tool_label(tool, position)} has an {member} that {revision} does not allow: {text}"
            )
            continue
        review = review_schema(schema)
        if review.problems:
            problems = "; ".join(review.problems[:3])
            yield failed(message, f"{tool_label(tool, position)} has an invalid {member}: {problems}")
        elif review.blocked is not None:
            yield unverified(f"{tool_label(tool, position)}: {review.blocked}", message)
        else:
            yield passed(message)  # the label is made only for what a finding names


@message_check(
    requirements="TOOL-06",
    level=Level.MUST,
    subject="tool input schemas",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/list"},
)
def input_schemas_are_object_schemas(message: Message, ctx: Context) -> Iterator[Finding]:
    """Each inputSchema is an object with "type": "object" that is a valid schema in its dialect."""
    return _tool_schemas(message, ctx, "inputSchema", object_only=True)


@message_check(
    requirements="TOOL-07",
    level=Level.MUST,
    subject="tool output schemas",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/list"},
)
def output_schemas_are_valid_schemas(message: Message, ctx: Context) -> Iterator[Finding]:
    """Each outputSchema is a valid schema in its dialect (2025: an object schema with "type": "object")."""
    revision = ctx.revision(message)
    object_only = revision is not None and revision.has("output_schema_object_only")
    return _tool_schemas(message, ctx, "outputSchema", object_only=object_only)


@log_check(requirements="TOOL-08", level=Level.SHOULD, subject="tool listings", follows={"tools/list"})
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


@message_check(
    requirements="TOOL-01",
    level=Level.MUST,
    subject="tools/list and tools/call results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"tools/list", "tools/call"},
)
def servers_serving_tools_declare_tools(message: Message, ctx: Context) -> Finding | None:
    """A server that serves tools/list or tools/call declares the tools capability."""
    return capability_declared(message, ctx, "tools", frozenset({"tools/list", "tools/call"}))


@message_check(
    requirements="TOOL-02",
    level=Level.MUST,
    subject="answers to tools/list",
    capability="tools",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"tools/list"},
)
def declared_tools_are_listed(message: Message, ctx: Context) -> Finding | None:
    """A server declaring tools answers tools/list with a result.

    Triggered by any well-formed ``tools/list`` without a cursor."""
    return declared_capability_is_served(message, ctx, "tools", "tools/list")


@log_check(
    requirements="TOOL-03",
    level=Level.MUST_NOT,
    subject="repeated tool listings",
    features={"per_request_version"},
    follows={"tools/list"},
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
    subject="repeated tool listings",
    features={"per_request_version"},
    follows={"tools/list"},
)
def tool_list_order_is_deterministic(ctx: Context) -> Iterator[Finding]:
    """Identical tools/list requests over an unchanged tool set return the tools in the same order."""
    yield from listing_consistency(ctx, "tools/list", order=True)
