"""Tools (TOOL-): tool definitions, calls and their results, tool errors, and the tools/call headers.

Rule modules (each registers its checks when imported):

* :mod:`.definitions`
* :mod:`.results`
* :mod:`.errors`
* :mod:`.headers`
"""

from . import definitions, errors, headers, results

RULE_MODULES = (
    definitions,
    results,
    errors,
    headers,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
