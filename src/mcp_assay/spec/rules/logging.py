"""Logging (LOG-): who may receive ``notifications/message``, at which level, on which stream.

In 2026 logging is per request and deprecated: a request opts in with
``params._meta["io.modelcontextprotocol/logLevel"]``, and the server may then log at or above that
level on that request's own response stream, before its final response; without the key it sends
nothing. On stdio a log line names no request, so following ambiguity A9 a line is attributed only
when every request in flight at that moment agrees (all with, or all without, a level). 2025
sessions set one level for the whole session with ``logging/setLevel``. In both revisions a server
that logs declares the ``logging`` capability and keeps secrets and personal data out of its logs.

The active suite calls a chatty tool with and without a level, and with an unknown level.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Every, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, params_of
from mcp_assay.spec.rules.shared.reads import ANY_PAIRING
from mcp_assay.spec.rules.shared.stream_facts import LOG_LEVELS, LOG_MESSAGE, level_rank, meta_value
from mcp_assay.spec.rules.shared.streams import StreamIndex, index
from mcp_assay.vocabulary.protocol import ErrorCode, HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import EndReason, HttpExchange

PER_REQUEST = {"per_request_log_level"}


def _log_messages(ctx: Context) -> Iterator[Message]:
    for message in ctx.messages(kinds={Kind.NOTIFICATION}, sent_by=Side.SERVER):
        if message.method == LOG_MESSAGE:
            yield message


def _level_of(message: Message) -> Any:
    return params_of(message).get("level", MISSING)


def _asked(request: Message) -> bool:
    return meta_value(request, MetaKey.LOG_LEVEL) is not MISSING


def _stdio_open(message: Message, idx: StreamIndex) -> list[Message]:
    return idx.open_requests(message)


@log_check(
    requirements="LOG-01", level=Level.MUST_NOT, subject="log messages", features=PER_REQUEST, follows=ANY_PAIRING
)
def log_messages_only_for_requests_that_asked(ctx: Context) -> Iterator[Finding]:
    """No notifications/message for a request that set no logLevel (stdio: judged only when unambiguous, A9).

    Triggered by a request without a logLevel whose handler logs (the active suite calls a chatty
    tool without one). On HTTP, a request without a logLevel whose whole response stream was seen
    without a log message is a pass: the prohibition held for it."""
    idx = index(ctx)
    yield from _quiet_http_requests(ctx)
    for message in _log_messages(ctx):
        if message.transport == "http":
            if idx.listen_carrying(message) is not None:
                continue  # LOG-03 / SUB-09
            carrier = idx.carrier_request(message)
            if carrier is None:
                continue
            if _asked(carrier):
                yield passed(message)
            else:
                yield failed(message, f"a log message on the stream of {carrier.describe()}, which set no logLevel")
            continue
        if meta_value(message, MetaKey.SUBSCRIPTION_ID) is not MISSING:
            continue
        open_now = _stdio_open(message, idx)
        if not open_now:
            continue  # LOG-03: no request to log for at all
        states = {_asked(request) for request in open_now}
        if states == {True}:
            yield passed(message)
        elif states == {False}:
            names = ", ".join(request.describe() for request in open_now[:3])
            yield failed(message, f"a log message while only requests without logLevel were in flight ({names})")
        else:
            yield unverified(
                "requests with and without logLevel were in flight together, so the log line cannot be attributed (A9)",
                message,
            )


def _quiet_http_requests(ctx: Context) -> Iterator[Finding]:
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if request.transport != "http" or request.method == "subscriptions/listen" or _asked(request):
            continue
        exchange = ctx.log.get(request.exchange)
        if not isinstance(exchange, HttpExchange) or exchange.ending is None:
            continue
        if exchange.ending.reason is not EndReason.COMPLETE or not exchange.response_messages:
            continue
        if not any(m.method == "notifications/message" for m in exchange.response_messages):
            yield passed(request)


@log_check(
    requirements="LOG-02",
    level=Level.MUST_NOT,
    subject="log messages for requests that set a level",
    features=PER_REQUEST,
    follows={LOG_MESSAGE},
)
def log_messages_respect_the_requested_level(ctx: Context) -> Iterator[Finding]:
    """Log messages are at or above the level the request asked for.

    Triggered by a request with a strict logLevel (the active suite asks for "error")."""
    idx = index(ctx)
    for message in _log_messages(ctx):
        rank = level_rank(_level_of(message))
        if rank is None:
            continue  # the schema rule reports unknown levels
        if message.transport == "http":
            carrier = idx.carrier_request(message)
            thresholds = [carrier] if carrier is not None and idx.listen_carrying(message) is None else []
        else:
            thresholds = _stdio_open(message, idx)
        levels = [
            (level_rank(meta_value(request, MetaKey.LOG_LEVEL)), request)
            for request in thresholds
            if level_rank(meta_value(request, MetaKey.LOG_LEVEL)) is not None
        ]
        if not levels:
            continue
        lowest, request = min(levels, key=lambda pair: pair[0] or 0)
        if lowest is not None and rank < lowest:
            yield failed(
                message,
                f"a {_level_of(message)} message for {request.describe()}, which asked for "
                f"{meta_value(request, MetaKey.LOG_LEVEL)} and above",
            )
        else:
            yield passed(message)


@log_check(
    requirements="LOG-03",
    level=Level.MUST_NOT,
    subject="log messages",
    features=PER_REQUEST,
    follows={LOG_MESSAGE},
)
def log_messages_stay_on_their_request_stream(ctx: Context) -> Iterator[Finding]:
    """Log messages travel only on the stream of the request that set the level, before its final response."""
    idx = index(ctx)
    for message in _log_messages(ctx):
        if message.transport == "http":
            listen = idx.listen_carrying(message)
            if listen is not None:
                yield failed(message, f"a log message on the listen stream of {listen.request.describe()}")
                continue
            carrier = idx.carrier_request(message)
            if carrier is None:
                yield failed(message, "a log message on a stream that answers no request")
                continue
            if not _asked(carrier):
                continue  # LOG-01
            answer = idx.first_answer(carrier)
            if answer is not None and idx.before(answer, message):
                yield failed(message, f"a log message after the final response to {carrier.describe()}")
            else:
                yield passed(message)
            continue
        if meta_value(message, MetaKey.SUBSCRIPTION_ID) is not MISSING:
            yield failed(message, "a log message tagged with a subscriptionId, i.e. on a listen stream")
        elif not idx.open_requests(message, cancelled=True):
            yield failed(message, "a log message while no request was in flight")
        else:
            yield passed(message)


@log_check(
    requirements="LOG-04",
    level=Level.SHOULD,
    subject="requests with an unknown logLevel",
    features=PER_REQUEST,
    follows=ANY_PAIRING,
)
def unknown_log_levels_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A request whose logLevel is not a known level is refused with -32602.

    Triggered by a request with e.g. ``"io.modelcontextprotocol/logLevel": "verbose"`` (an active probe)."""
    idx = index(ctx)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        value = meta_value(request, MetaKey.LOG_LEVEL)
        if value is MISSING or value in LOG_LEVELS:
            continue
        answer = idx.first_answer(request)
        if answer is None:
            continue
        if answer.kind is Kind.RESULT:
            yield failed(answer, f"a request with logLevel {value!r} was served instead of refused with -32602")
        elif error_code(answer) != ErrorCode.INVALID_PARAMS:
            yield failed(answer, f"logLevel {value!r} got code {error_code(answer)}, expected -32602")
        else:
            yield passed(answer)


