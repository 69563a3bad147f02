"""The human report in a terminal: what failed, what could not be verified, what passed.

Layout, top to bottom: a header naming the target and revisions; FAILED (MUST-level findings
that decide the verdict); NOT VERIFIED (applicable but not established — a skip is not a pass,
so these come before the passes); RECOMMENDED (SHOULD-level findings); NOTES (informational
findings); PASSED; the summary; the verdict. Not-applicable results are left out entirely: a
requirement the revision or transport does not have is not a result.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from mcp_assay.report.model import Report, sort_results
from mcp_assay.verdicts import Outcome, Severity, Verdict

__all__ = ["print_report", "render_text", "sections"]

MAX_EVIDENCE_SHOWN = 3


def sections(report: Report) -> list[tuple[str, str, str, list[Verdict]]]:
    """(key, title, explanation, results) per section, in display order; empty sections included."""
    counted = [r for r in report.failed() if report.fail_on.counts(r)]
    counted_ids = {id(r) for r in counted}
    recommended = [r for r in report.failed() if id(r) not in counted_ids and r.severity is not Severity.INFO]
    notes = [r for r in report.failed(Severity.INFO) if id(r) not in counted_ids]
    return [
        ("failed", "FAILED", "the software deviates from the specification here", counted),
        (
            "not_verified",
            "NOT VERIFIED",
            "applicable, but this run could not establish it; a skip is not a pass",
            report.with_outcome(Outcome.NOT_VERIFIED),
        ),
        (
            "recommended",
            "RECOMMENDED",
            "SHOULD-level findings; they do not change the verdict unless --fail-on should",
            recommended,
        ),
        ("notes", "NOTES", "informational findings", notes),
        ("passed", "PASSED", "", report.with_outcome(Outcome.PASSED)),
    ]


def _by_area(results: Iterable[Verdict]) -> dict[str, list[Verdict]]:
    grouped: dict[str, list[Verdict]] = defaultdict(list)
    for result in sort_results(results):
        grouped[result.area or "Other"].append(result)
    return grouped


def _tag(result: Verdict) -> str:
    return f"[{', '.join(result.requirements)} · {result.side.value} · {result.source.value}]"


def _header(report: Report, console: Console) -> None:
    title = f"MCP conformance report — {report.revision}" if report.revision else "MCP conformance report"
    console.print(Text(title, style="bold"))
    target = report.target
    rows = [
        ("target", str(target.get("description", "?"))),
        ("kind", str(target.get("kind", "?"))),
    ]
    if target.get("transport"):
        rows.append(("transport", str(target["transport"])))
    if report.window:
        rows.append(("supported", ", ".join(report.window)))
    if report.revision_note:
        rows.append(("revision", report.revision_note))
    for label, value in rows:
        console.print(f"{label:<10}{escape(value)}", highlight=False)
    for note in report.notes:
        console.print(Text(f"note      {note}", style="yellow"))
    console.print()


def _result_lines(result: Verdict, console: Console, *, detailed: bool) -> None:
    marks = {
        Outcome.FAILED: ("✗", "red"),
        Outcome.PASSED: ("✓", "green"),
        Outcome.NOT_VERIFIED: ("–", "yellow"),
    }
    mark, style = marks.get(result.outcome, ("·", "dim"))
    if result.outcome is Outcome.FAILED and result.severity is not Severity.MUST:
        style = "yellow"
    line = Text("    ")
    line.append(mark, style=style)
    line.append(f" {result.title}  ")
    line.append(_tag(result), style="dim")
    console.print(line)
    if not detailed:
        return
    if result.reason:
        console.print(Text(f"        {result.reason}"), highlight=False)
    if result.blocked_by:
        console.print(Text(f"        blocked by: {result.blocked_by}", style="dim"))
    for item in result.evidence[:MAX_EVIDENCE_SHOWN]:
        where = f" (exchange {item.exchange})" if item.exchange else ""
        console.print(Text(f"        evidence: {item.summary}{where}", style="dim"), highlight=False)
        if item.detail and item.detail != result.reason:
            console.print(Text(f"          {item.detail}", style="dim"), highlight=False)
        if item.reproduction:
            console.print(Text(f"          replay: {item.reproduction}", style="dim"), highlight=False)
    hidden = len(result.evidence) - MAX_EVIDENCE_SHOWN
    if hidden > 0 or result.violations > len(result.evidence):
        more = max(hidden, result.violations - MAX_EVIDENCE_SHOWN)
        console.print(Text(f"        … {more} more occurrence(s) in the JSON report", style="dim"))


def print_report(report: Report, console: Console) -> None:
    """Render the report to a rich console (a terminal, or a plain file)."""
    _header(report, console)
    for key, title, explanation, results in sections(report):
        if not results:
            continue
        heading = Text(f"{title} ({len(results)})", style="bold")
        if explanation:
            heading.append(f" — {explanation}", style="")
        console.print(heading)
        for area, members in _by_area(results).items():
            console.print()
            console.print(Text(f"  {area}", style="bold"))
            for result in members:
                _result_lines(result, console, detailed=key != "passed")
        console.print()
    counts = report.counts()
    console.print(Text("Summary", style="bold"))
    summary = (
        f"  {counts['passed']} passed  {counts['failed']} failed  {counts['recommended']} recommended  "
        f"{counts['not_verified']} not verified"
    )
    if counts["notes"]:
        summary += f"  {counts['notes']} notes"
    console.print(summary, highlight=False)
    applied = len(report.applied())
    stats = report.stats
    detail = f"  {applied} checks applied"
    if stats.get("exchanges") is not None:
        detail += f" to {stats.get('messages', 0)} messages in {stats['exchanges']} exchanges"
    if stats.get("duration_ms") is not None:
        detail += f", in {stats['duration_ms']} ms"
    if counts["not_applicable"]:
        detail += f" ({counts['not_applicable']} not applicable to this traffic, omitted)"
    console.print(detail, highlight=False)
    console.print()
    code, text = report.verdict()
    style = {"not-conformant": "bold red", "conformant": "bold green"}.get(code, "bold yellow")
    console.print(Text(f"Verdict: {text}", style=style))


def render_text(report: Report, width: int = 100) -> str:
    """The terminal layout as plain text (for ``terminal:PATH`` and tests)."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO(), highlight=False)
    print_report(report, console)
    return console.export_text()
