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

from mcp_assay.addon.inject.actions import HoldBack
from mcp_assay.addon.inject.fault import Fault, FaultFamily, Reaction
from mcp_assay.addon.inject.points import Point
from mcp_assay.spec.rules.cancellation.notices import (
    cancellations_name_requests_their_sender_issued,
    http_clients_cancel_by_closing_the_stream,
    stdio_cancellations_repeat_the_request_id_exactly,
)
from mcp_assay.spec.rules.cancellation.requests import (
    clients_cancel_requests_whose_answer_is_late,
    initialize_is_never_cancelled,
    legacy_http_clients_do_not_cancel_by_disconnecting,
)
from mcp_assay.spec.rules.handshake.initialize import clients_wait_for_the_initialize_result
from mcp_assay.vocabulary.protocol import Era

__all__ = ["FAULTS", "FAMILY", "HELD_INITIALIZE"]

FAMILY = FaultFamily(
    "hold", 30, "hold back one answer, and separately one initialize answer, past the client's timeout"
)

_BOTH = frozenset({"http", "stdio"})

HELD_INITIALIZE = Fault(
    name="inject-held-initialize",
    family=FAMILY,
    era=Era.HANDSHAKE,
    transports=_BOTH,
    point=Point("the first `initialize`", lambda facts: facts.is_request and facts.method == "initialize"),
    action=HoldBack(),
    expects="the initialize answer is held back past the client's timeout: the client never cancels initialize "
    "(CAN-10)",
    reactions=(
        Reaction(
            initialize_is_never_cancelled,
            "no `notifications/cancelled` names the held `initialize` (dropping it and starting over is allowed)",
        ),
        Reaction(
            clients_wait_for_the_initialize_result,
            "while the `initialize` answer is held the client sends no request but `ping`",
        ),
    ),
    rank=40,
    note="holding the answer to {method} back",
)

LATE = (
    "a client that gives up cancels the request in its era's way (2026 HTTP: closes the stream; stdio and 2025: "
    "`notifications/cancelled` naming its id, type and value); a 2026 notice with the stream kept open, a 2025 "
    "drop without the notice, a notice naming the id only as text, or the work re-sent uncancelled fails; waiting "
    "the hold out is not verified"
)


def _held(era: Era, rank: int, *more: Reaction) -> Fault:
    return Fault(
        name="inject-held-answer",
        family=FAMILY,
        era=era,
        transports=_BOTH,
        point=Point(
            "the first request for ordinary work (not `initialize`, `server/discover`, a listen or a ping)",
            lambda facts: facts.ordinary,
        ),
        action=HoldBack(),
        expects="the answer is held back past the client's timeout: a client that gives up cancels the request "
        "(CAN-13)",
        reactions=(Reaction(clients_cancel_requests_whose_answer_is_late, LATE), NAMED, *more),
        rank=rank,
        note="holding the answer to {method} back",
    )


NAMED = Reaction(
    cancellations_name_requests_their_sender_issued,
    "a `notifications/cancelled` the client sends names a request it issued (the held one), not an id it never used",
)

FAULTS = (
    HELD_INITIALIZE,
    _held(
        Era.MODERN,
        41,
        Reaction(
            stdio_cancellations_repeat_the_request_id_exactly,
            'on stdio the notice repeats the held request\'s id with its JSON type (`1` is not `"1"`)',
        ),
        Reaction(
            http_clients_cancel_by_closing_the_stream,
            "on HTTP closing the stream is the cancellation; a POSTed notice is noted (MAY)",
        ),
    ),
    _held(
        Era.HANDSHAKE,
        42,
        Reaction(
            legacy_http_clients_do_not_cancel_by_disconnecting,
            "a 2025 HTTP client that drops the held request's stream also POSTs `notifications/cancelled` (or resumes)",
        ),
    ),
)
