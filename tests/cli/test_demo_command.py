"""`mcp-assay demo` refuses what it cannot do before it starts anything (the runs themselves: tests/demo/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.cli import demo as demo_cli
from mcp_assay.demo import client_session as session
from mcp_assay.demo.processes import DraftsServer


def test_without_the_sdk_the_demo_names_the_one_install_that_fixes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: the example server runs on the official Python SDK; without it, one line and exit 2."""
    monkeypatch.setattr(demo_cli, "_sdk_server_installed", lambda: False)
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 2, result.output
    assert "pip install 'mcp>=2.3,<3'" in " ".join(result.stderr.split())


def test_client_sdk_without_the_sdk_client_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: --client sdk insists on the SDK; auto would fall back to mcp-assay's own client."""
    monkeypatch.setattr(session, "sdk_client_available", lambda: False)
    result = CliRunner().invoke(cli, ["demo", "--client", "sdk"])
    assert result.exit_code == 2, result.output
    assert "--client sdk" in result.stderr
    assert session.choose_client("auto") == "suite"


def test_auto_picks_the_sdk_client_when_it_is_installed() -> None:
    """Tool-defined: the real client session is the official SDK's whenever it can be imported."""
    assert session.sdk_client_available()
    assert session.choose_client("auto") == "sdk"
    assert session.choose_client("suite") == "suite"


def test_an_output_dir_that_cannot_be_made_is_a_usage_error(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: a file where the folder should go is refused (exit 2) before any process starts."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(cli, ["demo", "--output-dir", str(blocker / "out"), "--spec-dir", str(spec_path)])
    assert result.exit_code == 2, result.output
    assert "--output-dir" in result.stderr and "cannot create it" in result.stderr


def test_the_demo_is_listed_first_in_the_help() -> None:
    """Tool-defined: a newcomer reading `mcp-assay --help` sees the demo before anything else."""
    result = CliRunner().invoke(cli, ["--help"], prog_name="mcp-assay")
    overview = result.output.split("Options:")[0]
    assert "Start with `mcp-assay demo`" in " ".join(overview.split())
    commands = result.output.split("\nCommands:\n")[1].splitlines()
    assert commands[0].split() == ["demo", *"See what mcp-assay does, on a bundled example server.".split()]


def test_an_example_server_that_does_not_start_is_one_line_and_exit_3(
    tmp_path: Path, spec_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined (issue 18): the bundled server exits at start (a real process, given a build it does not
    have): one not-judged line with its exit code and last words, exit 3, no report and no verdict."""
    start = DraftsServer.start.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        DraftsServer, "start", classmethod(lambda cls, build, *args, **kw: start(cls, "no-such-build", *args, **kw))
    )
    result = CliRunner().invoke(cli, ["demo", "--output-dir", str(tmp_path), "--spec-dir", str(spec_path)])
    assert result.exit_code == 3, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("mcp-assay:")]
    assert line.startswith("mcp-assay: not judged — the demo's example server (drafts, no-such-build build) exited ")
    assert "with code 2 before it listened on 127.0.0.1:" in line and "invalid choice: 'no-such-build'" in line
    assert "Verdict:" not in result.output and "conformant" not in result.output
    assert not (tmp_path / "report.json").exists()
