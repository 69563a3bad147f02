"""Protocol errors and tool errors travel on different channels (BEH-01, BEH-03, BEH-09).

A problem with a ``tools/call`` can come back two ways. A *protocol error* is a JSON-RPC error
object (unknown tool, malformed request, a fault of the server); a *tool execution error* is an
ordinary ``CallToolResult`` with ``isError: true``, which the model reads and can act on. Which
one a server uses matters to a caller — an SDK raises on the first and returns the second — and
the specification says where each belongs: an unknown tool is a protocol error (``-32602``),
input validation failures are tool execution errors (TOOL-14 accepts ``-32602`` too, ⚠A4, but the
channel check recommends the tool result), and a tool that fails reports it in its result.

:class:`Channel` names the channel one answer took, with its JSON-RPC code and, over HTTP, the
status, so that every verdict about tool errors says which channel the server used and whether
the specification allows it — passes included: checks tagged :data:`EXPLAIN` have their reason
shown next to a pass in every report format. The TOOL- rules in :mod:`.tool_errors` use the same
helpers, so a finding is reported once, under the check that cites both IDs.

BEH-09 is judged here as the suite's liveness control: after a deliberately malformed probe, the
next well-formed request the suite sends must still be served.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp_assay.cases import tools as tool_cases
from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.pagination import listing_for
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.reads import ANY_BEHAVIOUR
from mcp_assay.spec.rules.shared.selected import sent_as
from mcp_assay.spec.rules.shared.server_features import ENVELOPE_CODES
from mcp_assay.spec.toolschema import validate_instance
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import EndReason, HttpExchange, sent_by_assay
from mcp_assay.wire.traffic import MessageKey, message_key

__all__ = [
    "EXPLAIN",
    "Channel",
    "argument_violation",
    "channel_of",
    "invalid_arguments_answer",
    "tool_call",
    "tool_definition",
]

EXPLAIN = "explain"
"""Verdict tag: the reason of a pass says something worth reading (the report writers show it)."""


# -- the channel of one answer --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Channel:
    """Which way an answer to a request came back."""

    kind: str
    """``protocol-error``, ``tool-error``, ``success``, ``input-required``, ``not-json`` or ``no-answer``."""
    code: int | None = None
    """The JSON-RPC error code (protocol errors only)."""
    status: int | None = None
    """The HTTP status (``None`` over stdio)."""

    @property
    def server_error(self) -> bool:
        """An HTTP 5xx: the server failed instead of answering on either channel."""
        return self.status is not None and self.status >= 500

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status is not None else "stdio"
        if self.kind == "protocol-error":
            return f"protocol error {self.code if self.code is not None else '(no integer code)'} ({where})"
        if self.kind == "tool-error":
            return f"tool result with isError: true ({where})"
        if self.kind == "success":
            return f"plain success, a result without isError ({where})"
        if self.kind == "input-required":
            return f"an input_required result ({where})"
        if self.kind == "not-json":
            return f"{where} with a body that is no JSON-RPC message"
        return f"no answer ({where})" if self.status is not None else "no answer"


def _status(message: Message, ctx: Context) -> int | None:
    exchange = http_exchange(message, ctx)
    return exchange.response.status if exchange is not None and exchange.response is not None else None


def channel_of(message: Message, ctx: Context) -> Channel:
    """The channel of a server answer (a result, an error, or an HTTP body that is no JSON-RPC)."""
    status = _status(message, ctx)
    if message.kind is Kind.ERROR:
        return Channel("protocol-error", error_code(message), status)
    if message.kind is Kind.RESULT:
        result = message.result if isinstance(message.result, dict) else {}
        if message.result_type == "input_required":
            return Channel("input-required", status=status)
        if result.get("isError") is True:
            return Channel("tool-error", status=status)
        return Channel("success", status=status)
    return Channel("not-json", status=status)


# -- which request an answer belongs to, and what it meant -----------------------------------------
def answered_request(message: Message, ctx: Context) -> Message | None:
    """The request a server answer replies to; for an HTTP body that is no JSON-RPC, the exchange's request."""
    request = ctx.log.request_of(message)
    if request is not None:
        return request
    if message.kind is Kind.UNPARSEABLE and message.sender is Side.SERVER:
        exchange = http_exchange(message, ctx)
        if exchange is not None and exchange.request_message is not None:
            candidate = exchange.request_message
            return candidate if candidate.kind is Kind.REQUEST else None
    return None


