"""stdio (STDIO-): one message per line, nothing else on the pipes, and how the process ends.

The stdio tap records every line either side wrote as a :class:`~mcp_assay.wire.model.StdioLine`.
:func:`framing` sorts those lines once: complete messages, lines that only make sense joined
with the next ones (pretty-printed JSON, STDIO-01), and text that is no message at all (a
banner or a log line on stdout, STDIO-02/03). ``stderr`` is recorded as observations and never
read here: it is free-form log text (STDIO-11). Shutdown rules read the
:class:`~mcp_assay.wire.model.ProcessExit` record: when stdin was closed, which signals were
forwarded, and when the process ended.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from mcp_assay.spec.checks import (
    PROCESS_EXITS,
    STDIO_LINES,
    Finding,
    Passes,
    failed,
    log_check,
    message_check,
    passed,
    passed_each,
    unverified,
)
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, IdKey, Kind, Message, id_key
from mcp_assay.wire.model import ProcessExit, StdioLine, body_text, sent_by_assay

__all__ = ["Framing", "LineClass", "framing"]

MESSAGE_KINDS = frozenset({Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR})
MAX_FRAGMENT_LINES = 200
LISTEN = "subscriptions/listen"
CANCELLED = "notifications/cancelled"
MODERN_STDIO: dict[str, Any] = {"features": {"per_request_version"}}


class LineClass(StrEnum):
    """What one stdio line turned out to be."""

    MESSAGE = "message"
    BATCH = "batch"
    FRAGMENT = "fragment"
    """Part of one JSON message spread over several lines (pretty-printed output)."""
    BLANK = "blank"
    PARTIAL = "partial"
    """The last line of the stream, cut off before its newline and not a message."""
    TEXT = "text"
    """Not JSON at all: a banner, a log line, a prompt."""
    NOT_JSONRPC = "not-jsonrpc"
    """Valid JSON that is not a JSON-RPC message object."""


@dataclass
class Framing:
    """Every stdio line's class, and the groups of lines that together hold one message."""

    classes: dict[str, LineClass] = field(default_factory=dict)
    groups: list[list[StdioLine]] = field(default_factory=list)


def _text(line: StdioLine) -> str:
    raw = line.raw[:-1] if line.raw.endswith(b"\n") else line.raw
    return raw.decode("utf-8", "replace").rstrip("\r")


def _completes(parts: list[str]) -> bool:
    try:
        json.loads("\n".join(parts), strict=False)
    except (ValueError, RecursionError):
        return False
    return True


def _classify(lines: list[StdioLine], result: Framing) -> None:
    position = 0
    while position < len(lines):
        line = lines[position]
        kind = line.message.kind
        if kind in MESSAGE_KINDS:
            result.classes[line.id] = LineClass.MESSAGE
        elif kind is Kind.BATCH:
            result.classes[line.id] = LineClass.BATCH
        elif kind is Kind.INVALID:
            result.classes[line.id] = LineClass.NOT_JSONRPC
        else:
            text = _text(line)
            if not text.strip():
                result.classes[line.id] = LineClass.BLANK
            elif text.lstrip().startswith(("{", "[")):
                end = _fragment_end(lines, position, text)
                if end is not None:
                    group = lines[position : end + 1]
                    result.groups.append(group)
                    for member in group:
                        result.classes[member.id] = LineClass.FRAGMENT
                    position = end + 1
                    continue
                result.classes[line.id] = LineClass.TEXT
            else:
                result.classes[line.id] = LineClass.TEXT
            if result.classes[line.id] is LineClass.TEXT and not line.raw.endswith(b"\n"):
                result.classes[line.id] = LineClass.PARTIAL
        position += 1


def _fragment_end(lines: list[StdioLine], start: int, first: str) -> int | None:
    """Index of the line that completes a JSON value begun at ``start`` (``None``: it never completes)."""
    parts = [first]
    for index in range(start + 1, min(len(lines), start + MAX_FRAGMENT_LINES)):
        line = lines[index]
        if line.message.kind in MESSAGE_KINDS:
            return None  # a complete message starts here; what came before was not its beginning
        parts.append(_text(line))
        if _completes(parts):
            return index
    return None


def framing(ctx: Context) -> Framing:
    """Classify every stdio line of the log (cached per log and size)."""
    return ctx.view(_frame)


def _frame(ctx: Context) -> Framing:
    streams: dict[tuple[str, Side], list[StdioLine]] = defaultdict(list)
    for line in ctx.log.stdio_lines():
        streams[(line.connection, line.sender)].append(line)
    result = Framing()
    for lines in streams.values():
        _classify(lines, result)
    return result


