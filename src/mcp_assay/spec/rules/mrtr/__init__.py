"""Multi round-trip requests (MRTR-): input_required results, elicitation, and retries that answer them.

Rule modules (each registers its checks when imported):

* :mod:`.input_required`
* :mod:`.elicitation`
* :mod:`.retries`

Helpers beside them (no checks):

* :mod:`._retries`: which request is a retry and which attempt it answers
"""

from . import elicitation, input_required, retries

RULE_MODULES = (
    input_required,
    elicitation,
    retries,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
