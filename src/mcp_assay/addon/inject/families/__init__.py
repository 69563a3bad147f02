"""The ``--inject`` families, one module each: every module here declares its ``FAMILY`` and its ``FAULTS``.

The modules are named below (:data:`MODULES`), as the rule areas name their rule modules: a new family is
a new module here (its faults, with their actions and the checks that judge them), named in
:data:`MODULES`, and nothing else in the injector. The registry (:mod:`mcp_assay.addon.inject.registry`)
reads the families from that tuple.
"""

from . import cut, headers, hold, session, version

MODULES = (cut, headers, hold, session, version)
"""Every family module; their order does not matter (the families and faults carry their ``rank``)."""
