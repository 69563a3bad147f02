"""A finding's replay: the request again, as data to re-send and as one shell line that re-sends it.

Every finding whose evidence is a request, or an answer to one, carries a :class:`Replay`, whoever
sent the request (mcp-assay's own probe, or a client the proxy, the tap or a capture watched): what
was sent, where, and what a fresh peer needs first (a 2025 session opened the way the request's was,
a stdio handshake). ``mcp-assay replay`` re-sends it and judges the answer again; :func:`shell_line`
renders it as the command every report prints, one line that pastes into bash or zsh and shows what
came back:

* over HTTP a ``curl`` command, opening a fresh 2025 session first when the request ran in one the
  server had opened (the recorded session is gone by the time anyone pastes it);
* over stdio the server command fed the handshake its revision needs (``initialize`` and
  ``notifications/initialized`` in 2025-11-25, none in 2026-07-28), the line, and a marker request
  (``ping``, or ``server/discover`` in 2026-07-28) whose answer says the server has read the line:
  stdin stays open until the marker and the line's own answer have come back, or ten seconds have
  passed, since a server that reads end of input may exit before it answers.

Credentials never appear: a recorded credential becomes ``${MCP_ASSAY_TOKEN}`` (``${MCP_ASSAY_COOKIE}``
for cookies, ``${MCP_ASSAY_TOKEN_READER}`` for a behaviour case's principal ``reader``), which the shell
fills in from the environment and ``mcp-assay replay`` from ``-t`` or the environment. A credential a
probe made up on purpose stays ``[REDACTED]``: such a replay cannot be sent again as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from mcp_assay.vocabulary.protocol import ACCEPT_BOTH, Header, HeaderKey, MediaType, MetaKey
from mcp_assay.vocabulary.shell import one_line, quote

__all__ = [
    "COMMAND_VARIABLE",
    "COOKIE_VARIABLE",
    "MARKER_ID",
    "REPLAY_CLIENT",
    "SESSION_VARIABLE",
    "STARTED",
    "TOKEN_VARIABLE",
    "WAIT_SECONDS",
    "Replay",
    "marker_line",
    "placeholder",
    "principal_variable",
    "shell_line",
]

TOKEN_VARIABLE = "MCP_ASSAY_TOKEN"
"""The environment variable a replay takes a bearer token (or API key) from: ``run -t``'s twin."""
COOKIE_VARIABLE = "MCP_ASSAY_COOKIE"
"""The environment variable a replay takes a recorded ``Cookie`` header's value from."""
SESSION_VARIABLE = "MCP_SESSION"
"""The shell variable a replay keeps the id of the fresh 2025 session it opened in."""
COMMAND_VARIABLE = "MCP_ASSAY_COMMAND"
"""The environment variable naming the stdio server command when the capture did not record it (``run -c``'s twin)."""
MARKER_ID = "mcp-assay-replay-end"
"""The id of the request a stdio replay sends after the line: its answer says the server has read the line."""
WAIT_SECONDS = 10
"""How long a pasted stdio replay keeps the server's stdin open waiting for the answers."""
REPLAY_CLIENT = {"name": "mcp-assay-replay", "version": "1"}
STARTED = "server-started"
"""Observation kind: a stdio server process started (``data.command``: its command as shell words), recorded on its
connection by the tap and the suite, so a replay of a line sent to it starts the same command."""
_PLACEHOLDER = re.compile(r"\$\{(MCP_ASSAY_[A-Z0-9_]+|" + SESSION_VARIABLE + r")\}")
_DOUBLE_QUOTABLE = re.compile(r'[^"$`\\!]*')
_INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
_STREAM_SECONDS = 5


def principal_variable(principal: str) -> str:
    """Where a replay takes a behaviour case's principal's token from (``MCP_ASSAY_TOKEN_READER``)."""
    return f"{TOKEN_VARIABLE}_{re.sub(r'[^A-Za-z0-9]+', '_', principal).strip('_').upper()}"


