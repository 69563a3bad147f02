"""Version negotiation and discovery (VER-): which revision each request speaks, and who decides.

In 2026-07-28 there is no handshake: every request names its version in ``_meta`` and the server
accepts it, or refuses it with ``-32022`` listing what it supports; ``server/discover`` says the
same thing up front. These rules judge the server's answers to well-formed, malformed and
unsupported-version requests whenever such requests appear in the traffic (the active suite
sends them on purpose), the agreement between what a server advertises and what it accepts, and
the client's side: naming a version, choosing from the advertised ones, and keeping to modern
mode once a modern answer arrived.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from mcp_assay.checks import Context, Finding, failed, log_check, message_check, passed
from mcp_assay.jsonrpc import Kind, Message
from mcp_assay.spec.rules._common import error_code, http_exchange
from mcp_assay.spec.rules._envelope import (
    CLIENT_CAPABILITIES_KEY,
    SERVER_INFO_KEY,
    answer_to,
    client_capabilities,
    http_status,
    is_probe,
    memo,
    meta_key_problem,
    meta_version,
    place_of,
    request_meta,
)
from mcp_assay.traffic import PROTOCOL_VERSION_KEY, endpoint_of
from mcp_assay.verdicts import Level, Side
from mcp_assay.wire import HttpExchange

__all__ = [
    "HANDSHAKE_ERA_VERSIONS",
    "advertised_discover",
    "handshake_versions",
    "known_versions",
    "modern_versions",
]

HANDSHAKE_ERA_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Revisions published with the initialize handshake (their older schemas need not be on disk)."""

MODERN_ERRORS = frozenset({-32020, -32021, -32022})
"""Codes only a 2026-era server sends: a dual-era client that sees one knows it talks to a modern server."""

CAPABILITY_OF_PREFIX = (
    ("tools/", "tools"),
    ("prompts/", "prompts"),
    ("resources/", "resources"),
    ("completion/complete", "completions"),
)

DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}")
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


# -- what the revisions and the server say ------------------------------------------------------
def handshake_versions(ctx: Context) -> frozenset[str]:
    return frozenset(HANDSHAKE_ERA_VERSIONS) | {r.name for r in ctx.spec.all if r.era == "handshake"}


def modern_versions(ctx: Context) -> frozenset[str]:
    return frozenset(r.name for r in ctx.spec.all if r.era == "modern")


def known_versions(ctx: Context) -> frozenset[str]:
    return handshake_versions(ctx) | modern_versions(ctx)


def _discover_results(ctx: Context) -> list[Message]:
    return memo(ctx, "discover-results", _find_discover_results)


def _find_discover_results(ctx: Context) -> list[Message]:
    return [
        message
        for message in ctx.log.messages()
        if message.kind is Kind.RESULT
        and message.sender is Side.SERVER
        and isinstance(message.result, dict)
        and (request := ctx.log.request_of(message)) is not None
        and request.method == "server/discover"
    ]


def advertised_discover(ctx: Context, near: Message) -> Message | None:
    """The discover result that applies to ``near``: the latest one at its place before it, else the first after."""
    place = place_of(near, ctx)
    here = [result for result in _discover_results(ctx) if place_of(result, ctx) == place]
    if not here:
        return None
    before = [result for result in here if result.time <= near.time]
    return before[-1] if before else here[0]


def _supported(result: Message | None) -> list[str] | None:
    if result is None or not isinstance(result.result, dict):
        return None
    versions = result.result.get("supportedVersions")
    if isinstance(versions, list) and all(isinstance(item, str) for item in versions):
        return list(versions)
    return None


def _server_capabilities(result: Message | None) -> dict[str, Any] | None:
    if result is None or not isinstance(result.result, dict):
        return None
    caps = result.result.get("capabilities")
    return caps if isinstance(caps, dict) else None


