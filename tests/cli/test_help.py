"""Every command's help as a user reads it: listed once with a whole summary, and naming everything it reads.

The walk covers every command click knows, so a new command without an entry in ``INPUTS`` (or an
entry for a command that is gone) fails here. Usage errors found while a command runs print that
command's usage, not the top-level one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.cli.command import AssayCommand

WIDTHS = (60, 80, 100, 250)
"""Terminal widths the listings are read at: click shortens a summary to what fits unless it is given whole."""

SCHEMAS = ["--spec-dir", "MCP_ASSAY_SPEC_DIR", "MCP_ASSAY_CACHE_DIR", "XDG_CACHE_HOME", "--spec-path"]
FETCH = ["MCP_ASSAY_SPEC_MIRROR", "--offline", "GitHub"]
ENVIRONMENT = ["MCP_ASSAY_* twin", "MCP_ASSAY_LOG_LEVEL"]

INPUTS: dict[str, list[str]] = {
    "demo": ["drafts server", "MCP Python SDK", *SCHEMAS, *FETCH, *ENVIRONMENT],
    "run": [
        "--url",
        "--serve",
        "--command",
        "stdio",
        "--config FILE",
        "YAML",
        "principals",
        "key_file",
        "PEM",
        "--tool-args @FILE",
        "--prompt-args @FILE",
        "JSON",
        "authorization server",
        "redirect",
        *SCHEMAS,
        *FETCH,
        "--baseline FILE",
        *ENVIRONMENT,
        "${NAME}",
        "CI",
    ],  # fmt: skip
    "proxy": [
        "--listen-host",
        "--listen-port",
        "--upstream",
        "regular mode",
        "--probe-config FILE",
        "~/.mitmproxy",
        "CA certificate",
        *SCHEMAS,
        "--baseline FILE",
        *ENVIRONMENT,
    ],  # fmt: skip
    "addon-path": ["nothing"],
    "tap": ["COMMAND...", "stdin", "stdout", "stderr", *SCHEMAS, "--baseline FILE", *ENVIRONMENT],
    "validate": [
        "RECORDINGS...",
        "mcp-assay JSONL recording",
        "mitmproxy flow file",
        "HAR file",
        *SCHEMAS,
        "--baseline FILE",
        *ENVIRONMENT,
    ],  # fmt: skip
    "report": ["FILES...", "JSON reports", "mcp-assay.report/1", "--baseline FILE", *ENVIRONMENT],
    "replay": [
        "REPORT",
        "FINDING",
        "mcp-assay.report/1",
        "--url",
        "--command",
        *SCHEMAS,
        *ENVIRONMENT,
        "MCP_ASSAY_COOKIE",
    ],
    "spec list": [*SCHEMAS, "sha256 pins", *ENVIRONMENT],
    "spec pull": ["GitHub", "--mirror", "HTTPS_PROXY", "--cache-dir", "XDG_CACHE_HOME", *ENVIRONMENT],
    "checks": ["requirement catalogue", *ENVIRONMENT],
    "stub init": ["--key-file FILE", *ENVIRONMENT],
    "stub serve": ["--config FILE", "stub section", "PEM", "--key-file FILE", *ENVIRONMENT],
}
"""What each command's help must name among what it reads (tool-defined: issue 19)."""


def walk(group: click.Group, path: str = "") -> Iterator[tuple[str, click.Command]]:
    for name, command in group.commands.items():
        full = f"{path} {name}".strip()
        yield full, command
        if isinstance(command, click.Group):
            yield from walk(command, full)


