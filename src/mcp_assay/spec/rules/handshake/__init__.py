"""The 2025-11-25 handshake and sessions (HS-): initialize, the negotiated version, session ids.

Rule modules (each registers its checks when imported):

* :mod:`.initialize`
* :mod:`.negotiated`
* :mod:`.newer_shapes`
* :mod:`.session_ids`

Helpers beside them (no checks):

* :mod:`._sessions`: 2025 sessions rebuilt from the traffic
"""

from . import initialize, negotiated, newer_shapes, session_ids

RULE_MODULES = (
    initialize,
    negotiated,
    newer_shapes,
    session_ids,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
