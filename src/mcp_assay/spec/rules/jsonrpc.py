"""JSON-RPC basics (RPC-): message shape, ids, one answer per request, error codes.

These rules hold in every revision and on every transport; several of them are what a
deliberately malformed probe from the active suite is judged by (the server's answer to invalid
JSON, to a batch, to an unknown method), and the same rules judge such answers when a real
client happens to provoke them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from mcp_assay.checks import Context, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.jsonrpc import MISSING, Kind, Message
from mcp_assay.spec.rules._common import JSONRPC_STANDARD_CODES, MCP_DEFINED_CODES, error_code, http_exchange, is_int
from mcp_assay.verdicts import Level, Side
from mcp_assay.wire import EndReason

JSON_KINDS = {Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR}


def _who(message: Message) -> str:
    return "the server" if message.sender is Side.SERVER else "the client"


@message_check(requirements="RPC-01", level=Level.MUST, side=Side.BOTH, subject="messages")
def messages_are_jsonrpc_2_0_objects(message: Message, ctx: Context) -> Finding | None:
    """Every message is a JSON object with "jsonrpc": "2.0"."""
    if message.kind is Kind.BATCH:
        return None  # judged as a batch (RPC-14)
    if message.kind is Kind.UNPARSEABLE:
        if message.transport == "stdio":
            return None  # a non-JSON line on stdio is named by STDIO-01/02/03, not judged twice
        problems = "; ".join(p.detail for p in message.problems if p.code in ("syntax", "bom"))
        return failed(message, f"{_who(message)} sent something that is not JSON: {problems}")
    if message.kind is Kind.INVALID:
        shape = "; ".join(p.detail for p in message.problems if p.code == "shape")
        return failed(message, f"{_who(message)} sent JSON that is not a JSON-RPC message: {shape}")
    if message.member("jsonrpc") != "2.0":
        return failed(message, f'{message.describe()} has jsonrpc {message.member("jsonrpc")!r}, expected "2.0"')
    return passed(message)


@message_check(requirements="RPC-02", level=Level.MUST, side=Side.BOTH, subject="messages")
def messages_are_utf8(message: Message, ctx: Context) -> Finding:
    """Messages are UTF-8 encoded."""
    bad = [p.detail for p in message.problems if p.code == "encoding"]
    if bad:
        return failed(message, f"{_who(message)} sent a message that is {bad[0]}")
    return passed(message)


@message_check(requirements="RPC-03", level=Level.MUST, side=Side.BOTH, subject="requests", kinds={Kind.REQUEST})
def request_ids_are_strings_or_integers(message: Message, ctx: Context) -> Finding:
    """Request ids are strings or integers (never null, boolean, fractional, object or array)."""
    ident = message.id
    if isinstance(ident, str) or is_int(ident):
        return passed(message)
    text = "null" if ident is None else repr(ident)
    return failed(message, f"{message.describe()} uses id {text} ({type(ident).__name__})")


@log_check(requirements="RPC-04", level=Level.MUST_NOT, side=Side.BOTH, subject="requests")
def request_ids_are_not_reused(ctx: Context) -> Iterator[Finding]:
    """A sender does not reuse an id while it is still in flight (2025: within the session at all)."""
    seen: dict[tuple[str, Side, tuple[str, object]], list[Message]] = defaultdict(list)
    for message in ctx.messages(kinds={Kind.REQUEST}):
        key = message.id_key
        if key is None:
            continue
        exchange = ctx.log.get(message.exchange)
        scope = ctx.log.session(message) or (exchange.connection if exchange is not None else "") or "http"
        earlier = seen[(scope, message.sender, key)]
        revision = ctx.revision(message)
        handshake = revision is not None and revision.has("handshake")
        clash = None
        for previous in earlier:
            answers = ctx.log.responses_to(previous)
            still_open = not answers or min(answer.time for answer in answers) > message.time
            if handshake or still_open:
                clash = previous
                break
        if clash is not None:
            why = "earlier in the session" if handshake else "while that request was still in flight"
            yield failed(message, f"{message.describe()} reuses the id of a request sent {why}")
        else:
            yield passed(message)
        earlier.append(message)


def _cancelled(request: Message, ctx: Context) -> bool:
    exchange = http_exchange(request, ctx)
    if exchange is not None and exchange.client_disconnected:
        return True
    for message in ctx.log.messages():
        if (
            message.method == "notifications/cancelled"
            and message.sender is request.sender
            and isinstance(message.params, dict)
            and message.params.get("requestId", MISSING) == request.id
            and type(message.params.get("requestId")) is type(request.id)
        ):
            return True
    return False


def _answers_an_unreadable_request(message: Message, ctx: Context) -> bool:
    """An error in the same HTTP exchange as a malformed body (no method, a batch ...) answers that body."""
    exchange = http_exchange(message, ctx)
    request = exchange.request_message if exchange is not None else None
    return request is not None and request.kind in (Kind.INVALID, Kind.BATCH, Kind.UNPARSEABLE)


@log_check(requirements="RPC-05", level=Level.MUST, side=Side.SERVER, subject="requests and responses")
def each_request_gets_exactly_one_response(ctx: Context) -> Iterator[Finding]:
    """Each request gets exactly one response with the same id; nothing answers an id never sent."""
    for message in ctx.messages(kinds={Kind.RESULT, Kind.ERROR}):
        if message.id is MISSING or message.id is None:
            continue  # errors about unreadable requests carry no id (RPC-09)
        if ctx.deliberately_invalid(message):
            continue  # the active suite's response to a request that never existed, sent on purpose
        if ctx.log.request_of(message) is None and not _answers_an_unreadable_request(message, ctx):
            yield failed(message, f"{_who(message)} answered id {message.id!r}, which no request in the traffic used")
    for request in ctx.messages(kinds={Kind.REQUEST}):
        answers = ctx.log.responses_to(request)
        if len(answers) > 1:
            yield failed(answers[1], f"{request.describe()} was answered {len(answers)} times")
        elif len(answers) == 1:
            yield passed(request)
        elif request.method == "subscriptions/listen" or _cancelled(request, ctx):
            continue
        else:
            exchange = http_exchange(request, ctx)
            if exchange is not None and exchange.ending is not None and exchange.ending.reason is EndReason.COMPLETE:
                if exchange.response is not None and exchange.response.status < 400:
                    yield failed(request, f"the response stream for {request.describe()} ended without an answer")


@message_check(requirements="RPC-06", level=Level.MUST, side=Side.BOTH, subject="responses")
def responses_carry_exactly_one_of_result_or_error(message: Message, ctx: Context) -> Finding | None:
    """A response carries exactly one of result or error, and that member is an object."""
    if message.kind is Kind.INVALID and isinstance(message.payload, dict):
        payload = message.payload
        if "result" in payload and "error" in payload:
            return failed(message, f"{_who(message)} sent a response with both result and error")
        if "id" in payload and "method" not in payload:
            return failed(message, f"{_who(message)} sent a response with neither result nor error")
        return None
    if message.kind is Kind.RESULT and not isinstance(message.result, dict):
        return failed(message, f"{message.describe()} has a result that is not an object: {message.result!r}"[:300])
    if message.kind is Kind.ERROR and not isinstance(message.error, dict):
        return failed(message, f"{message.describe()} has an error that is not an object")
    if message.kind.is_response:
        return passed(message)
    return None


@message_check(
    requirements="RPC-08", level=Level.SHOULD, side=Side.SERVER, subject="error responses", kinds={Kind.ERROR}
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


@log_check(requirements="RPC-09", level=Level.MUST, side=Side.SERVER, subject="error responses")
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


@log_check(requirements="RPC-09", level=Level.SHOULD, side=Side.SERVER, subject="error responses")
def error_responses_never_carry_a_null_id(ctx: Context) -> Iterator[Finding]:
    """Errors carry the request id or no id at all, not JSON-RPC 2.0's "id": null (A1).

    The MCP schema types an id as a string or an integer; JSON-RPC 2.0 answers an unreadable request
    with null, so a null id is a SHOULD-level finding rather than a failure."""
    for message in ctx.messages(kinds={Kind.ERROR}, sent_by=Side.SERVER):
        if _id_exempt(message, ctx):
            continue
        if message.id is None:
            request = _readable_request(message, ctx)
            readable = f"; the request id {request.id!r} was readable" if request is not None else ""
            yield failed(message, f'the error carries "id": null{readable}')
        else:
            yield passed(message)


@message_check(
    requirements="RPC-10",
    level=Level.MUST_NOT,
    side=Side.BOTH,
    subject="notifications",
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
)
def notifications_carry_no_id(message: Message, ctx: Context) -> Finding | None:
    """Notifications (methods defined as notifications) carry no id."""
    revision = ctx.revision(message)
    if revision is None or message.method is None:
        return None
    defined_as_notification = message.method in revision.validator.notification_defs
    if not defined_as_notification:
        return None
    if message.kind is Kind.REQUEST:
        return failed(message, f"{message.method} is a notification but was sent with an id")
    return passed(message)


@log_check(requirements="RPC-11", level=Level.MUST_NOT, side=Side.BOTH, subject="client notifications")
def notifications_are_not_answered(ctx: Context) -> Iterator[Finding]:
    """Nobody answers a notification with a JSON-RPC response.

    HTTP: a response in the body of a notification POST. stdio: a server response without an id
    (a notification has none to echo) written after a client notification and before the client's
    next line, while no earlier malformed client line is still waiting for its id-less error."""
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.CLIENT):
        exchange = http_exchange(message, ctx)
        if exchange is None or exchange.response is None:
            continue
        answers = [m for m in exchange.response_messages if m.kind.is_response and m.id is not MISSING]
        if answers:
            yield failed(answers[0], f"{message.method} was answered with {answers[0].describe()}")
        else:
            yield passed(message)
    yield from _stdio_notification_answers(ctx)


def _stdio_notification_answers(ctx: Context) -> Iterator[Finding]:
    connections: dict[str, list[Message]] = defaultdict(list)
    for line in ctx.log.stdio_lines():
        if ctx.in_scope(line.message):
            connections[line.connection].append(line.message)
    for messages in connections.values():
        unreadable = 0
        notification: Message | None = None
        answered = False
        for message in sorted(messages, key=lambda item: item.time):
            if message.sender is Side.CLIENT:
                if notification is not None and not answered:
                    yield passed(notification)
                notification = message if message.kind is Kind.NOTIFICATION else None
                answered = False
                if message.kind in (Kind.BATCH, Kind.UNPARSEABLE) or (
                    message.kind is Kind.INVALID and message.id in (MISSING, None)
                ):
                    unreadable += 1
                continue
            if not message.kind.is_response or message.id not in (MISSING, None):
                continue
            if unreadable:
                unreadable -= 1  # an id-less error answering an earlier malformed line
            elif notification is not None and not answered:
                answered = True
                yield failed(message, f"{notification.method} was answered with {message.describe()}")
        if notification is not None and not answered:
            yield passed(notification)


def _answer_in_exchange(message: Message, ctx: Context) -> list[Message]:
    exchange = http_exchange(message, ctx)
    if exchange is None:
        return []
    return [m for m in exchange.response_messages if m.kind in JSON_KINDS or m.kind is Kind.UNPARSEABLE]


@log_check(requirements="RPC-12", level=Level.MUST, side=Side.SERVER, subject="answers to invalid JSON")
def invalid_json_gets_a_parse_error(ctx: Context) -> Iterator[Finding]:
    """A body that is not valid JSON is answered with error -32700."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if request is None or request.kind is not Kind.UNPARSEABLE or exchange.response is None:
            continue
        answers = [m for m in exchange.response_messages if m.kind is Kind.ERROR]
        if not answers:
            status = exchange.response.status
            yield failed(request, f"invalid JSON was answered with HTTP {status} and no JSON-RPC error")
        elif error_code(answers[0]) != -32700:
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


