"""Evidence: what a reader needs to find, understand and reproduce one finding.

A finding names a message or an exchange; the report needs text. :func:`make_evidence` turns the
subject into a redacted one-line summary, an excerpt of the message, the exchange id to look up
in the recording and, for what mcp-assay sent itself, the exact request again (a curl command
over HTTP, the JSON line over stdio), credentials redacted. A request made in a 2025 session is
replayed in a session of its own: the line opens one first, since the run's has ended.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from mcp_assay import __version__
from mcp_assay.jsonrpc import Kind, Message
from mcp_assay.protocol import ACCEPT_BOTH, Header, HeaderKey, MediaType
from mcp_assay.redaction import Redactor
from mcp_assay.shell import quote
from mcp_assay.spec.context import Context
from mcp_assay.verdicts import Evidence, ExploredInput, Side
from mcp_assay.wire import Exchange, HttpExchange, StdioLine, answered_by_assay, body_text, compact_json, sent_by_assay

__all__ = ["curl_command", "make_evidence"]

_NOT_REPLAYED = (HeaderKey.HOST, "content-length", "connection", "accept-encoding", "user-agent")
_PER_REQUEST = frozenset(
    {
        HeaderKey.SESSION_ID,
        HeaderKey.METHOD,
        HeaderKey.NAME,
        HeaderKey.PROTOCOL_VERSION,
        HeaderKey.CONTENT_TYPE,
        HeaderKey.ACCEPT,
        HeaderKey.LAST_EVENT_ID,
    }
)
"""Headers of one request (or of its session): the requests that open a fresh session for a replay leave them out."""
_SESSION_VARIABLE = "MCP_SESSION"
_REPLAY_CLIENT = {"name": "mcp-assay-replay", "version": __version__}
_TOKEN = re.compile(r"[A-Za-z0-9-]+")
_INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'


def _http_label(exchange: HttpExchange) -> str:
    request = exchange.request
    head = f"{request.method} {request.path}"
    if exchange.response is not None:
        content_type = exchange.response.content_type or "no content type"
        head += f" → {exchange.response.status} {content_type}"
    elif exchange.ending is not None:
        head += f" → {exchange.ending.reason.value}"
    return head


def _curl(method: str, url: str, headers: Iterable[tuple[str, str | None]], body: str | None, *head: str) -> str:
    """One curl command on one line (:func:`~mcp_assay.shell.quote`); a header whose value is ``None`` carries
    the fresh session id (``$MCP_SESSION``)."""
    words = [quote(part) for part in ("curl", "-sS", *head, "-X", method, url)]
    for name, value in headers:
        words += ["-H", quote(f"{name}: {value}") if value is not None else _session_header(name)]
    if body is not None:
        words += ["--data-binary", quote(body)]
    return " ".join(words)


def _session_header(name: str) -> str:
    """``name: $MCP_SESSION``, quoted so that the shell puts the fresh session id in."""
    if _TOKEN.fullmatch(name):
        return f'"{name}: ${_SESSION_VARIABLE}"'
    return quote(f"{name}: ") + f'"${_SESSION_VARIABLE}"'


def curl_command(exchange: HttpExchange, redactor: Redactor, *, session_revision: str | None = None) -> str:
    """The exchange's request as a curl command line, credentials redacted.

    With ``session_revision`` (the request ran in a 2025 session the server had opened, in that revision)
    the line first opens a fresh session the same way, ``initialize`` then ``notifications/initialized``,
    and sends the request in it: the run's own session is gone by the time anyone pastes the line."""
    request = exchange.request
    url = redactor.url(request.url)
    headers: list[tuple[str, str | None]] = [
        (name, redactor.header(name, value)) for name, value in request.headers if name.lower() not in _NOT_REPLAYED
    ]
    body = redactor.text(body_text(request.body, limit=100_000)) if request.body else None
    session = request.headers.get(HeaderKey.SESSION_ID)
    if session_revision is None or session is None:
        return _curl(request.method, url, headers, body, "-i")
    shared = [(name, value) for name, value in headers if name.lower() not in _PER_REQUEST]
    envelope: list[tuple[str, str | None]] = [
        (Header.CONTENT_TYPE, MediaType.JSON),
        (Header.ACCEPT, ACCEPT_BOTH),
    ]
    params = {"protocolVersion": session_revision, "capabilities": {}, "clientInfo": _REPLAY_CLIENT}
    initialize = json.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, separators=(",", ":")
    )
    opened = _curl("POST", url, [*shared, *envelope], initialize, "-D", "-", "-o", "/dev/null")
    in_session = [*shared, *envelope, (Header.PROTOCOL_VERSION, session_revision), (Header.SESSION_ID, None)]
    initialized = _curl("POST", url, in_session, _INITIALIZED, "-o", "/dev/null")
    in_fresh = [(name, None if name.lower() == HeaderKey.SESSION_ID else value) for name, value in headers]
    return " && ".join(
        [
            f"{_SESSION_VARIABLE}=$({opened} | grep -i '^mcp-session-id:' | cut -d' ' -f2 | tr -d '\\r')",
            initialized,
            _curl(request.method, url, in_fresh, body, "-i"),
        ]
    )


def _session_opened_by_server(exchange: HttpExchange, ctx: Context) -> str | None:
    """The revision of the live 2025 session the request ran in: one the server issued and nobody had ended
    before it (a made-up, foreign or ended id is replayed as it was, since that is what the request tested)."""
    session = exchange.request.headers.get(HeaderKey.SESSION_ID)
    revision = ctx.log.session_revision(session) if session else None
    if revision is None:
        return None
    for other in ctx.log.http_exchanges():
        if other.time >= exchange.time:
            continue  # capture order is not always time order
        ended = other.request.method == "DELETE" and other.response is not None and other.response.status < 300
        if ended and other.request.headers.get(HeaderKey.SESSION_ID) == session:
            return None
    return revision


def _reproduction(exchange: Exchange | None, message: Message | None, ctx: Context, redactor: Redactor) -> str:
    """The request mcp-assay sent, again: only for exchanges it sent itself (a peer's traffic is not replayed), and
    each hop's request of a gateway watched on both (sent again to the gateway or the upstream it went to)."""
    if isinstance(exchange, HttpExchange):
        if not sent_by_assay(exchange) and exchange.hop is None:
            return ""
        return curl_command(exchange, redactor, session_revision=_session_opened_by_server(exchange, ctx))
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
        explored=_explored(exchange, message, ctx, redactor),
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
