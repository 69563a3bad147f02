"""The revision window: which revisions mcp-assay can judge, ordered by what is on disk.

Revisions are never compared as strings. The schemas found are put in date order once, and each
:class:`Revision` carries its position in that enumeration; the newest two form the window and
the newest is the default revision under test. Dropping a newer pinned schema into the spec
folder moves the window with no code change.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from mcp_assay.spec.errata import apply_errata
from mcp_assay.spec.features import derive_features
from mcp_assay.spec.sources import SPEC_DIR_ENV, Origin, SchemaFile, locate_schemas
from mcp_assay.spec.validator import MessageValidator
from mcp_assay.vocabulary.errors import ConfigError, SpecError
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.vocabulary.verdicts import SchemaInfo

__all__ = ["WINDOW_SIZE", "Revision", "SpecSet", "load_spec"]

WINDOW_SIZE = 2


@dataclass(frozen=True, eq=False)
class Revision:
    """One protocol revision with its schema, feature set and validator."""

    name: str
    ordinal: int
    """Position in the date-ordered enumeration of the revisions found (0 = oldest)."""
    schema: SchemaFile
    document: dict[str, Any] = field(repr=False)
    features: frozenset[str] = frozenset()
    errata: tuple[str, ...] = ()

    @cached_property
    def validator(self) -> MessageValidator:
        return MessageValidator(self.name, self.document)

    def has(self, feature: str) -> bool:
        return feature in self.features

    @property
    def era(self) -> Era:
        """:attr:`Era.MODERN` for per-request versioning, :attr:`Era.HANDSHAKE` for initialize-negotiated revisions."""
        return Era.MODERN if "per_request_version" in self.features else Era.HANDSHAKE

    def __lt__(self, other: Revision) -> bool:
        return self.ordinal < other.ordinal

    def __le__(self, other: Revision) -> bool:
        return self.ordinal <= other.ordinal

    def __str__(self) -> str:
        return self.name


class SpecSet:
    """Every revision found, and the window of the newest :data:`WINDOW_SIZE` of them."""

    def __init__(self, revisions: Sequence[Revision]) -> None:
        if not revisions:
            raise SpecError("no revisions loaded")
        self.all = tuple(sorted(revisions))
        self.window = self.all[-WINDOW_SIZE:][::-1]
        """Newest first."""
        self._by_name = {revision.name: revision for revision in self.all}
        self._in_window = {name: revision for name, revision in self._by_name.items() if revision in self.window}
        """What :meth:`get` answers, by name (rules ask it hundreds of times a message)."""

    @property
    def newest(self) -> Revision:
        return self.window[0]

    def get(self, name: str | None) -> Revision | None:
        """The revision named, if it is inside the window."""
        return self._in_window.get(name) if name is not None else None

    def require(self, name: str) -> Revision:
        """The named revision, or a usage error listing the supported ones."""
        revision = self.get(name)
        if revision is None:
            raise ConfigError(f"revision {name} is not supported; supported: {self.window_names()}")
        return revision

    def window_names(self) -> str:
        return ", ".join(revision.name for revision in self.window)

    def __iter__(self) -> Any:
        return iter(self.window)

    @property
    def unpinned(self) -> list[Revision]:
        return [revision for revision in self.window if not revision.schema.pinned]

    def schema_infos(self) -> list[SchemaInfo]:
        """Which schema file judged each revision of the window, as every report names them."""
        return [
            SchemaInfo(r.name, r.schema.origin.value, str(r.schema.path), r.schema.sha256, r.schema.pinned)
            for r in self.window
        ]


def _read(schema: SchemaFile) -> dict[str, Any]:
    # A file the user named is their mistake (a usage error); one found in a folder or the cache is not.
    error = ConfigError if schema.origin is Origin.SPEC_PATH else SpecError
    where = f"--spec-path {schema.path}" if schema.origin is Origin.SPEC_PATH else str(schema.path)
    try:
        document = json.loads(schema.path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise error(f"{where}: cannot read schema: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("$defs"), dict):
        raise error(f"{where}: not an MCP schema (no $defs)")
    return document


def build_revisions(schemas: Iterable[SchemaFile]) -> list[Revision]:
    revisions = []
    for ordinal, schema in enumerate(schemas):
        document = _read(schema)
        patched = copy.deepcopy(document)
        errata = apply_errata(patched["$defs"])
        features = derive_features(document["$defs"])
        revisions.append(Revision(schema.revision, ordinal, schema, patched, features, errata))
    return revisions


def load_spec(
    *,
    spec_dir: str | os.PathLike[str] | None = None,
    spec_paths: Iterable[str] = (),
    cache: Path | None = None,
    spec_dir_name: str = "--spec-dir",
) -> SpecSet:
    """Find, verify and load the schemas; ``spec_dir`` defaults to ``$MCP_ASSAY_SPEC_DIR``.

    ``spec_dir_name`` says where the user gave ``spec_dir``, for the errors about it."""
    if spec_dir is None and os.environ.get(SPEC_DIR_ENV):
        spec_dir, spec_dir_name = os.environ[SPEC_DIR_ENV], SPEC_DIR_ENV
    schemas = locate_schemas(spec_dir=spec_dir, spec_paths=list(spec_paths), cache=cache, spec_dir_name=spec_dir_name)
    return SpecSet(build_revisions(schemas))
