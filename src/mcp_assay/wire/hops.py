"""The two hops of a gateway, matched: what each request of the client caused upstream, and what came back.

mcp-assay can watch a gateway from both sides at once (:class:`~mcp_assay.wire.model.Hop`): the *front* hop
between the client and the gateway, the *back* hop between the gateway and the upstream server. The
same rules judge each hop as if it were the only one; what only the two together show (a notification
the upstream sent that never reached the client, a cancellation naming the client's id upstream, an
error whose code changed on the way) needs each front request matched to what it caused on the back.

A :class:`Correlation` does that matching incrementally, as exchanges finish, in time linear in the
traffic. A front request is matched to the back request it caused by

* its method (a gateway may not turn one method into another),
* its era (a request naming its version in ``_meta``, or one of a 2025 session) unless the params match exactly,
* its params after the rewrites a gateway is allowed: ``_meta`` (progress tokens, the version envelope),
  a ``cursor`` the gateway maps, the ``requestId`` of a cancellation, and a tool renamed by a prefix
  (learned from the ``tools/list`` pairs: a front name ``srv_x`` for an upstream ``x`` with the same
  ``inputSchema``); an exact match is preferred to one of the same method with other params,
* time order: the back request starts while the front one is open (a notification may follow its
  front twin by up to :data:`NOTICE_DELAY` seconds, since a gateway acknowledges it first),
* and each back request is claimed at most once.

Back requests no front request claims are the gateway's own (its ``initialize``, its pings). Each
:class:`Relay` then holds both sides: the requests, their answers, and what each stream carried
(notifications, server-to-client requests), so a rule compares them side by side. Over stdio the
answers of a request are the lines that answer its id on its connection.

Memory is bounded: a relay is kept for :data:`KEEP` seconds of traffic (and at most
:data:`MAX_RELAYS` of them), unclaimed back requests and unmatched notifications likewise.
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import IdKey, Kind, Message, id_key
from mcp_assay.wire.model import EndReason, Exchange, Hop, HttpExchange, StdioLine
from mcp_assay.wire.traffic import MessageKey, message_key

__all__ = [
    "KEEP",
    "MAX_RELAYS",
    "NOTICE_DELAY",
    "Call",
    "Correlation",
    "Relay",
    "canonical",
    "finish_order",
    "finished_at",
    "params_shape",
    "relayed_probes",
    "request_id",
]

SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
"""The ``_meta`` key naming the ``subscriptions/listen`` request a notification belongs to."""
SLACK = 0.05
"""Seconds a back request may seem to start before its front twin (the hops' clocks are one clock, but a
capture stamps a request when it has read it)."""
NOTICE_DELAY = 5.0
"""Seconds a gateway may take to pass a client's notification on after it acknowledged it."""
KEEP = 120.0
"""Seconds of traffic a relay, an unclaimed back request or an unmatched notification is kept for."""
PENDING = 500
"""Calls of one method kept waiting for their twin on the other hop (the oldest give up first): what keeps matching
linear however many requests a gateway answers itself or sends of its own."""
MAX_RELAYS = 20_000
Score = tuple[bool, bool, bool, bool, bool, float]
"""How well a back call fits a front one (:meth:`Correlation._score`): the greatest wins."""
"""Relays kept at most (the oldest go first), whatever the traffic."""


