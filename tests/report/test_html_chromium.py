"""The HTML report opened in a real browser: headless Chromium renders it and takes a screenshot.

Skipped, with the reason, when no Chromium is installed (``tests/peers/ci-system-packages.sh``
installs it in CI). The browser runs with networking features off and a throw-away profile.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from mcp_assay.report.html import render_html
from tests.report.sample import sample_report

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def test_html_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    """Tool-defined: the self-contained page renders to a non-trivial screenshot in Chromium."""
    browser = find_chromium()
    if browser is None:
        pytest.skip(f"chromium not installed: none of {', '.join(CANDIDATES)} on PATH, no /usr/bin/chromium")
    page = tmp_path / "report.html"
    page.write_text(render_html(sample_report()), encoding="utf-8")
    screenshot = tmp_path / "report.png"
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={screenshot}",
        "--window-size=1200,1600",
        page.resolve().as_uri(),
    ]
    # The browser starts helper processes; give it its own session so a hung run is ended whole.
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env, start_new_session=True
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
    assert screenshot.is_file(), f"no screenshot; chromium exited {process.returncode}: {stderr[-2000:]!r}"
    data = screenshot.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 10_000, f"screenshot is only {len(data)} bytes: probably a blank page"
