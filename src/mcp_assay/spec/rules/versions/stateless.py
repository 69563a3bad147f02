"""Modern-only servers and statelessness (VER-15..17): no session, no handshake, any connection.

A server that refuses a legacy ``initialize`` says which versions it supports; a well-formed 2026
request is served on its own, without a prior discover or handshake, and a cursor or
``requestState`` works on any TCP connection.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import http_exchange
from mcp_assay.spec.rules.shared.envelopes import answer_to, http_status, meta_version, place_of
from mcp_assay.spec.rules.shared.reads import ANY_VERSION
from mcp_assay.spec.rules.versions._eras import (
    MODERN,
    advertised_discover,
    code_text,
    declared_modern_only,
    modern_requests,
    modern_versions,
    supported_versions,
    well_formed_requests,
)
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message

DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}")


@log_check(
    requirements="VER-15",
    level=Level.SHOULD,
    subject="refused legacy initialize requests",
    **MODERN,
    off_version=True,
    follows=ANY_VERSION,
)
def refused_initialize_names_supported_versions(ctx: Context) -> Iterator[Finding]:
    """A server refusing a legacy initialize names its supported versions in the error (HTTP 400, or 404 with a body).

    Triggered by a 2025-style initialize (no 2026 envelope) that the server answers with an error,
    such as the active suite's legacy-client probe. A dual-era server that accepts it is not judged,
    but one declared modern-only (``run --modern-only``) fails: it must refuse the handshake."""
    modern_only = declared_modern_only(ctx)
    for request in ctx.log.messages():
        if request.method != "initialize" or request.kind is not Kind.REQUEST or meta_version(request) is not None:
            continue
        answer = answer_to(request, ctx)
        if answer is not None and answer.kind is Kind.RESULT and modern_only:
            result = answer.result if isinstance(answer.result, dict) else {}
            version = result.get("protocolVersion")
            what = f"negotiating {version}" if isinstance(version, str) else "with a result"
            yield failed(
                answer,
                f"the server is declared modern-only (--modern-only) but served a legacy initialize, {what}, "
                "instead of refusing it with the versions it supports",
            )
            continue
        if answer is None or answer.kind is not Kind.ERROR:
            continue
        status = http_status(answer, ctx)
        if status is not None and status not in (400, 404):
            yield failed(answer, f"the legacy initialize was refused with HTTP {status}, expected 400")
            continue
        text = str(answer.error)
        advertised = supported_versions(advertised_discover(ctx, request))
        named = any(version in text for version in advertised) if advertised else bool(DATE_LIKE.search(text))
        if named:
            yield passed(answer)
        else:
            yield failed(answer, "the refusal of a legacy initialize does not name the versions the server supports")


SESSION_WORDS = re.compile(r"session|initiali[sz]", re.IGNORECASE)


@log_check(
    requirements="VER-16", level=Level.MUST_NOT, subject="well-formed 2026 requests", **MODERN, follows=ANY_VERSION
)
def servers_serve_each_request_on_its_own(ctx: Context) -> Iterator[Finding]:
    """A well-formed 2026 request is served without a prior discover, session or handshake.

    Triggered by any complete-envelope request; a refusal that asks for a session or an
    initialization fails, a result for a request with no discover before it passes."""
    modern = modern_versions(ctx)
    discovered: set[str] = set()
    for request in well_formed_requests(ctx):
        if meta_version(request) not in modern:
            continue
        place = place_of(request, ctx)
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
    subject="continuations on a new connection",
    **MODERN,
    follows=ANY_VERSION,
)
def continuations_work_on_a_new_connection(ctx: Context) -> Iterator[Finding]:
    """A cursor-continued list or a multi round-trip retry sent on another TCP connection is served the same."""
    cursors = _earlier_values(ctx, "nextCursor")
    states = _earlier_values(ctx, "requestState")
    for request in modern_requests(ctx):
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
            yield failed(answer, f"{request.describe()} continued on a new connection got {code_text(answer)}")
        else:
            yield passed(answer)
