"""What a run did not try, the settings its not-verified results need, and the small report fixes of issue 27.

Tool-defined from the issue's evidence: the short report said "18 need settings" without saying which, named
no tool it had not called, doubled "(reverse proxy) (proxy, http)", wrapped its header mid-phrase, said
"12 recommended" in HTML where the terminal said "12 should", wrote "1 notes", and printed replays after
``--serve`` without saying the server was stopped.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from rich.cells import cell_len

from mcp_assay.report.about import Target
from mcp_assay.report.brief import render_brief, target_text
from mcp_assay.report.console import render_text
from mcp_assay.report.html import render_html
from mcp_assay.report.markdown import render_markdown
from mcp_assay.report.model import Report
from mcp_assay.report.untried import EXPLORE_STEP, Generated, Untried, generated_lines, settings_needed, untried_lines
from mcp_assay.report.wrap import phrase_lines
from tests.report.sample import eras_report, not_verified, passed, sample_report

NEEDS = {
    "no tool is known to fail: name one with --failing-tool (its arguments come from --tool-args) to see": "TOOL-15",
    "no behaviour cases configured: describe principals, witnesses and write_tools in --config": "BEH-04",
    "not probed: finding a rate limit takes load, so it is opt-in; name a read-only tool in the config file's "
    "rate_limit_probe (tool, arguments, burst, window_s)": "BEH-11",
    "every listed tool needs arguments the suite may not invent, and neither --tool-args nor --generate-args "
    "names one": "TOOL-10",
}


def needing() -> list:  # type: ignore[type-arg]
    return [
        replace(not_verified(), reason=reason, requirements=(ident,), blocked_by=None, check=f"c{number}")
        for number, (reason, ident) in enumerate(NEEDS.items())
    ]


def test_the_settings_the_not_verified_results_need_are_named_each_with_what_it_reaches() -> None:
    """Issue 27: "18 need settings" must say which settings."""
    found = {setting: (ids, count) for setting, ids, count in settings_needed(needing())}
    assert found == {
        "--failing-tool": (["TOOL-15"], 1),
        "behaviour sections in --config": (["BEH-04"], 1),
        "rate_limit_probe in --config": (["BEH-11"], 1),
        "--tool-args or --generate-args": (["TOOL-10"], 1),
    }
    brief = " ".join(render_brief(sample_report(results=[*needing(), passed()])).split())
    assert "4 need settings" in brief
    assert sum(count for _, _, count in settings_needed(needing())) == 4  # the settings named add up to the count
    assert "need settings: --failing-tool for 1 (TOOL-15); --tool-args or --generate-args for 1 (TOOL-10);" in brief


def test_what_was_not_tried_is_one_line_per_kind_with_its_step_and_what_it_reaches() -> None:
    untried = [
        Untried("tools", ("a", "b", "c", "d", "e"), "need arguments, not annotated readOnlyHint",
                "--generate-args a", requirements=("TOOL-10", "TOOL-11")),
        Untried("tools", ("f",), "is annotated destructiveHint", "only --tool-args '{\"f\": {…}}' calls it"),
        Untried("resources", ("file:///x",), "past the --resource-sample of 5", "--resource-sample 6",
                revisions=("2025-11-25",), count=3),
    ]  # fmt: skip
    assert untried_lines(untried) == [
        ("tools", "a, b, c, d (and 1 more) need arguments, not annotated readOnlyHint: --generate-args a "
                  "— 2 requirements wait on such a call (TOOL-10, TOOL-11); "
                  "f is annotated destructiveHint: only --tool-args '{\"f\": {…}}' calls it"),
        ("resources", "file:///x past the --resource-sample of 5 (in 2025-11-25): --resource-sample 6"),
    ]  # fmt: skip


def test_read_only_tools_not_explored_are_said_on_the_generated_line_not_a_row_of_their_own() -> None:
    """Issue 27: the step past one plain call is --explore; the header says so in the line naming the call."""
    generated = [Generated("lookup", '{"id": "mcp-assay"}', "readOnlyHint"), Generated("echo", "{}", "--generate-args")]
    plain = Untried("tools", ("lookup",), "had one plain call, not explored", EXPLORE_STEP)
    lines = generated_lines(generated, [plain])
    assert lines[0].endswith("the inputSchema (--explore tries many); --no-generate-args-read-only turns this off")
    assert "--explore" not in lines[1] and untried_lines([plain]) == []
    assert "--explore" not in " ".join(generated_lines(generated)), "an explored run has no such entry"
    assert Report.from_json(json.loads(json.dumps(sample_report(untried=[plain]).to_json()))).untried == [plain]


def test_coverage_is_in_the_json_report_and_reads_back() -> None:
    """Issue 27: the same information goes into the JSON report, so every writer can show it."""
    report = eras_report(results=[*eras_report().results, *needing()])
    data = json.loads(json.dumps(report.to_json()))
    coverage = data["coverage"]
    assert coverage["generated"][0]["tool"] == "lookup" and coverage["untried"][0]["names"] == ["search"]
    assert {item["setting"] for item in coverage["settings"]} >= {"--failing-tool", "rate_limit_probe in --config"}
    again = Report.from_json(data)
    assert again.untried == report.untried and again.generated == report.generated


@pytest.mark.parametrize("render", [render_brief, render_text, render_markdown, render_html])
def test_every_human_format_shows_what_was_generated_and_not_tried(render: object) -> None:
    text = " ".join(render(eras_report()).split())  # type: ignore[operator]
    text = text.replace("&quot;", '"').replace("&#x27;", "'")
    assert 'lookup {"id": "mcp-assay"} — annotated readOnlyHint' in text
    assert "--no-generate-args-read-only turns this off" in text
    assert "search needs arguments, not annotated readOnlyHint: --generate-args search" in text
    assert "2 requirements wait on such a call (TOOL-10, TOOL-11)" in text


def test_a_target_with_its_own_parenthesis_is_not_followed_by_another_saying_the_same() -> None:
    """Issue 27: "(reverse proxy) (proxy, http)"."""
    proxy = sample_report(
        target=Target(kind="proxy", description="http://h:8000/mcp (reverse proxy)", transport="http")
    )
    assert target_text(proxy) == "http://h:8000/mcp (reverse proxy, http)"
    demo = sample_report(target=Target(kind="demo", description="http://h/mcp (drafts, naive build)",
                                       transport="streamable-http"))  # fmt: skip
    assert target_text(demo) == "http://h/mcp (drafts, naive build, demo, streamable-http)"
    assert target_text(sample_report()) == "http://127.0.0.1:8000/mcp (suite, streamable-http)"


REVISION = (
    "2026-07-28 (per server/discover) and 2025-11-25 (per initialize) — every revision in the window this "
    "server serves, each tested on its own"
)


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_header_rows_are_cut_between_phrases_within_the_width(width: int) -> None:
    """Issue 27: header lines wrapped mid-phrase ("— ⏎ every revision")."""
    lines = phrase_lines(REVISION, width, first=10, indent=10)
    assert all(cell_len(line) <= width - 10 for line in lines)
    assert " ".join(lines) == REVISION
    for line in lines[1:]:
        assert line.startswith(("— ", "each ", "(per")), lines  # a new phrase opens every continuation
    quoted = phrase_lines('step: --tool-args \'{"a": {"b": 1}, "c": 2}\' and more, then more', 30)
    assert any('\'{"a": {"b": 1}, "c": 2}\'' in line for line in quoted), quoted


def test_the_brief_header_fits_the_width_at_80_columns() -> None:
    report = eras_report(revision_note=REVISION)
    header = render_brief(report, width=80).split("\n\n")[0].splitlines()
    assert all(cell_len(line) <= 80 for line in header), header
    assert "          — every revision in the window this server serves," in header


def test_every_format_uses_the_terminals_words_for_counts() -> None:
    """Issue 27: HTML said "12 recommended" where the terminal said "12 should", and "1 notes"."""
    report = sample_report()  # one SHOULD finding, one informational note
    html = render_html(report)
    assert "recommended</li>" not in html and re.search(r"<b>1</b> should</li>", html)
    assert re.search(r"<b>1</b> note</li>", html) and "notes</li>" not in html
    for text in (render_markdown(report), render_text(report), render_brief(report)):
        flat = " ".join(text.split())
        assert re.search(r"\b1 should\b", flat) and re.search(r"\b1 note\b", flat) and "1 notes" not in flat
        assert "1 recommended" not in flat and "RECOMMENDED" not in flat


def test_replays_after_serve_say_the_server_is_stopped() -> None:
    """Issue 27: replays printed after --serve hit a stopped server; the report says so where it prints them."""
    served = Target(kind="suite", description="http://127.0.0.1:8000/mcp", transport="streamable-http",
                    served="python server.py --port 8000")  # fmt: skip
    report = sample_report(target=served)
    caveat = "--serve stopped the server when the run ended: start it again before pasting a replay"
    brief = " ".join(render_brief(report).split())
    assert brief.index("FAILED (1)") < brief.index(caveat) < brief.index("curl ")
    assert "(python server.py --port 8000)" in brief
    for render in (render_text, render_markdown, render_html):
        assert caveat in " ".join(render(report).split())
    assert Report.from_json(report.to_json()).target.served == "python server.py --port 8000"
    assert caveat not in render_brief(sample_report())
