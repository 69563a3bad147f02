"""A finding's request sent again to a live peer, and judged again by the check that found it.

``mcp-assay replay`` is how a developer checks a fix. A :class:`~mcp_assay.vocabulary.replays.Replay` says what
was sent; :func:`resend` sends it the way its shell line does (a fresh 2025 session first, or the
stdio handshake its connection had made) and records what crosses the wire as the suite records its
own traffic; :func:`rejudge` hands that log to the engine with the finding's check alone, at the
finding's revision. The request keeps the probe tag it had, so a rule that picks out a probe by its
case finds it; a request of the peers' own traffic (a passive finding) is re-sent as the client's,
untagged, as the proxy or the tap saw it.

Over stdio a marker request follows the line (as in the pasted shell line): once it is answered the
server has read the line, so a line still unanswered a moment later (a second for one malformed on
purpose, the whole timeout for a request) was ignored, and is recorded so, as the suite records it.
The marker and its answer are left out of the judged log. A credential comes from ``-t`` or the
environment, never from the report, which only names where it went.
"""

from __future__ import annotations

import itertools
import json
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcp_assay.cases import discover, handshake
from mcp_assay.recording.redaction import REDACTED, Redactor
from mcp_assay.spec.engine import Scope, evaluate, registered_checks
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.judging import CLIENT_IS_US, SERVER_SIDES
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports import StreamControl
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.errors import AssayError, ConfigError, NoAnswer, ServerExited
from mcp_assay.vocabulary.protocol import ACCEPT_BOTH, Header, HeaderKey, MediaType
from mcp_assay.vocabulary.replays import (
    MARKER_ID,
    REPLAY_CLIENT,
    SESSION_VARIABLE,
    TOKEN_VARIABLE,
    Replay,
    marker_line,
    placeholder,
)
from mcp_assay.vocabulary.verdicts import Side, Source, Verdict
from mcp_assay.wire.jsonrpc import IdKey, Kind, Message, id_key, parse_message
from mcp_assay.wire.model import Exchange, Observation, Probe, StdioLine
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["NotReplayable", "Resent", "rejudge", "resend"]

MALFORMED_GRACE = 1.0
"""Seconds a line malformed on purpose may take to be answered once the marker after it was (the suite's wait)."""
STREAM_SECONDS = 5.0
"""How long a replay keeps reading an event stream the recorded one had left open."""
_NO_SUCH_ID: IdKey = ("str", "mcp-assay-replay-no-id")
"""What a line without a readable id waits for: no answer repeats it, so only an id-less error ends the wait."""
_PER_REQUEST = frozenset({HeaderKey.SESSION_ID, HeaderKey.METHOD, HeaderKey.NAME, HeaderKey.PROTOCOL_VERSION})


class NotReplayable(AssayError):
    """The finding's request cannot be sent again as it was (exit 3: nothing judged)."""


@dataclass(frozen=True, slots=True)
class Resent:
    """What crossed the wire when a replay was sent: every exchange, the re-sent request's among them."""

    log: ExchangeLog
    """The traffic to judge: the session's opening or the handshake, the request and what answered it."""
    request: str
    """The id of the exchange (or stdio line) that carried the re-sent request."""
    shown: tuple[Exchange, ...]
    """Everything that crossed the wire in order, the marker of a stdio replay included (for the reader)."""
    target: str
    """Where it went: the URL, or the command."""


# -- what goes on the wire ---------------------------------------------------------------------------
def _filled(text: str, values: Mapping[str, str | None], where: str) -> str:
    """``text`` with each placeholder replaced by its value; a missing value is a usage error naming its source."""
    for variable, value in values.items():
        if placeholder(variable) not in text:
            continue
        if value is None:
            how = (
                "-t/--token or MCP_ASSAY_TOKEN"
                if variable == TOKEN_VARIABLE
                else f"the environment variable {variable}"
            )
            raise ConfigError(
                f"the finding's request carried a credential in {where}; the report never keeps it: give it with {how}"
            )
        text = text.replace(placeholder(variable), value)
    if REDACTED in text:
        raise NotReplayable(
            f"the finding's request held a value the report does not keep in {where} (a credential mcp-assay made up, "
            "a principal's token, or a --secret): it cannot be sent again as it was"
        )
    return text


def _target_url(recorded: str, override: str | None) -> str:
    """``--url`` in place of the recorded endpoint; the recorded query is kept unless ``--url`` has its own."""
    if override is None:
        return recorded
    given, kept = urlsplit(override), urlsplit(recorded)
    return urlunsplit(given._replace(query=given.query or kept.query))


def _expected(message: Message) -> IdKey | None:
    """The id an answer to ``message`` repeats (``None``: a notification, which gets none)."""
    if message.kind is Kind.NOTIFICATION:
        return None
    return message.id_key or _NO_SUCH_ID


