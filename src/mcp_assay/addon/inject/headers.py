"""Header faults: response header names respelled in another legal case, and a ``-32020`` refusal.

Header names are case-insensitive (HTTP-14), so ``mCP-sESSION-iD`` names the same header as
``Mcp-Session-Id``: a client that looks header names up case-sensitively loses the 2025 session
id it was issued (then HS-19 and HS-11 catch what follows) or misreads a 2026 answer. The
respelling lands on the answer to the first 2025 ``initialize`` that issues a session id, and on
the first 2026 answer no other case took; only HTTP/1 answers are respelled (HTTP/2 writes names
in lower case). The refusal answers the first 2026 ``tools/call`` with ``400`` and
``-32020`` about its ``Mcp-Param-*`` headers, on the server's behalf: the client re-reads
``tools/list`` and retries under a new id (HTTP-22).
"""

from __future__ import annotations

from typing import Any

from mcp_assay.addon.inject.plan import Case, InjectFamily
from mcp_assay.probe_names import ProbeName
from mcp_assay.protocol import Era, ErrorCode

__all__ = ["CASES", "REFUSAL", "refusal", "respelled"]

_HTTP = frozenset({"http"})

REFUSAL = Case(
    name=ProbeName.INJECT_HEADER_REFUSAL,
    family=InjectFamily.HEADERS,
    era=Era.MODERN,
    transports=_HTTP,
    intent="answered 400 / -32020 about Mcp-Param headers on the server's behalf: the client re-reads tools/list "
    "and retries under a new id (HTTP-22)",
    point=lambda facts: facts.is_request and facts.method == "tools/call",
)

CASE_LEGACY = Case(
    name=ProbeName.INJECT_HEADER_CASE,
    family=InjectFamily.HEADERS,
    era=Era.HANDSHAKE,
    transports=_HTTP,
    intent="the answer's header names are respelled in another case: the client still finds Mcp-Session-Id and "
    "sends it on every later request (HTTP-14, HS-19)",
    point=lambda facts: facts.is_request and facts.method == "initialize",
    at_response=True,
)

CASE_MODERN = Case(
    name=ProbeName.INJECT_HEADER_CASE,
    family=InjectFamily.HEADERS,
    era=Era.MODERN,
    transports=_HTTP,
    intent="the answer's header names are respelled in another case: the client reads the answer as usual (HTTP-14)",
    point=lambda facts: facts.is_request,
    at_response=True,
)

CASES = (REFUSAL, CASE_LEGACY, CASE_MODERN)


def respelled(name: str) -> str:
    """The same header name in another case (``Mcp-Session-Id`` -> ``mCP-sESSION-iD``)."""
    return name.swapcase()


def refusal(ident: Any) -> dict[str, Any]:
    """The ``HeaderMismatchError`` answering request ``ident``."""
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "error": {
            "code": ErrorCode.HEADER_MISMATCH,
            "message": "Mcp-Param header does not match the tool's x-mcp-header parameters (injected by mcp-assay)",
        },
    }
