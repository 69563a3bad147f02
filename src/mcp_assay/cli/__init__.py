"""The ``mcp-assay`` command line.

Commands parse flags (every flag has an ``MCP_ASSAY_*`` environment twin; flags win), build a
configuration, call the library and turn the outcome into an exit code: 0 when no MUST-level
requirement failed, 1 when one did, 2 for a usage error, 3 when the target or input could not be
used (or mcp-assay itself failed). Errors about the user's input are reported once, before any work starts.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from mcp_assay import __version__
from mcp_assay.errors import AssayError, ConfigError
from mcp_assay.logs import configure as configure_logs
from mcp_assay.logs import redactor as log_redactor
from mcp_assay.logs import scrub

__all__ = ["cli", "main"]

INTERNAL_ERROR_EXIT = 3
"""A defect in mcp-assay itself: no verdict could be reached (never 1, which says a requirement failed)."""


class AssayGroup(click.Group):
    """A click group that turns mcp-assay's own errors into one message and the right exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands in the order they were registered: the ones a newcomer needs first."""
        return list(self.commands)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            raise click.UsageError(str(exc), ctx) from exc
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


def _register() -> None:
    """Each command module registers its commands, in the order the top-level help lists them."""
    for name in (
        "mcp_assay.cli.demo",
        "mcp_assay.cli.run",
        "mcp_assay.cli.proxy",
        "mcp_assay.cli.tap",
        "mcp_assay.cli.validate",
        "mcp_assay.cli.report",
        "mcp_assay.cli.spec",
        "mcp_assay.cli.checks",
        "mcp_assay.cli.stub",
    ):
        try:
            module = __import__(name, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(cli)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="mcp-assay")
