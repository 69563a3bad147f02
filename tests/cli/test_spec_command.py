"""`mcp-assay spec list` and `spec pull` as a user runs them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
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


def copy_revisions(source: Path, target: Path, *revisions: str) -> Path:
    for revision in revisions:
        (target / revision).mkdir(parents=True)
        shutil.copy(source / revision / "schema.json", target / revision / "schema.json")
    return target


def looked_in(output: str) -> list[str]:
    """The lines under 'looked for schemas in:'."""
    lines = output.splitlines()
    start = lines.index("looked for schemas in:")
    block = []
    for line in lines[start + 1 :]:
        if not re.match(r"  \S", line):
            break
        block.append(line.strip())
    return block


def test_spec_list_says_every_place_it_looked_and_what_each_holds(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 19): the spec dir as the user gave it, the cache (searched or not), what each holds."""
    cache = copy_revisions(spec_path, tmp_path / "cache", "2026-07-28")
    env = {"MCP_ASSAY_CACHE_DIR": str(cache)}
    flag = CliRunner().invoke(cli, ["spec", "list", "--spec-dir", str(spec_path)], env=env, terminal_width=250)
    assert flag.exit_code == 0, flag.output
    assert looked_in(flag.output) == [
        f"--spec-dir {spec_path}: holds 2025-11-25, 2026-07-28",
        f"the cache (MCP_ASSAY_CACHE_DIR) {cache}: not searched (--spec-dir comes first); holds 2026-07-28",
    ]
    from_env = CliRunner().invoke(cli, ["spec", "list"], env={**env, "MCP_ASSAY_SPEC_DIR": str(spec_path)})
    assert from_env.exit_code == 0, from_env.output
    assert looked_in(from_env.output)[0] == f"MCP_ASSAY_SPEC_DIR={spec_path}: holds 2025-11-25, 2026-07-28"
    assert "not searched (MCP_ASSAY_SPEC_DIR comes first)" in looked_in(from_env.output)[1]


def test_spec_list_without_a_spec_dir_says_it_searched_the_cache(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 19): no folder given, the cache is where the schemas came from."""
    cache = copy_revisions(spec_path, tmp_path / "cache", "2026-07-28", "2025-11-25")
    result = CliRunner().invoke(
        cli, ["spec", "list"], env={"MCP_ASSAY_SPEC_DIR": "", "MCP_ASSAY_CACHE_DIR": str(cache)}, terminal_width=250
    )
    assert result.exit_code == 0, result.output
    assert looked_in(result.output) == [
        "--spec-dir / MCP_ASSAY_SPEC_DIR: not given",
        f"the cache (MCP_ASSAY_CACHE_DIR) {cache}: holds 2025-11-25, 2026-07-28",
    ]
    assert "cache" in result.output.split("looked for schemas in:")[1]


def test_spec_list_with_nothing_anywhere_says_where_it_looked_before_the_error(tmp_path: Path) -> None:
    """Tool-defined (issue 19): the places it looked come before how to get a schema."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes").mkdir()
    result = CliRunner().invoke(
        cli, ["spec", "list"], env={"MCP_ASSAY_SPEC_DIR": str(empty), "MCP_ASSAY_CACHE_DIR": str(tmp_path / "none")}
    )
    assert result.exit_code == 2  # a folder the user named that holds no schema is their input's mistake
    assert looked_in(result.output) == [
        f"MCP_ASSAY_SPEC_DIR={empty}: holds no <revision>/schema.json",
        f"the cache (MCP_ASSAY_CACHE_DIR) {tmp_path / 'none'}: not searched (MCP_ASSAY_SPEC_DIR comes first); "
        "no such folder",
    ]
    assert f"Error: MCP_ASSAY_SPEC_DIR={empty} holds no <revision>/schema.json" in result.output


SPEC_DIR_COMMANDS = [
    ["validate", "RECORDING"],
    ["replay", "RECORDING", "abc1234"],
    ["spec", "list"],
    ["run", "-u", "http://127.0.0.1:9/mcp"],
    ["proxy", "--upstream", "http://127.0.0.1:9/mcp", "--listen-port", "0"],
    ["tap", "--", "true"],
    ["demo", "--offline"],
]
"""Every command that reads the schemas, with what it needs to reach the point where it reads them."""