def _judged(line: StdioLine, side: Side) -> bool:
    """Lines of one side, leaving out what the active suite malformed on purpose."""
    if line.sender is not side:
        return False
    return not (side is Side.CLIENT and line.probe is not None and line.probe.invalid)


def _who(side: Side) -> str:
    return "server" if side is Side.SERVER else "client"


def _pipe(side: Side) -> str:
    return "stdout" if side is Side.SERVER else "the server's stdin"


# == framing ======================================================================================
@log_check(requirements="STDIO-01", level=Level.MUST_NOT, subject="stdio messages", follows={STDIO_LINES})
def stdio_messages_take_exactly_one_line(ctx: Context) -> Iterator[Finding | Passes]:
    """Each stdio message is one newline-terminated line; no message is spread over several lines."""
    passes: list[Message] = []
    frames = framing(ctx)
    for group in frames.groups:
        first = group[0]
        if first.sender is Side.CLIENT and not _judged(first, Side.CLIENT):
            continue
        yield failed(
            first.message,
            f"the {_who(first.sender)} wrote one JSON message over {len(group)} lines (pretty-printed?); "
            "a message must not contain a raw newline",
        )
    for line in ctx.log.stdio_lines():
        if frames.classes.get(line.id) is LineClass.MESSAGE and (
            line.sender is Side.SERVER or _judged(line, line.sender)
        ):
            passes.append(line.message)
    yield passed_each(passes)


def _only_messages(ctx: Context, side: Side) -> Iterator[Finding | Passes]:
    passes: list[Message] = []
    frames = framing(ctx)
    who, pipe = _who(side), _pipe(side)
    for line in ctx.log.stdio_lines():
        if not _judged(line, side):
            continue
        kind = frames.classes.get(line.id)
        excerpt = body_text(line.raw, 160).rstrip("\n")
        if kind is LineClass.MESSAGE:
            passes.append(line.message)
        elif kind is LineClass.TEXT:
            yield failed(line.message, f"the {who} wrote a line to {pipe} that is not an MCP message: {excerpt!r}")
        elif kind is LineClass.BLANK:
            yield failed(line.message, f"the {who} wrote a blank line to {pipe}")
        elif kind is LineClass.PARTIAL:
            yield failed(line.message, f"the {who}'s output on {pipe} ends with an incomplete line: {excerpt!r}")
        elif kind is LineClass.NOT_JSONRPC:
            yield failed(line.message, f"the {who} wrote JSON that is not a JSON-RPC message to {pipe}: {excerpt!r}")
    yield passed_each(passes)


@log_check(requirements="STDIO-02", level=Level.MUST_NOT, subject="lines on the server's stdout", follows={STDIO_LINES})
def server_stdout_carries_only_mcp_messages(ctx: Context) -> Iterator[Finding | Passes]:
    """The server writes nothing but MCP messages to stdout: no banner, log line, blank or partial line."""
    return _only_messages(ctx, Side.SERVER)


@log_check(requirements="STDIO-03", level=Level.MUST_NOT, subject="lines on the server's stdin", follows={STDIO_LINES})
def client_stdin_carries_only_mcp_messages(ctx: Context) -> Iterator[Finding | Passes]:
    """The client writes nothing but MCP messages to the server's stdin."""
    return _only_messages(ctx, Side.CLIENT)


@message_check(requirements="STDIO-04", level=Level.MUST, subject="stdio lines", methods=ANY_ENVELOPE)
def stdio_lines_hold_one_message_not_a_batch(message: Message, ctx: Context) -> Finding | None:
    """Each stdio line holds one request, notification or response object, never a JSON array batch."""
    if message.kind is Kind.BATCH:
        who = "server" if message.sender is Side.SERVER else "client"
        return failed(message, f"the {who} wrote a JSON array of {len(message.payload)} messages on one stdio line")
    if message.kind in MESSAGE_KINDS:
        return passed(message)
    return None


@message_check(
    requirements="STDIO-05", level=Level.MUST_NOT, subject="server lines", sent_by=Side.SERVER,
    **MODERN_STDIO,
    methods=ANY_ENVELOPE,
)  # fmt: skip
def stdio_servers_write_no_requests(message: Message, ctx: Context) -> Finding | None:
    """A 2026 stdio server writes no JSON-RPC request to stdout (server-to-client needs go through MRTR)."""
    if message.kind is Kind.REQUEST:
        return failed(message, f"the server wrote a request to stdout ({message.describe()}); 2026 uses MRTR instead")
    if message.kind in MESSAGE_KINDS:
        return passed(message)
    return None


