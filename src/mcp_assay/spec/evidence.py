"""Evidence: what a reader needs to find, understand and reproduce one finding.

A finding names a message or an exchange; the report needs text. :func:`make_evidence` turns the
subject into a redacted one-line summary, an excerpt of the message, the exchange id to look up
in the recording and the request again: :func:`replay_of` builds the
:class:`~mcp_assay.vocabulary.replays.Replay` of any exchange a request crossed, whoever sent it (a probe of
mcp-assay's, or a client the proxy, the tap or a capture watched), and the evidence carries it with
its shell line. A request made in a 2025 session is replayed in a session of its own, a stdio line
after the handshake its connection had made; credentials become ``${MCP_ASSAY_TOKEN}``-style
placeholders. An answer mcp-assay injected has no replay: the server never saw its request.
"""

from __future__ import annotations

import json

from mcp_assay.recording.redaction import REDACTED, Redactor
from mcp_assay.spec.context import Context
from mcp_assay.vocabulary.protocol import HeaderKey, MetaKey
from mcp_assay.vocabulary.replays import (
    COOKIE_VARIABLE,
    STARTED,
    TOKEN_VARIABLE,
    Replay,
    placeholder,
    principal_variable,
    shell_line,
)
from mcp_assay.vocabulary.verdicts import Evidence, ExploredInput, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import (
    EndReason,
    Exchange,
    HttpExchange,
    Probe,
    StdioLine,
    answered_by_assay,
    body_text,
    compact_json,
    sent_by_assay,
)
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["make_evidence", "replay_of"]

_NOT_REPLAYED = (HeaderKey.HOST, "content-length", "connection", "accept-encoding", "user-agent", "transfer-encoding")
_COOKIES = ("cookie", "set-cookie")
_NOT_TOKENS = frozenset(
    {"code", "client_secret", "password", "secret", "sig", "signature", "refresh_token", "id_token"}
)
"""Secret query parameters that carry something other than the bearer token a replay takes from the environment."""
_HANDSHAKE = ("initialize", "notifications/initialized")
BODY_LIMIT = 100_000
"""Characters of a request body a replay carries."""


def _http_label(exchange: HttpExchange) -> str:
    request = exchange.request
    head = f"{request.method} {request.path}"
    if exchange.response is not None:
        content_type = exchange.response.content_type or "no content type"
        head += f" → {exchange.response.status} {content_type}"
    elif exchange.ending is not None:
        head += f" → {exchange.ending.reason.value}"
    return head


def _credential(probe: Probe | None) -> str | None:
    """The variable the request's credential comes from in a replay: the run's (or the client's) own token, a
    behaviour case's principal's; ``None`` for one a probe made up on purpose, which stays redacted."""
    if probe is None:
        return TOKEN_VARIABLE
    if probe.facts.variant is not None:
        return None
    return principal_variable(probe.facts.principal) if probe.facts.principal is not None else TOKEN_VARIABLE


def _header(name: str, value: str, redactor: Redactor, *, variable: str | None) -> str:
    shown = redactor.header(name, value)
    if variable is None or not redactor.is_secret_header(name) or REDACTED not in shown:
        return shown
    if name.lower() in _COOKIES:
        return placeholder(COOKIE_VARIABLE)
    return shown.replace(REDACTED, placeholder(variable))


def _url(url: str, redactor: Redactor, *, variable: str | None) -> str:
    """The URL redacted, a token in its query (``?token=``, ``?api_key=`` ...) as the placeholder; a credential of
    an OAuth step (``?code=``, ``?client_secret=``) stays redacted: no token stands for it."""
    shown = redactor.url(url)
    base, mark, query = shown.partition("?")
    if variable is None or not mark:
        return shown
    parts = []
    for part in query.split("&"):
        name, equals, value = part.partition("=")
        if equals and value == REDACTED and name.lower() not in _NOT_TOKENS:
            part = f"{name}={placeholder(variable)}"
        parts.append(part)
    return base + mark + "&".join(parts)


def _meta_version(message: Message | None) -> str | None:
    meta = message.meta if message is not None and message.kind in (Kind.REQUEST, Kind.NOTIFICATION) else None
    version = meta.get(MetaKey.PROTOCOL_VERSION) if meta is not None else None
    return version if isinstance(version, str) else None


def _session_opened_by_server(exchange: HttpExchange, log: ExchangeLog) -> str | None:
    """The revision of the live 2025 session the request ran in: one the server issued and nobody had ended
    before it (a made-up, foreign or ended id is replayed as it was, since that is what the request tested)."""
    session = exchange.request.headers.get(HeaderKey.SESSION_ID)
    revision = log.session_revision(session) if session else None
    if revision is None:
        return None
    for other in log.http_exchanges():
        if other.time >= exchange.time:
            continue  # capture order is not always time order
        ended = other.request.method == "DELETE" and other.response is not None and other.response.status < 300
        if ended and other.request.headers.get(HeaderKey.SESSION_ID) == session:
            return None
    return revision


