"""Turn bytes from the wire into JSON-RPC messages without ever raising.

Whatever a server or client writes is evidence, so parsing is strict but total: invalid UTF-8,
invalid JSON, duplicate object keys, ``NaN`` and friends are recorded as *problems* on the
message instead of exceptions. Classification follows the members present (request, notification,
result, error) before any schema is consulted, because the schema's ``JSONRPCMessage`` union
cannot tell a request from a notification.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsontext import UNSETTLED, LongInteger, decode_message, parse_integer
from mcp_assay.wire.slots import slot_setters

__all__ = [
    "LIMIT",
    "MISSING",
    "IdKey",
    "Problem",
    "Kind",
    "Message",
    "id_key",
    "parse_message",
    "parser_limit",
    "read_json",
]


class _Missing:
    """Marker for a member that is absent (as opposed to present with the value ``null``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

IdKey = tuple[str, Any]
"""A request id with its JSON type, so that ``1`` and ``"1"`` never compare equal."""


class Problem(NamedTuple):
    """A defect of the bytes or the shape of a message, found before any schema is consulted."""

    code: str
    """``encoding``, ``bom``, ``syntax``, ``duplicate-keys``, ``shape``, or ``limit`` (see :data:`LIMIT`)."""
    detail: str


LIMIT = "limit"
"""Problem code for bytes mcp-assay's own JSON parser cannot read although they may be valid JSON
(nested deeper than it recurses): a limit of the tool, never a fault of the peer, so what rests on
such a message is not verified. An integer longer than Python converts is no limit: it is read as a
:class:`~mcp_assay.wire.jsontext.LongInteger`."""


class Kind(StrEnum):
    """What a message is, judged from its members alone."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESULT = "result"
    ERROR = "error"
    BATCH = "batch"
    INVALID = "invalid"
    """Valid JSON that is not a JSON-RPC message object."""
    UNPARSEABLE = "unparseable"
    """Not JSON at all (or not UTF-8)."""

    @property
    def is_response(self) -> bool:
        return self is Kind.RESULT or self is Kind.ERROR


def id_key(value: Any) -> IdKey | None:
    """A hashable key for a JSON-RPC id that keeps its JSON type; ``None`` when it is not usable."""
    if value is MISSING:
        return None
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, str):
        return ("str", value)
    if value is None:
        return ("null", None)
    try:
        return ("other", json.dumps(value, sort_keys=True))
    except (RecursionError, ValueError):  # nested past what the encoder recurses: still an id of another type
        return ("other", "(too deep to compare)")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Message:
    """One JSON-RPC message (or an attempt at one) as it crossed the wire."""

    raw: bytes
    payload: Any
    """The parsed JSON value, or :data:`MISSING` when the bytes are not JSON."""
    kind: Kind
    sender: Side
    time: float
    problems: tuple[Problem, ...] = ()
    """What is wrong with the bytes themselves: encoding, syntax, duplicate keys, non-finite numbers."""
    exchange: str = ""
    """Id of the exchange (HTTP flow or stdio line) that carried the message."""
    index: int = 0
    """Position within its exchange: 0 is an HTTP request body, 1.. the response messages."""
    transport: str = ""
    """``http`` or ``stdio``."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # the members every check asks for, read once (a message is judged by a hundred checks)
    id: Any = field(init=False, compare=False, repr=False)
    id_key: IdKey | None = field(init=False, compare=False, repr=False)
    method: str | None = field(init=False, compare=False, repr=False)
    """``method`` when it is a string, else ``None``."""
    params: Any = field(init=False, compare=False, repr=False)
    result: Any = field(init=False, compare=False, repr=False)
    error: Any = field(init=False, compare=False, repr=False)
    meta: dict[str, Any] | None = field(init=False, compare=False, repr=False)
    """``params._meta`` for requests and notifications, ``result._meta`` for results (``None``: not an object)."""
    key: tuple[str, int] = field(init=False, compare=False, repr=False)
    """``(exchange, index)``: where the message is, the key the exchange log files it under."""

    def __init__(
        self,
        *,
        raw: bytes,
        payload: Any,
        kind: Kind,
        sender: Side,
        time: float,
        problems: tuple[Problem, ...] = (),
        exchange: str = "",
        index: int = 0,
        transport: str = "",
        extra: dict[str, Any] | None = None,
    ) -> None:
        """What the dataclass would make, written out (:func:`_fill`): a long capture makes one per message, and
        the generated ``__init__`` and ``__post_init__`` of a frozen class cost about twice as much."""
        _fill(self, raw, payload, kind, sender, time, problems, exchange, index, transport, extra)

    # -- members ---------------------------------------------------------------------------------
    def member(self, name: str) -> Any:
        if isinstance(self.payload, dict):
            return self.payload.get(name, MISSING)
        return MISSING

    @property
    def error_code(self) -> Any:
        error = self.error
        if isinstance(error, dict):
            return error.get("code", MISSING)
        return MISSING

    @property
    def result_type(self) -> Any:
        result = self.result
        if isinstance(result, dict):
            return result.get("resultType", MISSING)
        return MISSING

    def describe(self) -> str:
        """A short label such as ``request tools/list id=3`` or ``error id=3 code=-32602``."""
        if self.kind in (Kind.REQUEST, Kind.NOTIFICATION):
            label = f"{self.kind.value} {self.method or '?'}"
            return f"{label} id={_id_text(self.id)}" if self.kind is Kind.REQUEST else label
        if self.kind is Kind.RESULT:
            return f"result id={_id_text(self.id)}"
        if self.kind is Kind.ERROR:
            ident = "" if self.id is MISSING else f" id={_id_text(self.id)}"
            return f"error{ident} code={self.error_code if self.error_code is not MISSING else '?'}"
        if self.kind is Kind.BATCH:
            return f"batch of {len(self.payload)}"
        return self.kind.value


_MESSAGE_FIELDS = slot_setters(
    Message, "raw", "payload", "kind", "sender", "time", "problems", "exchange", "index", "transport", "extra", "id",
    "id_key", "method", "params", "result", "error", "meta", "key",
)  # fmt: skip
"""The slot setters of :class:`Message`'s fields (:mod:`~mcp_assay.wire.slots` says why)."""
_NO_MEMBERS: dict[str, Any] = {}


def _fill(
    message: Message,
    raw: bytes,
    payload: Any,
    kind: Kind,
    sender: Side,
    time: float,
    problems: tuple[Problem, ...],
    exchange: str,
    index: int,
    transport: str,
    extra: dict[str, Any] | None,
) -> None:
    """Set every field of a new :class:`Message` (:meth:`Message.__init__`, and :func:`parse_message` without the
    keywords)."""
    (
        set_raw, set_payload, set_kind, set_sender, set_time, set_problems, set_exchange, set_index, set_transport,
        set_extra, set_id, set_id_key, set_method, set_params, set_result, set_error, set_meta, set_key,
    ) = _MESSAGE_FIELDS  # fmt: skip
    set_raw(message, raw)
    set_payload(message, payload)
    set_kind(message, kind)
    set_sender(message, sender)
    set_time(message, time)
    set_problems(message, problems)
    set_exchange(message, exchange)
    set_index(message, index)
    set_transport(message, transport)
    set_extra(message, {} if extra is None else extra)
    members = payload if isinstance(payload, dict) else _NO_MEMBERS
    ident = members.get("id", MISSING)
    set_id(message, ident)
    kind_of_id = type(ident)  # the usual ids keyed here; id_key knows every other value
    set_id_key(message, ("int", ident) if kind_of_id is int else ("str", ident) if kind_of_id is str else id_key(ident))
    method = members.get("method")
    set_method(message, method if isinstance(method, str) else None)
    params = members.get("params", MISSING)
    result = members.get("result", MISSING)
    set_params(message, params)
    set_result(message, result)
    set_error(message, members.get("error", MISSING))
    holder = result if kind is Kind.RESULT else params
    meta = holder.get("_meta") if isinstance(holder, dict) else None
    set_meta(message, meta if isinstance(meta, dict) else None)
    set_key(message, (exchange, index))


_ID_SHOWN = 40
"""Characters of an id a label shows; a longer id (4,301 digits, say) is named by its start and length."""


def _id_text(value: Any) -> str:
    """An id as JSON text for a label: whole when short, else its start and how long it is."""
    if isinstance(value, LongInteger):
        text = value.text
    elif type(value) is int:
        text = str(value)  # what json.dumps writes of an int, without the encoder
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    if len(text) <= _ID_SHOWN:
        return text
    if isinstance(value, int):
        size = f"{len(text) - text.startswith('-')} digits"
    else:
        size = f"{len(value) if isinstance(value, str) else len(text)} characters"
    return f"{text[: _ID_SHOWN // 2]}…({size})"


class _DuplicateKeys(list[str]):
    pass


def _pairs_hook(found: _DuplicateKeys) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                found.append(key)
            result[key] = value
        return result

    return hook


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _limit(exc: Exception) -> Problem | None:
    """The parser gave up on something it cannot represent, not on invalid JSON."""
    if isinstance(exc, RecursionError):
        return Problem(LIMIT, "it nests deeper than mcp-assay's JSON parser reads (a limit of the tool)")
    return None


def parser_limit(message: Message) -> str | None:
    """Why mcp-assay could not read ``message`` although it may be valid JSON; ``None`` when it could."""
    return next((problem.detail for problem in message.problems if problem.code == LIMIT), None)


def classify(payload: Any) -> tuple[Kind, tuple[Problem, ...]]:
    """Classify a parsed JSON value by its members; return the kind and any shape problems."""
    if isinstance(payload, list):
        return Kind.BATCH, (Problem("shape", "a JSON array (batch) instead of one message object"),)
    if not isinstance(payload, dict):
        return Kind.INVALID, (Problem("shape", f"a JSON {type(payload).__name__} instead of a message object"),)
    has_method = "method" in payload
    has_id = "id" in payload
    has_result = "result" in payload
    has_error = "error" in payload
    if has_method:
        if has_result or has_error:
            return Kind.INVALID, (Problem("shape", "carries both a method and a result/error"),)
        if not isinstance(payload["method"], str):
            return Kind.INVALID, (Problem("shape", "method is not a string"),)
        return (Kind.REQUEST if has_id else Kind.NOTIFICATION), ()
    if has_result and has_error:
        return Kind.INVALID, (Problem("shape", "carries both result and error"),)
    if has_result:
        if not has_id:
            return Kind.INVALID, (Problem("shape", "a result without an id"),)
        return Kind.RESULT, ()
    if has_error:
        return Kind.ERROR, ()
    return Kind.INVALID, (Problem("shape", "neither a request, a notification nor a response"),)


def read_json(data: bytes) -> tuple[Any, tuple[Problem, ...]]:
    """The standard library's reading of a message's bytes: the value (:data:`MISSING` when they are
    not JSON) and every problem of the bytes themselves, the reference the fast reader is held to."""
    problems: list[Problem] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem("encoding", f"not valid UTF-8 at byte {exc.start}"))
        text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        problems.append(Problem("bom", "starts with a byte-order mark"))
        text = text[1:]
    duplicates = _DuplicateKeys()
    try:
        payload = json.loads(
            text, object_pairs_hook=_pairs_hook(duplicates), parse_constant=_reject_constant, parse_int=parse_integer
        )
    except (ValueError, RecursionError) as exc:
        problems.append(_limit(exc) or Problem("syntax", f"not valid JSON: {exc}"))
        return MISSING, tuple(problems)
    if duplicates:
        problems.append(Problem("duplicate-keys", ", ".join(sorted(set(duplicates)))))
    return payload, tuple(problems)


def parse_message(
    raw: bytes | str,
    *,
    sender: Side,
    time: float,
    exchange: str = "",
    index: int = 0,
    transport: str = "",
) -> Message:
    """Parse and classify one message. Never raises; every defect becomes a problem string.

    Bytes the fast reader settles (:func:`~mcp_assay.wire.jsontext.decode_message`: sound UTF-8 JSON without
    a duplicate key) have no problem of their own; all others are read by :func:`read_json`, which
    finds and names each problem."""
    data = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else bytes(raw)
    payload = decode_message(data)
    problems: tuple[Problem, ...] = ()
    if payload is UNSETTLED:
        payload, problems = read_json(data)
    if payload is MISSING:
        kind = Kind.UNPARSEABLE
    else:
        kind, shape = classify(payload)
        problems += shape
    message = _new(Message)  # what Message(...) makes, without its keywords: one is made per message read
    _fill(message, data, payload, kind, sender, time, problems, exchange, index, transport, None)
    return message


_new = object.__new__
