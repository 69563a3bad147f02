"""Every option of every command has a documented MCP_ASSAY_* environment twin."""

from __future__ import annotations

from collections.abc import Iterator

import click

from mcp_assay.cli import cli

# --help and --version print something and exit; an environment variable for them makes no sense.
INFO_OPTIONS = {"help", "version"}


def walk(command: click.Command, path: str = "mcp-assay") -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from walk(sub, f"{path} {name}")


def options() -> Iterator[tuple[str, click.Option]]:
    for path, command in walk(cli):
        for param in command.params:
            if isinstance(param, click.Option) and param.name not in INFO_OPTIONS:
                yield f"{path} {param.opts[0]}", param


def test_the_walk_sees_the_commands_and_their_options() -> None:
    """Tool-defined: guard against a walk that silently checks nothing."""
    names = {path for path, _ in walk(cli)}
    assert {"mcp-assay validate", "mcp-assay report", "mcp-assay spec list", "mcp-assay checks"} <= names
    assert len(list(options())) >= 8


def test_every_option_has_an_mcp_assay_envvar_shown_in_help() -> None:
    """Tool-defined: flags have MCP_ASSAY_* twins, shown in --help."""
    missing = [name for name, option in options() if not option.envvar]
    assert missing == []
    wrong = [
        (name, option.envvar)
        for name, option in options()
        for envvar in ([option.envvar] if isinstance(option.envvar, str) else list(option.envvar or []))
        if not envvar.startswith("MCP_ASSAY_")
    ]
    assert wrong == []
    hidden = [name for name, option in options() if not option.show_envvar]
    assert hidden == []


def test_envvar_names_are_unique_per_command() -> None:
    """Tool-defined: one variable never feeds two options of the same command."""
    for path, command in walk(cli):
        seen: dict[str, str] = {}
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.envvar, str):
                assert param.envvar not in seen, (path, param.envvar, seen[param.envvar], param.name)
                seen[param.envvar] = str(param.name)


def test_the_secrets_twin_holds_one_secret_per_line_so_spaces_stay_inside_a_secret() -> None:
    """Tool-defined (issue 28): MCP_ASSAY_SECRETS split on white space leaked the parts of 'sp ace secret'; every
    command taking --secret reads its twin one secret per line (CRLF too), blank lines skipped."""
    commands = [command for _, command in walk(cli) if any(p.name == "secrets" for p in command.params)]
    assert {command.name for command in commands} == {"run", "proxy", "tap"}
    for command in commands:
        (param,) = [p for p in command.params if p.name == "secrets"]
        assert param.envvar == "MCP_ASSAY_SECRETS"
        assert param.type.split_envvar_value("sp ace secret\r\n\nother one\n") == ["sp ace secret", "other one"]
