"""The class every mcp-assay command is made with: its help names what it reads, its usage errors are its own.

A person deciding what to pass, or what a command may touch, finds every input in ``--help``, in a
``Reads`` section after the options: the arguments and their formats, the files options name, the
folders searched, the network, and the environment variables beyond the options' own twins (click
shows those with each option). Inputs several commands share are written once here.

An error in the user's input that the library finds while the command runs (a
:class:`~mcp_assay.vocabulary.errors.ConfigError`) is a usage error of that command, so click prints that
command's usage line and help hint, not the top-level ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from mcp_assay.vocabulary.errors import ConfigError

__all__ = [
    "BASELINE",
    "FETCHED_SCHEMAS",
    "SCHEMAS",
    "AssayCommand",
    "environment",
]

Read = tuple[str, str]
"""One input: what it is (an argument, an option, a place) and what is read from it."""

SCHEMAS: Read = (
    "schemas",
    "<revision>/schema.json files in the --spec-dir folder (MCP_ASSAY_SPEC_DIR), else in the cache: "
    "MCP_ASSAY_CACHE_DIR, else $XDG_CACHE_HOME/mcp-assay/spec (~/.cache/mcp-assay/spec); a --spec-path file "
    "wins for its revision. Each is checked against the sha256 pins packaged with mcp-assay.",
)
FETCHED_SCHEMAS: Read = (
    "schema fetch",
    "only when no schema is on disk and --offline is not given: the pinned schemas, from GitHub or from the "
    "MCP_ASSAY_SPEC_MIRROR template (HTTPS_PROXY and SSL_CERT_FILE apply), saved in the cache.",
)
BASELINE: Read = ("--baseline FILE", "known findings to accept (mcp-assay.baseline/1 YAML).")


def environment(*more: str) -> Read:
    """The environment a command reads: the options' twins, the log level, and ``more``."""
    rest = "".join(f"; {item}" for item in more)
    return (
        "environment",
        f"each option's MCP_ASSAY_* twin, shown with it (a flag wins); MCP_ASSAY_LOG_LEVEL (mcp-assay --log-level)"
        f"{rest}.",
    )


class AssayCommand(click.Command):
    """A command whose help ends with what it reads, and whose input errors print its own usage."""

    def __init__(self, *args: Any, reads: Sequence[Read] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: tuple[Read, ...] = tuple(reads)
        """Every input of the command, shown under ``Reads`` in its help."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.reads:
            with formatter.section("Reads"):
                formatter.write_dl(list(self.reads))
        super().format_epilog(ctx, formatter)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:  # click raises "Option '--x' requires an argument." without the context,
            if exc.ctx is None:  # so that one error alone came without the command's usage line
                exc.ctx = ctx
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            raise click.UsageError(str(exc), ctx) from exc
