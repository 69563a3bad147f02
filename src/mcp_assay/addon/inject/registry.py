"""Every injected fault and family, named in :mod:`mcp_assay.addon.inject.families`, in the order they are tried.

Each module the families package names (``MODULES``) declares its ``FAMILY`` and its ``FAULTS``;
nothing else lists them. The registry orders the cases by ``rank`` (the order a request is offered to them), the
families by theirs (the order help texts and docs name them), and turns ``--inject`` text into
families. A module whose cases name another family, two cases of one name and era, or two
families of one name are refused at import: the registry is the one place they meet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mcp_assay.addon.inject.families import MODULES
from mcp_assay.addon.inject.fault import Fault, FaultFamily
from mcp_assay.addon.inject.plan import DEFAULT_HOLD_MS, Plan
from mcp_assay.vocabulary.errors import CatalogueError, ConfigError

__all__ = [
    "FAULTS",
    "FAMILIES",
    "MAX_HOLD_MS",
    "STDIO_FAMILIES",
    "build_plan",
    "check_hold_ms",
    "family_names",
    "parse_families",
]

MAX_HOLD_MS = 600_000


def _load() -> tuple[tuple[FaultFamily, ...], tuple[Fault, ...]]:
    families: dict[str, FaultFamily] = {}
    cases: list[Fault] = []
    for module in MODULES:
        family, declared = getattr(module, "FAMILY", None), getattr(module, "FAULTS", None)
        if not isinstance(family, FaultFamily) or not isinstance(declared, tuple):
            raise CatalogueError(f"{module.__name__} declares no FAMILY and FAULTS")
        if families.setdefault(family.name, family) is not family:
            raise CatalogueError(f"two injection families are named {family.name}")
        for case in declared:
            if not isinstance(case, Fault) or case.family is not family:
                raise CatalogueError(f"{module.__name__}: {case!r} is not a case of the {family.name} family")
            cases.append(case)
    keys = [case.key for case in cases]
    if len(set(keys)) != len(keys):
        raise CatalogueError("two injection cases share a name and an era")
    return (
        tuple(sorted(families.values(), key=lambda family: family.rank)),
        tuple(sorted(cases, key=lambda case: case.rank)),
    )


FAMILIES, FAULTS = _load()
"""The families, in the order they are listed, and every case, in the order a request is offered to them."""
STDIO_FAMILIES = frozenset(case.family for case in FAULTS if "stdio" in case.transports)
"""The families that have a case on stdio (the rest are HTTP's: sessions, headers and streams)."""


def family_names() -> str:
    """The families as help texts list them (``version, session, ...``)."""
    return ", ".join(family.name for family in FAMILIES)


def parse_families(text: str | Iterable[str] | None) -> frozenset[FaultFamily]:
    """``version,hold`` or ``all`` -> the families; empty -> none. Unknown names are a :class:`ConfigError`."""
    items = [text] if isinstance(text, str) or text is None else list(text)
    names = [part.strip().lower() for item in items for part in (item or "").split(",") if part.strip()]
    if "all" in names:
        return frozenset(FAMILIES)
    known = {family.name: family for family in FAMILIES}
    unknown = [name for name in names if name not in known]
    if unknown:
        choices = ", ".join([*known, "all"])
        raise ConfigError(f"--inject {','.join(unknown)}: unknown famil{'y' if len(unknown) == 1 else 'ies'}; "
                          f"choose from {choices}")  # fmt: skip
    return frozenset(known[name] for name in names)


def check_hold_ms(value: int) -> int:
    """``--inject-hold-ms``: positive, and at most ten minutes."""
    if not 0 < value <= MAX_HOLD_MS:
        raise ConfigError(f"--inject-hold-ms must be between 1 and {MAX_HOLD_MS} (got {value})")
    return value


def build_plan(
    families: Iterable[FaultFamily], *, transport: str, hold_ms: int = DEFAULT_HOLD_MS, window: Sequence[str] = ()
) -> Plan | None:
    """The plan of one proxy or tap session over ``transport``; ``None`` when no family is asked for."""
    chosen = frozenset(families)
    if not chosen:
        return None
    cases = tuple(case for case in FAULTS if transport in case.transports and case.family in chosen)
    return Plan(families=chosen, cases=cases, hold_ms=check_hold_ms(hold_ms), window=tuple(window))
