"""Completion (COMP-): completion/complete requests, results, and the capability that gates them."""

from __future__ import annotations

from mcp_assay.cases import completion as cases
from mcp_assay.spec.checks import Finding, failed, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.pagination import listing_for
from mcp_assay.spec.rules.shared.answers import selected_gets_invalid_params
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.selected import sent_as
from mcp_assay.spec.rules.shared.server_features import (
    ENVELOPE_CODES,
    answered_method,
    capability_declared,
    is_input_required,
    protocol_error,
    shape_finding,
)
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message

METHOD = "completion/complete"


def _completion_request(message: Message, ctx: Context) -> Message | None:
    answered = answered_method(message, ctx)
    return answered[0] if answered is not None and answered[1] == METHOD else None


@message_check(
    requirements="COMP-01",
    level=Level.MUST,
    subject="completion results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={METHOD},
)
def servers_serving_completions_declare_completions(message: Message, ctx: Context) -> Finding | None:
    """A server that answers completion/complete with a result declares the completions capability."""
    return capability_declared(message, ctx, "completions", frozenset({METHOD}))


@message_check(
    requirements="COMP-02",
    level=Level.SHOULD,
    subject="completion requests to servers without completions",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={METHOD},
)
def completion_without_the_capability_is_method_not_found(message: Message, ctx: Context) -> Finding | None:
    """Without the completions capability, completion/complete gets -32601 (HTTP 404 in 2026).

    Triggered by any ``completion/complete`` sent to a server whose captured capabilities lack
    ``completions``."""
    request = _completion_request(message, ctx)
    if request is None:
        return None
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified(
            "the server's capabilities were not captured, so whether completions is declared is unknown", message
        )
    if "completions" in caps:
        return None
    if message.kind is Kind.RESULT:
        return failed(message, "completion/complete was served although the server does not declare completions")
    code = error_code(message)
    if code in ENVELOPE_CODES:
        return None
    if code != ErrorCode.METHOD_NOT_FOUND:
        return failed(message, f"completion/complete without the completions capability got code {code}, not -32601")
    exchange = http_exchange(message, ctx)
    revision = ctx.revision(message)
    if exchange is not None and exchange.response is not None and revision is not None:
        if revision.has("per_request_version") and exchange.response.status != 404:
            return failed(message, f"-32601 for completion/complete came with HTTP {exchange.response.status}, not 404")
    return passed(message)


@message_check(
    requirements="COMP-03",
    level=Level.MUST,
    subject="completion requests",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    methods={METHOD},
)
def completion_requests_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """completion/complete params have a ref/prompt or ref/resource ref, a string argument and string context."""
    if message.method != METHOD:
        return None
    return shape_finding(
        message, ctx, roots=(r"params\.ref", r"params\.argument", r"params\.context"), what="the completion request"
    )


@message_check(
    requirements="COMP-04",
    level=Level.MUST,
    subject="completion results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={METHOD},
)
def completion_results_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """completion.values is an array of at most 100 strings, with an integer total and a boolean hasMore."""
    if _completion_request(message, ctx) is None or is_input_required(message):
        return None
    return shape_finding(message, ctx, roots=(r"result\.completion",), what="the completion result")


@message_check(
    requirements="COMP-05",
    level=Level.SHOULD,
    subject="completion results with a total",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={METHOD},
)
def completion_totals_cover_the_values(message: Message, ctx: Context) -> Finding | None:
    """A completion total, when given, is at least the number of values returned."""
    if _completion_request(message, ctx) is None or not isinstance(message.result, dict):
        return None
    completion = message.result.get("completion")
    if not isinstance(completion, dict):
        return None
    total, values = completion.get("total"), completion.get("values")
    if not isinstance(total, int) or isinstance(total, bool) or not isinstance(values, list):
        return None
    if total >= len(values):
        return passed(message)
    return failed(message, f"completion total is {total} but {len(values)} values were returned")


@message_check(
    requirements="COMP-06",
    level=Level.SHOULD,
    subject="completion errors",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={METHOD},
)
def completion_errors_use_fitting_codes(message: Message, ctx: Context) -> Finding | None:
    """Unknown prompts in a completion ref get -32602; internal failures get -32603.

    Triggered by a ``completion/complete`` tagged ``completion-unknown-prompt`` or whose ``ref``
    names a prompt absent from a complete captured ``prompts/list`` (then only error answers are
    judged), and by any error answer to ``completion/complete``."""
    request = _completion_request(message, ctx)
    if request is None:
        return None
    code = error_code(message)
    if message.kind is Kind.ERROR and code in ENVELOPE_CODES:
        return None
    params = request.params if isinstance(request.params, dict) else {}
    ref = params.get("ref")
    probed = sent_as(request, ctx, cases.COMPLETION_UNKNOWN_PROMPT)
    unknown = probed
    if isinstance(ref, dict) and ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
        listing = listing_for(request, ctx, "prompts/list")
        unknown = unknown or (listing is not None and listing.complete and ref["name"] not in listing.items)
    if unknown:
        return selected_gets_invalid_params(message, "completion for an unknown prompt", selected=probed)
    if message.kind is Kind.RESULT:
        return None
    if code in (ErrorCode.INVALID_PARAMS, ErrorCode.INTERNAL_ERROR):
        return passed(message)
    if protocol_error(code):
        return None
    return failed(message, f"a failed completion was reported with code {code}; internal errors are -32603")
