"""JSON-RPC (RPC-): message shape, ids, one answer per request, error objects, invalid input.

Rule modules (each registers its checks when imported):

* :mod:`.messages`
* :mod:`.errors`
* :mod:`.invalid`
"""

from . import errors, invalid, messages

RULE_MODULES = (
    messages,
    errors,
    invalid,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