class _Recorder:
    """Collects what the transports record, in order, with ids of its own."""

    def __init__(self, *, keep_probes: bool) -> None:
        self.items: list[Exchange] = []
        self.keep_probes = keep_probes
        self._ids = itertools.count(1)

    def new_id(self, prefix: str) -> str:
        return f"r{prefix}{next(self._ids)}"

    def __call__(self, item: Exchange) -> None:
        if not self.keep_probes and not isinstance(item, Observation) and item.probe is not None:
            item = replace(item, probe=None)  # a passive finding's request is re-sent as the client's own
        self.items.append(item)

    def observe(self, kind: str, **data: Any) -> None:
        self.items.append(Observation(id=self.new_id("o"), time=time.time(), kind=kind, data=data))


async def _send_http(
    replay: Replay,
    url: str,
    headers: list[tuple[str, str]],
    body: bytes,
    probe: Probe,
    record: _Recorder,
    timeout: float,
) -> str:
    transport = HttpTransport(
        url, credentials=Credentials(), recorder=record, new_id=record.new_id, limiter=RateLimiter(),
        timeout=timeout, connection="replay",
    )  # fmt: skip
    try:
        if replay.session and replay.revision is not None:
            headers = await _open_session(transport, replay.revision, headers, record, timeout)
        message = parse_message(body, sender=Side.CLIENT, time=time.time())
        stream = StreamControl(budget=STREAM_SECONDS) if replay.open_stream else None
        try:
            reply = await transport.send(
                body, probe=probe, expect=_expected(message), headers=dict(headers), method=replay.method,
                allow_refusal=True, stream=stream, timeout=timeout,
            )  # fmt: skip
        except NoAnswer as exc:
            record.observe("no-answer", detail=str(exc), exchange=exc.exchange)
            return exc.exchange or ""
        return reply.exchange
    finally:
        await transport.close()


async def _open_session(
    transport: HttpTransport, revision: str, headers: list[tuple[str, str]], record: _Recorder, timeout: float
) -> list[tuple[str, str]]:
    """A fresh 2025 session, opened as the shell line opens it; the request's headers with its id in them."""
    shared = {name: value for name, value in headers if name.lower() not in (*_PER_REQUEST, "content-type", "accept")}
    envelope = {**shared, str(Header.CONTENT_TYPE): str(MediaType.JSON), str(Header.ACCEPT): ACCEPT_BOTH}
    params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": REPLAY_CLIENT}
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    reply = await transport.send(
        _encode(initialize), probe=Probe.of(handshake.INITIALIZE), expect=id_key(0), headers=envelope,
        allow_refusal=True, timeout=timeout,
    )  # fmt: skip
    session = reply.headers.get(HeaderKey.SESSION_ID)
    if not session:
        raise NotReplayable(f"the server opened no session when asked to (initialize answered {reply.describe()})")
    in_session = {**envelope, str(Header.PROTOCOL_VERSION): revision, str(Header.SESSION_ID): session}
    notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await transport.send(
        _encode(notified), probe=Probe.of(handshake.INITIALIZED), expect=None, headers=in_session,
        allow_refusal=True, timeout=timeout,
    )  # fmt: skip
    placeholder_value = placeholder(SESSION_VARIABLE)
    return [
        (name, session if name.lower() == HeaderKey.SESSION_ID or value == placeholder_value else value)
        for name, value in headers
    ]


def _encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


async def _send_stdio(replay: Replay, argv: Sequence[str], probe: Probe, record: _Recorder, timeout: float) -> str:
    """The handshake, the line and the marker; returns the line's id (``""`` when there is no line)."""
    transport = StdioTransport(argv, recorder=record, new_id=record.new_id, connection="replay", timeout=timeout)
    await transport.start()
    try:
        try:
            for text in replay.handshake:
                opening = parse_message(text.encode(), sender=Side.CLIENT, time=time.time())
                case = handshake.INITIALIZE if opening.method == "initialize" else handshake.INITIALIZED
                expect = _expected(opening)
                await transport.send(
                    text.encode(), probe=Probe.of(case), expect=expect, wait=expect is not None, timeout=timeout
                )
            sent = ""
            message: Message | None = None
            if replay.line is not None:
                line = await transport.write(replay.line.encode("utf-8", "surrogateescape"), probe=probe)
                sent, message = line.id, line.message
        except (NoAnswer, ServerExited) as exc:
            raise NotReplayable(f"the replay could not reach the line: {exc}") from exc
        marker_case = discover.DISCOVER if replay.modern else handshake.PING
        try:
            await transport.send(
                marker_line(replay.revision, modern=replay.modern).encode(), probe=Probe.of(marker_case),
                expect=("str", MARKER_ID), timeout=timeout,
            )  # fmt: skip
        except (NoAnswer, ServerExited):
            pass  # what came back (or did not) is judged as it is
        if message is not None and _expected(message) is not None:
            grace = MALFORMED_GRACE if probe.invalid or message.kind is not Kind.REQUEST else timeout
            if not await _answered(transport, record, sent, message, grace):
                what = "the line that is not valid JSON" if message.kind is Kind.UNPARSEABLE else message.describe()
                detail = f"the server never answered {what} (the marker request sent after it was answered)"
                record.observe("no-answer", detail=detail, exchange=sent)
        return sent
    finally:
        await transport.close(grace=2.0)


