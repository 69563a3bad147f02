"""What the prompts, resources, tools and MRTR rules ask of a server's answer to one request.

Several rules start from the same question (which ``prompts/get``, ``resources/read`` or
``tools/call`` does this answer reply to, and with which params?) and end with the same
judgement: a complete listing matches its schema, a request that must fail gets ``-32602``, a
failure inside a handler is reported as ``-32603``, and an answer that refused the request's
envelope (``-32020..-32022``) is left to the envelope rules. Each of those lives here once.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.spec.checks import Finding, failed, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, params_of
from mcp_assay.spec.rules.shared.server_features import (
    ENVELOPE_CODES,
    answered_method,
    completes,
    protocol_error,
    shape_finding,
)
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.wire.jsonrpc import Kind, Message

__all__ = [
    "answer_to",
    "expects_invalid_params",
    "listing_shape",
    "refused_at_envelope",
    "reports_internal_error",
    "selected_gets_invalid_params",
]


def answer_to(message: Message, ctx: Context, method: str) -> tuple[Message, dict[str, Any]] | None:
    """For an answer to a ``method`` request: the request and its params (``{}`` unless an object)."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != method:
        return None
    return answered[0], params_of(answered[0])


def refused_at_envelope(message: Message) -> bool:
    """An error that rejects the request's envelope before its method ran (the envelope rules judge it)."""
    return message.kind is Kind.ERROR and error_code(message) in ENVELOPE_CODES


def listing_shape(message: Message, ctx: Context, method: str, member: str) -> Finding | None:
    """For a complete answer to the listing ``method``: whether ``result.<member>`` and ``nextCursor`` match."""
    if not completes(message, ctx, method):
        return None
    return shape_finding(message, ctx, roots=(rf"result\.{member}", r"result\.nextCursor"), what=f"the {method} result")


def expects_invalid_params(message: Message, subject: str, *, on_result: str | None = None) -> Finding:
    """Judge an answer that must be a ``-32602`` error: a result fails, and so does any other code.

    ``subject`` says what was asked (``"prompts/get of the unknown prompt 'x'"``); ``on_result``
    replaces the reason ``"<subject> was answered with a result"``."""
    if message.kind is Kind.RESULT:
        return failed(message, f"{subject} was answered with a result" if on_result is None else on_result)
    code = error_code(message)
    if code == ErrorCode.INVALID_PARAMS:
        return passed(message)
    return failed(message, f"{subject} got code {code}, expected -32602")


def selected_gets_invalid_params(
    message: Message, subject: str, *, selected: bool, on_result: str | None = None
) -> Finding | None:
    """Judge an answer to a request that must fail with ``-32602``: one sent as the case that asks it (``selected``),
    or one only the traffic shows wrong (a name absent from a complete listing). A result to the latter is left
    alone (what works was hidden, not unknown); everything else is judged as by :func:`expects_invalid_params`."""
    if message.kind is Kind.RESULT and not selected:
        return None
    return expects_invalid_params(message, subject, on_result=on_result)


def reports_internal_error(message: Message, method: str) -> Finding | None:
    """A failed ``method`` request reported as ``-32603``; protocol-level codes are other rules' concern."""
    code = error_code(message)
    if code == ErrorCode.INTERNAL_ERROR:
        return passed(message)
    if protocol_error(code):
        return None
    return failed(message, f"a failed {method} was reported with code {code}; internal errors are -32603")
