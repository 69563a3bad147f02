"""Streamable HTTP, client side: what a client's POSTs carry.

Every client message is a POST that accepts both JSON and event streams; in 2026 it is one
request or notification whose ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and
``Mcp-Param-*`` headers mirror the body, with unsafe values Base64-encoded. Messages the active
suite marks ``invalid`` are never held against the client.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, Passes, failed, log_check, passed, passed_each, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.http._exchanges import (
    MODERN_HTTP,
    NAMED_METHODS,
    accepted_types,
    error_text,
    errors_of,
    first_code,
    header_version,
    http_eras,
    is_modern,
    judged_as_client,
    later_requests,
    modern_exchange,
    rendered,
    request_posts,
    tool_of,
)
from mcp_assay.spec.rules.http._header_audit import audit
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.envelopes import meta_version, same_client
from mcp_assay.spec.rules.shared.header_mirroring import (
    decode_sentinel,
    encode_sentinel,
    header_marks,
    header_text_safe,
    is_sentinel,
    looks_like_sentinel_any_case,
    mirror,
    needs_encoding,
    value_at,
)
from mcp_assay.spec.rules.shared.reads import ANY_EXCHANGE_HTTP
from mcp_assay.vocabulary.protocol import ErrorCode, Header, HeaderKey, MediaType
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.faults import FaultKind, fault_kind_of
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import HttpExchange, sent_by_assay
from mcp_assay.wire.traffic import endpoint_of


@log_check(
    requirements="HTTP-08", level=Level.MUST, subject="2026 request POSTs", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def client_version_header_matches_the_body(ctx: Context) -> Iterator[Finding]:
    """Every 2026 request POST carries MCP-Protocol-Version equal to the body's _meta version.

    Notification POSTs are not judged (⚠A8: header rules for them are undefined)."""
    modern = http_eras(ctx).modern
    for exchange, request in request_posts(ctx, client=True):
        if exchange.id not in modern:
            continue
        header = header_version(exchange)
        body = meta_version(request)
        if header is None:
            yield failed(request, f"{request.describe()} has no MCP-Protocol-Version header")
        elif body is None:
            continue  # a missing _meta version is META-01's finding
        elif header != body:
            yield failed(request, f"MCP-Protocol-Version {header!r} differs from the body version {body!r}")
        else:
            yield passed(request)


@log_check(
    requirements="HTTP-10", level=Level.MUST, subject="2026 request POSTs", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def client_method_header_matches_the_body(ctx: Context) -> Iterator[Finding]:
    """Every 2026 request POST carries Mcp-Method equal, case included, to the body method.

    Notification POSTs are never failed for lacking it (⚠A8)."""
    modern = http_eras(ctx).modern
    for exchange, request in request_posts(ctx, client=True):
        if exchange.id not in modern:
            continue
        header = exchange.request.headers.get(HeaderKey.METHOD)
        if header is None:
            yield failed(request, f"{request.describe()} has no Mcp-Method header")
        elif header != request.method:
            yield failed(request, f"Mcp-Method {header!r} differs from the body method {request.method!r}")
        else:
            yield passed(request)


@log_check(
    requirements="HTTP-11", level=Level.MUST, subject="named request POSTs", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def client_name_header_matches_the_body(ctx: Context) -> Iterator[Finding]:
    """tools/call and prompts/get carry Mcp-Name = params.name; resources/read carries Mcp-Name = params.uri.

    The value may be plain or Base64-sentinel encoded."""
    modern = http_eras(ctx).modern
    for exchange, request in request_posts(ctx, client=True):
        field_name = NAMED_METHODS.get(request.method or "")
        if field_name is None or exchange.id not in modern:
            continue
        body = params_of(request).get(field_name)
        header = exchange.request.headers.get(HeaderKey.NAME)
        if header is None:
            yield failed(request, f"{request.describe()} has no Mcp-Name header")
            continue
        decoded = decode_sentinel(header) if is_sentinel(header) else header
        if decoded == body:
            yield passed(request)
        else:
            shown = f"{header!r}" if decoded == header else f"{header!r} (decoding to {decoded!r})"
            yield failed(request, f"Mcp-Name {shown} differs from params.{field_name} {rendered(body)}")


def _mirrored_values(exchange: HttpExchange, request: Message, ctx: Context) -> Iterator[tuple[str, str, str]]:
    """(header label, header value, body text) for Mcp-Name and every marked argument present in the body."""
    field_name = NAMED_METHODS.get(request.method or "")
    params = params_of(request)
    if field_name is not None and isinstance(params.get(field_name), str):
        header = exchange.request.headers.get(HeaderKey.NAME)
        if header is not None:
            yield Header.NAME, header, params[field_name]
    if request.method != "tools/call":
        return
    tool = tool_of(request, ctx)
    if tool is None:
        return
    marks, problems = header_marks(tool)
    if problems:
        return
    for mark in marks:
        value = value_at(params.get("arguments"), mark.path)
        expected = mirror(value) if value is not MISSING else None
        header = exchange.request.headers.get(HeaderKey.PARAM_PREFIX + mark.name)
        if expected is not None and header is not None:
            yield f"{Header.PARAM_PREFIX}{mark.name}", header, expected


@log_check(
    requirements="HTTP-15", level=Level.MUST, subject="mirrored header values", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def client_encodes_unsafe_header_values(ctx: Context) -> Iterator[Finding]:
    """Mcp-Name and Mcp-Param values unsafe as plain header text travel as =?base64?…?= with lowercase markers."""
    modern = http_eras(ctx).modern
    for exchange, request in request_posts(ctx, client=True):
        if exchange.id not in modern:
            continue
        for label, header, expected in _mirrored_values(exchange, request, ctx):
            if is_sentinel(header):
                if decode_sentinel(header) is None:
                    yield failed(request, f"{label} {header!r} is not valid Base64 of UTF-8 text")
                else:
                    yield passed(request)
            elif looks_like_sentinel_any_case(header) and header != expected:
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
    requirements="HTTP-18", level=Level.MUST, subject="calls of tools with x-mcp-header marks",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)  # fmt: skip
def client_mirrors_marked_arguments(ctx: Context) -> Iterator[Finding]:
    """A tools/call sends Mcp-Param-<Name> for each marked argument present and non-null, and omits it otherwise.

    Strings go as-is, integers in decimal, booleans as ``true``/``false`` (or Base64 when needed);
    the tool's ``inputSchema`` comes from ``tools/list`` in the log."""
    modern = http_eras(ctx).modern
    for exchange, request in request_posts(ctx, client=True):
        if request.method != "tools/call" or exchange.id not in modern:
            continue
        params = params_of(request)
        name = params.get("name")
        tools = ctx.log.tools(request)
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
            label = f"{Header.PARAM_PREFIX}{mark.name}"
            value = value_at(params.get("arguments"), mark.path)
            header = exchange.request.headers.get(HeaderKey.PARAM_PREFIX + mark.name)
            where = "arguments." + ".".join(mark.path)
            if value is MISSING or value is None:
                if header is not None:
                    wrong.append(f"{label} was sent although {where} is {'null' if value is None else 'absent'}")
                continue
            expected = mirror(value)
            if expected is None:
                continue  # not a primitive: the arguments break the schema, which TOOL rules judge
            if header is None:
                wrong.append(f"{label} is missing for {where} = {rendered(value)}")
                continue
            sent = decode_sentinel(header) if is_sentinel(header) else header
            if sent != expected:
                wrong.append(f"{label} {header!r} does not mirror {where} = {rendered(value)} (expected {expected!r})")
        if wrong:
            yield failed(request, "; ".join(wrong))
        else:
            yield passed(request)


