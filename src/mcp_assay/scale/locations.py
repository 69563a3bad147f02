"""Where the recordings to judge are: files, folders, glob patterns, or URLs a cluster reads (fsspec).

A user with a corpus names it the short way: ``validate nightly/`` (every recording in the folder and
below it), ``validate 'nightly/**/*.jsonl'`` (a pattern mcp-assay expands, so the shell's limit on
arguments never applies), ``validate s3://bucket/mcp/2026-12-01/`` (objects the cluster's workers read
through fsspec). Everything is expanded, and every local file checked, before any judging starts: a
name that matches nothing is one usage error (exit 2).

A folder (local or remote) gives the files whose names end in :data:`SUFFIXES`; a file named on its own
may be called anything, since its format is told by its content.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from mcp_assay.vocabulary.errors import ConfigError, RecordingError

__all__ = ["SUFFIXES", "Recording", "expand", "is_url", "local_copy"]

SUFFIXES = (".jsonl", ".flows", ".mitm", ".har")
"""The names a folder's recordings have: mcp-assay recordings, mitmproxy flow files, HAR files."""
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
_GLOB = re.compile(r"[*?\[]")
NO_FSSPEC = "reading URLs needs fsspec (pip install 'mcp-assay[cluster]', and the fsspec backend of the storage)"


@dataclass(frozen=True, slots=True)
class Recording:
    """One file to judge: where it is (a path or an fsspec URL) and its size in bytes."""

    location: str
    size: int


def is_url(location: str) -> bool:
    """Whether ``location`` is an fsspec URL (``s3://…``, ``gs://…``, ``file://…``), not a local path."""
    return bool(_URL.match(location))


def expand(arguments: Sequence[str]) -> list[Recording]:
    """Every recording the arguments name, in the order given (a folder's and a pattern's in name order), each
    once; a :class:`ConfigError` (a usage error) for an argument that names nothing readable."""
    found: dict[str, Recording] = {}
    for argument in arguments:
        items = _remote(argument) if is_url(argument) else _local(argument)
        for item in items:
            found.setdefault(item.location, item)
    return list(found.values())


def _local(argument: str) -> list[Recording]:
    path = Path(argument).expanduser()
    if path.is_file():
        return [_file(path, argument)]
    if path.is_dir():
        files = sorted(item for item in path.rglob("*") if item.is_file() and item.name.lower().endswith(SUFFIXES))
        if not files:
            raise ConfigError(f"{argument}: no recordings in this folder (files ending in {', '.join(SUFFIXES)})")
        return [_file(item, str(item)) for item in files]
    if _GLOB.search(argument):
        matches = sorted(Path(item) for item in glob.glob(os.path.expanduser(argument), recursive=True))
        files = [item for item in matches if item.is_file()]
        if not files:
            raise ConfigError(f"{argument}: no file matches this pattern")
        return [_file(item, str(item)) for item in files]
    raise ConfigError(f"{argument}: no such file or folder")


def _file(path: Path, shown: str) -> Recording:
    try:
        with path.open("rb"):
            pass
        size = path.stat().st_size
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot be read ({exc.strerror or exc})") from exc
    return Recording(shown, size)


def _filesystem(url: str) -> tuple[Any, str]:
    try:
        import fsspec  # type: ignore[import-untyped, unused-ignore]
    except ImportError as exc:
        raise ConfigError(f"{url}: {NO_FSSPEC}") from exc
    try:
        filesystem, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise ConfigError(f"{url}: {exc}") from exc
    return filesystem, path


def _remote(url: str) -> list[Recording]:
    filesystem, path = _filesystem(url)
    protocol = url.split("://", 1)[0]

    def located(name: str) -> str:
        return filesystem.unstrip_protocol(name) if hasattr(filesystem, "unstrip_protocol") else f"{protocol}://{name}"

    try:
        if _GLOB.search(path):
            names = sorted(str(name) for name in filesystem.glob(path))
            infos = [(name, filesystem.info(name)) for name in names]
        elif filesystem.isdir(path):
            listed = filesystem.find(path, detail=True)
            infos = sorted((str(name), info) for name, info in listed.items() if str(name).lower().endswith(SUFFIXES))
        else:
            infos = [(path, filesystem.info(path))]
    except FileNotFoundError as exc:
        raise ConfigError(f"{url}: no such object or folder") from exc
    except OSError as exc:
        raise ConfigError(f"{url}: cannot be listed ({exc})") from exc
    files = [(name, info) for name, info in infos if info.get("type", "file") == "file"]
    if not files:
        raise ConfigError(f"{url}: no recordings there")
    return [Recording(located(name), int(info.get("size") or 0)) for name, info in files]


@contextlib.contextmanager
def local_copy(location: str) -> Iterator[Path]:
    """A local path to read ``location`` from: the path itself, or for a URL a temporary copy (streamed, so memory
    stays flat), removed afterwards. Readers, and what checks a recording before it is judged, see a local file."""
    if not is_url(location):
        yield Path(location)
        return
    filesystem, path = _filesystem(location)
    suffix = PurePosixPath(path).suffix
    with tempfile.TemporaryDirectory(prefix="mcp-assay-unit-") as folder:
        target = Path(folder) / f"recording{suffix}"
        try:
            with filesystem.open(path, "rb") as source, target.open("wb") as copy:
                shutil.copyfileobj(source, copy, 1 << 20)
        except OSError as exc:
            raise RecordingError(f"{location}: cannot be read ({exc})") from exc
        yield target