@log_check(requirements="RPC-13", level=Level.MUST, side=Side.SERVER, subject="answers to invalid requests")
def invalid_requests_get_an_invalid_request_error(ctx: Context) -> Iterator[Finding]:
    """JSON that is not a valid request object is answered with error -32600."""
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
        elif answers[0].kind is Kind.RESULT:
            yield failed(answers[0], f"an invalid request ({reason}) was served with a result")
        elif error_code(answers[0]) != -32600:
            yield failed(
                answers[0], f"an invalid request ({reason}) got code {error_code(answers[0])}, expected -32600"
            )
        else:
            yield passed(answers[0])


@message_check(
    requirements="RPC-14", level=Level.MUST_NOT, side=Side.CLIENT, subject="client messages", sent_by=Side.CLIENT
)
def clients_send_no_batches(message: Message, ctx: Context) -> Finding:
    """Clients send one message per POST body or stdio line, never a JSON array batch."""
    if message.kind is Kind.BATCH:
        return failed(message, f"the client sent a batch of {len(message.payload)} messages")
    return passed(message)


@log_check(requirements="RPC-14", level=Level.SHOULD_NOT, side=Side.SERVER, subject="answers to batches")
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


@log_check(requirements="RPC-15", level=Level.MUST, side=Side.SERVER, subject="requests for undefined methods")
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
        elif error_code(answer) != -32601:
            yield failed(
                answer, f"the undefined method {request.method} got code {error_code(answer)}, expected -32601"
            )
        else:
            yield passed(answer)


