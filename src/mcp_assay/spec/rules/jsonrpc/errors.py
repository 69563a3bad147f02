"""JSON-RPC errors (RPC-08, 09, 16..19): error responses, and which error codes a side may use.

An error response repeats the request's id (never a null one when the request was readable)
and carries a short message; the reserved codes mean only what JSON-RPC and MCP define, retired
codes are not sent, and application codes stay outside the reserved range.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, Passes, failed, log_check, message_check, passed, passed_each
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE, ANY_PAIRING
from mcp_assay.vocabulary.protocol import (
    JSONRPC_RESERVED,
    JSONRPC_STANDARD_CODES,
    LEGACY_SERVER_ERRORS,
    MCP_DEFINED_CODES,
    MCP_RESERVED,
    PRE_RELEASE_CODES,
    SERVER_ERRORS,
    ErrorCode,
)
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message


@message_check(
    requirements="RPC-08", level=Level.SHOULD, subject="error responses", kinds={Kind.ERROR}, methods=ANY_ENVELOPE
)
def error_messages_are_short_sentences(message: Message, ctx: Context) -> Finding | None:
    """Error messages are one short sentence (no stack traces)."""
    text = message.error.get("message") if isinstance(message.error, dict) else None
    if not isinstance(text, str):
        return None
    if "\n" in text.strip() or len(text) > 200 or "Traceback (most recent call last)" in text:
        return failed(message, f"error message is {len(text)} characters over {text.count(chr(10)) + 1} lines")
    return passed(message)


def _id_exempt(message: Message, ctx: Context) -> bool:
    """Rejections the transport lets carry an id-less body: 403 (Origin) and refused notification POSTs."""
    exchange = http_exchange(message, ctx)
    if exchange is None or exchange.response is None:
        return False
    request = exchange.request_message
    return exchange.response.status == 403 or (request is not None and request.kind is Kind.NOTIFICATION)


def _readable_request(message: Message, ctx: Context) -> Message | None:
    exchange = http_exchange(message, ctx)
    request = exchange.request_message if exchange is not None else ctx.log.request_of(message)
    if request is not None and request.kind is Kind.REQUEST and request.id_key is not None:
        return request
    return None


@log_check(requirements="RPC-09", level=Level.MUST, subject="error responses", follows=ANY_PAIRING)
def error_responses_repeat_the_request_id(ctx: Context) -> Iterator[Finding]:
    """An error repeats the request id; it leaves the id out only when the request could not be read.

    An id of ``null`` is judged separately (ambiguity A1)."""
    for message in ctx.messages(kinds={Kind.ERROR}, sent_by=Side.SERVER):
        if _id_exempt(message, ctx) or message.id is None:
            continue
        request = _readable_request(message, ctx)
        if message.id is MISSING:
            if request is not None:
                yield failed(message, f"the error omits the id although the request id {request.id!r} was readable")
            else:
                yield passed(message)
        elif ctx.log.request_of(message) is not None:
            yield passed(message)


@log_check(requirements="RPC-09", level=Level.SHOULD, subject="error responses", follows=ANY_PAIRING)
def error_responses_never_carry_a_null_id(ctx: Context) -> Iterator[Finding | Passes]:
    """Errors carry the request id or no id at all, not JSON-RPC 2.0's "id": null (A1).

    The MCP schema types an id as a string or an integer; JSON-RPC 2.0 answers an unreadable request
    with null, so a null id is a SHOULD-level finding rather than a failure."""
    passes: list[Message] = []
    for message in ctx.messages(kinds={Kind.ERROR}, sent_by=Side.SERVER):
        if _id_exempt(message, ctx):
            continue
        if message.id is None:
            request = _readable_request(message, ctx)
            readable = f"; the request id {request.id!r} was readable" if request is not None else ""
            yield failed(message, f'the error carries "id": null{readable}')
        else:
            passes.append(message)
    yield passed_each(passes)


def _errors(ctx: Context) -> Iterator[tuple[Message, int]]:
    for message in ctx.messages(kinds={Kind.ERROR}):
        code = error_code(message)
        if code is not None:
            yield message, code


@log_check(
    requirements="RPC-16",
    level=Level.MUST_NOT,
    subject="error codes",
    features={"header_mismatch_error"},
    follows=ANY_PAIRING,
)
def reserved_error_codes_are_used_only_as_defined(ctx: Context) -> Iterator[Finding]:
    """Codes -32020..-32099 appear only as -32020, -32021, -32022 (and -32020 only for HTTP header checks)."""
    for message, code in _errors(ctx):
        if code in MCP_RESERVED:
            if code not in MCP_DEFINED_CODES:
                yield failed(message, f"error code {code} lies in the MCP-reserved range but is not defined")
            elif code == ErrorCode.HEADER_MISMATCH and message.transport != "http":
                yield failed(message, "-32020 (header mismatch) was used outside Streamable HTTP")
            else:
                yield passed(message)


@log_check(
    requirements="RPC-17",
    level=Level.MUST_NOT,
    subject="error codes",
    features={"per_request_version"},
    follows=ANY_PAIRING,
)
def retired_error_codes_are_not_emitted(ctx: Context) -> Iterator[Finding]:
    """2026 implementations never emit -32002 (resource not found) or -32042 (URL elicitation)."""
    for message, code in _errors(ctx):
        if code in (ErrorCode.RESOURCE_NOT_FOUND, ErrorCode.URL_ELICITATION_REQUIRED):
            replacement = "-32602" if code == ErrorCode.RESOURCE_NOT_FOUND else "an input_required result"
            yield failed(message, f"error code {code} is retired in this revision; use {replacement}")
        else:
            yield passed(message)


@log_check(
    requirements="RPC-18",
    level=Level.SHOULD_NOT,
    subject="error codes",
    features={"per_request_version"},
    follows=ANY_PAIRING,
)
def legacy_error_range_is_avoided(ctx: Context) -> Iterator[Finding]:
    """New implementations avoid codes -32000..-32019 (the draft codes -32001/-32003/-32004 were renumbered)."""
    for message, code in _errors(ctx):
        if code in LEGACY_SERVER_ERRORS:
            hint = (
                f"; it looks like a pre-release code, use {PRE_RELEASE_CODES[code]}"
                if code in PRE_RELEASE_CODES
                else ""
            )
            yield failed(message, f"error code {code} is in the legacy range -32000..-32019{hint}")
        else:
            yield passed(message)


@log_check(
    requirements="RPC-19",
    level=Level.SHOULD,
    subject="error codes",
    features={"per_request_version"},
    follows=ANY_PAIRING,
)
def application_error_codes_stay_outside_the_reserved_range(ctx: Context) -> Iterator[Finding]:
    """Application-defined codes live outside -32768..-32000."""
    for message, code in _errors(ctx):
        reserved = code in JSONRPC_RESERVED
        known = code in JSONRPC_STANDARD_CODES or code in MCP_DEFINED_CODES or code in SERVER_ERRORS
        if reserved and not known:
            yield failed(message, f"error code {code} is inside the JSON-RPC reserved range but not a defined code")
        else:
            yield passed(message)
