"""A baseline as a server author uses it in CI: start one from a run, explain each entry, rerun.

Against the Python SDK server (whose MUST findings are known, see ``suite_expected.yaml``), over
the real CLI: the first run fails, ``mcp-assay report --write-baseline`` lists its failures, and
with their reasons filled in the second run passes with the failures shown as KNOWN. An entry for
a check that passes makes the run fail again; a baseline with a mistake stops before any work.
The tap carries the baseline to its judging worker too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.peers.process import sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

CLI = [sys.executable, "-m", "mcp_assay"]
SDK_ARGS = ["--tool-args", '{"add": {"a": 1, "b": 2}, "chatty": {}}', "--only", "HTTP,LOG,RPC"]


def assay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=150, check=False)


def report_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_a_baseline_from_a_failing_run_makes_the_rerun_pass_until_an_entry_goes_stale(
    spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined: the CI workflow end to end against a real server."""
    first, second, third = (tmp_path / f"run-{n}.json" for n in (1, 2, 3))
    baseline = tmp_path / "baseline.yaml"
    with sdk_http_server() as server:
        common = ["run", "-u", server.url, "--spec-dir", str(spec_path), *SDK_ARGS]
        failing = assay(*common, "--report", f"json:{first}")
        assert failing.returncode == 1, failing.stderr
        written = assay("report", str(first), "--write-baseline", str(baseline))
        assert written.returncode == 0 and "fill in every reason" in written.stderr
        refused = assay(*common, "--baseline", str(baseline))
        assert refused.returncode == 2 and "reason is empty" in refused.stderr
        data = yaml.safe_load(baseline.read_text(encoding="utf-8"))
        for entry in data["known"]:
            entry["reason"] = "mcp 2.3.0 behaviour, see docs/known-findings.md"
        baseline.write_text(yaml.safe_dump(data), encoding="utf-8")
        shown = ["--report", "terminal", "--show", "known"]
        passing = assay(*common, "--baseline", str(baseline), "--report", f"json:{second}", *shown)
        assert passing.returncode == 0, passing.stdout
        assert "KNOWN (" in passing.stdout and "baseline: mcp 2.3.0 behaviour" in passing.stdout
        known = [r for r in report_of(second)["results"] if r["known"]]
        assert {r["check"] for r in known} == {entry["check"] for entry in data["known"]}
        data["known"].append({"check": "messages_are_jsonrpc_2_0_objects", "reason": "fixed upstream since"})
        baseline.write_text(yaml.safe_dump(data), encoding="utf-8")
        stale = assay(*common, "--baseline", str(baseline), "--report", f"json:{third}")
    assert stale.returncode == 1
    status = report_of(third)["baseline"]
    entry = "check messages_are_jsonrpc_2_0_objects now passes; remove the entry (fixed upstream since)"
    assert status["stale"] == [entry]
    assert report_of(third)["verdict"]["code"] == "baseline-stale"


def test_the_tap_applies_the_baseline_in_its_worker(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: the stdio tap's report says which entries this session could not confirm."""
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(
        yaml.safe_dump(
            {"schema": "mcp-assay.baseline/1", "known": [{"requirement": "STDIO-02", "reason": "banner on stdout"}]}
        ),
        encoding="utf-8",
    )
    report = tmp_path / "tap.json"
    result = subprocess.run(
        [*CLI, "tap", "--spec-dir", str(spec_path), "--baseline", str(baseline), "--report", f"json:{report}",
         "--", sys.executable, "-c", "print('hello from a server that is not MCP')"],
        input="", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = report_of(report)
    assert data["baseline"]["path"] == str(baseline)
    failed = [r for r in data["results"] if r["outcome"] == "failed" and "STDIO-02" in r["requirements"]]
    assert failed and all(r["known"] == "banner on stdout" for r in failed), data["results"]
    assert data["verdict"]["exit_code"] == 0


def test_a_baseline_with_a_mistake_stops_the_tap_before_the_server_starts(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: one clear error, exit 2, and the server never runs."""
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("schema: mcp-assay.baseline/1\nknown: [{check: no_such_check, reason: x}]\n", "utf-8")
    marker = tmp_path / "started"
    result = subprocess.run(
        [*CLI, "tap", "--spec-dir", str(spec_path), "--baseline", str(baseline),
         "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"],
        input="", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "no check is called 'no_such_check'" in result.stderr
    assert not marker.exists()
