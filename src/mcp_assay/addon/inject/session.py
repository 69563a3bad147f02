"""Session expiry: one request carrying a 2025 ``Mcp-Session-Id`` answered ``404`` on the server's behalf.

The point is the first 2025 request (not ``initialize``) that carries a session id, which every
2025 HTTP client sends right after its handshake. To the client the session has ended; the server
never sees the request and keeps the session, so a client that starts over loses nothing. What
the client does next is judged by HS-22: a new ``initialize`` without a session id, never the
old id again.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.addon.inject.plan import Case, InjectFamily
from mcp_assay.probe_names import ProbeName
from mcp_assay.protocol import Era, ErrorCode

__all__ = ["EXPIRY", "expired"]

EXPIRY = Case(
    name=ProbeName.INJECT_SESSION_EXPIRY,
    family=InjectFamily.SESSION,
    era=Era.HANDSHAKE,
    transports=frozenset({"http"}),
    intent="answered 404 for the session on the server's behalf: the client starts over with initialize and no "
    "session id (HS-22)",
    point=lambda facts: facts.is_request and facts.session_id is not None and facts.method != "initialize",
)


def expired(ident: Any) -> dict[str, Any]:
    """The body of the ``404`` (the transport defines none; a JSON-RPC error naming the request helps a client)."""
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "error": {
            "code": ErrorCode.INVALID_REQUEST,
            "message": "Session not found (injected by mcp-assay: the session has ended)",
        },
    }
