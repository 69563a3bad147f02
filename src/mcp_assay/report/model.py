"""The one report every part of mcp-assay produces, and its canonical JSON form.

Results from passive rules and active probes land here side by side, each keeping where it came
from and, for a suite run, the revision it was reached in (a run tests every revision the server
serves, each on its own). The report merges them by requirement ID and revision for the summary (a
failure from any source wins, then a pass, then not verified), computes the verdict and the exit
code (a MUST failure in any revision counts), and round-trips through JSON
(``schema: mcp-assay.report/1``) so ``mcp-assay report`` can re-render and merge reports.
"""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from mcp_assay import __version__
from mcp_assay.recording.audit import AuditLine
from mcp_assay.report.about import Stats, Target, evidence_lines, newer_line
from mcp_assay.report.findings import finding_id
from mcp_assay.report.untried import Generated, Untried, coverage_json, generated_from_json, untried_from_json
from mcp_assay.vocabulary.replays import Replay
from mcp_assay.vocabulary.verdicts import (
    Evidence,
    ExitCode,
    ExploredInput,
    Level,
    Outcome,
    Party,
    RequirementText,
    SchemaInfo,
    SdkFinding,
    Severity,
    Side,
    Source,
    Verdict,
)
from mcp_assay.wire.model import Exchange, Observation

__all__ = [
    "REPORT_SCHEMA",
    "AuditLine",
    "BaselineStatus",
    "FailOn",
    "Report",
    "RequirementStatus",
    "SchemaInfo",
    "SdkRecognition",
    "Stats",
    "Target",
    "merge_reports",
    "revision_order",
    "sdk_verdict_part",
    "traffic_stats",
]

REPORT_SCHEMA = "mcp-assay.report/1"

_PRECEDENCE = {Outcome.FAILED: 3, Outcome.PASSED: 2, Outcome.NOT_VERIFIED: 1, Outcome.NOT_APPLICABLE: 0}


class FailOn(StrEnum):
    """Which failed verdicts make the exit code 1."""

    MUST = "must"
    SHOULD = "should"
    NEVER = "never"

    def counts(self, verdict: Verdict) -> bool:
        """Whether this failed verdict makes the exit code 1."""
        return self is not FailOn.NEVER and self.decides(verdict)

    def decides(self, verdict: Verdict) -> bool:
        """Whether this failed verdict belongs to FAILED and the verdict sentence.

        ``never`` only silences the exit code: a MUST-level violation is still a violation.
        """
        if verdict.outcome is not Outcome.FAILED or verdict.known is not None:
            return False
        if self is FailOn.SHOULD:
            return verdict.severity in (Severity.MUST, Severity.SHOULD)
        return verdict.severity is Severity.MUST