def placeholder(variable: str) -> str:
    """How a replay's text names an environment variable it needs (``${MCP_ASSAY_TOKEN}``)."""
    return "${" + variable + "}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Replay:
    """What a finding's replay re-sends: built from the recorded request, redacted, credentials as placeholders."""

    transport: str
    """``http`` or ``stdio``."""
    revision: str | None = None
    """The revision the request spoke: a fresh 2025 session or a stdio handshake opens at it."""
    probe: Mapping[str, Any] | None = field(default=None, compare=False)
    """The recorded probe tag when mcp-assay sent the request itself (the rules pick probes out by it); ``None``
    for a request of the peers' own traffic."""
    # -- HTTP ------------------------------------------------------------------------------------------
    method: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    modern: bool = False
    """The request named its revision itself (2026-07-28 and later): no handshake or session comes first."""
    session: bool = False
    """The request ran in a 2025 session the server had opened: the replay opens a fresh one first."""
    open_stream: bool = False
    """The answer was an event stream still open when the capture ended: the replay stops reading after a while."""
    # -- stdio -----------------------------------------------------------------------------------------
    command: str = ""
    """The server command as shell words; empty when the capture did not record it."""
    handshake: tuple[str, ...] = ()
    """Lines the server is sent before the line: the connection's ``initialize`` and ``notifications/initialized``."""
    line: str | None = None
    """The line itself (``None``: the finding is about what the server printed before any request)."""
    answer_id: str | None = None
    """The line's id as JSON text when it is a request the server must answer."""
    not_json: bool = False
    """The line is not valid JSON (on purpose when :attr:`invalid`)."""
    invalid: bool = False
    """Malformed on purpose: mcp-assay sent it so."""

    @property
    def variables(self) -> tuple[str, ...]:
        """The environment variables the replay needs (the token, the cookie, an unrecorded command)."""
        found = {match.group(1) for text in self._texts() for match in _PLACEHOLDER.finditer(text)}
        if self.transport == "stdio" and not self.command:
            found.add(COMMAND_VARIABLE)
        return tuple(sorted(found - {SESSION_VARIABLE}))

    def _texts(self) -> list[str]:
        return [self.url, *(value for _, value in self.headers), self.body or "", self.line or "", *self.handshake]

    def redacted(self, text: Callable[[str], str]) -> Replay:
        """Every text the replay holds passed through ``text`` (a redactor's)."""
        return replace(
            self,
            url=text(self.url),
            headers=tuple((name, text(value)) for name, value in self.headers),
            body=text(self.body) if self.body is not None else None,
            command=text(self.command),
            handshake=tuple(text(line) for line in self.handshake),
            line=text(self.line) if self.line is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        """The fields that differ from their defaults (headers as ``[name, value]`` pairs)."""
        data: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if value == item.default and item.name != "transport":
                continue
            if item.name == "headers":
                value = [list(pair) for pair in value]
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            data[item.name] = value
        return data

    @classmethod
    def from_json(cls, data: Any) -> Replay | None:
        """Read back from a JSON report; ``None`` for anything that is not a replay."""
        if not isinstance(data, Mapping) or data.get("transport") not in ("http", "stdio"):
            return None

        def text(name: str) -> str:
            value = data.get(name)
            return value if isinstance(value, str) else ""

        def optional(name: str) -> str | None:
            value = data.get(name)
            return value if isinstance(value, str) else None

        pairs = data.get("headers")
        headers = tuple(
            (pair[0], pair[1])
            for pair in (pairs if isinstance(pairs, list) else [])
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)
        )
        handshake = data.get("handshake")
        probe = data.get("probe")
        return cls(
            transport=str(data["transport"]),
            revision=optional("revision"),
            probe=dict(probe) if isinstance(probe, Mapping) else None,
            method=text("method"),
            url=text("url"),
            headers=headers,
            body=optional("body"),
            modern=data.get("modern") is True,
            session=data.get("session") is True,
            open_stream=data.get("open_stream") is True,
            command=text("command"),
            handshake=tuple(
                line for line in (handshake if isinstance(handshake, list) else []) if isinstance(line, str)
            ),
            line=optional("line"),
            answer_id=optional("answer_id"),
            not_json=data.get("not_json") is True,
            invalid=data.get("invalid") is True,
        )


# -- shell words ---------------------------------------------------------------------------------------
def _word(text: str) -> str:
    """``text`` as one shell word on one line, each placeholder left for the shell to fill in."""
    parts = _PLACEHOLDER.split(text)
    if len(parts) == 1:
        return quote(text)
    literals = parts[0::2]
    if all(one_line(part) and _DOUBLE_QUOTABLE.fullmatch(part) for part in literals):
        return '"' + "".join(part if index % 2 == 0 else f"${part}" for index, part in enumerate(parts)) + '"'
    return "".join(quote(part) if index % 2 == 0 else f'"${part}"' for index, part in enumerate(parts) if part)


