"""Requests a harness of the user's own marks as deliberate probes, so the proxy never blames the client for them.

A test harness that sends a gateway or a server something wrong on purpose through the proxy (a body that is
not JSON, a foreign ``Origin``, a method that does not exist) wants the answer judged, as ``mcp-assay run``
judges its own probes, and the request not held against the client that sent it. It names the probe case in
:data:`PROBE_HEADER` (``X-Mcp-Assay-Probe: invalid-json``; ``mcp-assay checks`` and the ``probe`` field of a
``run`` recording show the names); the proxy tags the request with that registered case, exactly as ``run``
tags its own, so the recording carries the tag and every report says ``probe``. The header is forwarded
unchanged (the proxy edits nothing); a name the registry does not know tags nothing, so a client cannot
excuse arbitrary traffic, and the header stays in the recording as evidence of who marked what.
"""

from __future__ import annotations

from typing import Final

from mcp_assay.cases import lookup
from mcp_assay.wire.model import Headers, Probe

__all__ = ["PROBE_HEADER", "marked_probe"]

PROBE_HEADER: Final = "X-Mcp-Assay-Probe"


def marked_probe(headers: Headers) -> Probe | None:
    """The tag of a request whose :data:`PROBE_HEADER` names a registered probe case; ``None`` otherwise."""
    name = (headers.get(PROBE_HEADER) or "").strip()
    case = lookup(name) if name else None
    if case is None:
        return None
    return Probe.of(case, f"marked by the sender ({PROBE_HEADER}): {case.sends}: {case.expects}")
