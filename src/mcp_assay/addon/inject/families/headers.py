"""Header faults: response header names respelled in another legal case, and a ``-32020`` refusal.

Header names are case-insensitive (HTTP-14), so ``mCP-sESSION-iD`` names the same header as
``Mcp-Session-Id``: a client that looks header names up case-sensitively loses the 2025 session
id it was issued (then HS-19 catches what follows) or misreads a 2026 answer. The respelling
lands on the answer to the first 2025 ``initialize`` that issues a session id, and on the first
2026 answer no other case took; only HTTP/1 answers are respelled (HTTP/2 writes names in lower
case). The refusal answers the first 2026 ``tools/call`` with ``400`` and ``-32020`` about its
``Mcp-Param-*`` headers, on the server's behalf: the client re-reads ``tools/list`` and retries
under a new id (HTTP-22), and stays modern (VER-13).
"""

from __future__ import annotations

from typing import Any

from mcp_assay.addon.inject.actions import Made, Reply, Respell, error_answer
from mcp_assay.addon.inject.fault import Fault, FaultFamily, Reaction
from mcp_assay.addon.inject.points import Point
from mcp_assay.spec.rules.handshake.session_ids import clients_send_the_session_id_on_every_request
from mcp_assay.spec.rules.http.client import (
    client_reads_header_names_in_any_case,
    client_refreshes_tools_after_a_parameter_header_rejection,
)
from mcp_assay.spec.rules.versions.clients import http_clients_stay_modern_after_a_modern_refusal
from mcp_assay.vocabulary.protocol import Era, ErrorCode, HeaderKey

__all__ = ["FAULTS", "CASE_LEGACY", "CASE_MODERN", "FAMILY", "REFUSAL", "refusal"]

FAMILY = FaultFamily(
    "headers", 40, "respell response header names in another legal case; refuse one tools/call with -32020 (HTTP)"
)

_HTTP = frozenset({"http"})


def refusal(ident: Any) -> dict[str, Any]:
    """The ``HeaderMismatchError`` answering request ``ident``."""
    message = "Mcp-Param header does not match the tool's x-mcp-header parameters"
    return error_answer(ident, ErrorCode.HEADER_MISMATCH, message)


REFUSAL = Fault(
    name="inject-header-refusal",
    family=FAMILY,
    era=Era.MODERN,
    transports=_HTTP,
    point=Point("the first 2026 `tools/call`", lambda facts: facts.is_request and facts.method == "tools/call"),
    action=Reply(
        status=400,
        make=lambda facts, _: Made.json(refusal(facts.ident)),
        does="answers `400` with `-32020` about `Mcp-Param-*`, in the server's place",
    ),
    expects="answered 400 / -32020 about Mcp-Param headers on the server's behalf: the client re-reads tools/list "
    "and retries under a new id (HTTP-22)",
    reactions=(
        Reaction(
            client_refreshes_tools_after_a_parameter_header_rejection,
            "before retrying the tool the client re-reads `tools/list`, and the retry has a new id; no retry is not "
            "verified",
        ),
        Reaction(
            http_clients_stay_modern_after_a_modern_refusal,
            "a `-32020` is a modern error: the client stays modern, no fallback to `initialize`",
        ),
    ),
    rank=30,
    note="refused {method} with -32020",
)

CASE_LEGACY = Fault(
    name="inject-header-case",
    family=FAMILY,
    era=Era.HANDSHAKE,
    transports=_HTTP,
    point=Point(
        "the answer to the first 2025 `initialize` that issues a session id",
        lambda facts: facts.is_request and facts.method == "initialize",
    ),
    action=Respell(needs=HeaderKey.SESSION_ID),
    expects="the answer's header names are respelled in another case: the client still finds Mcp-Session-Id and "
    "sends it on every later request (HS-19)",
    reactions=(
        Reaction(
            clients_send_the_session_id_on_every_request,
            "every later 2025 request to the endpoint carries the session id the respelled `mCP-sESSION-iD` issued",
        ),
    ),
    rank=39,  # before the held initialize: a client that falls back keeps its session, and meets the rest there
    note="respelled the header names of the answer to {method}",
)

CASE_MODERN = Fault(
    name="inject-header-case",
    family=FAMILY,
    era=Era.MODERN,
    transports=_HTTP,
    point=Point("the first 2026 answer no other case took", lambda facts: facts.is_request),
    action=Respell(),
    expects="the answer's header names are respelled in another case: the client reads the answer as usual (HTTP-14)",
    reactions=(
        Reaction(
            client_reads_header_names_in_any_case,
            "the client's next request to the endpoint (on any connection) is neither the same work asked again nor "
            "a fallback to `initialize`; nothing more is not verified",
        ),
    ),
    rank=61,
    note="respelled the header names of the answer to {method}",
)

FAULTS = (REFUSAL, CASE_LEGACY, CASE_MODERN)
