"""What one window of a long capture hands to the next: the facts later traffic is judged against.

A proxy session or a recording can run to millions of messages; judging them in windows keeps the
work and the memory of every window bounded. When a window closes its log checks run, their
findings are folded into the verdicts, and the window's traffic is dropped, all but what later
traffic still needs to be read correctly and is carried into the next window as context (judged
once already, never again):

* the most recent exchanges, so that a relation spanning the cut (a request and the cancellation
  that follows it) is still seen whole;
* requests still waiting for their answer (from the later half of the window: an answer may still
  come, so they are judged in the next window; older ones are judged as unanswered where they are);
* for every 2025 session and stdio connection still active, its ``initialize`` (which settles its
  revision and capabilities), and for every endpoint or connection its latest ``server/discover``;
* the latest walk of each list method per server (what it offers, for calls naming tools or prompts);
* the latest of each kind of the tool's own observations (the run's revision, a witness read ...),
  never the audit lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Exchange, HttpExchange, Observation
from mcp_assay.wire.traffic import ExchangeLog, endpoint_of

__all__ = ["LIST_METHODS", "Carried", "carried"]

LIST_METHODS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
AUDIT = "audit"


def _place(exchange: Exchange) -> str:
    if isinstance(exchange, HttpExchange):
        return endpoint_of(exchange)
    return exchange.connection


def _client_request(exchange: Exchange) -> Message | None:
    for message in exchange.messages:
        if message.kind is Kind.REQUEST and message.index == 0:
            return message
    return None


@dataclass(frozen=True, slots=True)
class Carried:
    """What the next window starts with."""

    exchanges: list[Exchange]
    """Everything carried, in capture order."""
    pending: frozenset[str]
    """Exchanges whose request still waited for its answer at the cut, recently enough that the answer
    may yet come: the log checks judge them in the next window, not in this one."""


def carried(log: ExchangeLog, *, tail: int) -> Carried:
    """The exchanges of ``log`` the next window needs (each at most once), and which of them wait."""
    items = list(log)
    keep: dict[str, Exchange] = {}
    recent = items[-tail:] if tail > 0 else []  # the sessions active at the cut
    active_scopes: set[str] = set()
    for exchange in recent:
        for message in exchange.messages:
            scope = log.session(message)
            if scope is not None:
                active_scopes.add(scope)
    discover: dict[str, list[Exchange]] = {}
    walks: dict[tuple[str, str], list[Exchange]] = {}
    observed: dict[str, Observation] = {}
    for exchange in items:
        if isinstance(exchange, Observation):
            if exchange.kind != AUDIT:
                observed[exchange.kind] = exchange
            continue
        request = _client_request(exchange)
        if request is None or request.method is None:
            continue
        place = _place(exchange)
        if request.method == "server/discover":
            discover[place] = _with_answers([exchange], request, log)
        elif request.method in LIST_METHODS:
            key = (request.method, place)
            cursor = request.params.get("cursor") if isinstance(request.params, dict) else None
            pages = [exchange, *_answer_exchanges(request, log)]
            walks[key] = [*walks.get(key, []), *pages] if cursor is not None else pages
        elif request.method == "initialize":
            scope = log.session(request)
            if scope is None or scope in active_scopes:
                for item in _with_answers([exchange], request, log):
                    keep[item.id] = item
    found: list[Exchange] = [*observed.values()]
    for group in (*discover.values(), *walks.values()):
        found.extend(group)
    for item in found:
        keep[item.id] = item
    order = {exchange.id: position for position, exchange in enumerate(items)}
    recent_half = len(items) // 2
    pending: set[str] = set()
    start = max(0, len(items) - tail) if tail > 0 else len(items)
    for request in log.unanswered():
        waiting = log.get(request.exchange)
        if waiting is not None and order.get(waiting.id, 0) >= recent_half:
            pending.add(waiting.id)
            start = min(start, order[waiting.id])
    for exchange in items[start:]:  # a waiting request and everything since: its answer may come next window
        keep[exchange.id] = exchange
    return Carried(sorted(keep.values(), key=lambda exchange: order.get(exchange.id, 0)), frozenset(pending))


def _answer_exchanges(request: Message, log: ExchangeLog) -> list[Exchange]:
    """The exchanges carrying the answers to ``request`` when they are not its own (stdio lines)."""
    found = []
    for answer in log.responses_to(request):
        if answer.exchange != request.exchange:
            item = log.get(answer.exchange)
            if item is not None:
                found.append(item)
    return found


def _with_answers(exchanges: Iterable[Exchange], request: Message, log: ExchangeLog) -> list[Exchange]:
    return [*exchanges, *_answer_exchanges(request, log)]
