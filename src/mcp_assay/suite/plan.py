"""What a run will do, settled before anything is sent: the checks it judges with and the families it sends.

A setting that cannot work (``--spec-version`` outside the window, or a handshake revision with
``--modern-only``; an ``--only`` word that names nothing, or an opt-in family the run does not ask
for) is bad input, refused here with one clear line before a server is started or a sign-in begun.

``--only`` takes two kinds of words, and a narrowed run never passes what the full run fails:

* a probe family (lower case: ``tools``, ``prompts``, ``auth``) narrows the *probes*: only the named
  families are sent (after those whose listings they work on: ``ProbeFamily.needs``), and every check
  judges their traffic. The report gives in full the checks of
  the requirements those families feed; any other check is reported only when it failed on that
  traffic (a pass there would say nothing of what the other families show), else it is *not selected*;
* a requirement ID or prefix (upper case: ``VER``, ``HTTP-2``, ``TOOL-09``) or a check's whole name
  narrows the *checks*: only those judge. The families that feed the requirements are sent too;
  when no family is named, every family when one of the requirements is observed passively (any
  message may show it), so the checks see what the full run shows them.

Where a family that feeds a check's requirement (or, for a passively observed one, any family) was
left out, a pass on the probes that were sent is *not verified*, saying so: those families might
have failed it, as the full run would show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from mcp_assay.spec.checks import Check
from mcp_assay.spec.engine import registered_checks, split_only
from mcp_assay.spec.requirements import catalogue
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import ProbeFamily
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.vocabulary.verdicts import Outcome, Verdict

__all__ = ["Plan", "check_revisions", "plan_run", "select_families"]

OPT_IN: dict[str, tuple[Callable[[SuiteConfig], bool], str]] = {
    "explore": (lambda config: bool(config.explore), "add --explore (exploring calls tools, so it is opt-in)"),
    "burst": (
        lambda config: config.rate_limit_probe is not None,
        "name a read-only tool in the config file's rate_limit_probe (a burst takes load, so it is opt-in)",
    ),
}
"""The families a run sends only when asked, by name: whether this run asks, and how to ask."""


@dataclass(frozen=True)
class Plan:
    """The checks a run judges with and the families it sends, in order."""

    checks: list[Check] | None
    """The checks ``--only`` selects; ``None`` for every check."""
    families: list[ProbeFamily]
    reported: frozenset[str] | None = None
    """With families named and no check: the requirements they feed, whose checks are reported in full (any
    other check only when it failed); ``None`` when every verdict is reported."""
    unsent: tuple[ProbeFamily, ...] = ()
    """Families the full run would send that this one does not (``--only``)."""
    only: str = ""

    def narrowed(self, verdicts: Sequence[Verdict]) -> list[Verdict]:
        """The verdicts as a narrowed run may state them: a check outside what the named families feed is *not
        selected* unless it failed on their traffic, and a pass is *not verified* where a family left out feeds
        the same requirement (its probes might fail it, as the full run would show)."""
        if not self.unsent:
            return list(verdicts)
        checks = {check.name: check for check in registered_checks()}
        kept: list[Verdict] = []
        for verdict in verdicts:
            outside = self.reported is not None and not self.reported.intersection(verdict.requirements)
            if outside and verdict.outcome in (Outcome.PASSED, Outcome.NOT_VERIFIED):
                reason = (
                    f"not selected: --only {self.only} sends no probe that feeds {', '.join(verdict.requirements)} "
                    "(name its family or requirement, or run without --only)"
                )
                verdict = replace(
                    verdict, outcome=Outcome.NOT_APPLICABLE, reason=reason, evidence=(), judged=0, blocked_by=None
                )
            elif verdict.outcome is Outcome.PASSED:
                left_out = self._left_out(checks.get(verdict.check), verdict.requirements)
                if left_out:
                    shown = ", ".join(left_out[:4]) + (f" and {len(left_out) - 4} more" if len(left_out) > 4 else "")
                    reason = (
                        f"{verdict.reason}, on the probes --only {self.only} sent; the families left out ({shown}) "
                        f"may show {', '.join(verdict.requirements)} too, as a run without --only would"
                    )
                    verdict = replace(verdict, outcome=Outcome.NOT_VERIFIED, reason=reason)
            kept.append(verdict)
        return kept

    def _left_out(self, check: Check | None, requirements: Sequence[str]) -> list[str]:
        """The families not sent whose traffic could bear on ``requirements`` for ``check``: those whose cases feed
        them, or every one when a requirement is observed passively (any message may show it); only those the
        check judges at all, when it says."""
        judged = check.families if check is not None else None
        cat = catalogue()
        passive = any(cat[requirement].observe != "active" for requirement in requirements if requirement in cat)
        return [
            family.name
            for family in self.unsent
            if (passive or family.requirements.intersection(requirements)) and (judged is None or family.name in judged)
        ]


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


def select_families(named: Sequence[str], checks: Sequence[Check] | None) -> list[ProbeFamily]:
    """The families a narrowed run sends: those named, with the ones whose listings they work on, and those
    feeding a requirement a selected check cites; with no family named, every family when one of those
    requirements is observed passively (any message may show it); with neither, every family."""
    cited = {req for check in checks or () for req in check.requirements}
    if not named and checks is None:
        return list(FAMILIES)
    if not named and any(catalogue()[req].observe != "active" for req in cited):
        return list(FAMILIES)
    wanted = set(named) | {need for family in FAMILIES if family.name in named for need in family.needs}
    return [family for family in FAMILIES if family.name in wanted or family.requirements & cited]


def _families_named(config: SuiteConfig, words: Sequence[str]) -> list[str]:
    """The family names among ``--only``'s words, each checked: known, and asked for if it is opt-in."""
    known = {family.name for family in FAMILIES}
    for word in words:
        if word not in known:
            raise ConfigError(
                f"--only {word}: not a probe family (lower case: {', '.join(sorted(known))}), a requirement ID or "
                "prefix (upper case: VER, HTTP-2) or a check's name (mcp-assay checks)"
            )
        opt_in = OPT_IN.get(word)
        if opt_in is not None and not opt_in[0](config):
            raise ConfigError(
                f"--only {word}: the {word} family is opt-in and this run does not ask for it; {opt_in[1]}"
            )
    return list(words)


def plan_run(config: SuiteConfig, spec: SpecSet) -> Plan:
    """The run's plan, or the :class:`~mcp_assay.vocabulary.errors.ConfigError` that says why it cannot be made."""
    check_revisions(config, spec)
    selected = split_only(config.only)
    if selected.unmatched:
        raise ConfigError(f"--only {','.join(selected.unmatched)}: no check cites a requirement starting so")
    named = _families_named(config, selected.others)
    families = [family for family in select_families(named, selected.checks) if family.wanted(config)]
    reported = None
    if named and selected.checks is None:
        reported = frozenset().union(*(family.requirements for family in families if family.name in named))
    unsent = tuple(family for family in FAMILIES if family.wanted(config) and family not in families)
    return Plan(checks=selected.checks, families=families, reported=reported, unsent=unsent, only=config.only or "")
