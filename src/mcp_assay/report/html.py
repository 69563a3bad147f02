"""The report as one self-contained HTML page: open it from disk, mail it, attach it to a CI run.

Same sections, counts and verdict as the terminal (``console.sections`` and the :class:`Report`
methods decide them). The first screen answers: the target, the verdict, the counts and the
failures; the run's notes and the informational findings follow folded, then the rest.

The page fetches nothing: styles are inline, there are no fonts, images or links to load, and a
Content-Security-Policy forbids any fetch, so a viewer's browser never contacts anyone.
Everything a server or client could have put into the report is HTML-escaped; the policy also
stops any script except the one below (identified by its hash), which only opens the collapsed
evidence before printing.

Results can be filtered by outcome, level, era and source without any script: each filter is a
checkbox, and a stylesheet rule per filter (``body:has(#f-level-should:not(:checked))
li[data-level=should]``) hides what it unticks, so the page stays inert under its policy. Each
finding's evidence, with the exact request to reproduce it, is one ``<details>`` click away.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from html import escape

from mcp_assay.report.console import (
    COUNT_WORDS,
    MARKS,
    by_area,
    counted,
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

__all__ = ["render_html"]

_SCRIPT = (
    "window.addEventListener('beforeprint',function(){"
    "document.querySelectorAll('details').forEach(function(d){d.open=true;});});"
)
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
_POLICY = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'; "
    "base-uri 'none'; form-action 'none'"
)


_CSS = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff;
  --soft: #f6f8fa; --red: #b42318; --red-bg: #fef3f2; --amber: #8a5a00; --amber-bg: #fff8e6;
  --green: #1a7f37; --green-bg: #effaf2; --blue: #0b5cad; --blue-bg: #eef6ff; }
* { box-sizing: border-box; }
html { background: var(--bg); color: var(--fg); }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem 2rem 3rem;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 0.86em; }
code { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 0 0.3em;
  overflow-wrap: anywhere; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem;
  margin: 0.4rem 0; white-space: pre-wrap; overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; margin: 0 0 0.8rem; }
h1 .revision { color: var(--muted); font-weight: 400; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.4rem; padding-bottom: 0.3rem; border-bottom: 2px solid var(--line); }
h2 .explanation { font-size: 0.85rem; font-weight: 400; color: var(--muted); margin-left: 0.5rem; }
h3 { font-size: 0.95rem; margin: 1rem 0 0.3rem; color: var(--muted); text-transform: none; }
table.target { border-collapse: collapse; margin-bottom: 1rem; }
table.target th { text-align: left; font-weight: 600; color: var(--muted); padding: 0.15rem 1.2rem 0.15rem 0;
  vertical-align: top; white-space: nowrap; }
table.target td { padding: 0.15rem 0; overflow-wrap: anywhere; }
.note { background: var(--amber-bg); border-left: 4px solid var(--amber); padding: 0.4rem 0.8rem;
  margin: 0.4rem 0; }
.verdict { font-weight: 700; font-size: 1.05rem; padding: 0.7rem 1rem; border-radius: 6px; margin: 1rem 0;
  border: 1px solid; }
.verdict.not-conformant { color: var(--red); background: var(--red-bg); border-color: var(--red); }
.verdict.conformant { color: var(--green); background: var(--green-bg); border-color: var(--green); }
.verdict.conformant-in-part, .verdict.nothing-verified, .verdict.not-judged {
  color: var(--amber); background: var(--amber-bg); border-color: var(--amber); }
.counts { display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 0.5rem 0 1rem; padding: 0; list-style: none; }
.counts li { border: 1px solid var(--line); border-radius: 999px; padding: 0.1rem 0.8rem; background: var(--soft); }
.counts b { font-variant-numeric: tabular-nums; }
ul.results { list-style: none; margin: 0; padding: 0; }
li.result { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px; padding: 0.5rem 0.8rem;
  margin: 0.4rem 0; break-inside: avoid; }
li.result.failed { border-left-color: var(--red); }
li.result.not_verified, li.result.recommended { border-left-color: var(--amber); }
li.result.notes { border-left-color: var(--blue); }
li.result.not_verified { border-width: 0 0 0 3px; border-radius: 0; padding: 0.15rem 0.8rem; margin: 0.25rem 0; }
li.result.not_verified .reason { margin-top: 0; color: var(--muted); }
li.result.passed .reason { margin-top: 0; color: var(--muted); font-size: 0.9rem; }
li.result.passed { border: 0; padding: 0.1rem 0.2rem; margin: 0; }
.head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.2rem 0.6rem; }
.mark { font-weight: 700; width: 1.1em; display: inline-block; text-align: center; }
.failed .mark { color: var(--red); }
.not_verified .mark, .recommended .mark, .known .mark { color: var(--amber); }
.notes .mark { color: var(--blue); }
.passed .mark { color: var(--green); }
.title { font-weight: 600; }
.tags { color: var(--muted); font-size: 0.85rem; }
.reason { margin: 0.3rem 0 0 1.7rem; }
.blocked, .more { margin: 0.2rem 0 0 1.7rem; color: var(--muted); font-size: 0.9rem; }
details.evidence { margin: 0.3rem 0 0 1.7rem; }
details.evidence > summary { cursor: pointer; color: var(--muted); font-size: 0.9rem; }
details.evidence > div { padding: 0.2rem 0 0.2rem 1rem; border-left: 2px solid var(--line); margin-top: 0.2rem; }
details.evidence p { margin: 0.2rem 0; }
details.folded > summary { cursor: pointer; color: var(--muted); margin: 0.4rem 0; }
.label { color: var(--muted); font-size: 0.85rem; margin: 0.3rem 0 0; }
.summary p { margin: 0.2rem 0; }
nav.filters { display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; margin: 0 0 1rem; padding: 0.5rem 0.8rem;
  border: 1px solid var(--line); border-radius: 6px; background: var(--soft); font-size: 0.9rem; }
nav.filters fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.2rem 0.7rem;
  align-items: baseline; }
nav.filters legend { float: left; font-weight: 600; color: var(--muted); margin-right: 0.2rem; padding: 0; }
nav.filters label { cursor: pointer; white-space: nowrap; }
details.evidence .has-reproduction { color: var(--blue); }
footer { margin-top: 2.5rem; color: var(--muted); font-size: 0.8rem; border-top: 1px solid var(--line);
  padding-top: 0.5rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  details > summary { list-style: none; }
  nav.filters { display: none; }
  h2 { break-after: avoid; }
  pre { border-color: #999; }
}
""".strip()


