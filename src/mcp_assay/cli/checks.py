"""``mcp-assay checks``: what mcp-assay checks, and which requirements have no check yet."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from mcp_assay.cli.command import AssayCommand, environment
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.requirements import catalogue

__all__ = ["checks_command"]


@click.command(
    "checks",
    cls=AssayCommand,
    short_help="List the checks and the requirements they cite.",
    reads=(
        ("catalogue", "only what mcp-assay ships: its requirement catalogue and its checks."),
        environment(),
    ),
)
@click.option(
    "--uncovered", is_flag=True, envvar="MCP_ASSAY_UNCOVERED", show_envvar=True,
    help="List catalogue requirements that no check cites instead.",
)  # fmt: skip
def checks_command(uncovered: bool) -> None:
    """List every check with its requirement IDs, level, side and gates."""
    from mcp_assay.spec import rules  # noqa: F401 - registers the checks

    console = Console()
    if uncovered:
        cited = {ident for check in REGISTRY.values() for ident in check.requirements}
        table = Table(title="Requirements without a check")
        for column in ("id", "level", "side", "observe", "why not", "summary"):
            table.add_column(column, overflow="fold")
        for requirement in catalogue():
            if requirement.id not in cited:
                table.add_row(
                    requirement.id, requirement.level.value, requirement.side.value, requirement.observe,
                    requirement.deferred or "", requirement.summary,
                )  # fmt: skip
        console.print(table)
        return
    table = Table(title=f"{len(REGISTRY)} checks")
    for column in ("check", "requirements", "level", "side", "features", "transports", "title"):
        table.add_column(column, overflow="fold")
    for check in sorted(REGISTRY.values(), key=lambda c: (c.area, c.requirements)):
        table.add_row(
            check.name, ", ".join(check.requirements), check.level.value, check.side.value,
            ", ".join(sorted(check.gate.features)) or "any", ", ".join(sorted(check.gate.transports)), check.title,
        )  # fmt: skip
    console.print(table)
