"""Streamable HTTP, server side: the endpoint's methods, statuses, content types, sessions and Origin.

What any answer from the MCP endpoint must look like, whatever the request's headers: a POST is
accepted, notifications get 202 or an error status, request answers are JSON or an event stream,
2026 rejections carry a JSON-RPC error with the request id, ``GET``/``DELETE`` and session ids
have no place in 2026, and a foreign ``Origin`` is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

from mcp_assay.cases import envelope
from mcp_assay.spec.checks import Finding, Passes, failed, log_check, passed, passed_each, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.http._exchanges import (
    MODERN_HTTP,
    body_modern,
    error_text,
    errors_of,
    first_code,
    http_eras,
    rendered,
    request_posts,
)
from mcp_assay.spec.rules.http._header_audit import answer_text, audit
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.headers import request_headers
from mcp_assay.spec.rules.shared.reads import ANY_EXCHANGE_HTTP
from mcp_assay.vocabulary.protocol import MCP_DEFINED_CODES, ErrorCode, HeaderKey, MediaType
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message
from mcp_assay.wire.model import HttpExchange, is_well_known, probe_case
from mcp_assay.wire.traffic import endpoint_of

MODERN_CODES = MCP_DEFINED_CODES | {ErrorCode.METHOD_NOT_FOUND, ErrorCode.INVALID_PARAMS}
"""Error codes a 2026 server uses for its mandated 400/404 rejections."""
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


@log_check(requirements="HTTP-01", level=Level.MUST, subject="request POSTs", follows=ANY_EXCHANGE_HTTP)
def the_mcp_endpoint_accepts_post(ctx: Context) -> Iterator[Finding | Passes]:
    """The MCP endpoint accepts POST: a POSTed JSON-RPC message is never answered 405."""
    passes: list[Message] = []
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if exchange.request.method != "POST" or request is None or exchange.response is None:
            continue
        if request.kind not in (Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR):
            continue
        if exchange.response.status == 405:
            yield failed(request, f"POST {exchange.request.path} was answered 405 Method Not Allowed")
        else:
            passes.append(request)
    yield passed_each(passes)


def _notification_posts(ctx: Context) -> Iterator[tuple[HttpExchange, Message]]:
    for exchange in ctx.log.http_exchanges():
        message = exchange.request_message
        if exchange.request.method != "POST" or message is None or exchange.response is None:
            continue
        if message.kind is Kind.NOTIFICATION:
            yield exchange, message
        elif message.kind.is_response and exchange.id in http_eras(ctx).legacy:
            yield exchange, message  # 2025 clients POST their responses to server requests


@log_check(
    requirements="HTTP-05", level=Level.MUST, subject="accepted notification POSTs",
    follows=ANY_EXCHANGE_HTTP,
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
    requirements="HTTP-06", level=Level.MUST, subject="refused notification POSTs",
    follows=ANY_EXCHANGE_HTTP,
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


ACCEPTED_CONTENT = (MediaType.JSON, MediaType.EVENT_STREAM)
AUTH_LAYER_STATUSES = frozenset({401, 403, 407, 429})
"""Rejections usually produced before any JSON-RPC handling (auth, Origin, rate limits)."""


@log_check(
    requirements="HTTP-07",
    level=Level.MUST,
    subject="answers to requests",
    clauses=("error-body",),
    follows=ANY_EXCHANGE_HTTP,
)
def request_answers_are_json_or_event_streams(ctx: Context) -> Iterator[Finding | Passes]:
    """Answers to request POSTs are application/json or text/event-stream, error answers with a body included.

    The suite's foreign-``Host`` probe is left out: a request naming another host is refused before it
    reaches the MCP endpoint (``421``, or ``400`` from a trusted-host filter), as the rebinding defence should.
    That an error answer's body is JSON or an event stream too is inferred (clause ``error-body``): such a
    failure counts one level lower."""
    passes: list[Message] = []
    for exchange, request in request_posts(ctx):
        response = exchange.response
        if response is None or probe_case(exchange) is envelope.FOREIGN_HOST:
            continue
        has_body = bool((response.body or b"").strip()) or response.is_event_stream
        if 300 <= response.status < 400 or (response.status >= 400 and not has_body):
            continue
        if response.status in AUTH_LAYER_STATUSES:
            continue
        if response.content_type in ACCEPTED_CONTENT:
            passes.append(request)
            continue
        shown = response.headers.get(HeaderKey.CONTENT_TYPE) or "no Content-Type"
        clause = "error-body" if response.status >= 400 else None
        yield failed(request, f"{request.describe()} was answered HTTP {response.status} with {shown}", clause=clause)
    yield passed_each(passes)


@log_check(
    requirements="HTTP-25",
    level=Level.MUST,
    subject="method-not-found answers",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def unknown_methods_get_404_with_a_jsonrpc_error(ctx: Context) -> Iterator[Finding]:
    """An unimplemented method is answered HTTP 404 with a JSON-RPC -32601 body (not a bare 404, not 200).

    Triggered by a 2026 request POST answered with ``-32601``, or answered 404 at all."""
    routed = http_eras(ctx).routed
    for exchange, request in request_posts(ctx):
        response = exchange.response
        if response is None or exchange.id not in routed:
            continue
        errors = errors_of(exchange)
        codes = [error_code(m) for m in errors]
        if ErrorCode.METHOD_NOT_FOUND in codes:
            answer = errors[codes.index(ErrorCode.METHOD_NOT_FOUND)]
            if response.status == 404 and not response.is_event_stream:
                yield passed(answer)
            else:
                how = "an SSE stream" if response.is_event_stream else f"HTTP {response.status}"
                yield failed(answer, f"{request.method} got -32601 over {how}; method-not-found is a 404")
        elif response.status == 404:
            detail = f"error {codes[0]}" if codes and codes[0] is not None else "no JSON-RPC error body"
            yield failed(request, f"{request.method} got HTTP 404 with {detail}; a 404 must carry -32601")


def _mandated_rejection(exchange: HttpExchange) -> bool:
    code = first_code(exchange)
    return code in MODERN_CODES


@log_check(
    requirements="HTTP-37",
    level=Level.MUST,
    subject="400/404 rejections",
    **MODERN_HTTP,
    off_version=True,
    follows=ANY_EXCHANGE_HTTP,
)
def rejections_carry_a_jsonrpc_error_with_the_request_id(ctx: Context) -> Iterator[Finding]:
    """A 2026 400 or 404 rejection carries an application/json JSON-RPC error whose id is the request id.

    Triggered by any 2026 request POST (readable id) answered 400 or 404; a bare 400 for a header
    with invalid characters is left to HTTP-17, which allows it."""
    routed = http_eras(ctx).routed
    for exchange, request in request_posts(ctx):
        response = exchange.response
        if response is None or response.status not in (400, 404) or request.id_key is None:
            continue
        if exchange.id not in routed and not (body_modern(exchange, ctx) and _mandated_rejection(exchange)):
            continue
        result = audit(exchange, ctx)
        errors = errors_of(exchange)
        if not errors:
            if result is not None and "invalid-characters" in result.defects:
                continue
            yield failed(request, f"HTTP {response.status} to {request.describe()} carries no JSON-RPC error body")
        elif response.content_type != MediaType.JSON:
            shown = response.headers.get(HeaderKey.CONTENT_TYPE) or "no Content-Type"
            yield failed(errors[0], f"the HTTP {response.status} error body is sent as {shown}, not application/json")
        elif errors[0].id_key != request.id_key:
            shown = "no id" if errors[0].id is MISSING else f"id {rendered(errors[0].id)}"
            yield failed(
                errors[0],
                f"the HTTP {response.status} error carries {shown}; the request id was {rendered(request.id)}",
            )
        else:
            yield passed(errors[0])


@log_check(
    requirements="HTTP-32",
    level=Level.SHOULD,
    subject="GET and DELETE requests",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def get_and_delete_get_405(ctx: Context) -> Iterator[Finding]:
    """GET or DELETE on the MCP endpoint with a 2026 version header is answered 405 Method Not Allowed.

    Triggered by a ``GET`` or ``DELETE`` whose ``MCP-Protocol-Version`` names a 2026-style
    revision (what a modern-only server sees from an older client's stream or session end)."""
    routed = http_eras(ctx).routed
    for exchange in ctx.log.http_exchanges():
        if exchange.request.method not in ("GET", "DELETE") or exchange.response is None:
            continue
        if is_well_known(exchange.request):
            continue  # a metadata document, fetched by a client that sends its version header everywhere
        if exchange.id not in routed:
            continue
        status = exchange.response.status
        if status == 405:
            yield passed(exchange)
        else:
            what = "opened an event stream" if exchange.response.is_event_stream else f"answered HTTP {status}"
            yield failed(exchange, f"{exchange.request.method} with a 2026 version header {what}, expected 405")


@log_check(
    requirements="HTTP-33", level=Level.SHOULD, subject="2026 request POSTs", **MODERN_HTTP, follows=ANY_EXCHANGE_HTTP
)
def session_ids_are_ignored_and_never_issued(ctx: Context) -> Iterator[Finding]:
    """A 2026 server ignores an incoming Mcp-Session-Id and never mints or echoes one.

    Triggered by every 2026 POST (no ``Mcp-Session-Id`` on the answer) and especially by one that
    carries ``Mcp-Session-Id`` (it must be served as if the header were absent)."""
    routed = http_eras(ctx).routed
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        response = exchange.response
        if exchange.request.method != "POST" or request is None or response is None:
            continue
        if exchange.id not in routed:
            continue
        sent = exchange.request.headers.get(HeaderKey.SESSION_ID)
        issued = response.headers.get(HeaderKey.SESSION_ID)
        if issued is not None:
            how = "echoed the request's" if issued == sent else "issued an"
            yield failed(request, f"the answer to {request.describe()} {how} Mcp-Session-Id {issued!r}")
            continue
        if sent is None:
            yield passed(request)
            continue
        errors = errors_of(exchange)
        mentions_session = any("session" in error_text(m).lower() for m in errors)
        if mentions_session or (
            response.status == 404 and ErrorCode.METHOD_NOT_FOUND not in [error_code(m) for m in errors]
        ):
            yield failed(
                request, f"{request.describe()} with Mcp-Session-Id {sent!r} was refused ({answer_text(exchange)})"
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
    subject="requests with a foreign Origin",
    follows=ANY_EXCHANGE_HTTP,
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
    for exchange, origin in request_headers(ctx, HeaderKey.ORIGIN):
        if origin is None and exchange.response is not None:
            if exchange.response.status < 400:
                served_plain.add(endpoint_of(exchange))
            if probe_case(exchange) is envelope.ORIGIN_CONTROL:
                controls[endpoint_of(exchange)] = exchange.response.status
    for exchange, origin in request_headers(ctx, HeaderKey.ORIGIN):
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
        probe = exchange.probe
        origin_host = _host_of(origin) if origin != "null" else "null"
        rebinding = _loopback(_host_of(exchange.request.url)) and not _loopback(origin_host)
        if probe is not None and probe.case is envelope.FOREIGN_ORIGIN:
            yield failed(
                subject, f"a request with the disallowed Origin {origin!r} got HTTP {response.status}, not 403"
            )
        elif rebinding and endpoint_of(exchange) in served_plain:
            yield failed(
                subject,
                f"a loopback server answered a request from Origin {origin!r} with HTTP {response.status}, not 403",
            )