@dataclass(frozen=True, slots=True)
class BaselineStatus:
    """What a baseline file did to this report (see :mod:`mcp_assay.report.baseline`)."""

    path: str
    known: int
    """Failed results an entry matched."""
    stale: tuple[str, ...] = ()
    """Entries whose check now passes: each fails the run until it is removed."""
    unconfirmed: tuple[str, ...] = ()
    """Entries this run could neither confirm nor refute."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkRecognition:
    """The SDK a peer is built on, as this report knows it: recognized from what the peer showed, or named with
    ``--sdk`` (see :mod:`mcp_assay.report.sdks`). Failures matching its known findings carry :attr:`Verdict.sdk`."""

    side: str
    """``server`` or ``client``: whose SDK."""
    name: str
    version: str
    """The version whose known findings are compared."""
    label: str = ""
    how: str = "recognized"
    """``recognized`` (from :attr:`signs`) or ``named`` (``--sdk``)."""
    signs: tuple[str, ...] = ()
    """What the peer showed that only this SDK shows, each with where it was seen."""
    transports: tuple[str, ...] = ()
    """The transports the peer was seen on (``http``, ``stdio``): a known finding of one transport matches there."""
    version_shown: bool = False
    """Whether the peer itself showed :attr:`version`."""

    @property
    def named(self) -> str:
        return f"{self.name} {self.version}"

    def describe(self, *, short: bool = False) -> str:
        """What was recognized and why, for a report's header (``short``: the first sign only, for the terminal)."""
        who = f"{self.label} ({self.name})" if self.label else self.name
        if self.how == "named":
            return f"{self.side}: {who} {self.version}, named with --sdk; its known findings are compared"
        if short:
            more = f" and {len(self.signs) - 1} more sign(s)" if len(self.signs) > 1 else ""
            shown = self.signs[0] if self.signs else "what it showed"
            return f"{self.side}: {who} recognized from {shown}{more}; findings known in {self.named} compared"
        version = "" if self.version_shown else f"; the {self.side} does not show its version"
        return (
            f"{self.side}: {who} recognized from {'; '.join(self.signs)} — the findings known in {self.named} are "
            f"compared{version} (--sdk NAME@VERSION names yours, --sdk none turns this off)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "side": self.side,
            "name": self.name,
            "version": self.version,
            "label": self.label,
            "how": self.how,
            "signs": list(self.signs),
            "transports": list(self.transports),
            "version_shown": self.version_shown,
        }

    @classmethod
    def from_json(cls, data: Any) -> SdkRecognition | None:
        if not isinstance(data, Mapping) or not all(
            isinstance(data.get(key), str) for key in ("side", "name", "version")
        ):
            return None
        signs, transports = data.get("signs"), data.get("transports")
        return cls(
            side=str(data["side"]),
            name=str(data["name"]),
            version=str(data["version"]),
            label=str(data.get("label", "")),
            how=str(data.get("how", "recognized")),
            signs=tuple(str(sign) for sign in signs) if isinstance(signs, list) else (),
            transports=tuple(str(item) for item in transports) if isinstance(transports, list) else (),
            version_shown=data.get("version_shown") is True,
        )


@dataclass(frozen=True, slots=True)
class RequirementStatus:
    """All results that cite one requirement, merged."""

    id: str
    outcome: Outcome
    severity: Severity
    checks: tuple[str, ...]
    sources: tuple[Source, ...]
    revision: str | None = None
    """The revision these results were reached in; a requirement binding several revisions has a status per revision."""
    party: Party | None = None
    """Whose conduct these results judged, where a gateway stood between the peers (a status per party)."""