@message_check(
    requirements="STDIO-06", level=Level.MUST_NOT, subject="client lines", sent_by=Side.CLIENT,
    **MODERN_STDIO,
    methods=ANY_ENVELOPE,
)  # fmt: skip
def stdio_clients_write_no_responses(message: Message, ctx: Context) -> Finding | None:
    """A 2026 stdio client writes no JSON-RPC response to the server's stdin."""
    if message.kind.is_response:
        return failed(message, f"the client wrote a response to the server's stdin ({message.describe()})")
    if message.kind in MESSAGE_KINDS:
        return passed(message)
    return None


# == request-scoped notifications (2026) ==========================================================
@dataclass
class _Open:
    """Client requests in flight on one connection, in arrival order."""

    requests: dict[IdKey, Message] = field(default_factory=dict)

    def listens(self) -> dict[IdKey, Message]:
        return {key: request for key, request in self.requests.items() if request.method == LISTEN}


def _meta(message: Message) -> dict[str, Any]:
    params = message.params if isinstance(message.params, dict) else {}
    meta = params.get("_meta")
    return meta if isinstance(meta, dict) else {}


def _param(message: Message, name: str) -> Any:
    params = message.params if isinstance(message.params, dict) else {}
    return params.get(name, MISSING)


def _scope_of(notification: Message, open_: _Open) -> str | None:
    """Why a server notification is allowed right now, or ``None`` when nothing in flight explains it."""
    tag = _meta(notification).get(MetaKey.SUBSCRIPTION_ID, MISSING)
    if tag is not MISSING:
        return "tagged for an open listen" if id_key(tag) in open_.listens() else None
    method = notification.method
    if method == "notifications/progress":
        token = id_key(_param(notification, "progressToken"))
        owners = [r for r in open_.requests.values() if id_key(_meta(r).get("progressToken", MISSING)) == token]
        return "progress of an in-flight request" if token is not None and owners else None
    if method == "notifications/message":
        chatty = [r for r in open_.requests.values() if MetaKey.LOG_LEVEL in _meta(r)]
        return "log of an in-flight request that set logLevel" if chatty else None
    if method == CANCELLED:
        ended = id_key(_param(notification, "requestId"))
        if ended is not None and ended in open_.listens():
            del open_.requests[ended]
            return "ends an open listen"
        return None
    return None


@log_check(
    requirements="STDIO-07",
    level=Level.MUST,
    subject="server notifications on stdout",
    **MODERN_STDIO,
    follows={STDIO_LINES},
)
def stdio_notifications_belong_to_a_request_or_listen(ctx: Context) -> Iterator[Finding]:
    """Every 2026 server notification on stdout is request-scoped, tagged for an open listen, or ends one.

    Request-scoped means progress with the token of an in-flight request, or a log message while
    a request that set ``logLevel`` is in flight."""
    connections: dict[str, _Open] = defaultdict(_Open)
    for message in ctx.log.messages():
        if message.transport != "stdio":
            continue
        open_ = connections[ctx.log.scope(message)]
        key = message.id_key
        if message.sender is Side.CLIENT:
            if message.kind is Kind.REQUEST and key is not None:
                open_.requests[key] = message
            elif message.method == CANCELLED:
                ended = id_key(_param(message, "requestId"))
                if ended is not None:
                    open_.requests.pop(ended, None)
            continue
        if message.kind.is_response and key is not None:
            open_.requests.pop(key, None)
            continue
        if message.kind is not Kind.NOTIFICATION or not ctx.in_scope(message):
            continue
        why = _scope_of(message, open_)
        if why is not None:
            yield passed(message)
        else:
            yield failed(message, _unscoped(message))


def _unscoped(message: Message) -> str:
    tag = _meta(message).get(MetaKey.SUBSCRIPTION_ID, MISSING)
    if tag is not MISSING:
        return f"{message.method} is tagged for subscription {json.dumps(tag, default=str)}, which is no open listen"
    if message.method == "notifications/progress":
        token = json.dumps(_param(message, "progressToken"), default=str)
        return f"progress for token {token}, which no in-flight request carries"
    if message.method == "notifications/message":
        return "a log message while no in-flight request had set logLevel"
    if message.method == CANCELLED:
        return f"notifications/cancelled for {json.dumps(_param(message, 'requestId'), default=str)}, no open listen"
    return f"{message.method} is neither about an in-flight request nor tagged for an open listen"


# == process lifetime =============================================================================
def _limit(ctx: Context) -> float:
    value: Any = ctx.settings.get("stdio_exit_limit_s", 5.0)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 5.0
    return number if math.isfinite(number) and number > 0 else 5.0


