"""Held answers: one answer, and separately one ``initialize`` answer, held back past the client's timeout.

The server gets the request and answers at once; mcp-assay keeps the answer from the client for
``--inject-hold-ms`` (or until the client gives up and leaves), then passes it on unchanged. The
point of the held answer is the first request for ordinary work in each era (not ``initialize``,
``server/discover``, a listen or a ping), the point of the held ``initialize`` the first one of
the session. A correct client with a shorter timeout cancels the request (2026 HTTP: it closes
the stream; stdio and 2025: ``notifications/cancelled``), CAN-13, but never its ``initialize``,
CAN-10. A client that simply waits the hold out is *not verified*: its timeout is longer.
"""

from __future__ import annotations

from mcp_assay.addon.inject.plan import Case, InjectFamily
from mcp_assay.probe_names import ProbeName
from mcp_assay.protocol import Era

__all__ = ["CASES", "HELD_INITIALIZE"]

_BOTH = frozenset({"http", "stdio"})

HELD_INITIALIZE = Case(
    name=ProbeName.INJECT_HELD_INITIALIZE,
    family=InjectFamily.HOLD,
    era=Era.HANDSHAKE,
    transports=_BOTH,
    intent="the initialize answer is held back past the client's timeout: the client never cancels initialize (CAN-10)",
    point=lambda facts: facts.is_request and facts.method == "initialize",
)


def _held(era: Era) -> Case:
    return Case(
        name=ProbeName.INJECT_HELD_ANSWER,
        family=InjectFamily.HOLD,
        era=era,
        transports=_BOTH,
        intent="the answer is held back past the client's timeout: a client that gives up cancels the request (CAN-13)",
        point=lambda facts: facts.ordinary,
    )


CASES = (HELD_INITIALIZE, _held(Era.MODERN), _held(Era.HANDSHAKE))
