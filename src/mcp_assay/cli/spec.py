"""``mcp-assay spec list`` and ``mcp-assay spec pull``: which schemas mcp-assay judges with, and fetching them.

``list`` first says every place it looked (the ``--spec-dir`` folder or ``MCP_ASSAY_SPEC_DIR``,
the cache, ``--spec-path`` files) and what each holds, so a missing or unexpected schema can be
traced to its folder."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mcp_assay.cli.command import SCHEMAS, AssayCommand, environment
from mcp_assay.cli.options import build_spec, spec_dir_name, spec_notes, spec_options
from mcp_assay.cli.params import URL_TYPE, Checked
from mcp_assay.cli.schemas import cached_revisions
from mcp_assay.recording.logs import redactor
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.pull import MIRROR_ENV, check_mirror, pull_schemas
from mcp_assay.spec.sources import CACHE_DIR_ENV, SPEC_DIR_ENV, given
from mcp_assay.spec.sources import cache_dir as default_cache_dir
from mcp_assay.spec.upstream import INDEX_ENV, check_upstream
from mcp_assay.userinput.values import SECONDS
from mcp_assay.vocabulary.errors import ConfigError, SpecError

__all__ = ["spec_group"]


class Mirror(click.ParamType):  # type: ignore[type-arg]
    """``--mirror``: a template every pin fills in to an http(s) URL."""

    name = "url_template"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return check_mirror(str(value))
        except ConfigError as exc:
            self.fail(str(exc).removeprefix(f"--mirror {value}: "), param, ctx)


@click.group("spec", short_help="List or download the protocol schemas.")
def spec_group() -> None:
    """The protocol revisions mcp-assay can judge, and their schemas."""


@spec_group.command(
    "list",
    cls=AssayCommand,
    short_help="Show where schemas were looked for, the window and each hash.",
    reads=(SCHEMAS, environment()),
)
@spec_options
def list_command(spec_dir: str | None, spec_paths: tuple[str, ...]) -> None:
    """Show every place schemas were looked for and what it holds, then the revision window, where each
    schema came from, and its hash."""
    console = Console()
    try:
        spec = build_spec(spec_dir, spec_paths)
    except (SpecError, ConfigError):
        _print_looked_in(console, spec_dir, spec_paths)  # what was there, before why it cannot be used
        raise
    _print_looked_in(console, spec_dir, spec_paths)
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


def _print_looked_in(console: Console, spec_dir: str | None, spec_paths: Sequence[str]) -> None:
    """Every place schemas are looked for, whether it was searched, and the revisions it holds."""
    cache = default_cache_dir()
    named = spec_dir_name()
    console.print("looked for schemas in:", highlight=False)
    if spec_dir is None:
        console.print(f"  --spec-dir / {SPEC_DIR_ENV}: not given", highlight=False)
        skipped = ""
    else:
        console.print(
            f"  {given(named, spec_dir)}: {_holds(Path(spec_dir).expanduser())}", highlight=False, soft_wrap=True
        )
        skipped = f"not searched ({named} comes first); "
    origin = f" ({CACHE_DIR_ENV})" if os.environ.get(CACHE_DIR_ENV) else ""
    console.print(f"  the cache{origin} {cache}: {skipped}{_holds(cache)}", highlight=False, soft_wrap=True)
    for item in spec_paths:
        console.print(f"  --spec-path {item}", highlight=False, soft_wrap=True)


def _holds(folder: Path) -> str:
    if not folder.is_dir():
        return "no such folder"
    revisions = cached_revisions(folder)
    return f"holds {', '.join(revisions)}" if revisions else "holds no <revision>/schema.json"


@spec_group.command(
    "pull",
    cls=AssayCommand,
    short_help="Download the pinned schemas into the cache, sha256-checked.",
    reads=(
        (
            "network",
            "each pinned revision's schema.json, from GitHub at the pinned commit or from the --mirror template "
            "(HTTPS_PROXY and SSL_CERT_FILE apply); with --check, each at the branch head instead, and the listing "
            "of upstream's schema folder (GitHub's contents API, or --index; GITHUB_TOKEN is sent to api.github.com).",
        ),
        (
            "the cache",
            "--cache-dir, else $XDG_CACHE_HOME/mcp-assay/spec (~/.cache/mcp-assay/spec): a schema already there "
            "that matches its pin is kept unless --force.",
        ),
        environment(),
    ),
)
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
    "--check", is_flag=True, envvar="MCP_ASSAY_SPEC_CHECK", show_envvar=True,
    help="Download nothing: say whether upstream (or the mirror) publishes revisions or schema changes the pins lack, "
    "read at its branch head. Exit 0: nothing; 1: something the pins lack; 3: not everything could be checked.",
)  # fmt: skip
@click.option(
    "--index", envvar=INDEX_ENV, show_envvar=True, metavar="URL", type=URL_TYPE,
    help="With --check: the listing of upstream's schema folder (GitHub's contents JSON, or a JSON list of revision "
    "names). Default: GitHub's contents API; a mirror needs one to look for new revisions.",
)  # fmt: skip
@click.option(
    "--timeout", type=Checked(SECONDS, "seconds"), default=30.0, show_default=True, envvar="MCP_ASSAY_SPEC_TIMEOUT",
    show_envvar=True, help="Seconds to wait for each download.",
)  # fmt: skip
def pull_command(
    cache_dir: str | None, mirror: str | None, force: bool, check: bool, index: str | None, timeout: float
) -> None:
    """Download each pinned revision's schema.json from upstream and verify its sha256; with --check, say whether
    upstream publishes revisions or schema changes the pins lack (for a scheduled CI job).

    \b
    mcp-assay spec pull
    mcp-assay spec pull --check      exit 1 when upstream has something the pins lack
    """
    target = Path(cache_dir) if cache_dir else default_cache_dir()
    shown = _redactor(mirror, index)
    if check:
        _check(target, mirror, index, force, timeout, shown)
        return
    if index is not None:
        raise click.UsageError("--index is read by --check only: add --check, or drop it")
    results = pull_schemas(target, mirror=mirror, force=force, timeout=timeout)
    console = Console()
    for result in results:
        colour = {"downloaded": "green", "present": "green", "failed": "red"}[result.status]
        line = shown.prose(f"{result.revision}  {result.path}  {result.detail}")
        console.print(f"[{colour}]{result.status:<10}[/] {escape(line)}", highlight=False)
    if any(result.status == "failed" for result in results):
        raise SpecError(
            "some schemas could not be downloaded and verified (see above): where GitHub is out of reach, fetch "
            f"from an internal mirror (--mirror URL_TEMPLATE, or {MIRROR_ENV}), or point {SPEC_DIR_ENV} (or "
            "--spec-dir) at a folder of <revision>/schema.json files you already have"
        )


def _redactor(*urls: str | None) -> Redactor:
    """The redactor of this command's log lines, knowing the password (or token) a mirror or index URL carries, so
    that no line printed names it (``https://user:pw@mirror/...`` is shown ``https://user:REDACTED@mirror/...``)."""
    shown = redactor()
    for url in urls:
        if url:
            shown.learn_url(url)
    return shown


_CHECK_STYLE = {"new": "red", "changed": "red", "gone": "red", "failed": "yellow", "unchanged": "green"}


def _check(cache: Path, mirror: str | None, index: str | None, force: bool, timeout: float, shown: Redactor) -> None:
    """``spec pull --check``: one line per revision, then the exit status CI reads."""
    if force:
        raise click.UsageError("--check downloads nothing, so --force has nothing to do: drop one of them")
    folders = [cache, *([Path(os.environ[SPEC_DIR_ENV])] if os.environ.get(SPEC_DIR_ENV) else [])]
    result = check_upstream(mirror=mirror, index=index, folders=folders, timeout=timeout)
    console = Console()
    console.print(escape(shown.prose(f"compared the pins with {result.source}")), highlight=False, soft_wrap=True)
    for item in result.findings:
        line = escape(shown.prose(f"{item.revision}  {item.detail}"))
        console.print(f"[{_CHECK_STYLE[item.status]}]{item.status:<10}[/] {line}", highlight=False, soft_wrap=True)
    if result.unlisted:
        line = escape(shown.prose(f"new revisions not looked for: {result.unlisted}"))
        console.print(f"[yellow]{'unlisted':<10}[/] {line}", highlight=False, soft_wrap=True)
    code = result.exit_code
    summary = {
        0: "the pins hold every revision and schema upstream publishes",
        1: "upstream publishes what the pins lack: a newer mcp-assay (or new pins) is needed to judge it",
        3: "not everything could be checked (see above)",
    }[code]
    console.print(summary, highlight=False, soft_wrap=True)
    raise SystemExit(code)
