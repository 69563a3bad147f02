"""The HTML report: one self-contained page that fetches nothing and escapes everything."""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import replace
from html.parser import HTMLParser

from mcp_assay.report.console import sections
from mcp_assay.report.html import render_html
from mcp_assay.report.model import FailOn
from tests.report.sample import (
    failed_must,
    failed_should,
    info_note,
    not_applicable,
    not_verified,
    passed,
    sample_report,
    with_reason,
)


class Page(HTMLParser):
    """Collects tags, attributes, text, inline scripts and styles, and checks nesting."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "base", "source"}

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.problems: list[str] = []
        self._current: str | None = None
        self.feed(html)
        self.close()
        if self.stack:
            self.problems.append(f"unclosed: {self.stack}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)
        self._current = tag

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> does not close {self.stack[-1:] or 'anything'}")
            return
        self.stack.pop()
        self._current = self.stack[-1] if self.stack else None

    def handle_data(self, data: str) -> None:
        if self._current == "script":
            self.scripts.append(data)
        elif self._current == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def test_html_parses_and_every_element_is_closed() -> None:
    """Tool-defined: the page is well-formed enough for html.parser to balance every tag."""
    page = Page(render_html(sample_report()))
    assert page.problems == []
    assert page.tags[0][0] == "html"


def test_html_references_no_remote_or_local_resources() -> None:
    """Tool-defined: no <link>, no src/href, no url(...) — the page fetches nothing."""
    html = render_html(sample_report())
    page = Page(html)
    for tag, attrs in page.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed", "base", "audio", "video", "source"), tag
        assert "src" not in attrs and "href" not in attrs, (tag, attrs)
        for value in attrs.values():
            assert not re.search(r"https?:|//", value or ""), (tag, attrs)
    css = "".join(page.styles)
    assert "url(" not in css and "@import" not in css and "http" not in css
    assert all("http" not in script for script in page.scripts)


def test_html_forbids_fetches_with_a_content_security_policy() -> None:
    """Tool-defined: default-src 'none', and only the print helper script (by hash) may run."""
    page = Page(render_html(sample_report()))
    (policy,) = [m["content"] for m in page.named("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert policy is not None and "default-src 'none'" in policy
    (script,) = page.scripts
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy


def test_html_escapes_a_script_planted_in_a_server_reason() -> None:
    """Tool-defined: server-provided text is text, never markup."""
    planted = "<script>alert('x')</script><img src=x onerror=alert(1)> \"quoted\" & done"
    html = render_html(sample_report(results=[with_reason(failed_must(), planted)]))
    page = Page(html)
    assert len(page.named("script")) == 1
    assert page.named("img") == []
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert planted in "".join(page.text)


def test_html_escapes_server_text_in_attributes_and_evidence() -> None:
    """Tool-defined: a hostile check id cannot break out of an attribute."""
    hostile = replace(failed_must(), check='x" onmouseover="alert(1)', area="<b>area</b>")
    html = render_html(sample_report(results=[hostile]))
    page = Page(html)
    assert all("onmouseover" not in attrs for _, attrs in page.tags)
    assert "<b>area</b>" not in html and "<h3>&lt;b&gt;area&lt;/b&gt;</h3>" in html


def test_html_shows_the_terminal_sections_counts_and_verdict() -> None:
    """Tool-defined: every human format shows the same sections, counts and verdict."""
    report = sample_report(FailOn.SHOULD)
    page = Page(render_html(report))
    ids = [attrs["id"] for attrs in page.named("section")]
    expected = {key for key, _, _, results in sections(report) if results}
    assert set(ids) == {*expected, "run-notes", "summary"}
    text = " ".join("".join(page.text).split())
    for _, title, _, results in sections(report):
        if results:
            assert f"{title} ({len(results)})" in text
    assert f"Verdict: {report.verdict()[1]}" in text
    counts = report.counts()
    assert f"{counts['passed']} passed · {counts['failed']} failed" in text


PAGE_ORDER = ["failed", "notes", "not_verified", "recommended", "known", "passed"]


def test_the_verdict_and_the_failures_come_before_the_notes_and_the_other_findings() -> None:
    """Tool-defined (issue 19): the header ends with the verdict, the failures follow, the notes come after them."""
    report = sample_report(results=[failed_must(), failed_should(), info_note(), not_verified(), passed()])
    page = Page(render_html(report))
    sections_in_order = [attrs["id"] for attrs in page.named("section")]
    assert sections_in_order == ["failed", "run-notes", "notes", "not_verified", "recommended", "passed", "summary"]
    order = [tag if tag != "p" else str(attrs.get("class")) for tag, attrs in page.tags if tag in ("p", "section")]
    assert order.index("verdict not-conformant") < order.index("section") < order.index("note")


def test_the_run_notes_and_the_informational_findings_are_folded() -> None:
    """Tool-defined (issue 19): notes are one click away, in a closed <details>; the failures stay open."""
    notes = [f"observation {index}: <b>{index}</b>" for index in range(16)]
    html = render_html(sample_report(results=[failed_must(), info_note(), passed()], notes=notes))
    page = Page(html)
    folded = [attrs for attrs in page.named("details") if attrs.get("class") == "folded"]
    assert len(folded) == 3 and not any("open" in attrs for attrs in folded)  # run notes, notes, passed
    text = " ".join("".join(page.text).split())
    assert "RUN NOTES (16)" in text and "show 16 run notes" in text and re.search(r"show 1 note(?!s)", text)
    assert "observation 15: <b>15</b>" in text and "<b>15</b>" not in html
    failed_part = html[html.index('<section id="failed">') : html.index('<section id="run-notes">')]
    assert "<details" not in failed_part.replace('<details class="evidence"', "")


def test_a_report_without_notes_has_no_run_notes_section() -> None:
    """Tool-defined: no empty fold."""
    page = Page(render_html(sample_report(results=[failed_must()], notes=[])))
    assert "run-notes" not in [attrs["id"] for attrs in page.named("section")]


def test_html_puts_evidence_in_details_and_leaves_out_not_applicable() -> None:
    """Tool-defined: evidence is collapsible; the first piece of a failure is unfolded."""
    page = Page(render_html(sample_report()))
    evidence = [attrs for attrs in page.named("details") if attrs.get("class") == "evidence"]
    assert len(evidence) == 4
    assert sum("open" in attrs for attrs in evidence) == 1
    assert not_applicable().title not in "".join(page.text)
    assert "curl -sS -X POST" in "".join(page.text)


def test_html_is_deterministic() -> None:
    """Tool-defined: rendering twice gives the same bytes."""
    assert render_html(sample_report()) == render_html(sample_report())


def test_html_for_a_clean_run_says_conformant() -> None:
    """Tool-defined: a page with passes only shows the green verdict and the folded list."""
    page = Page(render_html(sample_report(results=[passed()])))
    verdicts = [attrs["class"] for attrs in page.named("p") if "verdict" in (attrs.get("class") or "")]
    assert verdicts == ["verdict conformant", "verdict conformant"]


def test_a_pass_tagged_explain_shows_its_escaped_reason() -> None:
    """Tool-defined: explained passes show their reason; the server's text stays text."""
    explained = replace(passed(), reason="tool <b>x</b>: protocol error -32602 (HTTP 400)", tags=("explain",))
    silent = replace(passed(), check="other", title="Another pass", reason="14 messages judged")
    html = render_html(sample_report(results=[explained, silent]))
    assert "tool &lt;b&gt;x&lt;/b&gt;: protocol error -32602 (HTTP 400)" in html
    assert "14 messages judged" not in html