@message_check(
    requirements="LOG-05",
    level=Level.MUST,
    subject="log messages",
    sent_by=Side.SERVER,
    kinds={Kind.NOTIFICATION},
    methods={LOG_MESSAGE},
)
def log_messages_need_the_logging_capability(message: Message, ctx: Context) -> Finding | None:
    """A server that sends notifications/message declares the logging capability."""
    if message.method != LOG_MESSAGE:
        return None
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified("the server's capabilities were not seen (no discover or initialize result)", message)
    if "logging" in caps:
        return passed(message)
    return failed(message, f"notifications/message although the capabilities {sorted(caps)} do not include logging")


_SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9\-._~+/]{16,}=*")),
    ("a JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("an API key (sk-...)", re.compile(r"\bsk-(?:[a-z]+-)?[A-Za-z0-9_-]{20,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    (
        "a credential assignment",
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|secret|client[_-]?secret|api[_-]?key|access[_-]?token|auth[_-]?token)"
            r"\b[\"']?\s*[:=]\s*[\"']?(?!\*+|<|\[)[^\s\"',;}]{6,}"
        ),
    ),
    ("an e-mail address", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")),
)


def _credentials_in_traffic(ctx: Context) -> list[str]:
    """Authorization values the client sent, which must never reappear in a log message."""
    found = []
    for exchange in ctx.log.http_exchanges():
        for value in exchange.request.headers.get_all(HeaderKey.AUTHORIZATION):
            token = value.split(" ", 1)[-1].strip()
            if len(token) >= 8:
                found.append(token)
    return found


def _leak(text: str, credentials: list[str]) -> str | None:
    if any(credential in text for credential in credentials):
        return "the client's Authorization credential"
    for kind, pattern in _SECRETS:
        if pattern.search(text):
            return kind
    return None


