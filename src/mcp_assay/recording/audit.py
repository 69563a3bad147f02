"""The edge audit: one line per request that reached the edge, however it ended.

Auditing inside a handler misses every request the server refused before the handler ran; the
proxy and the stdio tap see them all. Each line names who asked (a token fingerprint or the
client's self-declared name), what was asked (request id, method, tool) and how it ended (HTTP
status and an outcome of ``ok``, ``tool-error``, ``protocol-error`` or ``no-result``).

A request id alone does not identify a request: ids only have to be unique among one sender's
requests in flight, so two principals may both send id ``0``. Lines are therefore keyed on the
principal, the id and the exchange that carried the request (:func:`audit_key`).

Everything here is a pure function of an :class:`~mcp_assay.wire.traffic.ExchangeLog`, so the proxy,
the tap, the active suite and an offline recording produce the same lines.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Container, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from mcp_assay.recording.redaction import REDACTED, fingerprint
from mcp_assay.vocabulary.protocol import HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import HttpExchange
from mcp_assay.wire.traffic import ExchangeLog

__all__ = [
    "OUTCOMES",
    "AuditLine",
    "AuditTrail",
    "audit_data",
    "audit_key",
    "audit_line",
    "audit_lines",
    "principal_of",
]


@dataclass(frozen=True, slots=True)
class AuditLine:
    """One request as seen at the edge: who, what, and how it ended."""

    exchange: str
    time: float
    request_id: Any
    method: str | None
    tool: str | None
    status: int | None
    outcome: str
    """``ok``, ``tool-error``, ``protocol-error`` or ``no-result``."""
    principal: str | None = None
    revision: str | None = None


OUTCOMES = ("ok", "tool-error", "protocol-error", "no-result")
"""``ok``: a result; ``tool-error``: a ``tools/call`` result with ``isError: true``;
``protocol-error``: a JSON-RPC error, or an HTTP error status without one; ``no-result``: the
request was never answered (disconnect, timeout, capture stopped)."""

_CREDENTIAL_HEADERS = (HeaderKey.AUTHORIZATION, "proxy-authorization", "x-api-key", "api-key", "x-auth-token")


def _client_name(info: Any) -> str | None:
    if isinstance(info, Mapping) and isinstance(info.get("name"), str) and info["name"]:
        return str(info["name"])
    return None


def principal_of(request: Message, log: ExchangeLog) -> str | None:
    """Who sent ``request``: ``token:sha256:…`` for a credential, else ``client:<clientInfo name>``.

    A credential identifies a principal; the client name is only what the client calls itself,
    so it is used when no credential was sent (stdio, unauthenticated HTTP)."""
    exchange = log.exchange_of(request)
    if isinstance(exchange, HttpExchange):
        for header in _CREDENTIAL_HEADERS:
            value = exchange.request.headers.get(header)
            if value:
                scheme, _, credential = value.partition(" ")
                secret = credential or scheme
                # a recording keeps no credential; its audit observations keep the fingerprint
                return "token:redacted" if REDACTED in secret else f"token:{fingerprint(secret)}"
    meta = request.meta
    name: str | None = _client_name(meta.get(MetaKey.CLIENT_INFO)) if meta is not None else None
    if name is None:
        initialize = log.initialize_request(request)
        if initialize is not None and isinstance(initialize.params, Mapping):
            name = _client_name(initialize.params.get("clientInfo"))
    return f"client:{name}" if name is not None else None


def _tool_name(request: Message) -> str | None:
    if request.method != "tools/call" or not isinstance(request.params, Mapping):
        return None
    name = request.params.get("name")
    return name if isinstance(name, str) else None


def _outcome(request: Message, responses: list[Message], status: int | None) -> str:
    for response in responses:
        if response.kind is Kind.ERROR:
            return "protocol-error"
        if response.kind is Kind.RESULT:
            result = response.result
            if request.method == "tools/call" and isinstance(result, Mapping) and result.get("isError") is True:
                return "tool-error"
            return "ok"
    if status is not None and status >= 400:
        return "protocol-error"
    return "no-result"


def audit_line(request: Message, log: ExchangeLog, *, principal: str | None = None) -> AuditLine:
    """The audit line for one client request, from what the log knows about its answer so far (``principal``:
    who sent it, when that is known already; else it is worked out from the request)."""
    exchange = log.exchange_of(request)
    status = None
    if isinstance(exchange, HttpExchange) and exchange.response is not None:
        status = exchange.response.status
    responses = log.responses_to(request)
    ident = request.id
    return AuditLine(
        exchange=request.exchange,
        time=request.time,
        request_id=None if ident is MISSING else ident,
        method=request.method,
        tool=_tool_name(request),
        status=status,
        outcome=_outcome(request, responses, status),
        principal=principal if principal is not None else principal_of(request, log),
        revision=log.revision(request),
    )


def _requests(log: ExchangeLog) -> Iterable[Message]:
    for message in log.messages():
        if message.sender is Side.CLIENT and message.kind is Kind.REQUEST:
            yield message


def audit_lines(log: ExchangeLog, *, skip: Container[str] = ()) -> list[AuditLine]:
    """One line per client request in the log, in the order the requests were sent, but for the requests of the
    exchanges in ``skip``.

    Where the log holds the audit observation written live for a request (a recording read
    back), its principal is kept: the live capture saw the credential, the recording does not."""
    recorded = {
        str(item.data.get("exchange")): item.data.get("principal")
        for item in log.observations("audit")
        if isinstance(item.data.get("principal"), str)
    }
    return [
        audit_line(request, log, principal=recorded.get(request.exchange))
        for request in _requests(log)
        if request.exchange not in skip
    ]


class AuditTrail:
    """The audit lines of a capture judged in windows: taken from each window before it is dropped.

    A long capture makes a line per request; the report keeps the latest :attr:`limit` of them and
    says how many earlier ones it left out (every one of them is in the recording)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self.lines: deque[AuditLine] = deque(maxlen=limit)
        self.total = 0

    def take(self, log: ExchangeLog, already: Iterable[str] = ()) -> None:
        """Add the lines of ``log``'s requests, leaving out exchanges taken from an earlier window."""
        for line in audit_lines(log, skip=set(already)):
            self.lines.append(line)
            self.total += 1

    def note(self) -> str | None:
        """What the report says when it left lines out."""
        left_out = self.total - len(self.lines)
        if left_out <= 0:
            return None
        return f"the audit list keeps the latest {len(self.lines)} of {self.total} requests; the recording has them all"


def audit_key(line: AuditLine) -> str:
    """A key that stays distinct when two principals reuse a request id."""
    return f"{line.principal or '-'}|{json.dumps(line.request_id)}|{line.exchange}"


def audit_data(line: AuditLine) -> dict[str, Any]:
    """The line as recorded (``observation`` record, kind ``audit``), with its key."""
    return {**asdict(line), "key": audit_key(line)}
