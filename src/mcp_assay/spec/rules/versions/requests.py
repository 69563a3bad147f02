"""Version negotiation (VER-01..05): every 2026 request names its version, and wrong ones are refused.

In 2026-07-28 there is no handshake: every request names its version in ``_meta`` and the server
accepts it, or refuses it with ``-32022`` listing what it supports; a request missing envelope
fields gets ``-32602``. These rules judge the server's answers to malformed and
unsupported-version requests whenever such requests appear in the traffic (the active suite
sends them on purpose), and how a client retries after a refusal.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.envelopes import (
    answer_to,
    client_capabilities,
    http_status,
    is_probe,
    meta_version,
    place_of,
    request_meta,
    same_client,
)
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE, ANY_VERSION
from mcp_assay.spec.rules.versions._eras import (
    MODERN,
    advertised_discover,
    code_text,
    complete_envelope,
    envelope_consistent,
    handshake_versions,
    known_versions,
    modern_requests,
    offered_version,
    refused_supported,
    supported_versions,
)
from mcp_assay.vocabulary.protocol import ErrorCode, HeaderKey, MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message


def _unsupported(version: str, request: Message, ctx: Context) -> bool:
    """Whether the server cannot support ``version`` for a per-request envelope, as far as the traffic tells."""
    if version in handshake_versions(ctx):
        return False  # may be legacy traffic; judged by the handshake rules
    supported = supported_versions(advertised_discover(ctx, request))
    if supported is not None:
        return version not in supported
    return version not in known_versions(ctx)


def _defined_somewhere(method: str | None, ctx: Context) -> bool:
    return method is not None and any(method in revision.validator.request_defs for revision in ctx.spec.all)


@message_check(
    requirements="VER-01",
    level=Level.MUST,
    subject="client requests",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    **MODERN,
    methods=ANY_ENVELOPE,
)
def requests_name_their_protocol_version(message: Message, ctx: Context) -> Finding:
    """Every 2026 request names its protocol version as a string in params._meta."""
    meta = request_meta(message)
    value = meta.get(MetaKey.PROTOCOL_VERSION) if meta is not None else None
    if meta is None or MetaKey.PROTOCOL_VERSION not in meta:
        return failed(message, f"{message.describe()} does not name {MetaKey.PROTOCOL_VERSION} in params._meta")
    if not isinstance(value, str):
        return failed(message, f"{MetaKey.PROTOCOL_VERSION} is a {type(value).__name__}, not a string")
    return passed(message)


@log_check(
    requirements="VER-02", level=Level.MUST, subject="requests missing envelope fields", **MODERN, follows=ANY_VERSION
)
def incomplete_envelopes_get_invalid_params(ctx: Context) -> Iterator[Finding]:
    """A 2026 request without params._meta, its protocolVersion or its clientCapabilities gets -32602 (HTTP 400).

    Triggered by any such request, e.g. the active suite's probes that drop one field. With the
    version header present and only the body version missing, -32020 is accepted too (A7)."""
    for request in ctx.log.messages():
        if request.kind is not Kind.REQUEST or request.sender is not Side.CLIENT:
            continue
        revision = ctx.revision(request)
        if revision is None or not revision.has("per_request_version") or complete_envelope(request):
            continue
        if request.method not in revision.validator.request_defs:
            continue  # an undefined method may be refused for that first (A6)
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        missing = (
            "params._meta"
            if request_meta(request) is None
            else MetaKey.PROTOCOL_VERSION
            if meta_version(request) is None
            else MetaKey.CLIENT_CAPABILITIES
        )
        exchange = http_exchange(request, ctx)
        accepted = {ErrorCode.INVALID_PARAMS}
        if exchange is not None and exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION) is not None:
            if meta_version(request) is None or not envelope_consistent(request, ctx):
                accepted.add(ErrorCode.HEADER_MISMATCH)
        if answer.kind is Kind.RESULT:
            yield failed(answer, f"a request missing {missing} was served with a result")
            continue
        if error_code(answer) not in accepted:
            expected = " or ".join(str(code) for code in sorted(accepted, reverse=True))
            yield failed(answer, f"a request missing {missing} got {code_text(answer)}, expected {expected}")
            continue
        status = http_status(answer, ctx)
        if status is not None and status != 400:
            yield failed(answer, f"a request missing {missing} was refused with HTTP {status}, expected 400")
            continue
        yield passed(answer)


@log_check(
    requirements="VER-03",
    level=Level.MUST,
    subject="requests naming an unsupported version",
    **MODERN,
    off_version=True,
    follows=ANY_VERSION,
)
def unsupported_versions_get_unsupported_version_errors(ctx: Context) -> Iterator[Finding]:
    """A request naming a version the server does not support gets -32022 with supported and requested (HTTP 400).

    Triggered by a well-formed request whose header and body name a version that is not in the
    server's discover supportedVersions (or, with no discover seen, no published revision), such as
    the active suite's ``1900-01-01`` probe. A discover request may instead be answered (A20)."""
    for request in modern_requests(ctx):
        version = meta_version(request) or ""
        if client_capabilities(request) is None or not envelope_consistent(request, ctx):
            continue
        if not _unsupported(version, request, ctx) or not _defined_somewhere(request.method, ctx):
            continue
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        if answer.kind is Kind.RESULT:
            if request.method == "server/discover":
                yield passed(answer)  # a DiscoverResult for any version is allowed (A20)
            else:
                yield failed(answer, f"a request naming the unsupported version {version} was served with a result")
            continue
        if error_code(answer) != ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            yield failed(
                answer, f"a request naming the unsupported version {version} got {code_text(answer)}, expected -32022"
            )
            continue
        error = answer.error if isinstance(answer.error, dict) else {}
        data = error.get("data")
        if not isinstance(data, dict):
            yield failed(answer, "-32022 without a data object carrying supported and requested")
            continue
        supported = data.get("supported")
        if not isinstance(supported, list) or not all(isinstance(item, str) for item in supported):
            yield failed(answer, f"-32022 data.supported is {supported!r}, not an array of strings"[:300])
            continue
        if not isinstance(data.get("requested"), str):
            yield failed(answer, "-32022 data.requested is missing or not a string")
            continue
        status = http_status(answer, ctx)
        if status is not None and status != 400:
            yield failed(answer, f"-32022 was sent with HTTP {status}, expected 400")
            continue
        yield passed(answer)


