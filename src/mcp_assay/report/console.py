"""The full terminal listing: what failed, what could not be verified, what passed, all of it.

This is the layout of a ``terminal:PATH`` file and of ``--show all``; a terminal gets the short
report of :mod:`mcp_assay.report.brief` by default, which lists a section the way it is listed
here when ``--show`` names it. Layout, top to bottom: a header naming the target and revisions;
FAILED (MUST-level findings that decide the verdict); NOT VERIFIED (applicable but not
established — a skip is not a pass, so these come before the passes); SHOULD (SHOULD-level
findings); NOTES (informational findings); KNOWN (failures a baseline accepts, with its reason);
PASSED; the summary; the verdict. Not-applicable results are left out entirely: a requirement the
revision or transport does not have is not a result. When the results come from several revisions
(a run tests every revision the server serves), each section groups them by revision first,
newest first, so a requirement that binds both revisions shows once per revision.

A replay (the request that reproduces a finding) is printed whole on one line, whatever the width:
wrapping it, or splitting it through a pipe, would make it a different command when pasted.
"""

from __future__ import annotations

import io
import re
import shlex
from collections import defaultdict
from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.text import Text

from mcp_assay.report.findings import finding_id
from mcp_assay.report.model import Report, sort_results
from mcp_assay.report.sdks import accepted_by, sdk_line
from mcp_assay.report.untried import coverage_rows
from mcp_assay.report.wrap import phrase_lines
from mcp_assay.vocabulary.shell import one_line, quote
from mcp_assay.vocabulary.verdicts import Evidence, ExploredInput, Outcome, Severity, Verdict

__all__ = [
    "EXPLAIN_TAG",
    "MARKS",
    "SHOW_ALL",
    "by_area",
    "evidence_label",
    "explained",
    "explored_lines",
    "hidden_occurrences",
    "printable",
    "print_replay",
    "print_report",
    "print_section",
    "print_verdict",
    "render_text",
    "replay_line",
    "sections",
    "summary_lines",
]

MAX_EVIDENCE_SHOWN = 3
MARKS = {"failed": "✗", "not_verified": "–", "recommended": "⚠", "notes": "ℹ", "known": "✗", "passed": "✓"}
"""The mark each section's results carry in the Markdown and HTML reports."""
EXPLAIN_TAG = "explain"
"""Verdict tag of checks whose reason is worth reading on a pass too (e.g. which error channel a server used)."""

# C0/C1 controls (except tab and newline), DEL, the bidirectional overrides and isolates that can
# make text read differently from what it is ("trojan source"), lone surrogates (undecodable bytes
# kept by surrogateescape) and the two code points XML 1.0 excludes.
_UNPRINTABLE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff\ufffe\uffff]"
)


