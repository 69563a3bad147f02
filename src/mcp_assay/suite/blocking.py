"""One root cause, one finding: cases that could not run say why, and what blocked them.

When a prerequisite fails — no ``server/discover`` answer to read capabilities from, a
``tools/list`` that errors, a server process that died, a credential the server refused, a rate
limit that outlasted the budget, a defect in the suite itself — the dependent probes are not sent
at all, so no cascade of failures is produced. Each such decision is a :class:`Skip` (also written
to the log as an ``Observation`` of kind ``skip``, so a recording carries it), and
:func:`annotate` turns the generic "nothing observed" verdicts of the checks those probes would
have fed into *not verified* with the skip's reason and ``blocked_by`` naming the check whose
failure caused it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from mcp_assay.vocabulary.verdicts import Outcome, Verdict

__all__ = ["Skip", "annotate", "skip_from_observation"]

_REQUIREMENT = re.compile(r"^[A-Z]+-\d{2}$")


@dataclass(frozen=True)
class Skip:
    """Cases of a probe family that were not run, and why."""

    family: str
    requirements: frozenset[str]
    """Requirement IDs whose checks depended on the cases left out."""
    reason: str
    case: str | None = None
    blocked_by: str | None = None
    """A requirement ID (resolved to the check that failed it) or a check name."""
    everything: bool = False
    """The skip covers every check (a refused credential, an unreachable target)."""
    untried: str | None = None
    """The kind of listed item (``tools``, ``prompts``, ``resources``) whose not being called caused the skip: the
    report counts what it left unverified as what calling one would reach (:mod:`mcp_assay.report.untried`)."""

    def data(self) -> dict[str, Any]:
        return {
            "untried": self.untried,
            "family": self.family,
            "case": self.case,
            "requirements": sorted(self.requirements),
            "reason": self.reason,
            "blocked_by": self.blocked_by,
            "everything": self.everything,
        }


def skip_from_observation(data: Mapping[str, Any]) -> Skip:
    """Rebuild a :class:`Skip` from the ``skip`` observation a run recorded."""
    return Skip(
        family=str(data.get("family", "")),
        requirements=frozenset(str(item) for item in data.get("requirements", ())),
        reason=str(data.get("reason", "")),
        case=data.get("case") if isinstance(data.get("case"), str) else None,
        blocked_by=data.get("blocked_by") if isinstance(data.get("blocked_by"), str) else None,
        everything=bool(data.get("everything", False)),
        untried=data.get("untried") if isinstance(data.get("untried"), str) else None,
    )


def _resolve(blocked_by: str | None, verdicts: Sequence[Verdict]) -> str | None:
    """A requirement ID becomes the name of the check that failed it (or the ID when none did)."""
    if blocked_by is None or not _REQUIREMENT.match(blocked_by):
        return blocked_by
    for verdict in verdicts:
        if verdict.outcome is Outcome.FAILED and blocked_by in verdict.requirements:
            return verdict.check
    return blocked_by


def _untouched(verdict: Verdict) -> bool:
    """A verdict that judged nothing: its outcome only says the traffic lacked what it needs."""
    return verdict.outcome is Outcome.NOT_VERIFIED and verdict.judged == 0 and verdict.blocked_by is None


def annotate(verdicts: Sequence[Verdict], skips: Iterable[Skip]) -> list[Verdict]:
    """Replace "nothing observed" on checks fed by skipped cases with the skip's reason and blocker.

    The most specific skip wins (fewest requirements); a skip that covers everything (refused
    credentials, unreachable target) also turns passes and failures into not verified, because an
    unauthenticated or dead run establishes nothing about conformance."""
    ordered = sorted(skips, key=lambda skip: (skip.everything, len(skip.requirements)))
    result = []
    for verdict in verdicts:
        chosen = None
        for skip in ordered:
            if skip.everything and verdict.outcome is not Outcome.NOT_APPLICABLE:
                chosen = skip
                break
            if _untouched(verdict) and skip.requirements.intersection(verdict.requirements):
                chosen = skip
                break
        if chosen is None:
            result.append(verdict)
            continue
        result.append(
            replace(
                verdict,
                outcome=Outcome.NOT_VERIFIED,
                reason=chosen.reason,
                blocked_by=_resolve(chosen.blocked_by, verdicts),
                evidence=() if chosen.everything else verdict.evidence,
                violations=0 if chosen.everything else verdict.violations,
            )
        )
    return result
