"""What the version rules share: the revisions' eras, the server's discover answers, modern requests.

Which versions belong to the handshake era and which are modern comes from the revisions the
spec set knows (plus the handshake-era names whose schemas need not be on disk); what a server
supports comes from the ``server/discover`` answer that applies to a request, the latest one at
the same endpoint or stdio connection. The handshake and result rules ask the same questions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.envelopes import client_capabilities, meta_version, place_of
from mcp_assay.spec.rules.shared.header_mirroring import decode_sentinel, is_sentinel
from mcp_assay.vocabulary.protocol import HANDSHAKE_REVISION, MCP_DEFINED_CODES, Era, ErrorCode, HeaderKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind, Message

__all__ = [
    "HANDSHAKE_ERA_VERSIONS",
    "MODERN",
    "MODERN_ERRORS",
    "MODERN_ONLY",
    "advertised_discover",
    "code_text",
    "complete_envelope",
    "declared_modern_only",
    "discover_results",
    "envelope_consistent",
    "handshake_versions",
    "known_versions",
    "modern_requests",
    "modern_versions",
    "offered_version",
    "refused_supported",
    "retry_in_handshake_era",
    "server_capabilities",
    "supported_versions",
]

HANDSHAKE_ERA_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", HANDSHAKE_REVISION)
"""Revisions published with the initialize handshake (their older schemas need not be on disk)."""

MODERN_ERRORS = MCP_DEFINED_CODES
"""Codes only a 2026-era server sends: a dual-era client that sees one knows it talks to a modern server."""
MODERN_ONLY = "modern_only"
"""The setting saying the server is meant to serve modern revisions only (``run --modern-only``): a dual-era
server may still serve ``initialize`` (ambiguity A21), a modern-only one must refuse it."""


def declared_modern_only(ctx: Context) -> bool:
    """Whether the server is declared modern-only (see :data:`MODERN_ONLY`)."""
    return ctx.settings.get(MODERN_ONLY) is True


def handshake_versions(ctx: Context) -> frozenset[str]:
    return frozenset(HANDSHAKE_ERA_VERSIONS) | {r.name for r in ctx.spec.all if r.era is Era.HANDSHAKE}


def modern_versions(ctx: Context) -> frozenset[str]:
    return frozenset(r.name for r in ctx.spec.all if r.era is Era.MODERN)


def known_versions(ctx: Context) -> frozenset[str]:
    return handshake_versions(ctx) | modern_versions(ctx)


class DiscoverResults:
    """The server's ``server/discover`` results, in wire order and by place (endpoint or stdio connection)."""

    def __init__(self, ctx: Context) -> None:
        self.all: list[Message] = []
        self.by_place: dict[str, tuple[list[float], list[Message]]] = {}
        self.applying: dict[tuple[str, int], Message | None] = {}
        """What :func:`advertised_discover` found, by the key of the message asked about."""
        for message in ctx.log.messages():
            request = ctx.log.request_of(message) if message.kind is Kind.RESULT else None
            if message.sender is not Side.SERVER or not isinstance(message.result, dict):
                continue
            if request is None or request.method != "server/discover":
                continue
            self.all.append(message)
            times, results = self.by_place.setdefault(place_of(message, ctx), ([], []))
            times.append(message.time)
            results.append(message)

    def before(self, place: str, moment: float) -> Message | None:
        """The latest result at ``place`` strictly before ``moment``."""
        found = self.by_place.get(place)
        if found is None:
            return None
        times, results = found
        index = bisect_left(times, moment)
        return results[index - 1] if index else None

    def applying_to(self, place: str, moment: float) -> Message | None:
        """The latest result at ``place`` by ``moment``, else the first one after it."""
        found = self.by_place.get(place)
        if found is None:
            return None
        times, results = found
        index = bisect_right(times, moment)
        return results[index - 1] if index else results[0]


def discover_results(ctx: Context) -> list[Message]:
    return ctx.view(DiscoverResults).all


def discover_before(ctx: Context, near: Message) -> Message | None:
    """The last discover result at ``near``'s place strictly before it."""
    return ctx.view(DiscoverResults).before(place_of(near, ctx), near.time)


def advertised_discover(ctx: Context, near: Message) -> Message | None:
    """The discover result that applies to ``near``: the latest one at its place before it, else the first after
    (found once per message and window: the version rules ask it of the same requests)."""
    results = ctx.view(DiscoverResults)
    known = results.applying
    if near.key in known:
        return known[near.key]
    found = known[near.key] = results.applying_to(place_of(near, ctx), near.time)
    return found