async def _answered(transport: StdioTransport, record: _Recorder, sent: str, message: Message, grace: float) -> bool:
    """Whether a server line answering ``message`` (sent as line ``sent``) arrives within ``grace`` seconds."""
    expect = _expected(message)
    deadline = time.monotonic() + grace
    while True:
        after = list(itertools.dropwhile(lambda item: item.id != sent, record.items))
        answers = [
            item.message for item in after if isinstance(item, StdioLine) and item.sender is Side.SERVER
        ]  # fmt: skip
        # what the suite's stdio transport takes for an answer: the id, or an error without one
        if any(_answers(answer, expect) for answer in answers):
            return True
        if time.monotonic() >= deadline or not transport.alive:
            return False
        await transport.observe(min(0.1, max(0.0, deadline - time.monotonic())))


def _answers(message: Message, expect: IdKey | None) -> bool:
    if not message.kind.is_response or message.id == MARKER_ID:
        return False
    return message.id_key == expect or (message.kind is Kind.ERROR and message.id_key is None)


def _without_marker(items: Sequence[Exchange]) -> list[Exchange]:
    """The stdio marker request and its answer taken out: they are mcp-assay's, not what the finding judged."""
    return [item for item in items if not (isinstance(item, StdioLine) and item.message.id == MARKER_ID)]


async def resend(
    replay: Replay,
    *,
    url: str | None = None,
    command: str | None = None,
    token: str | None = None,
    environment: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> Resent:
    """Send ``replay`` to the live peer (``url`` or ``command`` in place of the recorded one) and record it all; its
    placeholders are filled with ``token`` (``${MCP_ASSAY_TOKEN}``) and from ``environment`` (the others)."""
    given = environment or {}
    values: dict[str, str | None] = {name: given.get(name) or None for name in replay.variables}
    values[TOKEN_VARIABLE] = token
    probe = Probe.from_record(replay.probe) if replay.probe is not None else None
    record = _Recorder(keep_probes=probe is not None)
    own = probe if probe is not None else Probe.of(handshake.PING)  # untagged again by the recorder
    if replay.transport == "http":
        target = _filled(_target_url(replay.url, url), values, "the URL")
        values_in = {**values, SESSION_VARIABLE: placeholder(SESSION_VARIABLE)}
        headers = [(name, _filled(value, values_in, f"the {name} header")) for name, value in replay.headers]
        body = _filled(replay.body or "", values, "the body").encode("utf-8", "surrogateescape")
        request = await _send_http(replay, target, headers, body, own, record, timeout)
        return Resent(ExchangeLog(record.items), request, tuple(record.items), target)
    words = command or replay.command
    if not words:
        raise ConfigError("the report does not name the server's command (an older capture): give it with --command")
    argv = shlex.split(words)
    if not argv:
        raise ConfigError("--command is empty")
    if replay.line is not None:
        replay = replace(replay, line=_filled(replay.line, values, "the line"))
    replay = replace(replay, handshake=tuple(_filled(text, values, "the handshake") for text in replay.handshake))
    request = await _send_stdio(replay, argv, own, record, timeout)
    return Resent(ExchangeLog(_without_marker(record.items)), request, tuple(record.items), words)


def rejudge(
    resent: Resent,
    check_name: str,
    spec: SpecSet,
    *,
    revision: str | None,
    active: bool,
    redactor: Redactor | None = None,
) -> Verdict:
    """The finding's check alone over the re-sent traffic: at the finding's revision when it had one (a suite run's
    finding, judged as the run judges a server), else over whatever the traffic carries (a passive one)."""
    checks = [check for check in registered_checks() if check.name == check_name]
    if not checks:
        raise NotReplayable(f"this mcp-assay has no check named {check_name} (the report is from another version)")
    known = spec.get(revision) if revision is not None else None
    scope = Scope(revisions=(known,), sides=SERVER_SIDES, sides_reason=CLIENT_IS_US) if known is not None else Scope()
    source = Source.ACTIVE if active else Source.PASSIVE
    (verdict,) = evaluate(resent.log, spec, checks=checks, scope=scope, source=source, redactor=redactor)
    return verdict
