"""Whether a captured session ever met an MCP peer to judge, and if not, why.

A proxy whose upstream never answered, a tap whose server command does not exist or died before it
wrote a line: a report of such a session would list hundreds of requirements nobody could check and end
"conformant in part" or "nothing verified", blaming or passing a server that was never there. Such a
session is *not judged* (:attr:`~mcp_assay.report.model.Report.unjudged`, exit 3), and the reason is one
line naming what happened: the command and why it did not start, the exit code and the last lines of
stderr, the upstream address and the connection error, or that no MCP traffic passed at all.

:class:`PeerPresence` is fed every exchange of a capture as it is added, keeps a few counters and never
looks back, so it works on a capture of any length (the live session drops judged windows).
"""

from __future__ import annotations

import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Exchange, HttpExchange, Observation, ProcessExit, StdioLine

__all__ = ["START_FAILED", "STDERR_LINES", "UNREACHABLE", "PeerPresence"]

STDERR_LINES = 3
"""Lines of a server's stderr a not-judged reason quotes (its last ones)."""
UNREACHABLE = "upstream-unreachable"
"""The observation kind the mitmproxy addon records when it cannot connect to a server."""
START_FAILED = "start-failed"
"""The observation kind the stdio tap records when the server command cannot be started."""
MCP_STATUSES = frozenset({202, 204, 401, 403})
"""Answers without a JSON-RPC message that still come from an MCP server: an accepted notification or
response, an authorization challenge."""
LINE_CUT = 200


def _cut(text: str, limit: int = LINE_CUT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _exit_text(code: int | None) -> str:
    if code is None:
        return "ended (its exit code is unknown)"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


@dataclass
class PeerPresence:
    """What a capture saw of its peers, counted as exchanges arrive."""

    url: Callable[[str], str] = lambda url: url
    """How a URL may be shown (the session's redaction)."""
    server_lines: int = 0
    client_lines: int = 0
    exit: ProcessExit | None = None
    start_failed: str = ""
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    requests: int = 0
    """MCP requests (HTTP exchanges) mcp-assay did not make up."""
    answered: int = 0
    """HTTP exchanges the server answered as an MCP server may: a JSON-RPC message, an accepted notification
    (202, 204) or an authorization challenge (401, 403)."""
    other: dict[str, int] = field(default_factory=dict)
    """Any other answers (no JSON-RPC in them: a 404, a web page, a 502 ...), by status and reason."""
    where: str = ""
    """The URL of the first MCP request."""
    unanswered: str = ""
    """How the first unanswered request ended."""
    unreachable: dict[str, str] = field(default_factory=dict)
    """Server address -> the first error connecting to it."""
    refusals: int = 0

    def see(self, exchange: Exchange) -> None:
        if isinstance(exchange, StdioLine):
            if exchange.raw.strip() and not (exchange.probe is not None and exchange.probe.injected):
                if exchange.sender is Side.SERVER:
                    self.server_lines += 1
                else:
                    self.client_lines += 1
        elif isinstance(exchange, HttpExchange):
            self._http(exchange)
        elif isinstance(exchange, ProcessExit):
            self.exit = exchange
        elif isinstance(exchange, Observation):
            self._observation(exchange)

    def _http(self, exchange: HttpExchange) -> None:
        if exchange.probe is not None and exchange.probe.injected:
            return
        self.requests += 1
        self.where = self.where or exchange.request.url
        response = exchange.response
        if response is None:
            if not self.unanswered and exchange.ending is not None:
                self.unanswered = exchange.ending.detail or exchange.ending.reason.value
            return
        if response.status in MCP_STATUSES or any(m.sender is Side.SERVER for m in exchange.messages):
            self.answered += 1
        else:
            status = f"{response.status} {response.reason}".strip()
            self.other[status] = self.other.get(status, 0) + 1

    def _observation(self, item: Observation) -> None:
        if item.kind == "stderr" and isinstance(item.data.get("text"), str) and item.data["text"].strip():
            self.stderr.append(_cut(item.data["text"]))
        elif item.kind == START_FAILED:
            self.start_failed = f"{_cut(str(item.data.get('command', '')))}: {item.data.get('error', 'failed')}"
        elif item.kind == UNREACHABLE:
            self.refusals += 1
            address = str(item.data.get("address", "?"))
            self.unreachable.setdefault(address, _cut(str(item.data.get("error", ""))))

    # -- the verdict -----------------------------------------------------------------------------------
    def unjudged(self, kind: str = "") -> str | None:
        """Why there is nothing to judge (``None``: a peer answered). ``kind`` is the capture's (tap, proxy)."""
        if self.start_failed:
            return f"the server command could not be started ({self.start_failed})"
        if self.exit is not None or self.server_lines or self.client_lines or kind == "tap":
            return self._stdio_reason()
        return self._http_reason(kind)

    def exit_note(self) -> str | None:
        """What a judged tap session's report says of the server's exit, which is also the tap's own status."""
        if self.exit is None:
            return None
        return (
            f"the server {_exit_text(self.exit.code)}; the tap ended with the same status, as the client would "
            "have seen without it (the verdict's exit code is this report's own)"
        )

    def _stdio_reason(self) -> str | None:
        if self.server_lines:
            return None
        sent = f"the client sent {self.client_lines} line(s)" if self.client_lines else "the client sent nothing"
        ended = _exit_text(self.exit.code) if self.exit is not None else "ended"
        why = f"the server {ended} before it answered anything ({sent})"
        if self.stderr:
            why += "; its stderr ended: " + " | ".join(self.stderr)
        return why

    def _http_reason(self, kind: str) -> str | None:
        if self.answered:
            return None
        if self.other:
            answers = ", ".join(f"{status} × {count}" for status, count in sorted(self.other.items())[:4])
            hint = " (MCP endpoints are usually at /mcp)" if any(s[:3] in ("404", "405") for s in self.other) else ""
            return (
                f"{self.url(self.where)} answered {sum(self.other.values())} MCP request(s), never in JSON-RPC: "
                f"{answers}{hint}"
            )
        if len(self.unreachable) == 1:
            ((address, error),) = self.unreachable.items()
            return f"the upstream {address} never answered ({self.refusals} connection attempt(s): {error})"
        if self.unreachable:
            errors = "; ".join(f"{address}: {error}" for address, error in list(self.unreachable.items())[:3])
            return f"no server ever answered ({self.refusals} connection attempt(s) failed: {errors})"
        if self.requests:
            return (
                f"the upstream never answered: {self.requests} MCP request(s) to {self.url(self.where)} ended "
                f"without an answer ({_cut(self.unanswered or 'no response')})"
            )
        through = "through the proxy" if kind == "proxy" else "in this capture"
        return f"no MCP traffic passed {through} (no client sent an MCP request)"
