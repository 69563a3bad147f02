"""Version faults: one 2026 request refused with ``-32022``, and one ``initialize`` answered with a counter-offer.

The refusal's point is the first request of the session that declares a 2026 version, whatever
its method (a client's ``server/discover``, or its first ``tools/list`` when it does not
discover), so any 2026 client meets it. The answer lists in ``data.supported`` what the client
can fall back to: the versions the server advertised in a discover answer the session already
carried, else the revisions mcp-assay knows, without the one requested. The request never
reaches the server. What the client does next is judged by VER-05 (retry from the list under a
new id, or stop; never the refused version again), VER-13 on HTTP and VER-12 on stdio (no blind
fallback).

The counter-offer answers an ``initialize`` no other case took, in the server's place, with a
result naming :data:`UNUSABLE` as the version: a version no revision defines, so no client can
use it, and the 2025 lifecycle page says such a client disconnects (HS-10). The server never
sees that ``initialize``; a client that starts over with a new one meets the server as usual.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.addon.inject.actions import Answering, Made, Reply, error_answer
from mcp_assay.addon.inject.fault import Fault, FaultFamily, Reaction
from mcp_assay.addon.inject.points import Point, RequestFacts
from mcp_assay.cases import Facts
from mcp_assay.spec.rules.handshake.negotiated import clients_leave_a_version_they_cannot_use
from mcp_assay.spec.rules.versions.clients import (
    http_clients_stay_modern_after_a_modern_refusal,
    stdio_clients_stay_modern_after_a_modern_answer,
)
from mcp_assay.spec.rules.versions.requests import clients_retry_refused_versions_from_the_supported_list
from mcp_assay.vocabulary.protocol import Era, ErrorCode

__all__ = ["FAULTS", "COUNTER_OFFER", "FAMILY", "REFUSAL", "UNUSABLE", "counter_offer", "refusal"]

FAMILY = FaultFamily(
    "version", 10, "refuse one 2026 request with -32022; counter-offer one initialize a version no revision defines"
)

UNUSABLE = "1999-01-01"
"""The counter-offered version: shaped like a revision, but none was ever published under it."""

STAYS_MODERN = (
    "the client's next request (HTTP: to the endpoint, on any connection) stays modern, or is an `initialize` "
    "offering a version the list names when it lists only handshake-era ones; never a blind fallback"
)


def refusal(ident: Any, requested: str | None, supported: list[str]) -> dict[str, Any]:
    """The ``UnsupportedProtocolVersionError`` answering request ``ident``."""
    data = {"supported": supported, "requested": requested or ""}
    message = f"Unsupported protocol version {requested}"
    return error_answer(ident, ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, message, data)


def _refuse(facts: RequestFacts, plan: Answering) -> Made:
    supported = plan.supported_for(facts.version)
    return Made.json(refusal(facts.ident, facts.version, supported), Facts(supported=tuple(supported)))


def counter_offer(ident: Any) -> dict[str, Any]:
    """An ``InitializeResult`` naming :data:`UNUSABLE`, answering request ``ident``."""
    server = {"name": "mcp-assay (an injected counter-offer)", "version": "0"}
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "result": {"protocolVersion": UNUSABLE, "capabilities": {}, "serverInfo": server},
    }


REFUSAL = Fault(
    name="inject-version-refusal",
    family=FAMILY,
    era=Era.MODERN,
    transports=frozenset({"http", "stdio"}),
    point=Point(
        "the first request declaring a 2026 version (a `server/discover`, or whatever comes first)",
        lambda facts: facts.is_request,
    ),
    action=Reply(
        status=400,
        make=_refuse,
        does="answers `400` with `-32022`: `data.supported` is what the server advertised in a discover the "
        "session saw (else the revisions mcp-assay knows), without the one requested",
    ),
    expects="answered 400 / -32022 on the server's behalf: the client retries with a version from data.supported "
    "under a new id, or stops (VER-05)",
    reactions=(
        Reaction(
            clients_retry_refused_versions_from_the_supported_list,
            "the retry (the same method, or `initialize`) names a version from `data.supported` under a new id; "
            "never the refused version again, neither as the client's next request to the endpoint (on any "
            "connection) nor on the refused request's connection; sending nothing more is not verified",
        ),
        Reaction(http_clients_stay_modern_after_a_modern_refusal, STAYS_MODERN),
        Reaction(stdio_clients_stay_modern_after_a_modern_answer, STAYS_MODERN),
    ),
    rank=10,
    note="refused {method} {version} with -32022",
)

COUNTER_OFFER = Fault(
    name="inject-version-counter-offer",
    family=FAMILY,
    era=Era.HANDSHAKE,
    transports=frozenset({"http", "stdio"}),
    point=Point(
        "the first `initialize` no other case took", lambda facts: facts.is_request and facts.method == "initialize"
    ),
    action=Reply(
        status=200,
        make=lambda facts, _: Made.json(counter_offer(facts.ident), Facts(offered=UNUSABLE)),
        does=f"answers `initialize` in the server's place with a result whose `protocolVersion` is `{UNUSABLE}`, a "
        "version no revision defines",
    ),
    expects=f"the initialize result counter-offers {UNUSABLE}, which the client cannot use: it disconnects (HS-10)",
    reactions=(
        Reaction(
            clients_leave_a_version_they_cannot_use,
            "the client goes no further with that server: `notifications/initialized` or any request in that "
            "session (or without one) fails; a new `initialize`, or closing the stdio connection, passes; nothing "
            "more on HTTP is not verified",
        ),
    ),
    rank=45,
    note=f"answered {{method}} offering {{version}} with a counter-offer of {UNUSABLE}",
)

FAULTS = (REFUSAL, COUNTER_OFFER)
