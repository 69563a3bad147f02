"""`mcp-assay validate` on a small hand-written recording: every format, --only, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.recording.records import RecordingWriter
from mcp_assay.recording.redaction import Redactor
from mcp_assay.wire.model import Observation
from tests.factories import http, modern_call, request_body


def record(path: Path, *, broken: bool) -> Path:
    """A tools/list call, and optionally a second answered with ``"jsonrpc": "1.0"`` (RPC-01)."""
    writer = RecordingWriter(path, Redactor(), source="test")
    writer.exchange(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}, ident=1))
    if broken:
        writer.exchange(http(request_body("tools/list", 2), {"jsonrpc": "1.0", "id": 2, "result": {"tools": []}}))
    writer.close()
    return path


@pytest.fixture
def broken_recording(tmp_path: Path) -> Path:
    return record(tmp_path / "broken.jsonl", broken=True)


def test_validate_writes_every_format_from_one_run(spec_path: Path, broken_recording: Path, tmp_path: Path) -> None:
    """Tool-defined: terminal, json, markdown, html, junit and tap all come out of one judgement."""
    files = {
        "terminal": tmp_path / "r.txt",
        "json": tmp_path / "r.json",
        "markdown": tmp_path / "r.md",
        "html": tmp_path / "r.html",
        "junit": tmp_path / "r.xml",
        "tap": tmp_path / "r.tap",
    }
    args = [str(broken_recording)]
    for name, path in files.items():
        args += ["--report", f"{name}:{path}"]
    result = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), *args])
    assert result.exit_code == 1, result.output
    data = json.loads(files["json"].read_text())
    assert any("RPC-01" in r["requirements"] and r["outcome"] == "failed" for r in data["results"])
    evidence = data["target"].pop("evidence")
    assert data["target"] == {
        "kind": "recording",
        "description": str(broken_recording),
        "transport": "http",
        "inputs": ["recording"],
    }
    assert [(item["file"], item["chain"], len(item["sha256"])) for item in evidence] == [
        (str(broken_recording), "whole", 64)
    ]
    assert "FAILED (" in files["terminal"].read_text()
    assert "RPC-01" in files["markdown"].read_text()
    assert files["html"].read_text().startswith("<!DOCTYPE html>")
    root = ET.fromstring(files["junit"].read_text().encode())
    assert int(root.attrib["failures"]) >= 1
    tap = files["tap"].read_text()
    assert tap.startswith("TAP version 14\n") and "\nnot ok " in tap


def test_only_narrows_the_checks_to_matching_requirements(spec_path: Path, broken_recording: Path) -> None:
    """Tool-defined: --only RPC judges only checks citing RPC-* requirements."""
    result = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--only", "RPC", "--report", "json:-"]
    )
    assert result.exit_code == 1, result.output
    results = json.loads(result.stdout)["results"]
    assert results
    assert all(any(ident.startswith("RPC-") for ident in r["requirements"]) for r in results)
    everything = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--report", "json:-"]
    )
    assert len(json.loads(everything.stdout)["results"]) > len(results)


def test_only_matching_nothing_is_a_usage_error(spec_path: Path, broken_recording: Path) -> None:
    """Tool-defined: a filter that selects no check exits 2."""
    result = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--only", "NO-SUCH-THING"]
    )
    assert result.exit_code == 2
    assert "--only NO-SUCH-THING: not a requirement ID or prefix" in result.stderr
    unmatched = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--only", "NOPE"]
    )
    assert unmatched.exit_code == 2 and "--only NOPE: no check cites a requirement" in unmatched.stderr
    family = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--only", "tools"]
    )
    assert family.exit_code == 2 and "probe families are for `mcp-assay run`" in family.stderr


def test_clean_recording_exits_0_and_fail_on_never_silences_a_failure(
    spec_path: Path, broken_recording: Path, tmp_path: Path
) -> None:
    """Tool-defined: exit 0 without MUST failures; --fail-on never exits 0 even with them."""
    clean = record(tmp_path / "clean.jsonl", broken=False)
    ok = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), str(clean), "--only", "RPC"])
    assert ok.exit_code == 0, ok.output
    args = ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--fail-on", "never", "--report", "tap:-"]
    never = CliRunner().invoke(cli, args)
    assert never.exit_code == 0, never.output
    assert "\nnot ok " in never.stdout


def test_validate_rejects_an_unknown_format_before_reading_anything(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: a bad --report exits 2, not 3, even for an unreadable input."""
    junk = tmp_path / "junk.txt"
    junk.write_text("hello")
    result = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), str(junk), "--report", "docx"])
    assert result.exit_code == 2
    assert "unknown format 'docx'" in result.stderr


def test_a_file_that_is_not_a_recording_is_a_usage_error(spec_path: Path, tmp_path: Path) -> None:
    """Issue 27 (the README's rule for bad input): a file no reader reads is one line under the usage, exit 2,
    before any work; a server's own source gets the `run -c` line that tests the server it starts."""
    junk = tmp_path / "junk.txt"
    junk.write_text("hello")
    result = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), str(junk)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {junk}: not a recording mcp-assay can read "
        "(an mcp-assay JSONL recording, a mitmproxy flow file or a HAR file expected)"
    )
    server = tmp_path / "server.py"
    server.write_text("from mcp.server import MCPServer\n")
    result = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), str(server)])
    assert result.exit_code == 2 and result.stderr.startswith("Usage: ")
    assert result.stderr.strip().endswith(f"; to test the server it starts: mcp-assay run -c 'python {server}'")