def supported_versions(result: Message | None) -> list[str] | None:
    if result is None or not isinstance(result.result, dict):
        return None
    versions = result.result.get("supportedVersions")
    if isinstance(versions, list) and all(isinstance(item, str) for item in versions):
        return list(versions)
    return None


def refused_supported(answer: Message | None) -> list[str] | None:
    """``data.supported`` of a ``-32022`` (``None`` when the answer is none, or carries no such list)."""
    error = answer.error if answer is not None and isinstance(answer.error, dict) else {}
    data = error.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    if isinstance(supported, list) and all(isinstance(item, str) for item in supported):
        return list(supported)
    return None


def offered_version(initialize: Message) -> str | None:
    """The protocolVersion a 2025 ``initialize`` offers."""
    params = initialize.params if isinstance(initialize.params, dict) else {}
    offered = params.get("protocolVersion")
    return offered if isinstance(offered, str) else None


def retry_in_handshake_era(refusal: Message | None, initialize: Message, ctx: Context) -> bool:
    """An ``initialize`` after a ``-32022`` whose ``data.supported`` names only handshake-era versions, offering
    one of them: the retry "with a supported version" VER-05 asks for, not a fallback. The versioning page
    has a client that meets a modern error retry with a version from the list rather than fall back; when
    every version on the list is a handshake-era one, the handshake is the only way to retry with it."""
    supported = (
        refused_supported(refusal)
        if refusal is not None and error_code(refusal) == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
        else None
    )
    if not supported or any(version in modern_versions(ctx) for version in supported):
        return False
    return offered_version(initialize) in supported


def server_capabilities(result: Message | None) -> dict[str, Any] | None:
    if result is None or not isinstance(result.result, dict):
        return None
    caps = result.result.get("capabilities")
    return caps if isinstance(caps, dict) else None


def envelope_consistent(request: Message, ctx: Context) -> bool:
    """The request's routing headers agree with its body (always true off HTTP): worked out once per request for
    the version rules that ask."""
    known = ctx.view(_ModernRequests).consistent
    found = known.get(request.key)
    if found is None:
        found = known[request.key] = _envelope_consistent(request, ctx)
    return found


def _envelope_consistent(request: Message, ctx: Context) -> bool:
    exchange = http_exchange(request, ctx)
    if exchange is None:
        return True
    headers = exchange.request.headers
    if headers.get(HeaderKey.PROTOCOL_VERSION) != meta_version(request):
        return False
    if headers.get(HeaderKey.METHOD) != request.method:
        return False
    params = request.params if isinstance(request.params, dict) else {}
    name = params.get("uri") if request.method == "resources/read" else params.get("name")
    if request.method in ("tools/call", "prompts/get", "resources/read"):
        header = headers.get(HeaderKey.NAME)
        if header is None:
            return False
        decoded = decode_sentinel(header) if is_sentinel(header) else None
        if (header if decoded is None else decoded) != name:
            return False
    return True


def complete_envelope(request: Message) -> bool:
    return meta_version(request) is not None and client_capabilities(request) is not None


def modern_requests(ctx: Context) -> Iterator[Message]:
    """Client requests carrying a 2026-style envelope, whatever version they name (probes included)."""
    return iter(ctx.view(_ModernRequests).requests)


def well_formed_requests(ctx: Context) -> Iterator[Message]:
    """The :func:`modern_requests` whose envelope is complete (:func:`complete_envelope`) and whose routing headers
    agree with it (:func:`envelope_consistent`), in the order they crossed the wire: found once per window."""
    requests = ctx.view(_ModernRequests)
    if requests.well_formed is None:
        requests.well_formed = [
            request for request in requests.requests if complete_envelope(request) and envelope_consistent(request, ctx)
        ]
    return iter(requests.well_formed)


class _ModernRequests:
    """The log's modern requests in the order they crossed the wire, and whether each request's envelope is
    consistent: found once for the version rules that walk them (made again when the log grows)."""

    def __init__(self, ctx: Context) -> None:
        self.requests = [
            message
            for message in ctx.log.messages()
            if message.kind is Kind.REQUEST and message.sender is Side.CLIENT and meta_version(message) is not None
        ]
        self.consistent: dict[tuple[str, int], bool] = {}
        self.well_formed: list[Message] | None = None
        """What :func:`well_formed_requests` found, once it was asked."""


def code_text(answer: Message) -> str:
    code = error_code(answer)
    return "a result" if answer.kind is Kind.RESULT else f"code {code if code is not None else '?'}"


MODERN: dict[str, Any] = {"features": {"per_request_version"}}
"""Check gate: revisions where every request names its own version."""