def _escape_code_point(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def printable(text: str, *, newlines: bool = True) -> str:
    """Server-provided text made safe to show: invisible or unsafe code points become ``\\xNN`` escapes.

    An ANSI escape sequence in an error message must not recolour the reader's terminal, XML 1.0
    cannot carry most control characters at all, and a lone surrogate cannot be written as UTF-8.
    With ``newlines=False`` runs of whitespace (line breaks included) become one space.
    """
    text = _UNPRINTABLE.sub(_escape_code_point, text)
    if not newlines:
        text = " ".join(text.split())
    return text


def replay_line(reproduction: str) -> str:
    """A reproduction as one line that pastes as the same request.

    Reproductions are made on one line (:mod:`mcp_assay.vocabulary.shell`); one from an older report that holds a
    line break or an invisible character is quoted again word by word when it is a plain curl command,
    and has them escaped (``\\n``, ``\\xNN``) otherwise."""
    if one_line(reproduction):
        return reproduction
    if reproduction.startswith("curl "):  # one plain command: split into words, each quoted again
        try:
            return " ".join(quote(word) for word in shlex.split(reproduction))
        except ValueError:
            pass
    return printable(reproduction).replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def sections(report: Report) -> list[tuple[str, str, str, list[Verdict]]]:
    """(key, title, explanation, results) per section, in display order; empty sections included."""
    counted = [r for r in report.failed() if report.fail_on.decides(r)]
    counted_ids = {id(r) for r in counted}
    known = [r for r in report.failed() if r.known is not None]
    rest = [r for r in report.failed() if id(r) not in counted_ids and r.known is None]
    recommended = [r for r in rest if r.severity is not Severity.INFO]
    notes = [r for r in rest if r.severity is Severity.INFO]
    return [
        ("failed", "FAILED", "the software deviates from the specification here", counted),
        (
            "not_verified",
            "NOT VERIFIED",
            "applicable, but this run could not establish it; a skip is not a pass",
            report.with_outcome(Outcome.NOT_VERIFIED),
        ),
        ("recommended", "SHOULD", SHOULD_EXPLAINED, recommended),
        ("notes", "NOTES", "informational findings", notes),
        (
            "known",
            "KNOWN",
            "failures a baseline (or --accept-sdk-findings) accepts, with the reason; they do not change the verdict",
            known,
        ),
        ("passed", "PASSED", "", report.with_outcome(Outcome.PASSED)),
    ]


def by_area(results: Iterable[Verdict], revisions: Sequence[str] = ()) -> dict[str, list[Verdict]]:
    """Results grouped by area, areas and members in the stable rendering order.

    With several ``revisions`` (the report's :meth:`~Report.result_revisions`) results are grouped by
    revision first, in that order, each group named ``revision · area``."""
    ordered = sort_results(results)
    if len(revisions) > 1:
        rank = {name: position for position, name in enumerate(revisions)}
        ordered.sort(key=lambda result: rank.get(result.revision or "", len(rank)))
    grouped: dict[str, list[Verdict]] = defaultdict(list)
    for result in ordered:
        area = result.area or "Other"
        grouped[f"{result.revision} · {area}" if len(revisions) > 1 and result.revision else area].append(result)
    return grouped


def explained(result: Verdict) -> bool:
    """A pass whose reason every human format shows (checks tagged ``explain``)."""
    return result.outcome is Outcome.PASSED and EXPLAIN_TAG in result.tags and bool(result.reason)


def evidence_label(item: Evidence) -> str:
    """``evidence``, or with a gateway between the peers the hop it crossed (``evidence (back hop)``), so a
    finding's two hops read side by side."""
    return f"evidence ({item.hop} hop)" if item.hop else "evidence"


def _tag(result: Verdict) -> str:
    return f"[{', '.join(result.requirements)} · {result.whose} · {result.source.value}]"


LABEL = 10
"""The width of a header row's label column (``revision  ``)."""


def print_row(console: Console, label: str, text: str, style: str = "") -> None:
    """One labelled header row, cut between phrases to the console's width, continuations under the text."""
    lines = phrase_lines(printable(text, newlines=False), console.width, first=LABEL, indent=LABEL)
    for number, line in enumerate(lines):
        head = label.ljust(LABEL) if number == 0 else " " * LABEL
        console.print(Text(head + line, style=style), highlight=False, soft_wrap=True)


def _header(report: Report, console: Console) -> None:
    console.print(Text(report.title, style="bold"))
    for label, value in report.target_rows():
        print_row(console, label, value)
    for note in report.notes:
        print_row(console, "note", note, "yellow")
    for label, text in coverage_rows(report.untried, report.generated, report.results):
        print_row(console, label, text, "cyan")
    console.print()


def print_replay(console: Console, reproduction: str, indent: str, *, label: str = "replay: ") -> None:
    """One replay, whole on one line: the terminal may fold it on screen, the renderer never breaks it."""
    console.print(
        Text(f"{indent}{label}{replay_line(reproduction)}", style="dim"), soft_wrap=True, highlight=False, crop=False
    )


def _result_lines(
    result: Verdict, console: Console, *, detailed: bool, evidence: int = MAX_EVIDENCE_SHOWN, replay: bool = True
) -> None:
    marks = {
        Outcome.FAILED: ("✗", "red"),
        Outcome.PASSED: ("✓", "green"),
        Outcome.NOT_VERIFIED: ("–", "yellow"),
    }
    mark, style = marks.get(result.outcome, ("·", "dim"))
    if result.outcome is Outcome.FAILED and (result.severity is not Severity.MUST or result.known is not None):
        style = "yellow"
    line = Text("    ")
    line.append(mark, style=style)
    if result.outcome is Outcome.FAILED:  # a finding: its id, which mcp-assay replay takes
        line.append(f" {finding_id(result)}", style="dim")
    line.append(f" {printable(result.title, newlines=False)}  ")
    line.append(_tag(result), style="dim")
    console.print(line)
    if not detailed:
        if explained(result):
            console.print(Text(f"        {printable(result.reason, newlines=False)}", style="dim"), highlight=False)
        return
    if result.known is not None:
        label = "accepted" if accepted_by(result) != "baseline" else "baseline"
        console.print(Text(f"        {label}: {printable(result.known, newlines=False)}", style="yellow"))
    sdk = sdk_line(result)
    if sdk is not None:
        console.print(Text(f"        sdk: {printable(sdk, newlines=False)}", style="cyan"), highlight=False)
    if result.reason:
        console.print(Text(f"        {printable(result.reason, newlines=False)}"), highlight=False)
    if result.blocked_by:
        console.print(Text(f"        blocked by: {printable(result.blocked_by, newlines=False)}", style="dim"))
    shown = result.evidence[:evidence]
    for item in shown:
        where = f" (exchange {printable(item.exchange, newlines=False)})" if item.exchange else ""
        summary = printable(item.summary, newlines=False)
        console.print(Text(f"        {evidence_label(item)}: {summary}{where}", style="dim"), highlight=False)
        if item.detail and item.detail != result.reason:
            console.print(Text(f"          {printable(item.detail, newlines=False)}", style="dim"), highlight=False)
        for step in explored_lines(item.explored) if item.explored is not None else ():
            console.print(Text(f"          {step}", style="dim"), highlight=False)
        if item.reproduction and replay:
            print_replay(console, item.reproduction, "          ")
    more = hidden_occurrences(result, len(shown))
    if more:
        console.print(Text(f"        … {more} more occurrence(s) in the JSON report", style="dim"))


def hidden_occurrences(result: Verdict, shown: int) -> int:
    """How many violations a rendering that shows ``shown`` evidence items leaves out."""
    return max(len(result.evidence), result.violations) - shown


def print_section(
    report: Report, console: Console, key: str, title: str, explanation: str, results: Sequence[Verdict]
) -> None:
    """One section of the full listing: its heading, then its results by (revision and) area."""
    heading = Text(f"{title} ({len(results)})", style="bold")
    if explanation:
        heading.append(f" — {explanation}", style="")
    console.print(heading)
    for area, members in by_area(results, report.result_revisions()).items():
        console.print()
        console.print(Text(f"  {printable(area, newlines=False)}", style="bold"))
        for result in members:
            _result_lines(result, console, detailed=key != "passed")
    console.print()


def print_verdict(report: Report, console: Console, *, hint: Sequence[str] = ()) -> None:
    """The last lines of every terminal report: the hint lines (what to do next; an indented one is a command,
    printed whole on one line), then the verdict.

    A report with nothing to judge (:attr:`~Report.unjudged`) is one line: why, and no conformance verdict."""
    if report.unjudged is not None:
        console.print(Text(f"mcp-assay: {report.verdict()[1]}", style="bold yellow"), soft_wrap=True)
        return
    for line in hint:
        if line.startswith("    "):  # a command to paste: whole on one line, like a replay
            console.print(Text(line, style="cyan"), soft_wrap=True, highlight=False)
            continue
        for part in phrase_lines(line, console.width):  # cut between phrases, never inside one
            console.print(Text(part, style="cyan"), soft_wrap=True, highlight=False)
    code, text = report.verdict()
    style = {"not-conformant": "bold red", "conformant": "bold green"}.get(code, "bold yellow")
    console.print(Text(f"Verdict: {text}", style=style), soft_wrap=True)  # one line, for a reader and for grep


def print_report(
    report: Report, console: Console, *, hint: Sequence[str] = (), trailer: Sequence[Text | str] = ()
) -> None:
    """Every listing: the header with every row and note, every section, the summary, the verdict.

    ``hint`` lines come right before the verdict (what to do next), ``trailer`` lines before them (the files
    written). A report with nothing to judge (:attr:`~Report.unjudged`) is one line: why, and no verdict."""
    if report.unjudged is not None:
        print_verdict(report, console)
        return
    _header(report, console)
    for key, title, explanation, results in sections(report):
        if results:
            print_section(report, console, key, title, explanation, results)
    counts_line, applied_line = summary_lines(report)
    console.print(Text("Summary", style="bold"))
    console.print(f"  {counts_line}", highlight=False)
    console.print(f"  {applied_line}", highlight=False)
    console.print()
    for line in trailer:
        console.print(Text(line) if isinstance(line, str) else line, soft_wrap=True, highlight=False)
    print_verdict(report, console, hint=hint)


COUNT_WORDS = {
    "passed": "passed",
    "failed": "failed",
    "recommended": "should",
    "not_verified": "not verified",
    "notes": "note",
    "known": "known",
}
"""The word each human format puts after a count (the terminal's words; ``counted`` makes ``note`` plural)."""
SHOULD_EXPLAINED = "recommended; they do not change the verdict unless --fail-on should"


def counted(count: int, key: str) -> str:
    """``3 should``, ``1 note``, ``2 notes``: a count with its word, the same in every format."""
    word = COUNT_WORDS[key]
    return f"{count} {word}{'s' if key == 'notes' and count != 1 else ''}"


def summary_lines(report: Report) -> tuple[str, str]:
    """The two summary lines every human format shows: the counts, and what was applied to what."""
    counts = report.counts()
    summary = "  ".join(counted(counts[key], key) for key in ("passed", "failed", "recommended", "not_verified"))
    if counts["notes"]:
        summary += f"  {counted(counts['notes'], 'notes')}"
    if counts["known"]:
        summary += f"  {counted(counts['known'], 'known')}"
    stats = report.stats
    detail = f"{len(report.applied())} checks applied"
    if stats.exchanges is not None:
        detail += f" to {stats.messages if stats.messages is not None else 0} messages in {stats.exchanges} exchanges"
    if stats.duration_ms is not None:
        detail += f", in {stats.duration_ms} ms"
    if counts["not_applicable"]:
        detail += f" ({counts['not_applicable']} not applicable to this traffic, omitted)"
    return summary, detail


SHOW_ALL = ("failed", "not_verified", "recommended", "notes", "known", "passed")
"""Every section key: what ``--show all`` lists in full."""


def render_text(report: Report, width: int = 100) -> str:
    """The full listing as plain text (for ``terminal:PATH`` and tests)."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO(), highlight=False)
    print_report(report, console)
    return console.export_text()


_ORIGINS = {
    "edge": "on the schema's edges",
    "mutation": "one constraint broken",
    "drawn": "drawn by hypothesis",
    "kept": "kept from an earlier run",
    "plain": "the plainest valid arguments",
}


def explored_lines(explored: ExploredInput) -> list[str]:
    """How ``run --explore`` came to a reported call's arguments: what it first sent, then each shrink step."""
    if explored.kind in ("", "inside"):
        kind = "inside its inputSchema"
    else:
        kind = f"outside its inputSchema ({explored.kind} broken)"
    origin = _ORIGINS.get(explored.origin, explored.origin)
    origin = f" ({origin})" if origin else ""
    steps = "; ".join(explored.steps) if explored.steps else "none smaller failed"
    stopped = f" — stopped: {explored.stopped}" if explored.stopped else ""
    generated = explored.generated
    if len(generated) > 160:  # the JSON report holds it whole
        generated = f"{generated[:120]}… ({len(generated)} characters)"
    return [
        printable(
            f"explored: {explored.tool} with arguments {kind}, first sent as {generated}{origin}",
            newlines=False,
        ),
        printable(f"shrink steps: {steps}{stopped}", newlines=False),
    ]
