"""Version negotiation (VER-): every 2026 request names its version, discovery, offered versions, statelessness.

Rule modules (each registers its checks when imported):

* :mod:`.requests`
* :mod:`.discover`
* :mod:`.offered`
* :mod:`.clients`
* :mod:`.stateless`

Helpers beside them (no checks):

* :mod:`._eras`: the revisions' eras, the server's discover answers, modern requests
"""

from . import clients, discover, offered, requests, stateless

RULE_MODULES = (
    requests,
    discover,
    offered,
    clients,
    stateless,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
