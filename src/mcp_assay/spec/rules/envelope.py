"""The request envelope and ``_meta`` (META-): what every request carries besides its method.

A 2026-07-28 request names its protocol version and the client's capabilities in
``params._meta`` and should say which client sent it; every ``_meta`` object in either revision
follows one key grammar, with prefixes whose second label is ``modelcontextprotocol`` or ``mcp``
reserved for the protocol, and the W3C trace keys keep their W3C syntax. The server side of the
envelope is judged too: a ``-32021`` must name capabilities the request really lacked, and the
self-reported ``clientInfo`` must not change what a server answers.

The small accessors at the top are shared by the version, result and handshake rules.
"""

from __future__ import annotations

import json
import re
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from mcp_assay.checks import Context, Finding, failed, log_check, message_check, passed
from mcp_assay.jsonrpc import MISSING, Kind, Message
from mcp_assay.spec.rules._common import error_code, http_exchange
from mcp_assay.traffic import PROTOCOL_VERSION_KEY, ExchangeLog, endpoint_of
from mcp_assay.verdicts import Level, Side
from mcp_assay.wire import HttpExchange

__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "answer_to",
    "canonical",
    "client_capabilities",
    "http_status",
    "is_probe",
    "meta_key_problem",
    "meta_objects",
    "memo",
    "meta_version",
    "place_of",
    "request_meta",
]

CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX = rf"{_LABEL}(?:\.{_LABEL})*/"
_NAME = r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
META_KEY = re.compile(rf"(?:{_PREFIX})?{_NAME}")
"""The ``_meta`` key grammar: an optional reverse-DNS prefix ending in ``/``, then a name."""
PREFIXED_KEY = re.compile(rf"{_PREFIX}{_NAME}")

RESERVED_LABELS = frozenset({"modelcontextprotocol", "mcp"})
KNOWN_RESERVED_KEYS = frozenset(
    {
        PROTOCOL_VERSION_KEY,
        CLIENT_CAPABILITIES_KEY,
        CLIENT_INFO_KEY,
        LOG_LEVEL_KEY,
        SERVER_INFO_KEY,
        "io.modelcontextprotocol/subscriptionId",
        "io.modelcontextprotocol/related-task",
        "io.modelcontextprotocol/model-immediate-response",
    }
)
"""Reserved-prefix keys the specification (or its tasks utility) defines."""

TRACE_KEYS = ("traceparent", "tracestate", "baggage")

USER_DATA_MEMBERS = frozenset({"arguments", "structuredContent", "inputSchema", "outputSchema", "requestedSchema"})
"""Members whose values are application data or JSON Schemas: a ``_meta`` inside them is not MCP's."""

# Top-level domains a reverse-DNS prefix plausibly starts with, besides every two-letter country code.
GENERIC_TLDS = frozenset(
    {
        "com", "org", "net", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "dev", "app", "cloud",
        "tech", "xyz", "online", "site", "page", "run", "tools", "software", "systems", "solutions", "services",
        "company", "global", "world", "studio", "design", "codes", "engineering", "works", "zone", "store",
        "shop", "blog", "io", "ai", "arpa",
    }
)  # fmt: skip


# -- accessors shared by the envelope rule modules -----------------------------------------------
_MEMO: weakref.WeakKeyDictionary[ExchangeLog, dict[str, tuple[int, Any]]] = weakref.WeakKeyDictionary()


def memo[T](ctx: Context, name: str, compute: Callable[[Context], T]) -> T:
    """``compute(ctx)`` once per log (and per log size), shared by every check that needs it.

    Several rules need the same view of the traffic (the discover results, the 2025 sessions);
    building it once keeps a whole-log evaluation linear instead of quadratic."""
    table = _MEMO.setdefault(ctx.log, {})
    cached = table.get(name)
    if cached is not None and cached[0] == len(ctx.log):
        return cached[1]  # type: ignore[no-any-return]
    value = compute(ctx)
    table[name] = (len(ctx.log), value)
    return value


def request_meta(message: Message) -> dict[str, Any] | None:
    """``params._meta`` of a request or notification, when it is an object."""
    if message.kind not in (Kind.REQUEST, Kind.NOTIFICATION) or not isinstance(message.params, dict):
        return None
    meta = message.params.get("_meta")
    return meta if isinstance(meta, dict) else None


