"""`mcp-assay report` as a user runs it: re-render, merge, exit codes, file targets, bad input."""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.report.jsonreport import render_json
from mcp_assay.report.model import Report
from mcp_assay.vocabulary.verdicts import Source
from tests.report.sample import failed_must, failed_should, passed, passed_tools, sample_report


def write(path: Path, report: Report) -> Path:
    path.write_text(render_json(report), encoding="utf-8")
    return path


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    """A report with only passes and a SHOULD finding."""
    return write(tmp_path / "clean.json", sample_report(results=[passed(), failed_should()]))


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A report with a MUST failure."""
    return write(tmp_path / "broken.json", sample_report(results=[failed_must(), passed_tools()]))


def test_report_merges_two_files_and_renders_markdown_to_stdout(clean: Path, broken: Path) -> None:
    """Tool-defined: several reports become one, re-rendered in the requested format."""
    result = CliRunner().invoke(cli, ["report", str(clean), str(broken), "--report", "markdown:-"])
    assert result.exit_code == 1, result.output
    markdown = result.stdout
    assert markdown.startswith("# MCP conformance report — 2026-07-28")
    for title in (passed().title, failed_should().title, failed_must().title, passed_tools().title):
        assert title.replace("_", "\\_") in markdown
    assert "## FAILED (1)" in markdown and "## SHOULD (1)" in markdown and "## PASSED (2)" in markdown
    assert f"| target | {clean.stem}" not in markdown
    assert "| kind | merged |" in markdown


def test_merged_json_keeps_active_and_passive_results_of_one_check_apart(tmp_path: Path) -> None:
    """Tool-defined: merging keeps results per (check, source)."""
    passive = write(tmp_path / "passive.json", sample_report(results=[passed()]))
    active = write(tmp_path / "active.json", sample_report(results=[replace(passed(), source=Source.ACTIVE)]))
    out = tmp_path / "merged.json"
    result = CliRunner().invoke(cli, ["report", str(passive), str(active), "--report", f"json:{out}"])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["schema"] == "mcp-assay.report/1"
    assert sorted(r["source"] for r in data["results"]) == ["active", "passive"]


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [("must", 0), ("should", 1), ("never", 0)],
)
def test_exit_code_for_a_should_finding_follows_fail_on(clean: Path, fail_on: str, expected: int) -> None:
    """Tool-defined: --fail-on should makes a SHOULD failure exit 1."""
    result = CliRunner().invoke(cli, ["report", str(clean), "--fail-on", fail_on, "--report", "tap:-"])
    assert result.exit_code == expected, result.output


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [("must", 1), ("should", 1), ("never", 0)],
)
def test_exit_code_for_a_must_failure_follows_fail_on(broken: Path, fail_on: str, expected: int) -> None:
    """Tool-defined: a MUST failure exits 1 unless --fail-on never."""
    result = CliRunner().invoke(cli, ["report", str(broken), "--fail-on", fail_on, "--report", "junit:-"])
    assert result.exit_code == expected, result.output


def test_default_output_is_the_terminal_layout(broken: Path) -> None:
    """Tool-defined: without --report the terminal layout goes to stdout."""
    result = CliRunner().invoke(cli, ["report", str(broken)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "FAILED (1)" in result.stdout and "Verdict: not conformant" in result.stdout


def test_an_unknown_report_format_is_a_usage_error_before_any_work(tmp_path: Path) -> None:
    """Tool-defined: a bad --report exits 2 even when the input would have been unreadable."""
    junk = tmp_path / "junk.json"
    junk.write_text("not json")
    result = CliRunner().invoke(cli, ["report", str(junk), "--report", "pdf:out.pdf"])
    assert result.exit_code == 2
    assert "unknown format 'pdf'" in result.stderr
    assert "not a readable" not in result.stderr


def test_report_format_without_a_path_lands_in_the_temp_dir_with_a_utc_stamp(
    broken: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: --report json writes mcp-assay-<UTC stamp>.json in the temp dir and says where."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    result = CliRunner().invoke(cli, ["report", str(broken), "--report", "json"])
    assert result.exit_code == 1, result.output
    (written,) = folder.iterdir()
    assert re.fullmatch(r"mcp-assay-\d{8}T\d{6}Z\.json", written.name)
    assert f"json report written to {written}" in " ".join(result.stderr.split())
    assert json.loads(written.read_text())["schema"] == "mcp-assay.report/1"


@pytest.mark.parametrize(("name", "extension"), [("html", "html"), ("sarif", "sarif"), ("terminal", "txt")])
def test_a_report_path_that_is_a_folder_gets_the_timestamped_name_inside_it(
    broken: Path, tmp_path: Path, name: str, extension: str
) -> None:
    """Tool-defined: --report FORMAT:FOLDER writes mcp-assay-<UTC stamp>.<ext> into that folder and says where."""
    folder = tmp_path / "reports"
    folder.mkdir()
    first = CliRunner().invoke(cli, ["report", str(broken), "--report", f"{name}:{folder}"])
    second = CliRunner().invoke(cli, ["report", str(broken), "--report", f"{name}:{folder}/"])
    assert (first.exit_code, second.exit_code) == (1, 1), first.output + second.output
    written = sorted(folder.iterdir())
    assert len(written) == 2, written
    for path in written:
        assert re.fullmatch(rf"mcp-assay-\d{{8}}T\d{{6}}Z(-1)?\.{extension}", path.name), path.name
        assert path.read_text(encoding="utf-8").strip()
    stderr = " ".join((first.stderr + second.stderr).split())
    assert all(f"{name} report written to {path}" in stderr for path in written)


@pytest.mark.parametrize("suffix", ["absent/deeper/out.html", "absent/deeper/"])
def test_a_report_path_in_a_missing_folder_is_created(broken: Path, tmp_path: Path, suffix: str) -> None:
    """Tool-defined (issue 18): the folders of a report path that do not exist yet are created; a path ending in
    ``/`` is a folder, and the report gets the timestamped name inside it."""
    result = CliRunner().invoke(cli, ["report", str(broken), "--report", f"html:{tmp_path}/{suffix}"])
    assert result.exit_code == 1, result.output
    (written,) = (tmp_path / "absent" / "deeper").iterdir()
    if suffix.endswith(".html"):
        assert written.name == "out.html"
    else:
        assert re.fullmatch(r"mcp-assay-\d{8}T\d{6}Z\.html", written.name), written.name
    assert written.read_text().startswith("<!DOCTYPE html>")
    assert f"html report written to {written}" in " ".join(result.stderr.split())


@pytest.mark.parametrize("suffix", ["in-the-way/out.html", "in-the-way/deeper/"])
def test_a_report_path_under_a_file_is_refused_before_any_work(broken: Path, tmp_path: Path, suffix: str) -> None:
    """Tool-defined: a file where a folder must be cannot be made a folder: a usage error (exit 2) naming it."""
    (tmp_path / "in-the-way").write_text("a file")
    result = CliRunner().invoke(cli, ["report", str(broken), "--report", f"html:{tmp_path}/{suffix}"])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'in-the-way'} is not a folder" in " ".join(result.stderr.split())
    assert (tmp_path / "in-the-way").read_text() == "a file"


def test_several_report_targets_are_all_written(broken: Path, tmp_path: Path) -> None:
    """Tool-defined: --report is repeatable; each format goes to its own file."""
    args = ["report", str(broken)]
    for name, extension in (("html", "html"), ("junit", "xml"), ("tap", "tap"), ("markdown", "md")):
        args += ["--report", f"{name}:{tmp_path / f'out.{extension}'}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert (tmp_path / "out.html").read_text().startswith("<!DOCTYPE html>")
    assert (tmp_path / "out.xml").read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert (tmp_path / "out.tap").read_text().startswith("TAP version 14\n")
    assert (tmp_path / "out.md").read_text().startswith("# MCP conformance report")


@pytest.mark.parametrize(
    "content",
    [
        "not json at all",
        "[1, 2, 3]",
        '{"schema": "something-else/1"}',
        '{"schema": "mcp-assay.report/1", "results": [{"check": "x"}]}',
        '{"schema": "mcp-assay.report/1", "results": [{"check": "x", "level": "NEVER", "severity": "must",'
        ' "side": "server", "outcome": "failed", "source": "active"}]}',
    ],
)
def test_a_file_that_is_not_a_report_exits_3_with_one_clear_line(tmp_path: Path, content: str) -> None:
    """Tool-defined: bad input is reported once, as one line naming the file, exit 3."""
    path = tmp_path / "input.json"
    path.write_text(content)
    result = CliRunner().invoke(cli, ["report", str(path)])
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"mcp-assay: {path}: not a readable mcp-assay JSON report")
    assert "Traceback" not in result.output


def test_a_missing_report_file_is_a_usage_error(tmp_path: Path) -> None:
    """Tool-defined: click reports a path that does not exist with exit 2."""
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "absent.json")])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_fail_on_flag_wins_over_its_environment_twin(broken: Path) -> None:
    """Tool-defined: MCP_ASSAY_FAIL_ON=never is overridden by --fail-on must."""
    quiet = CliRunner().invoke(cli, ["report", str(broken), "--report", "tap:-"], env={"MCP_ASSAY_FAIL_ON": "never"})
    assert quiet.exit_code == 0, quiet.output
    loud = CliRunner().invoke(
        cli, ["report", str(broken), "--report", "tap:-", "--fail-on", "must"], env={"MCP_ASSAY_FAIL_ON": "never"}
    )
    assert loud.exit_code == 1, loud.output


def test_report_targets_come_from_the_environment_too(broken: Path, tmp_path: Path) -> None:
    """Tool-defined: MCP_ASSAY_REPORT accepts several space-separated targets."""
    out = tmp_path / "r.tap"
    result = CliRunner().invoke(cli, ["report", str(broken)], env={"MCP_ASSAY_REPORT": f"tap:{out} markdown:-"})
    assert result.exit_code == 1, result.output
    assert out.read_text().startswith("TAP version 14")
    assert result.stdout.startswith("# MCP conformance report")


def test_show_brings_back_a_listing_and_its_twin_works_too(broken: Path) -> None:
    """Tool-defined (issue 19): the short report by default; --show passed (or MCP_ASSAY_SHOW) lists the passes."""
    runner = CliRunner()
    short = runner.invoke(cli, ["report", str(broken)], env={"COLUMNS": "200"})
    assert "PASSED (" not in short.stdout and "· 1 passed" in short.stdout
    for args, env in ((["--show", "passed"], {}), ([], {"MCP_ASSAY_SHOW": "passed"})):
        listed = runner.invoke(cli, ["report", str(broken), *args], env={"COLUMNS": "200", **env})
        assert listed.exit_code == 1 and "PASSED (1)" in listed.stdout, listed.output
        assert listed.stdout.rstrip().splitlines()[-1].startswith("Verdict: not conformant")


def test_an_unknown_listing_is_a_usage_error_before_any_work(tmp_path: Path) -> None:
    """Tool-defined: a bad --show exits 2 with one line naming the choices, before the input is read."""
    junk = tmp_path / "junk.json"
    junk.write_text("not json")
    result = CliRunner().invoke(cli, ["report", str(junk), "--show", "passed,everything"])
    assert result.exit_code == 2
    assert "unknown listing 'everything'" in result.stderr and "not a readable" not in result.stderr


def test_with_every_report_in_a_file_the_verdict_still_ends_the_output(broken: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 19): the verdict line and the file written, with the baseline command to run."""
    out = tmp_path / "again.json"
    result = CliRunner().invoke(cli, ["report", str(broken), "--report", f"json:{out}"], env={"COLUMNS": "200"})
    lines = result.stdout.rstrip().splitlines()
    assert lines[-1] == "Verdict: not conformant — 1 requirement violated (RPC-15)."
    assert f"    mcp-assay report {out} --write-baseline mcp-assay-baseline.yaml" in lines
    assert f"json report written to {out}" in " ".join(result.stderr.split())
    to_stdout = CliRunner().invoke(cli, ["report", str(broken), "--report", "json:-"])
    assert json.loads(to_stdout.stdout)["verdict"]["code"] == "not-conformant"  # stdout stays JSON
    assert "Verdict: not conformant" in to_stdout.stderr


def test_a_file_report_adds_to_the_terminal_report_and_never_replaces_it(broken: Path, tmp_path: Path) -> None:
    """Issue 27: `--report html:F` printed only the verdict line; the short report stays on the screen, the file
    is written, and only a format sent to standard output (`json:-`) leaves the terminal report out."""
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(broken), "--report", f"html:{out}"], env={"COLUMNS": "200"})
    assert out.is_file() and f"html report written to {out}" in " ".join(result.stderr.split())
    assert result.stdout.startswith("MCP conformance report"), result.stdout
    assert "FAILED (1)" in result.stdout and result.stdout.rstrip().splitlines()[-1].startswith("Verdict: ")
    piped = CliRunner().invoke(cli, ["report", str(broken), "--report", "json:-", "--report", f"html:{out}"])
    assert json.loads(piped.stdout)["verdict"]["code"] == "not-conformant"
    assert "MCP conformance report" not in piped.stderr and "Verdict: not conformant" in piped.stderr