def _decode_sentinel(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return value
    return value


def envelope_consistent(request: Message, ctx: Context) -> bool:
    """The request's routing headers agree with its body (always true off HTTP)."""
    exchange = http_exchange(request, ctx)
    if exchange is None:
        return True
    headers = exchange.request.headers
    if headers.get("mcp-protocol-version") != meta_version(request):
        return False
    if headers.get("mcp-method") != request.method:
        return False
    params = request.params if isinstance(request.params, dict) else {}
    name = params.get("uri") if request.method == "resources/read" else params.get("name")
    if request.method in ("tools/call", "prompts/get", "resources/read"):
        header = headers.get("mcp-name")
        if header is None or _decode_sentinel(header) != name:
            return False
    return True


def _complete_envelope(request: Message) -> bool:
    return meta_version(request) is not None and client_capabilities(request) is not None


def _modern_requests(ctx: Context) -> Iterator[Message]:
    """Client requests carrying a 2026-style envelope, whatever version they name (probes included)."""
    for message in ctx.log.messages():
        if message.kind is Kind.REQUEST and message.sender is Side.CLIENT and meta_version(message) is not None:
            yield message


def _unsupported(version: str, request: Message, ctx: Context) -> bool:
    """Whether the server cannot support ``version`` for a per-request envelope, as far as the traffic tells."""
    if version in handshake_versions(ctx):
        return False  # may be legacy traffic; judged by the handshake rules
    supported = _supported(advertised_discover(ctx, request))
    if supported is not None:
        return version not in supported
    return version not in known_versions(ctx)


def _defined_somewhere(method: str | None, ctx: Context) -> bool:
    return method is not None and any(method in revision.validator.request_defs for revision in ctx.spec.all)


def _code_text(answer: Message) -> str:
    code = error_code(answer)
    return "a result" if answer.kind is Kind.RESULT else f"code {code if code is not None else '?'}"


_MODERN = {"features": {"per_request_version"}}


# -- VER-01 .. VER-04: naming a version, and refusing the wrong ones -----------------------------
@message_check(
    requirements="VER-01",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="client requests",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
    **_MODERN,
)
def requests_name_their_protocol_version(message: Message, ctx: Context) -> Finding:
    """Every 2026 request names its protocol version as a string in params._meta."""
    meta = request_meta(message)
    value = meta.get(PROTOCOL_VERSION_KEY) if meta is not None else None
    if meta is None or PROTOCOL_VERSION_KEY not in meta:
        return failed(message, f"{message.describe()} does not name {PROTOCOL_VERSION_KEY} in params._meta")
    if not isinstance(value, str):
        return failed(message, f"{PROTOCOL_VERSION_KEY} is a {type(value).__name__}, not a string")
    return passed(message)


@log_check(
    requirements="VER-02", level=Level.MUST, side=Side.SERVER, subject="requests missing envelope fields", **_MODERN
)
def incomplete_envelopes_get_invalid_params(ctx: Context) -> Iterator[Finding]:
    """A 2026 request without params._meta, its protocolVersion or its clientCapabilities gets -32602 (HTTP 400).

    Triggered by any such request, e.g. the active suite's probes that drop one field. With the
    version header present and only the body version missing, -32020 is accepted too (A7)."""
    for request in ctx.log.messages():
        if request.kind is not Kind.REQUEST or request.sender is not Side.CLIENT:
            continue
        revision = ctx.revision(request)
        if revision is None or not revision.has("per_request_version") or _complete_envelope(request):
            continue
        if request.method not in revision.validator.request_defs:
            continue  # an undefined method may be refused for that first (A6)
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        missing = (
            "params._meta"
            if request_meta(request) is None
            else PROTOCOL_VERSION_KEY
            if meta_version(request) is None
            else CLIENT_CAPABILITIES_KEY
        )
        exchange = http_exchange(request, ctx)
        accepted = {-32602}
        if exchange is not None and exchange.request.headers.get("mcp-protocol-version") is not None:
            if meta_version(request) is None or not envelope_consistent(request, ctx):
                accepted.add(-32020)
        if answer.kind is Kind.RESULT:
            yield failed(answer, f"a request missing {missing} was served with a result")
            continue
        if error_code(answer) not in accepted:
            expected = " or ".join(str(code) for code in sorted(accepted, reverse=True))
            yield failed(answer, f"a request missing {missing} got {_code_text(answer)}, expected {expected}")
            continue
        status = http_status(answer, ctx)
        if status is not None and status != 400:
            yield failed(answer, f"a request missing {missing} was refused with HTTP {status}, expected 400")
            continue
        yield passed(answer)


@log_check(
    requirements="VER-03",
    level=Level.MUST,
    side=Side.SERVER,
    subject="requests naming an unsupported version",
    **_MODERN,
)
def unsupported_versions_get_unsupported_version_errors(ctx: Context) -> Iterator[Finding]:
    """A request naming a version the server does not support gets -32022 with supported and requested (HTTP 400).

    Triggered by a well-formed request whose header and body name a version that is not in the
    server's discover supportedVersions (or, with no discover seen, no published revision), such as
    the active suite's ``1900-01-01`` probe. A discover request may instead be answered (A20)."""
    for request in _modern_requests(ctx):
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
        if error_code(answer) != -32022:
            yield failed(
                answer, f"a request naming the unsupported version {version} got {_code_text(answer)}, expected -32022"
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


@log_check(requirements="VER-04", level=Level.SHOULD, side=Side.SERVER, subject="unsupported-version errors", **_MODERN)
def unsupported_version_errors_echo_the_request_and_the_discover_list(ctx: Context) -> Iterator[Finding]:
    """A -32022 repeats the requested version and lists a non-empty supported set equal to discover's."""
    for answer in ctx.log.messages():
        if answer.kind is not Kind.ERROR or answer.sender is not Side.SERVER or error_code(answer) != -32022:
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
        advertised = _supported(advertised_discover(ctx, request or answer))
        if advertised is not None and set(advertised) != {item for item in supported if isinstance(item, str)}:
            yield failed(answer, f"data.supported {supported} differs from discover's supportedVersions {advertised}")
            continue
        yield passed(answer)


@log_check(
    requirements="VER-05",
    level=Level.SHOULD,
    side=Side.CLIENT,
    subject="clients refused with -32022",
    **_MODERN,
)
def clients_retry_refused_versions_from_the_supported_list(ctx: Context) -> Iterator[Finding]:
    """After -32022 the client retries with a version from data.supported (new id), or stops; never the same version."""
    for answer in ctx.log.messages():
        if answer.kind is not Kind.ERROR or error_code(answer) != -32022:
            continue
        request = ctx.log.request_of(answer)
        if request is None or is_probe(request, ctx):
            continue
        rejected = meta_version(request)
        if rejected is None:
            continue
        error = answer.error if isinstance(answer.error, dict) else {}
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        offered = data.get("supported") if isinstance(data, dict) else None
        supported = offered if isinstance(offered, list) else []
        place = place_of(request, ctx)
        later = [
            message
            for message in ctx.log.messages()
            if message.kind is Kind.REQUEST
            and message.sender is Side.CLIENT
            and message.time > answer.time
            and place_of(message, ctx) == place
            and not is_probe(message, ctx)
        ]
        again = [message for message in later if meta_version(message) == rejected]
        if again:
            yield failed(again[0], f"the client sent {rejected} again after the server refused it with -32022")
            continue
        retries = [message for message in later if message.method == request.method]
        reused_id = [message for message in retries if message.id_key == request.id_key]
        if reused_id:
            yield failed(reused_id[0], "the retry after -32022 reused the refused request's id")
        elif retries and supported and meta_version(retries[0]) not in supported:
            yield failed(
                retries[0], f"the retry named {meta_version(retries[0])}, which is not in data.supported {supported}"
            )
        else:
            yield passed(answer)


# -- VER-06 .. VER-09: server/discover -----------------------------------------------------------
@log_check(requirements="VER-06", level=Level.MUST, side=Side.SERVER, subject="discover requests", **_MODERN)
def discover_is_implemented(ctx: Context) -> Iterator[Finding]:
    """A well-formed server/discover gets a DiscoverResult (or -32022 for an unsupported version, A20), never -32601."""
    for request in _modern_requests(ctx):
        if request.method != "server/discover" or not _complete_envelope(request):
            continue
        if not envelope_consistent(request, ctx):
            continue
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        status = http_status(answer, ctx)
        if answer.kind is Kind.RESULT:
            yield passed(answer)
        elif error_code(answer) == -32601 or status == 404:
            yield failed(answer, f"server/discover was refused as unknown ({_code_text(answer)}, HTTP {status})")
        elif error_code(answer) == -32022:
            yield passed(answer)  # refusing an unsupported version is allowed too (A20)
        else:
            yield failed(answer, f"a well-formed server/discover got {_code_text(answer)} instead of a DiscoverResult")


_DISCOVER_RESULTS: dict[str, Any] = {"sent_by": Side.SERVER, "kinds": {Kind.RESULT}, "features": {"discover"}}


@message_check(
    requirements="VER-07", level=Level.MUST, side=Side.SERVER, subject="discover results", **_DISCOVER_RESULTS
)
def discover_results_carry_versions_capabilities_and_cache_hints(message: Message, ctx: Context) -> Finding | None:
    """A DiscoverResult has resultType complete, supportedVersions, capabilities, ttlMs and cacheScope."""
    request = ctx.log.request_of(message)
    if request is None or request.method != "server/discover" or not isinstance(message.result, dict):
        return None
    result = message.result
    problems = []
    if result.get("resultType") != "complete":
        problems.append(f"resultType is {result.get('resultType')!r}, expected 'complete'")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not all(isinstance(item, str) for item in versions):
        problems.append("supportedVersions is missing or not an array of strings")
    if not isinstance(result.get("capabilities"), dict):
        problems.append("capabilities is missing or not an object")
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        problems.append(f"ttlMs is {ttl!r}, expected an integer >= 0" if "ttlMs" in result else "ttlMs is missing")
    if result.get("cacheScope") not in ("public", "private"):
        scope = result.get("cacheScope")
        problems.append(
            f"cacheScope is {scope!r}, expected 'public' or 'private'"
            if "cacheScope" in result
            else "cacheScope is missing"
        )
    if "instructions" in result and not isinstance(result["instructions"], str):
        problems.append("instructions is not a string")
    if problems:
        return failed(message, "; ".join(problems))
    return passed(message)


@message_check(
    requirements="VER-08", level=Level.SHOULD, side=Side.SERVER, subject="discover results", **_DISCOVER_RESULTS
)
def discover_results_identify_the_server(message: Message, ctx: Context) -> Finding | None:
    """A DiscoverResult names the server in _meta serverInfo, with string name and version."""
    request = ctx.log.request_of(message)
    if request is None or request.method != "server/discover" or not isinstance(message.result, dict):
        return None
    meta = message.result.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        return failed(message, f"the DiscoverResult has no {SERVER_INFO_KEY} object in _meta")
    missing = [field for field in ("name", "version") if not isinstance(info.get(field), str)]
    if missing:
        return failed(message, f"{SERVER_INFO_KEY} lacks a string {' and '.join(missing)}")
    return passed(message)


@log_check(requirements="VER-09", level=Level.MUST, side=Side.SERVER, subject="requests naming a version", **_MODERN)
def accepted_versions_match_supported_versions(ctx: Context) -> Iterator[Finding]:
    """Versions the server serves are in its supportedVersions; versions it refuses with -32022 are not."""
    for request in _modern_requests(ctx):
        if request.method == "server/discover":
            continue  # discover may answer any version (A20)
        version = meta_version(request) or ""
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        discover = advertised_discover(ctx, request)
        supported = _supported(discover)
        if supported is None:
            continue
        if answer.kind is Kind.RESULT:
            if version in supported:
                yield passed(answer)
            else:
                yield failed(
                    answer, f"the server served a request naming {version}, but supportedVersions is {supported}"
                )
        elif error_code(answer) == -32022:
            if version in supported:
                yield failed(answer, f"the server refused {version} with -32022, but supportedVersions lists it")
            else:
                yield passed(answer)


@log_check(requirements="VER-09", level=Level.MUST, side=Side.SERVER, subject="repeated discover results", **_MODERN)
def discover_versions_hold_for_their_ttl(ctx: Context) -> Iterator[Finding]:
    """Two discover answers within the first one's ttlMs list the same supportedVersions."""
    results = _discover_results(ctx)
    for index, first in enumerate(results):
        ttl = first.result.get("ttlMs") if isinstance(first.result, dict) else None
        versions = _supported(first)
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl <= 0 or versions is None:
            continue
        for second in results[index + 1 :]:
            if place_of(second, ctx) != place_of(first, ctx) or second.time - first.time > ttl / 1000:
                continue
            again = _supported(second)
            if again is None:
                continue
            if set(again) != set(versions):
                yield failed(
                    second,
                    f"supportedVersions changed from {versions} to {again} within the {ttl} ms"
                    " the first answer was valid for",
                )
            else:
                yield passed(second)


# -- VER-10 .. VER-14: the client's choices ------------------------------------------------------
@log_check(requirements="VER-10", level=Level.SHOULD, side=Side.CLIENT, subject="requests after a discover", **_MODERN)
def clients_use_an_advertised_version(ctx: Context) -> Iterator[Finding]:
    """After a discover, the client's requests name a version from supportedVersions."""
    for request in ctx.log.messages():
        version = meta_version(request)
        if request.kind is not Kind.REQUEST or request.sender is not Side.CLIENT or version is None:
            continue
        if is_probe(request, ctx):
            continue
        place = place_of(request, ctx)
        earlier = [
            result for result in _discover_results(ctx) if result.time < request.time and place_of(result, ctx) == place
        ]
        supported = _supported(earlier[-1]) if earlier else None
        if supported is None:
            continue
        if version in supported:
            yield passed(request)
        else:
            yield failed(request, f"{request.describe()} names {version}, but discover advertised {supported}")


def _stdio_client_messages(ctx: Context) -> dict[str, list[Message]]:
    by_connection: dict[str, list[Message]] = defaultdict(list)
    for line in ctx.log.stdio_lines():
        if line.sender is Side.CLIENT:
            by_connection[line.connection].append(line.message)
    return by_connection


@log_check(
    requirements="VER-11",
    level=Level.SHOULD,
    side=Side.CLIENT,
    subject="stdio connections of 2026 clients",
    transports={"stdio"},
    **_MODERN,
)
def stdio_clients_open_with_discover(ctx: Context) -> Iterator[Finding]:
    """A 2026 client's first message to a freshly started stdio server is server/discover."""
    modern = modern_versions(ctx)
    for messages in _stdio_client_messages(ctx).values():
        if not messages or is_probe(messages[0], ctx):
            continue
        if not any(meta_version(message) in modern for message in messages):
            continue
        first = messages[0]
        if first.method == "server/discover":
            yield passed(first)
        else:
            yield failed(first, f"the client opened the stdio connection with {first.describe()}, not server/discover")


def _modern_answer(answer: Message | None) -> bool:
    if answer is None:
        return False
    return answer.kind is Kind.RESULT or error_code(answer) in MODERN_ERRORS


@log_check(
    requirements="VER-12",
    level=Level.MUST_NOT,
    side=Side.CLIENT,
    subject="stdio discover probes",
    transports={"stdio"},
    **_MODERN,
)
def stdio_clients_stay_modern_after_a_modern_answer(ctx: Context) -> Iterator[Finding]:
    """A stdio client that got a DiscoverResult or a modern error never falls back to initialize."""
    for messages in _stdio_client_messages(ctx).values():
        for index, request in enumerate(messages):
            if request.method != "server/discover" or request.kind is not Kind.REQUEST or is_probe(request, ctx):
                continue
            answer = answer_to(request, ctx)
            if not _modern_answer(answer) or answer is None:
                continue
            fallback = [m for m in messages[index + 1 :] if m.method == "initialize" and m.time > answer.time]
            if fallback:
                yield failed(
                    fallback[0], f"the client sent initialize after discover was answered with {_code_text(answer)}"
                )
            else:
                yield passed(answer)


def _next_client_exchange(exchange: HttpExchange, ctx: Context) -> HttpExchange | None:
    after = exchange.response.time if exchange.response is not None else exchange.request.time
    for other in ctx.log.http_exchanges():
        if other.request.time <= after or other.probe is not None or other.request_message is None:
            continue
        if exchange.connection and other.connection != exchange.connection:
            continue
        if endpoint_of(other) != endpoint_of(exchange):
            continue
        return other
    return None


@log_check(
    requirements="VER-13",
    level=Level.SHOULD,
    side=Side.CLIENT,
    subject="modern refusals to HTTP clients",
    transports={"http"},
    **_MODERN,
)
def http_clients_stay_modern_after_a_modern_refusal(ctx: Context) -> Iterator[Finding]:
    """After a 400 with -32020/-32021/-32022 (or 404 with -32601) the HTTP client stays modern, no initialize."""
    for exchange in ctx.log.http_exchanges():
        request = exchange.request_message
        if exchange.probe is not None or request is None or meta_version(request) is None or exchange.response is None:
            continue
        status = exchange.response.status
        codes = [error_code(m) for m in exchange.response_messages if m.kind is Kind.ERROR]
        modern = (status == 400 and any(code in MODERN_ERRORS for code in codes)) or (status == 404 and -32601 in codes)
        if not modern:
            continue
        following = _next_client_exchange(exchange, ctx)
        if following is None or following.request_message is None:
            continue
        if following.request_message.method == "initialize" and meta_version(following.request_message) is None:
            yield failed(
                following.request_message, f"the client fell back to initialize after HTTP {status} with a modern error"
            )
        else:
            yield passed(following.request_message)


@log_check(requirements="VER-14", level=Level.SHOULD, side=Side.CLIENT, subject="client request sequences", **_MODERN)
def clients_do_not_rediscover_before_every_request(ctx: Context) -> Iterator[Finding]:
    """The client remembers the era decision instead of sending server/discover before every request (heuristic)."""
    sequences: dict[str, list[Message]] = defaultdict(list)
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if is_probe(request, ctx):
            continue
        exchange = http_exchange(request, ctx)
        key = place_of(request, ctx) + (
            "#" + exchange.connection if exchange is not None and exchange.connection else ""
        )
        sequences[key].append(request)
    for requests in sequences.values():
        work = [index for index, request in enumerate(requests) if request.method != "server/discover"]
        if len(work) < 3:
            continue
        preceded = [index for index in work if index > 0 and requests[index - 1].method == "server/discover"]
        if len(preceded) == len(work):
            yield failed(
                requests[work[-1]], f"each of the client's {len(work)} requests was preceded by its own server/discover"
            )
        else:
            yield passed(requests[work[-1]])


# -- VER-15 .. VER-17: modern-only servers and statelessness ---------------------------------------
@log_check(
    requirements="VER-15", level=Level.SHOULD, side=Side.SERVER, subject="refused legacy initialize requests", **_MODERN
)
def refused_initialize_names_supported_versions(ctx: Context) -> Iterator[Finding]:
    """A server refusing a legacy initialize names its supported versions in the error (HTTP 400, or 404 with a body).

    Triggered by a 2025-style initialize (no 2026 envelope) that the server answers with an error,
    such as the active suite's legacy-client probe; dual-era servers that accept it are not judged."""
    for request in ctx.log.messages():
        if request.method != "initialize" or request.kind is not Kind.REQUEST or meta_version(request) is not None:
            continue
        answer = answer_to(request, ctx)
        if answer is None or answer.kind is not Kind.ERROR:
            continue
        status = http_status(answer, ctx)
        if status is not None and status not in (400, 404):
            yield failed(answer, f"the legacy initialize was refused with HTTP {status}, expected 400")
            continue
        text = str(answer.error)
        advertised = _supported(advertised_discover(ctx, request))
        named = any(version in text for version in advertised) if advertised else bool(DATE_LIKE.search(text))
        if named:
            yield passed(answer)
        else:
            yield failed(answer, "the refusal of a legacy initialize does not name the versions the server supports")


SESSION_WORDS = re.compile(r"session|initiali[sz]", re.IGNORECASE)


@log_check(
    requirements="VER-16", level=Level.MUST_NOT, side=Side.SERVER, subject="well-formed 2026 requests", **_MODERN
)
def servers_serve_each_request_on_its_own(ctx: Context) -> Iterator[Finding]:
    """A well-formed 2026 request is served without a prior discover, session or handshake.

    Triggered by any complete-envelope request; a refusal that asks for a session or an
    initialization fails, a result for a request with no discover before it passes."""
    modern = modern_versions(ctx)
    discovered: set[str] = set()
    for request in _modern_requests(ctx):
        place = place_of(request, ctx)
        if (
            meta_version(request) not in modern
            or not _complete_envelope(request)
            or not envelope_consistent(request, ctx)
        ):
            continue
        answer = answer_to(request, ctx)
        if request.method == "server/discover":
            discovered.add(place)
        if answer is None:
            continue
        if answer.kind is Kind.ERROR:
            error = answer.error if isinstance(answer.error, dict) else {}
            message_text = str(error.get("message", ""))
            if SESSION_WORDS.search(message_text):
                yield failed(
                    answer, f"a self-contained 2026 request was refused as needing state: {message_text[:120]!r}"
                )
        elif place not in discovered or request.method == "server/discover":
            yield passed(answer)


def _earlier_values(ctx: Context, member: str) -> dict[str, Message]:
    """Cursor or requestState values the server handed out, mapped to the result that carried them."""
    found: dict[str, Message] = {}
    for message in ctx.log.messages():
        if message.kind is Kind.RESULT and message.sender is Side.SERVER and isinstance(message.result, dict):
            value = message.result.get(member)
            if isinstance(value, str):
                found.setdefault(value, message)
    return found


@log_check(
    requirements="VER-17",
    level=Level.SHOULD_NOT,
    side=Side.SERVER,
    subject="continuations on a new connection",
    transports={"http"},
    **_MODERN,
)
def continuations_work_on_a_new_connection(ctx: Context) -> Iterator[Finding]:
    """A cursor-continued list or a multi round-trip retry sent on another TCP connection is served the same."""
    cursors = _earlier_values(ctx, "nextCursor")
    states = _earlier_values(ctx, "requestState")
    for request in _modern_requests(ctx):
        params = request.params if isinstance(request.params, dict) else {}
        origin = None
        if isinstance(params.get("cursor"), str):
            origin = cursors.get(params["cursor"])
        elif isinstance(params.get("requestState"), str):
            origin = states.get(params["requestState"])
        if origin is None:
            continue
        here, there = http_exchange(request, ctx), http_exchange(origin, ctx)
        if here is None or there is None or not here.connection or not there.connection:
            continue
        if here.connection == there.connection:
            continue
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        if answer.kind is Kind.ERROR:
            yield failed(answer, f"{request.describe()} continued on a new connection got {_code_text(answer)}")
        else:
            yield passed(answer)


# -- VER-18, VER-19: extensions ------------------------------------------------------------------
@message_check(
    requirements="VER-18",
    level=Level.MUST,
    side=Side.BOTH,
    subject="declared extensions",
    features={"capability_extensions"},
)
def extension_keys_are_prefixed_meta_keys(message: Message, ctx: Context) -> Finding | None:
    """capabilities.extensions keys follow the _meta key grammar with a mandatory prefix; values are objects."""
    extensions: Any = None
    if message.sender is Side.CLIENT and message.kind is Kind.REQUEST:
        caps = client_capabilities(message)
        extensions = caps.get("extensions") if caps is not None else None
        where = f"{CLIENT_CAPABILITIES_KEY}.extensions"
    elif message.sender is Side.SERVER and message.kind is Kind.RESULT and isinstance(message.result, dict):
        request = ctx.log.request_of(message)
        if request is None or request.method not in ("server/discover", "initialize"):
            return None
        caps = message.result.get("capabilities")
        extensions = caps.get("extensions") if isinstance(caps, dict) else None
        where = "capabilities.extensions"
    else:
        return None
    if extensions is None:
        return None
    if not isinstance(extensions, dict):
        return failed(message, f"{where} is a {type(extensions).__name__}, not an object")
    for key, value in extensions.items():
        problem = meta_key_problem(key, prefix_required=True)
        if problem is not None:
            return failed(message, f"{where}: {problem}")
        if not isinstance(value, dict):
            return failed(message, f"{where}[{key!r}] is a {type(value).__name__}, not an object")
    return passed(message)


# -- VER-20 .. VER-22: methods a revision or a server does not offer --------------------------------
def _capability_for(method: str | None) -> str | None:
    if method is None:
        return None
    for prefix, capability in CAPABILITY_OF_PREFIX:
        if method.startswith(prefix):
            return capability
    return None


def _expect_method_not_found(answer: Message, ctx: Context, what: str) -> Finding:
    status = http_status(answer, ctx)
    if answer.kind is Kind.RESULT:
        return failed(answer, f"{what} was served with a result")
    if error_code(answer) != -32601:
        return failed(answer, f"{what} got {_code_text(answer)}, expected -32601")
    if status is not None and status != 404:
        return failed(answer, f"{what} got -32601 with HTTP {status}, expected 404")
    return passed(answer)


@log_check(
    requirements="VER-20",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="requests outside the advertised capabilities",
    **_MODERN,
)
def unadvertised_capabilities_get_method_not_found(ctx: Context) -> Iterator[Finding]:
    """A method whose capability discover did not advertise (tools, prompts, resources, completions) gets -32601/404."""
    for request in _modern_requests(ctx):
        capability = _capability_for(request.method)
        if capability is None or not _complete_envelope(request) or not envelope_consistent(request, ctx):
            continue
        caps = _server_capabilities(advertised_discover(ctx, request))
        if caps is None or capability in caps:
            continue
        answer = answer_to(request, ctx)
        if answer is not None:
            yield _expect_method_not_found(
                answer, ctx, f"{request.method} without an advertised {capability} capability"
            )


def _removed_methods(ctx: Context, *, notifications: bool) -> frozenset[str]:
    """Client methods a handshake revision defines and no modern revision does (the tasks extension aside)."""
    old: set[str] = set()
    new: set[str] = set()
    for revision in ctx.spec.all:
        validator = revision.validator
        methods = set(validator.client_requests)
        if notifications:
            methods |= validator.client_notifications
        (new if revision.era == "modern" else old).update(methods)
    return frozenset(method for method in old - new if "tasks/" not in method)


@log_check(
    requirements="VER-21",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="removed methods sent with a 2026 envelope",
    **_MODERN,
)
def removed_methods_are_unknown_to_modern_requests(ctx: Context) -> Iterator[Finding]:
    """ping, logging/setLevel, resources/(un)subscribe and tasks/* with a 2026 envelope get -32601 (HTTP 404).

    Triggered by such requests (the active suite sends them). An initialize with a 2026 envelope
    may be served by a dual-era server (A21); when refused, it must be -32601 too."""
    removed = _removed_methods(ctx, notifications=False) | _tasks_methods(ctx)
    modern = modern_versions(ctx)
    for request in _modern_requests(ctx):
        if request.method not in removed or meta_version(request) not in modern:
            continue
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        if request.method.startswith("tasks/"):
            caps = _server_capabilities(advertised_discover(ctx, request)) or {}
            extensions = caps.get("extensions")
            if isinstance(extensions, dict) and TASKS_EXTENSION in extensions:
                continue
        if request.method == "initialize" and answer.kind is Kind.RESULT:
            continue
        yield _expect_method_not_found(answer, ctx, f"{request.method} with a 2026 envelope")


def _tasks_methods(ctx: Context) -> frozenset[str]:
    methods: set[str] = set()
    for revision in ctx.spec.all:
        methods |= {method for method in revision.validator.client_requests if method.startswith("tasks/")}
    return frozenset(methods)


@message_check(
    requirements="VER-22",
    level=Level.MUST_NOT,
    side=Side.CLIENT,
    subject="client messages with a 2026 envelope",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
    **_MODERN,
)
def modern_clients_do_not_send_removed_methods(message: Message, ctx: Context) -> Finding | None:
    """A client speaking 2026 never sends initialize, ping, logging/setLevel, resources/(un)subscribe and the like."""
    version = meta_version(message)
    if version is None or version not in modern_versions(ctx):
        return None
    if message.method in _removed_methods(ctx, notifications=True):
        return failed(message, f"{message.method} was removed in {version} but was sent with a {version} envelope")
    return passed(message)