def _errors(ctx: Context) -> Iterator[tuple[Message, int]]:
    for message in ctx.messages(kinds={Kind.ERROR}):
        code = error_code(message)
        if code is not None:
            yield message, code


@log_check(
    requirements="RPC-16",
    level=Level.MUST_NOT,
    side=Side.BOTH,
    subject="error codes",
    features={"header_mismatch_error"},
)
def reserved_error_codes_are_used_only_as_defined(ctx: Context) -> Iterator[Finding]:
    """Codes -32020..-32099 appear only as -32020, -32021, -32022 (and -32020 only for HTTP header checks)."""
    for message, code in _errors(ctx):
        if -32099 <= code <= -32020:
            if code not in MCP_DEFINED_CODES:
                yield failed(message, f"error code {code} lies in the MCP-reserved range but is not defined")
            elif code == -32020 and message.transport != "http":
                yield failed(message, "-32020 (header mismatch) was used outside Streamable HTTP")
            else:
                yield passed(message)


@log_check(
    requirements="RPC-17", level=Level.MUST_NOT, side=Side.BOTH, subject="error codes", features={"per_request_version"}
)
def retired_error_codes_are_not_emitted(ctx: Context) -> Iterator[Finding]:
    """2026 implementations never emit -32002 (resource not found) or -32042 (URL elicitation)."""
    for message, code in _errors(ctx):
        if code in (-32002, -32042):
            replacement = "-32602" if code == -32002 else "an input_required result"
            yield failed(message, f"error code {code} is retired in this revision; use {replacement}")
        else:
            yield passed(message)


