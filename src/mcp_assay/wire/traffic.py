"""The exchange log: what crossed the wire, plus what it means in context.

Checks are pure functions over an :class:`ExchangeLog`. Besides holding exchanges in capture
order, the log works out the context a single message cannot carry by itself:

* **attribution**: which protocol revision a message belongs to. 2026-07-28 names it per request
  (``params._meta`` and the ``MCP-Protocol-Version`` header); 2025-11-25 negotiates it once per
  session (``initialize`` and ``Mcp-Session-Id`` on HTTP, the connection on stdio);
* **correlation**: which request a response answers, matched by id *and* JSON type within the
  place the answer must come back (the HTTP exchange, the session, the stdio connection). What a
  response may answer is decided here once, for every rule: a request, and also a message that
  failed to be one but whose id could be read (an invalid request, a response nothing asked for),
  since JSON-RPC answers those with an error repeating that id;
* **what the server said about itself**: the capabilities and tools it last advertised.

The analysis is incremental, so the proxy can add exchanges as they finish without re-reading
the whole session.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.vocabulary.protocol import HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import MISSING, IdKey, Kind, Message, id_key
from mcp_assay.wire.model import Exchange, HttpExchange, Observation, ProcessExit, StdioLine, oauth_kind

__all__ = [
    "Advertised",
    "ExchangeLog",
    "MessageKey",
    "Timeline",
    "message_key",
    "readable_id",
]

CANCELLED = "notifications/cancelled"

MessageKey = tuple[str, int]


def message_key(message: Message) -> MessageKey:
    return message.key


@dataclass(frozen=True, slots=True)
class Advertised:
    """Something a server said about itself, and where it said it."""

    value: Any
    message: Message


class Timeline:
    """What a server advertised in one scope, in time order, found by time in logarithmic time.

    ``merge`` keeps, with every entry, the union of everything advertised up to it (later
    definitions winning); an entry that changes nothing shares its predecessor's union, so a
    client listing the same tools ten thousand times costs one dictionary, not ten thousand."""

    __slots__ = ("_times", "_entries", "_merged", "_merge_key")

    def __init__(self, merge_key: str | None = None) -> None:
        self._times: list[float] = []
        self._entries: list[Advertised] = []
        self._merged: list[dict[str, Any]] = []
        self._merge_key = merge_key

    def __bool__(self) -> bool:
        return bool(self._entries)

    def add(self, entry: Advertised) -> None:
        at = bisect_right(self._times, entry.message.time)
        self._times.insert(at, entry.message.time)
        self._entries.insert(at, entry)
        if self._merge_key is None:
            return
        if at == len(self._entries) - 1:
            base = self._merged[-1] if self._merged else {}
            self._merged.append(self._union(base, entry))
        else:  # an entry older than the latest: rebuild the unions from it on (rare: captures in order)
            del self._merged[at:]
            base = self._merged[-1] if self._merged else {}
            for later in self._entries[at:]:
                base = self._union(base, later)
                self._merged.append(base)

    def _union(self, base: dict[str, Any], entry: Advertised) -> dict[str, Any]:
        key = self._merge_key
        changes = {
            item[key]: item
            for item in entry.value
            if isinstance(item, dict) and isinstance(item.get(key), str) and base.get(item[key]) != item
        }
        return {**base, **changes} if changes else base

    def latest(self, at: float) -> Advertised:
        """The last entry at or before ``at``; the latest of all when none is that early."""
        index = bisect_right(self._times, at)
        return self._entries[index - 1] if index else self._entries[-1]

    def merged(self, at: float) -> dict[str, Any]:
        """Everything advertised up to ``at`` (at least the first entry)."""
        index = bisect_right(self._times, at)
        return self._merged[index - 1] if index else self._merged[0]


def _other(side: Side) -> Side:
    return Side.SERVER if side is Side.CLIENT else Side.CLIENT


def _meta_version(message: Message) -> str | None:
    meta = message.meta if message.kind in (Kind.REQUEST, Kind.NOTIFICATION) else None
    if meta is not None:
        version = meta.get(MetaKey.PROTOCOL_VERSION)
        if isinstance(version, str):
            return version
    return None


def readable_id(message: Message) -> bool:
    """Whether ``message`` carries an id an answer can repeat: a string or an integer (never a boolean)."""
    ident = message.id_key
    return ident is not None and ident[0] in ("str", "int")


def endpoint_of(exchange: HttpExchange) -> str:
    """The URL an exchange was sent to without its query and fragment (:func:`url_endpoint`)."""
    return url_endpoint(exchange.request.url)


def url_endpoint(url: str) -> str:
    """A URL without its query and fragment: where MCP traffic goes. A capture names few, and rules (and the proxy,
    for every request) ask for them again and again, so each is worked out once."""
    endpoint = _ENDPOINTS.get(url)
    if endpoint is None:
        parts = urlsplit(url)
        endpoint = f"{parts.scheme}://{parts.netloc}{parts.path}"
        if len(_ENDPOINTS) < ENDPOINTS_KEPT and len(url) <= ENDPOINT_URL_KEPT_LENGTH:
            _ENDPOINTS[url] = endpoint
    return endpoint


ENDPOINTS_KEPT = 1024
"""URLs :func:`url_endpoint` keeps at most; past that, or for a longer URL than
:data:`ENDPOINT_URL_KEPT_LENGTH`, each is split when asked."""
ENDPOINT_URL_KEPT_LENGTH = 2048
_ENDPOINTS: dict[str, str] = {}
_TIME = attrgetter("time")


class ExchangeLog:
    """Exchanges in capture order, with attribution and correlation worked out as they arrive."""

    def __init__(self, items: Iterable[Exchange] = ()) -> None:
        self._items: list[Exchange] = []
        self.size = 0
        """How many exchanges the log holds (``len(log)`` as an attribute: the shared views of a window compare it
        on every look-up, where a call to ``__len__`` would cost more than the look-up)."""
        self._by_id: dict[str, Exchange] = {}
        self._messages: list[Message] = []
        self._sorted: list[Message] | None = None
        self._revision: dict[MessageKey, str] = {}
        self._scope: dict[MessageKey, str] = {}
        self._session: dict[MessageKey, str] = {}
        self._request_of: dict[MessageKey, Message] = {}
        self._responses: dict[MessageKey, list[Message]] = defaultdict(list)
        self._pending: dict[tuple[str, Side, IdKey], list[Message]] = defaultdict(list)
        self._rejectable: dict[tuple[str, Side, IdKey], list[Message]] = defaultdict(list)
        self._cancellations: dict[tuple[Side, IdKey], list[Message]] = defaultdict(list)
        self._orphans: list[Message] = []
        self._session_revision: dict[str, str] = {}
        self._connection_revision: dict[str, str] = {}
        self._modern_connections: set[str] = set()
        """stdio connections whose revision so far came from a 2026 ``_meta`` (an ``initialize`` switches them)."""
        self._capabilities: dict[str, Timeline] = defaultdict(Timeline)
        self._tools: dict[str, Timeline] = defaultdict(lambda: Timeline("name"))
        self._initialize: dict[str, Message] = {}
        self._exchange_revision: dict[str, str] = {}
        self._oauth: set[str] = set()
        self._http: list[HttpExchange] = []
        self._stdio: list[StdioLine] = []
        """The MCP HTTP exchanges and the stdio lines, in capture order: kept as they are added, since many
        rules read them whole (an index built once, not a scan of every exchange per rule)."""
        self._oauth_steps: list[HttpExchange] = []
        self._exits: list[ProcessExit] = []
        self._observations: list[Observation] = []
        """The OAuth flow steps, process exits and observations, in capture order, kept as they are added for the
        same reason."""
        self._waiting = 0
        for item in items:
            self.add(item)

    # -- building -----------------------------------------------------------------------------------
    def add(self, item: Exchange) -> None:
        """Append one finished exchange (or stdio line) and update the analysis."""
        self._items.append(item)
        self.size += 1
        self._by_id[item.id] = item
        self._sorted = None
        if isinstance(item, HttpExchange) and oauth_kind(item.request) is not None:
            self._oauth.add(item.id)
            self._oauth_steps.append(item)
        elif isinstance(item, HttpExchange):
            self._http.append(item)
            self._add_http(item)
        elif isinstance(item, StdioLine):
            self._stdio.append(item)
            self._add_stdio(item)
        elif isinstance(item, ProcessExit):
            self._exits.append(item)
        elif isinstance(item, Observation):
            self._observations.append(item)

    def _add_http(self, exchange: HttpExchange) -> None:
        request = exchange.request_message
        endpoint = endpoint_of(exchange)
        session_header = exchange.request.headers.get(HeaderKey.SESSION_ID)
        revision = _meta_version(request) if request is not None else None
        session: str | None = None
        if revision is None and request is not None and request.method == "initialize" and request.kind is Kind.REQUEST:
            revision = self._negotiated(request, exchange.response_messages)
            issued = exchange.response.headers.get(HeaderKey.SESSION_ID) if exchange.response else None
            session = issued or f"{endpoint}#{exchange.connection or exchange.id}"
            if revision is not None:
                self._session_revision[session] = revision
        if revision is None and session_header is not None:
            session = session_header
            revision = self._session_revision.get(session_header)
        if revision is None:
            header = exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION)
            if header:
                revision = header
        if session is None and session_header is not None:
            session = session_header
        session_scope = session or endpoint
        if revision is not None:
            self._exchange_revision[exchange.id] = revision
        for message in exchange.messages:
            key = message.key
            self._messages.append(message)
            if revision is not None:
                self._revision[key] = revision
            if session is not None:
                self._session[key] = session
            # a client request is answered inside its own exchange; a server request (2025 SSE)
            # and the client's POSTed answer meet in the session
            own_exchange = (message.sender is Side.CLIENT and message.kind is Kind.REQUEST) or (
                message.sender is Side.SERVER and message.kind.is_response
            )
            self._scope[key] = exchange.id if own_exchange else session_scope
            self._correlate(message, fallback_scope=session_scope, exchange_scope=exchange.id)
            self._remember_advertised(message, scope=session_scope)
            self._remember_cancellation(message)
        if request is not None and request.method == "initialize":
            self._initialize[session_scope] = request

    def _add_stdio(self, line: StdioLine) -> None:
        message = line.message
        key = message.key
        self._messages.append(message)
        connection = line.connection
        self._scope[key] = connection
        self._session[key] = connection
        version = _meta_version(message)
        if version is not None:
            self._revision[key] = version
            if connection not in self._connection_revision:
                self._connection_revision[connection] = version
                self._modern_connections.add(connection)
        self._correlate(message, fallback_scope=connection)
        request = self._request_of.get(key)
        if version is None:
            if request is not None and request.key in self._revision:
                self._revision[key] = self._revision[request.key]
            elif connection in self._connection_revision:
                self._revision[key] = self._connection_revision[connection]
        if (
            request is not None
            and request.method == "initialize"
            and message.kind is Kind.RESULT
            and isinstance(message.result, dict)
        ):
            negotiated = message.result.get("protocolVersion")
            if isinstance(negotiated, str):
                self._connection_revision[connection] = negotiated
                self._revision[request.key] = negotiated
                self._revision[key] = negotiated
        if message.method == "initialize" and message.kind is Kind.REQUEST:
            self._initialize[connection] = message
            requested = message.params.get("protocolVersion") if isinstance(message.params, dict) else None
            if isinstance(requested, str) and connection in self._modern_connections and version is None:
                # a dual-era client falling back after a modern answer: initialize selects the handshake era
                self._modern_connections.discard(connection)
                self._connection_revision[connection] = requested
                self._revision[key] = requested
            elif isinstance(requested, str) and connection not in self._connection_revision:
                self._revision[key] = requested
        self._remember_advertised(message, scope=connection)
        self._remember_cancellation(message)
        if key in self._revision:
            self._exchange_revision[line.id] = self._revision[key]

    @staticmethod
    def _negotiated(request: Message, responses: Iterable[Message]) -> str | None:
        for response in responses:
            if response.kind is Kind.RESULT and response.id_key == request.id_key:
                result = response.result
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    return str(result["protocolVersion"])
        params = request.params
        if isinstance(params, dict) and isinstance(params.get("protocolVersion"), str):
            return str(params["protocolVersion"])
        return None

    def _correlate(self, message: Message, *, fallback_scope: str, exchange_scope: str | None = None) -> None:
        key = message.key
        scope = self._scope[key]
        ident = message.id_key
        if message.kind is Kind.REQUEST and ident is not None:
            self._pending[(scope, message.sender, ident)].append(message)
            self._waiting += 1
            return
        places = tuple(dict.fromkeys((exchange_scope or scope, scope, fallback_scope)))
        if message.kind is Kind.INVALID and readable_id(message):
            self._expect_rejection(message, places)
            return
        if not message.kind.is_response or ident is None:
            if message.kind is Kind.ERROR and ident is None:
                self._orphans.append(message)
            return
        requester = _other(message.sender)
        for table in (self._pending, self._rejectable):
            for candidate in dict.fromkeys((scope, fallback_scope)):
                waiting = table.get((candidate, requester, ident))
                if waiting:
                    still_open = [request for request in waiting if not self._responses.get(request.key)]
                    request = still_open[0] if still_open else waiting[-1]
                    self._request_of[key] = request
                    if table is self._pending and not self._responses.get(request.key):
                        self._waiting -= 1
                    self._responses[request.key].append(message)
                    return
        self._orphans.append(message)
        if readable_id(message):
            self._expect_rejection(message, places)  # a response nothing asked for may be refused by id

    def _expect_rejection(self, message: Message, places: Iterable[str]) -> None:
        """Remember a message that is no request but whose readable id an error answering it repeats."""
        ident = message.id_key
        assert ident is not None
        for place in places:
            self._rejectable[(place, message.sender, ident)].append(message)

    def _remember_advertised(self, message: Message, *, scope: str) -> None:
        if message.kind is not Kind.RESULT or not isinstance(message.result, dict):
            return
        request = self._request_of.get(message.key)
        if request is None:
            return
        result = message.result
        if request.method in ("server/discover", "initialize") and isinstance(result.get("capabilities"), dict):
            target = "*" if request.method == "server/discover" and request.transport == "http" else scope
            self._capabilities[target].add(Advertised(result["capabilities"], message))
        if request.method == "tools/list" and isinstance(result.get("tools"), list):
            self._tools[scope].add(Advertised(result["tools"], message))
            if request.transport == "http":
                self._tools["*"].add(Advertised(result["tools"], message))

    def _remember_cancellation(self, message: Message) -> None:
        if message.kind is not Kind.NOTIFICATION or message.method != CANCELLED:
            return
        params = message.params
        ident = id_key(params.get("requestId", MISSING)) if isinstance(params, dict) else None
        if ident is not None:
            self._cancellations[(message.sender, ident)].append(message)

    # -- reading ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Exchange]:
        return iter(self._items)

    @property
    def items(self) -> list[Exchange]:
        return list(self._items)

    def get(self, exchange_id: str) -> Exchange | None:
        return self._by_id.get(exchange_id)

    def http_exchanges(self) -> list[HttpExchange]:
        """HTTP exchanges with an MCP server (its metadata documents included), not OAuth flow steps."""
        return list(self._http)

    def is_oauth_step(self, exchange: HttpExchange) -> bool:
        """Whether ``exchange`` is one of a client's OAuth flow steps (decided once, when it was added)."""
        return exchange.id in self._oauth

    def oauth_exchanges(self) -> list[HttpExchange]:
        """A client's authorization, token and registration requests to an authorization server."""
        return list(self._oauth_steps)

    def stdio_lines(self) -> list[StdioLine]:
        return list(self._stdio)

    def process_exits(self) -> list[ProcessExit]:
        return list(self._exits)

    def observations(self, kind: str | None = None) -> list[Observation]:
        if kind is None:
            return list(self._observations)
        return [item for item in self._observations if item.kind == kind]

    def transports(self) -> set[str]:
        return {item.transport for item in self._items if item.transport}

    def messages(self) -> list[Message]:
        """Every message, ordered by the time it crossed the wire (capture order breaks ties)."""
        if self._sorted is None:
            times = [message.time for message in self._messages]
            if any(map(math.isnan, times)):  # NaN breaks ordering by time alone: ties told apart by position too
                order = {id(message): position for position, message in enumerate(self._messages)}
                self._sorted = sorted(self._messages, key=lambda m: (m.time, order[id(m)]))
            else:  # a stable sort by time keeps capture order among equal times
                self._sorted = sorted(self._messages, key=_TIME)
        return list(self._sorted)

    def message_count(self) -> int:
        """How many messages were added so far."""
        return len(self._messages)

    def messages_since(self, position: int) -> list[Message]:
        """The messages added after the first ``position`` ones, in the order they were added."""
        return self._messages[position:]

    def exchange_of(self, message: Message) -> Exchange | None:
        return self._by_id.get(message.exchange)

    def revision(self, message: Message) -> str | None:
        """The revision the message belongs to, as named on the wire (may be outside the window)."""
        return self._revision.get(message.key)

    def exchange_revision(self, exchange_id: str) -> str | None:
        """The revision an exchange was attributed to (for exchanges that carry no message too)."""
        return self._exchange_revision.get(exchange_id)

    def session_revision(self, session_id: str) -> str | None:
        """The revision of the 2025 session the server issued ``session_id`` for, in answer to an ``initialize``
        in this log (``None``: an id the server never issued here)."""
        return self._session_revision.get(session_id)

    def session(self, message: Message) -> str | None:
        """The 2025 session (HTTP) or the stdio connection the message belongs to."""
        return self._session.get(message.key)

    def scope(self, message: Message) -> str:
        return self._scope.get(message.key, "")

    def request_of(self, message: Message) -> Message | None:
        """The message a response answers: a request, or a message with a readable id that was none."""
        return self._request_of.get(message.key)

    def responses_to(self, request: Message) -> list[Message]:
        return list(self._responses.get(request.key, ()))

    def orphan_responses(self) -> list[Message]:
        """Responses that answer no request seen in the traffic (or errors without an id)."""
        return list(self._orphans)

    @property
    def waiting(self) -> int:
        """How many requests (with an id) have no response in the log yet."""
        return self._waiting

    def cancellation(self, request: Message, *, before: float = math.inf) -> Message | None:
        """The sender's ``notifications/cancelled`` naming ``request`` (same id and JSON type, same session or
        connection when both have one), sent by ``before``; a cancelled request is owed no response."""
        ident = request.id_key
        if ident is None:
            return None
        session = self.session(request)
        for notice in self._cancellations.get((request.sender, ident), ()):
            other = self.session(notice)
            if notice.time <= before and (session is None or other is None or other == session):
                return notice
        return None

    def unanswered(self) -> list[Message]:
        """Requests that never got a response in the captured traffic."""
        return [
            request
            for requests in self._pending.values()
            for request in requests
            if not self._responses.get(request.key)
        ]

    def _scope_for_advertised(self, message: Message) -> list[str]:
        session = self.session(message)
        scopes = []
        if session is not None:
            scopes.append(session)
        exchange = self.exchange_of(message)
        if isinstance(exchange, HttpExchange):
            scopes.append(endpoint_of(exchange))
        scopes.append("*")
        return scopes

    def server_capabilities(self, message: Message) -> Advertised | None:
        """The capabilities the server last advertised (discover or initialize) for this message's scope."""
        for scope in self._scope_for_advertised(message):
            timeline = self._capabilities.get(scope)
            if timeline:
                return timeline.latest(message.time)
        return None

    def tools(self, message: Message) -> dict[str, Any] | None:
        """Tool definitions by name from the ``tools/list`` pages seen for this scope up to the message."""
        for scope in self._scope_for_advertised(message):
            timeline = self._tools.get(scope)
            if timeline:
                return timeline.merged(message.time)
        return None

    def initialize_request(self, message: Message) -> Message | None:
        """The ``initialize`` request of the session or connection this message belongs to."""
        session = self.session(message)
        if session is not None and session in self._initialize:
            return self._initialize[session]
        return None
