"""The report as Markdown, for a pull-request comment or a wiki page.

Same sections, counts and verdict as the terminal (``console.sections`` and the :class:`Report`
methods decide them; this module only lays them out). Everything a server or client could have
put into the report is treated as hostile: prose is backslash-escaped so it cannot open links,
emphasis, tables or raw HTML, and evidence goes into code spans or fenced blocks whose fences
are longer than any backtick run inside.
"""

from __future__ import annotations

import re

from mcp_assay.report.console import (
    MARKS,
    MAX_EVIDENCE_SHOWN,
    by_area,
    evidence_label,
    explained,
    explored_lines,
    hidden_occurrences,
    printable,
    sections,
    summary_lines,
)
from mcp_assay.report.findings import finding_id
from mcp_assay.report.model import Report
from mcp_assay.report.sdks import accepted_by, sdk_line
from mcp_assay.report.untried import coverage_rows
from mcp_assay.vocabulary.verdicts import Evidence, Outcome, Verdict

__all__ = ["render_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~&])")
_BLOCK_START = re.compile(r"^(\d+)([.)])|^([-+=])")
HARD_BREAK = "\\"
"""A backslash at the end of a line is a hard line break (CommonMark); unlike two spaces it survives editors."""


def text(value: str) -> str:
    """Inline prose on one line that cannot open emphasis, links, code, tables, HTML or a block."""
    escaped = _SPECIAL.sub(r"\\\1", printable(value, newlines=False))
    return _BLOCK_START.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", escaped)


def code(value: str) -> str:
    """An inline code span that survives any backticks in ``value`` (not for table cells)."""
    value = printable(value, newlines=False)
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def block(value: str, language: str = "", indent: str = "") -> list[str]:
    """A fenced code block, indented to sit inside a list item."""
    value = printable(value)
    longest = max((len(run) for run in re.findall(r"`{3,}", value)), default=0)
    fence = "`" * max(3, longest + 1)
    lines = [f"{fence}{language}", *value.splitlines(), fence]
    return [f"{indent}{line}" if line else "" for line in lines]


def _tag(result: Verdict) -> str:
    ids = ", ".join(code(ident) for ident in result.requirements)
    finding = f" · finding {code(finding_id(result))}" if result.outcome is Outcome.FAILED else ""
    return f"{ids} · {result.shown_level} · {result.whose} · {result.source.value}{finding}"


def _evidence(item: Evidence, result: Verdict) -> list[str]:
    where = f" (exchange {code(item.exchange)})" if item.exchange else ""
    lines = [f"  - {evidence_label(item)}: {code(item.summary)}{where}"]
    if item.detail and item.detail != result.reason:
        lines[-1] += HARD_BREAK
        lines.append(f"    {text(item.detail)}")
    if item.explored is not None:
        lines[-1] += HARD_BREAK
        lines.append("    " + f"{HARD_BREAK}\n    ".join(text(line) for line in explored_lines(item.explored)))
    if item.excerpt:
        lines += ["", *block(item.excerpt, "json" if item.excerpt.lstrip().startswith(("{", "[")) else "", "    ")]
    if item.reproduction:
        lines += ["", "    reproduce:", "", *block(item.reproduction, "sh", "    ")]
    return lines


def _result(result: Verdict, key: str) -> list[str]:
    lines = [f"- {MARKS[key]} **{text(result.title)}** — {_tag(result)}"]
    if key == "passed":
        if explained(result):
            lines[-1] += HARD_BREAK
            lines.append(f"  {text(result.reason)}")
        return lines
    label = "accepted" if accepted_by(result) != "baseline" else "baseline"
    details: list[str] = [f"{label}: {text(result.known)}"] if result.known is not None else []
    sdk = sdk_line(result)
    if sdk is not None:
        details.append(f"SDK: {text(sdk)}")
    if result.reason:
        details.append(text(result.reason))
    if result.blocked_by:
        details.append(f"blocked by {code(result.blocked_by)}")
    if details:
        lines[-1] += HARD_BREAK
        lines.append("  " + f"{HARD_BREAK}\n  ".join(details))
    shown = result.evidence[:MAX_EVIDENCE_SHOWN]
    for item in shown:
        lines += _evidence(item, result)
    more = hidden_occurrences(result, len(shown))
    if more:
        lines.append(f"  - … {more} more occurrence(s) in the JSON report")
    return lines


def _header(report: Report) -> list[str]:
    title = text(report.title)
    rows = [
        *report.target_rows(),
        ("generated", f"{report.generated_at} by {report.tool}"),
        ("fail on", report.fail_on.value),
    ]
    lines = [f"# {title}", "", "| | |", "|---|---|"]
    lines += [f"| {label} | {text(value)} |" for label, value in rows]
    lines.append("")
    for note in report.notes:
        lines += [f"> **Note:** {text(note)}", ""]
    rows = coverage_rows(report.untried, report.generated, report.results)
    if rows:
        lines += [f"- **{label}**: {text(value)}" for label, value in rows]
        lines.append("")
    _, verdict = report.verdict()
    lines += [f"**Verdict: {text(verdict)}**", ""]
    return lines


def render_markdown(report: Report) -> str:
    """The report as GitHub-flavoured Markdown."""
    lines = _header(report)
    for key, title, explanation, results in sections(report):
        if not results:
            continue
        lines += [f"## {title} ({len(results)})", ""]
        if explanation:
            lines += [f"_{text(explanation)}_", ""]
        if key == "passed":
            lines += [f"<details><summary>{len(results)} passed</summary>", ""]
        for area, members in by_area(results, report.result_revisions()).items():
            lines += [f"### {text(area)}", ""]
            for result in members:
                lines += _result(result, key)
            lines.append("")
        if key == "passed":
            lines += ["</details>", ""]
    counts_line, applied_line = summary_lines(report)
    _, verdict = report.verdict()
    lines += ["## Summary", "", f"{counts_line.replace('  ', ' · ')}{HARD_BREAK}", applied_line, ""]
    lines += [f"**Verdict: {text(verdict)}**", ""]
    return "\n".join(lines)