def _http_replay(exchange: HttpExchange, log: ExchangeLog | None, redactor: Redactor) -> Replay:
    request = exchange.request
    probe = exchange.probe if sent_by_assay(exchange) else None
    variable = _credential(probe)
    headers = tuple(
        (name, _header(name, value, redactor, variable=variable))
        for name, value in request.headers
        if name.lower() not in _NOT_REPLAYED
    )
    session = _session_opened_by_server(exchange, log) if log is not None else None
    response, ending = exchange.response, exchange.ending
    open_stream = (
        response is not None
        and response.is_event_stream
        and (ending is None or ending.reason is not EndReason.COMPLETE)
    )
    message = exchange.request_message
    return Replay(
        transport="http",
        revision=session or (log.exchange_revision(exchange.id) if log is not None else None),
        probe=probe.to_record() if probe is not None else None,
        method=request.method,
        url=_url(request.url, redactor, variable=variable),
        headers=headers,
        body=redactor.body(body_text(request.body, limit=BODY_LIMIT)) if request.body else None,
        modern=_meta_version(message) is not None,
        session=session is not None,
        open_stream=open_stream,
        not_json=message is not None and message.kind is Kind.UNPARSEABLE,
        invalid=probe is not None and probe.invalid,
    )


def _line_text(line: StdioLine, redactor: Redactor) -> str:
    return redactor.text(body_text(line.raw, limit=BODY_LIMIT)).rstrip("\n")


def _before(line: StdioLine, log: ExchangeLog) -> list[StdioLine]:
    """The lines of ``line``'s connection the client wrote before it, in order."""
    earlier = []
    for other in log.stdio_lines():
        if other is line or other.id == line.id:
            break
        if other.connection == line.connection and other.sender is Side.CLIENT:
            earlier.append(other)
    return earlier


def _command(connection: str, log: ExchangeLog, redactor: Redactor) -> str:
    """The command that started the server of ``connection``, as the tap or the suite recorded it."""
    for observation in reversed(log.observations(STARTED)):
        command = observation.data.get("command")
        if observation.connection == connection and isinstance(command, str):
            return redactor.text(command)
    return ""


def _stdio_replay(line: StdioLine, log: ExchangeLog, redactor: Redactor) -> Replay | None:
    """The line again (for an answer or anything else the server printed: the request line it answers, else the
    last line the client wrote before it), after the handshake its connection had made by then."""
    source: StdioLine | None = line
    earlier = _before(line, log)
    if line.sender is not Side.CLIENT:
        request = log.request_of(line.message)
        found = log.get(request.exchange) if request is not None else None
        if isinstance(found, StdioLine):
            source, earlier = found, _before(found, log)
        else:
            source = next((item for item in reversed(earlier) if item.message.method not in _HANDSHAKE), None)
            if source is not None:
                earlier = _before(source, log)
    if answered_by_assay(source):
        return None
    message = source.message if source is not None else None
    handshake: list[str] = []
    if message is None or message.method != "initialize":
        opened = [item for item in earlier if item.message.method == "initialize"]
        if opened:
            handshake.append(_line_text(opened[-1], redactor))
            notified = [item for item in earlier if item.message.method == "notifications/initialized"]
            handshake.append(_line_text(notified[-1], redactor) if notified else _INITIALIZED)
    revision = log.exchange_revision(source.id) if source is not None else None
    if revision is None and handshake:
        revision = log.exchange_revision(next(item.id for item in earlier if item.message.method == "initialize"))
    probe = source.probe if source is not None and sent_by_assay(source) else None
    answer = message is not None and message.kind is Kind.REQUEST and message.id_key is not None
    return Replay(
        transport="stdio",
        revision=revision,
        probe=probe.to_record() if probe is not None else None,
        command=_command(line.connection, log, redactor),
        handshake=tuple(handshake),
        line=_line_text(source, redactor) if source is not None else None,
        answer_id=json.dumps(message.id, separators=(",", ":")) if answer and message is not None else None,
        modern=not handshake and any(_meta_version(item.message) for item in [*earlier, *filter(None, [source])]),
        not_json=message is not None and message.kind is Kind.UNPARSEABLE,
        invalid=probe is not None and probe.invalid,
    )


_INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'


def replay_of(exchange: Exchange | None, log: ExchangeLog, redactor: Redactor) -> Replay | None:
    """The replay of the request ``exchange`` carried (or answered): ``None`` for what no request of the client's
    made (a process exit, an observation) and for an answer mcp-assay injected, which the server never saw."""
    if isinstance(exchange, HttpExchange):
        return None if answered_by_assay(exchange) else _http_replay(exchange, log, redactor)
    if isinstance(exchange, StdioLine):
        return _stdio_replay(exchange, log, redactor)
    return None


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
    replay = replay_of(exchange, ctx.log, redactor)
    return Evidence(
        summary=redactor.text(" · ".join(summary_parts)) or "the traffic as a whole",
        detail=redactor.text(detail),
        exchange=exchange.id if exchange is not None else None,
        message=message.index if message is not None else None,
        excerpt=redactor.text(excerpt),
        reproduction=shell_line(replay) if replay is not None else "",
        time=message.time if message is not None else getattr(exchange, "time", None),
        revision=revision,
        explored=_explored(exchange, message, ctx, redactor),
        replay=replay,
    )


def _explored(exchange: Exchange | None, message: Message | None, ctx: Context, redactor: Redactor) -> (
    ExploredInput | None
):  # fmt: skip
    """How ``run --explore`` came to the call ``exchange`` carries (or answers over stdio), when it reported it."""
    if isinstance(exchange, StdioLine) and exchange.sender is not Side.CLIENT and message is not None:
        request = ctx.log.request_of(message)
        exchange = ctx.log.get(request.exchange) if request is not None else exchange
    probe = exchange.probe if exchange is not None else None
    story = probe.explored if probe is not None else None
    if story is None or not story.reported:
        return None
    return ExploredInput(
        tool=story.tool, seed=story.seed, kind=story.kind, origin=story.origin,
        generated=redactor.text(story.generated), steps=tuple(redactor.text(step) for step in story.steps),
        stopped=story.stopped,
    )  # fmt: skip