def tool_call(message: Message, ctx: Context) -> tuple[Message, dict[str, Any]] | None:
    """For an answer to ``tools/call``: the request and its params (``{}`` when they are no object)."""
    request = answered_request(message, ctx)
    if request is None or request.method != "tools/call":
        return None
    params = request.params
    return request, params if isinstance(params, dict) else {}


def tool_definition(request: Message, params: dict[str, Any], ctx: Context) -> tuple[Any, bool] | None:
    """The tool a call names, from the latest captured ``tools/list`` (``None``: no listing was captured),
    and whether that listing was complete (found once per call and tool name for the log as it is: five rules ask
    about each call or its answer)."""
    name = params.get("name")
    key = (message_key(request), name if isinstance(name, str) else None)
    found = ctx.view(_Definitions).found
    if key not in found:
        listing = listing_for(request, ctx, "tools/list")
        found[key] = (
            None if listing is None else (listing.items.get(key[1]) if key[1] is not None else None, listing.complete)
        )
    return found[key]


class _Definitions:
    """What :func:`tool_definition` found per call, for the log as it is (a listing captured since may name the tool,
    so it starts afresh as the log grows: it holds the calls of one exchange at most)."""

    def __init__(self, ctx: Context) -> None:
        self.found: dict[tuple[MessageKey, str | None], tuple[Any, bool] | None] = {}

    def advance(self, ctx: Context) -> None:
        self.found.clear()


class _Violations:
    """What :func:`argument_violation` found per call, for the log as it is (three rules ask about each answer)."""

    def __init__(self, ctx: Context) -> None:
        self.found: dict[MessageKey, str | None] = {}

    def advance(self, ctx: Context) -> None:
        self.found.clear()  # a listing captured since may name the tool: asked again


def argument_violation(request: Message, params: dict[str, Any], ctx: Context) -> str | None:
    """How a call's ``arguments`` break the tool's ``inputSchema`` (``None``: they do not, or it is unknown).

    The schema comes from the captured ``tools/list``; a call the active suite tagged as a bad-arguments
    probe counts even when the schema could not be read. ``params`` are the request's own (an object)."""
    found = ctx.view(_Violations).found
    key = message_key(request)
    if key not in found:
        found[key] = _argument_violation(request, params, ctx)
    return found[key]


def _argument_violation(request: Message, params: dict[str, Any], ctx: Context) -> str | None:
    arguments = params.get("arguments", {})
    found = tool_definition(request, params, ctx)
    tool = found[0] if found is not None else None
    probed = sent_as(request, ctx, tool_cases.MISSING_REQUIRED, tool_cases.EXTRA_PROPERTY)
    if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
        review = validate_instance(tool["inputSchema"], arguments, "arguments")
        if review.issues:
            return review.issues[0].render()
        if review.blocked is not None and probed:
            return "the probe's arguments"
        return None
    return "the probe's arguments" if probed else None


def invalid_arguments_answer(message: Message, ctx: Context) -> tuple[Channel, str] | None:
    """For an answer to a ``tools/call`` whose arguments break the tool's ``inputSchema`` (TOOL-14,
    BEH-03): the channel it took, and the call described for a finding."""
    call = tool_call(message, ctx)
    if call is None:
        return None
    request, params = call
    if malformed_call(params) is not None:
        return None
    violation = argument_violation(request, params, ctx)
    if violation is None:
        return None
    what = f"tools/call {str(params.get('name'))[:60]!r} with arguments breaking its inputSchema ({violation})"
    return channel_of(message, ctx), what


def malformed_call(params: Any) -> str | None:
    """Why ``tools/call`` params break CallToolRequest itself (``None``: they do not)."""
    if not isinstance(params, dict):
        return "params is not an object"
    if "name" not in params:
        return "name is missing"
    if not isinstance(params["name"], str):
        return "name is not a string"
    if "arguments" in params and not isinstance(params["arguments"], dict):
        return "arguments is not an object"
    return None