@log_check(requirements="HTTP-23", level=Level.MUST, subject="tool calls", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP)
def client_never_calls_tools_with_invalid_header_marks(ctx: Context) -> Iterator[Finding]:
    """An HTTP client drops tools whose x-mcp-header marks are invalid (TOOL-16) and never calls them."""
    modern = http_eras(ctx).modern
    for exchange, request in request_posts(ctx, client=True):
        if request.method != "tools/call" or exchange.id not in modern:
            continue
        name = params_of(request).get("name")
        tools = ctx.log.tools(request)
        if tools is None or not isinstance(name, str) or name not in tools:
            yield unverified(f"the definition of tool {name!r} was not seen", request)
            continue
        _, problems = header_marks(tools[name])
        if problems:
            yield failed(request, f"the client called {name!r}, whose x-mcp-header marks are invalid: {problems[0]}")
        else:
            yield passed(request)


@log_check(
    requirements="HTTP-22",
    level=Level.SHOULD,
    subject="parameter-header rejections",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def client_refreshes_tools_after_a_parameter_header_rejection(ctx: Context) -> Iterator[Finding]:
    """After a -32020 about Mcp-Param headers the client re-reads tools/list and retries under a new id.

    The finding names the refused call (refused by the server, or by mcp-assay's ``--inject headers``)."""
    modern = http_eras(ctx).modern
    for exchange, request in request_posts(ctx):
        if sent_by_assay(exchange) or request.method != "tools/call" or exchange.id not in modern:
            continue
        if first_code(exchange) != ErrorCode.HEADER_MISMATCH:
            continue
        result = audit(exchange, ctx)
        about_params = "param" in " ".join(error_text(m) for m in errors_of(exchange)).lower() or (
            result is not None and any(kind.startswith("param") for kind in result.defects)
        )
        if not about_params:
            continue
        later = later_requests(ctx, request.time)
        name = params_of(request).get("name")
        retry = next((r for _, r in later if r.method == "tools/call" and params_of(r).get("name") == name), None)
        if retry is None:
            yield unverified(f"no retry of tool {name!r} followed the -32020 rejection", request)
            continue
        refreshed = any(r.method == "tools/list" and r.time < retry.time for _, r in later)
        if not refreshed:
            yield failed(request, f"the client retried {name!r} without re-reading tools/list after the -32020")
        elif retry.id_key == request.id_key:
            yield failed(request, f"the client retried {name!r} under the rejected request's id")
        else:
            yield passed(request, f"the client re-read tools/list and retried {name!r} as {retry.describe()}")


def _post_messages(ctx: Context) -> Iterator[tuple[HttpExchange, Message]]:
    for exchange in ctx.log.http_exchanges():
        message = exchange.request_message
        if exchange.request.method == "POST" and message is not None and judged_as_client(exchange):
            yield exchange, message


@log_check(requirements="HTTP-02", level=Level.MUST, subject="client messages", follows=ANY_EXCHANGE_HTTP)
def client_messages_are_posted(ctx: Context) -> Iterator[Finding | Passes]:
    """Every JSON-RPC message from the client travels in its own POST to the MCP endpoint."""
    passes: list[Message] = []
    for exchange in ctx.log.http_exchanges():
        message = exchange.request_message
        if message is None or not judged_as_client(exchange):
            continue
        if exchange.request.method == "POST":
            passes.append(message)
        else:
            yield failed(message, f"the client sent {message.describe()} in a {exchange.request.method} request")
    yield passed_each(passes)


@log_check(requirements="HTTP-03", level=Level.MUST, subject="client POSTs", follows=ANY_EXCHANGE_HTTP)
def client_posts_accept_json_and_event_streams(ctx: Context) -> Iterator[Finding | Passes]:
    """Every POST's Accept header lists application/json and text/event-stream (wildcards are HTTP-03's SHOULD)."""
    passes: list[Message] = []
    for exchange, message in _post_messages(ctx):
        header = exchange.request.headers.get(HeaderKey.ACCEPT)
        kinds = accepted_types(header)
        covered = {
            MediaType.JSON: bool(kinds & {MediaType.JSON, "application/*", "*/*"}),
            MediaType.EVENT_STREAM: bool(kinds & {MediaType.EVENT_STREAM, "text/*", "*/*"}),
        }
        missing = [name for name, ok in covered.items() if not ok]
        if header is None:
            yield failed(message, "the POST has no Accept header")
        elif missing:
            yield failed(message, f"Accept {header!r} does not list {' or '.join(missing)}")
        else:
            passes.append(message)
    yield passed_each(passes)


@log_check(requirements="HTTP-03", level=Level.SHOULD, subject="client POSTs", follows=ANY_EXCHANGE_HTTP)
def client_posts_name_both_media_types_literally(ctx: Context) -> Iterator[Finding | Passes]:
    """The POST Accept header names both media types literally rather than through wildcards (⚠A28)."""
    passes: list[Message] = []
    for exchange, message in _post_messages(ctx):
        header = exchange.request.headers.get(HeaderKey.ACCEPT)
        kinds = accepted_types(header)
        literal = {MediaType.JSON, MediaType.EVENT_STREAM} <= kinds
        covered_by_wildcard = not literal and bool(kinds & {"*/*", "application/*", "text/*"})
        if literal:
            passes.append(message)
        elif covered_by_wildcard:
            yield failed(message, f"Accept {header!r} relies on wildcards instead of naming both media types")
    yield passed_each(passes)


@log_check(
    requirements="HTTP-04", level=Level.MUST_NOT, subject="client POST bodies", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def client_posts_one_request_or_notification(ctx: Context) -> Iterator[Finding]:
    """A 2026 POST body is one request or notification: never a response, never a JSON array."""
    modern = http_eras(ctx).modern
    for exchange, message in _post_messages(ctx):
        if not (exchange.id in modern or is_modern(ctx.exchange_revision(exchange))):
            continue
        if message.kind is Kind.BATCH:
            yield failed(message, f"the client POSTed a JSON array of {len(message.payload)} messages")
        elif message.kind.is_response:
            yield failed(message, f"the client POSTed a response ({message.describe()}); 2026 clients send none")
        elif message.kind in (Kind.REQUEST, Kind.NOTIFICATION):
            yield passed(message)


@log_check(
    requirements="HTTP-14", level=Level.MUST, side=Side.CLIENT, subject="answers with respelled header names",
    **MODERN_HTTP, because="the client's half: it reads the answer's header names in any case",
    follows=ANY_EXCHANGE_HTTP,
)  # fmt: skip
def client_reads_header_names_in_any_case(ctx: Context) -> Iterator[Finding]:
    """A client reads an answer whose header names come in another case (``cONTENT-tYPE``) as usual.

    Triggered by ``--inject headers``, which respells the header names of one 2026 answer. The
    client's next request to the endpoint (on any connection; one naming another ``clientInfo`` is
    another client's) shows whether it read the answer: the same work asked again means it took the
    answer for unreadable, and an ``initialize`` means it took a modern answer for no answer at all
    (the fallback a dual-era client makes when it cannot read one). Nothing more is not verified."""
    for exchange, request in request_posts(ctx):
        if fault_kind_of(exchange.probe) is not FaultKind.RESPELLED:
            continue
        if not modern_exchange(exchange, ctx):
            continue
        after = exchange.ending.time if exchange.ending is not None else request.time
        later = [
            r
            for e, r in later_requests(ctx, after)
            if endpoint_of(e) == endpoint_of(exchange) and same_client(r, request)
        ]
        if not later:
            yield unverified(f"the client sent nothing more after the answer to {request.describe()}", request)
        elif later[0].method == request.method and _work(later[0]) == _work(request):
            yield failed(
                request, f"the client asked again ({later[0].describe()}) after an answer whose header names were "
                "respelled: it did not read them case-insensitively",
            )  # fmt: skip
        elif later[0].method == "initialize" and request.method != "initialize":
            yield failed(
                request, f"the client fell back to initialize ({later[0].describe()}) after a modern answer whose "
                "header names were respelled: it did not read them case-insensitively",
            )  # fmt: skip
        else:
            yield passed(request, f"the client read the answer and went on ({later[0].describe()})")


def _work(request: Message) -> object:
    params = params_of(request)
    return {key: value for key, value in params.items() if key != "_meta"}
