"""The Markdown report: same sections as the terminal, and server text that cannot become markup."""

from __future__ import annotations

import re
from dataclasses import replace

from markdown_it import MarkdownIt

from mcp_assay.report.console import sections, summary_lines
from mcp_assay.report.markdown import code, render_markdown, text
from mcp_assay.report.model import FailOn
from mcp_assay.vocabulary.verdicts import Evidence
from tests.report.sample import (
    assert_golden,
    failed_must,
    not_applicable,
    passed,
    sample_report,
    with_reason,
)


def to_html(markdown: str) -> str:
    """Render like GitHub would (CommonMark, tables, raw HTML allowed)."""
    return str(MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough").render(markdown))


def test_markdown_report_matches_its_golden_file() -> None:
    """Tool-defined: the Markdown layout of the sample report is stable."""
    assert_golden("report.md", render_markdown(sample_report()))


def test_markdown_shows_the_terminal_sections_counts_and_verdict() -> None:
    """Tool-defined: every human format shows the same sections, counts and verdict."""
    report = sample_report(FailOn.SHOULD)
    markdown = render_markdown(report)
    headings = re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    expected = [f"{title} ({len(results)})" for _, title, _, results in sections(report) if results]
    assert headings == [*expected, "Summary"]
    counts_line, applied_line = summary_lines(report)
    assert counts_line.replace("  ", " · ") in markdown
    assert applied_line in markdown
    assert markdown.rstrip().endswith(f"**Verdict: {text(report.verdict()[1])}**")


def test_markdown_starts_with_the_revision_and_a_target_table() -> None:
    """Tool-defined: heading with the revision, then a small table about the target."""
    lines = render_markdown(sample_report()).splitlines()
    assert lines[0] == "# MCP conformance report — 2026-07-28"
    assert "| target | http://127.0.0.1:8000/mcp |" in lines
    assert "| transport | streamable-http |" in lines


def test_markdown_failed_item_lists_requirement_reason_evidence_and_reproduction() -> None:
    """Tool-defined: a failure shows its IDs, reason, evidence in code, and the curl in a fence."""
    markdown = render_markdown(sample_report())
    assert "`RPC-15`" in markdown
    assert "answered no/such\\_method with code -32600 instead of -32601" in markdown
    assert "`POST /mcp no/such_method id=7 -> 200 application/json`" in markdown
    html = to_html(markdown)
    assert '<pre><code class="language-sh">curl -sS -X POST' in html
    assert "Bearer [REDACTED]" in html


def test_markdown_leaves_out_not_applicable_results() -> None:
    """Tool-defined: not-applicable results are omitted from human formats."""
    assert not_applicable().title not in render_markdown(sample_report())


def test_server_text_cannot_create_links_html_or_emphasis() -> None:
    """Tool-defined: Markdown-sensitive characters in server text are escaped."""
    hostile = "<script>alert(1)</script> [click](javascript:alert(1)) **bold** | cell ~~gone~~ &amp; # h"
    markdown = render_markdown(sample_report(results=[with_reason(failed_must(), hostile)]))
    html = to_html(markdown)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<a " not in html
    assert "<strong>bold</strong>" not in html
    assert "<del>" not in html
    assert "&amp;amp;" in html


def test_reason_that_looks_like_a_block_stays_inline() -> None:
    """Tool-defined: a reason starting with '- ', '1.' or '=' does not become a list or heading."""
    for reason in ("- not a list", "1. not a list", "=== not a heading", "> not a quote"):
        html = to_html(render_markdown(sample_report(results=[with_reason(failed_must(), reason)])))
        assert html.count("<ul>") == 2, reason  # the area list and the evidence list
        assert "<ol" not in html and "<h2>not" not in html and "<blockquote>" not in html.split("FAILED")[1]


def test_backticks_in_evidence_do_not_break_code_spans_or_fences() -> None:
    """Tool-defined: fences are longer than any backtick run in the content."""
    evidence = Evidence(summary="POST /mcp `x` ``y``", excerpt="```\n# not a heading\n```", exchange="e1")
    result = replace(failed_must(), evidence=(evidence,))
    html = to_html(render_markdown(sample_report(results=[result])))
    assert "<code>POST /mcp `x` ``y``</code>" in html
    assert "<h1>not a heading</h1>" not in html
    assert "# not a heading" in html
    assert code("`a`") == "`` `a` ``"


def test_passed_results_are_folded_away() -> None:
    """Tool-defined: the PASSED list sits in a <details> block so a pull request stays short."""
    markdown = render_markdown(sample_report(results=[passed()]))
    assert "<details><summary>1 passed</summary>" in markdown
    assert (
        markdown.index("<details>")
        < markdown.index("Every message declares jsonrpc 2.0")
        < markdown.index("</details>")
    )


def test_a_pass_tagged_explain_shows_its_escaped_reason() -> None:
    """Tool-defined: explained passes carry their reason inside the folded list; others do not."""
    explained = replace(passed(), reason="tool *x*: tool result with isError: true (HTTP 200)", tags=("explain",))
    silent = replace(passed(), check="other", title="Another pass", reason="14 messages judged")
    markdown = render_markdown(sample_report(results=[explained, silent]))
    assert r"tool \*x\*: tool result with isError: true (HTTP 200)" in markdown
    assert "14 messages judged" not in markdown
