"""The report as TAP version 14, for harnesses and CI systems that read the Test Anything Protocol.

One test point per applicable result, ordered by area and requirement like the other writers, so
the plan ``1..N`` counts what applied (not-applicable results are left out). A result in the
FAILED section is ``not ok`` with a YAML diagnostic block (requirements, reason, evidence); a
SHOULD-level finding that does not decide the verdict is ``not ok ... # TODO``, which TAP
harnesses report without failing the run; an informational note is ``ok`` with the note in its
diagnostics; a result that could not be verified is ``ok ... # SKIP reason``.
"""

from __future__ import annotations

from typing import Any

import yaml

from mcp_assay.report.console import by_area, explored_lines, printable, sections, summary_lines
from mcp_assay.report.findings import finding_id
from mcp_assay.report.model import Report
from mcp_assay.report.sdks import accepted_by
from mcp_assay.vocabulary.verdicts import Outcome, Verdict

__all__ = ["render_tap"]


def _line(value: str) -> str:
    return printable(value, newlines=False)


def _description(value: str) -> str:
    """A test point description or directive reason: one line, ``\\`` and ``#`` escaped (TAP 14)."""
    return _line(value).replace("\\", "\\\\").replace("#", "\\#")


def _diagnostics(result: Verdict, extra: dict[str, Any] | None = None) -> list[str]:
    data: dict[str, Any] = dict(extra or {})
    if result.outcome is Outcome.FAILED:
        data["finding"] = finding_id(result)
    data.update(
        {
            "check": _line(result.check),
            "requirements": list(result.requirements),
            "level": result.level.value,
            "severity": result.severity.value,
            "side": result.side.value,
            "source": result.source.value,
        }
    )
    if result.revision:
        data["revision"] = result.revision
    if result.party is not None:
        data["party"] = result.party.value
    if result.reason:
        data["reason"] = _line(result.reason)
    if result.blocked_by:
        data["blocked_by"] = _line(result.blocked_by)
    if result.sdk is not None:
        data["sdk"] = {key: _line(value) for key, value in result.sdk.to_json().items() if value}
    evidence = []
    for item in result.evidence:
        entry: dict[str, Any] = {"summary": _line(item.summary)}
        if item.exchange:
            entry["exchange"] = _line(item.exchange)
        if item.detail and item.detail != result.reason:
            entry["detail"] = _line(item.detail)
        if item.excerpt:
            entry["message"] = _line(item.excerpt)
        if item.explored is not None:
            entry["explored"] = [_line(line) for line in explored_lines(item.explored)]
        if item.reproduction:
            entry["reproduce"] = _line(item.reproduction)
        evidence.append(entry)
    if evidence:
        data["evidence"] = evidence
    if result.violations > len(result.evidence):
        data["more_occurrences"] = result.violations - len(result.evidence)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=None)
    return ["  ---", *(f"  {line}" for line in text.splitlines()), "  ..."]


def _point(number: int, result: Verdict, key: str, *, several: bool = False) -> list[str]:
    ids = ", ".join(result.requirements)
    era = f"{result.revision} · " if several and result.revision else ""
    description = _description(f"{era}{result.area or 'Other'}: {result.title} [{ids}]")
    if key == "failed":
        return [f"not ok {number} - {description}", *_diagnostics(result)]
    if key == "recommended":
        todo = _description(f"SHOULD-level, does not fail the run unless --fail-on should: {result.reason}")
        return [f"not ok {number} - {description} # TODO {todo}", *_diagnostics(result)]
    if key == "known":
        todo = _description(f"known, accepted by the {accepted_by(result)}: {result.known}")
        return [f"not ok {number} - {description} # TODO {todo}", *_diagnostics(result)]
    if key == "notes":
        return [f"ok {number} - {description}", *_diagnostics(result, {"note": "informational finding"})]
    if key == "not_verified":
        reason = result.reason or "not verified"
        if result.blocked_by:
            reason += f" (blocked by {result.blocked_by})"
        return [f"ok {number} - {description} # SKIP {_description(reason)}"]
    return [f"ok {number} - {description}"]


def render_tap(report: Report) -> str:
    """The report as a TAP version 14 stream."""
    section_of = {id(result): key for key, _, _, results in sections(report) for result in results}
    revisions = report.result_revisions()
    applied = [result for members in by_area(report.applied(), revisions).values() for result in members]
    title = report.title
    target = report.target
    lines = [
        "TAP version 14",
        f"# {_line(title)}",
        f"# target: {_line(target.shown_description)} ({_line(target.shown_kind)})",
    ]
    if report.window:
        lines.append(f"# supported: {', '.join(report.window)}")
    lines.append(f"# fail on: {report.fail_on.value}")
    baseline_rows = [
        (label, value) for label, value in report.target_rows() if label in ("sdk", "baseline", "unconfirmed")
    ]
    lines += [f"# {label}: {_line(value)}" for label, value in baseline_rows]
    lines += [f"# note: {_line(note)}" for note in report.notes]
    if report.unjudged is not None:
        return "\n".join([*lines, "1..0", f"Bail out! {_line(report.verdict()[1])}", ""])
    stale = report.baseline.stale if report.baseline is not None else ()
    lines.append(f"1..{len(applied) + len(stale)}")
    for number, result in enumerate(applied, start=1):
        lines += _point(number, result, section_of[id(result)], several=len(revisions) > 1)
    for number, entry in enumerate(stale, start=len(applied) + 1):
        lines.append(f"not ok {number} - {_description(f'stale baseline entry: {entry}')}")
    counts_line, applied_line = summary_lines(report)
    _, verdict = report.verdict()
    lines += [f"# {counts_line}", f"# {applied_line}", f"# Verdict: {_line(verdict)}", ""]
    return "\n".join(lines)
