"""The terminal report a person reads first: what failed, how to see it again, and one line of the rest.

After pytest's short summary and final line and schemathesis's failure blocks: a header of at most
four lines (what was judged, over what, which revisions); the failures grouped by cause, each with
one line of evidence and the request that reproduces it, printed whole on one line; the SHOULD
findings one line each (ruff's one line per finding); one line of counts; the verdict last.

Results share a cause when they rest on the same exchange or the same replayed request, give the
same reason, or come from the same check in several revisions: one block names all their
requirement IDs and revisions. Notes that change what the user should do (an unpinned schema, a rate
limit, exchanges left out) stay; observations (what the server did where no requirement applies,
the capabilities it declared) are counted, like the passes and the not-verified results, and listed
with ``--show``. The full listing (:mod:`mcp_assay.report.console`) is one flag away, and always in
the files.
"""

from __future__ import annotations

import io
import re
import shlex
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

from mcp_assay.report.about import evidence_lines, newer_line
from mcp_assay.report.console import (
    SHOULD_EXPLAINED,
    SHOW_ALL,
    by_area,
    evidence_label,
    explored_lines,
    print_replay,
    print_report,
    print_row,
    print_section,
    print_verdict,
    printable,
    sections,
)
from mcp_assay.report.findings import finding_id
from mcp_assay.report.model import Report
from mcp_assay.report.sdks import sdk_line
from mcp_assay.report.untried import OTHER, generated_lines, not_verified_kind, settings_text, untried_lines
from mcp_assay.report.wrap import phrase_lines
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import ExitCode, Outcome, Source, Verdict

__all__ = [
    "BASELINE_FILE",
    "SHOW_CHOICES",
    "causes",
    "counts_line",
    "is_observation",
    "known_findings_hint",
    "not_verified_reasons",
    "parse_show",
    "print_brief",
    "print_terminal",
    "render_brief",
    "target_text",
]

SHOW_CHOICES = {
    "failed": "failed",
    "not-verified": "not_verified",
    "should": "recommended",
    "notes": "notes",
    "known": "known",
    "passed": "passed",
}
"""``--show`` value -> the section of the full listing it brings back (``all``: every one)."""
BASELINE_FILE = "mcp-assay-baseline.yaml"
"""The baseline file the known-findings hint names."""
MAIN_REASONS = 3
"""How many reasons the counts line gives for the results not verified."""

