"""Hand-built traffic for the envelope, version, result and handshake rules.

Thin layers over :mod:`tests.factories`: a discover exchange, 2026 request bodies with one
envelope field bent, refusals with realistic status codes, and 2025 sessions whose initialize
requests and answers can name any version.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp_assay.wire.model import HttpExchange
from tests.factories import (
    LEGACY,
    MODERN,
    error_body,
    http,
    initialize_body,
    initialize_result,
    legacy_headers,
    modern_headers,
    request_body,
    result_body,
    server_info,
)

DISCOVERED: dict[str, Any] = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {"listChanged": True}},
    "ttlMs": 0,
    "cacheScope": "private",
}
TOOLS: dict[str, Any] = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
PROBE = {"name": "envelope-probe", "invalid": True}
"""The tag the active suite puts on a request it malformed on purpose."""


def modern_body(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    ident: Any = 1,
    version: str = MODERN,
    drop: tuple[str, ...] = (),
    meta_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A 2026 request body; ``drop`` removes _meta keys, ``meta_extra`` adds or replaces some."""
    body = request_body(method, ident, dict(params or {}), version=version)
    meta = body["params"]["_meta"]
    meta.update(meta_extra or {})
    for key in drop:
        meta.pop(key, None)
    return body


def full_result(result: dict[str, Any]) -> dict[str, Any]:
    """A 2026 result with resultType and serverInfo filled in unless given."""
    return {"resultType": "complete", **result, "_meta": result.get("_meta", server_info())}


def served(
    body: dict[str, Any],
    result: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    probe: dict[str, Any] | None = None,
    bare: bool = False,
) -> HttpExchange:
    """A 2026 request answered with a result (``bare`` keeps the result exactly as given)."""
    answer = result if bare else full_result(result)
    return http(body, result_body(answer, body.get("id")), headers=headers or modern_headers(body), probe=probe)


def refused(
    body: dict[str, Any],
    code: int,
    *,
    status: int = 400,
    data: Any = None,
    message: str = "refused",
    headers: dict[str, str] | None = None,
    probe: dict[str, Any] | None = None,
) -> HttpExchange:
    """A request answered with a JSON-RPC error (and an HTTP status)."""
    return http(
        body,
        error_body(code, message, body.get("id"), data),
        status=status,
        headers=headers or modern_headers(body),
        probe=probe,
    )


def discover(result: dict[str, Any] | None = None, *, ident: Any = 1) -> HttpExchange:
    body = modern_body("server/discover", ident=ident)
    return served(body, dict(DISCOVERED if result is None else result))


def versioned_headers(body: dict[str, Any], version: str) -> dict[str, str]:
    """Modern headers whose MCP-Protocol-Version names ``version``."""
    return modern_headers(body, mcp_protocol_version=version)


def on_connection(exchange: HttpExchange, connection: str) -> HttpExchange:
    return dataclasses.replace(exchange, connection=connection)


def initialize(
    requested: str = LEGACY,
    *,
    answered: str | None = None,
    session: str | None = "sess-1",
    ident: Any = 0,
    capabilities: dict[str, Any] | None = None,
    server_capabilities: dict[str, Any] | None = None,
    error: int | None = None,
    probe: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> HttpExchange:
    """A 2025 initialize POST; the server echoes ``requested`` unless ``answered`` or ``error`` says otherwise."""
    body = initialize_body(requested, ident=ident, capabilities=capabilities)
    plain = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if error is not None:
        return http(
            body, error_body(error, "Unsupported protocol version", ident), status=400, headers=headers or plain
        )
    result = initialize_result(answered or requested, server_capabilities)
    response_headers = {"content-type": "application/json"}
    if session is not None:
        response_headers["mcp-session-id"] = session
    return http(
        body,
        result_body(result, ident),
        headers=headers or plain,
        response_headers=response_headers,
        probe=probe,
    )


def legacy_post(
    body: dict[str, Any] | None,
    response: Any = None,
    *,
    session: str | None = "sess-1",
    status: int = 200,
    headers: dict[str, str] | None = None,
    probe: dict[str, Any] | None = None,
    method: str = "POST",
) -> HttpExchange:
    """A request in a 2025 HTTP session (``session=None`` leaves the session id out)."""
    if headers is None:
        headers = legacy_headers(session) if session is not None else legacy_headers()
        if session is None:
            headers.pop("mcp-session-id")
    if response is None and status == 200:
        status = 202
    return http(body, response, status=status, headers=headers, probe=probe, method=method)
