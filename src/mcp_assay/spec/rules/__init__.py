"""Every rule mcp-assay judges traffic with; importing this package registers them all.

Modules are named by catalogue area and theme (``http_headers``, ``versions_discover``, ...);
those whose name starts with ``_`` hold helpers several of them share and declare no checks.
Rules are pure functions over an exchange log (see :mod:`mcp_assay.checks`); they judge
live proxy traffic, stdio taps, active probes and recordings alike.
"""

import pkgutil
from importlib import import_module

MODULES = tuple(sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")))

for _name in MODULES:
    import_module(f"{__name__}.{_name}")