def test_every_result_carries_its_level_source_and_eras_for_the_filters() -> None:
    """Tool-defined: the attributes the filter rules select on match each result; the level is the grade a result
    counts at (the sample's SHOULD-level heuristic, a note, is ``info``)."""
    report = sample_report()
    page = Page(render_html(report))
    items = {attrs["id"]: attrs for attrs in page.named("li") if "result" in (attrs.get("class") or "")}
    expected = {
        failed_must(): ("must", "active", "2026-07-28"),
        passed(): ("must", "passive", ""),
    }
    for result, (level, source, eras) in expected.items():
        attrs = items[f"{result.check}-{result.source.value}"]
        assert (attrs["data-level"], attrs["data-source"], attrs["data-eras"]) == (level, source, eras)
    assert {attrs["data-level"] for attrs in items.values()} == {"must", "should", "info"}


def test_the_filter_bar_has_a_ticked_box_per_outcome_level_era_and_source_each_with_a_hiding_rule() -> None:
    """Tool-defined: filters work without a script: each box has a stylesheet rule that hides what it names."""
    report = sample_report()
    html = render_html(report)
    page = Page(html)
    boxes = [attrs for attrs in page.named("input") if attrs.get("type") == "checkbox"]
    ids = [str(attrs["id"]) for attrs in boxes]
    shown = [key for key in PAGE_ORDER if any(k == key and results for k, _, _, results in sections(report))]
    assert ids == [
        *(f"f-outcome-{key}" for key in shown),
        "f-level-must",
        "f-level-should",
        "f-level-info",
        "f-era-2026-07-28",
        "f-source-active",
        "f-source-explored",
        "f-source-passive",
    ]
    assert all("checked" in attrs for attrs in boxes)
    css = "".join(page.styles)
    for ident in ids:
        assert f"body:has(#{ident}:not(:checked))" in css, ident
    assert 'body:has(#f-level-should:not(:checked)) li.result[data-level="should"]' in css
    assert 'body:has(#f-source-explored:not(:checked)) li.result[data-source="explored"]' in css
    assert "body:has(#f-outcome-failed:not(:checked)) section#failed" in css
    assert "nav.filters { display: none; }" in css  # printing shows the results, not the controls