def _e(value: object) -> str:
    """Escape server-provided text for HTML text and attribute values."""
    return escape(printable(str(value)), quote=True)


_ERA = re.compile(r"^\d{4}-\d{2}-\d{2}$")
"""Revision names that may become element ids and selectors (anything else is left out of the era filter)."""
_PAGE_ORDER = ("failed", "notes", "not_verified", "recommended", "known", "passed")
"""Section keys in the order the page shows them: what decides the verdict comes first, under the verdict."""
_FOLDED = {"notes": "notes", "passed": "passed"}
"""Sections shown folded, each with the word its summary uses (``show 3 notes``)."""
_OUTCOME_LABELS = {
    "failed": "failed",
    "not_verified": "not verified",
    "recommended": "should",
    "notes": "notes",
    "known": "known",
    "passed": "passed",
}


def _level(result: Verdict) -> str:
    """The grade a result counts at, which the level filter offers: ``must``, ``should`` or ``info`` (a
    SHOULD-level heuristic counts as a note, a failure the catalogue's gate grades lower as a recommendation)."""
    return result.severity.value


def _eras(result: Verdict, window: Iterable[str] = ()) -> list[str]:
    """The revisions a result was judged in that the filter offers: those of the window, when it is known.

    A result reached in one revision under test (a suite run) belongs to that revision alone."""
    known = set(window)
    judged = (result.revision,) if result.revision else result.revisions
    return sorted({r for r in judged if _ERA.match(r) and (not known or r in known)})


def _anchor(result: Verdict) -> str:
    """The element id of a result: its check and source, and its revision when it has one."""
    parts = [result.check, result.source.value, *([result.revision] if result.revision else [])]
    return "-".join(parts)


def _evidence(item: Evidence, result: Verdict, *, open_: bool) -> list[str]:
    where = f" (exchange <code>{_e(item.exchange)}</code>)" if item.exchange else ""
    replay = ' <span class="has-reproduction">· reproduce</span>' if item.reproduction else ""
    lines = [
        '<details class="evidence" open>' if open_ else '<details class="evidence">',
        f"<summary>{_e(evidence_label(item))}: <code>{_e(item.summary)}</code>{where}{replay}</summary>",
        "<div>",
    ]
    if item.detail and item.detail != result.reason:
        lines.append(f"<p>{_e(item.detail)}</p>")
    if item.revision:
        lines.append(f'<p class="label">judged against {_e(item.revision)}</p>')
    if item.explored is not None:
        lines += ['<p class="label">explored</p>', *(f"<p>{_e(line)}</p>" for line in explored_lines(item.explored))]
    if item.excerpt:
        lines += ['<p class="label">message</p>', f"<pre>{_e(item.excerpt)}</pre>"]
    if item.reproduction:
        lines += ['<p class="label">reproduce</p>', f'<pre class="reproduction">{_e(item.reproduction)}</pre>']
    lines += ["</div>", "</details>"]
    return lines


