"""``mcp-assay spec list`` and ``mcp-assay spec pull``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from mcp_assay.cli.options import build_spec, spec_notes, spec_options
from mcp_assay.cli.params import Checked
from mcp_assay.errors import ConfigError, SpecError
from mcp_assay.spec.pull import MIRROR_ENV, check_mirror, pull_schemas
from mcp_assay.spec.sources import CACHE_DIR_ENV
from mcp_assay.spec.sources import cache_dir as default_cache_dir
from mcp_assay.values import SECONDS

__all__ = ["register"]


class Mirror(click.ParamType):  # type: ignore[type-arg]
    """``--mirror``: a template every pin fills in to an http(s) URL."""

    name = "url_template"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return check_mirror(str(value))
        except ConfigError as exc:
            self.fail(str(exc).removeprefix(f"--mirror {value}: "), param, ctx)


@click.group("spec")
def spec_group() -> None:
    """The protocol revisions mcp-assay can judge, and their schemas."""


@spec_group.command("list")
@spec_options
def list_command(spec_dir: str | None, spec_paths: tuple[str, ...]) -> None:
    """Show the revision window, where each schema came from, and its hash."""
    spec = build_spec(spec_dir, spec_paths)
    console = Console()
    table = Table(title="MCP revisions", show_lines=False)
    for column in ("revision", "status", "era", "schema", "from", "sha256", "verified"):
        table.add_column(column, overflow="fold")
    for revision in reversed(spec.all):
        if revision is spec.newest:
            status = "default (newest)"
        elif revision in spec.window:
            status = "supported"
        else:
            status = "outside window"
        table.add_row(
            revision.name,
            status,
            revision.era,
            str(revision.schema.path),
            revision.schema.origin.value,
            revision.schema.sha256,
            "pinned" if revision.schema.pinned else "UNPINNED",
        )
    console.print(table)
    for revision in spec.window:
        errata = f"; errata applied: {', '.join(revision.errata)}" if revision.errata else ""
        console.print(f"{revision.name} defines: {', '.join(sorted(revision.features))}{errata}", highlight=False)
    for note in spec_notes(spec):
        console.print(f"[yellow]note:[/] {note}")


@spec_group.command("pull")
@click.option(
    "--cache-dir",
    envvar=CACHE_DIR_ENV,
    show_envvar=True,
    type=click.Path(file_okay=False),
    help="Where to store the schemas (default: $XDG_CACHE_HOME/mcp-assay/spec).",
)
@click.option(
    "--mirror",
    envvar=MIRROR_ENV,
    show_envvar=True,
    metavar="URL_TEMPLATE",
    type=Mirror(),
    help="Fetch from a mirror instead of GitHub; {commit}, {path} and {revision} are filled in.",
)
@click.option("--force", is_flag=True, envvar="MCP_ASSAY_SPEC_FORCE", show_envvar=True, help="Download even if cached.")
@click.option(
    "--timeout", type=Checked(SECONDS, "seconds"), default=30.0, show_default=True, envvar="MCP_ASSAY_SPEC_TIMEOUT",
    show_envvar=True, help="Seconds to wait for each download.",
)  # fmt: skip
def pull_command(cache_dir: str | None, mirror: str | None, force: bool, timeout: float) -> None:
    """Download each pinned revision's schema.json from upstream and verify its sha256."""
    target = Path(cache_dir) if cache_dir else default_cache_dir()
    results = pull_schemas(target, mirror=mirror, force=force, timeout=timeout)
    console = Console()
    for result in results:
        colour = {"downloaded": "green", "present": "green", "failed": "red"}[result.status]
        console.print(
            f"[{colour}]{result.status:<10}[/] {result.revision}  {result.path}  {result.detail}", highlight=False
        )
    if any(result.status == "failed" for result in results):
        raise SpecError("some schemas could not be downloaded and verified (see above)")


def register(group: click.Group) -> None:
    group.add_command(spec_group)