def test_only_flag_wins_over_its_environment_twin(spec_path: Path, broken_recording: Path) -> None:
    """Tool-defined: --only beats MCP_ASSAY_ONLY."""
    result = CliRunner().invoke(
        cli,
        ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--only", "RPC-01", "--report", "json:-"],
        env={"MCP_ASSAY_ONLY": "NO-SUCH-THING"},
    )
    assert result.exit_code == 1, result.output
    results = json.loads(result.stdout)["results"]
    assert results and all("RPC-01" in r["requirements"] for r in results)


def test_a_baseline_accepts_the_recordings_failure_and_a_bad_one_is_a_usage_error(
    spec_path: Path, broken_recording: Path, tmp_path: Path
) -> None:
    """Tool-defined: --baseline turns the recording's known failures into KNOWN; a mistake stops before judging."""
    baseline = tmp_path / "baseline.yaml"
    entries = ", ".join(f"{{requirement: {ident}, reason: old peer}}" for ident in ("RPC-01", "RES-01", "RES-04"))
    baseline.write_text(f"schema: mcp-assay.baseline/1\nknown: [{entries}]\n", "utf-8")
    runner = CliRunner()
    args = ["validate", "--spec-dir", str(spec_path), str(broken_recording), "--baseline", str(baseline)]
    accepted = runner.invoke(cli, args)
    assert accepted.exit_code == 0, accepted.output
    assert "· 3 known" in accepted.output and "KNOWN (" not in accepted.output
    listed = runner.invoke(cli, [*args, "--show", "known"])
    assert "KNOWN (3)" in listed.output and "baseline: old peer" in listed.output
    baseline.write_text("schema: mcp-assay.baseline/1\nknown: [{requirement: RPC-01}]\n", "utf-8")
    refused = runner.invoke(cli, args)
    assert refused.exit_code == 2 and "reason is empty" in refused.output


def test_validate_counts_exchanges_without_the_observations(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: a recording's observations (audit lines, notes) are counted apart from its exchanges."""
    path = tmp_path / "r.jsonl"
    writer = RecordingWriter(path, Redactor(), source="test")
    writer.exchange(modern_call("tools/list", {}, {"tools": [], "ttlMs": 0, "cacheScope": "private"}, ident=1))
    writer.exchange(Observation(id="o1", time=1_700_000_000.0, kind="note", data={"detail": "a note"}))
    writer.close()
    report = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["validate", str(path), "--spec-dir", str(spec_path), "--report", f"json:{report}"]
    )
    assert result.exit_code == 0, result.output
    stats = json.loads(report.read_text())["stats"]
    assert (stats["exchanges"], stats["observations"]) == (1, 1)


def test_a_defect_inside_mcp_assay_exits_3_with_one_line_never_1(
    spec_path: Path, broken_recording: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: exit 1 means "a MUST failed"; a crash of the tool itself must not say that about the software."""
    import mcp_assay.cli.validate as validate

    def defect(*_: object) -> None:
        raise RuntimeError("a bug in mcp-assay")

    monkeypatch.setattr(validate, "judge_here", defect)
    result = CliRunner().invoke(cli, ["validate", str(broken_recording), "--spec-dir", str(spec_path)])
    assert result.exit_code == 3, result.output
    assert "internal error" in result.output and "RuntimeError: a bug in mcp-assay" in result.output


def test_write_baseline_accepts_this_runs_failures_once_each_is_explained(
    spec_path: Path, broken_recording: Path, tmp_path: Path
) -> None:
    """Tool-defined (issue 19): --write-baseline as the failing run's hint says; then --baseline passes."""
    baseline = tmp_path / "known.yaml"
    runner = CliRunner()
    args = ["validate", "--spec-dir", str(spec_path), str(broken_recording)]
    failing = runner.invoke(cli, args, env={"COLUMNS": "300"})
    assert failing.exit_code == 1 and "add --write-baseline mcp-assay-baseline.yaml" in failing.stdout
    written = runner.invoke(cli, [*args, "--write-baseline", str(baseline)], env={"COLUMNS": "300"})
    assert written.exit_code == 1 and f"{baseline} lists these failures" in written.stdout
    text = baseline.read_text(encoding="utf-8").replace('reason: ""', 'reason: "an old peer"')
    baseline.write_text(text, encoding="utf-8")
    accepted = runner.invoke(cli, [*args, "--baseline", str(baseline)], env={"COLUMNS": "300"})
    assert accepted.exit_code == 0, accepted.output
    assert "known findings" not in accepted.stdout
    again = runner.invoke(cli, [*args, "--baseline", str(baseline), "--write-baseline", str(baseline)])
    assert again.exit_code == 0 and 'reason: ""' not in baseline.read_text(encoding="utf-8")  # reasons are kept
    missing = runner.invoke(cli, [*args, "--write-baseline", str(tmp_path / "absent" / "b.yaml")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
