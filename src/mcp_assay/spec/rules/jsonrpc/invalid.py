"""What JSON-RPC or the revision does not allow (RPC-12..15, 20..23), and how a server answers it.

Several of these rules are what a deliberately malformed probe from the active suite is judged
by (the server's answer to invalid JSON, to an invalid request, to a batch, to an unknown
method), and the same rules judge such answers when a real client happens to provoke them. A
2026 server sends no requests, a client sends no responses, params are objects, and every
method is one the revision defines.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Every, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE, ANY_PAIRING
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message, parser_limit


@log_check(requirements="RPC-12", level=Level.MUST, subject="answers to invalid JSON", follows=ANY_PAIRING)
def invalid_json_gets_a_parse_error(ctx: Context) -> Iterator[Finding]:
    """A body that is not valid JSON is answered with error -32700."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is None or request.kind is not Kind.UNPARSEABLE or exchange.response is None:
            continue
        limit = parser_limit(request)
        if limit is not None:
            yield unverified(
                f"mcp-assay could not read the request body ({limit}); whether it is JSON is unknown", request
            )
            continue
        answers = [m for m in exchange.response_messages if m.kind is Kind.ERROR]
        if not answers:
            status = exchange.response.status
            yield failed(request, f"invalid JSON was answered with HTTP {status} and no JSON-RPC error")
        elif error_code(answers[0]) != ErrorCode.PARSE_ERROR:
            yield failed(answers[0], f"invalid JSON was answered with code {error_code(answers[0])}, expected -32700")
        else:
            yield passed(answers[0])


def _invalid_request_reason(message: Message) -> str | None:
    payload = message.payload
    if message.kind is Kind.INVALID and isinstance(payload, dict):
        return "; ".join(p.detail for p in message.problems if p.code == "shape")
    if message.kind in (Kind.REQUEST, Kind.NOTIFICATION):
        if message.member("jsonrpc") != "2.0":
            return f"jsonrpc is {message.member('jsonrpc')!r}"
        if message.params is not MISSING and not isinstance(message.params, dict | list):
            return "params is neither an object nor an array"
    return None


@log_check(requirements="RPC-13", level=Level.MUST, subject="answers to invalid requests", follows=ANY_PAIRING)
def invalid_requests_get_an_invalid_request_error(ctx: Context) -> Iterator[Finding]:
    """JSON that is not a valid request object is answered with error -32600.

    HTTP: the answer is the one in the same exchange. stdio: the answer is the response the log
    correlates with the invalid request by its readable id (the correlation RPC-05 asks too); an
    invalid line without a readable id, or one nobody answered, is left to the suite's probe rule."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is None or exchange.response is None or request.kind is Kind.BATCH:
            continue
        reason = _invalid_request_reason(request)
        if reason is None:
            continue
        answers = [m for m in exchange.response_messages if m.kind in (Kind.ERROR, Kind.RESULT)]
        if not answers:
            yield failed(
                request, f"an invalid request ({reason}) got HTTP {exchange.response.status} and no JSON-RPC error"
            )
        else:
            yield _judge_answer(answers[0], reason)
    for line in ctx.log.stdio_lines():
        request = line.message
        reason = _invalid_request_reason(request) if request.sender is Side.CLIENT else None
        answers = ctx.log.responses_to(request) if reason is not None else []
        if reason is not None and answers:
            yield _judge_answer(answers[0], reason)


def _judge_answer(answer: Message, reason: str) -> Finding:
    """The first answer to an invalid request: an error -32600, never a result."""
    if answer.kind is Kind.RESULT:
        return failed(answer, f"an invalid request ({reason}) was served with a result")
    if error_code(answer) != ErrorCode.INVALID_REQUEST:
        return failed(answer, f"an invalid request ({reason}) got code {error_code(answer)}, expected -32600")
    return passed(answer)


@message_check(
    requirements="RPC-14", level=Level.MUST_NOT, subject="client messages", sent_by=Side.CLIENT, methods=ANY_ENVELOPE
)
def clients_send_no_batches(message: Message, ctx: Context) -> Finding:
    """Clients send one message per POST body or stdio line, never a JSON array batch."""
    if message.kind is Kind.BATCH:
        return failed(message, f"the client sent a batch of {len(message.payload)} messages")
    return passed(message)


@log_check(
    requirements="RPC-14",
    level=Level.SHOULD_NOT,
    side=Side.SERVER,
    subject="answers to batches",
    because=(
        "the requirement forbids clients to send batches; this check judges how a server reacts to "
        "one, which the catalogue grades as a warning"
    ),
    follows=ANY_PAIRING,
)
def servers_do_not_process_batches(ctx: Context) -> Iterator[Finding]:
    """A batch is rejected (-32600 and/or HTTP 400) rather than processed as a batch.

    The specification leaves the server's reaction open, so processing a batch is a SHOULD-level finding."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is None or request.kind is not Kind.BATCH or exchange.response is None:
            continue
        answers = exchange.response_messages
        if any(m.kind is Kind.BATCH for m in answers) or any(m.kind is Kind.RESULT for m in answers):
            yield failed(request, "the server processed a JSON-RPC batch instead of rejecting it")
        else:
            yield passed(request, f"batch refused with HTTP {exchange.response.status}")


