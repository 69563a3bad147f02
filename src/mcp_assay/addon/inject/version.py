"""Version refusal: one 2026 request answered ``400`` with ``-32022`` on the server's behalf.

The point is the first request of the session that declares a 2026 version, whatever its method
(a client's ``server/discover``, or its first ``tools/list`` when it does not discover), so any
2026 client meets it. The answer lists in ``data.supported`` what the client can fall back to:
the versions the server advertised in a discover answer the session already carried, else the
revisions mcp-assay knows, without the one requested. The request never reaches the server.
What the client does next is judged by VER-05 (retry from the list under a new id, or stop;
never the refused version again), VER-13 on HTTP and VER-12 on stdio (no blind fallback).
"""

from __future__ import annotations

from typing import Any

from mcp_assay.addon.inject.plan import Case, InjectFamily
from mcp_assay.probe_names import ProbeName
from mcp_assay.protocol import Era, ErrorCode

__all__ = ["REFUSAL", "refusal"]


REFUSAL = Case(
    name=ProbeName.INJECT_VERSION_REFUSAL,
    family=InjectFamily.VERSION,
    era=Era.MODERN,
    transports=frozenset({"http", "stdio"}),
    intent="answered 400 / -32022 on the server's behalf: the client retries with a version from data.supported "
    "under a new id, or stops (VER-05)",
    point=lambda facts: facts.is_request,
)


def refusal(ident: Any, requested: str | None, supported: list[str]) -> dict[str, Any]:
    """The ``UnsupportedProtocolVersionError`` answering request ``ident``."""
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "error": {
            "code": ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
            "message": f"Unsupported protocol version {requested} (injected by mcp-assay)",
            "data": {"supported": supported, "requested": requested or ""},
        },
    }
