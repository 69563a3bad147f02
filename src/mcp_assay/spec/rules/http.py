"""Streamable HTTP (HTTP-): methods, mirrored headers, status codes and SSE streams.

Most server-side requirements here are *active*: they say how a server must answer a request of
a certain shape (a header that disagrees with the body, an unknown method, a ``GET``). The rules
judge the answer whenever such a request appears in the log, whoever sent it, so the same code
grades the active suite's probes and a real client's mistakes seen by the proxy.

Everything about one 2026 request's headers is worked out once by :func:`audit`: which
standard header is missing, disagrees with the body, carries invalid characters or a Base64
sentinel, and which alternative answers the validation order leaves open (⚠A6). The era of an
exchange comes from revision features, never from dates: a request is served under 2026 rules
when its ``MCP-Protocol-Version`` header names a revision with per-request versioning
(``modern``); 2025 stream rules apply to exchanges attributed to a handshake revision.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.checks import Context, Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.jsonrpc import MISSING, Kind, Message, id_key
from mcp_assay.spec.revisions import Revision
from mcp_assay.spec.rules._common import error_code, http_exchange, is_int
from mcp_assay.traffic import PROTOCOL_VERSION_KEY, endpoint_of
from mcp_assay.verdicts import Level, Outcome, Side
from mcp_assay.wire import EndReason, HttpExchange

__all__ = [
    "HEADER_MISMATCH",
    "Audit",
    "HeaderMark",
    "audit",
    "decode_sentinel",
    "encode_sentinel",
    "header_marks",
    "is_sentinel",
    "mirror",
    "modern_route",
    "needs_encoding",
]

HEADER_MISMATCH = -32020
VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
PARAM_PREFIX = "mcp-param-"
SESSION_HEADER = "mcp-session-id"
LAST_EVENT_ID = "last-event-id"
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""Methods whose ``Mcp-Name`` header mirrors a body field, and that field."""
STANDARD_HEADERS = {VERSION_HEADER: "MCP-Protocol-Version", METHOD_HEADER: "Mcp-Method", NAME_HEADER: "Mcp-Name"}
MODERN_CODES = frozenset({-32020, -32021, -32022, -32601, -32602})
"""Error codes a 2026 server uses for its mandated 400/404 rejections."""
LISTEN = "subscriptions/listen"
CHANGE_NOTIFICATIONS = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/subscriptions/acknowledged",
    }
)
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
SENTINEL_PREFIX = "=?base64?"
SENTINEL_SUFFIX = "?="
TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})
LITERAL_KEYWORDS = frozenset({"const", "enum", "default", "examples", "x-mcp-header"})
"""Schema keywords whose values are data, not subschemas."""
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
OLD_VERSIONS = ("2025-03-26", "2024-11-05")
"""Handshake versions from before the MCP-Protocol-Version header existed."""


# -- value encoding (Base64 sentinel) -------------------------------------------------------------
def is_sentinel(value: str) -> bool:
    """``=?base64?…?=`` with the exact lowercase markers."""
    return (
        len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX)
        and value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
    )


def _looks_like_sentinel_any_case(value: str) -> bool:
    lowered = value.lower()
    return lowered.startswith(SENTINEL_PREFIX) and lowered.endswith(SENTINEL_SUFFIX)


