"""Streamable HTTP (HTTP-): what a client's POSTs carry, what the endpoint answers, headers, and streams of both eras.

Rule modules (each registers its checks when imported):

* :mod:`.client`
* :mod:`.endpoint`
* :mod:`.headers`
* :mod:`.streams`
* :mod:`.legacy_streams`

Helpers beside them (no checks):

* :mod:`._exchanges`: header names, the era of an exchange, request POSTs
* :mod:`._header_audit`: the header audit of one 2026 request POST
"""

from . import client, endpoint, headers, legacy_streams, streams

RULE_MODULES = (
    client,
    endpoint,
    headers,
    streams,
    legacy_streams,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