@log_check(
    requirements="VER-04",
    level=Level.SHOULD,
    subject="unsupported-version errors",
    **MODERN,
    off_version=True,
    follows=ANY_VERSION,
)
def unsupported_version_errors_echo_the_request_and_the_discover_list(ctx: Context) -> Iterator[Finding]:
    """A -32022 repeats the requested version and lists a non-empty supported set equal to discover's."""
    for answer in ctx.log.messages():
        if (
            answer.kind is not Kind.ERROR
            or answer.sender is not Side.SERVER
            or error_code(answer) != ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
        ):
            continue
        error = answer.error if isinstance(answer.error, dict) else {}
        data = error.get("data")
        if not isinstance(data, dict):
            continue  # a -32022 without data is VER-03's finding
        request = ctx.log.request_of(answer)
        named = meta_version(request) if request is not None else None
        if named is not None and data.get("requested") != named:
            yield failed(answer, f"data.requested is {data.get('requested')!r}, but the request named {named!r}")
            continue
        supported = data.get("supported")
        if not isinstance(supported, list) or not supported:
            yield failed(answer, "data.supported is empty, so the client has nothing to retry with")
            continue
        advertised = supported_versions(advertised_discover(ctx, request or answer))
        if advertised is not None and set(advertised) != {item for item in supported if isinstance(item, str)}:
            yield failed(answer, f"data.supported {supported} differs from discover's supportedVersions {advertised}")
            continue
        yield passed(answer)


def _connection(message: Message, ctx: Context) -> str:
    exchange = ctx.log.get(message.exchange)
    return getattr(exchange, "connection", "") or ""


@log_check(
    requirements="VER-05",
    level=Level.SHOULD,
    subject="clients refused with -32022",
    clauses=("resent-version",),
    **MODERN,
    follows=ANY_VERSION,
)
def clients_retry_refused_versions_from_the_supported_list(ctx: Context) -> Iterator[Finding]:
    """After -32022 the client retries with a version from data.supported (new id), or stops; never the same version.

    The finding names the refused request (refused by the server, or by mcp-assay's ``--inject
    version``) and says what the client did next. A retry in a handshake-era version from the list
    is an ``initialize`` offering it, under a new id like any retry. The refused version must not come
    back as the client's next request to that place (an HTTP endpoint on whatever connection the
    client's stack picks after a 4xx, or the stdio connection), nor on the refused request's own
    connection at all; requests naming another ``clientInfo`` are another client's, and a client
    started afresh later on a connection of its own knows nothing of the refusal (VER-14's concern).
    A client that sent nothing more to that server is not verified: it may have stopped and reported
    the error, which is allowed, or the session ended first."""
    for answer in ctx.log.messages():
        if answer.kind is not Kind.ERROR or error_code(answer) != ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            continue
        request = ctx.log.request_of(answer)
        if request is None or is_probe(request, ctx):
            continue
        rejected = meta_version(request)
        if rejected is None:
            continue
        supported = refused_supported(answer) or []
        place = place_of(request, ctx)
        later = [
            message
            for message in ctx.log.messages()
            if message.kind is Kind.REQUEST
            and message.sender is Side.CLIENT
            and message.time > answer.time
            and place_of(message, ctx) == place
            and not is_probe(message, ctx)
            and same_client(message, request)
        ]
        if not later:
            yield unverified(f"the client sent nothing more after {rejected} was refused with -32022", request)
            continue
        connection = _connection(request, ctx)
        again = [m for m in later if meta_version(m) == rejected and _connection(m, ctx) == connection]
        if again or meta_version(later[0]) == rejected:
            resent = again[0] if again else later[0]
            where = "" if _connection(resent, ctx) == connection else " (on another connection)"
            yield failed(
                request,
                f"the client sent {rejected} again{where} after the server refused it with -32022: {resent.describe()}",
                clause="resent-version",
            )
            continue
        retry = next((m for m in later if m.method in (request.method, "initialize")), None)
        if retry is None:
            yield passed(request, f"after the -32022 the client went on without {request.method}")
        elif retry.id_key == request.id_key:
            yield failed(request, f"the retry after -32022 reused the refused request's id ({retry.describe()})")
        elif retry.method == "initialize" and request.method != "initialize":
            offered = offered_version(retry)
            if supported and offered not in supported:
                yield failed(request, f"the client fell back to initialize offering {offered}, not one of {supported}")
            else:
                yield passed(request, f"the client retried in {offered} from data.supported, with initialize")
        elif supported and meta_version(retry) not in supported:
            yield failed(request, f"the retry named {meta_version(retry)}, which is not in data.supported {supported}")
        else:
            yield passed(request, f"the client retried in {meta_version(retry)} under a new id")
