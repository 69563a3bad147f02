"""The ``methods`` cases: methods a server does not have, or must not serve here."""

from __future__ import annotations

from mcp_assay.cases.model import Declare

__all__ = ["CASES", "HTTP_DELETE", "HTTP_GET", "HTTP_VERBS", "NO_CAPABILITY", "REMOVED_METHOD", "UNKNOWN_METHOD"]

declare = Declare("methods")

UNKNOWN_METHOD = declare(
    "unknown-method", "RPC-15 HTTP-25",
    sends="a method that does not exist", expects="-32601 (404 on 2026 HTTP)", invalid=True,
)  # fmt: skip
REMOVED_METHOD = declare(
    "removed-method", "VER-21",
    sends="a method the revision under test removed (resources/subscribe …; initialize with a 2026 envelope only "
    "to a server that serves no handshake revision, A21)",
    expects="-32601 (404 on HTTP)",
    invalid=True,
)  # fmt: skip
NO_CAPABILITY = declare(
    "no-capability", "VER-20 COMP-02",
    sends="a method of a capability the server did not advertise", expects="-32601", invalid=True,
)  # fmt: skip
HTTP_GET = declare(
    "http-get", "HTTP-32 HTTP-01",
    sends="GET on the 2026 MCP endpoint", expects="405 Method Not Allowed", invalid=True,
)  # fmt: skip
HTTP_DELETE = declare(
    "http-delete", "HTTP-32 HTTP-01",
    sends="DELETE on the 2026 MCP endpoint", expects="405 Method Not Allowed", invalid=True,
)  # fmt: skip

CASES = tuple(declare.cases)

HTTP_VERBS = {"GET": HTTP_GET, "DELETE": HTTP_DELETE}
"""The HTTP methods the 2026 endpoint does not serve, by name."""
