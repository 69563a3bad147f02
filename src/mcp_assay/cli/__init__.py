"""The ``mcp-assay`` command line.

Commands parse flags (every flag has an ``MCP_ASSAY_*`` environment twin; flags win), build a
configuration, call the library and turn the outcome into an exit code: 0 when no MUST-level
requirement failed, 1 when one did, 2 for a usage error, 3 when the target or input could not be
used (or mcp-assay itself failed). Errors about the user's input are reported once, before any work starts:
one line under the command's usage, naming the flag, or the environment variable when the value came
from there (click records each parameter's source).
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from mcp_assay import __version__
from mcp_assay.cli.lazy import LazyCommands, Named
from mcp_assay.recording.logs import configure as configure_logs
from mcp_assay.recording.logs import redactor as log_redactor
from mcp_assay.recording.logs import scrub
from mcp_assay.vocabulary.errors import AssayError, ConfigError

__all__ = ["cli", "main"]

INTERNAL_ERROR_EXIT = 3
"""A defect in mcp-assay itself: no verdict could be reached (never 1, which says a requirement failed)."""


_LEADING_FLAG = re.compile(r"-{1,2}[A-Za-z][A-Za-z0-9-]*")


def _option(ctx: click.Context, flag: str) -> click.Option | None:
    for param in ctx.command.params:
        if isinstance(param, click.Option) and flag in (*param.opts, *param.secondary_opts):
            return param
    return None


def _envvar_used(ctx: click.Context, param: click.Parameter) -> str | None:
    """The environment variable ``param``'s value came from, or ``None`` when it came from elsewhere."""
    if param.name is None or ctx.get_parameter_source(param.name) is not ParameterSource.ENVIRONMENT:
        return None
    names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
    return next((name for name in names if name in os.environ), names[0] if names else None)


def source_named(message: str, ctx: click.Context) -> str:
    """``message`` with its leading flag replaced by the environment variable the value came from, if it did."""
    match = _LEADING_FLAG.match(message)
    option = _option(ctx, match.group()) if match else None
    envvar = _envvar_used(ctx, option) if option is not None else None
    return envvar + message[match.end() :] if match and envvar else message


def _name_the_source(exc: click.UsageError) -> click.UsageError:
    """Point a usage error at where the value was written: the flag, or the environment variable."""
    ctx = exc.ctx
    if ctx is None or isinstance(exc, click.MissingParameter):
        return exc
    if isinstance(exc, click.BadParameter):
        if isinstance(exc.param, click.Option):
            exc.param_hint = _envvar_used(ctx, exc.param) or max(exc.param.opts, key=len)
        elif isinstance(exc.param_hint, str):
            exc.param_hint = source_named(exc.param_hint, ctx)
        return exc
    message = source_named(exc.message, ctx)
    return exc if message == exc.message else click.UsageError(message, ctx)


class AssayContext(click.Context):
    """A command's context: a :class:`ConfigError` from its body is a usage error under its own usage line."""

    def invoke(self, callback: Callable[..., Any] | click.Command, /, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().invoke(callback, *args, **kwargs)
        except ConfigError as exc:
            raise click.UsageError(str(exc), self) from exc


def _adopt(command: click.Command) -> None:
    command.context_class = AssayContext
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _adopt(sub)


class AssayGroup(click.Group):
    """A click group that turns mcp-assay's own errors into one message and the right exit code."""

    context_class = AssayContext

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _adopt(cmd)
        super().add_command(cmd, name)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:  # the group's own options (--log-level)
            named = _name_the_source(exc)
            if named is exc:
                raise
            raise named from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands in the order they were registered: the ones a newcomer needs first."""
        return list(self.commands)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's listing, from the summaries the group knows: listing a lazy command does not import it."""
        commands = self.commands
        if not isinstance(commands, LazyCommands):
            super().format_commands(ctx, formatter)
            return
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)  # click's own arithmetic
        rows = []
        for name in names:
            summary, hidden = commands.summary(name, limit)
            if not hidden:
                rows.append((name, summary))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            raise click.UsageError(str(exc), ctx) from exc
        except click.UsageError as exc:
            named = _name_the_source(exc)
            if named is exc:
                raise
            raise named from exc
        except AssayError as exc:
            click.echo(f"mcp-assay: {scrub(str(exc), log_redactor())}", err=True)
            raise click.exceptions.Exit(exc.exit_code) from exc
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # a defect in mcp-assay: never exit 1, which says a MUST failed
            logging.getLogger("mcp_assay").debug("internal error", exc_info=True)
            click.echo(
                f"mcp-assay: internal error, no verdict ({type(exc).__name__}: {scrub(str(exc), log_redactor())}); "
                "this is a bug in mcp-assay (--log-level debug shows where)",
                err=True,
            )
            raise click.exceptions.Exit(INTERNAL_ERROR_EXIT) from exc


@click.group(cls=AssayGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="mcp-assay")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    envvar="MCP_ASSAY_LOG_LEVEL",
    show_envvar=True,
    help="How much mcp-assay says about itself on stderr.",
)
def cli(log_level: str) -> None:
    """Judge whether MCP servers, clients and gateways speak the protocol correctly.

    Start with `mcp-assay demo`; test a server with `mcp-assay run -u URL` (or `-c COMMAND` for stdio).
    `mcp-assay COMMAND --help` says what a command does and everything it reads.
    """
    configure_logs(getattr(logging, log_level.upper()))


COMMANDS = (
    Named("demo", "mcp_assay.cli.demo", "demo_command", "See what mcp-assay does, on a bundled example server."),
    Named("run", "mcp_assay.cli.run", "run_command", "Test one MCP server, over HTTP or stdio, with the active suite."),
    Named(
        "proxy", "mcp_assay.cli.proxy", "proxy_command", "Judge live traffic between clients and servers via mitmproxy."
    ),
    Named(
        "addon-path",
        "mcp_assay.cli.addon_path",
        "addon_path_command",
        "Print the path of the mitmproxy addon script (mitmdump -s).",
    ),
    Named("tap", "mcp_assay.cli.tap", "tap_command", "Judge a stdio server and its client, from the client's config."),
    Named(
        "validate",
        "mcp_assay.cli.validate",
        "validate_command",
        "Judge recordings, mitmproxy flow files or HAR files offline, on every core or a cluster.",
    ),
    Named(
        "report",
        "mcp_assay.cli.report",
        "report_command",
        "Re-render and merge JSON reports; start a baseline from them.",
    ),
    Named(
        "replay",
        "mcp_assay.cli.replay",
        "replay_command",
        "Send a finding's request again and judge the answer: check a fix.",
    ),
    Named("spec", "mcp_assay.cli.spec", "spec_group", "List or download the protocol schemas."),
    Named("checks", "mcp_assay.cli.checks", "checks_command", "List the checks and the requirements they cite."),
    Named("stub", "mcp_assay.cli.stub", "stub_group", "Serve a stand-in authorization server for the token probes."),
)
"""The commands in the order the top-level help lists them (the ones a newcomer needs first), each with
its summary, so that listing them imports none: a process imports only the command it runs."""

cli.commands = LazyCommands(COMMANDS, _adopt)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="mcp-assay")
