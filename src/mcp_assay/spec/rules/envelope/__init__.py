"""The request envelope (META-): what every 2026 request carries besides its method, and its _meta keys.

Rule modules (each registers its checks when imported):

* :mod:`.requests`
* :mod:`.meta_keys`
"""

from . import meta_keys, requests

RULE_MODULES = (
    requests,
    meta_keys,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
