"""What mcp-assay did to an exchange on the server's behalf: the kinds of injected fault, as the rules read them.

``--inject`` (the proxy and the tap) answers a request in the server's place, holds its answer
back, respells the answer's header names or cuts its event stream, and tags the exchange with a
:class:`~mcp_assay.wire.Probe` whose ``injected`` is set. The tag's ``fault`` says which of these
it did. A rule that judges a client's reaction selects the exchanges by what was done to them (an
answer held back, header names respelled), never by the name of the case that did it: a new
injection case that does one of these things is judged with no change to any rule.
"""

from __future__ import annotations

from enum import StrEnum

from mcp_assay.wire import Probe

__all__ = ["FAULT_TAG", "Fault", "fault_of"]

FAULT_TAG = "fault"
"""The probe tag (and recording key) naming the :class:`Fault`."""


class Fault(StrEnum):
    """One kind of thing ``--inject`` does to an exchange."""

    ANSWERED = "answered"
    """Answered in the server's place: the request never reached the server."""
    HELD = "held"
    """The server's answer was kept from the client for a while (or until the client left)."""
    RESPELLED = "respelled"
    """The answer's header names were respelled in another legal case."""
    CUT = "cut"
    """The server's event stream was ended before its final response, the rest kept for a resumption."""
    RESUMED = "resumed"
    """The rest of a cut stream, handed to the client that resumed it."""


_BEFORE_THE_TAG = {
    "inject-held-answer": Fault.HELD,
    "inject-held-initialize": Fault.HELD,
    "inject-header-case": Fault.RESPELLED,
}
"""Recordings written before the tag existed: the cases whose fault a rule reads, by the names they carried."""


def fault_of(probe: Probe | None) -> Fault | None:
    """The fault an injected exchange carries; ``None`` for any other exchange."""
    if probe is None or not probe.injected:
        return None
    value = probe.tag(FAULT_TAG)
    if isinstance(value, str) and value in Fault._value2member_map_:
        return Fault(value)
    return _BEFORE_THE_TAG.get(str(probe.name))
