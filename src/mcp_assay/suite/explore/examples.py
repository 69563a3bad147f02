"""The failing examples ``run --explore`` keeps, and tries first the next time the same tool is explored.

Like hypothesis's example database and schemathesis's, but mcp-assay's own: one JSON file per tool
under the user cache (``$XDG_CACHE_HOME/mcp-assay/explore``, default ``~/.cache/mcp-assay/explore``),
named by a digest of the target, the tool's name and its ``inputSchema`` — a tool whose schema changed
starts afresh, and the file name says nothing of the target. A file holds the shrunk arguments of the
latest failures (at most :data:`KEEP`), newest first. Nothing else is stored: no answer, no credential.
A file that cannot be read or written is passed over (exploring goes on without it).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_assay.suite.explore.schemas import MAX_ARGUMENT_BYTES, canonical, json_size

__all__ = ["KEEP", "Example", "ExampleStore", "explore_cache"]

KEEP = 20
"""Failing examples kept per tool."""
_MAX_FILE = 4 * 1024 * 1024


def explore_cache(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/mcp-assay/explore`` (default ``~/.cache/mcp-assay/explore``)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cache")
    return Path(base) / "mcp-assay" / "explore"


@dataclass(frozen=True, slots=True)
class Example:
    """One kept failure: the arguments, and whether they were inside the schema (or which constraint they broke)."""

    arguments: dict[str, Any]
    kind: str
    """``inside`` or the constraint broken (``bound``, ``type`` ...)."""
    found: tuple[str, ...]
    """What failed, when it was kept (check names, or the kind of server failure)."""


class ExampleStore:
    """The kept failures of one tool of one target."""

    def __init__(self, folder: Path, target: str, tool: str, schema: Any) -> None:
        digest = hashlib.sha256(canonical([target, tool, schema]).encode("utf-8")).hexdigest()[:24]
        self.path = folder / f"{digest}.json"

    def load(self) -> list[Example]:
        """The kept examples, newest first (none when there is no readable file)."""
        try:
            if self.path.stat().st_size > _MAX_FILE:
                return []
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return []
        items = data.get("examples") if isinstance(data, dict) else None
        found = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("arguments"), dict):
                continue
            size = json_size(item["arguments"])
            if size is None or size > MAX_ARGUMENT_BYTES:
                continue
            found_by = item.get("found")
            found.append(
                Example(
                    arguments=item["arguments"],
                    kind=str(item.get("kind", "inside")),
                    found=tuple(str(name) for name in found_by) if isinstance(found_by, list) else (),
                )
            )
        return found

    def save(self, new: Sequence[Example]) -> str | None:
        """Keep ``new`` before what was kept (duplicates dropped, :data:`KEEP` at most); why not, if it failed."""
        merged: dict[str, Example] = {}
        for example in [*new, *self.load()]:
            merged.setdefault(canonical(example.arguments), example)
        kept = list(merged.values())[:KEEP]
        data = {
            "examples": [
                {"arguments": example.arguments, "kind": example.kind, "found": list(example.found)} for example in kept
            ]
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as exc:
            return f"the failing examples could not be kept in {self.path.parent} ({exc.strerror or exc})"
        return None