def decode_sentinel(value: str) -> str | None:
    """The text a sentinel-encoded value carries; ``None`` when the Base64 or the UTF-8 is broken."""
    inner = value[len(SENTINEL_PREFIX) : len(value) - len(SENTINEL_SUFFIX)]
    try:
        return base64.b64decode(inner, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def encode_sentinel(text: str) -> str:
    return SENTINEL_PREFIX + base64.b64encode(text.encode("utf-8")).decode("ascii") + SENTINEL_SUFFIX


def header_text_safe(value: str) -> bool:
    """Only visible ASCII, space and tab (what a plain header value may hold)."""
    return all(ch == "\t" or 0x20 <= ord(ch) <= 0x7E for ch in value)


def needs_encoding(text: str) -> bool:
    """Whether a mirrored value must travel as a Base64 sentinel."""
    return not header_text_safe(text) or text != text.strip(" \t") or is_sentinel(text)


def mirror(value: Any) -> str | None:
    """The header text of a mirrored argument: strings as-is, integers in decimal, ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_int(value):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def _numerically_equal(header: str, value: Any) -> bool:
    if not is_int(value):
        return False
    try:
        number = Decimal(header.strip())
    except InvalidOperation:
        return False
    return number.is_finite() and number == Decimal(value)


# -- x-mcp-header annotations ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HeaderMark:
    """One ``x-mcp-header`` annotation on a property reachable through ``properties`` keys."""

    name: str
    path: tuple[str, ...]
    schema: dict[str, Any]


def _walk_marks(node: Any, chain: tuple[str, ...] | None, marks: list[HeaderMark], problems: list[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _walk_marks(item, None, marks, problems)
        return
    if not isinstance(node, dict):
        return
    if "x-mcp-header" in node:
        if not chain:
            problems.append("an x-mcp-header annotation sits where no properties chain reaches it")
        else:
            marks.append(HeaderMark(name=node["x-mcp-header"], path=chain, schema=node))
    for key, value in node.items():
        if key in LITERAL_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _walk_marks(sub, chain + (str(prop),) if chain is not None else None, marks, problems)
        else:
            _walk_marks(value, None, marks, problems)


def _type_ok(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared in PRIMITIVE_TYPES
    if isinstance(declared, list) and declared:
        kinds = [kind for kind in declared if kind != "null"]
        return len(kinds) == 1 and kinds[0] in PRIMITIVE_TYPES
    return False


def header_marks(tool: Any) -> tuple[list[HeaderMark], list[str]]:
    """The annotations of a tool's ``inputSchema`` and what makes any of them invalid (TOOL-16)."""
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    marks: list[HeaderMark] = []
    problems: list[str] = []
    _walk_marks(schema, (), marks, problems)
    seen: dict[str, str] = {}
    for mark in marks:
        where = ".".join(mark.path)
        name = mark.name
        if not isinstance(name, str) or not name:
            problems.append(f"{where}: x-mcp-header must be a non-empty string")
            continue
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
            problems.append(f"{where}: x-mcp-header {name!r} contains control characters")
        elif not set(name) <= TCHAR:
            problems.append(f"{where}: x-mcp-header {name!r} is not an HTTP token")
        if name.lower() in seen:
            problems.append(f"{where}: x-mcp-header {name!r} repeats {seen[name.lower()]!r} (case-insensitively)")
        seen[name.lower()] = name
        if not _type_ok(mark.schema):
            problems.append(f"{where}: x-mcp-header on a property of type {mark.schema.get('type')!r}")
    return marks, problems


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for step in path:
        if not isinstance(node, dict) or step not in node:
            return MISSING
        node = node[step]
    return node


# -- eras -----------------------------------------------------------------------------------------
def _modern(revision: Revision | None) -> bool:
    return revision is not None and revision.has("per_request_version")


def _body_version(message: Message | None) -> str | None:
    if message is None or message.kind not in (Kind.REQUEST, Kind.NOTIFICATION):
        return None
    meta = message.meta
    version = meta.get(PROTOCOL_VERSION_KEY) if meta is not None else None
    return version if isinstance(version, str) else None


def _header_version(exchange: HttpExchange) -> str | None:
    value = exchange.request.headers.get(VERSION_HEADER)
    return value.strip() if value is not None else None


def modern_route(exchange: HttpExchange, ctx: Context) -> bool:
    """The ``MCP-Protocol-Version`` header names a 2026-style revision: 2026 rules apply unambiguously."""
    return _modern(ctx.spec.get(_header_version(exchange)))


def _body_modern(exchange: HttpExchange, ctx: Context) -> bool:
    return _modern(ctx.spec.get(_body_version(exchange.request_message)))


def _modern_any(exchange: HttpExchange, ctx: Context) -> bool:
    return modern_route(exchange, ctx) or _body_modern(exchange, ctx)


def _legacy(exchange: HttpExchange, ctx: Context) -> bool:
    if _modern_any(exchange, ctx):
        return False
    revision = ctx.exchange_revision(exchange)
    return revision is not None and revision.has("handshake")


def _judged_as_client(exchange: HttpExchange) -> bool:
    """Deliberately malformed probes are the suite's doing, never held against the client."""
    return not (exchange.probe and exchange.probe.get("invalid"))


def _requests(ctx: Context, *, client: bool = False) -> Iterator[tuple[HttpExchange, Message]]:
    """POSTed JSON-RPC requests (not notifications) with their exchange."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if exchange.request.method != "POST" or request is None or request.kind is not Kind.REQUEST:
            continue
        if client and not _judged_as_client(exchange):
            continue
        yield exchange, request


def _errors(exchange: HttpExchange) -> list[Message]:
    return [m for m in exchange.response_messages if m.kind is Kind.ERROR]


def _first_code(exchange: HttpExchange) -> int | None:
    errors = _errors(exchange)
    return error_code(errors[0]) if errors else None


def _final_response(exchange: HttpExchange, request: Message) -> Message | None:
    for message in exchange.response_messages:
        if message.kind.is_response and message.id_key is not None and message.id_key == request.id_key:
            return message
    return None


def _params(message: Message) -> dict[str, Any]:
    return message.params if isinstance(message.params, dict) else {}


def _error_text(message: Message | None) -> str:
    if message is None or not isinstance(message.error, dict):
        return ""
    text = message.error.get("message")
    return text if isinstance(text, str) else ""


def _shown(value: Any) -> str:
    """A JSON rendering of a body value for a finding (``absent`` for a missing member)."""
    return "absent" if value is MISSING else json.dumps(value, default=str)


def _tools_for(message: Message, ctx: Context) -> dict[str, Any] | None:
    return ctx.log.tools(message)


def _tool_of(request: Message, ctx: Context) -> Any:
    """The definition of the tool a ``tools/call`` names, from ``tools/list`` in the log (``None``: unseen)."""
    name = _params(request).get("name")
    tools = _tools_for(request, ctx)
    if tools is None or not isinstance(name, str):
        return None
    return tools.get(name)


def _setting(ctx: Context, name: str, default: float) -> float:
    value: Any = ctx.settings.get(name, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) and number >= 0 else default


# -- the header audit of one 2026 request ---------------------------------------------------------
@dataclass(slots=True)
class Audit:
    """What is wrong, or notable, about the mirrored headers of one JSON-RPC request POST."""

    exchange: HttpExchange
    request: Message
    defects: dict[str, str] = field(default_factory=dict)
    """Problems a server must reject (kind -> description)."""
    notes: dict[str, str] = field(default_factory=dict)
    """Correct-but-unusual shapes a server must accept (kind -> description)."""
    alternatives: dict[tuple[int, int], str] = field(default_factory=dict)
    """Other answers the unspecified validation order allows, with why (⚠A6)."""
    params_known: bool = True
    """False when a ``tools/call`` names a tool whose definition was never seen."""

    def defect(self, kind: str, detail: str) -> None:
        self.defects.setdefault(kind, detail)


def _single(exchange: HttpExchange, name: str, audit_: Audit) -> str | None:
    values = exchange.request.headers.get_all(name)
    if len(values) > 1:
        audit_.defect("duplicate", f"the request carries {len(values)} {STANDARD_HEADERS.get(name, name)} headers")
    return values[0] if values else None


def _audit_name(audit_: Audit, header: str | None, body_value: Any, field_name: str) -> None:
    shown = f"params.{field_name} {_shown(body_value)}"
    if header is None:
        audit_.defect("name-missing", f"the {audit_.request.method} request has no Mcp-Name header ({shown})")
        return
    if not header_text_safe(header):
        audit_.defect("invalid-characters", f"Mcp-Name {header!r} contains characters a header value may not hold")
        return
    if not isinstance(body_value, str):
        audit_.defect("other", f"{shown} is not a string")
        return
    if is_sentinel(header):
        decoded = decode_sentinel(header)
        if decoded is None:
            audit_.defect("name-bad-sentinel", f"Mcp-Name {header!r} is not valid Base64 of UTF-8 text")
        elif decoded != body_value:
            audit_.defect("name-bad-sentinel", f"Mcp-Name {header!r} decodes to {decoded!r}, not {body_value!r}")
        else:
            audit_.notes["name-sentinel"] = f"Mcp-Name {header!r} is the correct Base64 sentinel of {body_value!r}"
        return
    if header != body_value:
        audit_.defect("name-mismatch", f"Mcp-Name {header!r} differs from {shown}")


def _audit_params(audit_: Audit, ctx: Context) -> None:
    params = _params(audit_.request)
    headers = audit_.exchange.request.headers
    tool = _tool_of(audit_.request, ctx)
    if tool is None:
        audit_.params_known = False
        return
    marks, problems = header_marks(tool)
    if problems:
        audit_.params_known = False  # an invalid tool (TOOL-16): what the server checks is anyone's guess
        return
    arguments = params.get("arguments")
    for mark in marks:
        header_name = PARAM_PREFIX + mark.name.lower()
        shown = f"Mcp-Param-{mark.name}"
        values = headers.get_all(header_name)
        value = _value_at(arguments, mark.path)
        where = "arguments." + ".".join(mark.path)
        if value is MISSING or value is None:
            if values:
                audit_.defect("other", f"{shown} was sent although {where} is absent or null")
            else:
                audit_.notes["param-omitted"] = f"{where} is absent or null and {shown} is omitted"
            continue
        expected = mirror(value)
        if expected is None:
            audit_.defect("other", f"{where} is {_shown(value)}, which no header can mirror")
            continue
        if not values:
            audit_.defect("param-missing", f"{shown} is missing although {where} is {_shown(value)}")
            continue
        if len(values) > 1:
            audit_.defect("duplicate", f"the request carries {len(values)} {shown} headers")
        header = values[0]
        if not header_text_safe(header):
            audit_.defect("invalid-characters", f"{shown} {header!r} contains characters a header value may not hold")
        elif is_sentinel(header):
            decoded = decode_sentinel(header)
            if decoded is None:
                audit_.defect("param-bad-sentinel", f"{shown} {header!r} is not valid Base64 of UTF-8 text")
            elif decoded != expected:
                audit_.defect("param-bad-sentinel", f"{shown} {header!r} decodes to {decoded!r}, not {expected!r}")
            else:
                audit_.notes["param-sentinel"] = f"{shown} {header!r} is the correct Base64 sentinel of {expected!r}"
        elif header != expected:
            if _numerically_equal(header, value):
                audit_.notes["param-numeric"] = f"{shown} {header!r} equals {where} {value} numerically"
            else:
                audit_.defect("param-mismatch", f"{shown} {header!r} differs from {where} {_shown(value)}")


def audit(exchange: HttpExchange, ctx: Context) -> Audit | None:
    """Check the mirrored headers of one POSTed request against its body (``None`` for other exchanges)."""
    request = exchange.request_message
    if exchange.request.method != "POST" or request is None or request.kind is not Kind.REQUEST:
        return None
    result = Audit(exchange=exchange, request=request)
    body_version = _body_version(request)
    version = _single(exchange, VERSION_HEADER, result)
    if version is None:
        result.defect("version-missing", "the request has no MCP-Protocol-Version header")
    elif not header_text_safe(version):
        result.defect("invalid-characters", f"MCP-Protocol-Version {version!r} contains invalid characters")
    elif body_version is not None and version.strip() != body_version:
        result.defect(
            "version-mismatch",
            f"MCP-Protocol-Version {version.strip()!r} differs from the body's _meta version {body_version!r}",
        )
    method = _single(exchange, METHOD_HEADER, result)
    if method is None:
        result.defect("method-missing", f"the {request.method} request has no Mcp-Method header")
    elif not header_text_safe(method):
        result.defect("invalid-characters", f"Mcp-Method {method!r} contains characters a header value may not hold")
    elif method != request.method:
        result.defect("method-mismatch", f"Mcp-Method {method!r} differs from the body method {request.method!r}")
    field_name = NAMED_METHODS.get(request.method or "")
    if field_name is not None:
        name = _single(exchange, NAME_HEADER, result)
        _audit_name(result, name, _params(request).get(field_name, MISSING), field_name)
    if request.method == "tools/call":
        _audit_params(result, ctx)
    for header_name in exchange.request.headers.names():
        canonical = STANDARD_HEADERS.get(header_name.lower())
        if canonical is not None and header_name != canonical:
            result.notes.setdefault("name-case", f"header spelled {header_name!r} rather than {canonical!r}")
    _alternatives(result, ctx, version, body_version)
    return result


def _alternatives(result: Audit, ctx: Context, header: str | None, body: str | None) -> None:
    request = result.request
    meta = request.meta or {}
    if PROTOCOL_VERSION_KEY not in meta or "io.modelcontextprotocol/clientCapabilities" not in meta:
        result.alternatives[(400, -32602)] = "the body also lacks required _meta fields (⚠A7)"
    for version in (header, body):
        if version is not None and not _modern(ctx.spec.get(version.strip())):
            result.alternatives[(400, -32022)] = f"version {version.strip()!r} is not served per request (⚠A6)"
    field_name = NAMED_METHODS.get(request.method or "")
    if field_name is not None and not isinstance(_params(request).get(field_name), str):
        why = f"params.{field_name} itself is missing, which is invalid params (status unspecified, ⚠A5)"
        for status in (200, 400):
            result.alternatives[(status, -32602)] = why
    revision = ctx.spec.get(header.strip() if header else None) or ctx.spec.get(body)
    if revision is not None and request.method and request.method not in revision.validator.request_defs:
        result.alternatives[(404, -32601)] = f"{request.method} is not a method of {revision.name} (⚠A6)"


def _modern_audits(ctx: Context) -> Iterator[Audit]:
    """Audits of requests the server must serve under 2026 rules (header names a modern revision)."""
    for exchange, _ in _requests(ctx):
        if modern_route(exchange, ctx):
            result = audit(exchange, ctx)
            if result is not None:
                yield result


def _answer_text(exchange: HttpExchange) -> str:
    response = exchange.response
    if response is None:
        return "no response"
    errors = _errors(exchange)
    if errors:
        code = error_code(errors[0])
        return f"HTTP {response.status} with error {code if code is not None else '?'}"
    if any(m.kind is Kind.RESULT for m in exchange.response_messages):
        return f"HTTP {response.status} with a result"
    return f"HTTP {response.status} and no JSON-RPC error"


def _expect_rejection(result: Audit, kinds: Iterable[str], *, bare_400_ok: bool = False) -> Finding | None:
    found = [result.defects[kind] for kind in kinds if kind in result.defects]
    if not found:
        return None
    what = "; ".join(found)
    exchange = result.exchange
    response = exchange.response
    if response is None:
        return unverified(f"{what}, but no answer was captured", result.request)
    errors = _errors(exchange)
    subject = errors[0] if errors else result.request
    code = error_code(errors[0]) if errors else None
    if response.status == 400 and code == HEADER_MISMATCH:
        return passed(subject)
    if code is not None and (response.status, code) in result.alternatives:
        reason = result.alternatives[(response.status, code)]
        return passed(subject, f"{what}: answered HTTP {response.status} with {code}, acceptable as {reason}")
    if bare_400_ok and response.status == 400 and not errors:
        return passed(result.request, f"{what}: rejected with a bare 400 (allowed from the HTTP stack)")
    if response.status < 300 and not errors:
        return failed(result.request, f"{what}, yet the server served it ({_answer_text(exchange)})")
    return failed(subject, f"{what}: answered {_answer_text(exchange)}, expected HTTP 400 with error -32020")


def _expect_acceptance(result: Audit, note: str) -> Finding | None:
    if note not in result.notes or result.defects:
        return None
    what = result.notes[note]
    exchange = result.exchange
    if exchange.response is None:
        return unverified(f"{what}, but no answer was captured", result.request)
    code = _first_code(exchange)
    rejected = code == HEADER_MISMATCH or (exchange.response.status == 400 and code is None)
    if not rejected:
        return passed(result.request)
    if not result.params_known:
        return unverified(
            f"{what}, and the server answered {_answer_text(exchange)}; the tool's definition was not seen, "
            "so the rejection may concern its Mcp-Param headers",
            result.request,
        )
    errors = _errors(exchange)
    detail = f" ({_error_text(errors[0])})" if errors and _error_text(errors[0]) else ""
    return failed(errors[0] if errors else result.request, f"{what}, yet the server rejected it{detail}")


def _judge_audits(ctx: Context, kinds: Iterable[str], **options: bool) -> Iterator[Finding]:
    wanted = tuple(kinds)
    for result in _modern_audits(ctx):
        finding = _expect_rejection(result, wanted, **options)
        if finding is not None:
            yield finding


def _judge_acceptance(ctx: Context, note: str) -> Iterator[Finding]:
    for result in _modern_audits(ctx):
        finding = _expect_acceptance(result, note)
        if finding is not None:
            yield finding


# == server: request headers (2026) ===============================================================
MODERN_HTTP: dict[str, Any] = {"features": {"per_request_version"}, "transports": {"http"}}
LEGACY_HTTP: dict[str, Any] = {"features": {"handshake"}, "transports": {"http"}}


@log_check(
    requirements="HTTP-09", level=Level.MUST, side=Side.SERVER, subject="version header mismatches", **MODERN_HTTP
)
def version_header_mismatch_is_rejected(ctx: Context) -> Iterator[Finding]:
    """A request whose MCP-Protocol-Version header disagrees with its body version gets 400 and -32020.

    Triggered by any request POST where the header and ``params._meta`` name different versions
    and at least one of them is a 2026-style revision (a body carrying the 2026 envelope must be
    served statelessly under 2026 rules, whatever the header says)."""
    for exchange, _ in _requests(ctx):
        if not _modern_any(exchange, ctx):
            continue
        result = audit(exchange, ctx)
        if result is not None:
            finding = _expect_rejection(result, ("version-mismatch",))
            if finding is not None:
                yield finding


@log_check(
    requirements=("HTTP-12", "BEH-02"),
    level=Level.MUST,
    side=Side.SERVER,
    subject="requests lacking routing headers",
    **MODERN_HTTP,
)
def missing_routing_headers_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A request without Mcp-Method (or without Mcp-Name where one is required) gets 400 and -32020.

    Triggered by a 2026 request POST lacking ``Mcp-Method``, or a ``tools/call``,
    ``prompts/get`` or ``resources/read`` lacking ``Mcp-Name``."""
    return _judge_audits(ctx, ("method-missing", "name-missing"))


@log_check(
    requirements=("HTTP-13", "BEH-02"),
    level=Level.MUST,
    side=Side.SERVER,
    subject="mismatched routing headers",
    **MODERN_HTTP,
)
def mismatched_routing_headers_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A request whose Mcp-Method or plain Mcp-Name differs from the body (case included) gets 400 and -32020.

    Triggered by a 2026 request POST whose ``Mcp-Method`` is not exactly the body ``method``
    (``TOOLS/LIST`` included) or whose plain ``Mcp-Name`` is not exactly the body ``name``/``uri``
    (⚠A27: exact strings, no URI normalisation). The suite's ``mcp-name-mismatch`` probe puts a
    listed tool's name in ``Mcp-Name`` and a name that does not exist in the body (BEH-02): an
    unknown-tool answer means the server dispatched on the body without checking the header."""
    return _judge_audits(ctx, ("method-mismatch", "name-mismatch"))


@log_check(
    requirements="HTTP-14", level=Level.MUST, side=Side.SERVER, subject="requests with unusual header-name case",
    **MODERN_HTTP,
)  # fmt: skip
def header_names_are_matched_case_insensitively(ctx: Context) -> Iterator[Finding]:
    """Standard headers are recognised whatever the case of their names (mcp-method, MCP-NAME ...).

    Triggered by a 2026 request POST whose standard header names are spelled in a different case
    and whose headers otherwise agree with the body: it must not be rejected with -32020."""
    return _judge_acceptance(ctx, "name-case")


@log_check(
    requirements="HTTP-16", level=Level.MUST, side=Side.SERVER, subject="Base64-sentinel header values", **MODERN_HTTP
)
def sentinel_values_are_decoded_before_comparison(ctx: Context) -> Iterator[Finding]:
    """A correct =?base64?…?= Mcp-Name or Mcp-Param value is accepted; one decoding to another value gets -32020.

    Triggered by a 2026 request POST whose ``Mcp-Name`` or ``Mcp-Param-*`` value uses the
    Base64 sentinel form."""
    for result in _modern_audits(ctx):
        finding = _expect_rejection(result, ("name-bad-sentinel", "param-bad-sentinel"))
        if finding is None:
            finding = _expect_acceptance(result, "name-sentinel") or _expect_acceptance(result, "param-sentinel")
        if finding is not None:
            yield finding


@log_check(
    requirements="HTTP-17", level=Level.MUST, side=Side.SERVER, subject="header values with invalid characters",
    **MODERN_HTTP,
)  # fmt: skip
def header_values_with_invalid_characters_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A standard or recognised Mcp-Param header holding raw non-ASCII or control characters gets 400.

    Triggered by a 2026 request POST whose ``MCP-Protocol-Version``, ``Mcp-Method``,
    ``Mcp-Name`` or recognised ``Mcp-Param-*`` value holds characters outside visible ASCII,
    space and tab; a bare 400 from the HTTP stack counts as a rejection."""
    return _judge_audits(ctx, ("invalid-characters",), bare_400_ok=True)


@log_check(
    requirements="HTTP-19", level=Level.MUST, side=Side.SERVER, subject="tools/call parameter headers", **MODERN_HTTP
)
def missing_or_mismatched_parameter_headers_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A tools/call whose marked argument lacks its Mcp-Param header, or whose plain header differs, gets -32020.

    Triggered by a 2026 ``tools/call`` POST for a tool whose ``inputSchema`` marks properties with
    ``x-mcp-header`` (the definition comes from ``tools/list`` in the log)."""
    for result in _modern_audits(ctx):
        finding = _expect_rejection(result, ("param-missing", "param-mismatch"))
        if finding is not None:
            yield finding
        elif result.request.method == "tools/call" and not result.params_known:
            if any(name.lower().startswith(PARAM_PREFIX) for name in result.exchange.request.headers.names()):
                yield unverified(
                    "a tools/call carried Mcp-Param headers, but the tool's definition was not seen or is invalid",
                    result.request,
                )


@log_check(
    requirements="HTTP-20", level=Level.MUST_NOT, side=Side.SERVER,
    subject="calls with null or absent marked arguments", **MODERN_HTTP,
)  # fmt: skip
def absent_arguments_need_no_parameter_header(ctx: Context) -> Iterator[Finding]:
    """A tools/call whose marked argument is null or absent is not refused for lacking its Mcp-Param header.

    Triggered by a 2026 ``tools/call`` POST for a tool with ``x-mcp-header`` marks where a marked
    argument is null or absent and its header is (correctly) omitted."""
    return _judge_acceptance(ctx, "param-omitted")


@log_check(
    requirements="HTTP-21", level=Level.SHOULD, side=Side.SERVER, subject="numerically equal integer headers",
    **MODERN_HTTP,
)  # fmt: skip
def integer_parameter_headers_compare_numerically(ctx: Context) -> Iterator[Finding]:
    """An integer Mcp-Param header such as 42.0 matches the body value 42.

    Triggered by a 2026 ``tools/call`` POST whose marked integer argument is mirrored in a
    different but numerically equal spelling."""
    return _judge_acceptance(ctx, "param-numeric")


def _serves_pre_2025_06_18(ctx: Context, exchange: HttpExchange) -> bool | None:
    """Whether the log shows this endpoint serving clients older than 2025-06-18 (``None``: no evidence)."""
    endpoint = endpoint_of(exchange)
    evidence: bool | None = None
    for other in ctx.log.http_exchanges():
        request = other.request_message
        if endpoint_of(other) != endpoint or request is None or request.method != "initialize":
            continue
        offered = _params(request).get("protocolVersion")
        if offered not in OLD_VERSIONS:
            continue
        for answer in other.response_messages:
            if answer.kind is Kind.RESULT and isinstance(answer.result, dict):
                if answer.result.get("protocolVersion") == offered:
                    return True
                evidence = False
            elif answer.kind is Kind.ERROR:
                evidence = False
    return evidence


@log_check(
    requirements="HTTP-26", level=Level.MUST, side=Side.SERVER, subject="request POSTs without a version header",
    **MODERN_HTTP,
)  # fmt: skip
def requests_without_a_version_header_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A 2026 request without MCP-Protocol-Version gets 400 and -32020, unless the server serves pre-2025-06-18 clients.

    Triggered by a request POST whose body carries a 2026 ``_meta`` version but no
    ``MCP-Protocol-Version`` header. A server that serves clients older than 2025-06-18 may treat
    it as ``2025-03-26`` instead; that is accepted when the log shows it serving such a client."""
    for exchange, request in _requests(ctx):
        if exchange.request.headers.get(VERSION_HEADER) is not None or not _body_modern(exchange, ctx):
            continue
        result = audit(exchange, ctx)
        if result is None:
            continue
        finding = _expect_rejection(result, ("version-missing",))
        if finding is None:
            continue
        if finding.outcome is not Outcome.FAILED:
            yield finding
            continue
        legacy = _serves_pre_2025_06_18(ctx, exchange)
        answer = _answer_text(exchange)
        if legacy:
            yield passed(request, f"no version header: answered {answer}, as the 2025-03-26 assumption allows")
        elif legacy is None:
            yield unverified(
                f"no version header: answered {answer}; that is allowed only from a server that serves clients "
                "older than 2025-06-18, and the log shows no initialize for 2025-03-26 or 2024-11-05",
                request,
            )
        else:
            yield finding


# == server: answers, methods and statuses =========================================================
@log_check(requirements="HTTP-01", level=Level.MUST, side=Side.SERVER, subject="request POSTs", transports={"http"})
def the_mcp_endpoint_accepts_post(ctx: Context) -> Iterator[Finding]:
    """The MCP endpoint accepts POST: a POSTed JSON-RPC message is never answered 405."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if exchange.request.method != "POST" or request is None or exchange.response is None:
            continue
        if request.kind not in (Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR):
            continue
        if exchange.response.status == 405:
            yield failed(request, f"POST {exchange.request.path} was answered 405 Method Not Allowed")
        else:
            yield passed(request)


def _notification_posts(ctx: Context) -> Iterator[tuple[HttpExchange, Message]]:
    for exchange in ctx.log.http_exchanges():
        message = exchange.request_message
        if exchange.request.method != "POST" or message is None or exchange.response is None:
            continue
        if message.kind is Kind.NOTIFICATION:
            yield exchange, message
        elif message.kind.is_response and _legacy(exchange, ctx):
            yield exchange, message  # 2025 clients POST their responses to server requests


@log_check(
    requirements="HTTP-05", level=Level.MUST, side=Side.SERVER, subject="accepted notification POSTs",
    transports={"http"},
)  # fmt: skip
def accepted_notifications_get_202_with_no_body(ctx: Context) -> Iterator[Finding]:
    """A notification POST (2025: or a client response) that the server accepts gets 202 Accepted with no body.

    Triggered by any POSTed notification answered with a 2xx status (refusals are HTTP-06)."""
    for exchange, message in _notification_posts(ctx):
        assert exchange.response is not None
        status = exchange.response.status
        if not 200 <= status < 300:
            continue
        body = exchange.response.body or b""
        streamed = exchange.response.is_event_stream
        if status == 202 and not body.strip() and not streamed:
            yield passed(message)
        elif status != 202:
            yield failed(message, f"{message.describe()} was accepted with HTTP {status}, expected 202")
        else:
            yield failed(message, f"{message.describe()} got 202 with a body; an accepted notification gets none")


@log_check(
    requirements="HTTP-06", level=Level.MUST, side=Side.SERVER, subject="refused notification POSTs",
    transports={"http"},
)  # fmt: skip
def refused_notifications_get_an_error_status_and_no_id(ctx: Context) -> Iterator[Finding]:
    """A notification POST the server refuses gets an HTTP error status; any JSON-RPC error in the body has no id.

    Triggered by any POSTed notification (2025: or client response) answered 4xx/5xx (⚠A8: a
    2026 server may accept or refuse notification POSTs)."""
    for exchange, message in _notification_posts(ctx):
        assert exchange.response is not None
        if exchange.response.status < 400:
            continue
        answers = [m for m in exchange.response_messages if m.kind.is_response]
        with_id = [m for m in answers if m.id is not MISSING and m.id is not None]
        if with_id:
            yield failed(with_id[0], f"the refusal of {message.describe()} carries an id ({with_id[0].describe()})")
        elif any(m.kind is Kind.RESULT for m in answers):
            yield failed(answers[0], f"the refusal of {message.describe()} carries a result")
        else:
            yield passed(message, f"refused with HTTP {exchange.response.status}")


ACCEPTED_CONTENT = ("application/json", "text/event-stream")
AUTH_LAYER_STATUSES = frozenset({401, 403, 407, 429})
"""Rejections usually produced before any JSON-RPC handling (auth, Origin, rate limits)."""


@log_check(
    requirements="HTTP-07", level=Level.MUST, side=Side.SERVER, subject="answers to requests", transports={"http"}
)
def request_answers_are_json_or_event_streams(ctx: Context) -> Iterator[Finding]:
    """Answers to request POSTs are application/json or text/event-stream, error answers with a body included."""
    for exchange, request in _requests(ctx):
        response = exchange.response
        if response is None:
            continue
        has_body = bool((response.body or b"").strip()) or response.is_event_stream
        if 300 <= response.status < 400 or (response.status >= 400 and not has_body):
            continue
        if response.status in AUTH_LAYER_STATUSES:
            continue
        if response.content_type in ACCEPTED_CONTENT:
            yield passed(request)
            continue
        shown = response.headers.get("content-type") or "no Content-Type"
        yield failed(request, f"{request.describe()} was answered HTTP {response.status} with {shown}")


@log_check(
    requirements="HTTP-25", level=Level.MUST, side=Side.SERVER, subject="method-not-found answers", **MODERN_HTTP
)
def unknown_methods_get_404_with_a_jsonrpc_error(ctx: Context) -> Iterator[Finding]:
    """An unimplemented method is answered HTTP 404 with a JSON-RPC -32601 body (not a bare 404, not 200).

    Triggered by a 2026 request POST answered with ``-32601``, or answered 404 at all."""
    for exchange, request in _requests(ctx):
        response = exchange.response
        if response is None or not modern_route(exchange, ctx):
            continue
        errors = _errors(exchange)
        codes = [error_code(m) for m in errors]
        if -32601 in codes:
            answer = errors[codes.index(-32601)]
            if response.status == 404 and not response.is_event_stream:
                yield passed(answer)
            else:
                how = "an SSE stream" if response.is_event_stream else f"HTTP {response.status}"
                yield failed(answer, f"{request.method} got -32601 over {how}; method-not-found is a 404")
        elif response.status == 404:
            detail = f"error {codes[0]}" if codes and codes[0] is not None else "no JSON-RPC error body"
            yield failed(request, f"{request.method} got HTTP 404 with {detail}; a 404 must carry -32601")


def _mandated_rejection(exchange: HttpExchange) -> bool:
    code = _first_code(exchange)
    return code in MODERN_CODES


@log_check(requirements="HTTP-37", level=Level.MUST, side=Side.SERVER, subject="400/404 rejections", **MODERN_HTTP)
def rejections_carry_a_jsonrpc_error_with_the_request_id(ctx: Context) -> Iterator[Finding]:
    """A 2026 400 or 404 rejection carries an application/json JSON-RPC error whose id is the request id.

    Triggered by any 2026 request POST (readable id) answered 400 or 404; a bare 400 for a header
    with invalid characters is left to HTTP-17, which allows it."""
    for exchange, request in _requests(ctx):
        response = exchange.response
        if response is None or response.status not in (400, 404) or request.id_key is None:
            continue
        if not modern_route(exchange, ctx) and not (_body_modern(exchange, ctx) and _mandated_rejection(exchange)):
            continue
        result = audit(exchange, ctx)
        errors = _errors(exchange)
        if not errors:
            if result is not None and "invalid-characters" in result.defects:
                continue
            yield failed(request, f"HTTP {response.status} to {request.describe()} carries no JSON-RPC error body")
        elif response.content_type != "application/json":
            shown = response.headers.get("content-type") or "no Content-Type"
            yield failed(errors[0], f"the HTTP {response.status} error body is sent as {shown}, not application/json")
        elif errors[0].id_key != request.id_key:
            shown = "no id" if errors[0].id is MISSING else f"id {_shown(errors[0].id)}"
            yield failed(
                errors[0],
                f"the HTTP {response.status} error carries {shown}; the request id was {_shown(request.id)}",
            )
        else:
            yield passed(errors[0])


@log_check(
    requirements="HTTP-32", level=Level.SHOULD, side=Side.SERVER, subject="GET and DELETE requests", **MODERN_HTTP
)
def get_and_delete_get_405(ctx: Context) -> Iterator[Finding]:
    """GET or DELETE on the MCP endpoint with a 2026 version header is answered 405 Method Not Allowed.

    Triggered by a ``GET`` or ``DELETE`` whose ``MCP-Protocol-Version`` names a 2026-style
    revision (what a modern-only server sees from an older client's stream or session end)."""
    for exchange in ctx.log.http_exchanges():
        if exchange.request.method not in ("GET", "DELETE") or exchange.response is None:
            continue
        if not modern_route(exchange, ctx):
            continue
        status = exchange.response.status
        if status == 405:
            yield passed(exchange)
        else:
            what = "opened an event stream" if exchange.response.is_event_stream else f"answered HTTP {status}"
            yield failed(exchange, f"{exchange.request.method} with a 2026 version header {what}, expected 405")


@log_check(requirements="HTTP-33", level=Level.SHOULD, side=Side.SERVER, subject="2026 request POSTs", **MODERN_HTTP)
def session_ids_are_ignored_and_never_issued(ctx: Context) -> Iterator[Finding]:
    """A 2026 server ignores an incoming Mcp-Session-Id and never mints or echoes one.

    Triggered by every 2026 POST (no ``Mcp-Session-Id`` on the answer) and especially by one that
    carries ``Mcp-Session-Id`` (it must be served as if the header were absent)."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        response = exchange.response
        if exchange.request.method != "POST" or request is None or response is None:
            continue
        if not modern_route(exchange, ctx):
            continue
        sent = exchange.request.headers.get(SESSION_HEADER)
        issued = response.headers.get(SESSION_HEADER)
        if issued is not None:
            how = "echoed the request's" if issued == sent else "issued an"
            yield failed(request, f"the answer to {request.describe()} {how} Mcp-Session-Id {issued!r}")
            continue
        if sent is None:
            yield passed(request)
            continue
        errors = _errors(exchange)
        mentions_session = any("session" in _error_text(m).lower() for m in errors)
        if mentions_session or (response.status == 404 and -32601 not in [error_code(m) for m in errors]):
            yield failed(
                request, f"{request.describe()} with Mcp-Session-Id {sent!r} was refused ({_answer_text(exchange)})"
            )
        else:
            yield passed(request, f"Mcp-Session-Id {sent!r} was ignored")


def _host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


@log_check(
    requirements=("HTTP-35", "AUTH-30"),
    level=Level.MUST,
    side=Side.SERVER,
    subject="requests with a foreign Origin",
    transports={"http"},
)
def foreign_origins_get_403(ctx: Context) -> Iterator[Finding]:
    """A request whose Origin is present and not allowed is answered 403 Forbidden.

    Triggered by a probe tagged ``foreign_origin`` or by a request to a loopback server with a
    non-loopback ``Origin`` (the DNS-rebinding case), judged only when the same endpoint served a
    request without ``Origin``. Other origins may be on the server's allow-list, which traffic
    cannot show. The active suite follows its foreign-origin probe with the same request without
    ``Origin`` (probe ``origin-control``): when that is refused too, the 403 cannot be put down to
    the Origin check and the case is not verified."""
    served_plain: set[str] = set()
    controls: dict[str, int] = {}
    for exchange in ctx.log.http_exchanges():
        if exchange.request.headers.get("origin") is None and exchange.response is not None:
            if exchange.response.status < 400:
                served_plain.add(endpoint_of(exchange))
            if (exchange.probe or {}).get("name") == "origin-control":
                controls[endpoint_of(exchange)] = exchange.response.status
    for exchange in ctx.log.http_exchanges():
        origin = exchange.request.headers.get("origin")
        response = exchange.response
        if origin is None or response is None:
            continue
        subject = exchange.request_message or exchange
        if response.status == 403:
            control = controls.get(endpoint_of(exchange))
            if control is not None and control >= 400:
                yield unverified(
                    f"Origin {origin!r} got 403, but the same request without Origin got HTTP {control} too, "
                    "so the 403 cannot be put down to the Origin check",
                    subject,
                )
            elif control is not None:
                yield passed(
                    subject, f"Origin {origin!r} was refused with 403; the same request without it got HTTP {control}"
                )
            else:
                yield passed(subject, f"Origin {origin!r} was refused with 403")
            continue
        probe = exchange.probe or {}
        origin_host = _host_of(origin) if origin != "null" else "null"
        rebinding = _loopback(_host_of(exchange.request.url)) and not _loopback(origin_host)
        if probe.get("foreign_origin"):
            yield failed(
                subject, f"a request with the disallowed Origin {origin!r} got HTTP {response.status}, not 403"
            )
        elif rebinding and endpoint_of(exchange) in served_plain:
            yield failed(
                subject,
                f"a loopback server answered a request from Origin {origin!r} with HTTP {response.status}, not 403",
            )


# == server: SSE streams ==========================================================================
def _streams(ctx: Context, era: str) -> Iterator[tuple[HttpExchange, Message]]:
    """POST-opened SSE responses to requests, of one era (``modern`` or ``legacy``)."""
    for exchange, request in _requests(ctx):
        if exchange.response is None or not exchange.response.is_event_stream:
            continue
        if (era == "modern" and modern_route(exchange, ctx)) or (era == "legacy" and _legacy(exchange, ctx)):
            yield exchange, request


@log_check(
    requirements="HTTP-27",
    level=Level.MUST,
    side=Side.SERVER,
    subject="notifications on request streams",
    **MODERN_HTTP,
)
def request_streams_carry_only_notifications_about_their_request(ctx: Context) -> Iterator[Finding]:
    """Before its final response, a request's SSE stream carries only notifications about that request.

    ``subscriptions/listen`` streams are judged by the SUB rules; ``notifications/message`` is
    judged by the LOG rules (which know the request's ``logLevel``)."""
    for exchange, request in _streams(ctx, "modern"):
        if request.method == LISTEN:
            continue
        token = (request.meta or {}).get("progressToken", MISSING)
        for message in exchange.response_messages:
            if message.kind.is_response:
                break
            if message.kind is not Kind.NOTIFICATION:
                continue
            meta = message.meta or {}
            if SUBSCRIPTION_ID_KEY in meta or message.method in CHANGE_NOTIFICATIONS:
                yield failed(
                    message, f"{message.method} belongs on a subscriptions/listen stream, not on {request.describe()}'s"
                )
            elif message.method == "notifications/progress":
                sent = _params(message).get("progressToken", MISSING)
                if token is not MISSING and id_key(sent) == id_key(token):
                    yield passed(message)
                else:
                    asked = "no progressToken" if token is MISSING else f"progressToken {_shown(token)}"
                    yield failed(message, f"progress for token {_shown(sent)} on the stream of a request with {asked}")


@message_check(
    requirements="HTTP-28", level=Level.MUST_NOT, side=Side.SERVER, subject="messages on SSE streams",
    sent_by=Side.SERVER, **MODERN_HTTP,
)  # fmt: skip
def sse_streams_carry_no_server_requests(message: Message, ctx: Context) -> Finding | None:
    """No JSON-RPC request (method plus id) travels on a 2026 SSE stream."""
    exchange = http_exchange(message, ctx)
    if exchange is None or exchange.response is None or not exchange.response.is_event_stream:
        return None
    if not modern_route(exchange, ctx):
        return None
    if message.kind is Kind.REQUEST:
        return failed(message, f"the server sent a request ({message.describe()}) on an SSE stream")
    return passed(message)


@log_check(
    requirements="HTTP-29", level=Level.SHOULD, side=Side.SERVER, subject="SSE request streams", transports={"http"}
)
def final_responses_end_their_streams(ctx: Context) -> Iterator[Finding]:
    """After the final JSON-RPC response no more data events follow, and the server closes the stream."""
    limit = _setting(ctx, "sse_close_grace_s", 2.0)
    for exchange, request in _requests(ctx):
        response = exchange.response
        if response is None or not response.is_event_stream:
            continue
        final = _final_response(exchange, request)
        if final is None:
            continue
        later = [m for m in exchange.response_messages if m.index > final.index]
        if later:
            yield failed(later[0], f"{len(later)} message(s) followed the final response to {request.describe()}")
            continue
        ending = exchange.ending
        if ending is not None and ending.reason in (EndReason.OPEN, EndReason.CLIENT_DISCONNECT):
            lingered = ending.time - final.time
            if lingered > limit:
                yield failed(
                    final, f"the stream stayed open {lingered:.1f} s after the final response to {request.describe()}"
                )
                continue
        yield passed(final)


@log_check(requirements="HTTP-30", level=Level.SHOULD, side=Side.SERVER, subject="SSE responses", **MODERN_HTTP)
def sse_responses_disable_proxy_buffering(ctx: Context) -> Iterator[Finding]:
    """Every 2026 SSE response carries X-Accel-Buffering: no."""
    for exchange in ctx.log.http_exchanges():
        response = exchange.response
        if response is None or not response.is_event_stream or not modern_route(exchange, ctx):
            continue
        subject = exchange.request_message or exchange
        value = response.headers.get("x-accel-buffering")
        if value is not None and value.strip().lower() == "no":
            yield passed(subject)
        else:
            shown = "no X-Accel-Buffering header" if value is None else f"X-Accel-Buffering: {value}"
            yield failed(subject, f"the SSE response has {shown}")


@log_check(requirements="HTTP-34", level=Level.SHOULD, side=Side.SERVER, subject="2026 SSE responses", **MODERN_HTTP)
def streams_are_not_resumable(ctx: Context) -> Iterator[Finding]:
    """2026 SSE streams carry no event ids and a Last-Event-ID header replays nothing (INFO, ⚠A18)."""
    for exchange in ctx.log.http_exchanges():
        response = exchange.response
        if response is None or not response.is_event_stream or not modern_route(exchange, ctx):
            continue
        subject = exchange.request_message or exchange
        request = exchange.request_message
        if exchange.request.headers.get(LAST_EVENT_ID) is not None and request is not None:
            foreign = [m for m in exchange.response_messages if m.kind.is_response and m.id_key != request.id_key]
            if foreign:
                yield failed(foreign[0], f"a request with Last-Event-ID got {foreign[0].describe()} replayed")
                continue
        ids = [event.id for event in response.events if event.id]
        if ids:
            yield failed(subject, f"the stream numbers its events (id {ids[0]!r}); 2026 streams are not resumable")
        else:
            yield passed(subject)


# == client (2026) ================================================================================
@log_check(requirements="HTTP-08", level=Level.MUST, side=Side.CLIENT, subject="2026 request POSTs", **MODERN_HTTP)
def client_version_header_matches_the_body(ctx: Context) -> Iterator[Finding]:
    """Every 2026 request POST carries MCP-Protocol-Version equal to the body's _meta version.

    Notification POSTs are not judged (⚠A8: header rules for them are undefined)."""
    for exchange, request in _requests(ctx, client=True):
        if not _modern_any(exchange, ctx):
            continue
        header = _header_version(exchange)
        body = _body_version(request)
        if header is None:
            yield failed(request, f"{request.describe()} has no MCP-Protocol-Version header")
        elif body is None:
            continue  # a missing _meta version is META-01's finding
        elif header != body:
            yield failed(request, f"MCP-Protocol-Version {header!r} differs from the body version {body!r}")
        else:
            yield passed(request)


@log_check(requirements="HTTP-10", level=Level.MUST, side=Side.CLIENT, subject="2026 request POSTs", **MODERN_HTTP)
def client_method_header_matches_the_body(ctx: Context) -> Iterator[Finding]:
    """Every 2026 request POST carries Mcp-Method equal, case included, to the body method.

    Notification POSTs are never failed for lacking it (⚠A8)."""
    for exchange, request in _requests(ctx, client=True):
        if not _modern_any(exchange, ctx):
            continue
        header = exchange.request.headers.get(METHOD_HEADER)
        if header is None:
            yield failed(request, f"{request.describe()} has no Mcp-Method header")
        elif header != request.method:
            yield failed(request, f"Mcp-Method {header!r} differs from the body method {request.method!r}")
        else:
            yield passed(request)


@log_check(requirements="HTTP-11", level=Level.MUST, side=Side.CLIENT, subject="named request POSTs", **MODERN_HTTP)
def client_name_header_matches_the_body(ctx: Context) -> Iterator[Finding]:
    """tools/call and prompts/get carry Mcp-Name = params.name; resources/read carries Mcp-Name = params.uri.

    The value may be plain or Base64-sentinel encoded."""
    for exchange, request in _requests(ctx, client=True):
        field_name = NAMED_METHODS.get(request.method or "")
        if field_name is None or not _modern_any(exchange, ctx):
            continue
        body = _params(request).get(field_name)
        header = exchange.request.headers.get(NAME_HEADER)
        if header is None:
            yield failed(request, f"{request.describe()} has no Mcp-Name header")
            continue
        decoded = decode_sentinel(header) if is_sentinel(header) else header
        if decoded == body:
            yield passed(request)
        else:
            shown = f"{header!r}" if decoded == header else f"{header!r} (decoding to {decoded!r})"
            yield failed(request, f"Mcp-Name {shown} differs from params.{field_name} {_shown(body)}")


def _mirrored_values(exchange: HttpExchange, request: Message, ctx: Context) -> Iterator[tuple[str, str, str]]:
    """(header label, header value, body text) for Mcp-Name and every marked argument present in the body."""
    field_name = NAMED_METHODS.get(request.method or "")
    params = _params(request)
    if field_name is not None and isinstance(params.get(field_name), str):
        header = exchange.request.headers.get(NAME_HEADER)
        if header is not None:
            yield "Mcp-Name", header, params[field_name]
    if request.method != "tools/call":
        return
    tool = _tool_of(request, ctx)
    if tool is None:
        return
    marks, problems = header_marks(tool)
    if problems:
        return
    for mark in marks:
        value = _value_at(params.get("arguments"), mark.path)
        expected = mirror(value) if value is not MISSING else None
        header = exchange.request.headers.get(PARAM_PREFIX + mark.name)
        if expected is not None and header is not None:
            yield f"Mcp-Param-{mark.name}", header, expected


@log_check(requirements="HTTP-15", level=Level.MUST, side=Side.CLIENT, subject="mirrored header values", **MODERN_HTTP)
def client_encodes_unsafe_header_values(ctx: Context) -> Iterator[Finding]:
    """Mcp-Name and Mcp-Param values unsafe as plain header text travel as =?base64?…?= with lowercase markers."""
    for exchange, request in _requests(ctx, client=True):
        if not _modern_any(exchange, ctx):
            continue
        for label, header, expected in _mirrored_values(exchange, request, ctx):
            if is_sentinel(header):
                if decode_sentinel(header) is None:
                    yield failed(request, f"{label} {header!r} is not valid Base64 of UTF-8 text")
                else:
                    yield passed(request)
            elif _looks_like_sentinel_any_case(header) and header != expected:
                yield failed(request, f"{label} {header!r} spells the Base64 markers in the wrong case")
            elif needs_encoding(expected):
                yield failed(
                    request,
                    f"{label} carries {expected!r} as plain text; it must be sent as {encode_sentinel(expected)}",
                )
            elif not header_text_safe(header):
                yield failed(request, f"{label} {header!r} holds characters a plain header value may not")
            else:
                yield passed(request)


@log_check(
    requirements="HTTP-18", level=Level.MUST, side=Side.CLIENT, subject="calls of tools with x-mcp-header marks",
    **MODERN_HTTP,
)  # fmt: skip
def client_mirrors_marked_arguments(ctx: Context) -> Iterator[Finding]:
    """A tools/call sends Mcp-Param-<Name> for each marked argument present and non-null, and omits it otherwise.

    Strings go as-is, integers in decimal, booleans as ``true``/``false`` (or Base64 when needed);
    the tool's ``inputSchema`` comes from ``tools/list`` in the log."""
    for exchange, request in _requests(ctx, client=True):
        if request.method != "tools/call" or not _modern_any(exchange, ctx):
            continue
        params = _params(request)
        name = params.get("name")
        tools = _tools_for(request, ctx)
        if tools is None or not isinstance(name, str) or name not in tools:
            yield unverified(
                f"the definition of tool {name!r} was not seen, so its x-mcp-header marks are unknown", request
            )
            continue
        marks, problems = header_marks(tools[name])
        if problems or not marks:
            continue  # invalid tools are HTTP-23's; unmarked tools need no headers
        wrong: list[str] = []
        for mark in marks:
            label = f"Mcp-Param-{mark.name}"
            value = _value_at(params.get("arguments"), mark.path)
            header = exchange.request.headers.get(PARAM_PREFIX + mark.name)
            where = "arguments." + ".".join(mark.path)
            if value is MISSING or value is None:
                if header is not None:
                    wrong.append(f"{label} was sent although {where} is {'null' if value is None else 'absent'}")
                continue
            expected = mirror(value)
            if expected is None:
                continue  # not a primitive: the arguments break the schema, which TOOL rules judge
            if header is None:
                wrong.append(f"{label} is missing for {where} = {_shown(value)}")
                continue
            sent = decode_sentinel(header) if is_sentinel(header) else header
            if sent != expected:
                wrong.append(f"{label} {header!r} does not mirror {where} = {_shown(value)} (expected {expected!r})")
        if wrong:
            yield failed(request, "; ".join(wrong))
        else:
            yield passed(request)


@log_check(requirements="HTTP-23", level=Level.MUST, side=Side.CLIENT, subject="tool calls", **MODERN_HTTP)
def client_never_calls_tools_with_invalid_header_marks(ctx: Context) -> Iterator[Finding]:
    """An HTTP client drops tools whose x-mcp-header marks are invalid (TOOL-16) and never calls them."""
    for exchange, request in _requests(ctx, client=True):
        if request.method != "tools/call" or not _modern_any(exchange, ctx):
            continue
        name = _params(request).get("name")
        tools = _tools_for(request, ctx)
        if tools is None or not isinstance(name, str) or name not in tools:
            yield unverified(f"the definition of tool {name!r} was not seen", request)
            continue
        _, problems = header_marks(tools[name])
        if problems:
            yield failed(request, f"the client called {name!r}, whose x-mcp-header marks are invalid: {problems[0]}")
        else:
            yield passed(request)


def _resume_label(exchange: HttpExchange) -> str:
    with_id = " with Last-Event-ID" if exchange.request.headers.get(LAST_EVENT_ID) is not None else ""
    return exchange.request.method + with_id


def _label(message: Message | None) -> str:
    return message.describe() if message is not None else "a POST"


def _later_requests(ctx: Context, after: float) -> list[tuple[HttpExchange, Message]]:
    return [(e, r) for e, r in _requests(ctx) if r.time > after and e.probe is None]


def _same_work(a: Message, b: Message) -> bool:
    def strip(message: Message) -> str:
        params = {key: value for key, value in _params(message).items() if key != "_meta"}
        return json.dumps([message.method, params], sort_keys=True, default=str)

    return strip(a) == strip(b)


@log_check(
    requirements="HTTP-22", level=Level.SHOULD, side=Side.CLIENT, subject="parameter-header rejections", **MODERN_HTTP
)
def client_refreshes_tools_after_a_parameter_header_rejection(ctx: Context) -> Iterator[Finding]:
    """After a -32020 about Mcp-Param headers the client re-reads tools/list and retries under a new id."""
    for exchange, request in _requests(ctx):
        if exchange.probe is not None or request.method != "tools/call" or not _modern_any(exchange, ctx):
            continue
        if _first_code(exchange) != HEADER_MISMATCH:
            continue
        result = audit(exchange, ctx)
        about_params = "param" in " ".join(_error_text(m) for m in _errors(exchange)).lower() or (
            result is not None and any(kind.startswith("param") for kind in result.defects)
        )
        if not about_params:
            continue
        later = _later_requests(ctx, request.time)
        name = _params(request).get("name")
        retry = next((r for _, r in later if r.method == "tools/call" and _params(r).get("name") == name), None)
        if retry is None:
            yield unverified(f"no retry of tool {name!r} followed the -32020 rejection", request)
            continue
        refreshed = any(r.method == "tools/list" and r.time < retry.time for _, r in later)
        if not refreshed:
            yield failed(retry, f"the client retried {name!r} without re-reading tools/list after the -32020")
        elif retry.id_key == request.id_key:
            yield failed(retry, f"the client retried {name!r} under the rejected request's id")
        else:
            yield passed(retry)


@log_check(requirements="HTTP-36", level=Level.MUST, side=Side.CLIENT, subject="broken response streams", **MODERN_HTTP)
def client_reissues_broken_streams_as_new_requests(ctx: Context) -> Iterator[Finding]:
    """When a 2026 response stream breaks before its final response, the client re-sends the work under a new id.

    It never tries to resume (no ``GET``, no ``Last-Event-ID``). A stream the client closed
    itself is a cancellation, not a break."""
    for exchange, request in _streams(ctx, "modern"):
        ending = exchange.ending
        if exchange.probe is not None or request.method == LISTEN or ending is None:
            continue
        if ending.reason not in (EndReason.SERVER_DISCONNECT, EndReason.ERROR):
            continue
        if _final_response(exchange, request) is not None:
            continue
        resumes = [
            other
            for other in ctx.log.http_exchanges()
            if other.request.time > ending.time
            and other.probe is None
            and (other.request.method == "GET" or other.request.headers.get(LAST_EVENT_ID) is not None)
        ]
        if resumes:
            yield failed(
                resumes[0].request_message or resumes[0],
                f"after the stream of {request.describe()} broke the client tried to resume it "
                f"({_resume_label(resumes[0])})",
            )
            continue
        again = next((r for _, r in _later_requests(ctx, ending.time) if _same_work(r, request)), None)
        if again is None:
            yield unverified(f"{request.describe()} broke and was not re-sent within the capture", request)
        elif again.id_key == request.id_key:
            yield failed(again, f"the client re-sent {request.describe()} under the same id")
        else:
            yield passed(again)


# == client (both eras) ===========================================================================
def _accepted_types(value: str | None) -> set[str]:
    kinds: set[str] = set()
    for item in (value or "").split(","):
        media, *parameters = [part.strip() for part in item.split(";")]
        if not media:
            continue
        quality = next((p.split("=", 1)[1].strip() for p in parameters if p.lower().startswith("q=")), "1")
        try:
            if float(quality) == 0:
                continue
        except ValueError:
            pass
        kinds.add(media.lower())
    return kinds


def _post_messages(ctx: Context) -> Iterator[tuple[HttpExchange, Message]]:
    for exchange in ctx.log.http_exchanges():
        message = exchange.request_message
        if exchange.request.method == "POST" and message is not None and _judged_as_client(exchange):
            yield exchange, message


@log_check(requirements="HTTP-02", level=Level.MUST, side=Side.CLIENT, subject="client messages", transports={"http"})
def client_messages_are_posted(ctx: Context) -> Iterator[Finding]:
    """Every JSON-RPC message from the client travels in its own POST to the MCP endpoint."""
    for exchange in ctx.log.http_exchanges():
        message = exchange.request_message
        if message is None or not _judged_as_client(exchange):
            continue
        if exchange.request.method == "POST":
            yield passed(message)
        else:
            yield failed(message, f"the client sent {message.describe()} in a {exchange.request.method} request")


@log_check(requirements="HTTP-03", level=Level.MUST, side=Side.CLIENT, subject="client POSTs", transports={"http"})
def client_posts_accept_json_and_event_streams(ctx: Context) -> Iterator[Finding]:
    """Every POST's Accept header lists application/json and text/event-stream (wildcards are HTTP-03's SHOULD)."""
    for exchange, message in _post_messages(ctx):
        header = exchange.request.headers.get("accept")
        kinds = _accepted_types(header)
        covered = {
            "application/json": bool(kinds & {"application/json", "application/*", "*/*"}),
            "text/event-stream": bool(kinds & {"text/event-stream", "text/*", "*/*"}),
        }
        missing = [name for name, ok in covered.items() if not ok]
        if header is None:
            yield failed(message, "the POST has no Accept header")
        elif missing:
            yield failed(message, f"Accept {header!r} does not list {' or '.join(missing)}")
        else:
            yield passed(message)


@log_check(requirements="HTTP-03", level=Level.SHOULD, side=Side.CLIENT, subject="client POSTs", transports={"http"})
def client_posts_name_both_media_types_literally(ctx: Context) -> Iterator[Finding]:
    """The POST Accept header names both media types literally rather than through wildcards (⚠A28)."""
    for exchange, message in _post_messages(ctx):
        header = exchange.request.headers.get("accept")
        kinds = _accepted_types(header)
        literal = {"application/json", "text/event-stream"} <= kinds
        covered_by_wildcard = not literal and bool(kinds & {"*/*", "application/*", "text/*"})
        if literal:
            yield passed(message)
        elif covered_by_wildcard:
            yield failed(message, f"Accept {header!r} relies on wildcards instead of naming both media types")


@log_check(requirements="HTTP-04", level=Level.MUST_NOT, side=Side.CLIENT, subject="client POST bodies", **MODERN_HTTP)
def client_posts_one_request_or_notification(ctx: Context) -> Iterator[Finding]:
    """A 2026 POST body is one request or notification: never a response, never a JSON array."""
    for exchange, message in _post_messages(ctx):
        if not (_modern_any(exchange, ctx) or _modern(ctx.exchange_revision(exchange))):
            continue
        if message.kind is Kind.BATCH:
            yield failed(message, f"the client POSTed a JSON array of {len(message.payload)} messages")
        elif message.kind.is_response:
            yield failed(message, f"the client POSTed a response ({message.describe()}); 2026 clients send none")
        elif message.kind in (Kind.REQUEST, Kind.NOTIFICATION):
            yield passed(message)


# == 2025 GET streams and resumability ============================================================
def _legacy_gets(ctx: Context) -> Iterator[HttpExchange]:
    for exchange in ctx.log.http_exchanges():
        if exchange.request.method == "GET" and _legacy(exchange, ctx):
            yield exchange


@log_check(requirements="HTTP-38", level=Level.MUST, side=Side.SERVER, subject="2025 GET requests", **LEGACY_HTTP)
def legacy_get_opens_a_stream_or_gets_405(ctx: Context) -> Iterator[Finding]:
    """A 2025 GET on the MCP endpoint is answered with text/event-stream or 405.

    A 404 for a GET naming a terminated session, and a 400 for a GET without the session id a
    server requires, are the session rules' answers and are not judged here."""
    for exchange in _legacy_gets(ctx):
        response = exchange.response
        if response is None:
            continue
        session = exchange.request.headers.get(SESSION_HEADER)
        if response.is_event_stream or response.status == 405:
            yield passed(exchange)
        elif (response.status == 404 and session is not None) or (response.status == 400 and session is None):
            continue
        else:
            shown = response.headers.get("content-type") or "no Content-Type"
            yield failed(
                exchange, f"GET was answered HTTP {response.status} with {shown}; expected an event stream or 405"
            )


@log_check(requirements="HTTP-38", level=Level.MUST, side=Side.CLIENT, subject="2025 GET requests", **LEGACY_HTTP)
def legacy_get_accepts_event_streams(ctx: Context) -> Iterator[Finding]:
    """A 2025 client's GET on the MCP endpoint lists text/event-stream in Accept."""
    for exchange in _legacy_gets(ctx):
        if not _judged_as_client(exchange):
            continue
        header = exchange.request.headers.get("accept")
        if _accepted_types(header) & {"text/event-stream", "text/*", "*/*"}:
            yield passed(exchange)
        else:
            yield failed(exchange, f"the GET's Accept {header!r} does not list text/event-stream")


@log_check(requirements="HTTP-39", level=Level.MUST_NOT, side=Side.SERVER, subject="2025 GET streams", **LEGACY_HTTP)
def get_streams_carry_no_responses(ctx: Context) -> Iterator[Finding]:
    """A GET-opened 2025 stream carries no JSON-RPC response unless it resumes a request's stream."""
    for exchange in _legacy_gets(ctx):
        response = exchange.response
        if response is None or not response.is_event_stream:
            continue
        if exchange.request.headers.get(LAST_EVENT_ID) is not None:
            continue  # a resumption may replay a response
        answers = [m for m in exchange.response_messages if m.kind.is_response]
        if answers:
            yield failed(answers[0], f"the GET stream carried {answers[0].describe()}")
        else:
            yield passed(exchange)


def _session_key(exchange: HttpExchange) -> str:
    session = exchange.request.headers.get(SESSION_HEADER)
    if session is None and exchange.response is not None:
        session = exchange.response.headers.get(SESSION_HEADER)
    if session is not None:
        return f"session:{session}"
    return f"connection:{exchange.connection}" if exchange.connection else ""


def _legacy_event_streams(ctx: Context) -> Iterator[HttpExchange]:
    for exchange in ctx.log.http_exchanges():
        if exchange.response is not None and exchange.response.is_event_stream and _legacy(exchange, ctx):
            yield exchange


def _resumption(exchange: HttpExchange) -> bool:
    return exchange.request.method == "GET" and exchange.request.headers.get(LAST_EVENT_ID) is not None


@log_check(
    requirements="HTTP-40", level=Level.MUST_NOT, side=Side.SERVER, subject="messages on 2025 streams", **LEGACY_HTTP
)
def messages_travel_on_one_stream_only(ctx: Context) -> Iterator[Finding]:
    """A 2025 server sends each message on one stream only, never broadcast across connected streams."""
    window = _setting(ctx, "broadcast_window_s", 1.0)
    seen: dict[tuple[str, str], list[tuple[Message, HttpExchange]]] = defaultdict(list)
    for exchange in _legacy_event_streams(ctx):
        scope = _session_key(exchange)
        for message in exchange.response_messages:
            key = (scope, json.dumps(message.payload, sort_keys=True, default=str))
            twins = [
                (twin, where)
                for twin, where in seen[key]
                if where.id != exchange.id
                and abs(twin.time - message.time) <= window
                and not (_resumption(where) or _resumption(exchange))
            ]
            if scope and twins:
                yield failed(message, f"{message.describe()} was also sent on another stream of the session")
            else:
                yield passed(message)
            seen[key].append((message, exchange))


@log_check(requirements="HTTP-41", level=Level.MUST, side=Side.SERVER, subject="SSE event ids", **LEGACY_HTTP)
def event_ids_are_unique_per_session(ctx: Context) -> Iterator[Finding]:
    """2025 SSE event ids, when used, are unique across all streams of the session."""
    seen: dict[tuple[str, str], HttpExchange] = {}
    for exchange in _legacy_event_streams(ctx):
        scope = _session_key(exchange)
        if not scope:
            continue
        assert exchange.response is not None
        for event in exchange.response.events:
            if not event.id:
                continue
            earlier = seen.get((scope, event.id))
            if earlier is not None and not _resumption(exchange):
                where = "the same stream" if earlier.id == exchange.id else "another stream"
                yield failed(exchange.request_message or exchange, f"event id {event.id!r} was already used on {where}")
            else:
                yield passed(exchange.request_message or exchange)
            seen.setdefault((scope, event.id), exchange)


@log_check(requirements="HTTP-42", level=Level.SHOULD, side=Side.SERVER, subject="2025 POST streams", **LEGACY_HTTP)
def post_streams_are_primed_and_announce_retry(ctx: Context) -> Iterator[Finding]:
    """A 2025 POST stream opens with an id-only priming event, and a retry precedes any early close."""
    for exchange, request in _streams(ctx, "legacy"):
        assert exchange.response is not None
        events = [event for event in exchange.response.events if not event.is_comment]
        if not events:
            continue
        first = events[0]
        if first.id and not (first.data or "").strip():
            yield passed(request)
        else:
            yield failed(
                request,
                f"the stream for {request.describe()} does not start with a priming event (an id and empty data)",
            )
        ending = exchange.ending
        unfinished = _final_response(exchange, request) is None
        if unfinished and ending is not None and ending.reason in (EndReason.COMPLETE, EndReason.SERVER_DISCONNECT):
            if not any(event.retry is not None for event in events):
                yield failed(
                    request, f"the server closed the stream for {request.describe()} early without a retry field"
                )


@log_check(
    requirements="HTTP-43", level=Level.MUST, side=Side.CLIENT, subject="reconnections after retry", **LEGACY_HTTP
)
def client_waits_the_retry_interval(ctx: Context) -> Iterator[Finding]:
    """After the server closed a 2025 stream announcing retry: N, the client waits N ms before reconnecting."""
    for exchange in _legacy_event_streams(ctx):
        ending = exchange.ending
        response = exchange.response
        request = exchange.request_message
        if ending is None or response is None or ending.reason not in (EndReason.COMPLETE, EndReason.SERVER_DISCONNECT):
            continue
        if request is not None and request.kind is Kind.REQUEST and _final_response(exchange, request) is not None:
            continue
        retries = [event.retry for event in response.events if event.retry is not None]
        if not retries:
            continue
        wait = retries[-1] / 1000
        scope = _session_key(exchange)
        reconnect = next(
            (
                other
                for other in ctx.log.http_exchanges()
                if other.request.method == "GET"
                and other.request.time >= ending.time
                and _session_key(other) == scope
                and _judged_as_client(other)
            ),
            None,
        )
        if reconnect is None:
            continue
        waited = reconnect.request.time - ending.time
        if waited + 1e-3 < wait:
            yield failed(
                reconnect, f"the client reconnected after {waited * 1000:.0f} ms; retry asked for {retries[-1]} ms"
            )
        else:
            yield passed(reconnect)


@log_check(
    requirements="HTTP-44", level=Level.MUST_NOT, side=Side.SERVER, subject="2025 stream resumptions", **LEGACY_HTTP
)
def resumptions_replay_only_the_broken_stream(ctx: Context) -> Iterator[Finding]:
    """A GET with Last-Event-ID replays only messages of the stream that broke."""
    origins: dict[tuple[str, str], HttpExchange] = {}
    for exchange in _legacy_event_streams(ctx):
        assert exchange.response is not None
        last = exchange.request.headers.get(LAST_EVENT_ID)
        if _resumption(exchange) and last is not None:
            origin = origins.get((_session_key(exchange), last))
            if origin is None:
                yield unverified(f"the stream that sent event id {last!r} is not in the capture", exchange)
            else:
                yield from _judge_replay(exchange, origin)
        for event in exchange.response.events:
            if event.id:
                origins.setdefault((_session_key(exchange), event.id), exchange)


def _judge_replay(exchange: HttpExchange, origin: HttpExchange) -> Iterator[Finding]:
    request = origin.request_message if origin.request.method == "POST" else None
    token = (request.meta or {}).get("progressToken", MISSING) if request is not None else MISSING
    wrong: Message | None = None
    for message in exchange.response_messages:
        if message.kind.is_response and (request is None or message.id_key != request.id_key):
            wrong = message
        elif message.method == "notifications/progress" and request is not None:
            if id_key(_params(message).get("progressToken", MISSING)) != id_key(token):
                wrong = message
        if wrong is not None:
            yield failed(wrong, f"the resumed stream replayed {wrong.describe()}, which belonged to another stream")
            return
    yield passed(exchange)


@log_check(
    requirements="HTTP-45", level=Level.SHOULD, side=Side.SERVER, subject="2025 stream notifications", **LEGACY_HTTP
)
def stream_messages_relate_to_their_stream(ctx: Context) -> Iterator[Finding]:
    """Progress on a 2025 POST stream concerns its request; the GET stream carries none for in-flight requests."""
    tokens: dict[tuple[str, tuple[str, Any] | None], Message] = {}
    for exchange, request in _requests(ctx):
        token = (request.meta or {}).get("progressToken", MISSING)
        if token is not MISSING and _legacy(exchange, ctx):
            tokens[(_session_key(exchange), id_key(token))] = request
    for exchange in _legacy_event_streams(ctx):
        opener = exchange.request_message
        own = (opener.meta or {}).get("progressToken", MISSING) if opener is not None else MISSING
        for message in exchange.response_messages:
            if message.method != "notifications/progress":
                continue
            sent = id_key(_params(message).get("progressToken", MISSING))
            if exchange.request.method == "POST":
                if own is not MISSING and sent == id_key(own):
                    yield passed(message)
                else:
                    yield failed(
                        message,
                        f"progress for another request's token on the stream of {_label(opener)}",
                    )
            elif not _resumption(exchange):
                owner = tokens.get((_session_key(exchange), sent))
                if owner is not None and owner.time <= message.time:
                    answers = ctx.log.responses_to(owner)
                    if not answers or min(a.time for a in answers) >= message.time:
                        yield failed(message, f"progress for the in-flight {owner.describe()} went to the GET stream")
                        continue
                yield passed(message)


@log_check(requirements="HTTP-46", level=Level.SHOULD, side=Side.SERVER, subject="2025 POST streams", **LEGACY_HTTP)
def post_streams_deliver_their_response(ctx: Context) -> Iterator[Finding]:
    """A 2025 POST stream eventually delivers the response to its request (possibly after a resumption)."""
    for exchange, request in _streams(ctx, "legacy"):
        if _final_response(exchange, request) is not None:
            yield passed(request)
            continue
        if _resumed_answer(ctx, exchange, request):
            yield passed(request, "the response arrived on a resumed stream")
            continue
        ending = exchange.ending
        if ending is not None and ending.reason is EndReason.COMPLETE:
            yield failed(request, f"the stream for {request.describe()} ended without its response")
        else:
            how = ending.reason.value if ending is not None else "unknown"
            yield unverified(f"the stream for {request.describe()} ended ({how}) before any response", request)


def _resumed_answer(ctx: Context, exchange: HttpExchange, request: Message) -> bool:
    scope = _session_key(exchange)
    for other in _legacy_event_streams(ctx):
        if _resumption(other) and _session_key(other) == scope and other.request.time >= request.time:
            if any(m.kind.is_response and m.id_key == request.id_key for m in other.response_messages):
                return True
    return False