def _curl(method: str, url: str, headers: list[tuple[str, str]], body: str | None, *head: str) -> str:
    words = [quote(part) for part in ("curl", "-sS", *head, "-X", method)] + [_word(url)]
    for name, value in headers:
        words += ["-H", _word(f"{name}: {value}")]
    if body is not None:
        words += ["--data-binary", _word(body)]
    return " ".join(words)


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
"""Headers of one request (or of its session): the requests that open a fresh session leave them out."""


def _http_line(replay: Replay) -> str:
    head = ["-i", "--max-time", str(_STREAM_SECONDS)] if replay.open_stream else ["-i"]
    headers = list(replay.headers)
    if not replay.session or replay.revision is None:
        return _curl(replay.method, replay.url, headers, replay.body, *head)
    session = placeholder(SESSION_VARIABLE)
    shared = [(name, value) for name, value in headers if name.lower() not in _PER_REQUEST]
    envelope = [(str(Header.CONTENT_TYPE), str(MediaType.JSON)), (str(Header.ACCEPT), ACCEPT_BOTH)]
    params = {"protocolVersion": replay.revision, "capabilities": {}, "clientInfo": REPLAY_CLIENT}
    initialize = json.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, separators=(",", ":")
    )
    opened = _curl("POST", replay.url, [*shared, *envelope], initialize, "-D", "-", "-o", "/dev/null")
    in_session = [
        *shared,
        *envelope,
        (str(Header.PROTOCOL_VERSION), replay.revision),
        (str(Header.SESSION_ID), session),
    ]
    initialized = _curl("POST", replay.url, in_session, _INITIALIZED, "-o", "/dev/null")
    fresh = [(name, session if name.lower() == HeaderKey.SESSION_ID else value) for name, value in headers]
    return " && ".join(
        [
            f"{SESSION_VARIABLE}=$({opened} | grep -i '^mcp-session-id:' | cut -d' ' -f2 | tr -d '\\r')",
            initialized,
            _curl(replay.method, replay.url, fresh, replay.body, *head),
        ]
    )


def marker_line(revision: str | None, *, modern: bool) -> str:
    """The request a stdio replay sends after the line, which every server answers: ``ping``, or in a revision of
    the modern era (which has no ping) ``server/discover`` with the ``_meta`` every request carries there."""
    if modern and revision is not None:
        meta = {
            MetaKey.PROTOCOL_VERSION: revision,
            MetaKey.CLIENT_CAPABILITIES: {},
            MetaKey.CLIENT_INFO: REPLAY_CLIENT,
        }
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": MARKER_ID, "method": "server/discover"}
        message["params"] = {"_meta": {str(key): value for key, value in meta.items()}}
    else:
        message = {"jsonrpc": "2.0", "id": MARKER_ID, "method": "ping"}
    return json.dumps(message, separators=(",", ":"))


_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")


def _answered(answer_id: str) -> str:
    """A POSIX extended regular expression matching an answer to the request of that id (JSON text)."""
    return r'"id" *: *' + _ERE_SPECIAL.sub(r"\\\1", answer_id) + " *[,}]"


def _stdio_line(replay: Replay) -> str:
    """The server command fed the handshake, the line and the marker, stdin held open until both are answered."""
    command = replay.command or f'sh -c "${COMMAND_VARIABLE}"'
    words = [quote(line) for line in replay.handshake]
    prelude = ""
    if replay.line is not None:
        if replay.not_json:
            variable = "invalid_json_on_purpose" if replay.invalid else "invalid_json"
            prelude = f"{variable}={quote(replay.line)}; "
            words.append(f'"${variable}"')
        else:
            words.append(quote(replay.line))
    words.append(quote(marker_line(replay.revision, modern=replay.modern)))
    waits = [f'grep -q {quote(MARKER_ID)} "$out"']
    if replay.answer_id is not None:
        waits.append(f'grep -Eq {quote(_answered(replay.answer_id))} "$out"')
    ticks = WAIT_SECONDS * 10
    feed = (
        f"{{ printf '%s\\n' {' '.join(words)}; i=0; until {' && '.join(waits)} || [ $((i+=1)) -gt {ticks} ]; "
        "do sleep 0.1; done; }"
    )
    return f'( {prelude}out=$(mktemp) && {feed} | {command} | tee "$out"; rm -f "$out" )'


def shell_line(replay: Replay) -> str:
    """The replay as one command line that pastes into bash or zsh and shows what came back."""
    return _http_line(replay) if replay.transport == "http" else _stdio_line(replay)
