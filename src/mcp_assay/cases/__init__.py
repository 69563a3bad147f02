"""Every case mcp-assay sends on purpose, declared once, by family: the registry.

Each module here declares one family's cases (:class:`~mcp_assay.cases.model.Case`: name, family,
the requirement IDs it feeds, what it sends, what the specification expects). Everything else is
derived from them: a suite family's requirements (:mod:`mcp_assay.suite.probes`), the probe
table in ``docs/probes.md`` (:mod:`mcp_assay.suite.probes.table`), the family list the help texts show,
and the recordings' probe tags, read back to the same case (:func:`lookup`). Rules import the
case they judge and select exchanges by it (``probe.case is envelope.FOREIGN_ORIGIN``) or by a typed
attribute of it (``probe.case.credential``).

The faults the proxy and the tap inject toward a client are the injection registry's
(:mod:`mcp_assay.addon.inject`); an injected exchange carries a case made there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_assay.cases import (
    auth,
    behaviour,
    burst,
    completion,
    discover,
    elsewhere,
    envelope,
    explore,
    gateway,
    handshake,
    listen,
    methods,
    mrtr,
    pagination,
    params,
    prompts,
    resources,
    sdk,
    tokens,
    tools,
    versioning,
)
from mcp_assay.cases.model import PAGE_SUFFIX, Case, Credential, Judging
from mcp_assay.cases.sending import NO_FACTS, Explored, ExploreRole, Facts, FaultKind, Phase, Refusal

__all__ = [
    "BY_FAMILY",
    "NO_FACTS",
    "Case",
    "Credential",
    "ExploreRole",
    "Explored",
    "Facts",
    "FaultKind",
    "Judging",
    "Phase",
    "Refusal",
    "case_of_record",
    "families",
    "lookup",
    "probe_cases",
]

BY_FAMILY: dict[str, tuple[Case, ...]] = {
    "discover": discover.CASES,
    "handshake": handshake.CASES,
    "versioning": versioning.CASES,
    "tools": tools.CASES,
    "prompts": prompts.CASES,
    "resources": resources.CASES,
    "pagination": pagination.CASES,
    "completion": completion.CASES,
    "mrtr": mrtr.CASES,
    "listen": listen.CASES,
    "listen-writes": listen.WRITES_CASES,
    "envelope": (*envelope.CASES, *params.CASES),
    "methods": methods.CASES,
    "auth": auth.CASES,
    "tokens": tokens.CASES,
    "behaviour": behaviour.CASES,
    "sdk": sdk.CASES,
    "discover-last": discover.LATER_CASES,
    "burst": burst.CASES,
    "gateway": gateway.CASES,
    "explore": explore.CASES,
    "probe-server": tuple(case for case in elsewhere.CASES if case.family == "probe-server"),
    "demo": tuple(case for case in elsewhere.CASES if case.family == "demo"),
}
"""Every probe case by the family that sends it, families in the order a run sends them."""

_BY_KEY: dict[tuple[str, str], list[Case]] = {}
_BY_NAME: dict[str, list[Case]] = {}
for _cases in BY_FAMILY.values():
    for _case in _cases:
        _BY_KEY.setdefault((_case.family, _case.name), []).append(_case)
        _BY_NAME.setdefault(_case.name, []).append(_case)


def probe_cases() -> tuple[Case, ...]:
    """Every probe case, family by family."""
    return tuple(case for cases in BY_FAMILY.values() for case in cases)


def families() -> tuple[str, ...]:
    """The families that send probe cases, in the order a run sends them."""
    return tuple(BY_FAMILY)


def _pick(found: list[Case], fields: Mapping[str, Any]) -> Case:
    for case in found:
        if case.marker is not None and fields.get(case.marker[0]) == case.marker[1]:
            return case
    return next((case for case in found if case.marker is None), found[0])


def lookup(name: str, family: str = "", fields: Mapping[str, Any] | None = None) -> Case | None:
    """The registered case a recording names (its ``name`` and ``family``, its marker among ``fields``); a page
    of a paged case from its name; ``None`` when the registry has none of that name."""
    fields = fields or {}
    found = _BY_KEY.get((family, name)) or _BY_NAME.get(name)
    if found:
        return _pick(found, fields)
    base, suffix, number = name.rpartition(PAGE_SUFFIX)
    if suffix and number.isdigit() and int(number) > 1:
        root = lookup(base, family, fields)
        if root is not None and root.paged:
            return root.page(int(number))
    return None


def case_of_record(fields: Mapping[str, Any]) -> Case:
    """The case a recorded probe tag names: the registry's, or one made from what the record says (a name the
    registry does not know: an injected fault, an older or foreign recording)."""
    name, family = str(fields.get("name", "")), str(fields.get("family", ""))
    found = lookup(name, family, fields)
    if found is not None:
        return found
    control, alone = fields.get("control"), fields.get("alone")
    return Case.unregistered(
        name, family, fields,
        control=lookup(control) if isinstance(control, str) else None,
        alone=lookup(alone) if isinstance(alone, str) else None,
    )  # fmt: skip