def test_every_command_that_reads_schemas_is_in_the_list() -> None:
    """Tool-defined: a new command with --spec-dir must be added to SPEC_DIR_COMMANDS."""
    from tests.cli.test_help import walk

    readers = {path for path, command in walk(cli) if any(param.name == "spec_dir" for param in command.params)}
    assert readers == {" ".join(args[:2]) if args[0] == "spec" else args[0] for args in SPEC_DIR_COMMANDS}


@pytest.mark.parametrize("args", SPEC_DIR_COMMANDS, ids=lambda args: " ".join(args[:2]))
def test_a_bad_spec_dir_is_named_as_the_user_gave_it(args: list[str], tmp_path: Path) -> None:
    """Tool-defined (issue 19): from the environment the error names MCP_ASSAY_SPEC_DIR, from the flag --spec-dir;
    one line, exit 2, under the command's usage, before any work."""
    recording = tmp_path / "r.jsonl"
    recording.write_text("")
    argv = [str(recording) if arg == "RECORDING" else arg for arg in args]
    nowhere = tmp_path / "nowhere"
    command = " ".join(args[:2]) if args[0] == "spec" else args[0]
    from_env = CliRunner().invoke(cli, argv, env={"MCP_ASSAY_SPEC_DIR": str(nowhere)}, prog_name="mcp-assay")
    assert from_env.exit_code == 2, from_env.output
    assert f"Error: Invalid value for MCP_ASSAY_SPEC_DIR: Directory '{nowhere}' does not exist." in from_env.output
    assert "--spec-dir" not in from_env.output.split("Error:")[1]
    assert f"Usage: mcp-assay {command} " in from_env.output
    position = argv.index("--") if "--" in argv else len(argv)
    flagged = [*argv[:position], "--spec-dir", str(nowhere), *argv[position:]]
    from_flag = CliRunner().invoke(cli, flagged, env={"MCP_ASSAY_SPEC_DIR": ""}, prog_name="mcp-assay")
    assert from_flag.exit_code == 2, from_flag.output
    assert f"Error: Invalid value for --spec-dir: Directory '{nowhere}' does not exist." in from_flag.output


def test_the_spec_dir_variable_is_named_from_the_command_line(tmp_path: Path) -> None:
    """Tool-defined (issue 19), end to end: `python -m mcp_assay validate` with a bad MCP_ASSAY_SPEC_DIR."""
    recording = tmp_path / "r.jsonl"
    recording.write_text("")
    env = {**os.environ, "MCP_ASSAY_SPEC_DIR": str(tmp_path / "nowhere")}
    result = subprocess.run(
        [sys.executable, "-m", "mcp_assay", "validate", str(recording)],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "Usage: mcp-assay validate [OPTIONS] RECORDINGS...",
        "Try 'mcp-assay validate --help' for help.",
        "",
        f"Error: Invalid value for MCP_ASSAY_SPEC_DIR: Directory '{tmp_path / 'nowhere'}' does not exist.",
    ]


def test_spec_pull_that_cannot_reach_the_schemas_says_the_ways_forward(tmp_path: Path) -> None:
    """Issue 27: `spec pull` with no network gave no way forward; like the demo's message it names an internal
    mirror and a folder of schemas one already has (MCP_ASSAY_SPEC_DIR). Nothing listens on the mirror's port."""
    from tests.peers.process import free_port

    unreachable = f"http://127.0.0.1:{free_port()}/{{revision}}/schema.json"
    result = CliRunner().invoke(
        cli, ["spec", "pull", "--cache-dir", str(tmp_path), "--mirror", unreachable, "--timeout", "3"]
    )
    assert result.exit_code == 3
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("mcp-assay: some schemas could not be downloaded and verified (see above): ")
    assert "--mirror URL_TEMPLATE" in last and "MCP_ASSAY_SPEC_DIR" in last and "--spec-dir" in last