@log_check(requirements="RPC-15", level=Level.MUST, subject="requests for undefined methods", follows=ANY_PAIRING)
def unknown_methods_get_method_not_found(ctx: Context) -> Iterator[Finding]:
    """A request for a method the revision does not define is answered with -32601."""
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        revision = ctx.revision(request)
        if revision is None or request.method is None:
            continue
        if request.method in revision.validator.request_defs:
            continue
        answers = ctx.log.responses_to(request)
        if not answers:
            continue
        answer = answers[0]
        if answer.kind is Kind.RESULT:
            yield failed(answer, f"the undefined method {request.method} was served with a result")
        elif error_code(answer) != ErrorCode.METHOD_NOT_FOUND:
            yield failed(
                answer, f"the undefined method {request.method} got code {error_code(answer)}, expected -32601"
            )
        else:
            yield passed(answer)


@message_check(
    requirements="RPC-20",
    level=Level.MUST_NOT,
    subject="server messages",
    features={"!server_requests"},
    sent_by=Side.SERVER,
    methods=ANY_ENVELOPE,
)
def servers_send_no_requests(message: Message, ctx: Context) -> Finding:
    """The server never sends a JSON-RPC request in this revision."""
    if message.kind is Kind.REQUEST:
        return failed(message, f"the server sent a request ({message.describe()})")
    return passed(message)


@message_check(
    requirements="RPC-21",
    level=Level.MUST_NOT,
    subject="client messages",
    features={"!server_requests"},
    sent_by=Side.CLIENT,
    methods=ANY_ENVELOPE,
)
def clients_send_no_responses(message: Message, ctx: Context) -> Finding:
    """The client never sends a JSON-RPC response in this revision."""
    if message.kind.is_response:
        return failed(message, f"the client sent a response ({message.describe()})")
    return passed(message)


@message_check(
    requirements="RPC-22",
    level=Level.MUST,
    subject="requests and notifications",
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
    methods=ANY_ENVELOPE,
)
def params_are_objects(message: Message, ctx: Context) -> Finding:
    """params, when present, is a JSON object."""
    if message.params is MISSING or isinstance(message.params, dict):
        return passed(message)
    return failed(message, f"{message.describe()} has params of type {type(message.params).__name__}")


@message_check(
    requirements="RPC-23",
    level=Level.SHOULD,
    subject="requests and notifications",
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
    methods=Every("it judges the method itself, so every method is its business"),
)
def methods_are_defined_by_the_revision(message: Message, ctx: Context) -> Finding:
    """Methods are ones the revision in use defines for that direction."""
    revision = ctx.revision(message)
    if revision is None:
        return unverified("the revision of this traffic is unknown", message)
    validation = ctx.validate(message)
    if validation is not None and validation.note:
        return failed(message, validation.note)
    return passed(message)
