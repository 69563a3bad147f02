"""Gateways (GW-): what an intermediary changed between its two hops.

Rule modules (each registers its checks when imported):

* :mod:`.streams`: notifications and server-to-client requests on a request's stream (GW-01..03, GW-06, GW-07,
  GW-16)
* :mod:`.cancellation`: cancellations passed upstream (GW-04, GW-05)
* :mod:`.answers`: answers, errors, content, renamed tools and cursors (GW-08..11)
* :mod:`.sessions`: versions, ended sessions, principals and Origin (GW-12..15)

Helpers beside them (no checks):

* :mod:`._relays`: the two hops matched (the :class:`~mcp_assay.wire.hops.Correlation` of the judged window)
"""

from . import answers, cancellation, sessions, streams

RULE_MODULES = (
    streams,
    cancellation,
    answers,
    sessions,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
