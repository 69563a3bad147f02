"""Tools (TOOL-12..15): how errors around tool calls are reported.

The rules here answer the active suite's probes (an unknown tool name, a malformed call,
arguments that break the ``inputSchema``, a tool that fails); they judge the server's answer
whenever such a request shows up, whoever sent it, and read what the request meant from the
traffic (the latest complete ``tools/list``) before falling back to the probe's tag. The channel
an answer took is worked out by :mod:`.channels`.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_assay.cases import tools as cases
from mcp_assay.spec.checks import Finding, failed, grading, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.behaviour.channels import (
    EXPLAIN,
    argument_violation,
    channel_of,
    invalid_arguments_answer,
    malformed_call,
    tool_call,
    tool_definition,
)
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.selected import sent_as
from mcp_assay.spec.rules.shared.server_features import ENVELOPE_CODES, answered_method, protocol_error
from mcp_assay.spec.toolschema import lax_reading
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Severity, Side
from mcp_assay.wire.jsonrpc import Kind, Message


@message_check(
    requirements=("TOOL-12", "BEH-01"),
    level=Level.SHOULD,
    subject="answers to calls of unknown tools",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR, Kind.UNPARSEABLE},
    tags=(EXPLAIN,),
    methods={"tools/call"},
)
def unknown_tools_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A tools/call naming a tool that does not exist gets protocol error -32602 (not a tool result, not -32601).

    Triggered by a tools/call that the active suite sends as the case ``unknown-tool``,
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
    probed = sent_as(request, ctx, cases.UNKNOWN_TOOL)
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
    if channel.kind == "protocol-error" and channel.code == ErrorCode.INVALID_PARAMS:
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
    subject="answers to malformed tool calls",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"tools/call"},
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
    subject="answers to calls with invalid arguments",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    tags=(EXPLAIN,),
    methods={"tools/call"},
)
def invalid_tool_arguments_never_succeed(message: Message, ctx: Context) -> Finding | None:
    """Arguments that break the tool's inputSchema get -32602 or a result with isError: true.

    Triggered by a tools/call whose ``arguments`` fail the ``inputSchema`` of the captured
    ``tools/list`` (a missing required property, a wrong type, a property a schema with
    ``additionalProperties: false`` does not allow), or by one the active suite tags with the probe
    name ``invalid-tool-arguments``. Both error channels are allowed (⚠A4); the reason says which
    one the server used (which one is preferred is judged by BEH-03's channel check)."""
    found = invalid_arguments_answer(message, ctx)
    if found is None:
        return None
    channel, what = found
    if channel.kind == "protocol-error" and channel.code in ENVELOPE_CODES:
        return unverified(f"{what}: refused at the envelope ({channel}) before the method ran", message)
    if channel.kind == "input-required":
        return None
    if channel.kind == "protocol-error" and channel.code == ErrorCode.INVALID_PARAMS:
        return passed(message, f"{what}: refused as {channel}, an answer ⚠A4 allows")
    if channel.kind == "protocol-error":
        return passed(
            message,
            f"{what}: refused as {channel}, not a success, so the inputs were not served; ⚠A4 names -32602 or "
            "a result with isError: true as the answers (BEH-03 judges the channel)",
        )
    if channel.kind == "tool-error":
        return passed(message, f"{what}: refused as a {channel}, an answer ⚠A4 allows")
    return failed(message, f"{what} were served as a normal success ({channel})")


@grading("lax-coercion", Severity.SHOULD)
def served_as_the_value_a_string_spells(ctx: Context, finding: Finding) -> str | None:
    """Why a served call with arguments outside the inputSchema counts as a recommendation, if it does: every
    offending argument is a string spelling the number or boolean the schema asks for (``{"a": "1"}`` for an
    integer), which a lax validator reads as that value. Coercing is validating, loosely: the tool got the value
    the caller meant. Anything else (a string that is no JSON number, ``"yes"`` for a boolean, a missing or
    extra property, a value out of range) stays a failure in full."""
    subject = finding.subject
    call = tool_call(subject, ctx) if isinstance(subject, Message) else None
    if call is None:
        return None
    request, params = call
    found = tool_definition(request, params, ctx)
    tool = found[0] if found is not None else None
    arguments = params.get("arguments", {})
    if not isinstance(tool, dict) or not isinstance(tool.get("inputSchema"), dict) or not isinstance(arguments, dict):
        return None
    read = lax_reading(tool["inputSchema"], arguments)
    if read is None:
        return None
    return (
        f"the arguments break the inputSchema only by strings spelling the value it asks for ({read}); the server "
        "coerced them to that value, which is validating loosely, not skipping validation; a strict refusal is "
        "recommended"
    )


def _may_be_a_tool_failure(request: Message, params: dict[str, Any], ctx: Context) -> bool:
    """False for calls whose error is about the call, not the tool: deliberately malformed probes, an
    unknown tool, arguments that break the inputSchema."""
    if ctx.deliberately_invalid(request) or malformed_call(params) is not None:
        return False
    found = tool_definition(request, params, ctx)
    if found is not None and found[0] is None and found[1]:
        return False
    return argument_violation(request, params, ctx) is None


_TRACE_LINES = re.compile(
    r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+|^\s+at \S+ \(.*:\d+:\d+\)$"
    r"|^\s+at [\w$.<>]+\([\w$.]*(?::\d+)?\)$",
    re.MULTILINE,
)
"""Lines of a stack trace: Python's header and frames, JavaScript's and Java's frames."""


def leaked_trace(error: Any) -> str | None:
    """What of a stack trace a JSON-RPC error's ``message`` or ``data`` carries (its size and last line), if any."""
    if not isinstance(error, dict):
        return None
    for part in ("message", "data"):
        text = error.get(part)
        if isinstance(text, str) and _TRACE_LINES.search(text):
            lines = [line for line in text.strip().splitlines() if line.strip()]
            return f"a stack trace of {len(lines)} lines in error.{part}, ending {lines[-1].strip()[:160]!r}"
    return None


def _internal_error(message: Message, request: Message, name: str, ctx: Context) -> Finding:
    """A ``-32603`` answering a call whose arguments the inputSchema allows: the tool failed inside, and said so on
    the wrong channel, when the error carries its stack trace or ``--explore`` sent the input inside the schema;
    otherwise nothing tells a tool failure from a server fault."""
    trace = leaked_trace(message.error)
    probe = ctx.probe(request)
    explored = probe.facts.explored if probe is not None else None
    drawn = explored is not None and explored.kind == "inside"
    if trace is None and not drawn:
        return unverified(
            "a tools/call got -32603 (internal error); mcp-assay cannot tell whether a tool failure hid behind it "
            "(name a tool that fails with --failing-tool to find out)",
            message,
        )
    why = f"with {trace}, which leaks the server's internals to the client" if trace else "an internal error"
    return failed(
        message,
        f"tool {name!r} called with arguments its inputSchema allows failed inside the tool and answered JSON-RPC "
        f"error -32603 ({why}); a tool's own failure belongs in a result with isError: true",
    )


@message_check(
    requirements="TOOL-15",
    level=Level.SHOULD,
    subject="tool failures",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    tags=(EXPLAIN,),
    methods={"tools/call"},
)
def tool_failures_are_results_with_is_error(message: Message, ctx: Context) -> Finding | None:
    """Failures inside a tool come back as results with isError: true, not as JSON-RPC errors.

    Judges every tools/call answer that reports a failure. A call the active suite tags
    ``failing-tool`` (the tool named with ``--failing-tool``, which the user says fails) tells a
    tool failure from a protocol problem for certain: there a JSON-RPC error of any code fails,
    and a plain success leaves the case unverified. Elsewhere a ``-32603`` to arguments the
    ``inputSchema`` allows fails when its error carries the tool's stack trace, or when
    ``--explore`` drew those arguments inside the schema (the tool failed on an input it accepts);
    otherwise it cannot be told apart from a fault of the server and is only noted."""
    call = tool_call(message, ctx)
    if call is None:
        return None
    request, params = call
    channel = channel_of(message, ctx)
    name = str(params.get("name"))[:60]
    if sent_as(request, ctx, cases.FAILING_TOOL):
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
    if code == ErrorCode.INTERNAL_ERROR:
        return _internal_error(message, request, name, ctx)
    if protocol_error(code):
        return None
    return failed(message, f"a tools/call failure was reported as JSON-RPC error {code}, not as isError: true")
