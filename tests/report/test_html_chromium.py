"""The HTML report opened in a real browser: headless Chromium lays it out, measures it and photographs it.

Skipped, with the reason, when no Chromium is installed (``tests/peers/ci-system-packages.sh``
installs it in CI). The browser is driven over the DevTools protocol (``tests/report/chromium.py``),
so the viewport has an exact size and the page's layout is read from the browser itself.

The README's screenshot is made here too: with ``MCP_ASSAY_SCREENSHOT_DIR`` set (to ``docs``),
the report of a real ``mcp-assay demo`` run (kept as ``tests/data/reports/demo-naive.json``) is
rendered in a 1400x1000 window and what the window shows is written there as ``html-report.png``.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.report.html import render_html
from mcp_assay.report.model import Report
from tests.report.chromium import Chromium
from tests.report.sample import sample_report

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DEMO_REPORT = Path(__file__).resolve().parents[1] / "data" / "reports" / "demo-naive.json"
SCREENSHOT_DIR_ENV = "MCP_ASSAY_SCREENSHOT_DIR"
README_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "html-report.png"
WINDOW = (1400, 1000)
"""The window the first screen is judged in (issue 19): a laptop's browser, not maximised."""

VISIBILITY = """
(() => {
  const seen = (element) => {
    if (!element) return null;
    const box = element.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + Math.min(box.height / 2, 10));
    return {top: box.top, bottom: box.bottom, left: box.left, right: box.right,
            uncovered: hit !== null && element.contains(hit)};
  };
  return {
    width: window.innerWidth, height: window.innerHeight, scrolled: window.scrollY,
    page: document.documentElement.scrollHeight,
    verdict: seen(document.querySelector('header .verdict')),
    failure: seen(document.querySelector('section#failed li.result')),
    failureHead: seen(document.querySelector('section#failed li.result .head')),
    failureReason: seen(document.querySelector('section#failed li.result .reason')),
  };
})()
"""
"""Where the verdict and the first failure sit in the viewport, and whether anything covers them."""

SHOWN = """
(() => {
  const shown = (selector) => [...document.querySelectorAll(selector)].filter((e) => e.getClientRects().length).length;
  return {failed: shown('section#failed li.result'), notVerified: shown('section#not_verified li.result'),
          recommended: shown('section#recommended li.result'), must: shown('li.result[data-level="must"]'),
          should: shown('li.result[data-level="should"]')};
})()
"""
"""How many results of each kind the browser lays out (a hidden one has no box)."""


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Chromium]:
    found = find_chromium()
    if found is None:
        pytest.skip(f"chromium not installed: none of {', '.join(CANDIDATES)} on PATH, no /usr/bin/chromium")
    with Chromium(found, tmp_path / "chromium") as chromium:
        yield chromium


def demo_report() -> Report:
    return Report.from_json(json.loads(DEMO_REPORT.read_text(encoding="utf-8")))


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header chunk."""
    assert data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def fully_visible(box: dict[str, Any] | None, width: int, height: int) -> bool:
    return (
        box is not None
        and box["uncovered"]
        and box["top"] >= 0
        and box["left"] >= 0
        and box["bottom"] <= height
        and box["right"] <= width
    )


def test_html_report_renders_in_headless_chromium(browser: Chromium) -> None:
    """Tool-defined: the self-contained page renders to a non-trivial screenshot in Chromium."""
    browser.open(render_html(sample_report()), "report", 1200, 1600)
    data = browser.screenshot()
    assert png_size(data) == (1200, 1600)
    assert len(data) > 10_000, f"screenshot is only {len(data)} bytes: probably a blank page"


def test_the_verdict_and_the_first_failure_are_visible_without_scrolling_in_a_1400x1000_window(
    browser: Chromium,
) -> None:
    """Tool-defined (issue 19): the demo's report answers on its first screen, above its sixteen notes."""
    report = demo_report()
    assert len(report.notes) >= 16 and report.failed()  # the case the issue saw
    width, height = WINDOW
    browser.open(render_html(report), "first-screen", width, height)
    layout = browser.evaluate(VISIBILITY)
    assert (layout["width"], layout["height"], layout["scrolled"]) == (width, height, 0), layout
    assert layout["page"] > 2 * height, layout  # the page is longer than the window: the order matters
    assert fully_visible(layout["verdict"], width, height), layout
    assert fully_visible(layout["failureHead"], width, height), layout
    assert fully_visible(layout["failureReason"], width, height), layout
    assert layout["failure"]["top"] < height, layout


def test_the_filters_hide_what_they_untick_in_a_real_browser(browser: Chromium) -> None:
    """Tool-defined: the script-free filters take effect in Chromium (its :has() support included)."""
    report = demo_report()
    browser.open(render_html(report), "filters", *WINDOW)
    before = browser.evaluate(SHOWN)
    assert before["failed"] == len([r for r in report.failed() if report.fail_on.decides(r)]) > 0, before
    assert before["notVerified"] > 0 and before["recommended"] > 0 and before["should"] > 0, before

    browser.evaluate("document.getElementById('f-outcome-failed').click()")
    unticked_failed = browser.evaluate(SHOWN)
    assert unticked_failed["failed"] == 0, unticked_failed
    assert unticked_failed["notVerified"] == before["notVerified"], unticked_failed

    browser.evaluate("document.getElementById('f-level-should').click()")
    unticked_should = browser.evaluate(SHOWN)
    assert unticked_should["should"] == 0 and unticked_should["must"] > 0, unticked_should

    browser.evaluate("['f-outcome-failed', 'f-level-should'].forEach((id) => document.getElementById(id).click())")
    assert browser.evaluate(SHOWN) == before


def test_the_readme_screenshot_is_the_first_screen_of_the_demo_report(browser: Chromium) -> None:
    """Tool-defined: the demo's report photographed in a 1400x1000 window; MCP_ASSAY_SCREENSHOT_DIR keeps it.

    ``MCP_ASSAY_SCREENSHOT_DIR=docs pytest tests/report/test_html_chromium.py`` regenerates the README's
    ``docs/html-report.png``; the one committed must have been taken in the same window."""
    browser.open(render_html(demo_report()), "demo", *WINDOW)
    data = browser.screenshot()
    assert png_size(data) == WINDOW
    assert len(data) > 30_000, f"screenshot is only {len(data)} bytes: probably a blank page"
    target = os.environ.get(SCREENSHOT_DIR_ENV)
    if target:
        folder = Path(target)
        assert folder.is_dir(), f"{SCREENSHOT_DIR_ENV}={target} is not a folder"
        (folder / README_SCREENSHOT.name).write_bytes(data)
    assert png_size(README_SCREENSHOT.read_bytes()) == WINDOW
