"""`mcp-assay validate --jobs N` on real recordings: the same report as one process, and clear errors.

Tool-defined (issue 31). A folder of the project's recorded sessions (the official Python SDK over both
revisions, and a broken server) is judged by the command itself, once in one process and once in two;
the reports must be the same bytes apart from the time they took and when they were written.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from tests.cli.test_hostile_input import assert_one_line_usage_error

DATA = Path(__file__).resolve().parents[1] / "data" / "recordings"
SESSIONS = ("broken-2026-07-28.jsonl", "python-sdk-2025-11-25.jsonl", "python-sdk-2026-07-28.jsonl")


def _without_timings(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    data.pop("generated_at")
    data["stats"].pop("duration_ms")
    return data


def test_two_processes_give_the_report_of_one(spec_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "nightly"
    folder.mkdir()
    for name in SESSIONS:
        shutil.copy(DATA / name, folder / name)
    (folder / "notes.txt").write_text("not a recording", encoding="utf-8")
    runs = {}
    for jobs in (1, 2):
        report = tmp_path / f"jobs-{jobs}.json"
        done = subprocess.run(
            [sys.executable, "-m", "mcp_assay", "validate", str(folder), "--jobs", str(jobs),
             "--spec-dir", str(spec_path), "--report", f"json:{report}"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        runs[jobs] = (done.returncode, _without_timings(report))
    (code, one), (code_two, two) = runs[1], runs[2]
    assert code == code_two == 1, "the broken server fails a MUST in both runs"
    assert one == two
    assert one["target"]["inputs"] == ["recording"] * 3, "the three recordings, not the text file"
    assert one["summary"]["failed"] and one["summary"]["passed"]
    failed = [verdict for verdict in one["results"] if verdict["outcome"] == "failed"]
    named = [item["exchange"] for verdict in failed for item in verdict["evidence"] if item["exchange"]]
    assert named and all(name.startswith(("f1:", "f2:", "f3:")) for name in named), "evidence names its file"
    assert any(name.startswith("f1:") for name in named), "the broken server's failures are there"


@pytest.mark.parametrize(
    ("args", "source"),
    [
        (["--jobs", "0", str(DATA / SESSIONS[0])], "--jobs"),
        (["--jobs", "2", "--cluster", "tcp://127.0.0.1:9", str(DATA / SESSIONS[0])], "--cluster"),
        ([str(DATA / "no-such-folder") + "/"], "no-such-folder"),
        ([str(DATA / "*.nothing")], "*.nothing"),
    ],
)
def test_bad_jobs_and_locations_are_one_usage_error(spec_path: Path, args: list[str], source: str) -> None:
    result = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), *args], prog_name="mcp-assay")
    assert_one_line_usage_error(result, source)