def _result(result: Verdict, key: str, window: Iterable[str] = ()) -> list[str]:
    ids = " ".join(f"<code>{_e(ident)}</code>" for ident in result.requirements)
    tags = f"{ids} · {_e(result.shown_level)} · {_e(result.whose)} · {_e(result.source.value)}"
    if key != "passed" and result.outcome is Outcome.FAILED:
        tags += f" · finding <code>{_e(finding_id(result))}</code>"
    eras = " ".join(_eras(result, window))
    lines = [
        f'<li class="result {key}" id="{_e(_anchor(result))}" data-level="{_level(result)}" '
        f'data-source="{_e(result.source.value)}" data-eras="{eras}">',
        f'<div class="head"><span class="mark">{MARKS[key]}</span>'
        f'<span class="title">{_e(result.title)}</span><span class="tags">{tags}</span></div>',
    ]
    if key == "passed" and explained(result):
        lines.append(f'<p class="reason">{_e(result.reason)}</p>')
    if key != "passed":
        if result.known is not None:
            label = "accepted" if accepted_by(result) != "baseline" else "baseline"
            lines.append(f'<p class="known">{label}: {_e(result.known)}</p>')
        sdk = sdk_line(result)
        if sdk is not None:
            lines.append(f'<p class="sdk">SDK: {_e(sdk)}</p>')
        if result.reason:
            lines.append(f'<p class="reason">{_e(result.reason)}</p>')
        if result.blocked_by:
            lines.append(f'<p class="blocked">blocked by <code>{_e(result.blocked_by)}</code></p>')
        for index, item in enumerate(result.evidence):
            # The first piece of evidence for a verdict-deciding failure is shown unfolded.
            lines += _evidence(item, result, open_=key == "failed" and index == 0)
        more = hidden_occurrences(result, len(result.evidence))
        if more:
            lines.append(f'<p class="more">… {more} more occurrence(s) not kept in the report</p>')
    lines.append("</li>")
    return lines


def _header(report: Report) -> list[str]:
    revision = f' <span class="revision">— {_e(" and ".join(report.tested))}</span>' if report.tested else ""
    rows = [*report.target_rows(), ("fail on", report.fail_on.value)]
    lines = ["<header>", f"<h1>MCP conformance report{revision}</h1>", '<table class="target">']
    lines += [f"<tr><th>{label}</th><td>{_e(value)}</td></tr>" for label, value in rows]
    lines.append("</table>")
    code, verdict = report.verdict()
    counts = report.counts()
    lines.append(f'<p class="verdict {_e(code)}">Verdict: {_e(verdict)}</p>')
    lines.append('<ul class="counts">')
    for key in ("passed", "failed", "recommended", "not_verified", "notes", "known"):
        number, _, label = counted(counts[key], key).partition(" ")
        lines.append(f'<li class="{key}"><b>{number}</b> {label}</li>')
    lines.append("</ul>")
    rows = coverage_rows(report.untried, report.generated, report.results)
    if rows:
        lines.append('<table class="target coverage">')
        lines += [f"<tr><th>{_e(label)}</th><td>{_e(value)}</td></tr>" for label, value in rows]
        lines.append("</table>")
    lines.append("</header>")
    return lines


def _run_notes(report: Report) -> list[str]:
    """The run's own notes (what it tried, observed or left out), folded: they explain, they do not judge."""
    if not report.notes:
        return []
    count = len(report.notes)
    lines = [
        '<section id="run-notes">',
        f'<h2>RUN NOTES ({count}) <span class="explanation">what the run tried, observed or left out</span></h2>',
        f'<details class="folded"><summary>show {count} run note{"" if count == 1 else "s"}</summary>',
    ]
    lines += [f'<p class="note">{_e(note)}</p>' for note in report.notes]
    lines += ["</details>", "</section>"]
    return lines


def _ordered(report: Report) -> list[tuple[str, str, str, list[Verdict]]]:
    """The sections in page order: the failures first, then the notes, then the rest as the terminal has it."""
    rank = {key: position for position, key in enumerate(_PAGE_ORDER)}
    return sorted(sections(report), key=lambda section: rank.get(section[0], len(rank)))


