"""What a run will do, settled before anything is sent: the checks it judges with and the families it sends.

A setting that cannot work (``--spec-version`` outside the window, or a handshake revision with
``--modern-only``; an ``--only`` that matches no check) is bad input, refused here with one clear
line before a server is started or a sign-in begun. ``--only`` names families, or requirement-ID
prefixes and check names: a family is then sent when it feeds a requirement one of the selected
checks cites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcp_assay.errors import ConfigError
from mcp_assay.protocol import Era
from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import select_checks
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import Family
from mcp_assay.suite.probes import FAMILIES

__all__ = ["Plan", "check_revisions", "plan_run", "select_families"]


@dataclass(frozen=True)
class Plan:
    """The checks a run judges with and the families it sends, in order."""

    checks: list[Check] | None
    """The checks ``--only`` selects; ``None`` for every check."""
    families: list[Family]


def check_revisions(config: SuiteConfig, spec: SpecSet) -> None:
    """``--spec-version`` names a revision of the window, and a modern one with ``--modern-only``."""
    if not config.spec_version:
        return
    revision = spec.require(config.spec_version)
    if config.modern_only and revision.era is not Era.MODERN:
        modern = ", ".join(rev.name for rev in spec.window if rev.era is Era.MODERN) or "none in the window"
        raise ConfigError(
            f"--spec-version {revision.name} is a handshake revision, but --modern-only says the server serves "
            f"none; drop one of them (modern revisions: {modern})"
        )


def _patterns(only: str | None) -> list[str]:
    return [part.strip() for part in (only or "").split(",") if part.strip()]


def select_families(only: str | None, checks: Sequence[Check] | None) -> list[Family]:
    """Families named by a pattern, or feeding a requirement a selected check cites."""
    patterns = _patterns(only)
    if not patterns:
        return list(FAMILIES)
    cited = {req for check in checks or () for req in check.requirements}
    chosen = []
    for family in FAMILIES:
        named = any(pattern.lower() == family.name for pattern in patterns)
        if named or family.requirements & cited:
            chosen.append(family)
    return chosen


def plan_run(config: SuiteConfig, spec: SpecSet) -> Plan:
    """The run's plan, or the :class:`~mcp_assay.errors.ConfigError` that says why it cannot be made."""
    check_revisions(config, spec)
    checks = select_checks(config.only)
    if checks is not None and not checks:
        raise ConfigError(f"--only {config.only}: no check matches")
    families = [family for family in select_families(config.only, checks) if family.wanted(config)]
    return Plan(checks=checks, families=families)
