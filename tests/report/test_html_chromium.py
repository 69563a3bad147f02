"""The HTML report opened in a real browser: headless Chromium renders it and takes a screenshot.

Skipped, with the reason, when no Chromium is installed (``tests/peers/ci-system-packages.sh``
installs it in CI). The browser runs with networking features off and a throw-away profile.

The README's screenshot is made here too: with ``MCP_ASSAY_SCREENSHOT_DIR`` set (to ``docs``),
the report of a real ``mcp-assay demo`` run (kept as ``tests/data/reports/demo-naive.json``) is
rendered and its screenshot written there as ``html-report.png``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from mcp_assay.report.html import render_html
from mcp_assay.report.model import Report
from tests.report.sample import sample_report

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DEMO_REPORT = Path(__file__).resolve().parents[1] / "data" / "reports" / "demo-naive.json"
SCREENSHOT_DIR_ENV = "MCP_ASSAY_SCREENSHOT_DIR"
README_SCREENSHOT = "html-report.png"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


@pytest.fixture
def browser() -> str:
    found = find_chromium()
    if found is None:
        pytest.skip(f"chromium not installed: none of {', '.join(CANDIDATES)} on PATH, no /usr/bin/chromium")
    return found


def screenshot(browser: str, html: str, folder: Path, name: str, size: str = "1200,1600") -> bytes:
    """Render ``html`` from a file and return the PNG Chromium took of it (bounded to 60 s)."""
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    shot = folder / f"{name}.png"
    profile = folder / f"profile-{name}"
    command = [
        browser, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}", f"--window-size={size}",
        page.resolve().as_uri(),
    ]  # fmt: skip
    # The browser starts helper processes; give it its own session so a hung run is ended whole.
    env = {**os.environ, "HOME": str(folder), "XDG_CONFIG_HOME": str(folder), "XDG_CACHE_HOME": str(folder)}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=folder, env=env, start_new_session=True
    )
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        stderr = b""
        pytest.fail(f"chromium did not finish within 60 s: {' '.join(command)}")
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
    assert shot.is_file(), f"no screenshot; chromium exited {process.returncode}: {stderr[-2000:]!r}"
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    return data


def demo_report() -> Report:
    return Report.from_json(json.loads(DEMO_REPORT.read_text(encoding="utf-8")))


def test_html_report_renders_in_headless_chromium(browser: str, tmp_path: Path) -> None:
    """Tool-defined: the self-contained page renders to a non-trivial screenshot in Chromium."""
    data = screenshot(browser, render_html(sample_report()), tmp_path, "report")
    assert len(data) > 10_000, f"screenshot is only {len(data)} bytes: probably a blank page"


def test_unticking_the_outcome_filters_hides_the_results_in_a_real_browser(browser: str, tmp_path: Path) -> None:
    """Tool-defined: the script-free filters take effect in Chromium (its :has() support included).

    The same page is rendered with every outcome box ticked and with every one unticked: the second
    keeps only the header and the filter bar, so its screenshot differs and compresses far smaller.
    """
    html = render_html(demo_report())
    unticked, count = re.subn(r'(id="f-outcome-[a-z_]+") checked>', r"\1>", html)
    assert count >= 3
    full = screenshot(browser, html, tmp_path, "full", size="1200,3000")
    filtered = screenshot(browser, unticked, tmp_path, "filtered", size="1200,3000")
    assert full != filtered
    assert len(filtered) < len(full) * 0.7, (len(filtered), len(full))


def test_the_demo_report_renders_and_can_be_kept_as_the_readme_screenshot(browser: str, tmp_path: Path) -> None:
    """Tool-defined: the report of a real demo run renders; MCP_ASSAY_SCREENSHOT_DIR keeps the PNG (docs/)."""
    data = screenshot(browser, render_html(demo_report()), tmp_path, "demo", size="1200,1500")
    assert len(data) > 30_000, f"screenshot is only {len(data)} bytes: probably a blank page"
    target = os.environ.get(SCREENSHOT_DIR_ENV)
    if target:
        folder = Path(target)
        assert folder.is_dir(), f"{SCREENSHOT_DIR_ENV}={target} is not a folder"
        (folder / README_SCREENSHOT).write_bytes(data)