def test_a_result_judged_in_two_eras_stays_visible_until_both_are_unticked() -> None:
    """Tool-defined: the era rules hide a result only when every era it was judged in is unticked."""
    both = replace(failed_must(), revisions=("2025-11-25", "2026-07-28"))
    older = replace(failed_should(), revisions=("2025-11-25",))
    css = "".join(Page(render_html(sample_report(results=[both, older]))).styles)
    assert 'body:has(#f-era-2025-11-25:not(:checked)) li.result[data-eras="2025-11-25"]' in css
    assert 'body:has(#f-era-2026-07-28:not(:checked)) li.result[data-eras="2026-07-28"]' in css
    assert (
        "body:has(#f-era-2026-07-28:not(:checked)):has(#f-era-2025-11-25:not(:checked)) "
        'li.result[data-eras="2025-11-25 2026-07-28"]'
    ) in css


def test_a_revision_that_is_not_a_date_never_reaches_an_id_or_a_selector() -> None:
    """Tool-defined: a report read from disk may carry anything as a revision; only dates become filters."""
    hostile = replace(failed_must(), revisions=('x"]{}</style><b>', "2026-07-28"))
    html = render_html(sample_report(results=[hostile]))
    page = Page(html)
    assert page.problems == []
    assert [attrs["id"] for attrs in page.named("input") if str(attrs["id"]).startswith("f-era")] == [
        "f-era-2026-07-28"
    ]
    assert "</style><b>" not in html


def test_each_evidence_summary_says_when_a_reproduction_is_inside() -> None:
    """Tool-defined: the reproduction is one click away, and the summary says it is there."""
    page = Page(render_html(sample_report(results=[failed_must()])))
    text = "".join(page.text)
    first, second = failed_must().evidence
    assert f"evidence: {first.summary} (exchange a-12) · reproduce" in " ".join(text.split())
    assert f"evidence: {second.summary} (exchange a-13) · reproduce" not in " ".join(text.split())


def test_a_report_without_applicable_results_has_no_filter_bar() -> None:
    """Tool-defined: nothing to filter, no controls."""
    page = Page(render_html(sample_report(results=[not_applicable()])))
    assert page.named("nav") == [] and page.named("input") == []


def test_the_era_filter_offers_only_the_revisions_of_the_window() -> None:
    """Tool-defined: a probe offering an unsupported version (1900-01-01) does not become an era to filter by."""
    probed = replace(failed_must(), revisions=("1900-01-01", "2026-07-28"))
    page = Page(render_html(sample_report(results=[probed])))
    assert [attrs["id"] for attrs in page.named("input") if str(attrs["id"]).startswith("f-era")] == [
        "f-era-2026-07-28"
    ]
    (item,) = [attrs for attrs in page.named("li") if "result" in (attrs.get("class") or "")]
    assert item["data-eras"] == "2026-07-28"
