"""Who a message belongs to: requests in flight, cancellations and listen streams.

Cancellation, subscription, logging and progress rules all ask the same questions of the log:
which request is a notification about, was that request still running when the notification
went out, did the client cancel it, and which ``subscriptions/listen`` stream (if any) carried
it. The answers depend on the transport and the revision: on Streamable HTTP a message belongs
to the exchange that carried it; on stdio every message shares one channel, so listen
notifications are told apart only by their ``subscriptionId`` and log messages only by which
requests were open at the time. A 2026 HTTP client cancels by closing the response stream; on
stdio, and in 2025 on HTTP too, it writes ``notifications/cancelled``.

:func:`index` works all of this out once per evaluation and caches it on the context.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.stream_facts import (
    CANCELLED,
    LISTEN,
    LOG_MESSAGE,
    PROGRESS,
    Cancellation,
    Listen,
    loosely_same_id,
    meta_value,
    request_id_of,
    same_id,
)
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import MISSING, IdKey, Kind, Message, id_key
from mcp_assay.wire.model import EndReason, HttpExchange
from mcp_assay.wire.traffic import MessageKey, endpoint_of

__all__ = ["StreamIndex", "index"]


class StreamIndex:
    """Request, cancellation and subscription facts about one exchange log."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        log = ctx.log
        self.ordered = log.messages()
        self.position: dict[MessageKey, int] = {m.key: i for i, m in enumerate(self.ordered)}
        self.places: dict[MessageKey, str] = {}
        outside: dict[str, str] = {}  # the place of an exchange's messages that are in no session, by exchange
        for m in self.ordered:
            place = log.session(m)
            if place is None:
                place = outside.get(m.exchange)
                if place is None:
                    place = outside[m.exchange] = self._outside(m)
            self.places[m.key] = place
        self.requests: dict[tuple[str, Side], list[Message]] = defaultdict(list)
        self.by_place: dict[str, list[Message]] = defaultdict(list)
        self._by_id: dict[tuple[str, Side, IdKey], list[Message]] = defaultdict(list)
        self._by_loose_id: dict[tuple[str, Side, str], list[Message]] = defaultdict(list)
        self._by_token: dict[tuple[str, Side, IdKey], list[Message]] = defaultdict(list)
        self._progress: dict[tuple[str, IdKey], list[Message]] = defaultdict(list)
        """Progress notifications by place and token, in wire order."""
        self._tagged: dict[tuple[str, IdKey], list[Message]] = defaultdict(list)
        """Notifications by place and the subscription id they are tagged with, in wire order."""
        self._stdio_logs: dict[str, list[Message]] = defaultdict(list)
        places = self.places
        for message in self.ordered:
            place = places[message.key]  # self.place(message), looked up inline: a hot loop
            self.by_place[place].append(message)
            if message.kind is Kind.REQUEST:
                self.requests[(place, message.sender)].append(message)
                ident = message.id_key
                if ident is not None:
                    self._by_id[(place, message.sender, ident)].append(message)
                if isinstance(message.id, int | str) and not isinstance(message.id, bool):
                    self._by_loose_id[(place, message.sender, str(message.id))].append(message)
                token = id_key(meta_value(message, "progressToken"))
                if token is not None:
                    self._by_token[(place, message.sender, token)].append(message)
            elif message.kind is Kind.NOTIFICATION:
                if message.method == PROGRESS:
                    token = id_key(params_of(message).get("progressToken", MISSING))
                    if token is not None:
                        self._progress[(place, token)].append(message)
                elif message.method == LOG_MESSAGE and message.transport == "stdio":
                    self._stdio_logs[place].append(message)
                subscription = id_key(meta_value(message, MetaKey.SUBSCRIPTION_ID))
                if subscription is not None:
                    self._tagged[(place, subscription)].append(message)
        self._stdio_log_times = {place: [m.time for m in logs] for place, logs in self._stdio_logs.items()}
        self._place_times = {place: [m.time for m in messages] for place, messages in self.by_place.items()}
        self._request_times = {key: [m.time for m in requests] for key, requests in self.requests.items()}
        self._flights: dict[tuple[str, Side], _Flights] = {
            key: _Flights(self, requests) for key, requests in self.requests.items()
        }
        self._shelves: dict[str, tuple[list[Listen], list[float], list[float]]] | None = None
        self._id_times: dict[tuple[str, Side, IdKey], list[float]] | None = None
        self._listens_by_id: dict[IdKey, list[Listen]] | None = None
        self._routed: dict[MessageKey, Listen] = {}
        self.listens: list[Listen] = []
        self.listen_by_exchange: dict[str, Listen] = {}
        self._build_listens()
        self.cancellations: list[Cancellation] = []
        self.cancel_of: dict[MessageKey, Cancellation] = {}
        self._build_cancellations()

    # -- basics ---------------------------------------------------------------------------------
    def _place(self, message: Message) -> str:
        session = self.ctx.log.session(message)
        if session is not None:
            return session
        return self._outside(message)

    def _outside(self, message: Message) -> str:
        """The place of a message in no session: its HTTP endpoint, or its exchange."""
        exchange = self.ctx.log.get(message.exchange)
        if isinstance(exchange, HttpExchange):
            return endpoint_of(exchange)
        return message.exchange

    def place(self, message: Message) -> str:
        """The 2025 session, the stdio connection, or the 2026 HTTP endpoint a message belongs to."""
        return self.places.get(message.key) or self._place(message)

    def before(self, a: Message, b: Message) -> bool:
        """``a`` crossed the wire before ``b`` (stream order breaks ties within one exchange)."""
        if a.exchange == b.exchange and a.transport == "http":
            return a.index < b.index
        if a.time != b.time:
            return a.time < b.time
        return self.position.get(a.key, 0) < self.position.get(b.key, 0)

    def following(self, at: Message) -> Iterator[Message]:
        """The messages of ``at``'s place that crossed the wire after it, in wire order."""
        place = self.place(at)
        messages = self.by_place.get(place, [])
        for message in messages[bisect_left(self._place_times.get(place, []), at.time) :]:
            if self.before(at, message):
                yield message

    def next_request(self, at: Message, sender: Side) -> Message | None:
        """The first request (listens left out) ``sender`` made in ``at``'s place after ``at``."""
        key = (self.place(at), sender)
        requests = self.requests.get(key, [])
        for request in requests[bisect_left(self._request_times.get(key, []), at.time) :]:
            if self.before(at, request) and request.method != LISTEN:
                return request
        return None

    def revision_has(self, message: Message, feature: str) -> bool:
        revision = self.ctx.revision(message)
        return revision is not None and revision.has(feature)

    def http(self, message: Message) -> HttpExchange | None:
        exchange = self.ctx.log.get(message.exchange)
        return exchange if isinstance(exchange, HttpExchange) else None

    def carrier_request(self, message: Message) -> Message | None:
        """For a server message on HTTP: the request whose response stream carried it."""
        exchange = self.http(message)
        if exchange is None or message.index == 0:
            return None
        request = exchange.request_message
        return request if request is not None and request.kind is Kind.REQUEST else None

    def first_answer(self, request: Message) -> Message | None:
        answers = self.ctx.log.responses_to(request)
        if not answers:
            return None
        first = answers[0]
        for answer in answers[1:]:
            if self.before(answer, first):
                first = answer
        return first

    def in_flight(self, request: Message, at: Message) -> bool:
        """``request`` was sent before ``at`` and not yet answered when ``at`` crossed the wire."""
        if not self.before(request, at):
            return False
        answer = self.first_answer(request)
        return answer is None or self.before(at, answer)

    def open_requests(self, at: Message, sender: Side = Side.CLIENT, *, cancelled: bool = False) -> list[Message]:
        """Requests of ``sender`` in the place of ``at`` that were in flight then.

        Listen requests are left out, and so (unless ``cancelled``) are requests the client had
        already cancelled: neither is a request a log line could legitimately be about."""
        flights = self._flights.get((self.place(at), sender))
        found = []
        for request in flights.open_at(self, at) if flights is not None else ():
            cancellation = self.cancel_of.get(request.key)
            if not cancelled and cancellation is not None and cancellation.time < at.time:
                continue
            found.append(request)
        return found

    def request_with_token(self, token: Any, at: Message, sender: Side) -> tuple[Message | None, bool]:
        """The request of ``sender`` that gave ``token`` and was in flight at ``at`` (latest first).

        The flag says whether any earlier request in the place used the token at all."""
        used = False
        latest: Message | None = None
        key = id_key(token)
        if key is None:
            return None, False
        for request in self._by_token.get((self.place(at), sender, key), ()):
            if not self.before(request, at):
                break
            used = True
            if self.in_flight(request, at):
                latest = request
        return latest, used

    def requests_with_token(self, token: Any, place: str, sender: Side) -> list[Message]:
        """Every request of ``sender`` in ``place`` that gave ``token`` (type and value)."""
        key = id_key(token)
        return list(self._by_token.get((place, sender, key), ())) if key is not None else []

    # -- subscriptions --------------------------------------------------------------------------
    def _build_listens(self) -> None:
        log = self.ctx.log
        exits = {item.connection: item.time for item in log.process_exits()}
        stdio_listens: dict[str, list[Listen]] = defaultdict(list)
        for request in self.ordered:
            if request.kind is not Kind.REQUEST or request.method != LISTEN or request.sender is not Side.CLIENT:
                continue
            exchange = self.http(request)
            listen = Listen(request=request, place=self.place(request), exchange=exchange)
            self.listens.append(listen)
            if exchange is not None:
                self.listen_by_exchange[exchange.id] = listen
                listen.messages = list(exchange.response_messages)
                self._end_http_listen(listen, exchange)
            else:
                stdio_listens[listen.place].append(listen)
                if listen.place in exits:
                    listen.end, listen.ended_by = exits[listen.place], "transport"
        for place, listens in stdio_listens.items():
            pending = sorted(listens, key=lambda listen: self.position.get(listen.request.key, 0))
            active: list[Listen] = []
            for message in self.by_place[place]:
                while pending and self.before(pending[0].request, message):
                    active.append(pending.pop(0))
                if active:
                    self._route_stdio(message, active)
                    active = [listen for listen in active if listen.end >= message.time]

    def _end_http_listen(self, listen: Listen, exchange: HttpExchange) -> None:
        for message in listen.messages:
            if message.kind.is_response and same_id(message.id, listen.id):
                listen.end, listen.ended_by = message.time, ("result" if message.kind is Kind.RESULT else "error")
                return
            if message.method == CANCELLED and same_id(request_id_of(message), listen.id):
                listen.end, listen.ended_by = message.time, "server-cancel"
                return
        ending = exchange.ending
        if ending is None or ending.reason is EndReason.OPEN:
            return
        if ending.reason is EndReason.CLIENT_DISCONNECT:
            listen.end, listen.ended_by = ending.time, "client"
        else:
            listen.end, listen.ended_by = ending.time, "server-close"

    def _route_stdio(self, message: Message, listens: list[Listen]) -> None:
        for listen in listens:
            if not listen.open_at(message.time) or not self.before(listen.request, message):
                continue
            if message.sender is Side.CLIENT:
                if message.method == CANCELLED and same_id(request_id_of(message), listen.id):
                    listen.end, listen.ended_by = message.time, "client"
                continue
            if message.kind.is_response and same_id(message.id, listen.id):
                listen.end, listen.ended_by = message.time, "result" if message.kind is Kind.RESULT else "error"
            elif message.method == CANCELLED and same_id(request_id_of(message), listen.id):
                listen.end, listen.ended_by = message.time, "server-cancel"
            elif not (
                message.kind is Kind.NOTIFICATION and same_id(meta_value(message, MetaKey.SUBSCRIPTION_ID), listen.id)
            ):
                continue
            listen.messages.append(message)
            self._routed[message.key] = listen

    def listen_carrying(self, message: Message) -> Listen | None:
        """The listen stream a server message travelled on (HTTP), or whose id it is tagged with (stdio)."""
        exchange = self.http(message)
        if exchange is not None:
            return self.listen_by_exchange.get(exchange.id) if message.index > 0 else None
        return self._routed.get(message.key)

    def open_listens(self, at: Message) -> list[Listen]:
        """The subscriptions of ``at``'s place that were open when it crossed the wire, in the order they opened."""
        shelf = self._listen_shelves().get(self.place(at))
        if shelf is None:
            return []
        listens, times, latest_end = shelf
        found = []
        position = bisect_right(times, at.time) - 1
        while position >= 0 and latest_end[position] >= at.time:
            listen = listens[position]
            if self.before(listen.request, at) and at.time <= listen.end:
                found.append(listen)
            position -= 1
        found.reverse()
        return found

    def listens_with_id(self, ident: Any) -> list[Listen]:
        """The listen requests whose id is ``ident`` (type and value), in the order they opened."""
        key = id_key(ident)
        if key is None:
            return []
        if self._listens_by_id is None:
            self._listens_by_id = defaultdict(list)
            for listen in self.listens:
                if listen.request.id_key is not None:
                    self._listens_by_id[listen.request.id_key].append(listen)
        return list(self._listens_by_id.get(key, ()))

    def _listen_shelves(self) -> dict[str, tuple[list[Listen], list[float], list[float]]]:
        """Listens by place in the order they opened, with the latest end up to each (built when first asked)."""
        if self._shelves is None:
            grouped: dict[str, list[Listen]] = defaultdict(list)
            for listen in sorted(self.listens, key=lambda item: item.request.time):
                grouped[listen.place].append(listen)
            self._shelves = {}
            for place, listens in grouped.items():
                ends, latest = [], -math.inf
                for listen in listens:
                    latest = max(latest, listen.end)
                    ends.append(latest)
                self._shelves[place] = (listens, [listen.request.time for listen in listens], ends)
        return self._shelves

    # -- cancellations --------------------------------------------------------------------------
    def _build_cancellations(self) -> None:
        for message in self.ordered:
            if message.kind is Kind.REQUEST and message.sender is Side.CLIENT:
                exchange = self.http(message)
                if (
                    exchange is not None
                    and message.index == 0
                    and exchange.client_disconnected
                    and exchange.ending is not None
                    and self.revision_has(message, "per_request_version")
                    and self.first_answer(message) is None
                ):
                    self._add(Cancellation(message, exchange.ending.time, "disconnect"))
            if message.method != CANCELLED or message.kind is not Kind.NOTIFICATION:
                continue
            if message.sender is not Side.CLIENT:
                continue
            if message.transport == "http" and self.revision_has(message, "per_request_version"):
                continue  # on 2026 HTTP closing the stream is the signal; a POSTed notice means nothing
            posted = self.http(message)
            if posted is not None and posted.response is not None and posted.response.status >= 400:
                continue  # the server refused the notice (a missing session id ...): it cancelled nothing
            target = self.cancelled_request(message)
            if target is not None:
                self._add(Cancellation(target, message.time, "notification", message))

    def _add(self, cancellation: Cancellation) -> None:
        key = cancellation.request.key
        if key not in self.cancel_of:
            self.cancel_of[key] = cancellation
            self.cancellations.append(cancellation)

    def cancelled_request(self, notice: Message) -> Message | None:
        """The request of the notice's sender, sent before it in the same place, that it names (type and value)."""
        wanted = request_id_of(notice)
        if id_key(wanted) is None or wanted is MISSING:
            return None
        key = id_key(wanted)
        if key is None:
            return None
        named = self._by_id.get((self.place(notice), notice.sender, key), [])
        if self._id_times is None:
            self._id_times = {entry: [request.time for request in requests] for entry, requests in self._by_id.items()}
        position = bisect_right(self._id_times.get((self.place(notice), notice.sender, key), []), notice.time)
        while position > 0 and not self.before(named[position - 1], notice):
            position -= 1  # a request stamped with the notice's own time but sent after it
        return named[position - 1] if position else None

    def requests_named_loosely(self, notice: Message) -> list[Message]:
        """Earlier requests of the sender whose id equals the notice's requestId only as text."""
        wanted = request_id_of(notice)
        if not isinstance(wanted, int | str) or isinstance(wanted, bool):
            return []
        return [
            request
            for request in self._by_loose_id.get((self.place(notice), notice.sender, str(wanted)), ())
            if self.before(request, notice) and loosely_same_id(request.id, wanted) and not same_id(request.id, wanted)
        ]

    def after_cancellation(self, cancellation: Cancellation) -> list[Message]:
        """Server messages about a cancelled request that crossed the wire after the cancellation."""
        request = cancellation.request
        found: dict[MessageKey, Message] = {}
        exchange = self.http(request)
        if exchange is not None:
            for message in exchange.response_messages:
                if message.time > cancellation.time:
                    found[message.key] = message
        for answer in self.ctx.log.responses_to(request):
            if answer.time > cancellation.time:
                found[answer.key] = answer
        token = meta_value(request, "progressToken")
        place = self.place(request)
        token_key = id_key(token) if token is not MISSING else None
        for message in self._progress.get((place, token_key), ()) if token_key is not None else ():
            if message.sender is not request.sender and message.time > cancellation.time:
                if self._token_owner_is(request, message):
                    found[message.key] = message
        listen_key = request.id_key if request.method == LISTEN else None
        for message in self._tagged.get((place, listen_key), ()) if listen_key is not None else ():
            if message.sender is not request.sender and message.time > cancellation.time:
                found[message.key] = message
        if request.transport == "stdio" and self._logs_may_concern(request):
            final = self.first_answer(request)
            logs = self._stdio_logs.get(place, [])
            start = bisect_right(self._stdio_log_times[place], cancellation.time) if logs else 0
            for message in logs[start:]:
                if message.sender is request.sender:
                    continue
                if final is not None and not self.before(message, final):
                    break
                if self._only_open_request(request, message):
                    found[message.key] = message
        return sorted(found.values(), key=lambda m: self.position.get(m.key, 0))

    def _token_owner_is(self, request: Message, progress: Message) -> bool:
        """Whether a progress message with the request's token is about that request and not a later one."""
        token = meta_value(request, "progressToken")
        carrier = self.carrier_request(progress)
        if carrier is not None:
            if carrier is request:
                return True
            if same_id(meta_value(carrier, "progressToken"), token):
                return False  # the stream of another request that uses the same token
        key = id_key(token)
        same_token = self._by_token.get((self.place(request), request.sender, key), []) if key is not None else []
        for other in same_token:
            if other is request or not self.before(request, other):
                continue
            if self.before(other, progress):
                return False  # the token was reused by a later request: the progress is ambiguous
            break
        return True

    def _logs_may_concern(self, request: Message) -> bool:
        """Whether log lines could be about ``request`` at all (it asked for them with a logLevel)."""
        return (
            self.revision_has(request, "per_request_log_level")
            and meta_value(request, MetaKey.LOG_LEVEL) is not MISSING
        )

    def _only_open_request(self, request: Message, log: Message) -> bool:
        """On stdio a log line is about a cancelled request only when nothing else was open (A9)."""
        if not self._logs_may_concern(request):
            return False
        others = [r for r in self.open_requests(log) if r is not request]
        answer = self.first_answer(request)
        still_open = answer is None or self.before(log, answer)
        return still_open and not others


