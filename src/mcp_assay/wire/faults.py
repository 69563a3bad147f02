"""What mcp-assay did to an exchange on the server's behalf: the kinds of injected fault, as the rules read them.

``--inject`` (the proxy and the tap) answers a request in the server's place, holds its answer
back, respells the answer's header names or cuts its event stream, and tags the exchange with a
:class:`~mcp_assay.wire.model.Probe` whose ``injected`` is set. The tag's ``fault`` (one of the typed
facts a probe carries) says which of these it did. A rule that judges a client's reaction selects
the exchanges by what was done to them (an answer held back, header names respelled), never by the
name of the case that did it: a new injection case that does one of these things is judged with no
change to any rule.
"""

from __future__ import annotations

from mcp_assay.cases.sending import FaultKind
from mcp_assay.wire.model import Probe

__all__ = ["FaultKind", "fault_kind_of"]

_BEFORE_THE_TAG = {
    "inject-held-answer": FaultKind.HELD,
    "inject-held-initialize": FaultKind.HELD,
    "inject-header-case": FaultKind.RESPELLED,
}
"""Recordings written before the tag existed: the cases whose fault a rule reads, by the names they carried."""


def fault_kind_of(probe: Probe | None) -> FaultKind | None:
    """The fault an injected exchange carries; ``None`` for any other exchange."""
    if probe is None or not probe.injected:
        return None
    if probe.facts.fault is not None:
        return probe.facts.fault
    return _BEFORE_THE_TAG.get(probe.name)