def meta_version(message: Message) -> str | None:
    """The protocol version a request names in ``_meta`` (``None`` when absent or not a string)."""
    meta = request_meta(message)
    value = meta.get(PROTOCOL_VERSION_KEY) if meta is not None else None
    return value if isinstance(value, str) else None


def client_capabilities(message: Message) -> dict[str, Any] | None:
    """The client capabilities a 2026 request declares in ``_meta``."""
    meta = request_meta(message)
    value = meta.get(CLIENT_CAPABILITIES_KEY) if meta is not None else None
    return value if isinstance(value, dict) else None


def http_status(message: Message, ctx: Context) -> int | None:
    """The HTTP status of the response that carried (or answered) a message; ``None`` off HTTP."""
    exchange = http_exchange(message, ctx)
    if exchange is None or exchange.response is None:
        return None
    return exchange.response.status


def answer_to(request: Message, ctx: Context) -> Message | None:
    """The first response to a request, if the capture has one."""
    answers = ctx.log.responses_to(request)
    return answers[0] if answers else None


def is_probe(message: Message, ctx: Context) -> bool:
    """True when the active suite sent (or provoked) this message: such traffic says nothing about the client."""
    return ctx.probe(message) is not None


def place_of(message: Message, ctx: Context) -> str:
    """Where a client talks to a server: the HTTP endpoint, or the stdio connection."""
    exchange = ctx.log.get(message.exchange)
    if exchange is None:
        return ""
    if isinstance(exchange, HttpExchange):
        return endpoint_of(exchange)
    return f"stdio:{getattr(exchange, 'connection', '')}"


def canonical(value: Any) -> str:
    """Key-order-independent JSON text of a value (an absent member renders as ``null``)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=lambda _: None)


def meta_objects(message: Message) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ``_meta`` object in a message's params or result, with its path (``result.tools[0]._meta``)."""
    payload = message.payload
    if not isinstance(payload, dict):
        return
    for member in ("params", "result"):
        if member in payload:
            yield from _walk(payload[member], member)


