"""The command line imports only the command it runs, and its table of commands says what the commands say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcp_assay.cli import COMMANDS, cli
from mcp_assay.cli.lazy import LazyCommands

COMMAND_MODULES = {entry.module for entry in COMMANDS}

_LOADED = """
import sys
from mcp_assay.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("\\nimported:", " ".join(sorted(sys.modules)))
"""


def loaded_by(*argv: str) -> set[str]:
    """The modules a fresh ``mcp-assay ARGV...`` process has imported when the command is done."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv], capture_output=True, text=True, check=True, timeout=60
    )  # fmt: skip
    return set(done.stdout.rpartition("\nimported:")[2].split())


def test_each_named_command_is_the_command_its_module_defines_with_the_same_summary() -> None:
    """Tool-defined: the help lists the table's summaries, so a summary changed in a command's module fails here."""
    assert list(cli.commands) == [entry.name for entry in COMMANDS]
    for entry in COMMANDS:
        command = cli.commands[entry.name]
        assert command.name == entry.name, entry
        assert command.short_help == entry.summary, entry
        assert not command.hidden, entry


def test_the_top_level_help_imports_no_command() -> None:
    """Tool-defined: listing the commands reads the table; no command module is imported."""
    loaded = loaded_by("--help")
    assert "mcp_assay.cli" in loaded
    assert COMMAND_MODULES & loaded == set(), COMMAND_MODULES & loaded


@pytest.mark.parametrize(
    ("argv", "module"),
    [(("validate", "--help"), "mcp_assay.cli.validate"), (("addon-path",), "mcp_assay.cli.addon_path")],
)
def test_a_command_imports_its_own_module_and_no_other_command(argv: tuple[str, ...], module: str) -> None:
    """Tool-defined: ``validate`` pays neither for the suite's runner, the proxy's fault families nor mitmproxy."""
    loaded = loaded_by(*argv)
    assert COMMAND_MODULES & loaded == {module}, COMMAND_MODULES & loaded
    if module == "mcp_assay.cli.validate":
        assert {"mcp_assay.suite.runner", "mcp_assay.addon.inject", "mitmproxy", "httpx"} & loaded == set()


def test_a_command_is_imported_on_first_lookup_and_adopted_once() -> None:
    """Tool-defined: naming, counting and listing a command never import it; looking it up does, once."""
    adopted: list[click.Command] = []
    entry = next(entry for entry in COMMANDS if entry.name == "addon-path")
    lazy = LazyCommands((entry,), adopted.append)
    assert "addon-path" in lazy and list(lazy) == ["addon-path"] and len(lazy) == 1
    assert lazy.summary("addon-path", 80) == (entry.summary, False) and adopted == []
    found = lazy["addon-path"]
    assert lazy["addon-path"] is found and adopted == [found]
    assert lazy.get("no-such-command") is None and "no-such-command" not in lazy


def test_a_configuration_error_in_a_lazily_found_command_is_a_usage_error_under_its_own_usage(tmp_path: Path) -> None:
    """Tool-defined: the command the group imports gets the group's context, as an eagerly added one did."""
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "none.jsonl")], prog_name="mcp-assay")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Usage: mcp-assay validate [OPTIONS]"), result.output
    assert "none.jsonl: no such file or folder" in result.output, result.output
