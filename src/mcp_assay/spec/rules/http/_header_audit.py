"""The header audit of one 2026 request POST, and how a server's answer to it is judged.

Everything about one request's headers is worked out once by :func:`audit`: which standard
header is missing, disagrees with the body, carries invalid characters or a Base64 sentinel, and
which alternative answers the unspecified validation order leaves open (⚠A6). The server-side
header rules then ask whether the server rejected what it must reject (400 with ``-32020``) and
accepted what it must accept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_assay.spec.checks import Finding, failed, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.http._exchanges import (
    NAMED_METHODS,
    STANDARD_HEADERS,
    error_text,
    errors_of,
    first_code,
    http_eras,
    is_modern,
    rendered,
    request_posts,
    tool_of,
)
from mcp_assay.spec.rules.shared.common import error_code, params_of
from mcp_assay.spec.rules.shared.envelopes import meta_version
from mcp_assay.spec.rules.shared.header_mirroring import (
    decode_sentinel,
    header_marks,
    header_text_safe,
    is_sentinel,
    mirror,
    numerically_equal,
    value_at,
)
from mcp_assay.vocabulary.protocol import ErrorCode, Header, HeaderKey, MetaKey
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import HttpExchange

__all__ = [
    "Audit",
    "answer_text",
    "audit",
    "expect_acceptance",
    "expect_rejection",
    "judge_acceptance",
    "judge_audits",
    "modern_audits",
]


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
    shown = f"params.{field_name} {rendered(body_value)}"
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
    params = params_of(audit_.request)
    headers = audit_.exchange.request.headers
    tool = tool_of(audit_.request, ctx)
    if tool is None:
        audit_.params_known = False
        return
    marks, problems = header_marks(tool)
    if problems:
        audit_.params_known = False  # an invalid tool (TOOL-16): what the server checks is anyone's guess
        return
    arguments = params.get("arguments")
    for mark in marks:
        header_name = HeaderKey.PARAM_PREFIX + mark.name.lower()
        shown = f"{Header.PARAM_PREFIX}{mark.name}"
        values = headers.get_all(header_name)
        value = value_at(arguments, mark.path)
        where = "arguments." + ".".join(mark.path)
        if value is MISSING or value is None:
            if values:
                audit_.defect("other", f"{shown} was sent although {where} is absent or null")
            else:
                audit_.notes["param-omitted"] = f"{where} is absent or null and {shown} is omitted"
            continue
        expected = mirror(value)
        if expected is None:
            audit_.defect("other", f"{where} is {rendered(value)}, which no header can mirror")
            continue
        if not values:
            audit_.defect("param-missing", f"{shown} is missing although {where} is {rendered(value)}")
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
            if numerically_equal(header, value):
                audit_.notes["param-numeric"] = f"{shown} {header!r} equals {where} {value} numerically"
            else:
                audit_.defect("param-mismatch", f"{shown} {header!r} differs from {where} {rendered(value)}")


class _Audits:
    """The audit of each exchange, made once however many header rules ask for it."""

    def __init__(self, ctx: Context) -> None:
        self.done: dict[str, Audit | None] = {}

    def advance(self, ctx: Context) -> None:
        """The log grew: audits already made stay valid (each depends on its own exchange and listings before it)."""


def audit(exchange: HttpExchange, ctx: Context) -> Audit | None:
    """Check the mirrored headers of one POSTed request against its body (``None`` for other exchanges)."""
    audits = ctx.view(_Audits)
    if exchange.id not in audits.done:
        audits.done[exchange.id] = _audit(exchange, ctx)
    return audits.done[exchange.id]


def _audit(exchange: HttpExchange, ctx: Context) -> Audit | None:
    request = exchange.request_message
    if exchange.request.method != "POST" or request is None or request.kind is not Kind.REQUEST:
        return None
    result = Audit(exchange=exchange, request=request)
    body_version = meta_version(request)
    version = _single(exchange, HeaderKey.PROTOCOL_VERSION, result)
    if version is None:
        result.defect("version-missing", "the request has no MCP-Protocol-Version header")
    elif not header_text_safe(version):
        result.defect("invalid-characters", f"MCP-Protocol-Version {version!r} contains invalid characters")
    elif body_version is not None and version.strip() != body_version:
        result.defect(
            "version-mismatch",
            f"MCP-Protocol-Version {version.strip()!r} differs from the body's _meta version {body_version!r}",
        )
    method = _single(exchange, HeaderKey.METHOD, result)
    if method is None:
        result.defect("method-missing", f"the {request.method} request has no Mcp-Method header")
    elif not header_text_safe(method):
        result.defect("invalid-characters", f"Mcp-Method {method!r} contains characters a header value may not hold")
    elif method != request.method:
        result.defect("method-mismatch", f"Mcp-Method {method!r} differs from the body method {request.method!r}")
    field_name = NAMED_METHODS.get(request.method or "")
    if field_name is not None:
        name = _single(exchange, HeaderKey.NAME, result)
        _audit_name(result, name, params_of(request).get(field_name, MISSING), field_name)
    if request.method == "tools/call":
        _audit_params(result, ctx)
    respelled = _respelled(tuple(exchange.request.headers.names()))
    if respelled is not None:
        result.notes.setdefault("name-case", respelled)
    _alternatives(result, ctx, version, body_version)
    return result


def _respelled(names: tuple[str, ...]) -> str | None:
    """The note on the first standard header of ``names`` spelled otherwise than the specification spells it
    (``None``: none is), worked out once per set of header names: a client sends the same few on every request."""
    if names in _RESPELLED:
        return _RESPELLED[names]
    known = None
    for header_name in names:
        canonical = STANDARD_HEADERS.get(header_name.lower())
        if canonical is not None and header_name != canonical:
            known = f"header spelled {header_name!r} rather than {canonical!r}"
            break
    if len(_RESPELLED) < 256:
        _RESPELLED[names] = known
    return known


_RESPELLED: dict[tuple[str, ...], str | None] = {}


def _alternatives(result: Audit, ctx: Context, header: str | None, body: str | None) -> None:
    request = result.request
    meta = request.meta or {}
    if MetaKey.PROTOCOL_VERSION not in meta or MetaKey.CLIENT_CAPABILITIES not in meta:
        result.alternatives[(400, ErrorCode.INVALID_PARAMS)] = "the body also lacks required _meta fields (⚠A7)"
    for version in (header, body):
        if version is not None and not is_modern(ctx.spec.get(version.strip())):
            result.alternatives[(400, ErrorCode.UNSUPPORTED_PROTOCOL_VERSION)] = (
                f"version {version.strip()!r} is not served per request (⚠A6)"
            )
    field_name = NAMED_METHODS.get(request.method or "")
    if field_name is not None and not isinstance(params_of(request).get(field_name), str):
        why = f"params.{field_name} itself is missing, which is invalid params (status unspecified, ⚠A5)"
        for status in (200, 400):
            result.alternatives[(status, ErrorCode.INVALID_PARAMS)] = why
    revision = ctx.spec.get(header.strip() if header else None) or ctx.spec.get(body)
    if revision is not None and request.method and request.method not in revision.validator.request_defs:
        result.alternatives[(404, ErrorCode.METHOD_NOT_FOUND)] = (
            f"{request.method} is not a method of {revision.name} (⚠A6)"
        )


def modern_audits(ctx: Context) -> Iterator[Audit]:
    """Audits of requests the server must serve under 2026 rules (header names a modern revision)."""
    return iter(ctx.view(_ModernAudits).audits)


class _ModernAudits:
    """The audits of the request POSTs served under 2026 rules, in log order: found once for the score of header
    rules that walk them (taking in what the log gained since, when a rule asks while it grows)."""

    def __init__(self, ctx: Context) -> None:
        self.audits: list[Audit] = []
        self.seen = 0
        self.advance(ctx)

    def advance(self, ctx: Context) -> None:
        posts = list(request_posts(ctx))
        routed = http_eras(ctx).routed
        for exchange, _ in posts[self.seen :]:
            if exchange.id in routed:
                result = audit(exchange, ctx)
                if result is not None:
                    self.audits.append(result)
        self.seen = len(posts)


def answer_text(exchange: HttpExchange) -> str:
    response = exchange.response
    if response is None:
        return "no response"
    errors = errors_of(exchange)
    if errors:
        code = error_code(errors[0])
        return f"HTTP {response.status} with error {code if code is not None else '?'}"
    if any(m.kind is Kind.RESULT for m in exchange.response_messages):
        return f"HTTP {response.status} with a result"
    return f"HTTP {response.status} and no JSON-RPC error"


def expect_rejection(result: Audit, kinds: Iterable[str], *, bare_400_ok: bool = False) -> Finding | None:
    found = [result.defects[kind] for kind in kinds if kind in result.defects]
    if not found:
        return None
    what = "; ".join(found)
    exchange = result.exchange
    response = exchange.response
    if response is None:
        return unverified(f"{what}, but no answer was captured", result.request)
    errors = errors_of(exchange)
    subject = errors[0] if errors else result.request
    code = error_code(errors[0]) if errors else None
    if response.status == 400 and code == ErrorCode.HEADER_MISMATCH:
        return passed(subject)
    if code is not None and (response.status, code) in result.alternatives:
        reason = result.alternatives[(response.status, code)]
        return passed(subject, f"{what}: answered HTTP {response.status} with {code}, acceptable as {reason}")
    if bare_400_ok and response.status == 400 and not errors:
        return passed(result.request, f"{what}: rejected with a bare 400 (allowed from the HTTP stack)")
    if response.status < 300 and not errors:
        return failed(result.request, f"{what}, yet the server served it ({answer_text(exchange)})")
    return failed(subject, f"{what}: answered {answer_text(exchange)}, expected HTTP 400 with error -32020")


def expect_acceptance(result: Audit, note: str) -> Finding | None:
    if note not in result.notes or result.defects:
        return None
    what = result.notes[note]
    exchange = result.exchange
    if exchange.response is None:
        return unverified(f"{what}, but no answer was captured", result.request)
    code = first_code(exchange)
    rejected = code == ErrorCode.HEADER_MISMATCH or (exchange.response.status == 400 and code is None)
    if not rejected:
        return passed(result.request)
    if not result.params_known:
        return unverified(
            f"{what}, and the server answered {answer_text(exchange)}; the tool's definition was not seen, "
            "so the rejection may concern its Mcp-Param headers",
            result.request,
        )
    errors = errors_of(exchange)
    detail = f" ({error_text(errors[0])})" if errors and error_text(errors[0]) else ""
    return failed(errors[0] if errors else result.request, f"{what}, yet the server rejected it{detail}")


def judge_audits(ctx: Context, kinds: Iterable[str], **options: bool) -> Iterator[Finding]:
    wanted = tuple(kinds)
    for result in modern_audits(ctx):
        finding = expect_rejection(result, wanted, **options)
        if finding is not None:
            yield finding


def judge_acceptance(ctx: Context, note: str) -> Iterator[Finding]:
    for result in modern_audits(ctx):
        finding = expect_acceptance(result, note)
        if finding is not None:
            yield finding
