"""Schemas on demand for ``run`` and ``demo``: with none on disk, fetch the pinned files first.

A newcomer's first command should not fail for want of ``mcp-assay spec pull``. When no schema
was named (no ``--spec-dir``, no ``--spec-path``) and the user cache holds none, these commands
fetch every pinned revision into the cache themselves, saying what they fetch, from where and
into which folder: upstream at the pinned commit, or ``MCP_ASSAY_SPEC_MIRROR``'s template. Every
file is checked against its sha256 pin before it is written, as ``spec pull`` does. This fetch is
the only traffic these commands send beyond the target. ``--offline`` refuses instead, with the
one command that fixes it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from mcp_assay.cli.options import build_spec
from mcp_assay.spec import SpecSet
from mcp_assay.spec.pull import MIRROR_ENV, check_mirror, download_url, pull_schemas
from mcp_assay.spec.sources import cache_dir, is_revision_name, load_pins
from mcp_assay.vocabulary.errors import ConfigError, SpecError

__all__ = ["OFFLINE_ENV", "cached_revisions", "obtain_spec", "offline_option"]

OFFLINE_ENV = "MCP_ASSAY_OFFLINE"
FETCH_TIMEOUT = 30.0


def offline_option[F: Callable[..., Any]](func: F) -> F:
    """``--offline``: never fetch the schemas; refuse when none is on disk."""
    return click.option(
        "--offline",
        is_flag=True,
        default=False,
        envvar=OFFLINE_ENV,
        show_envvar=True,
        help="Never fetch the pinned schemas when none is on disk; refuse instead (default: fetch them into the "
        "cache, saying from where).",
    )(func)


def cached_revisions(cache: Path) -> list[str]:
    """Revisions with a ``schema.json`` in the cache folder (verified later, when they are loaded)."""
    if not cache.is_dir():
        return []
    return sorted(
        child.name for child in cache.iterdir() if is_revision_name(child.name) and (child / "schema.json").is_file()
    )


def obtain_spec(
    spec_dir: str | None, spec_paths: Sequence[str], *, offline: bool, console: Console | None = None
) -> SpecSet:
    """The schemas ``--spec-dir`` / ``--spec-path`` / the cache hold, fetching the pinned ones first when none is."""
    cache = cache_dir()
    if spec_dir is None and not spec_paths and not cached_revisions(cache):
        if offline:
            raise SpecError(
                f"no MCP schema on disk ({cache} is empty) and --offline forbids fetching them: "
                "run `mcp-assay spec pull` once where the network is reachable, or point --spec-dir at your copy."
            )
        _fetch(cache, console or Console(stderr=True))
    return build_spec(spec_dir, spec_paths)


def _fetch(cache: Path, console: Console) -> None:
    mirror = os.environ.get(MIRROR_ENV) or None
    if mirror is not None:
        try:
            check_mirror(mirror)
        except ConfigError as exc:
            raise ConfigError(MIRROR_ENV + str(exc).removeprefix("--mirror")) from None
    pins = list(load_pins().values())
    console.print(
        f"no MCP schema on disk: fetching the {len(pins)} pinned schemas into {cache} "
        "(each checked against its sha256 pin; --offline never fetches)",
        highlight=False,
        soft_wrap=True,
    )
    for pin in pins:
        console.print(f"  {pin.revision}  {download_url(pin, mirror)}", highlight=False, soft_wrap=True)
    results = pull_schemas(cache, mirror=mirror, timeout=FETCH_TIMEOUT, pins=pins)
    failed = [result for result in results if result.status == "failed"]
    for result in failed:
        console.print(f"  [red]failed[/] {result.revision}: {result.detail}", highlight=False, soft_wrap=True)
    if failed:
        raise SpecError(
            "the pinned schemas could not be fetched (see above): run `mcp-assay spec pull` (with --mirror for an "
            "internal mirror), or point --spec-dir at a folder of <revision>/schema.json files."
        )
