"""Cancellation (CAN-): cancelled requests fall silent, and cancel notices name requests in flight.

Rule modules (each registers its checks when imported):

* :mod:`.cancelled`
* :mod:`.notices`
* :mod:`.requests`

Helpers beside them (no checks):

* :mod:`._scope`: the cancel notices in the log and the cancellations in scope
"""

from . import cancelled, notices, requests

RULE_MODULES = (
    cancelled,
    notices,
    requests,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