@dataclass(slots=True, eq=False)
class Call:
    """One request or notification on one hop, with what came back for it."""

    hop: Hop
    request: Message
    exchange: Exchange
    start: float
    end: float | None = None
    """When its answer came (or its exchange ended); ``None`` while a stdio request waits."""
    answers: list[Message] = field(default_factory=list)
    """The responses to it (a result or an error, normally one)."""
    stream: list[Message] = field(default_factory=list)
    """What else the server sent while it was open, in order: notifications and server-to-client requests."""
    ending: EndReason | None = None
    """How its HTTP exchange ended (``None`` over stdio)."""

    @property
    def method(self) -> str:
        return self.request.method or ""

    @property
    def era(self) -> str:
        """``modern`` when the request names its version in ``_meta`` (2026), else ``handshake``."""
        meta = self.request.meta
        return "modern" if meta is not None and "io.modelcontextprotocol/protocolVersion" in meta else "handshake"

    @property
    def is_notification(self) -> bool:
        return self.request.kind is Kind.NOTIFICATION

    @property
    def session(self) -> str | None:
        """The 2025 session (HTTP) or the connection (stdio) the call belongs to."""
        exchange = self.exchange
        if isinstance(exchange, HttpExchange):
            return exchange.request.headers.get(HeaderKey.SESSION_ID)
        return exchange.connection if isinstance(exchange, StdioLine) else None

    @property
    def credential(self) -> str | None:
        """The credential the request carried (its ``Authorization`` header), for telling principals apart."""
        exchange = self.exchange
        if isinstance(exchange, HttpExchange):
            return exchange.request.headers.get(HeaderKey.AUTHORIZATION)
        return None

    @property
    def open_until(self) -> float:
        """Until when the call could carry what belongs to it (its end, or for ever while it waits)."""
        return self.end if self.end is not None else float("inf")


@dataclass(slots=True, eq=False)
class Relay:
    """A request (or notification) of the client on the front hop, and what the gateway sent upstream for it."""

    front: Call
    back: Call | None = None
    exact: bool = False
    """The back request's params are the front's after the allowed rewrites."""

    @property
    def method(self) -> str:
        return self.front.method


def params_shape(method: str, params: Any, renames: dict[str, str] | None = None) -> Any:
    """What of a request's params a gateway must pass on unchanged: ``_meta``, a ``cursor``, a cancellation's
    ``requestId`` and a progress notification's ``progressToken`` left out, a renamed tool under its upstream name."""
    if not isinstance(params, dict):
        return params
    shape = {key: value for key, value in params.items() if key not in ("_meta", "cursor")}
    if method == "notifications/cancelled":
        shape.pop("requestId", None)
    elif method == "notifications/progress":
        shape.pop("progressToken", None)
    elif method == "tools/call" and renames and isinstance(shape.get("name"), str):
        shape["name"] = renames.get(shape["name"], shape["name"])
    return shape


def canonical(value: Any) -> str:
    """A JSON value as text that two equal values share: keys sorted, a number written as the number it is (a relay
    that re-encodes ``1`` as ``1.0`` has changed nothing)."""
    return json.dumps(_numbers(value), sort_keys=True, ensure_ascii=False, default=str)


def _numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers(item) for item in value]
    return value


def _envelope(message: Message) -> Any:
    """The ``jsonrpc`` member a request was sent with: a probe's ``"1.0"`` passed on is twinned with its own copy
    upstream, not with a well-formed request of the same method."""
    payload = message.payload
    return payload.get("jsonrpc") if isinstance(payload, dict) else None


def _answer_time(exchange: HttpExchange) -> float:
    if exchange.ending is not None:
        return max(exchange.ending.time, exchange.time)
    if exchange.response is not None:
        return exchange.response.time
    return exchange.time