def help_of(path: str, width: int = 250) -> str:
    result = CliRunner().invoke(cli, [*path.split(), "--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.output


def listed(text: str) -> dict[str, list[str]]:
    """The ``Commands:`` section of a help page: each name with its summary, wrapped lines joined."""
    section = text.split("\nCommands:\n", 1)[1]
    rows: dict[str, list[str]] = {}
    current = ""
    for line in section.splitlines():
        if not line.strip():
            break
        match = re.match(r"  (\S+)\s{2,}(.*)$", line)
        if match and not line.startswith("    "):
            current = match.group(1)
            rows.setdefault(current, []).append(match.group(2).strip())
        else:
            rows[current][-1] += " " + line.strip()
    return rows


def groups() -> Iterator[tuple[str, click.Group]]:
    yield "", cli
    for path, command in walk(cli):
        if isinstance(command, click.Group):
            yield path, command


def test_the_walk_sees_every_command_and_the_table_names_each_one() -> None:
    """Tool-defined: a command without an entry, or an entry without a command, fails the table."""
    leaves = {path for path, command in walk(cli) if not isinstance(command, click.Group)}
    assert leaves == set(INPUTS)
    assert {"run", "validate", "spec list", "stub serve"} <= leaves


@pytest.mark.parametrize("width", WIDTHS)
def test_each_help_lists_every_command_once_with_its_whole_summary(width: int) -> None:
    """Tool-defined (issue 19): no command twice, no summary cut short with '...', at any terminal width."""
    for path, group in groups():
        text = help_of(path, width)
        rows = listed(text)
        assert list(rows) == list(group.commands), (path, width, list(rows))
        for name, summaries in rows.items():
            assert len(summaries) == 1, (path, name, summaries)
            (summary,) = summaries
            assert not summary.endswith("..."), (path, name, summary)
            assert summary == group.commands[name].short_help, (path, name, summary)
        # and nowhere else on the page: the docstring table that listed them a second time is gone
        for name in group.commands:
            starts = [line for line in text.splitlines() if re.match(rf"\s+{re.escape(name)}\s{{2,}}\S", line)]
            assert len(starts) == 1, (path, name, starts)


def test_every_command_has_a_summary_that_is_a_whole_sentence() -> None:
    """Tool-defined: summaries are set explicitly, so click never shortens them."""
    for path, command in walk(cli):
        assert command.short_help, path
        assert command.short_help.endswith(".") and not command.short_help.endswith(".."), path


@pytest.mark.parametrize("path", sorted(INPUTS))
def test_every_command_help_names_every_input_it_reads(path: str) -> None:
    """Tool-defined (issue 19): files, folders, the network and the environment, under Reads."""
    command = dict(walk(cli))[path]
    assert isinstance(command, AssayCommand) and command.reads, path
    text = help_of(path)
    assert "\nReads:\n" in text, text
    flat = " ".join(text.split())
    missing = [item for item in INPUTS[path] if item not in flat]
    assert missing == [], (path, missing)


def test_validate_help_names_every_capture_format_it_reads() -> None:
    """Tool-defined (issue 19): the help lists the formats from the readers validate tries, not only JSONL."""
    from mcp_assay.addon.importers import READERS

    flat = " ".join(help_of("validate").split())
    for reader in READERS:
        assert reader.name in flat, reader.name


def test_the_help_lists_the_families_from_the_registry() -> None:
    """Tool-defined (issue 20): the families ``run --only`` and ``proxy --probe-server`` name are the suite's own,
    never typed again in the help."""
    from mcp_assay.addon.server_probe import PROBE_FAMILIES
    from mcp_assay.suite.probes import family_names

    run = "".join(help_of("run").split())  # click may break a name at its hyphen
    assert all(name in run for name in family_names()), run
    assert set(PROBE_FAMILIES) <= set(family_names())
    proxy = "".join(help_of("proxy").split())
    assert f"({','.join(PROBE_FAMILIES)})" in proxy, proxy


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["validate", "RECORDING", "--report", "bogus:x"], "mcp-assay validate [OPTIONS] RECORDINGS..."),
        (["report", "REPORT", "--report", "bogus:x"], "mcp-assay report [OPTIONS] FILES..."),
        (["spec", "list", "--spec-dir", "NOWHERE"], "mcp-assay spec list [OPTIONS]"),
        (["run", "--report", "bogus:x"], "mcp-assay run [OPTIONS]"),
        (["validate", "--no-such-flag", "RECORDING"], "mcp-assay validate [OPTIONS] RECORDINGS..."),
    ],
)
def test_a_usage_error_prints_the_usage_of_the_command_that_was_run(
    args: list[str], usage: str, tmp_path: Path
) -> None:
    """Tool-defined (issue 19): one error line, exit 2, under the subcommand's usage and help hint."""
    recording = tmp_path / "r.jsonl"
    recording.write_text("")
    report = tmp_path / "r.json"
    report.write_text("{}")
    names = {"RECORDING": str(recording), "REPORT": str(report), "NOWHERE": str(tmp_path / "nowhere")}
    result = CliRunner().invoke(cli, [names.get(arg, arg) for arg in args], prog_name="mcp-assay")
    assert result.exit_code == 2, result.output
    assert f"Usage: {usage}" in result.output, result.output
    command = usage.split(" [")[0]
    assert f"Try '{command} -h' for help." in result.output or f"Try '{command} --help' for help." in result.output
    assert "Usage: mcp-assay [OPTIONS] COMMAND" not in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error:")]) == 1