@log_check(
    requirements="RPC-18",
    level=Level.SHOULD_NOT,
    side=Side.BOTH,
    subject="error codes",
    features={"per_request_version"},
)
def legacy_error_range_is_avoided(ctx: Context) -> Iterator[Finding]:
    """New implementations avoid codes -32000..-32019 (the draft codes -32001/-32003/-32004 were renumbered)."""
    renumbered = {-32001: "-32020", -32003: "-32021", -32004: "-32022"}
    for message, code in _errors(ctx):
        if -32019 <= code <= -32000:
            hint = f"; it looks like a pre-release code, use {renumbered[code]}" if code in renumbered else ""
            yield failed(message, f"error code {code} is in the legacy range -32000..-32019{hint}")
        else:
            yield passed(message)


@log_check(
    requirements="RPC-19", level=Level.SHOULD, side=Side.BOTH, subject="error codes", features={"per_request_version"}
)
def application_error_codes_stay_outside_the_reserved_range(ctx: Context) -> Iterator[Finding]:
    """Application-defined codes live outside -32768..-32000."""
    for message, code in _errors(ctx):
        reserved = -32768 <= code <= -32000
        known = code in JSONRPC_STANDARD_CODES or code in MCP_DEFINED_CODES or -32099 <= code <= -32000
        if reserved and not known:
            yield failed(message, f"error code {code} is inside the JSON-RPC reserved range but not a defined code")
        else:
            yield passed(message)


@message_check(
    requirements="RPC-20",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="server messages",
    features={"!server_requests"},
    sent_by=Side.SERVER,
)
def servers_send_no_requests(message: Message, ctx: Context) -> Finding:
    """The server never sends a JSON-RPC request in this revision."""
    if message.kind is Kind.REQUEST:
        return failed(message, f"the server sent a request ({message.describe()})")
    return passed(message)


@message_check(
    requirements="RPC-21",
    level=Level.MUST_NOT,
    side=Side.CLIENT,
    subject="client messages",
    features={"!server_requests"},
    sent_by=Side.CLIENT,
)
def clients_send_no_responses(message: Message, ctx: Context) -> Finding:
    """The client never sends a JSON-RPC response in this revision."""
    if message.kind.is_response:
        return failed(message, f"the client sent a response ({message.describe()})")
    return passed(message)


@message_check(
    requirements="RPC-22",
    level=Level.MUST,
    side=Side.BOTH,
    subject="requests and notifications",
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
)
def params_are_objects(message: Message, ctx: Context) -> Finding:
    """params, when present, is a JSON object."""
    if message.params is MISSING or isinstance(message.params, dict):
        return passed(message)
    return failed(message, f"{message.describe()} has params of type {type(message.params).__name__}")


@message_check(
    requirements="RPC-23",
    level=Level.SHOULD,
    side=Side.BOTH,
    subject="requests and notifications",
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
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