def _walk(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "_meta":
                if isinstance(value, dict):
                    yield f"{path}._meta", value
                continue  # values inside _meta are the owner's business, not nested _meta objects
            if key in USER_DATA_MEMBERS:
                continue
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _walk(item, f"{path}[{index}]")


def meta_key_problem(key: str, *, prefix_required: bool = False) -> str | None:
    """Why a key breaks the ``_meta`` key grammar, or ``None`` when it is well formed."""
    pattern = PREFIXED_KEY if prefix_required else META_KEY
    if pattern.fullmatch(key):
        return None
    if prefix_required and "/" not in key:
        return f"{key!r} has no prefix (a reverse-DNS name followed by '/')"
    if "/" in key:
        prefix, name = key.rsplit("/", 1)
        labels = prefix.split(".")
        bad = [label for label in labels if not re.fullmatch(_LABEL, label)]
        if bad or key.count("/") > 1:
            shown = bad[0] if bad else prefix
            return f"{key!r} has a malformed prefix label {shown!r} (labels start with a letter, end alphanumeric)"
        return f"{key!r} has a malformed name {name!r} (alphanumeric at both ends; '-', '_', '.' inside)"
    return f"{key!r} is not alphanumeric at both ends with only '-', '_', '.' inside"


def _reserved_prefix(key: str) -> str | None:
    if "/" not in key:
        return None
    prefix = key.split("/", 1)[0]
    labels = prefix.split(".")
    if len(labels) >= 2 and labels[1].lower() in RESERVED_LABELS:
        return prefix
    return None


def _looks_like_tld(label: str) -> bool:
    lowered = label.lower()
    return (len(lowered) == 2 and lowered.isalpha()) or lowered in GENERIC_TLDS or lowered.startswith("xn--")


# -- META-01 .. META-04: the per-request fields of a 2026 request ----------------------------------
_CLIENT_REQUESTS = {
    "side": Side.CLIENT,
    "subject": "client requests",
    "features": {"per_request_version"},
    "sent_by": Side.CLIENT,
    "kinds": {Kind.REQUEST},
}


@message_check(requirements="META-01", level=Level.MUST, **_CLIENT_REQUESTS)
def requests_carry_params_with_meta(message: Message, ctx: Context) -> Finding:
    """Every 2026 request has a params object holding a _meta object."""
    if message.params is MISSING:
        return failed(message, f"{message.describe()} has no params (2026 requests need params._meta)")
    if not isinstance(message.params, dict):
        return failed(message, f"{message.describe()} has params of type {type(message.params).__name__}")
    meta = message.params.get("_meta", MISSING)
    if meta is MISSING:
        return failed(message, f"{message.describe()} has params without _meta")
    if not isinstance(meta, dict):
        return failed(message, f"{message.describe()} has a params._meta of type {type(meta).__name__}")
    return passed(message)


@message_check(requirements="META-02", level=Level.MUST, **_CLIENT_REQUESTS)
def requests_declare_client_capabilities(message: Message, ctx: Context) -> Finding | None:
    """Every 2026 request declares its client capabilities in _meta (an object; {} means none)."""
    meta = request_meta(message)
    if meta is None:
        return None  # no _meta at all is META-01's finding
    value = meta.get(CLIENT_CAPABILITIES_KEY, MISSING)
    if value is MISSING:
        return failed(message, f"{message.describe()} does not declare {CLIENT_CAPABILITIES_KEY}")
    if not isinstance(value, dict):
        return failed(message, f"{CLIENT_CAPABILITIES_KEY} is a {type(value).__name__}, not an object")
    revision = ctx.revision(message)
    if revision is not None and "ClientCapabilities" in revision.validator.defs:
        issues = revision.validator.validate_def(
            "ClientCapabilities", value, prefix=f"_meta[{CLIENT_CAPABILITIES_KEY}]"
        )
        if issues:
            return failed(message, "; ".join(issue.render() for issue in issues[:3]))
    return passed(message)


@message_check(requirements="META-03", level=Level.SHOULD, **_CLIENT_REQUESTS)
def requests_identify_the_client(message: Message, ctx: Context) -> Finding | None:
    """Every 2026 request names the client software in _meta clientInfo, with string name and version."""
    meta = request_meta(message)
    if meta is None:
        return None
    info = meta.get(CLIENT_INFO_KEY, MISSING)
    if info is MISSING:
        return failed(message, f"{message.describe()} carries no {CLIENT_INFO_KEY}")
    if not isinstance(info, dict):
        return failed(message, f"{CLIENT_INFO_KEY} is a {type(info).__name__}, not an object")
    missing = [field for field in ("name", "version") if not isinstance(info.get(field), str)]
    if missing:
        return failed(message, f"{CLIENT_INFO_KEY} lacks a string {' and '.join(missing)}")
    return passed(message)


@message_check(
    requirements="META-04", level=Level.MUST, **{**_CLIENT_REQUESTS, "subject": "requests naming a log level"}
)
def requested_log_levels_are_defined_levels(message: Message, ctx: Context) -> Finding | None:
    """A _meta logLevel, when present, is one of the eight syslog level names."""
    meta = request_meta(message)
    if meta is None or LOG_LEVEL_KEY not in meta:
        return None
    revision = ctx.revision(message)
    levels: list[str] = []
    if revision is not None:
        definition = revision.validator.defs.get("LoggingLevel", {})
        levels = list(definition.get("enum", [])) if isinstance(definition, dict) else []
    value = meta[LOG_LEVEL_KEY]
    if value in levels:
        return passed(message)
    return failed(message, f"{LOG_LEVEL_KEY} is {json.dumps(value)}; expected one of {', '.join(sorted(levels))}")


# -- META-05 .. META-08: every _meta object ------------------------------------------------------
@message_check(requirements="META-05", level=Level.MUST, side=Side.BOTH, subject="messages with _meta")
def meta_keys_follow_the_key_grammar(message: Message, ctx: Context) -> Iterator[Finding]:
    """Every key of every _meta object is an optional reverse-DNS prefix plus '/' and a well-formed name."""
    for path, meta in meta_objects(message):
        problems = [problem for key in meta if (problem := meta_key_problem(key)) is not None]
        if problems:
            yield failed(
                message, f"{path}: {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
            )
        else:
            yield passed(message)


@message_check(requirements="META-06", level=Level.MUST_NOT, side=Side.BOTH, subject="reserved-prefix _meta keys")
def reserved_meta_prefixes_hold_only_defined_keys(message: Message, ctx: Context) -> Iterator[Finding]:
    """Keys under a reserved prefix (second label modelcontextprotocol or mcp) are ones MCP defines."""
    for path, meta in meta_objects(message):
        for key in meta:
            prefix = _reserved_prefix(key)
            if prefix is None:
                continue
            if key in KNOWN_RESERVED_KEYS:
                yield passed(message)
            else:
                yield failed(
                    message, f"{path} uses {key!r}: the prefix {prefix}/ is reserved for MCP, which defines no such key"
                )


@message_check(requirements="META-07", level=Level.SHOULD, side=Side.BOTH, subject="prefixed _meta keys")
def meta_prefixes_are_reverse_dns(message: Message, ctx: Context) -> Iterator[Finding]:
    """_meta key prefixes are reverse-DNS names (com.example/, not example.com/)."""
    for path, meta in meta_objects(message):
        for key in meta:
            if "/" not in key or meta_key_problem(key) is not None:
                continue  # malformed keys are META-05's finding
            labels = key.split("/", 1)[0].split(".")
            if _looks_like_tld(labels[0]):
                yield passed(message)
            elif len(labels) > 1 and _looks_like_tld(labels[-1]):
                yield failed(message, f"{path} key {key!r} has a forward-DNS prefix; write it reversed")
            else:
                yield failed(message, f"{path} key {key!r} has a prefix that does not start with a top-level domain")


_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_TRACESTATE_KEY = re.compile(r"[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}")
_TRACESTATE_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAGGAGE_VALUE = re.compile(r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*")


def traceparent_problem(value: str) -> str | None:
    match = _TRACEPARENT.fullmatch(value)
    if match is None:
        return "is not version-traceid-parentid-flags in lowercase hex (2-32-16-2 digits)"
    version, trace_id, parent_id, _flags, rest = match.groups()
    if version == "ff":
        return "uses the invalid version ff"
    if version == "00" and rest:
        return "has extra fields after the flags in version 00"
    if set(trace_id) == {"0"}:
        return "has an all-zero trace id"
    if set(parent_id) == {"0"}:
        return "has an all-zero parent id"
    return None


def tracestate_problem(value: str) -> str | None:
    members = [member.strip(" \t") for member in value.split(",")]
    present = [member for member in members if member]
    if len(present) > 32:
        return f"has {len(present)} list members (at most 32)"
    keys: set[str] = set()
    for member in present:
        key, sep, item = member.partition("=")
        if not sep or not _TRACESTATE_KEY.fullmatch(key):
            return f"has a malformed list member {member!r}"
        if not _TRACESTATE_VALUE.fullmatch(item):
            return f"has a malformed value in {member!r}"
        if key in keys:
            return f"repeats the key {key!r}"
        keys.add(key)
    return None


def baggage_problem(value: str) -> str | None:
    for member in value.split(","):
        parts = [part.strip(" \t") for part in member.split(";")]
        key, sep, item = parts[0].partition("=")
        if not sep or not _TOKEN.fullmatch(key.strip(" \t")) or not _BAGGAGE_VALUE.fullmatch(item.strip(" \t")):
            return f"has a malformed list member {member.strip()!r}"
        for prop in parts[1:]:
            name, has_value, prop_value = prop.partition("=")
            if not _TOKEN.fullmatch(name.strip(" \t")) or (
                has_value and not _BAGGAGE_VALUE.fullmatch(prop_value.strip(" \t"))
            ):
                return f"has a malformed property {prop!r}"
    return None


_TRACE_RULES = {"traceparent": traceparent_problem, "tracestate": tracestate_problem, "baggage": baggage_problem}


@message_check(
    requirements="META-08",
    level=Level.MUST,
    side=Side.BOTH,
    subject="trace context _meta values",
    features={"per_request_version"},
)
def trace_context_meta_follows_w3c_syntax(message: Message, ctx: Context) -> Iterator[Finding]:
    """traceparent, tracestate and baggage in _meta follow the W3C Trace Context and Baggage syntax."""
    for path, meta in meta_objects(message):
        for key, rule in _TRACE_RULES.items():
            if key not in meta:
                continue
            value = meta[key]
            if not isinstance(value, str):
                yield failed(message, f"{path}.{key} is a {type(value).__name__}, not a string")
                continue
            problem = rule(value)
            if problem is not None:
                yield failed(message, f"{path}.{key} {value[:80]!r} {problem}")
            else:
                yield passed(message)


# -- META-09, META-10: what the server does with the envelope --------------------------------------
def _undeclared(required: dict[str, Any], declared: dict[str, Any]) -> bool:
    """True when ``required`` names something ``declared`` lacks."""
    for name, detail in required.items():
        if name not in declared:
            return True
        if isinstance(detail, dict) and isinstance(declared[name], dict):
            if any(sub not in declared[name] for sub in detail):
                return True
    return False


@log_check(
    requirements="META-09",
    level=Level.MUST,
    side=Side.SERVER,
    subject="missing-capability errors",
    features={"missing_capability_error"},
)
def missing_capability_errors_name_what_is_missing(ctx: Context) -> Iterator[Finding]:
    """A -32021 error names, in data.requiredCapabilities, capabilities the request did not declare (HTTP 400).

    Triggered by any -32021 answer, e.g. the active suite's call of a tool that needs elicitation
    or sampling sent with ``clientCapabilities: {}``."""
    for message in ctx.log.messages():
        if message.kind is not Kind.ERROR or message.sender is not Side.SERVER or error_code(message) != -32021:
            continue
        error = message.error if isinstance(message.error, dict) else {}
        data = error.get("data")
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        if not isinstance(required, dict):
            yield failed(message, "-32021 without an object data.requiredCapabilities")
            continue
        if not required:
            yield failed(message, "-32021 with an empty data.requiredCapabilities names nothing the client lacks")
            continue
        status = http_status(message, ctx)
        if status is not None and status != 400:
            yield failed(message, f"-32021 was sent with HTTP {status}, expected 400")
            continue
        request = ctx.log.request_of(message)
        declared = client_capabilities(request) if request is not None else None
        if declared is not None and not _undeclared(required, declared):
            yield failed(
                message,
                f"-32021 asks for {canonical(required)}, which the request already declared ({canonical(declared)})",
            )
            continue
        yield passed(message)


IDENTITY_INDEPENDENT_METHODS = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "prompts/get"}
)