def _checkbox(dimension: str, value: str, label: str) -> str:
    return f'<label><input type="checkbox" id="f-{dimension}-{value}" checked> {_e(label)}</label>'


def _subsets(eras: list[str]) -> Iterable[list[str]]:
    """Every non-empty subset of ``eras``, in a stable order."""
    for mask in range(1, 1 << len(eras)):
        yield [era for position, era in enumerate(eras) if mask >> position & 1]


def _filters(shown: list[tuple[str, list[Verdict]]], window: list[str]) -> tuple[list[str], str]:
    """The filter bar and the stylesheet rules that make each unticked box hide what it names."""
    results = [result for _, members in shown for result in members]
    if not results:
        return [], ""
    levels = [level for level in ("must", "should", "info") if any(_level(r) == level for r in results)]
    sources = sorted({result.source.value for result in results})
    eras = sorted({era for result in results for era in _eras(result, window)}, reverse=True)
    bar = ['<nav class="filters" aria-label="filter results">', "<fieldset><legend>outcome</legend>"]
    bar += [_checkbox("outcome", key, f"{_OUTCOME_LABELS[key]} ({len(members)})") for key, members in shown]
    bar += ["</fieldset>", "<fieldset><legend>level</legend>"]
    bar += [_checkbox("level", level, level.upper()) for level in levels]
    bar += ["</fieldset>"]
    if eras:
        bar += ["<fieldset><legend>era</legend>", *(_checkbox("era", era, era) for era in eras), "</fieldset>"]
    bar += ["<fieldset><legend>source</legend>", *(_checkbox("source", src, src) for src in sources), "</fieldset>"]
    bar.append("</nav>")
    rules = [f"body:has(#f-outcome-{key}:not(:checked)) section#{key}" for key, _ in shown]
    rules += [f'body:has(#f-level-{level}:not(:checked)) li.result[data-level="{level}"]' for level in levels]
    rules += [f'body:has(#f-source-{src}:not(:checked)) li.result[data-source="{src}"]' for src in sources]
    # A result judged in several eras stays visible while any of them is ticked.
    for subset in _subsets(eras):
        unticked = "".join(f":has(#f-era-{era}:not(:checked))" for era in subset)
        rules.append(f'body{unticked} li.result[data-eras="{" ".join(sorted(subset))}"]')
    return bar, ",\n".join(rules) + " { display: none; }"


def render_html(report: Report) -> str:
    """The report as a self-contained HTML document."""
    title = report.title
    ordered = _ordered(report)
    shown = [(key, results) for key, _, _, results in ordered if results]
    bar, filter_css = _filters(shown, report.window)
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light">',
        f"<title>{_e(title)}</title>",
        f"<style>\n{_CSS}\n{filter_css}\n</style>" if filter_css else f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
        *_header(report),
        *bar,
        "<main>",
    ]
    run_notes = _run_notes(report)
    for key, heading, explanation, results in ordered:
        if key != "failed" and run_notes:
            lines += run_notes  # right under the failures, before the other findings
            run_notes = []
        if not results:
            continue
        note = f' <span class="explanation">{_e(explanation)}</span>' if explanation else ""
        lines += [f'<section id="{key}">', f"<h2>{heading} ({len(results)}){note}</h2>"]
        if key in _FOLDED:
            shown_as = counted(len(results), key) if key in COUNT_WORDS else f"{len(results)} {_FOLDED[key]}"
            lines += ['<details class="folded">', f"<summary>show {shown_as}</summary>"]
        for area, members in by_area(results, report.result_revisions()).items():
            lines += [f"<h3>{_e(area)}</h3>", '<ul class="results">']
            for result in members:
                lines += _result(result, key, report.window)
            lines.append("</ul>")
        if key in _FOLDED:
            lines.append("</details>")
        lines.append("</section>")
    lines += run_notes
    counts_line, applied_line = summary_lines(report)
    code, verdict = report.verdict()
    lines += [
        '<section id="summary" class="summary">',
        "<h2>Summary</h2>",
        f"<p>{_e(counts_line.replace('  ', ' · '))}</p>",
        f"<p>{_e(applied_line)}</p>",
        f'<p class="verdict {_e(code)}">Verdict: {_e(verdict)}</p>',
        "</section>",
        "</main>",
        f"<footer>generated {_e(report.generated_at)} by {_e(report.tool)}</footer>",
        f"<script>{_SCRIPT}</script>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(lines)
