"""What the cancellation rules share: the cancel notices in the log, and the cancellations in scope.

The stream index (:mod:`._streams`) works out every cancellation, however it was signalled (a
``notifications/cancelled`` or a closed 2026 response stream); the cancellation rules judge those
whose request is in scope, and read the HTTP answer a POSTed notice got.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.stream_facts import CANCELLED, Cancellation
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange

__all__ = ["cancel_notices", "judged_cancellations", "post_answer"]


def cancel_notices(ctx: Context, *, sent_by: Side | None = Side.CLIENT) -> Iterator[Message]:
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=sent_by):
        if message.method == CANCELLED:
            yield message


def judged_cancellations(
    cancellations: list[Cancellation], ctx: Context, how: str | None = None
) -> Iterator[Cancellation]:
    for cancellation in cancellations:
        if how is not None and cancellation.how != how:
            continue
        if ctx.in_scope(cancellation.request):
            yield cancellation


def post_answer(exchange: HttpExchange) -> tuple[int | None, list[Message]]:
    if exchange.response is None:
        return None, []
    answers = [m for m in exchange.response_messages if m.kind.is_response]
    return exchange.response.status, answers
