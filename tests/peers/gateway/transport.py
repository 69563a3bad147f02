"""What a Streamable HTTP server checks itself, done by the gateway when it bridges to a stdio server.

A stdio server never sees HTTP: its headers, its sessions, the status that goes with an error. A bridge is
the HTTP server the client talks to, so the faithful one does that part of the transport: it runs the
Python SDK's own validation ladder on a 2026 request (envelope, ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` against the body, supported version), refuses a message that is no JSON-RPC request or
notification, a 2025 request without a session, or a session request under a version that is no handshake
revision, and gives each error of a 2026 answer its HTTP status. Over an HTTP upstream the gateway checks
none of this: the upstream does, and the gateway relays what it says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, InboundLadderRejection, classify_inbound_request

HANDSHAKE = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
NOT_A_MESSAGE = "Body must be a single JSON-RPC request or notification object"


@dataclass(frozen=True)
class Refusal:
    status: int
    code: int
    message: str
    data: Any = None

    def error(self, ident: Any) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": ident, "error": error}


def _shaped(message: dict[str, Any]) -> bool:
    """A JSON-RPC 2.0 request or notification (a client's answer to a server's request passes too)."""
    if message.get("jsonrpc") != "2.0":
        return False
    if "method" not in message:
        return "id" in message and ("result" in message or "error" in message)
    ident = message.get("id")
    if "id" in message and (isinstance(ident, bool) or not isinstance(ident, str | int)):
        return False
    return isinstance(message["method"], str) and isinstance(message.get("params", {}), dict)


def modern_refusal(message: dict[str, Any], headers: dict[str, str]) -> Refusal | None:
    """The Python SDK's ladder over a 2026 message, as its HTTP server runs it."""
    if not _shaped(message):
        return Refusal(400, -32600, NOT_A_MESSAGE)
    if "method" not in message or "id" not in message:
        return None  # notifications and answers carry no envelope to check
    verdict = classify_inbound_request(message, headers=headers)
    if isinstance(verdict, InboundLadderRejection):
        return Refusal(ERROR_CODE_HTTP_STATUS.get(verdict.code, 400), verdict.code, verdict.message, verdict.data)
    return None


def legacy_refusal(message: dict[str, Any], headers: dict[str, str], has_session: bool) -> Refusal | None:
    """A 2025 message: a JSON-RPC shape, a session for all but initialize, a handshake version in the header."""
    if not _shaped(message):
        return Refusal(400, -32600, NOT_A_MESSAGE)
    if message.get("method") == "initialize" and "id" in message:
        return None
    if not has_session:
        return Refusal(400, -32600, "Bad Request: Missing session ID")
    version = headers.get("mcp-protocol-version")
    if version is not None and version.strip() not in HANDSHAKE:
        return Refusal(400, -32600, f"Bad Request: Unsupported protocol version: {version}")
    return None


def status_of(message: dict[str, Any], default: int) -> int:
    """The HTTP status a 2026 answer goes with: its error code's (the SDK's table), else ``default``."""
    error = message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return ERROR_CODE_HTTP_STATUS.get(code, default) if isinstance(code, int) else default
