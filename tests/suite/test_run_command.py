"""`mcp-assay run`: everything the user gives is checked before the first request."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mcp_assay.cli import cli


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["run", *args])
    return result.exit_code, result.output


def test_a_revision_outside_the_window_is_refused_with_the_supported_list(spec_path: Path) -> None:
    """Tool-defined: --spec-version must name a revision in the window."""
    code, output = invoke("-u", "http://127.0.0.1:9/mcp", "--spec-version", "2024-11-05", "--spec-dir", str(spec_path))
    assert code == 2
    assert "2024-11-05 is not supported" in output and "2026-07-28, 2025-11-25" in output


def test_malformed_tool_arguments_are_one_error_before_the_run(spec_path: Path) -> None:
    """Tool-defined: --tool-args is validated before anything is sent."""
    code, output = invoke("-u", "http://127.0.0.1:9/mcp", "--tool-args", "{oops", "--spec-dir", str(spec_path))
    assert code == 2 and "--tool-args" in output and "not valid JSON" in output


def test_both_targets_or_none_is_a_usage_error(spec_path: Path) -> None:
    """Tool-defined: -u or -c."""
    code, output = invoke("--spec-dir", str(spec_path))
    assert code == 2 and "exactly one target" in output


def test_an_unknown_config_key_is_a_usage_error(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: a config file with a misspelt key is refused before the run."""
    config = tmp_path / "assay.yaml"
    config.write_text("url: http://127.0.0.1:9/mcp\nrate_limt: 5\n", encoding="utf-8")
    code, output = invoke("--config", str(config), "--spec-dir", str(spec_path))
    assert code == 2 and "rate_limt" in output


def test_a_record_file_in_a_missing_folder_is_refused(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: --record must be writable before the run starts."""
    target = tmp_path / "no" / "such" / "run.jsonl"
    code, output = invoke("-u", "http://127.0.0.1:9/mcp", "--record", str(target), "--spec-dir", str(spec_path))
    assert code == 2 and "does not exist" in output


def test_every_run_option_has_its_environment_twin() -> None:
    """Tool-defined: each flag of run is documented with an MCP_ASSAY_* variable."""
    command = cli.commands["run"]
    names = {str(param.envvar) for param in command.params if param.name not in ("help",)}
    for expected in ("MCP_ASSAY_URL", "MCP_ASSAY_COMMAND", "MCP_ASSAY_TOKEN", "MCP_ASSAY_TOOL_ARGS", "MCP_ASSAY_ONLY"):
        assert expected in names


def test_validate_judges_a_suite_recording_to_the_run_verdicts(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: `mcp-assay validate run.jsonl` reaches the verdicts the run reached."""
    import asyncio
    import json

    from mcp_assay.spec import load_spec
    from mcp_assay.suite.config import SuiteConfig
    from mcp_assay.suite.runner import arun
    from tests.peers.broken_suite.core import Server
    from tests.suite.scripted import mock, respond

    record = tmp_path / "run.jsonl"
    config = SuiteConfig(
        url="http://127.0.0.1:9/mcp",
        record=str(record),
        tool_args={"echo": {"message": "hi"}},
        prompt_args={"greet": {"who": "x"}},
        stream_budget_ms=300,
    )
    report = asyncio.run(arun(config, load_spec(spec_dir=spec_path), mock=mock(respond(Server("prompt-bad-role")))))
    out = tmp_path / "validate.json"
    result = CliRunner().invoke(cli, ["validate", str(record), "--spec-dir", str(spec_path), "--report", f"json:{out}"])
    assert result.exit_code == 1, result.output
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["revisions"]["tested"] == ["2026-07-28", "2025-11-25"] == report.tested
    assert {(item["check"], item["outcome"], item["revision"]) for item in again["results"]} == {
        (item.check, item.outcome.value, item.revision) for item in report.results
    }
