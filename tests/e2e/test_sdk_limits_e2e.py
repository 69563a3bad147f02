"""The SDK cross-check is never the judge of the server (issue 18): its limits are not the server's faults.

A real server on a loopback socket (:mod:`tests.peers.sdk_hostile_server`) answers everything as the
specification asks but ``tools/list``, whose answer is valid JSON the official SDK's parser refuses
(nesting 5,000 deep, an id of 5,000 digits) or an answer too big to read (500 MB, or a body without
end). ``mcp-assay run --only sdk`` runs as a user runs it, in a subprocess: the listing case is *not
verified* with the reason, never failed; the SDK's traceback stays off stderr unless ``--log-level
debug``; and the process reads no more of an answer than the suite does, so its peak memory (VmHWM)
stays far below what reading the answer whole takes.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.suite.transports.http import ANSWER_LIMIT
from tests.peers.assay import ROOT
from tests.peers.process import PYTHON, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

LISTS = "a_stock_sdk_client_lists_the_tools"
CONNECTS = {
    "2026-07-28": "a_stock_sdk_client_discovers_the_server",
    "2025-11-25": "a_stock_sdk_client_completes_the_handshake",
}
PEAK_MB = 300
"""Far below what reading a 500 MB answer whole takes (over 2 GB), far above what the run needs (about 130 MB)."""


@contextmanager
def hostile(mode: str, size: int = 0) -> Iterator[str]:
    port = free_port()
    command = [PYTHON, "-m", "tests.peers.sdk_hostile_server", str(port), mode, str(size)]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as server:
        yield server.url


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any]
    peak_mb: int
    """The mcp-assay process's VmHWM, read while it ran."""

    def sdk(self) -> dict[tuple[str, str], tuple[str, str]]:
        """The stock-client verdicts, by check and revision."""
        return {
            (item["check"], item["revision"]): (item["outcome"], item["reason"])
            for item in self.report["results"]
            if "sdk" in item["check"] and item["outcome"] != "not_applicable"
        }


def _peak_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmHWM:")), 0)
    except OSError:
        return 0


def run(spec_path: Path, tmp_path: Path, url: str, *extra: str) -> Run:
    """``mcp-assay run --only sdk`` in a subprocess, its peak memory sampled until it exits (bounded)."""
    report = tmp_path / "report.json"
    command = [PYTHON, "-m", "mcp_assay", *extra, "run", "-u", url, "--only", "sdk", "--timeout", "5",
               "--spec-dir", str(spec_path), "--report", f"json:{report}"]  # fmt: skip
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, cwd=ROOT, env=dict(os.environ))
        peak, deadline = 0, time.monotonic() + 100
        while process.poll() is None and time.monotonic() < deadline:
            peak = max(peak, _peak_kb(process.pid))
            time.sleep(0.02)
        code = process.wait(timeout=5)
    return Run(code, out.read_text(), err.read_text(), json.loads(report.read_text(encoding="utf-8")), peak // 1024)


@pytest.mark.parametrize(
    ("mode", "limit"), [("deep", "recursion limit exceeded"), ("digits", "number out of range")], ids=["deep", "digits"]
)
def test_an_answer_past_the_sdks_parser_limits_is_not_verified_and_its_traceback_stays_quiet(
    spec_path: Path, tmp_path: Path, mode: str, limit: str
) -> None:
    """Tool-defined (issue 18): valid JSON the SDK's parser cannot take is the SDK's limit, not a TOOL-05 failure;
    the SDK's 'Error parsing JSON response' traceback is shown at --log-level debug only."""
    with hostile(mode, 5000) as url:
        quiet = run(spec_path, tmp_path, url)
        debug = run(spec_path, tmp_path, url, "--log-level", "debug")
    found = quiet.sdk()
    for revision, connect in CONNECTS.items():
        assert found[(connect, revision)][0] == "passed", found
        outcome, reason = found[(LISTS, revision)]
        assert outcome == "not_verified" and "the SDK's own JSON parser stopped at a limit" in reason, found
        assert limit in reason and "not a fault of the server" in reason
    assert quiet.code == 0 and quiet.report["verdict"]["exit_code"] == 0, quiet.stdout
    assert "Traceback" not in quiet.stderr and "Error parsing JSON response" not in quiet.stderr, quiet.stderr
    assert "Error parsing JSON response" in debug.stderr and "Traceback" in debug.stderr
    assert debug.sdk() == found


@pytest.mark.parametrize(("mode", "size"), [("huge", 500_000_000), ("endless", 0)])
def test_a_huge_or_endless_answer_is_read_no_further_than_the_suite_reads(
    spec_path: Path, tmp_path: Path, mode: str, size: int
) -> None:
    """Tool-defined (issue 18): the SDK's client stops at the suite's answer limit, the process's peak memory
    stays bounded, and the listing case is not verified with the limit as its reason."""
    with hostile(mode, size) as url:
        bounded = run(spec_path, tmp_path, url)
    assert bounded.peak_mb < PEAK_MB, f"peak {bounded.peak_mb} MB"
    found = bounded.sdk()
    for revision, connect in CONNECTS.items():
        assert found[(connect, revision)][0] == "passed", found
        outcome, reason = found[(LISTS, revision)]
        assert outcome == "not_verified", found
        assert f"the answer passed the {ANSWER_LIMIT}-byte limit the run reads of one answer" in reason
    assert bounded.code == 0 and "Traceback" not in bounded.stderr, bounded.stderr