# -- BEH-03: input validation errors are tool errors -----------------------------------------------
@message_check(
    requirements="BEH-03",
    level=Level.SHOULD,
    subject="answers to calls with invalid arguments",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    tags=(EXPLAIN,),
    methods={"tools/call"},
)
def invalid_arguments_come_back_as_tool_errors(message: Message, ctx: Context) -> Finding | None:
    """Arguments that break a tool's inputSchema come back as a tool result with isError: true.

    Triggered, like TOOL-14, by a ``tools/call`` whose ``arguments`` fail the ``inputSchema`` of
    the captured ``tools/list`` (the active suite sends a property a strict schema does not allow
    and one without a required property, for tools named in ``--tool-args``). The specification
    files input validation failures under tool execution errors, so that the model sees them and
    can correct its arguments. AUTH-AND-BEHAVIOUR §3.2 grades the answers: ``isError: true`` passes;
    ``-32602``, which ⚠A4 lets TOOL-14 accept, is a recommendation here; any other JSON-RPC error is
    neither answer ⚠A4 allows, and is a recommendation too. A plain success is TOOL-14's failure and
    is not judged again here."""
    found = invalid_arguments_answer(message, ctx)
    if found is None:
        return None
    channel, what = found
    if channel.kind == "protocol-error" and channel.code in ENVELOPE_CODES:
        return unverified(f"{what}: refused at the envelope ({channel}) before the tool was looked at", message)
    if channel.kind == "input-required":
        return None
    if channel.kind == "tool-error":
        return passed(message, f"{what}: {channel}, the tool-error channel the spec describes for input validation")
    if channel.kind == "protocol-error" and channel.code == ErrorCode.INVALID_PARAMS:
        return failed(
            message,
            f"{what}: {channel}; the inputs were refused, but input validation failures belong in a tool result "
            "with isError: true, where the model can read them and correct its arguments",
        )
    if channel.kind == "protocol-error":
        return failed(
            message,
            f"{what}: {channel}, neither of the answers ⚠A4 allows (-32602, or a result with isError: true); "
            "input validation failures belong in a tool result with isError: true",
        )
    return unverified(
        f"{what}: {channel}, so no error channel was used at all (a failure of "
        "invalid_tool_arguments_never_succeed, TOOL-14)",
        message,
    )


# -- BEH-09: still serving after hostile input -----------------------------------------------------
def _ordered_probes(ctx: Context) -> list[HttpExchange]:
    probed = [exchange for exchange in ctx.log.http_exchanges() if sent_by_assay(exchange)]
    return sorted(probed, key=lambda exchange: exchange.request.time)


NAMING_METHODS = frozenset(
    {"tools/call", "prompts/get", "resources/read", "completion/complete", "subscriptions/listen"}
)
"""Methods whose answer depends on what they name (an unknown tool may fairly fail): never a liveness control."""


def _is_control(exchange: HttpExchange) -> bool:
    message = exchange.request_message
    return message is not None and message.kind is Kind.REQUEST and message.method not in NAMING_METHODS


def _dead_answer(exchange: HttpExchange) -> str | None:
    """How an answer shows the server not serving (``None``: it served, or refused on purpose).

    A request that simply timed out is left to RPC-05, which reports unanswered requests."""
    response = exchange.response
    if response is not None:
        return f"HTTP {response.status}" if response.status >= 500 else None
    ending = exchange.ending
    if ending is not None and ending.reason is EndReason.SERVER_DISCONNECT:
        return f"a dropped connection ({ending.detail or 'the server closed it'})"
    return None


@log_check(
    requirements="BEH-09",
    level=Level.MUST,
    subject="well-formed requests sent after hostile probes",
    transports={"http"},
    because=(
        "the suite's liveness control follows its malformed HTTP probes; over stdio a server that "
        "stops serving is caught by the suite's own stays-available check"
    ),
    follows=ANY_BEHAVIOUR,
)
def hostile_input_leaves_the_server_serving(ctx: Context) -> Iterator[Finding]:
    """After a deliberately malformed probe, the next well-formed request is still served (no 5xx, no drop).

    Triggered by the active suite over HTTP: each run of probes tagged ``invalid`` (bad JSON,
    mismatched headers, unknown tools, bad arguments ...) is followed by a request the suite built
    correctly, which doubles as a liveness control (a list, discover or the like: never a call that
    names a tool, prompt or resource, whose answer may fairly be an error). A 5xx or a dropped
    connection on that control means the hostile input left the server unable to serve. (A request
    that simply goes unanswered is RPC-05's; a process that dies, or an endpoint that stops accepting
    connections, is judged by ``server_stays_available_through_the_run``.)"""
    hostile: list[str] = []
    for exchange in _ordered_probes(ctx):
        probe = exchange.probe
        name = probe.name if probe is not None else "?"
        if probe is not None and probe.invalid:
            if name not in hostile:
                hostile.append(name)
            continue
        if not hostile or not _is_control(exchange) or exchange.client_disconnected:
            continue
        request = exchange.request_message
        assert request is not None
        after = ", ".join(hostile[-3:]) + (f" and {len(hostile) - 3} more" if len(hostile) > 3 else "")
        problem = _dead_answer(exchange)
        if problem is not None:
            yield failed(request, f"after the {after} probe(s), the well-formed {request.describe()} got {problem}")
        else:
            yield passed(request)
        hostile = []