_OBSERVATION = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}: )?(?:observation \(|capabilities per |read \d+ of \d+ listed resources"
    r"|stock client: an unconfigured SDK client (?:\(.*\) just works|was not tried)|cancel race "
    r"|authorization: the target does not implement it"
    r"|tools called with arguments generated|no plain arguments could be drawn|the audit list keeps)"
)
_NO_REQUIREMENT = ("no requirement names this", "no requirement asks")
_MORE = re.compile(r"\s*\(and \d+ more\)$")


def parse_show(values: Iterable[str]) -> frozenset[str]:
    """``--show`` values (comma-separated, repeatable) as section keys; an unknown one is a :class:`ConfigError`."""
    keys: set[str] = set()
    for value in values:
        for name in filter(None, (part.strip().lower() for part in value.split(","))):
            if name == "all":
                keys.update(SHOW_ALL)
            elif name in SHOW_CHOICES:
                keys.add(SHOW_CHOICES[name])
            else:
                raise ConfigError(f"--show: unknown listing {name!r}; choose from {', '.join(SHOW_CHOICES)}, all")
    return frozenset(keys)


def is_observation(note: str) -> bool:
    """A note that only says what was seen (nothing the user should do about it): out of the short report."""
    return bool(_OBSERVATION.match(note)) or any(phrase in note for phrase in _NO_REQUIREMENT)


def causes(results: Sequence[Verdict]) -> list[list[Verdict]]:
    """``results`` grouped by cause, in their order: results sharing an exchange, a replay, a reason or a check."""
    parent = list(range(len(results)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    first: dict[tuple[str, str], int] = {}
    for index, result in enumerate(results):
        for key in _cause_keys(result):
            if key in first:
                parent[root(index)] = root(first[key])
            else:
                first[key] = index
    grouped: dict[int, list[Verdict]] = {}
    for index, result in enumerate(results):
        grouped.setdefault(root(index), []).append(result)  # a group first appears with its first member
    return list(grouped.values())


def _cause_keys(result: Verdict) -> list[tuple[str, str]]:
    party = f"@{result.party.value}" if result.party is not None else ""  # a gateway's fault and the server's differ
    keys = [("check", result.check + party)]
    reason = _MORE.sub("", result.reason)
    if reason:
        keys.append(("reason", reason + party))
    if result.evidence:
        lead = result.evidence[0]
        if lead.exchange:
            keys.append(("exchange", lead.exchange + party))
        if lead.reproduction:
            keys.append(("replay", lead.reproduction + party))
    return keys


def not_verified_reasons(results: Iterable[Verdict]) -> list[tuple[str, int]]:
    """Why results were not verified, as a few kinds with their counts, most frequent first."""
    kinds: Counter[str] = Counter()
    for result in results:
        kinds[not_verified_kind(result)] += 1
    return kinds.most_common()


def counts_line(report: Report, hidden_notes: int = 0) -> str:
    """The one line of counts: passed, not verified with its main reasons, notes, known."""
    counts = report.counts()
    parts = []
    if counts["failed"]:
        parts.append(f"{counts['failed']} failed")
    if counts["recommended"]:
        parts.append(f"{counts['recommended']} should")
    parts.append(f"{counts['passed']} passed")
    if counts["not_verified"]:
        reasons = [item for item in not_verified_reasons(report.with_outcome(Outcome.NOT_VERIFIED)) if item[0] != OTHER]
        main = [f"{count} {kind}" for kind, count in reasons[:MAIN_REASONS]]
        rest = counts["not_verified"] - sum(count for _, count in reasons[:MAIN_REASONS])
        if rest:
            main.append(f"{rest} other")
        parts.append(f"{counts['not_verified']} not verified ({', '.join(main)})")
    notes = counts["notes"] + hidden_notes
    if notes:
        parts.append(f"{notes} note{'s' if notes != 1 else ''}")
    if counts["known"]:
        parts.append(f"{counts['known']} known")
    return " · ".join(parts)


def known_findings_hint(report: Report, *, json_report: Path | None = None, written: Path | None = None) -> list[str]:
    """What to run so CI accepts today's failures and fails only on new ones; nothing unless the run failed.

    ``json_report`` is a JSON report this run wrote (a baseline is made from it without a rerun);
    ``written`` a baseline this run wrote itself (``--write-baseline``)."""
    if report.unjudged is not None or report.exit_code() is not ExitCode.FAILED or not report.counts()["failed"]:
        return []
    if written is not None:
        quoted = shlex.quote(str(written))
        return [f"known findings: {written} lists these failures; fill in each reason, then add --baseline {quoted} "
                "so CI fails only on new failures"]  # fmt: skip
    if report.baseline is None:
        target = shlex.quote(BASELINE_FILE)
        then = f"give each a reason, then run with --baseline {target}"
    else:  # never overwrite the baseline in use: entries this run could not confirm would be lost
        kept = Path(report.baseline.path)
        target = shlex.quote(str(kept.with_name(f"{kept.stem}.new{kept.suffix or '.yaml'}")))
        then = f"then move the entries without a reason into {shlex.quote(report.baseline.path)}, each with its reason"
    if json_report is not None:
        return [
            f"known findings: to fail CI only on new failures, write a baseline of these, {then}:",
            f"    mcp-assay report {shlex.quote(str(json_report))} --write-baseline {target}",
        ]
    return [f"known findings: to fail CI only on new ones, add --write-baseline {target}, {then}"]


def print_terminal(
    report: Report,
    console: Console,
    *,
    show: Collection[str] = (),
    hint: Sequence[str] = (),
    trailer: Sequence[Text | str] = (),
) -> None:
    """The report on a terminal: the short one, with the sections ``show`` names listed in full (all of them:
    the full listing). ``hint`` lines come right before the verdict, ``trailer`` lines before them. A report
    with nothing to judge is one line, whatever is asked."""
    if report.unjudged is not None or set(SHOW_ALL) <= set(show):
        print_report(report, console, hint=hint, trailer=trailer)
    else:
        print_brief(report, console, show=show, hint=hint, trailer=trailer)


def render_brief(report: Report, width: int = 100, *, show: Collection[str] = ()) -> str:
    """What :func:`print_terminal` prints, as plain text at ``width`` columns (for tests)."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO(), highlight=False)
    print_terminal(report, console, show=show)
    return console.export_text()


def print_brief(
    report: Report,
    console: Console,
    *,
    show: Collection[str] = (),
    hint: Sequence[str] = (),
    trailer: Sequence[Text | str] = (),
) -> None:
    """The short report; the sections named in ``show`` are listed in full in their place."""
    hidden = _header(report, console, every_note="notes" in show)
    for key, title, explanation, results in sections(report):
        if not results:
            continue
        if key in show:
            print_section(report, console, key, title, explanation, results)
        elif key == "failed":
            _failures(report, console, title, explanation, results)
        elif key == "recommended":
            _one_line_each(report, console, results)
    _lines(console, counts_line(report, hidden), "bold")
    needed = settings_text(report.with_outcome(Outcome.NOT_VERIFIED))
    if needed:
        _lines(console, f"need settings: {needed}", "dim")
    listings = [name for name, key in SHOW_CHOICES.items() if key not in show]
    if listings:
        _lines(console, f"every result: --show all (or some of: {', '.join(listings)})", "dim")
    for line in trailer:
        console.print(Text(line) if isinstance(line, str) else line, soft_wrap=True, highlight=False)
    print_verdict(report, console, hint=hint)


def _lines(console: Console, text: str, style: str = "") -> None:
    """A line of the report's end, cut between phrases to the console's width (continuations indented)."""
    for number, line in enumerate(phrase_lines(text, console.width, indent=2)):
        console.print(Text(("  " if number else "") + line, style=style), highlight=False, soft_wrap=True)


def target_text(report: Report) -> str:
    """What was judged and how it was reached, in one parenthesis: ``http://… (reverse proxy, http)``, not a
    description's own parenthesis followed by another saying the same word again."""
    target = report.target
    described = target.shown_description
    over = [value for value in (target.kind, target.transport) if value]
    own = re.match(r"^(.*\S) \(([^()]*)\)$", described)
    if own is None:
        return described + (f" ({', '.join(over)})" if over else "")
    head, inside = own.groups()
    extra = [value for value in over if value.lower() not in inside.lower()]
    return f"{head} ({', '.join([inside, *extra])})"


def _header(report: Report, console: Console, *, every_note: bool) -> int:
    """A few lines on what was judged, then what the run called on its own and did not try, then the notes
    that matter; returns how many notes it left out."""
    console.print(Text(report.title, style="bold"))
    print_row(console, "target", target_text(report))
    newer = newer_line(report.target, report.window)
    if newer is not None:
        print_row(console, "newer", newer, "yellow")
    if report.revision_note:
        print_row(console, "revision", report.revision_note)
    for line in evidence_lines(report.target, short=True):
        print_row(console, "evidence", line, "yellow" if "BROKEN" in line or "cannot be verified" in line else "")
    for recognition in report.sdks:
        print_row(console, "sdk", recognition.describe(short=True))
    status = report.baseline
    if status is not None:
        text = f"{status.path}: {status.known} known failure(s) accepted"
        if status.unconfirmed:
            text += f", {len(status.unconfirmed)} entr{'y' if len(status.unconfirmed) == 1 else 'ies'} not confirmed"
        print_row(console, "baseline", text)
        for entry in status.stale:
            print_row(console, "stale", entry, "yellow")
    for line in generated_lines(report.generated, report.untried):
        print_row(console, "generated", line)
    for kind, line in untried_lines(report.untried):
        print_row(console, "not tried", f"{kind}: {line}", "cyan")
    shown = [note for note in report.notes if every_note or not is_observation(note)]
    for note in shown:
        print_row(console, "note", note, "yellow")
    console.print()
    return len(report.notes) - len(shown)


def _requirements_and_revisions(report: Report, members: Sequence[Verdict]) -> str:
    ids = list(dict.fromkeys(ident for result in members for ident in result.requirements))
    order = report.result_revisions()
    revisions = [name for name in order if any(result.revision == name for result in members)]
    text = ", ".join(ids) or members[0].check
    return f"{text} · {', '.join(revisions)}" if revisions else text


def _ordered(report: Report, results: Sequence[Verdict]) -> list[Verdict]:
    return [result for members in by_area(results, report.result_revisions()).values() for result in members]


def _failures(report: Report, console: Console, title: str, explanation: str, results: Sequence[Verdict]) -> None:
    """Each cause of failure: its requirements and revisions, one line of evidence, its replay; the causes in the
    peer's own code first, those known in the SDK it is built on after them, each saying so."""
    grouped = causes(_ordered(report, results))
    grouped.sort(key=lambda members: all(result.sdk is not None for result in members))
    count = f"{len(results)}" + (
        f", {len(grouped)} cause{'s' if len(grouped) != 1 else ''}" if len(grouped) != len(results) else ""
    )
    heading = Text(f"{title} ({count})", style="bold")
    heading.append(f" — {explanation}", style="")
    console.print(heading)
    caveat = report.target.replay_caveat
    if caveat and any(item.reproduction for result in results for item in result.evidence):
        _lines(console, f"  {caveat}", "yellow")
    for members in grouped:
        lead = members[0]
        line = Text("  ")
        line.append("✗", style="red")
        line.append(f" {finding_id(lead)}", style="dim")
        line.append(f" {_requirements_and_revisions(report, members)}", style="bold")
        line.append(f"  {printable(lead.title, newlines=False)}")
        others = len({result.check for result in members}) - 1
        if others:
            line.append(f" (and {others} more check{'s' if others != 1 else ''})", style="dim")
        if lead.source is Source.EXPLORED:
            line.append(" · found by --explore", style="dim")
        if lead.party is not None:
            line.append(f" [{lead.whose}]", style="dim")
        console.print(line, highlight=False)
        sdk = sdk_line(lead, short=True)
        if sdk is not None:
            console.print(Text(f"      {printable(sdk, newlines=False)}", style="cyan"), highlight=False)
        if _hops(console, lead):
            continue
        item = next((evidence for evidence in lead.evidence if evidence.reproduction), None)
        item = item or (lead.evidence[0] if lead.evidence else None)
        reason = lead.reason or (item.detail if item is not None else "")
        if item is not None and item.reproduction:
            console.print(Text(f"      {printable(reason, newlines=False)} — replay:"), highlight=False)
            print_replay(console, item.reproduction, "      ", label="")
            for explored in explored_lines(item.explored) if item.explored is not None else ():
                console.print(Text(f"      {explored}", style="dim"), highlight=False)
        else:
            if reason:
                console.print(Text(f"      {printable(reason, newlines=False)}"), highlight=False)
            if item is not None:
                where = f" (exchange {printable(item.exchange, newlines=False)})" if item.exchange else ""
                summary = printable(item.summary, newlines=False)
                console.print(Text(f"      {evidence_label(item)}: {summary}{where}", style="dim"), highlight=False)
    console.print()


def _hops(console: Console, lead: Verdict) -> bool:
    """A finding that rests on both hops of a gateway: its reason, then each hop's evidence side by side, each with
    its replay when it has one (``False``: the evidence crossed one hop or none, shown the usual way)."""
    first = lead.evidence[:1]
    if not first or first[0].hop is None:
        return False
    lead_hops = [first[0]]
    for item in lead.evidence[1:]:  # what the first failure names beside its subject follows it
        if item.hop is None or item.detail or item.hop in {shown.hop for shown in lead_hops}:
            break
        lead_hops.append(item)
    if len(lead_hops) < 2:
        return False
    reason = lead.reason or first[0].detail
    if reason:
        console.print(Text(f"      {printable(reason, newlines=False)}"), highlight=False)
    for item in lead_hops:
        where = f" (exchange {printable(item.exchange, newlines=False)})" if item.exchange else ""
        summary = printable(item.summary, newlines=False)
        console.print(Text(f"      {item.hop} hop: {summary}{where}", style="dim"), highlight=False)
        if item.reproduction:
            print_replay(console, item.reproduction, "        ", label="replay: ")
    return True


def _one_line_each(report: Report, console: Console, results: Sequence[Verdict]) -> None:
    """SHOULD findings: one line per cause, cut to the width (the full text is one ``--show should`` away)."""
    grouped = causes(_ordered(report, results))
    heading = Text(f"SHOULD ({len(results)})", style="bold")
    heading.append(f" — {SHOULD_EXPLAINED}")
    console.print(heading)
    for members in grouped:
        line = Text("  ")
        line.append("⚠", style="yellow")
        line.append(f" {finding_id(members[0])}", style="dim")
        line.append(f" {_requirements_and_revisions(report, members)}", style="bold")
        if members[0].party is not None:
            line.append(f" [{members[0].whose}]", style="dim")
        line.append(f"  {printable(members[0].title, newlines=False)}")
        console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")
    console.print()