class _Flights:
    """The requests one sender made in one place, to find those in flight at a moment quickly.

    Requests are kept in wire order with, for each, the latest moment any of them up to it was
    answered: walking back from a moment stops as soon as every earlier request was answered
    before it. Requests never answered (and listens, which are never "in flight" for these
    questions) are kept apart."""

    def __init__(self, index: StreamIndex, requests: list[Message]) -> None:
        self.answered: list[Message] = []
        self.times: list[float] = []
        self.latest_end: list[float] = []
        self.unanswered: list[Message] = []
        latest = -math.inf
        for request in requests:
            if request.method == LISTEN:
                continue
            answer = index.first_answer(request)
            if answer is None:
                self.unanswered.append(request)
                continue
            latest = max(latest, answer.time)
            self.answered.append(request)
            self.times.append(request.time)
            self.latest_end.append(latest)

    def open_at(self, index: StreamIndex, at: Message) -> list[Message]:
        """The requests in flight when ``at`` crossed the wire, in wire order (``index``: the one these were built
        from; not kept here, so that an index and its flights make no cycle that outlives its window)."""
        found = []
        position = bisect_right(self.times, at.time) - 1
        while position >= 0 and self.latest_end[position] >= at.time:
            request = self.answered[position]
            if index.in_flight(request, at):
                found.append(request)
            position -= 1
        found.reverse()
        for request in self.unanswered:
            if not index.before(request, at):
                break
            found.append(request)
        return sorted(found, key=lambda request: index.position.get(request.key, 0))


def index(ctx: Context) -> StreamIndex:
    """The stream facts of ``ctx.log`` (built once per log, shared by every stream rule)."""
    return ctx.view(StreamIndex)
