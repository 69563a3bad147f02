"""Evidence: what a reader needs to find, understand and reproduce one finding.

A finding names a message or an exchange; the report needs text. :func:`make_evidence` turns the
subject into a redacted one-line summary, an excerpt of the message, the exchange id to look up
in the recording and, for what mcp-assay sent itself, the exact request again (a curl command
over HTTP, the JSON line over stdio), credentials redacted.
"""

from __future__ import annotations

import shlex

from mcp_assay.jsonrpc import Kind, Message
from mcp_assay.redaction import Redactor
from mcp_assay.spec.context import Context
from mcp_assay.verdicts import Evidence, Side
from mcp_assay.wire import Exchange, HttpExchange, StdioLine, answered_by_assay, body_text, compact_json, sent_by_assay

__all__ = ["curl_command", "make_evidence"]

_NOT_REPLAYED = ("host", "content-length", "connection", "accept-encoding", "user-agent")


def _http_label(exchange: HttpExchange) -> str:
    request = exchange.request
    head = f"{request.method} {request.path}"
    if exchange.response is not None:
        content_type = exchange.response.content_type or "no content type"
        head += f" → {exchange.response.status} {content_type}"
    elif exchange.ending is not None:
        head += f" → {exchange.ending.reason.value}"
    return head


def curl_command(exchange: HttpExchange, redactor: Redactor) -> str:
    """The exchange's request as a curl command line, credentials redacted."""
    request = exchange.request
    parts = ["curl", "-sS", "-i", "-X", request.method, redactor.url(request.url)]
    for name, value in request.headers:
        if name.lower() in _NOT_REPLAYED:
            continue
        parts += ["-H", f"{name}: {redactor.header(name, value)}"]
    if request.body:
        parts += ["--data-binary", redactor.text(body_text(request.body, limit=100_000))]
    return " ".join(shlex.quote(part) for part in parts)


def _reproduction(exchange: Exchange | None, message: Message | None, ctx: Context, redactor: Redactor) -> str:
    """The request mcp-assay sent, again: only for exchanges it sent itself (a peer's traffic is not replayed)."""
    if isinstance(exchange, HttpExchange):
        return curl_command(exchange, redactor) if sent_by_assay(exchange) else ""
    if not isinstance(exchange, StdioLine):
        return ""
    source = exchange
    if exchange.sender is not Side.CLIENT and message is not None:
        # an answer is reproduced by the request line it answers
        request = ctx.log.request_of(message)
        line = ctx.log.get(request.exchange) if request is not None else None
        source = line if isinstance(line, StdioLine) else exchange
    if not sent_by_assay(source):
        return ""
    return redactor.text(body_text(source.raw, limit=100_000)).rstrip("\n")


def make_evidence(subject: Message | Exchange | None, detail: str, ctx: Context, redactor: Redactor) -> Evidence:
    """The evidence behind one finding about ``subject``."""
    message = subject if isinstance(subject, Message) else None
    exchange = ctx.log.get(subject.exchange) if isinstance(subject, Message) else subject
    revision = ctx.log.revision(message) if message is not None else None
    summary_parts = []
    if isinstance(exchange, HttpExchange):
        revision = revision or ctx.log.exchange_revision(exchange.id)
        summary_parts.append(_http_label(exchange))
    elif isinstance(exchange, StdioLine):
        summary_parts.append("stdio client → server" if exchange.sender is Side.CLIENT else "stdio server → client")
    elif exchange is not None:
        summary_parts.append(f"{type(exchange).__name__} {exchange.id}")
    if message is not None:
        summary_parts.append(message.describe())
        excerpt = (
            compact_json(message.payload)
            if message.payload is not None and message.kind is not Kind.UNPARSEABLE
            else body_text(message.raw, 600)
        )
    elif isinstance(exchange, HttpExchange) and exchange.response is not None:
        excerpt = body_text(exchange.response.body, 600)
    else:
        excerpt = ""
    if answered_by_assay(exchange):
        summary_parts.append("answer injected by mcp-assay")
    return Evidence(
        summary=redactor.text(" · ".join(summary_parts)) or "the traffic as a whole",
        detail=redactor.text(detail),
        exchange=exchange.id if exchange is not None else None,
        message=message.index if message is not None else None,
        excerpt=redactor.text(excerpt),
        reproduction=_reproduction(exchange, message, ctx, redactor),
        time=message.time if message is not None else getattr(exchange, "time", None),
        revision=revision,
    )