class Correlation:
    """Both hops of a gateway, matched as exchanges finish (see the module)."""

    def __init__(self, *, keep: float | None = KEEP) -> None:
        self.keep = keep
        """Seconds of traffic kept (``None``: everything, for a window of a log that is judged whole)."""
        self.relays: OrderedDict[int, Relay] = OrderedDict()
        """Every front request or notification still kept, in the order it was seen, by its call's id."""
        self.renames: dict[str, str] = {}
        """Tools the gateway renamed: the client's name -> the upstream's."""
        self.prefixes: set[str] = set()
        """The prefixes those renames put before the upstream's names (a list seen in part shows the rule)."""
        self.own: deque[Call] = deque()
        """Back calls no front request claimed (the gateway's own), kept :data:`KEEP` seconds."""
        self._unclaimed: dict[str, deque[Call]] = {}
        """Back calls not claimed yet, by method, in the order they started."""
        self._waiting: dict[str, deque[Relay]] = {}
        """Front calls whose back twin has not come yet, by method (it may finish after them, or follow them)."""
        self._waited: set[int] = set()
        self._sessions: dict[str, str | None] = {}
        """Each client session (or connection) and the upstream one its requests went to, from exact pairs."""
        """The relays ever put in :attr:`_waiting` (each once)."""
        self._call_of: dict[MessageKey, Call] = {}
        """The call a message belongs to (its request, an answer, a stream item)."""
        self._relay_of: dict[int, Relay] = {}
        """The relay of a back call, by the call's id."""
        self._open_stdio: dict[tuple[Hop, str, IdKey], Call] = {}
        """stdio requests waiting for their answer, by hop, connection and id."""
        self._by_front_id: dict[tuple[str | None, IdKey], Relay] = {}
        """Front requests by session (or connection) and id: what a client's cancellation names."""
        self._twins: OrderedDict[str, Exchange] = OrderedDict()
        """Each exchange's twin on the other hop, both ways, by exchange id."""
        self._loose: dict[tuple[Hop, tuple[str, bytes]], deque[HttpExchange]] = {}
        """Exchanges without a request to match by (see :meth:`_pair_loose`), waiting for their twin."""
        self._answers: OrderedDict[tuple[Hop, str | None, IdKey], Message] = OrderedDict()
        """Clients' answers to server-to-client requests, by hop, session (or connection) and id."""
        self.latest = 0.0
        """The latest time seen (what is older than :data:`KEEP` seconds before it is let go)."""

    # -- feeding -----------------------------------------------------------------------------------
    def add(self, exchange: Exchange) -> None:
        """Take in one finished exchange of either hop (others are ignored)."""
        hop = exchange.hop
        if hop is None:
            return
        if isinstance(exchange, HttpExchange):
            self.latest = max(self.latest, _answer_time(exchange))
            self._add_http(hop, exchange)
        elif isinstance(exchange, StdioLine):
            self.latest = max(self.latest, exchange.time)
            self._add_line(hop, exchange)
        self._forget()

    def _add_http(self, hop: Hop, exchange: HttpExchange) -> None:
        request = exchange.request_message
        if request is not None and request.kind.is_response and request.id_key is not None:
            self._posted_answer(hop, exchange.request.headers.get(HeaderKey.SESSION_ID), request)
        if request is None or request.kind not in (Kind.REQUEST, Kind.NOTIFICATION):
            self._pair_loose(hop, exchange)
            return
        call = Call(hop, request, exchange, exchange.time, _answer_time(exchange))
        call.ending = exchange.ending.reason if exchange.ending is not None else None
        self._call_of[message_key(request)] = call
        for message in exchange.response_messages:
            self._call_of[message_key(message)] = call
            if message.kind.is_response:
                call.answers.append(message)
            elif message.kind in (Kind.NOTIFICATION, Kind.REQUEST):
                call.stream.append(message)
        self._arrived(call, complete=True)

    def _add_line(self, hop: Hop, line: StdioLine) -> None:
        message = line.message
        connection = line.connection
        if line.sender is Side.CLIENT and message.kind in (Kind.REQUEST, Kind.NOTIFICATION):
            call = Call(hop, message, line, line.time, line.time if message.kind is Kind.NOTIFICATION else None)
            self._call_of[message_key(message)] = call
            if message.kind is Kind.REQUEST and message.id_key is not None:
                self._open_stdio[(hop, connection, message.id_key)] = call
            self._arrived(call, complete=message.kind is Kind.NOTIFICATION)
            return
        if line.sender is Side.CLIENT and message.kind.is_response and message.id_key is not None:
            self._posted_answer(hop, connection, message)
            return
        if line.sender is not Side.SERVER:
            return
        if message.kind.is_response and message.id_key is not None:
            key = (hop, connection, message.id_key)
            asked = self._open_stdio.pop(key) if key in self._open_stdio else None
            if asked is not None:
                asked.answers.append(message)
                asked.end = line.time
                self._call_of[message_key(message)] = asked
                self._arrived(asked, complete=True)
            return
        if message.kind in (Kind.NOTIFICATION, Kind.REQUEST):
            owner = self._stdio_owner(hop, connection, message)
            if owner is not None:
                owner.stream.append(message)
                self._call_of[message_key(message)] = owner

    def _pair_loose(self, hop: Hop, exchange: HttpExchange) -> None:
        """An exchange whose body is no request (an answer the client posts, a body that is not JSON-RPC, a batch, a
        GET stream): its twin on the other hop is the one with the same method and body, sent while it was open."""
        key = (exchange.request.method, _without_id(exchange.request.body))
        other = Hop.BACK if hop is Hop.FRONT else Hop.FRONT
        waiting = self._loose.get((other, key))
        if waiting:
            for candidate in waiting:
                front, back = (exchange, candidate) if hop is Hop.FRONT else (candidate, exchange)
                if front.time - SLACK <= back.time <= _answer_time(front) + SLACK:
                    waiting.remove(candidate)
                    self._twin(front, back)
                    return
        mine = self._loose.setdefault((hop, key), deque())
        mine.append(exchange)
        if len(mine) > PENDING:
            mine.popleft()
        if len(self._loose) > MAX_RELAYS:
            self._loose.pop(next(iter(self._loose)))

    def _twin(self, front: Exchange, back: Exchange) -> None:
        self._twins[front.id] = back
        self._twins[back.id] = front
        while len(self._twins) > 2 * MAX_RELAYS:
            self._twins.popitem(last=False)

    def twin_of(self, exchange: str) -> Exchange | None:
        """The exchange of the other hop that carried the same request (by its id), when one did."""
        return self._twins.get(exchange)

    def _posted_answer(self, hop: Hop, session: str | None, answer: Message) -> None:
        """A client's answer to a server-to-client request, kept to be found by that request's id."""
        assert answer.id_key is not None
        self._answers[(hop, session, answer.id_key)] = answer
        while len(self._answers) > MAX_RELAYS:
            self._answers.popitem(last=False)

    def answer_to(self, hop: Hop, session: str | None, ident: IdKey) -> Message | None:
        """The client's answer (on ``hop``, in that session or connection) to the server's request with ``ident``."""
        return self._answers.get((hop, session, ident))

    def _stdio_owner(self, hop: Hop, connection: str, message: Message) -> Call | None:
        """The open stdio request a server's notification belongs to: the one its progress token names, else the
        only one open on the connection (``None`` when that cannot be told)."""
        open_calls = [call for (side, conn, _), call in self._open_stdio.items() if side is hop and conn == connection]
        token = message.params.get("progressToken") if isinstance(message.params, dict) else None
        if token is not None:
            for call in open_calls:
                meta = call.request.meta
                if meta is not None and meta.get("progressToken") == token:
                    return call
        meta = message.meta
        listen = id_key(meta.get(SUBSCRIPTION)) if isinstance(meta, dict) and SUBSCRIPTION in meta else None
        if listen is not None:
            return self._open_stdio.get((hop, connection, listen))
        return open_calls[0] if len(open_calls) == 1 else None

    def _arrived(self, call: Call, *, complete: bool) -> None:
        """A call is known (``complete``: its span is known too): match it with its twin on the other hop."""
        if call.hop is Hop.BACK:
            if id(call) in self._relay_of:
                return
            unclaimed = self._unclaimed.setdefault(call.method, deque())
            if self._claim_waiting(call):
                if call in unclaimed:  # a stdio request listed when it was sent, claimed once answered
                    unclaimed.remove(call)
            elif call not in unclaimed:
                unclaimed.append(call)
                if len(unclaimed) > PENDING:
                    self.own.append(unclaimed.popleft())
            return
        relay = self.relays.get(id(call))
        if relay is None:
            relay = Relay(front=call)
            self.relays[id(call)] = relay
            if call.request.kind is Kind.REQUEST and call.request.id_key is not None:
                self._by_front_id[(call.session, call.request.id_key)] = relay
        if relay.back is None and complete:
            # a request answered has its twin upstream already; a notice, or a request the client gave up on, may
            # see its twin only later: for those only an exact twin is taken now, any other when none came (settle)
            self._claim(relay, weak=not (call.is_notification or not call.answers))
        if relay.back is None and id(relay) not in self._waited:
            self._waited.add(id(relay))
            waiting = self._waiting.setdefault(call.method, deque())
            waiting.append(relay)
            if len(waiting) > PENDING:
                self._settle_one(waiting.popleft())

    def _fits(self, relay: Relay, back: Call) -> bool:
        front = relay.front
        if back.start < front.start - SLACK:
            return False
        if front.is_notification:
            return back.start <= front.start + NOTICE_DELAY
        if front.answers:  # a relayed answer came back upstream first: its request was read before the client's end
            return back.start < front.open_until
        return back.start <= front.open_until + SLACK

    def _claim(self, relay: Relay, *, weak: bool) -> None:
        """Give a front call the unclaimed back call that fits it best (:meth:`_score`); ``weak``: one whose params
        differ too (same method, same era)."""
        candidates = self._unclaimed.get(relay.method)
        if not candidates:
            return
        wanted = params_shape(relay.method, relay.front.request.params, self.renames)
        best: tuple[Score, Call] | None = None
        for back in candidates:
            if not self._fits(relay, back):
                continue
            score = self._score(relay, back, wanted)
            if score is not None and (weak or score[0]) and (best is None or score > best[0]):
                best = (score, back)
        if best is not None:
            candidates.remove(best[1])
            relay.exact = best[0][0]
            self._pair(relay, best[1])

    def _claim_waiting(self, back: Call) -> bool:
        """A back call that came after its front twin (a notification passed on late, or a front call the client
        gave up on first): pair it with the waiting front call whose params it has (others wait to be settled)."""
        waiting = self._waiting.get(back.method)
        if not waiting:
            return False
        best: tuple[Score, Relay] | None = None
        for relay in waiting:
            if relay.back is not None or not self._fits(relay, back):
                continue
            wanted = params_shape(relay.method, relay.front.request.params, self.renames)
            score = self._score(relay, back, wanted)
            open_stdio = relay.front.end is None
            if score is not None and (score[0] or open_stdio) and (best is None or score > best[0]):
                best = (score, relay)
        if best is None:
            return False
        waiting.remove(best[1])
        best[1].exact = best[0][0]
        self._pair(best[1], back)
        return True

    def settle(self) -> None:
        """Pair every front call still waiting with the best back call left that fits it, params or not (a gateway
        may rewrite what it passes on): what a window's rules read once it is whole."""
        for waiting in self._waiting.values():
            while waiting:
                self._settle_one(waiting.popleft())

    def _settle_one(self, relay: Relay) -> None:
        self._waited.discard(id(relay))
        if relay.back is None:
            self._claim(relay, weak=True)

    def _score(self, relay: Relay, back: Call, wanted: Any) -> Score | None:
        """How well a back call fits a front one of the same method: params equal after the allowed rewrites, same
        era, the upstream session the client's session maps to (once one pair showed it), the same cursor and the
        same id (a gateway that keeps them), and the nearer in time; ``None`` when it does not fit (other params in
        another era)."""
        exact = params_shape(back.method, back.request.params) == wanted and _envelope(back.request) == _envelope(
            relay.front.request
        )
        same_era = back.era == relay.front.era
        if not (exact or same_era):
            return None
        front = relay.front
        mapped = self._sessions.get(front.session) if front.session is not None else None
        session_ok = mapped is None or mapped == back.session
        same_cursor = _cursor_of(back.request) == _cursor_of(front.request)
        same_id = back.request.id_key is not None and back.request.id_key == front.request.id_key
        return (exact, same_era, session_ok, same_cursor, same_id, -abs(back.start - front.start))

    def _pair(self, relay: Relay, back: Call) -> None:
        relay.back = back
        self._relay_of[id(back)] = relay
        if relay.exact and relay.front.session is not None and back.session is not None:
            self._sessions[relay.front.session] = back.session
            if len(self._sessions) > MAX_RELAYS:
                self._sessions.pop(next(iter(self._sessions)))
        if isinstance(relay.front.exchange, HttpExchange) and isinstance(back.exchange, HttpExchange):
            self._twin(relay.front.exchange, back.exchange)
        if relay.method == "tools/list":
            self._learn_renames(relay)

    def _learn_renames(self, relay: Relay) -> None:
        """Tool names the gateway changed on the way: a front tool whose name ends with an upstream tool's name
        (the longest) and whose inputSchema is that tool's is the upstream tool under a prefix."""
        back = relay.back
        front_tools = _tools(relay.front.answers)
        back_tools = _tools(back.answers) if back is not None else {}
        if not front_tools or not back_tools:
            return
        for name, tool in front_tools.items():
            if name in back_tools:
                continue
            matches = [
                upstream
                for upstream, definition in back_tools.items()
                if name.endswith(upstream) and definition.get("inputSchema") == tool.get("inputSchema")
            ]
            if matches:
                upstream = max(matches, key=len)
                self.renames[name] = upstream
                self.prefixes.add(name[: len(name) - len(upstream)])

    # -- forgetting --------------------------------------------------------------------------------
    def _forget(self) -> None:
        if self.keep is None:
            return
        horizon = self.latest - self.keep
        while self.relays and (len(self.relays) > MAX_RELAYS or _first(self.relays).front.start < horizon):
            _, relay = self.relays.popitem(last=False)
            self._drop(relay)
        for calls in self._unclaimed.values():
            while calls and calls[0].start < horizon:
                call = calls.popleft()
                self.own.append(call)
        while self.own and (self.own[0].start < horizon or len(self.own) > MAX_RELAYS):
            self._drop_call(self.own.popleft())
        for relays in self._waiting.values():
            while relays and relays[0].front.start < self.latest - NOTICE_DELAY - SLACK:
                self._settle_one(relays.popleft())
        if len(self._open_stdio) > MAX_RELAYS:
            for key in list(self._open_stdio)[: len(self._open_stdio) - MAX_RELAYS]:
                del self._open_stdio[key]

    def _drop(self, relay: Relay) -> None:
        self._drop_call(relay.front)
        if relay.back is not None:
            self._relay_of.pop(id(relay.back), None)
            self._drop_call(relay.back)
        front = relay.front.request
        if front.id_key is not None:
            key = (relay.front.session, front.id_key)
            if self._by_front_id.get(key) is relay:
                del self._by_front_id[key]

    def _drop_call(self, call: Call) -> None:
        for message in (call.request, *call.answers, *call.stream):
            self._call_of.pop(message_key(message), None)

    # -- reading -----------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Relay]:
        return iter(list(self.relays.values()))

    def unclaimed(self) -> list[Call]:
        """Back calls no front request claimed (yet, or ever: the gateway's own)."""
        return [*self.own, *(call for calls in self._unclaimed.values() for call in calls)]

    def upstream_name(self, name: str) -> str | None:
        """The upstream's name for a tool the client calls by ``name`` when the gateway renamed it (``None``: it did
        not, as far as the lists seen show): a name a list paired, else one the gateway's one prefix starts."""
        if name in self.renames:
            return self.renames[name]
        if len(self.prefixes) == 1:
            prefix = next(iter(self.prefixes))
            if prefix and name.startswith(prefix) and len(name) > len(prefix):
                return name[len(prefix) :]
        return None

    def call_of_exchange(self, exchange: HttpExchange) -> Call | None:
        """The call an HTTP exchange's request made (``None``: it carried no request or notification)."""
        request = exchange.request_message
        call = self._call_of.get(message_key(request)) if request is not None else None
        return call if call is not None and call.request is request else None

    def call_of(self, message: Message) -> Call | None:
        """The call (of either hop) a message belongs to: its request, an answer to it, or what its stream carried."""
        return self._call_of.get(message_key(message))

    def relay_of(self, call: Call) -> Relay | None:
        """The relay a call is part of (a front call's own, or the one that claimed a back call)."""
        if call.hop is Hop.FRONT:
            return self.relays.get(id(call))
        return self._relay_of.get(id(call))

    def relay_by_front_id(self, session: str | None, ident: IdKey) -> Relay | None:
        """The client's request with this id in this session (or connection): what its cancellation names."""
        return self._by_front_id.get((session, ident))

    def counterparts(self, message: Message) -> list[Message]:
        """What a message of one hop relayed, or was relayed as, on the other: for an answer the other call's
        answers, for a notification or a server-to-client request the other stream's of the same method, for a
        request the other request (empty when nothing matches)."""
        call = self.call_of(message)
        relay = self.relay_of(call) if call is not None else None
        if call is None or relay is None:
            twin = self._twins.get(message.exchange)
            if not isinstance(twin, HttpExchange):
                return []
            if message.index == 0:
                return [twin.request_message] if twin.request_message is not None else []
            return [item for item in twin.response_messages if item.kind is message.kind]
        other = relay.back if call.hop is Hop.FRONT else relay.front
        if other is None:
            return []
        if message is call.request:
            return [other.request]
        if message.kind.is_response:
            return list(other.answers)
        return [item for item in other.stream if item.kind is message.kind and item.method == message.method]


