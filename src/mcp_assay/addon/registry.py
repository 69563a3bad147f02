"""Every case mcp-assay makes on purpose, in one view: the probe cases it sends and the faults it injects.

The probe cases are declared in :mod:`mcp_assay.cases` (core: the rules import them); the injected
faults in :mod:`mcp_assay.addon.inject`, which only the addon layer may import. :func:`all_cases`
puts both side by side as :class:`~mcp_assay.cases.Case` values, for the registry's own test (is
every requirement the catalogue observes actively fed by some case?) and for anything that lists
what mcp-assay can do.
"""

from __future__ import annotations

from mcp_assay.addon.inject import FAULTS
from mcp_assay.cases import Case, probe_cases

__all__ = ["all_cases", "injection_cases"]


def injection_cases() -> tuple[Case, ...]:
    """The injected faults as the cases their exchanges' tags carry (one per fault and era: what each feeds)."""
    return tuple(fault.tag_case for fault in FAULTS)


def all_cases() -> tuple[Case, ...]:
    """Every probe case, then every injected fault."""
    return (*probe_cases(), *injection_cases())
