"""Where schema files come from, and whether they are the ones upstream published.

Three places, in order: files the user names with ``--spec-path`` (used even when unpinned, and
reported as such), a folder of ``<revision>/schema.json`` given by ``--spec-dir`` or
``MCP_ASSAY_SPEC_DIR``, and the user cache that ``mcp-assay spec pull`` fills. Every file that is
not named explicitly must match the sha256 pinned in ``pins.toml``; mcp-assay never ships the
schemas itself.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from pathlib import Path

from mcp_assay.vocabulary.errors import ConfigError, SpecError

__all__ = [
    "Origin",
    "Pin",
    "SchemaFile",
    "cache_dir",
    "given",
    "is_revision_name",
    "load_pins",
    "locate_schemas",
    "parse_spec_path",
    "sha256_of",
]

SPEC_DIR_ENV = "MCP_ASSAY_SPEC_DIR"
CACHE_DIR_ENV = "MCP_ASSAY_CACHE_DIR"


class Origin(StrEnum):
    """How a schema file was found."""

    SPEC_PATH = "spec-path"
    SPEC_DIR = "spec-dir"
    CACHE = "cache"


@dataclass(frozen=True, slots=True)
class Pin:
    """What upstream published for one revision."""

    revision: str
    commit: str
    path: str
    sha256: str
    url: str


@dataclass(frozen=True, slots=True)
class SchemaFile:
    """A schema file on disk, with its provenance."""

    revision: str
    path: Path
    sha256: str
    origin: Origin
    pinned: bool
    """True when the hash matches the pin for this revision."""


def is_revision_name(name: str) -> bool:
    """Revisions are named by date (``YYYY-MM-DD``)."""
    try:
        _dt.date.fromisoformat(name)
    except ValueError:
        return False
    return len(name) == 10


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def load_pins() -> dict[str, Pin]:
    """The pins kept in the package, by revision."""
    text = resources.files("mcp_assay.spec").joinpath("pins.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    upstream = data["upstream"]
    pins: dict[str, Pin] = {}
    for revision, entry in data.get("revisions", {}).items():
        url = upstream["raw_url"].format(repository=upstream["repository"], commit=entry["commit"], path=entry["path"])
        pins[revision] = Pin(revision, entry["commit"], entry["path"], entry["sha256"], url)
    return pins


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$MCP_ASSAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/mcp-assay/spec`` (default ``~/.cache/mcp-assay/spec``)."""
    env = os.environ if environ is None else environ
    if env.get(CACHE_DIR_ENV):
        return Path(env[CACHE_DIR_ENV]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cache")
    return Path(base) / "mcp-assay" / "spec"


def given(name: str, value: object) -> str:
    """A value as the user gave it: ``--spec-dir PATH`` for a flag, ``MCP_ASSAY_SPEC_DIR=PATH`` otherwise."""
    return f"{name} {value}" if name.startswith("-") else f"{name}={value}"


def _folder_schemas(folder: Path, origin: Origin, pins: Mapping[str, Pin]) -> list[SchemaFile]:
    found: list[SchemaFile] = []
    for child in sorted(folder.iterdir()):
        candidate = child / "schema.json"
        if child.is_dir() and is_revision_name(child.name) and candidate.is_file():
            digest = sha256_of(candidate)
            pin = pins.get(child.name)
            found.append(SchemaFile(child.name, candidate, digest, origin, pin is not None and pin.sha256 == digest))
    return found


def parse_spec_path(spec_path: str) -> tuple[str, Path]:
    """``[REVISION=]PATH`` -> the revision and a readable file; a :class:`ConfigError` for anything else."""
    revision, sep, raw = spec_path.partition("=")
    if not sep:
        raw, revision = spec_path, Path(spec_path).parent.name
    path = Path(raw).expanduser()
    if not raw or not path.is_file():
        raise ConfigError(f"--spec-path {spec_path}: no such file")
    if not os.access(path, os.R_OK):
        raise ConfigError(f"--spec-path {spec_path}: cannot read {raw} (permission denied)")
    if not is_revision_name(revision):
        raise ConfigError(
            f"--spec-path {spec_path}: cannot tell which revision this schema is; "
            "put it at <revision>/schema.json or write REVISION=PATH (e.g. 2026-07-28=./schema.json)"
        )
    return revision, path


def _explicit(spec_path: str, pins: Mapping[str, Pin]) -> SchemaFile:
    revision, path = parse_spec_path(spec_path)
    digest = sha256_of(path)
    pin = pins.get(revision)
    return SchemaFile(revision, path.resolve(), digest, Origin.SPEC_PATH, pin is not None and pin.sha256 == digest)


def locate_schemas(
    *,
    spec_dir: str | os.PathLike[str] | None = None,
    spec_paths: Iterable[str] = (),
    cache: Path | None = None,
    pins: Mapping[str, Pin] | None = None,
    spec_dir_name: str = "--spec-dir",
) -> list[SchemaFile]:
    """Find the schema of every available revision, verified against the pins.

    ``spec_dir_name`` is where the user gave ``spec_dir`` (``--spec-dir``, ``MCP_ASSAY_SPEC_DIR``
    or an addon option): an error about the folder names that. Raises :class:`SpecError` when
    nothing is available, or when a file that was not named explicitly does not match its pin (a
    tampered or stale file must never be used silently).
    """
    pins = load_pins() if pins is None else pins
    chosen: dict[str, SchemaFile] = {}
    if spec_dir is not None:
        folder = Path(spec_dir).expanduser()
        if not folder.is_dir():
            raise ConfigError(f"{given(spec_dir_name, folder)}: not a directory")
        for schema in _folder_schemas(folder, Origin.SPEC_DIR, pins):
            chosen[schema.revision] = schema
        if not chosen and not list(spec_paths):
            raise ConfigError(
                f"{given(spec_dir_name, folder)} holds no <revision>/schema.json (e.g. {folder}/2026-07-28/schema.json)"
            )
    else:
        folder = cache if cache is not None else cache_dir()
        if folder.is_dir():
            for schema in _folder_schemas(folder, Origin.CACHE, pins):
                chosen[schema.revision] = schema
    explicit = [_explicit(item, pins) for item in spec_paths]
    for index, schema in enumerate(explicit):
        twin = next((other for other in explicit[:index] if other.revision == schema.revision), None)
        if twin is not None:
            raise ConfigError(
                f"--spec-path: two schemas for {schema.revision} ({twin.path} and {schema.path}); name one"
            )
    refused = [
        schema
        for schema in chosen.values()
        if not schema.pinned and schema.revision not in {e.revision for e in explicit}
    ]
    if refused:
        lines = []
        for schema in refused:
            pin = pins.get(schema.revision)
            expected = f"pinned {pin.sha256}" if pin else "no pin exists for this revision"
            lines.append(f"  {schema.path}: sha256 {schema.sha256}, {expected}")
        raise SpecError(
            "refusing schema files that do not match the published revision:\n"
            + "\n".join(lines)
            + "\nRun `mcp-assay spec pull` to fetch the pinned files, or name a file on purpose with --spec-path."
        )
    for schema in explicit:
        chosen[schema.revision] = schema
    if not chosen:
        raise SpecError(
            "no MCP schema is available. Either run `mcp-assay spec pull` to download the pinned "
            f"schemas into {cache if cache is not None else cache_dir()}, or point --spec-dir (or "
            f"{SPEC_DIR_ENV}) at a folder holding <revision>/schema.json files."
        )
    return [chosen[name] for name in sorted(chosen, key=_dt.date.fromisoformat)]
