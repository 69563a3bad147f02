"""Behaviour (BEH-): what each principal is offered, that a refusal or a cancelled call changed
nothing, which channel an error took.

Rule modules (each registers its checks when imported):

* :mod:`.principals`
* :mod:`.writes`
* :mod:`.limits`
* :mod:`.channels`

Helpers beside them (no checks):

* :mod:`.cases`: the behaviour cases the suite recorded and how each case's witness moved
"""

from . import channels, limits, principals, writes

RULE_MODULES = (
    principals,
    writes,
    limits,
    channels,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