def _cursor_of(message: Message) -> Any:
    return message.params.get("cursor") if isinstance(message.params, dict) else None


def _without_id(body: bytes) -> bytes:
    """A body as a gateway that maps ids passes it on: a JSON object without its ``id`` (other bytes as they are)."""
    if not body.lstrip().startswith(b"{"):
        return body
    try:
        payload = json.loads(body)
    except ValueError:
        return body
    if not isinstance(payload, dict):
        return body
    payload.pop("id", None)
    return json.dumps(payload, sort_keys=True).encode()


def _first(relays: OrderedDict[int, Relay]) -> Relay:
    return next(iter(relays.values()))


def _tools(answers: Iterable[Message]) -> dict[str, dict[str, Any]]:
    """The tools a ``tools/list`` result lists, by name."""
    for answer in answers:
        result = answer.result if answer.kind is Kind.RESULT else None
        tools = result.get("tools") if isinstance(result, dict) else None
        if isinstance(tools, list):
            named = (tool for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str))
            return {tool["name"]: tool for tool in named}
    return {}


def finished_at(item: Exchange) -> float:
    """When an exchange finished (an HTTP one when it ended), the order a capture of both hops holds them in."""
    if isinstance(item, HttpExchange):
        return _answer_time(item)
    return float(getattr(item, "time", 0.0))


