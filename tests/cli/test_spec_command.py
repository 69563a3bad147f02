"""`mcp-assay spec list` and `spec pull` as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from mcp_assay.cli import cli


def test_spec_list_shows_the_window_with_verified_hashes(spec_path: Path) -> None:
    result = CliRunner().invoke(cli, ["spec", "list", "--spec-dir", str(spec_path)], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    assert "2026-07-28" in result.output and "2025-11-25" in result.output
    assert "default (newest)" in result.output
    assert result.output.count("pinned") >= 2 and "UNPINNED" not in result.output
    assert "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203" in result.output.replace("\n", "")


def test_spec_list_without_any_schema_says_how_to_get_one(tmp_path: Path, monkeypatch: object) -> None:
    result = CliRunner().invoke(
        cli, ["spec", "list"], env={"MCP_ASSAY_SPEC_DIR": "", "MCP_ASSAY_CACHE_DIR": str(tmp_path / "none")}
    )
    assert result.exit_code == 3
    assert "spec pull" in result.output and "--spec-dir" in result.output


def test_a_tampered_schema_is_refused_with_exit_3(spec_path: Path, tmp_path: Path) -> None:
    for revision in ("2026-07-28", "2025-11-25"):
        (tmp_path / revision).mkdir()
        shutil.copy(spec_path / revision / "schema.json", tmp_path / revision / "schema.json")
    target = tmp_path / "2025-11-25" / "schema.json"
    target.write_text(json.dumps(json.loads(target.read_text())))
    result = CliRunner().invoke(cli, ["spec", "list", "--spec-dir", str(tmp_path)])
    assert result.exit_code == 3
    assert "do not match the published revision" in result.output
    named = CliRunner().invoke(
        cli, ["spec", "list", "--spec-dir", str(tmp_path), "--spec-path", str(target)], terminal_width=200
    )
    assert named.exit_code == 0, named.output
    assert "UNPINNED" in named.output and "unpinned schema was used" in named.output


def test_a_spec_dir_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["spec", "list", "--spec-dir", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert f"Invalid value for --spec-dir: Directory '{tmp_path / 'nope'}' does not exist." in result.output