@dataclass
class Report:
    """A conformance report."""

    results: list[Verdict]
    target: Target = field(default_factory=Target)
    """What was judged: ``kind`` (recording, proxy, tap, suite), ``description``, ``transport`` ..."""
    tested: list[str] = field(default_factory=list)
    """The revisions under test, newest first (a suite run tests every revision the server serves, each on its
    own); empty when traffic was judged whatever revisions it carried."""
    revision_note: str = ""
    """Where the revisions under test came from."""
    window: list[str] = field(default_factory=list)
    schemas: list[SchemaInfo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    audit: list[AuditLine] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    generated_at: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    tool: str = f"mcp-assay {__version__}"
    fail_on: FailOn = FailOn.MUST
    baseline: BaselineStatus | None = None
    glossary: dict[str, RequirementText] = field(default_factory=dict)
    """What the catalogue says about each cited requirement (level, side, paraphrase, source)."""
    unjudged: str | None = None
    """Why there was nothing to judge (no MCP peer there: missing, dead, not MCP, only revisions outside the
    window; a session with no traffic). The report then makes no conformance statement: its verdict is
    ``not-judged`` and its exit code 3, whatever results it holds."""
    left_out: str | None = None
    """What of the traffic was not judged although it was there (live judging fell behind and left the later
    exchanges to ``validate``). A run without failures is then conformant only in part, never conformant."""
    untried: list[Untried] = field(default_factory=list)
    """Listed tools, prompts and resources a suite run did not call, get or read, and the setting that would."""
    generated: list[Generated] = field(default_factory=list)
    """Tools a suite run called with arguments drawn from their inputSchema."""
    sdks: list[SdkRecognition] = field(default_factory=list)
    """The SDKs the peers are built on, recognized or named; empty when none was (or ``--sdk none``)."""

    # -- views -----------------------------------------------------------------------------------
    @property
    def revision(self) -> str | None:
        """The revision under test when exactly one was tested."""
        return self.tested[0] if len(self.tested) == 1 else None

    @property
    def title(self) -> str:
        """The heading every format opens with: naming the revisions tested."""
        return f"MCP conformance report — {' and '.join(self.tested)}" if self.tested else "MCP conformance report"

    def result_revisions(self) -> list[str]:
        """The revisions the results were reached in, in the report's order (newest first)."""
        order = [*self.tested, *self.window]
        return revision_order({result.revision for result in self.results if result.revision}, order)

    def applied(self) -> list[Verdict]:
        return [result for result in self.results if result.outcome is not Outcome.NOT_APPLICABLE]

    def failed(self, severity: Severity | None = None) -> list[Verdict]:
        return [
            result
            for result in self.results
            if result.outcome is Outcome.FAILED and (severity is None or result.severity is severity)
        ]

    def with_outcome(self, outcome: Outcome) -> list[Verdict]:
        return [result for result in self.results if result.outcome is outcome]

    def requirements(self) -> list[RequirementStatus]:
        """Results merged per requirement ID and revision: failure wins, then pass, then not verified.

        A requirement that binds several revisions the run tested has one status per revision."""
        grouped: dict[tuple[str, str | None, Party | None], list[Verdict]] = defaultdict(list)
        for result in self.results:
            for ident in result.requirements:
                grouped[(ident, result.revision, result.party)].append(result)
        rank = {name: position for position, name in enumerate(self.result_revisions())}
        merged = []
        for (ident, revision, party), results in sorted(grouped.items(), key=lambda item: _status_key(item[0], rank)):
            best = max(results, key=lambda r: (_PRECEDENCE[r.outcome], r.severity is Severity.MUST))
            merged.append(
                RequirementStatus(
                    id=ident,
                    outcome=best.outcome,
                    severity=best.severity,
                    checks=tuple(dict.fromkeys(r.check for r in results)),
                    sources=tuple(dict.fromkeys(r.source for r in results)),
                    revision=revision,
                    party=party,
                )
            )
        return merged

    def counts(self) -> dict[str, int]:
        """Result counts as the human report shows them."""
        failed_must = [r for r in self.failed() if self.fail_on.decides(r)]
        unknown = [r for r in self.failed() if not self.fail_on.decides(r) and r.known is None]
        recommended = [r for r in unknown if r.severity is not Severity.INFO]
        notes = [r for r in unknown if r.severity is Severity.INFO]
        return {
            "passed": len(self.with_outcome(Outcome.PASSED)),
            "failed": len(failed_must),
            "recommended": len(recommended),
            "notes": len(notes),
            "known": len([r for r in self.failed() if r.known is not None]),
            "not_verified": len(self.with_outcome(Outcome.NOT_VERIFIED)),
            "not_applicable": len(self.with_outcome(Outcome.NOT_APPLICABLE)),
        }

    def violated_requirements(self) -> list[str]:
        ids: dict[str, None] = {}
        for result in self.results:
            if self.fail_on.decides(result):
                ids.update(dict.fromkeys(result.requirements))
        return list(ids)

    def violated_by_revision(self) -> dict[str | None, list[str]]:
        """The violated requirement IDs per revision they were violated in (newest first; ``None`` last)."""
        found: dict[str | None, dict[str, None]] = defaultdict(dict)
        for result in self.results:
            if self.fail_on.decides(result):
                found[result.revision].update(dict.fromkeys(result.requirements))
        order: list[str | None] = [*self.result_revisions(), None]
        return {revision: list(found[revision]) for revision in order if found.get(revision)}

    def _violations_text(self) -> str:
        per_revision = self.violated_by_revision()
        if len(self.result_revisions()) < 2:
            violated = self.violated_requirements()
            return ", ".join(violated[:8]) + ("…" if len(violated) > 8 else "")
        parts = []
        for revision, ids in per_revision.items():
            listed = ", ".join(ids[:8]) + ("…" if len(ids) > 8 else "")
            parts.append(f"{revision}: {listed}" if revision else f"other: {listed}")
        return "; ".join(parts)

    def parties_at_fault(self) -> str:
        """Who is at fault for the violations, counted apart where a gateway stood between the peers (``the
        gateway 3, the server 1``: the requirements each violated); ``""`` when no failure names a party."""
        found: dict[Party, dict[str, None]] = defaultdict(dict)
        for result in self.results:
            if result.party is not None and self.fail_on.decides(result):
                found[result.party].update(dict.fromkeys(result.requirements))
        return ", ".join(f"the {party.value} {len(found[party])}" for party in Party if found.get(party))

    def verdict(self) -> tuple[str, str]:
        """A code and a sentence: the answer to "is this conformant?" (or why it has none)."""
        if self.unjudged is not None:
            return "not-judged", f"not judged — {self.unjudged}"
        counts = self.counts()
        subject = f"conformant to {' and '.join(self.tested)}" if self.tested else "conformant"
        if counts["failed"]:
            violated = self.violated_requirements()
            noun = "requirement" if len(violated) == 1 else "requirements"
            sentence = f"not conformant — {len(violated)} {noun} violated ({self._violations_text()})"
            return "not-conformant", f"{_joined(_joined(sentence, party_verdict_part(self)), sdk_verdict_part(self))}."
        if self.baseline is not None and self.baseline.stale:
            count = len(self.baseline.stale)
            entries = "entry matches" if count == 1 else "entries match"
            return "baseline-stale", (
                f"{subject} apart from the baseline — but {count} baseline {entries} a check that now passes; "
                f"remove {'it' if count == 1 else 'them'} from {self.baseline.path}."
            )
        if counts["passed"] == 0 and counts["recommended"] == 0 and counts["notes"] == 0 and counts["known"] == 0:
            return (
                "nothing-verified",
                "nothing verified — no applicable requirement could be established from this run.",
            )
        if counts["not_verified"] or self.left_out:
            unverified = [f"{counts['not_verified']} could not be verified"] if counts["not_verified"] else []
            sentence = f"{subject} in part — every requirement that could be checked passed; " + "; ".join(
                [*unverified, *filter(None, [self.left_out])]
            )
            return "conformant-in-part", f"{_joined(sentence, sdk_verdict_part(self))}."
        sentence = f"{subject} — every applicable requirement that was checked passed"
        return "conformant", f"{_joined(sentence, sdk_verdict_part(self))}."

    def exit_code(self) -> ExitCode:
        """The process's exit status, one value with :meth:`verdict`: 0 conformant (in part), 1 a counted
        failure, 3 nothing judged (no peer, or nothing verified)."""
        code, _ = self.verdict()
        if code in ("not-judged", "nothing-verified"):
            return ExitCode.NOT_JUDGED
        stale = self.baseline is not None and bool(self.baseline.stale) and self.fail_on is not FailOn.NEVER
        failed = stale or any(self.fail_on.counts(result) for result in self.results)
        return ExitCode.FAILED if failed else ExitCode.CONFORMANT

    # -- JSON ------------------------------------------------------------------------------------
    def target_rows(self) -> list[tuple[str, str]]:
        """The label/value lines a human-readable report opens with: what was judged, and against what."""
        target = self.target
        rows = [("target", target.shown_description), ("kind", target.shown_kind)]
        newer = newer_line(target, self.window)
        if newer is not None:
            rows.append(("newer", newer))
        if target.transport:
            rows.append(("transport", target.transport))
        if self.window:
            # the revisions this tool judges, not the ones the server serves (the revision row says those)
            rows.append(("window", f"{', '.join(self.window)} (the revisions mcp-assay judges)"))
        if self.revision_note:
            rows.append(("revision", self.revision_note))
        if target.replay_caveat:
            rows.append(("replays", target.replay_caveat))
        rows += [("evidence", line) for line in evidence_lines(target)]
        rows += [("sdk", recognition.describe()) for recognition in self.sdks]
        if self.baseline is not None:
            status = self.baseline
            text = f"{status.path}: {status.known} known failure(s) accepted"
            if status.stale:
                text += f", {len(status.stale)} stale entr{'y' if len(status.stale) == 1 else 'ies'}"
            rows.append(("baseline", text))
            rows += [("stale", entry) for entry in status.stale]
            rows += [("unconfirmed", entry) for entry in status.unconfirmed]
        return rows

    def to_json(self) -> dict[str, Any]:
        code, text = self.verdict()
        return {
            "schema": REPORT_SCHEMA,
            "tool": self.tool,
            "generated_at": self.generated_at,
            "target": self.target.to_json(),
            "revisions": {
                "under_test": self.revision,
                "tested": list(self.tested),
                "note": self.revision_note,
                "window": self.window,
                "schemas": [asdict(schema) for schema in self.schemas],
            },
            "fail_on": self.fail_on.value,
            "baseline": asdict(self.baseline) if self.baseline is not None else None,
            "summary": self.counts(),
            "verdict": {
                "code": code,
                "text": text,
                "exit_code": int(self.exit_code()),
                "unjudged": self.unjudged,
                **({"left_out": self.left_out} if self.left_out else {}),
            },
            "requirements": [
                {
                    "id": status.id,
                    "outcome": status.outcome.value,
                    "severity": status.severity.value,
                    "checks": list(status.checks),
                    "sources": [source.value for source in status.sources],
                    "revision": status.revision,
                    **({"party": status.party.value} if status.party is not None else {}),
                    **_text_json(self.glossary.get(status.id)),
                }
                for status in self.requirements()
            ],
            "results": [_result_json(result) for result in self.results],
            "audit": [asdict(line) for line in self.audit],
            "notes": self.notes,
            "stats": self.stats.to_json(),
            "coverage": coverage_json(self.untried, self.generated, self.results),
            **({"sdks": [recognition.to_json() for recognition in self.sdks]} if self.sdks else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Report:
        """Read a report back; raise ValueError (or KeyError/TypeError for a damaged one) otherwise."""
        if not isinstance(data, Mapping):
            raise ValueError(f"not an mcp-assay report (a JSON {type(data).__name__}, expected an object)")
        if data.get("schema") != REPORT_SCHEMA:
            raise ValueError(f"not an mcp-assay report (schema {data.get('schema')!r}, expected {REPORT_SCHEMA})")
        revisions = data.get("revisions", {})
        verdict = data.get("verdict")
        unjudged = verdict.get("unjudged") if isinstance(verdict, Mapping) else None
        left_out = verdict.get("left_out") if isinstance(verdict, Mapping) else None
        under_test = revisions.get("under_test")
        tested = revisions.get("tested", [under_test] if isinstance(under_test, str) else [])
        coverage = data.get("coverage")
        return cls(
            results=[_result_from_json(item) for item in data.get("results", [])],
            target=Target.from_json(data.get("target", {})),
            tested=[str(name) for name in tested] if isinstance(tested, list) else [],
            revision_note=revisions.get("note", ""),
            window=list(revisions.get("window", [])),
            schemas=[SchemaInfo(**schema) for schema in revisions.get("schemas", [])],
            notes=list(data.get("notes", [])),
            audit=[AuditLine(**line) for line in data.get("audit", [])],
            stats=Stats.from_json(data.get("stats", {})),
            generated_at=str(data.get("generated_at", "")),
            tool=str(data.get("tool", "")),
            fail_on=FailOn(data.get("fail_on", "must")),
            baseline=_baseline_from_json(data.get("baseline")),
            glossary=_glossary_from_json(data.get("requirements", [])),
            unjudged=unjudged if isinstance(unjudged, str) else None,
            left_out=left_out if isinstance(left_out, str) else None,
            untried=untried_from_json(coverage.get("untried")) if isinstance(coverage, Mapping) else [],
            generated=generated_from_json(coverage.get("generated")) if isinstance(coverage, Mapping) else [],
            sdks=_sdks_from_json(data.get("sdks")),
        )


def _sdks_from_json(items: Any) -> list[SdkRecognition]:
    found = (SdkRecognition.from_json(item) for item in (items if isinstance(items, list) else ()))
    return [item for item in found if item is not None]


def _joined(sentence: str, part: str) -> str:
    return f"{sentence}; {part}" if part else sentence


def party_verdict_part(report: Report) -> str:
    """The verdict line's count by party at fault where a gateway stood between the peers (``at fault: the gateway 3,
    the server 1``); ``''`` when no failure names a party. One function of its own, joined beside the SDK's count."""
    at_fault = report.parties_at_fault()
    return f"at fault: {at_fault}" if at_fault else ""


def sdk_verdict_part(report: Report) -> str:
    """The verdict line's count of the failures known in the SDK a peer is built on, apart from those of the peer's
    own code: ``3 known in mcp 2.3.0, 0 in the server's own code``; ``''`` when no SDK was recognized or named.

    Counted as the sentence before it counts (violated requirements): a requirement is the SDK's when every failure
    of it that decides the verdict matches a known finding, else the peer's own. Failures already accepted (with
    ``--accept-sdk-findings`` or a baseline) are counted apart. One function of its own, so that another count of the
    same line (by party, for a gateway) is joined beside it."""
    if not report.sdks:
        return ""
    deciding: dict[str, list[Verdict]] = defaultdict(list)
    accepted: dict[str, dict[str, None]] = defaultdict(dict)
    for result in report.results:
        if report.fail_on.decides(result):
            for ident in result.requirements:
                deciding[ident].append(result)
        elif result.outcome is Outcome.FAILED and result.known is not None and result.sdk is not None:
            accepted[result.sdk.named].update(dict.fromkeys(result.requirements))
    known: dict[str, dict[str, None]] = defaultdict(dict)
    own: dict[str, dict[str, None]] = defaultdict(dict)
    for ident, results in deciding.items():
        named = [result.sdk.named for result in results if result.sdk is not None]
        if len(named) == len(results):
            known[named[0]][ident] = None
        else:
            for result in results:
                if result.sdk is None:
                    own[result.party.value if result.party is not None else _party(result.side)][ident] = None
    # a count of zero is said once for each kind, so the reader sees what was weighed: the SDK, the peer's own code
    sides = list(dict.fromkeys(recognition.side for recognition in report.sdks))
    parts = [f"{len(ids)} known in {named}" for named, ids in known.items()] or [f"0 known in {report.sdks[0].named}"]
    parts += [f"{len(ids)} in {_own_code(side)}" for side, ids in own.items()] or [
        f"0 in {_own_code(sides[0] if len(sides) == 1 else 'peers')}"
    ]
    text = ", ".join(parts) if deciding else ""
    taken = [
        f"{len(ids)} failure{'s' if len(ids) != 1 else ''} known in {named} accepted" for named, ids in accepted.items()
    ]
    return "; ".join(part for part in (text, ", ".join(taken)) if part)


def _own_code(party: str) -> str:
    return "the peers' own code" if party == "peers" else f"the {party}'s own code"


def _party(side: Side) -> str:
    return side.value if side in (Side.SERVER, Side.CLIENT) else "peers"


def _text_json(text: RequirementText | None) -> dict[str, str]:
    if text is None:
        return {}
    return {"level": text.level, "side": text.side, "summary": text.summary, "source": text.source}


def _glossary_from_json(items: Any) -> dict[str, RequirementText]:
    texts = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("summary"), str):
            ident = str(item.get("id", ""))
            texts[ident] = RequirementText(
                id=ident,
                level=str(item.get("level", "")),
                side=str(item.get("side", "")),
                summary=str(item["summary"]),
                source=str(item.get("source", "")),
            )
    return texts


def traffic_stats(items: Iterable[Exchange]) -> Stats:
    """How much traffic a report judged: ``exchanges`` (HTTP exchanges, stdio lines, process exits)
    and, apart from them, ``observations`` (audit lines, stderr, notes: what the tool saw beside the traffic)."""
    observations = exchanges = 0
    for item in items:
        if isinstance(item, Observation):
            observations += 1
        else:
            exchanges += 1
    return Stats(exchanges=exchanges, observations=observations)


def _baseline_from_json(data: Any) -> BaselineStatus | None:
    if not isinstance(data, Mapping):
        return None
    return BaselineStatus(
        path=str(data.get("path", "")),
        known=int(data.get("known", 0)),
        stale=tuple(str(item) for item in data.get("stale", ())),
        unconfirmed=tuple(str(item) for item in data.get("unconfirmed", ())),
    )


def _result_json(result: Verdict) -> dict[str, Any]:
    return {
        "id": finding_id(result),
        "check": result.check,
        "title": result.title,
        "area": result.area,
        "requirements": list(result.requirements),
        "level": result.level.value,
        "severity": result.severity.value,
        "side": result.side.value,
        "outcome": result.outcome.value,
        "source": result.source.value,
        "reason": result.reason,
        "evidence": [_evidence_json(item) for item in result.evidence],
        "revisions": list(result.revisions),
        "judged": result.judged,
        "violations": result.violations,
        "blocked_by": result.blocked_by,
        "tags": list(result.tags),
        "known": result.known,
        "graded": result.graded,
        "revision": result.revision,
        **({"party": result.party.value} if result.party is not None else {}),
        **({"sdk": result.sdk.to_json()} if result.sdk is not None else {}),
    }


def _evidence_json(item: Evidence) -> dict[str, Any]:
    """One piece of evidence as JSON; ``explored`` only where ``run --explore`` reported the call, ``replay`` only
    where there is a request to re-send."""
    data = asdict(replace(item, replay=None))
    if data.get("hop") is None:
        data.pop("hop", None)
    if data.get("explored") is None:
        data.pop("explored", None)
    else:
        data["explored"]["steps"] = list(data["explored"]["steps"])
    data.pop("replay", None)
    if item.replay is not None:
        data["replay"] = item.replay.to_json()
    return data


def _evidence_from_json(data: Mapping[str, Any]) -> Evidence:
    fields = {key: value for key, value in data.items() if key not in ("explored", "replay")}
    return Evidence(
        **fields, explored=ExploredInput.from_json(data.get("explored")), replay=Replay.from_json(data.get("replay"))
    )


def _result_from_json(item: Mapping[str, Any]) -> Verdict:
    return Verdict(
        check=str(item["check"]),
        title=str(item.get("title", item["check"])),
        area=str(item.get("area", "")),
        requirements=tuple(item.get("requirements", ())),
        level=Level(item["level"]),
        severity=Severity(item["severity"]),
        side=Side(item["side"]),
        outcome=Outcome(item["outcome"]),
        source=Source(item["source"]),
        reason=str(item.get("reason", "")),
        evidence=tuple(_evidence_from_json(evidence) for evidence in item.get("evidence", [])),
        revisions=tuple(item.get("revisions", ())),
        judged=int(item.get("judged", 0)),
        violations=int(item.get("violations", 0)),
        blocked_by=item.get("blocked_by"),
        tags=tuple(item.get("tags", ())),
        known=item.get("known"),
        graded=item.get("graded"),
        revision=item.get("revision") if isinstance(item.get("revision"), str) else None,
        party=Party(item["party"]) if item.get("party") in {party.value for party in Party} else None,
        sdk=SdkFinding.from_json(item.get("sdk")),
    )


def _merge_pair(first: Verdict, second: Verdict) -> Verdict:
    winner, other = (first, second) if _PRECEDENCE[first.outcome] >= _PRECEDENCE[second.outcome] else (second, first)
    evidence = tuple(dict.fromkeys(winner.evidence + other.evidence))
    return replace(
        winner,
        evidence=evidence,
        judged=first.judged + second.judged,
        violations=first.violations + second.violations,
        revisions=tuple(sorted(set(first.revisions) | set(second.revisions))),
    )


def merge_reports(reports: Sequence[Report]) -> Report:
    """One report from several: results of the same check, source, revision and party are merged, others kept.

    The merged report names every revision any of them tested; a report of captured traffic (which
    tested none) adds none."""
    if not reports:
        raise ValueError("no reports to merge")
    if len(reports) == 1:
        return reports[0]
    merged: dict[tuple[str, Source, str | None, Party | None], Verdict] = {}
    for report in reports:
        for result in report.results:
            key = (result.check, result.source, result.revision, result.party)
            merged[key] = _merge_pair(merged[key], result) if key in merged else result
    base = reports[0]
    judged = [report for report in reports if report.unjudged is None]
    unjudged = [f"{report.target.shown_description}: {report.unjudged}" for report in reports if report.unjudged]
    window = list(dict.fromkeys(rev for report in reports for rev in report.window))
    tested = revision_order({name for report in reports for name in report.tested}, window)
    return Report(
        results=list(merged.values()),
        target=Target(
            kind="merged",
            description=" + ".join(r.target.shown_description for r in reports),
            evidence=[item for report in reports for item in report.target.evidence or ()] or None,
            unknown_revisions={k: v for r in reports for k, v in (r.target.unknown_revisions or {}).items()} or None,
        ),
        tested=tested if all(report.tested for report in reports) else [],
        revision_note="merged from several reports",
        window=window,
        schemas=list(dict.fromkeys(schema for report in reports for schema in report.schemas)),
        notes=list(
            dict.fromkeys(
                [
                    *(f"not judged: {why}" for why in unjudged if judged),
                    *(note for report in reports for note in report.notes),
                ]
            )
        ),
        audit=[line for report in reports for line in report.audit],
        fail_on=base.fail_on,
        glossary={ident: text for report in reports for ident, text in report.glossary.items()},
        unjudged=None if judged else "; ".join(unjudged),
        left_out="; ".join(f"{r.target.shown_description}: {r.left_out}" for r in reports if r.left_out) or None,
        untried=list(dict.fromkeys(item for report in reports for item in report.untried)),
        generated=list(dict.fromkeys(item for report in reports for item in report.generated)),
        sdks=_merged_sdks(recognition for report in reports for recognition in report.sdks),
    )


def _merged_sdks(recognitions: Iterable[SdkRecognition]) -> list[SdkRecognition]:
    """One recognition per side and SDK: the signs and transports each report saw, together."""
    merged: dict[tuple[str, str, str, str], SdkRecognition] = {}
    for item in recognitions:
        key = (item.side, item.name, item.version, item.how)
        kept = merged.get(key)
        merged[key] = (
            item
            if kept is None
            else replace(
                kept,
                signs=tuple(dict.fromkeys((*kept.signs, *item.signs))),
                transports=tuple(sorted({*kept.transports, *item.transports})),
            )
        )
    return list(merged.values())


def revision_order(names: Iterable[str], order: Sequence[str]) -> list[str]:
    """``names`` in the order ``order`` gives them (newest first), any others after, in their given order."""
    wanted = set(names)
    return [name for name in dict.fromkeys(order) if name in wanted] + sorted(wanted - set(order))


def _status_key(key: tuple[str, str | None, Party | None], rank: Mapping[str, int]) -> tuple[str, int, str]:
    ident, revision, party = key
    order = rank.get(revision, len(rank)) if revision is not None else len(rank) + 1
    return ident, order, party.value if party is not None else ""


def sort_results(results: Iterable[Verdict]) -> list[Verdict]:
    """Stable order for rendering: by area, then by first requirement ID, then check name."""

    def key(result: Verdict) -> tuple[str, str, int, str]:
        first = result.requirements[0] if result.requirements else ""
        prefix, _, number = first.partition("-")
        return (result.area, prefix, int(number) if number.isdigit() else 0, result.check)

    return sorted(results, key=key)
