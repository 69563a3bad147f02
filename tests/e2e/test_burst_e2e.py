"""BEH-11 end to end: the opt-in burst against the SDK server behind a real rate limit, the same server
without one (HTTP and stdio), and a run that did not ask for it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.peers.process import HERE, PYTHON, free_port, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ROOT = HERE.parent.parent
CONFIG = "rate_limit_probe:\n  tool: add\n  arguments: {a: 1, b: 2}\n  burst: 12\n  window_s: 1\n"


def _run(
    tmp_path: Path, *target: str, config: str | None = CONFIG, only: str = "burst,BEH-11"
) -> tuple[int, dict[str, Any]]:
    report = tmp_path / "report.json"
    args = [*target, "--only", only, "--report", f"json:{report}"]
    if config is not None:
        (tmp_path / "mcp-assay.yaml").write_text(config)
        args += ["--config", str(tmp_path / "mcp-assay.yaml")]
    done = subprocess.run(
        [PYTHON, "-m", "mcp_assay", "run", *args], capture_output=True, text=True, timeout=100, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    data = json.loads(report.read_text())
    assert done.returncode == data["verdict"]["exit_code"] and done.returncode in (0, 1, 3), done.stderr
    # each revision the server serves runs the burst; the newest one meets the server's limit first
    newest = data["revisions"]["tested"][0]
    (verdict,) = [r for r in data["results"] if "BEH-11" in r["requirements"] and r.get("revision") == newest]
    return done.returncode, verdict


def test_a_server_behind_a_rate_limit_passes_beh_11(tmp_path: Path) -> None:
    """Spec-mandated (BEH-11): five calls per ten seconds, twelve sent in one: the sixth gets a 429."""
    port = free_port()
    serve = shlex.join([PYTHON, str(HERE / "limited_server.py"), str(port), "5", "10"])
    code, verdict = _run(tmp_path, "-u", f"http://127.0.0.1:{port}/mcp", "--serve", serve)
    assert code == 0
    assert verdict["outcome"] == "passed", verdict["reason"]
    assert "7 of 12 burst calls were limited" in verdict["reason"] and "as call 6" in verdict["reason"]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_server_without_a_limit_gets_an_informational_note(tmp_path: Path, transport: str) -> None:
    """Spec-mandated (BEH-11 is a MAY): the burst served whole is a note, and the exit code stays 0."""
    if transport == "http":
        port = free_port()
        target = ["-u", f"http://127.0.0.1:{port}/mcp", "--serve", shlex.join(sdk_server_command(port=port))]
    else:
        target = ["-c", shlex.join(sdk_server_command())]
    code, verdict = _run(tmp_path, *target)
    assert code == 0
    assert verdict["outcome"] == "failed" and verdict["severity"] == "info"
    assert "all 12 calls of the burst" in verdict["reason"]


def test_a_run_that_did_not_ask_for_the_burst_sends_none(tmp_path: Path) -> None:
    """Tool-defined: finding a limit takes load, so without rate_limit_probe BEH-11 is not verified, and naming the
    burst family without it is refused before anything is sent (issue 28: the help lists the family)."""
    _, verdict = _run(tmp_path, "-c", shlex.join(sdk_server_command()), config=None, only="BEH-11")
    assert verdict["outcome"] == "not_verified"
    assert "rate_limit_probe" in verdict["reason"]
    refused = subprocess.run(
        [PYTHON, "-m", "mcp_assay", "run", "-c", shlex.join(sdk_server_command()), "--only", "burst"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert refused.returncode == 2 and "rate_limit_probe" in refused.stderr, refused.stderr
