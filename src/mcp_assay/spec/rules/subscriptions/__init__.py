"""Subscriptions (SUB-): listen streams, their acknowledgement, and the change notifications they carry.

Rule modules (each registers its checks when imported):

* :mod:`.listen`
* :mod:`.streams`
* :mod:`.changes`

Helpers beside them (no checks):

* :mod:`._listens`: listen streams: filter flags, acknowledgements, tags
"""

from . import changes, listen, streams

RULE_MODULES = (
    listen,
    streams,
    changes,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