def _signals(exit_: ProcessExit) -> list[str]:
    names = []
    for signal in exit_.signals:
        name = signal.strip().upper()
        names.append(name if name.startswith("SIG") else "SIG" + name)
    return names


def _connection_revision(ctx: Context, connection: str) -> Any:
    for line in ctx.log.stdio_lines():
        if line.connection == connection:
            revision = ctx.revision(line.message)
            if revision is not None:
                return revision
    return None


@log_check(requirements="STDIO-08", level=Level.SHOULD, subject="stdin closures", follows={PROCESS_EXITS})
def stdio_servers_exit_promptly_after_stdin_closes(ctx: Context) -> Iterator[Finding]:
    """Once its stdin reaches end-of-file the server exits promptly (default limit 5 s, ``stdio_exit_limit_s``)."""
    limit = _limit(ctx)
    for exit_ in ctx.log.process_exits():
        if exit_.stdin_closed_at is None:
            continue
        elapsed = exit_.time - exit_.stdin_closed_at
        signals = _signals(exit_)
        if elapsed > limit:
            forced = f" and was ended by {', '.join(signals)}" if signals else ""
            yield failed(exit_, f"the server ran {elapsed:.1f} s after its stdin closed{forced} (limit {limit:g} s)")
        elif signals:
            yield unverified(
                f"the client sent {', '.join(signals)} {elapsed:.1f} s after closing stdin, before the "
                f"{limit:g} s limit, so whether the server would have exited by itself is unknown",
                exit_,
            )
        else:
            yield passed(exit_, f"the server exited {elapsed:.2f} s after its stdin closed")


@log_check(requirements="STDIO-09", level=Level.SHOULD, subject="server shutdowns", follows={PROCESS_EXITS})
def clients_close_stdin_before_signalling(ctx: Context) -> Iterator[Finding]:
    """A client ends a stdio server by closing its stdin first, then escalates (2025: SIGTERM before SIGKILL)."""
    for exit_ in ctx.log.process_exits():
        if sent_by_assay(exit_):
            continue  # the active suite ended this process, not the client under test
        signals = _signals(exit_)
        if not signals:
            if exit_.stdin_closed_at is not None:
                yield passed(exit_)
            continue
        if exit_.stdin_closed_at is None:
            yield failed(exit_, f"the client sent {', '.join(signals)} without first closing the server's stdin")
            continue
        revision = _connection_revision(ctx, exit_.connection)
        legacy = revision is not None and revision.has("handshake")
        if legacy and "SIGKILL" in signals and signals.index("SIGKILL") < _first(signals, "SIGTERM"):
            yield failed(exit_, "the client sent SIGKILL without trying SIGTERM first")
        else:
            yield passed(exit_)


def _first(items: list[str], wanted: str) -> int:
    return items.index(wanted) if wanted in items else len(items)


def _same_work(a: Message, b: Message) -> bool:
    def strip(message: Message) -> str:
        params = message.params if isinstance(message.params, dict) else {}
        rest = {key: value for key, value in params.items() if key != "_meta"}
        return json.dumps([message.method, rest], sort_keys=True, default=str)

    return strip(a) == strip(b)


@log_check(
    requirements="STDIO-10",
    level=Level.SHOULD,
    subject="unexpected server deaths",
    **MODERN_STDIO,
    follows={PROCESS_EXITS},
)
def clients_restart_dead_servers_and_resend(ctx: Context) -> Iterator[Finding]:
    """After the server dies unexpectedly the client restarts it and re-sends in-flight requests and listens."""
    for exit_ in ctx.log.process_exits():
        if sent_by_assay(exit_) or exit_.stdin_closed_at is not None or exit_.signals:
            continue
        revision = _connection_revision(ctx, exit_.connection)
        if revision is None or not revision.has("per_request_version"):
            continue
        lines = [line for line in ctx.log.stdio_lines() if line.connection == exit_.connection]
        pending = [
            line.message
            for line in lines
            if line.sender is Side.CLIENT
            and line.message.kind is Kind.REQUEST
            and line.time <= exit_.time
            and not any(answer.time <= exit_.time for answer in ctx.log.responses_to(line.message))
        ]
        later = [
            line.message
            for line in ctx.log.stdio_lines()
            if line.connection != exit_.connection and line.sender is Side.CLIENT and line.time > exit_.time
        ]
        if not later:
            yield unverified("the server died and no restarted connection followed in the capture", exit_)
            continue
        lost = [request for request in pending if not any(_same_work(request, again) for again in later)]
        if lost:
            yield failed(lost[0], f"{lost[0].describe()} was in flight when the server died and was not re-sent")
        else:
            yield passed(exit_, f"restarted; {len(pending)} in-flight request(s) re-sent")