def _without_client_info(params: dict[str, Any]) -> str:
    meta = {key: value for key, value in (params.get("_meta") or {}).items() if key != CLIENT_INFO_KEY}
    return canonical({**params, "_meta": meta})


def _comparable(result: dict[str, Any]) -> str:
    return canonical({key: value for key, value in result.items() if key != "_meta"})


@log_check(
    requirements="META-10",
    level=Level.SHOULD_NOT,
    side=Side.SERVER,
    subject="repeated requests with different clientInfo",
    features={"per_request_version"},
)
def answers_do_not_depend_on_client_info(ctx: Context) -> Iterator[Finding]:
    """The same request sent with different clientInfo gets the same result.

    Triggered when the log holds one discover, list or prompts/get request twice with only
    ``clientInfo`` changed (the active suite sends such a pair)."""
    groups: dict[tuple[str, str, str], list[tuple[str, Message]]] = defaultdict(list)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if request.method not in IDENTITY_INDEPENDENT_METHODS or not isinstance(request.params, dict):
            continue
        meta = request_meta(request)
        if meta is None:
            continue
        answer = answer_to(request, ctx)
        if answer is None or answer.kind is not Kind.RESULT or not isinstance(answer.result, dict):
            continue
        key = (place_of(request, ctx), request.method, _without_client_info(request.params))
        groups[key].append((canonical(meta.get(CLIENT_INFO_KEY)), answer))
    for (_place, method, _params), answers in groups.items():
        identities = {identity for identity, _ in answers}
        if len(identities) < 2:
            continue
        first_identity, first = answers[0]
        for identity, answer in answers[1:]:
            if identity == first_identity or not isinstance(first.result, dict) or not isinstance(answer.result, dict):
                continue
            if _comparable(first.result) != _comparable(answer.result):
                yield failed(
                    answer, f"{method} answered differently for clientInfo {identity} than for {first_identity}"
                )
            else:
                yield passed(answer)
