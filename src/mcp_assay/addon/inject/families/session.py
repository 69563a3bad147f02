"""Session expiry: one request carrying a 2025 ``Mcp-Session-Id`` answered ``404`` on the server's behalf.

The point is the first 2025 request (not ``initialize``) that carries a session id, which every
2025 HTTP client sends right after its handshake. To the client the session has ended; the server
never sees the request and keeps the session, so a client that starts over loses nothing. What
the client does next is judged by HS-22: a new ``initialize`` without a session id, never the
old id again.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.addon.inject.actions import Made, Reply, error_answer
from mcp_assay.addon.inject.fault import Fault, FaultFamily, Reaction
from mcp_assay.addon.inject.points import Point
from mcp_assay.spec.rules.handshake.session_ids import clients_reinitialize_after_a_session_404
from mcp_assay.vocabulary.protocol import Era, ErrorCode

__all__ = ["FAULTS", "EXPIRY", "FAMILY", "expired"]

FAMILY = FaultFamily("session", 20, "answer one request carrying a 2025 session id with 404 (HTTP)")


def expired(ident: Any) -> dict[str, Any]:
    """The body of the ``404`` (the transport defines none; a JSON-RPC error naming the request helps a client)."""
    return error_answer(ident, ErrorCode.INVALID_REQUEST, "Session not found: the session has ended")


EXPIRY = Fault(
    name="inject-session-expiry",
    family=FAMILY,
    era=Era.HANDSHAKE,
    transports=frozenset({"http"}),
    point=Point(
        "the first 2025 request (not `initialize`) carrying `Mcp-Session-Id`",
        lambda facts: facts.is_request and facts.session_id is not None and facts.method != "initialize",
    ),
    action=Reply(
        status=404,
        make=lambda facts, _: Made.json(expired(facts.ident)),
        does="answers `404` for the 2025 session, in the server's place (the server keeps the session)",
    ),
    expects="answered 404 for the session on the server's behalf: the client starts over with initialize and no "
    "session id (HS-22)",
    reactions=(
        Reaction(
            clients_reinitialize_after_a_session_404,
            "the client's next 2025 use of the endpoint is a new `initialize` without a session id; a request with "
            "the ended id, or without any id but not that `initialize`, fails; nothing more is not verified",
        ),
    ),
    rank=20,
    note="answered {method} in session {session!r} with 404",
)

FAULTS = (EXPIRY,)