def finish_order(*groups: Iterable[Exchange]) -> list[Exchange]:
    """The exchanges of several captures in the order they finished (the upstream's answer before the gateway's)."""
    return sorted((item for group in groups for item in group), key=finished_at)


def relayed_probes(front: Iterable[Exchange], back: Iterable[Exchange]) -> list[Exchange]:
    """The back hop's exchanges, each one the gateway sent for a probe of mcp-assay's on the front hop tagged with
    that probe: what mcp-assay made the gateway send is not the gateway's own conduct as a client (``front`` may
    name no hop: a suite run's own traffic is the front hop)."""
    back = list(back)
    front = [replace(item, hop=Hop.FRONT) if item.hop is None and item.transport else item for item in front]
    correlation = Correlation(keep=None)
    for item in finish_order(front, back):
        correlation.add(item)
    probes: dict[str, Any] = {}
    for item in back:
        twin = correlation.twin_of(item.id)
        if twin is None and isinstance(item, StdioLine):
            call = correlation.call_of(item.message)
            relay = correlation.relay_of(call) if call is not None else None
            twin = relay.front.exchange if relay is not None and call is not None and call.hop is Hop.BACK else None
        probe = twin.probe if twin is not None else None
        if probe is not None and not probe.injected:
            probes[item.id] = probe
    return [replace(item, probe=probes[item.id]) if item.id in probes and item.probe is None else item for item in back]


def request_id(value: Any) -> IdKey | None:
    """A ``requestId`` (or any id) as the key the correlation files requests under."""
    return id_key(value)