@log_check(
    requirements="LOG-07",
    level=Level.MUST_NOT,
    subject="log messages",
    follows={LOG_MESSAGE},
)
def log_messages_leak_no_secrets(ctx: Context) -> Iterator[Finding]:
    """Log messages contain no credentials, secrets or personal data (heuristic scan).

    Findings point at the exchange, not the message, so the report does not repeat the secret."""
    credentials = _credentials_in_traffic(ctx)
    for message in _log_messages(ctx):
        params = params_of(message)
        text = json.dumps([params.get("logger"), params.get("data")], ensure_ascii=False)
        kind = _leak(text, credentials)
        if kind is None:
            yield passed(message)
            continue
        exchange = ctx.log.get(message.exchange)
        where = f"message {message.index} of this stream" if message.transport == "http" else "this line"
        yield failed(exchange or message, f"the log message ({where}) contains what looks like {kind}")


def _empty(message: Message) -> bool:
    return isinstance(message.result, dict) and not (set(message.result) - {"_meta"})


@log_check(
    requirements="LOG-08",
    level=Level.SHOULD,
    subject="logging/setLevel requests",
    features={"set_log_level"},
    follows={"logging/setLevel"},
)
def set_level_requests_are_answered_as_specified(ctx: Context) -> Iterator[Finding]:
    """logging/setLevel with a known level returns {}; an unknown level gets -32602."""
    idx = index(ctx)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if request.method != "logging/setLevel":
            continue
        answer = idx.first_answer(request)
        if answer is None:
            continue
        caps = ctx.capabilities(request)
        if caps is not None and "logging" not in caps:
            yield unverified("the server does not declare logging, so it need not implement logging/setLevel", answer)
            continue
        level = params_of(request).get("level")
        if level in LOG_LEVELS:
            if answer.kind is Kind.RESULT and _empty(answer):
                yield passed(answer)
            else:
                yield failed(answer, f"logging/setLevel {level!r} was answered {answer.describe()}, expected {{}}")
        elif error_code(answer) == ErrorCode.INVALID_PARAMS:
            yield passed(answer)
        else:
            yield failed(answer, f"logging/setLevel {level!r} got {answer.describe()}, expected -32602")


def _session_level(message: Message, idx: StreamIndex) -> tuple[int, Message] | None:
    """The level the session set last (and had acknowledged) before ``message``."""
    current = None
    for request in idx.requests.get((idx.place(message), Side.CLIENT), ()):
        if not idx.before(request, message):
            break
        if request.method != "logging/setLevel":
            continue
        answer = idx.first_answer(request)
        rank = level_rank(params_of(request).get("level"))
        if answer is not None and answer.kind is Kind.RESULT and idx.before(answer, message) and rank is not None:
            current = (rank, request)
    return current


@log_check(
    requirements="LOG-08",
    level=Level.SHOULD,
    subject="log messages after logging/setLevel",
    features={"set_log_level"},
    follows={LOG_MESSAGE},
)
def log_messages_respect_the_session_level(ctx: Context) -> Iterator[Finding]:
    """After logging/setLevel, a 2025 server logs only at or above that level."""
    idx = index(ctx)
    for message in _log_messages(ctx):
        rank = level_rank(_level_of(message))
        current = _session_level(message, idx)
        if rank is None or current is None:
            continue
        wanted, request = current
        if rank < wanted:
            yield failed(message, f"a {_level_of(message)} message after {request.describe()} set {LOG_LEVELS[wanted]}")
        else:
            yield passed(message)


@log_check(
    requirements="LOG-09",
    level=Level.SHOULD_NOT,
    side=Side.SERVER,
    subject="discover results",
    features=PER_REQUEST,
    because="the server's half of a requirement binding both sides (its client half is a check of its own)",
    follows={"server/discover"},
)
def servers_do_not_adopt_deprecated_logging(ctx: Context) -> Iterator[Finding]:
    """A 2026 server advertising the deprecated logging capability is noted (information only)."""
    for message in ctx.messages(kinds={Kind.RESULT}, sent_by=Side.SERVER):
        request = ctx.log.request_of(message)
        if request is None or request.method != "server/discover" or not isinstance(message.result, dict):
            continue
        caps = message.result.get("capabilities")
        if isinstance(caps, dict) and "logging" in caps:
            yield failed(message, "noted: the server advertises logging, which 2026-07-28 deprecates")
        else:
            yield passed(message)


@log_check(
    requirements="LOG-09",
    level=Level.SHOULD_NOT,
    side=Side.CLIENT,
    subject="client requests",
    features=PER_REQUEST,
    because="the client's half of a requirement binding both sides (its server half is a check of its own)",
    follows=Every("a logLevel may ride on a request of any method"),
)
def clients_do_not_adopt_deprecated_logging(ctx: Context) -> Iterator[Finding]:
    """A 2026 client asking for log messages (logLevel) is noted (information only)."""
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if _asked(request):
            yield failed(request, "noted: the request sets logLevel; 2026-07-28 deprecates logging")
        else:
            yield passed(request)
