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

from collections import defaultdict
from typing import Any

from mcp_assay.jsonrpc import MISSING, IdKey, Kind, Message, id_key
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.stream_facts import (
    CANCELLED,
    LISTEN,
    LOG_LEVEL_KEY,
    LOG_MESSAGE,
    PROGRESS,
    SUBSCRIPTION_ID_KEY,
    Cancellation,
    Listen,
    loosely_same_id,
    meta_value,
    request_id_of,
    same_id,
)
from mcp_assay.traffic import MessageKey, endpoint_of, message_key
from mcp_assay.verdicts import Side
from mcp_assay.wire import EndReason, HttpExchange

__all__ = ["StreamIndex", "index"]


class StreamIndex:
    """Request, cancellation and subscription facts about one exchange log."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        log = ctx.log
        self.ordered = log.messages()
        self.position: dict[MessageKey, int] = {message_key(m): i for i, m in enumerate(self.ordered)}
        self.places: dict[MessageKey, str] = {message_key(m): self._place(m) for m in self.ordered}
        self.requests: dict[tuple[str, Side], list[Message]] = defaultdict(list)
        self.by_place: dict[str, list[Message]] = defaultdict(list)
        self._by_id: dict[tuple[str, Side, IdKey], list[Message]] = defaultdict(list)
        self._by_token: dict[tuple[str, Side, IdKey], list[Message]] = defaultdict(list)
        for message in self.ordered:
            place = self.place(message)
            self.by_place[place].append(message)
            if message.kind is Kind.REQUEST:
                self.requests[(place, message.sender)].append(message)
                ident = message.id_key
                if ident is not None:
                    self._by_id[(place, message.sender, ident)].append(message)
                token = id_key(meta_value(message, "progressToken"))
                if token is not None:
                    self._by_token[(place, message.sender, token)].append(message)
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
        exchange = self.ctx.log.get(message.exchange)
        if isinstance(exchange, HttpExchange):
            return endpoint_of(exchange)
        return message.exchange

    def place(self, message: Message) -> str:
        """The 2025 session, the stdio connection, or the 2026 HTTP endpoint a message belongs to."""
        return self.places.get(message_key(message)) or self._place(message)

    def before(self, a: Message, b: Message) -> bool:
        """``a`` crossed the wire before ``b`` (stream order breaks ties within one exchange)."""
        if a.exchange == b.exchange and a.transport == "http":
            return a.index < b.index
        if a.time != b.time:
            return a.time < b.time
        return self.position.get(message_key(a), 0) < self.position.get(message_key(b), 0)

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
        found = []
        for request in self.requests.get((self.place(at), sender), ()):
            if request.time > at.time and not self.before(request, at):
                break
            if request.method == LISTEN or not self.in_flight(request, at):
                continue
            cancellation = self.cancel_of.get(message_key(request))
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
            for message in self.by_place[place]:
                self._route_stdio(message, listens)

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
                message.kind is Kind.NOTIFICATION and same_id(meta_value(message, SUBSCRIPTION_ID_KEY), listen.id)
            ):
                continue
            listen.messages.append(message)
            self._routed[message_key(message)] = listen

    def listen_carrying(self, message: Message) -> Listen | None:
        """The listen stream a server message travelled on (HTTP), or whose id it is tagged with (stdio)."""
        exchange = self.http(message)
        if exchange is not None:
            return self.listen_by_exchange.get(exchange.id) if message.index > 0 else None
        return self._routed.get(message_key(message))

    def open_listens(self, at: Message) -> list[Listen]:
        place = self.place(at)
        return [
            listen
            for listen in self.listens
            if listen.place == place and self.before(listen.request, at) and at.time <= listen.end
        ]

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
            target = self.cancelled_request(message)
            if target is not None:
                self._add(Cancellation(target, message.time, "notification", message))

    def _add(self, cancellation: Cancellation) -> None:
        key = message_key(cancellation.request)
        if key not in self.cancel_of:
            self.cancel_of[key] = cancellation
            self.cancellations.append(cancellation)

    def cancelled_request(self, notice: Message) -> Message | None:
        """The request of the notice's sender, sent before it in the same place, that it names (type and value)."""
        wanted = request_id_of(notice)
        if id_key(wanted) is None or wanted is MISSING:
            return None
        found = None
        key = id_key(wanted)
        if key is None:
            return None
        for request in self._by_id.get((self.place(notice), notice.sender, key), ()):
            if not self.before(request, notice):
                break
            found = request
        return found

    def requests_named_loosely(self, notice: Message) -> list[Message]:
        """Earlier requests of the sender whose id equals the notice's requestId only as text."""
        wanted = request_id_of(notice)
        return [
            request
            for request in self.requests.get((self.place(notice), notice.sender), ())
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
                    found[message_key(message)] = message
        for answer in self.ctx.log.responses_to(request):
            if answer.time > cancellation.time:
                found[message_key(answer)] = answer
        token = meta_value(request, "progressToken")
        place = self.place(request)
        for message in self.by_place.get(place, ()):
            if message.sender is request.sender or message.time <= cancellation.time:
                continue
            if message.method == PROGRESS and token is not MISSING:
                if same_id(params_of(message).get("progressToken", MISSING), token) and self._token_owner_is(
                    request, message
                ):
                    found[message_key(message)] = message
            elif request.method == LISTEN and message.kind is Kind.NOTIFICATION:
                if same_id(meta_value(message, SUBSCRIPTION_ID_KEY), request.id):
                    found[message_key(message)] = message
            elif message.method == LOG_MESSAGE and message.transport == "stdio":
                if self._only_open_request(request, message):
                    found[message_key(message)] = message
        return sorted(found.values(), key=lambda m: self.position.get(message_key(m), 0))

    def _token_owner_is(self, request: Message, progress: Message) -> bool:
        """Whether a progress message with the request's token is about that request and not a later one."""
        token = meta_value(request, "progressToken")
        carrier = self.carrier_request(progress)
        if carrier is not None:
            if carrier is request:
                return True
            if same_id(meta_value(carrier, "progressToken"), token):
                return False  # the stream of another request that uses the same token
        for other in self.requests.get((self.place(request), request.sender), ()):
            if other is request or not self.before(request, other):
                continue
            if not self.before(other, progress):
                break
            if same_id(meta_value(other, "progressToken"), token):
                return False  # the token was reused by a later request: the progress is ambiguous
        return True

    def _only_open_request(self, request: Message, log: Message) -> bool:
        """On stdio a log line is about a cancelled request only when nothing else was open (A9)."""
        if not self.revision_has(request, "per_request_log_level"):
            return False
        if meta_value(request, LOG_LEVEL_KEY) is MISSING:
            return False
        others = [r for r in self.open_requests(log) if r is not request]
        answer = self.first_answer(request)
        still_open = answer is None or self.before(log, answer)
        return still_open and not others


def index(ctx: Context) -> StreamIndex:
    """The stream facts of ``ctx.log`` (built once per log, shared by every stream rule)."""
    return ctx.view(StreamIndex)
