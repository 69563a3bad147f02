"""Known findings: a baseline file that lets CI pass on failures someone has already explained.

A server adopting a conformance tool usually has findings on day one, some of them in an SDK it
cannot fix. The baseline lists them, each with the reason it is accepted (an upstream bug, a
decision, a ticket). A failed result an entry matches is reported as KNOWN, with that reason, and
no longer decides the exit code; everything else still does, so a new failure turns CI red.

It works in the other direction too: an entry whose check now passes is *stale* and fails the run
until it is removed, so the file cannot outlive the bug it excused and hide its return. An entry
the run could not confirm either way (the check was not verified, or did not run) is only noted.

Entries name a check, a requirement ID, or both, optionally narrowed to one revision; the file is
checked against the registered checks and the catalogue before any work starts.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from mcp_assay.report.model import BaselineStatus, Report
from mcp_assay.userinput.files import read_yaml
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Outcome, Verdict

__all__ = [
    "BASELINE_SCHEMA",
    "Baseline",
    "KnownFinding",
    "apply_baseline",
    "baseline_text",
    "load_baseline",
    "read_baseline",
]

BASELINE_SCHEMA = "mcp-assay.baseline/1"
_KEYS = frozenset({"check", "requirement", "revision", "reason"})


@dataclass(frozen=True, slots=True)
class KnownFinding:
    """One accepted failure and why it is accepted."""

    reason: str
    check: str | None = None
    requirement: str | None = None
    revision: str | None = None

    def matches(self, verdict: Verdict) -> bool:
        if self.check is not None and verdict.check != self.check:
            return False
        if self.requirement is not None and self.requirement not in verdict.requirements:
            return False
        if self.revision is None:
            return True
        if verdict.revision is not None:
            return verdict.revision == self.revision
        return not verdict.revisions or self.revision in verdict.revisions

    def describe(self) -> str:
        parts = [
            f"check {self.check}" if self.check else "",
            f"requirement {self.requirement}" if self.requirement else "",
            f"revision {self.revision}" if self.revision else "",
        ]
        return ", ".join(part for part in parts if part)


@dataclass(frozen=True, slots=True)
class Baseline:
    """A loaded baseline file."""

    path: str
    known: tuple[KnownFinding, ...]


def load_baseline(path: str | Path, *, checks: Collection[str], requirements: Collection[str]) -> Baseline:
    """Read and check a baseline; every problem is one :class:`ConfigError` naming the file and entry.

    ``checks`` are the registered check names and ``requirements`` the IDs some check cites: an
    entry naming anything else could never match, which is a mistake worth stopping for."""
    where = Path(path).expanduser()
    data = read_yaml(where, "--baseline")
    if not isinstance(data, Mapping) or data.get("schema") != BASELINE_SCHEMA:
        raise ConfigError(f"--baseline {path}: expected a mapping with schema: {BASELINE_SCHEMA} and a known list")
    unknown = sorted(set(data) - {"schema", "known"})
    if unknown:
        raise ConfigError(f"--baseline {path}: unknown key(s) {', '.join(unknown)}")
    entries = data.get("known")
    entries = [] if entries is None else entries
    if not isinstance(entries, list):
        raise ConfigError(f"--baseline {path}: known must be a list")
    where_entry = f"--baseline {path}: known"
    known = tuple(_entry(item, f"{where_entry}[{n}]", checks, requirements) for n, item in enumerate(entries))
    return Baseline(str(where), known)


class NamedCheck(Protocol):
    """What a baseline needs to know of a check: its name and the requirements it cites."""

    @property
    def name(self) -> str: ...

    @property
    def requirements(self) -> tuple[str, ...]: ...


def read_baseline(path: str | Path | None, checks: Iterable[NamedCheck]) -> Baseline | None:
    """Load ``--baseline`` against the checks that exist (``None`` without a path)."""
    if not path:
        return None
    known = list(checks)
    cited = {ident for check in known for ident in check.requirements}
    return load_baseline(path, checks={check.name for check in known}, requirements=cited)


def _entry(item: Any, where: str, checks: Collection[str], requirements: Collection[str]) -> KnownFinding:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: expected a mapping with check and/or requirement, and reason")
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; use {', '.join(sorted(_KEYS))}")
    values = {key: item.get(key) for key in _KEYS}
    if isinstance(values["revision"], _dt.date):
        values["revision"] = values["revision"].isoformat()  # YAML reads an unquoted 2025-11-25 as a date
    for key, value in values.items():
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}: {key} must be a string")
    reason = (values["reason"] or "").strip()
    if not reason:
        raise ConfigError(f"{where}: reason is empty; say why this failure is accepted (a ticket, an upstream bug)")
    check, requirement = values["check"], values["requirement"]
    if check is None and requirement is None:
        raise ConfigError(f"{where}: name a check, a requirement, or both")
    if check is not None and check not in checks:
        raise ConfigError(f"{where}: no check is called {check!r} (see `mcp-assay checks`)")
    if requirement is not None and requirement not in requirements:
        raise ConfigError(f"{where}: no check cites requirement {requirement!r} (see `mcp-assay checks`)")
    return KnownFinding(reason=reason, check=check, requirement=requirement, revision=values["revision"])


def apply_baseline(report: Report, baseline: Baseline) -> None:
    """Mark the failed results an entry matches as known; record stale and unconfirmed entries."""
    results: list[Verdict] = []
    matched: set[int] = set()
    for result in report.results:
        result = replace(result, known=None) if result.known is not None else result  # a re-rendered report
        if result.outcome is Outcome.FAILED:
            for number, entry in enumerate(baseline.known):
                if entry.matches(result):
                    matched.add(number)
                    result = replace(result, known=entry.reason)
                    break
        results.append(result)
    report.results = results
    stale, unconfirmed = [], []
    for number, entry in enumerate(baseline.known):
        if number in matched:
            continue
        judged = [result for result in results if entry.matches(result)]
        if any(result.outcome is Outcome.FAILED for result in judged):
            continue  # an earlier entry already took the failure
        if any(result.outcome is Outcome.PASSED for result in judged):
            stale.append(f"{entry.describe()} now passes; remove the entry ({entry.reason})")
        else:
            unconfirmed.append(f"{entry.describe()} was not established by this run ({entry.reason})")
    report.baseline = BaselineStatus(
        path=baseline.path,
        known=sum(1 for result in results if result.known is not None),
        stale=tuple(stale),
        unconfirmed=tuple(unconfirmed),
    )


def baseline_text(results: Iterable[Verdict]) -> str:
    """A baseline accepting every failed result given, each reason left to fill in (a known one keeps its own; the
    comment of a known finding of the peer's SDK says whose it is).

    One entry per check, or per check and revision for a run that tested several revisions: a failure
    in one revision does not excuse the same check in another."""
    lines = [
        "# mcp-assay baseline: failures CI accepts until they are fixed. Fill in every reason (the run",
        "# refuses an empty one); an entry whose check passes again fails the run until it is removed.",
        f"schema: {BASELINE_SCHEMA}",
        "known:",
    ]
    seen: set[tuple[str, str | None]] = set()
    for result in results:
        if result.outcome is not Outcome.FAILED or (result.check, result.revision) in seen:
            continue
        seen.add((result.check, result.revision))
        requirement = result.requirements[0] if result.requirements else None
        lines.append(f"  - check: {result.check}")
        if requirement:
            lines.append(f"    requirement: {requirement}")
        if result.revision:
            lines.append(f'    revision: "{result.revision}"')
        if result.known:
            lines.append(f"    reason: {json.dumps(result.known, ensure_ascii=False)}")
        else:  # the reason is yours to give; the comment says what failed, and whose finding it is known to be
            whose = f" — known in {result.sdk.named} ({result.sdk.label})" if result.sdk is not None else ""
            lines.append(f'    reason: ""  # {" ".join(result.title.split())}{whose}')
    if not seen:
        lines[-1] = "known: []"
    return "\n".join(lines) + "\n"
