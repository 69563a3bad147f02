"""One model of what crossed the wire, whatever captured it.

The mitmproxy addon, the stdio tap, the active suite and a recording read from disk all produce
the same records: an :class:`HttpExchange` per HTTP request/response pair (with every SSE event and
how the exchange ended), a :class:`StdioLine` per line on a stdio connection, and a few process
and observation records. Checks only ever see these types, which is what lets one rule judge
live traffic, a probe and an old recording alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from operator import itemgetter
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp_assay.cases import NO_FACTS, Case, Explored, Facts, case_of_record
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Message, parse_message
from mcp_assay.wire.slots import slot_setters
from mcp_assay.wire.sse import SseEvent

__all__ = [
    "Ending",
    "EVENTS_LOST",
    "EndReason",
    "Exchange",
    "Headers",
    "HttpExchange",
    "LISTENING",
    "HttpRequest",
    "HttpResponse",
    "Hop",
    "OAUTH_AUTHORIZATION",
    "OAUTH_REGISTRATION",
    "OAUTH_TOKEN",
    "Observation",
    "Probe",
    "ProcessExit",
    "StdioLine",
    "answered_by_assay",
    "is_authentication_answer",
    "is_well_known",
    "media_type",
    "oauth_kind",
    "oauth_request_kind",
    "probe_case",
    "sent_by_assay",
]


class _Lowered(dict[str, str]):
    """Header names lower-cased, each once: a capture names few headers, in every block made and every look-up
    (names past :data:`NAMES_KEPT`, or longer than :data:`NAME_KEPT_LENGTH`, are lowered each time)."""

    def __missing__(self, name: str) -> str:
        lowered = name.lower()
        if len(self) < NAMES_KEPT and len(name) <= NAME_KEPT_LENGTH:
            self[name] = lowered
        return lowered


NAMES_KEPT = 256
NAME_KEPT_LENGTH = 64
_LOWER = _Lowered()


_NAME = itemgetter(0)
_CONTENT_TYPE = HeaderKey.CONTENT_TYPE.lower()
_EVENT_STREAM = str(MediaType.EVENT_STREAM)


class Headers(tuple[tuple[str, str], ...]):
    """Header fields in wire order; names compare case-insensitively, values exactly.

    Each value a header block holds first is indexed by lower-cased name when the block is made: rules ask
    a block for its headers some thirty times a message, so :meth:`get` is one dictionary look-up."""

    _first: dict[str, str]
    """The first value of each header, by lower-cased name."""
    _media_type: str | None
    """What :meth:`media_type` finds, worked out when the block is made (every block is asked it)."""

    def __new__(cls, items: Iterable[tuple[str, str]] | Mapping[str, str] = ()) -> Headers:
        pairs = items.items() if isinstance(items, Mapping) else items
        return cls.of_text([(str(k), str(v)) for k, v in pairs])

    @classmethod
    def of_text(cls, pairs: Iterable[tuple[str, str]]) -> Headers:
        """Headers from pairs already of plain ``str`` (a recording's, type-checked as they were decoded)."""
        headers = tuple.__new__(cls, pairs)
        lowered = _LOWER
        first = {lowered[name]: value for name, value in headers}
        if len(first) != len(headers):  # a name repeats: backwards, so that it keeps its first value
            first = {lowered[name]: value for name, value in reversed(headers)}
        headers._first = first
        headers._media_type = media_type(first.get(_CONTENT_TYPE))
        return headers

    def _by_name(self) -> dict[str, list[str]]:
        """Values by lower-cased name, in wire order (built when :meth:`get_all` first asks a block that repeats a
        name)."""
        index: dict[str, list[str]] | None = self.__dict__.get("_index")
        if index is None:
            index = {}
            for key, value in self:
                index.setdefault(key.lower(), []).append(value)
            self.__dict__["_index"] = index
        return index

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of a header, or ``default``."""
        return self._first.get(_LOWER[name], default)

    def get_all(self, name: str) -> list[str]:
        """Every value of a header, in wire order."""
        lowered = _LOWER[name]
        if len(self._first) == len(self):  # no name repeats, so each has the one value the index holds
            value = self._first.get(lowered)
            return [] if value is None else [value]
        return list(self._by_name().get(lowered, ()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def has_any(self, lowered: frozenset[str]) -> bool:
        """Whether the block holds any of these headers (names given lower-cased): one look for them all."""
        return not self._first.keys().isdisjoint(lowered)

    def names(self) -> list[str]:
        return list(map(_NAME, self))

    def media_type(self) -> str | None:
        """The media type ``Content-Type`` names (:func:`media_type`), worked out once: rules ask it again and again."""
        return self._media_type


def media_type(content_type: str | None) -> str | None:
    """``application/json; charset=utf-8`` -> ``application/json``; ``None`` when absent."""
    if content_type is None:
        return None
    known = _MEDIA_TYPES.get(content_type)
    if known is None:
        known = content_type.split(";", 1)[0].strip().lower()
        if len(_MEDIA_TYPES) < 256:  # a capture names few Content-Types, read many times each
            _MEDIA_TYPES[content_type] = known
    return known or None


_MEDIA_TYPES: dict[str, str] = {}


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class HttpRequest:
    """An HTTP request as the client sent it."""

    method: str
    url: str
    headers: Headers
    body: bytes
    time: float

    def __init__(self, *, method: str, url: str, headers: Headers, body: bytes, time: float) -> None:
        set_method, set_url, set_headers, set_body, set_time = _REQUEST_FIELDS
        set_method(self, method)
        set_url(self, url)
        set_headers(self, headers)
        set_body(self, body)
        set_time(self, time)

    @property
    def path(self) -> str:
        """The URL's path (``/`` when it has none), split out once per URL (:data:`_PATHS`)."""
        url = self.url
        path = _PATHS.get(url)
        if path is None:
            path = urlsplit(url).path or "/"
            if len(_PATHS) < PATHS_KEPT and len(url) <= PATH_KEPT_LENGTH:
                _PATHS[url] = path
        return path

    @property
    def content_type(self) -> str | None:
        return self.headers.media_type()


_REQUEST_FIELDS = slot_setters(HttpRequest, "method", "url", "headers", "body", "time")
_PATHS: dict[str, str] = {}
""":attr:`HttpRequest.path` by URL: a capture names few URLs, and every exchange asks its request's path."""
PATHS_KEPT = 256
"""URLs :data:`_PATHS` holds at most; past that, or for a URL longer than :data:`PATH_KEPT_LENGTH`, each is split."""
PATH_KEPT_LENGTH = 2048


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class HttpResponse:
    """An HTTP response: the head when it arrived, and either a body or the SSE events."""

    status: int
    headers: Headers
    time: float
    """When the response head arrived."""
    reason: str = ""
    body: bytes | None = None
    """The body for non-streamed responses; ``None`` for an event stream."""
    events: tuple[SseEvent, ...] = ()

    def __init__(
        self,
        *,
        status: int,
        headers: Headers,
        time: float,
        reason: str = "",
        body: bytes | None = None,
        events: tuple[SseEvent, ...] = (),
    ) -> None:
        set_status, set_headers, set_time, set_reason, set_body, set_events = _RESPONSE_FIELDS
        set_status(self, status)
        set_headers(self, headers)
        set_time(self, time)
        set_reason(self, reason)
        set_body(self, body)
        set_events(self, events)

    @property
    def content_type(self) -> str | None:
        return self.headers.media_type()

    @property
    def is_event_stream(self) -> bool:
        return self.headers._media_type == _EVENT_STREAM


_RESPONSE_FIELDS = slot_setters(HttpResponse, "status", "headers", "time", "reason", "body", "events")


EVENTS_LOST = "the capture kept none of the stream's events"
"""What a reader of another tool's capture puts in an ``open`` ending whose stream body was not kept."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """What mcp-assay itself did to an exchange: sent its request on purpose, or answered it.

    The active suite (and the proxy, when asked to probe) tags every request it sends with the
    :class:`~mcp_assay.cases.Case` it belongs to; an answer mcp-assay makes up on the server's behalf
    (an injected fault) carries one too, with ``injected`` set. Rules read the tag to tell traffic
    mcp-assay made from the peers' own: a request malformed on purpose is never held against the
    client, an injected answer never against the server; and they pick out the exchanges of a case
    by the case itself (:meth:`of_case`)."""

    case: Case
    """Which case made the exchange."""
    intent: str = ""
    """What this sending expects, in words (the case's own words unless the sender said more), for the recording."""
    invalid: bool = False
    """The request is malformed on purpose."""
    injected: bool = False
    """mcp-assay answered the client itself; the answer is not the server's."""
    off_version: bool = False
    """The request speaks no revision under test: it names another version (an unsupported one, an older one, a
    header that disagrees with the body) or none at all. A server may serve it as another revision, so the
    exchange is evidence only for the checks that judge version negotiation itself (``Check.off_version``)."""
    revision: str | None = None
    """The revision the request was sent at."""
    facts: Facts = NO_FACTS
    """What only this sending knows (the principal, the tool, the step ...)."""

    @classmethod
    def of(
        cls, case: Case, intent: str | None = None, *, invalid: bool | None = None, injected: bool = False,
        facts: Facts = NO_FACTS,
    ) -> Probe:  # fmt: skip
        """The tag of one sending of ``case`` (``invalid`` as the case declares it unless the sender knows better; a
        marker that is also a fact, such as a refusal's kind, among the facts as a recording would give it)."""
        if case.marker is not None:
            facts = facts.with_recorded(*case.marker)
        return cls(
            case=case, intent=intent if intent is not None else f"{case.sends}: {case.expects}",
            invalid=case.invalid if invalid is None else invalid, injected=injected, off_version=case.off_version,
            facts=facts,
        )  # fmt: skip

    @property
    def name(self) -> str:
        """The case's name, as recordings and reports carry it."""
        return self.case.name

    @property
    def family(self) -> str:
        return self.case.family

    def of_case(self, *cases: Case) -> bool:
        """Whether the exchange was made by one of ``cases`` (a page of a paged case counts as the case)."""
        return self.case.is_one_of(*cases)

    @property
    def explored(self) -> Explored | None:
        """For a call ``run --explore`` made: how it came about (its tool, seed, role and arguments' kind)."""
        return self.facts.explored

    def at(self, revision: str | None) -> Probe:
        """The tag as sent: naming the revision the request was sent at."""
        return replace(self, revision=revision) if revision is not None else self

    def with_facts(self, **changes: Any) -> Probe:
        """The tag with more facts of the sending (``None`` values change nothing)."""
        return replace(self, facts=self.facts.merged(**changes))

    def to_record(self) -> dict[str, Any]:
        """The tag as a recording stores it: one flat object (the case's name and family, its marker, the facts)."""
        record: dict[str, Any] = {"name": self.case.name, "family": self.case.family, "invalid": self.invalid}
        record["intent"] = self.intent
        if self.injected:
            record["injected"] = True
        if self.off_version:
            record["off_version"] = True
        for key, value in self.case.recorded().items():
            record.setdefault(key, value)
        if self.revision is not None:
            record["revision"] = self.revision
        for key, value in self.facts.to_record().items():
            record.setdefault(key, value)
        return record

    @classmethod
    def from_record(cls, value: Any) -> Probe | None:
        """A tag read back from a recording, to the registry's case when it names one; ``None`` when there is no
        tag (or it is not an object)."""
        if not isinstance(value, Mapping):
            return None
        revision = value.get("revision")
        return cls(
            case=case_of_record(value),
            intent=str(value.get("intent", "ordinary request")),
            invalid=value.get("invalid") is True,
            injected=value.get("injected") is True,
            off_version=value.get("off_version") is True,
            revision=revision if isinstance(revision, str) else None,
            facts=Facts.from_record(value),
        )


class Hop(StrEnum):
    """Which side of a gateway an exchange crossed, when mcp-assay watches both (``None``: no gateway).

    A gateway is a server to its clients and a client to its upstream. Its *front* hop runs between the
    client and the gateway (the gateway answers there as a server); its *back* hop between the gateway and
    the upstream server (the gateway asks there as a client). The same rules judge both hops; who is at
    fault for a finding follows from the hop and the side (:mod:`mcp_assay.wire.hops`)."""

    FRONT = "front"
    BACK = "back"

    @classmethod
    def read(cls, value: object) -> Hop | None:
        """A hop as a recording names it; ``None`` for anything else (recordings made before hops had none)."""
        return cls(value) if value in ("front", "back") else None


class EndReason(StrEnum):
    """How an HTTP exchange finished."""

    COMPLETE = "complete"
    CLIENT_DISCONNECT = "client-disconnect"
    """The client closed the connection before the response ended (a 2026 cancellation)."""
    SERVER_DISCONNECT = "server-disconnect"
    ERROR = "error"
    OPEN = "open"
    """Still open when the capture stopped (e.g. a listen stream)."""


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Ending:
    """When and how an exchange ended."""

    reason: EndReason
    time: float
    detail: str = ""

    def __init__(self, *, reason: EndReason, time: float, detail: str = "") -> None:
        set_reason, set_time, set_detail = _ENDING_FIELDS
        set_reason(self, reason)
        set_time(self, time)
        set_detail(self, detail)


_ENDING_FIELDS = slot_setters(Ending, "reason", "time", "detail")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class HttpExchange:
    """One HTTP request and its response, with the JSON-RPC messages both carried."""

    id: str
    request: HttpRequest
    response: HttpResponse | None = None
    ending: Ending | None = None
    connection: str = ""
    """Client connection the exchange travelled on (when the capture knows it)."""
    probe: Probe | None = None
    """Set when mcp-assay sent this request (or answered it) itself."""
    hop: Hop | None = None
    """The side of a gateway the exchange crossed (``None``: no gateway was watched)."""
    messages: tuple[Message, ...] = field(default=(), compare=False)
    # what rules ask an exchange again and again, worked out once when it is made
    time: float = field(init=False, compare=False, repr=False)
    """When the request was sent (the request's time)."""
    request_message: Message | None = field(init=False, compare=False, repr=False)
    """The JSON-RPC message in the request body, if there was a body."""
    response_messages: tuple[Message, ...] = field(init=False, compare=False, repr=False)
    """The messages the response carried, in order."""

    transport = "http"

    def __init__(
        self,
        *,
        id: str,
        request: HttpRequest,
        response: HttpResponse | None = None,
        ending: Ending | None = None,
        connection: str = "",
        probe: Probe | None = None,
        hop: Hop | None = None,
        messages: tuple[Message, ...] = (),
    ) -> None:
        _fill_exchange(self, id, request, response, ending, connection, probe, hop, messages)

    @classmethod
    def build(
        cls,
        *,
        id: str,
        request: HttpRequest,
        response: HttpResponse | None = None,
        ending: Ending | None = None,
        connection: str = "",
        probe: Probe | None = None,
        hop: Hop | None = None,
    ) -> HttpExchange:
        """Create the exchange and parse the messages it carried."""
        exchange: HttpExchange = object.__new__(cls)  # what cls(...) makes, without its keywords a second time
        _fill_exchange(
            exchange, id, request, response, ending, connection, probe, hop, _messages_of(id, request, response)
        )
        return exchange

    @property
    def client_disconnected(self) -> bool:
        return self.ending is not None and self.ending.reason is EndReason.CLIENT_DISCONNECT

    @property
    def events_lost(self) -> bool:
        """An event stream the capture kept none of (a flow file or HAR of a stream cut short)."""
        return self.ending is not None and self.ending.reason is EndReason.OPEN and EVENTS_LOST in self.ending.detail


_EXCHANGE_FIELDS = slot_setters(
    HttpExchange, "id", "request", "response", "ending", "connection", "probe", "hop", "messages", "time",
    "request_message", "response_messages",
)  # fmt: skip


def _fill_exchange(
    exchange: HttpExchange,
    id: str,
    request: HttpRequest,
    response: HttpResponse | None,
    ending: Ending | None,
    connection: str,
    probe: Probe | None,
    hop: Hop | None,
    messages: tuple[Message, ...],
) -> None:
    """Set every field of a new :class:`HttpExchange` (its ``__init__``, and :meth:`HttpExchange.build` without the
    keywords), what rules ask again and again worked out once."""
    (
        set_id, set_request, set_response, set_ending, set_connection, set_probe, set_hop, set_messages, set_time,
        set_request_message, set_response_messages,
    ) = _EXCHANGE_FIELDS  # fmt: skip
    set_id(exchange, id)
    set_request(exchange, request)
    set_response(exchange, response)
    set_ending(exchange, ending)
    set_connection(exchange, connection)
    set_probe(exchange, probe)
    set_hop(exchange, hop)
    set_messages(exchange, messages)
    set_time(exchange, request.time)
    asked: Message | None = None
    for message in messages:  # the first message at index 0 is the request's; those after 0 the response's
        if message.index == 0:
            asked = message
            break
    set_request_message(exchange, asked)
    set_response_messages(exchange, tuple([message for message in messages if message.index > 0]))


def probe_case(item: Exchange | None) -> Case | None:
    """The case of the probe an exchange carries; ``None`` for the peers' own traffic."""
    probe = item.probe if item is not None else None
    return probe.case if probe is not None else None


def sent_by_assay(item: Exchange | None) -> bool:
    """mcp-assay sent this request itself (a probe): it says nothing about the client."""
    probe = item.probe if item is not None else None
    return probe is not None and not probe.injected


def answered_by_assay(item: Exchange | None) -> bool:
    """mcp-assay answered this exchange itself, or reshaped or delayed the answer (an injected fault):
    the client's request is its own, but what came back is not the server's doing."""
    probe = item.probe if item is not None else None
    return probe is not None and probe.injected


def _looks_like_json(body: bytes) -> bool:
    """Whether the body's first byte past any whitespace opens an object or an array (without copying the body)."""
    head = body[:64].lstrip()
    if not head and len(body) > 64:
        head = body.lstrip()
    return head[:1] in (b"{", b"[")


def _blank(body: bytes) -> bool:
    """``not body.strip()``, without copying the body."""
    return not body or body.isspace()


WELL_KNOWN = "/.well-known/"
"""Path segment of metadata documents (RFC 8615; OpenID discovery also puts it after an issuer's path)."""


def is_well_known(request: HttpRequest) -> bool:
    """A request for a ``.well-known`` document (Protected Resource Metadata, authorization server
    metadata): HTTP traffic an MCP capture may hold, whose JSON body is no JSON-RPC message."""
    return WELL_KNOWN in request.path


OAUTH_AUTHORIZATION, OAUTH_TOKEN, OAUTH_REGISTRATION = "authorization", "token", "registration"
_FORM = "application/x-www-form-urlencoded"


def oauth_request_kind(method: str, url: str, content_type: str | None, body: bytes) -> str | None:
    """Which step of a client's OAuth flow a request is, told from its shape alone.

    An authorization request is a ``GET`` naming ``response_type`` and ``client_id``; a token
    request a form ``POST`` with a ``grant_type``; a dynamic client registration a JSON ``POST``
    of an object with ``redirect_uris`` and no ``jsonrpc`` member. ``None`` for anything else."""
    verb = method.upper()
    if verb == "GET":
        asks = _AUTHORIZATIONS.get(url)
        if asks is None:
            query = parse_qs(urlsplit(url).query)
            asks = "response_type" in query and "client_id" in query
            if len(_AUTHORIZATIONS) < PATHS_KEPT and len(url) <= PATH_KEPT_LENGTH:
                _AUTHORIZATIONS[url] = asks
        return OAUTH_AUTHORIZATION if asks else None
    if verb != "POST" or not body:
        return None
    if content_type == _FORM:
        form = parse_qs(body.decode("utf-8", "replace"))
        return OAUTH_TOKEN if "grant_type" in form else None
    if b"redirect_uris" in body and _looks_like_json(body):
        try:
            payload = json.loads(body)
        except ValueError:
            return None
        if isinstance(payload, dict) and "jsonrpc" not in payload and isinstance(payload.get("redirect_uris"), list):
            return OAUTH_REGISTRATION
    return None


_AUTHORIZATIONS: dict[str, bool] = {}
"""Whether a ``GET`` of a URL asks for an authorization, by URL (held as :data:`_PATHS` is: a listening stream is a
``GET`` of the same URL again and again)."""


def oauth_kind(request: HttpRequest) -> str | None:
    """:func:`oauth_request_kind` of a captured request."""
    return oauth_request_kind(request.method, request.url, request.content_type, request.body)


def is_authentication_answer(response: HttpResponse) -> bool:
    """A ``401``, or a ``403`` with a ``WWW-Authenticate`` challenge: the HTTP authorization layer's
    answer, whose body (often an OAuth error object) is not an MCP message unless it is JSON-RPC."""
    return response.status == 401 or (
        response.status == 403 and response.headers.get(HeaderKey.WWW_AUTHENTICATE) is not None
    )


def _speaks_jsonrpc(payload: Any) -> bool:
    """An object (or a batch of objects) with a ``jsonrpc`` member; an OAuth ``{"error": ...}`` is not."""
    items = payload if isinstance(payload, list) else [payload]
    return bool(items) and all(isinstance(item, dict) and "jsonrpc" in item for item in items)


def _messages_of(exchange: str, request: HttpRequest, response: HttpResponse | None) -> tuple[Message, ...]:
    method = request.method
    if method in ("GET", "HEAD") and is_well_known(request):
        return ()
    ordinary_post = method == "POST" and b"redirect_uris" not in request.body and request.content_type != _FORM
    if not ordinary_post and oauth_kind(request) is not None:  # (a POST of neither kind is no step of it)
        return ()  # a step of an OAuth flow: HTTP, not JSON-RPC
    asked = (
        (
            parse_message(
                request.body, sender=Side.CLIENT, time=request.time, exchange=exchange, index=0, transport="http"
            ),
        )
        if request.body
        else ()
    )
    if response is None:
        return asked
    status = response.status
    streamed = response.is_event_stream
    if (status == 401 or status == 429 or (status == 403 and is_authentication_answer(response))) and not streamed:
        # the HTTP layer's answer (a gateway's, often): its body is JSON-RPC only if it says so
        body = response.body or b""
        if not _blank(body):
            answer = parse_message(
                body, sender=Side.SERVER, time=response.time, exchange=exchange, index=1, transport="http"
            )
            if _speaks_jsonrpc(answer.payload):
                return (*asked, answer)
        return asked
    if streamed:
        answers: list[Message] = []
        index = 1
        for event in response.events:
            if event.carries_message and event.data is not None:
                answers.append(
                    parse_message(
                        event.data,
                        sender=Side.SERVER,
                        time=event.time,
                        exchange=exchange,
                        index=index,
                        transport="http",
                    )
                )
                index += 1
        return (*asked, *answers)
    body = response.body or b""
    if _blank(body):
        return asked
    if response.content_type == MediaType.JSON or _looks_like_json(body):
        return (
            *asked,
            parse_message(body, sender=Side.SERVER, time=response.time, exchange=exchange, index=1, transport="http"),
        )
    return asked


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioLine:
    """One line written on a stdio connection, by the client (stdin) or the server (stdout)."""

    id: str
    connection: str
    sender: Side
    time: float
    raw: bytes
    message: Message
    probe: Probe | None = None
    hop: Hop | None = None
    """The side of a gateway the line crossed (a stdio server a gateway spawned is its back hop)."""

    transport = "stdio"

    @classmethod
    def build(
        cls,
        *,
        id: str,
        connection: str,
        sender: Side,
        time: float,
        raw: bytes,
        probe: Probe | None = None,
        hop: Hop | None = None,
    ) -> StdioLine:
        line = raw[:-1] if raw.endswith(b"\n") else raw
        message = parse_message(line, sender=sender, time=time, exchange=id, index=0, transport="stdio")
        return cls(
            id=id, connection=connection, sender=sender, time=time, raw=raw, message=message, probe=probe, hop=hop
        )

    @property
    def messages(self) -> tuple[Message, ...]:
        return (self.message,)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessExit:
    """A stdio server process ended (or the tap stopped watching it)."""

    id: str
    connection: str
    time: float
    code: int | None
    stdin_closed_at: float | None = None
    """When the client closed the server's stdin, if it did."""
    signals: tuple[str, ...] = ()
    """Signals forwarded to the server before it exited, in order."""
    hop: Hop | None = None

    transport = "stdio"
    messages: tuple[Message, ...] = ()
    probe: Probe | None = None


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Observation:
    """Something the tool observed that is not MCP traffic: a witness read, stderr text, a note."""

    id: str
    time: float
    kind: str
    """``witness``, ``stderr``, ``note`` ..."""
    data: Mapping[str, Any]
    connection: str = ""

    transport = ""
    messages: tuple[Message, ...] = ()
    probe: Probe | None = None
    hop: Hop | None = None

    def __init__(
        self,
        *,
        id: str,
        time: float,
        kind: str,
        data: Mapping[str, Any],
        connection: str = "",
        messages: tuple[Message, ...] = (),
        probe: Probe | None = None,
        hop: Hop | None = None,
    ) -> None:
        set_id, set_time, set_kind, set_data, set_connection, set_messages, set_probe, set_hop = _OBSERVATION_FIELDS
        set_id(self, id)
        set_time(self, time)
        set_kind(self, kind)
        set_data(self, data)
        set_connection(self, connection)
        set_messages(self, messages)
        set_probe(self, probe)
        set_hop(self, hop)


_OBSERVATION_FIELDS = slot_setters(
    Observation, "id", "time", "kind", "data", "connection", "messages", "probe", "hop"
)  # fmt: skip


LISTENING = "listening"
"""Observation kind: the addresses a server started by the run listens on (``run --serve``, AUTH-31)."""

Exchange = HttpExchange | StdioLine | ProcessExit | Observation
"""Everything an exchange log can hold."""


def body_text(body: bytes | None, limit: int = 2000) -> str:
    """Render a body for evidence: UTF-8 text, truncated, or a byte count for binary."""
    if not body:
        return ""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return f"<{len(body)} bytes, not UTF-8>"
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def compact_json(value: Any, limit: int = 600) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit] + "…"
