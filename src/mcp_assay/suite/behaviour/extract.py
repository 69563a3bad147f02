"""The small path language that reduces a witness answer to the value compared before and after.

``structuredContent.count`` walks dotted keys, ``items[0].id`` indexes lists, and filters after
``|`` transform the result: ``|len`` (length of a list, object or string) and ``|hash`` (a short
SHA-256 of the canonical JSON). ``drafts|len`` counts records; ``|hash`` alone fingerprints the
whole answer. A path that does not match the answer is a failed read, never a silent ``None``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ExtractError", "Path", "apply_extract", "canonical", "fingerprint", "parse_extract"]

_STEP = re.compile(r"([^.\[\]|]+)|\[(\d+)\]")
FILTERS = ("len", "hash")


class ExtractError(ValueError):
    """An extract expression that cannot be parsed, or that does not fit the answer."""


@dataclass(frozen=True)
class Path:
    steps: tuple[str | int, ...]
    filters: tuple[str, ...]


def parse_extract(text: str) -> Path:
    """Parse ``a.b[0].c|len``; raises :class:`ExtractError` naming what is wrong."""
    head, *filters = [part.strip() for part in text.split("|")]
    for name in filters:
        if name not in FILTERS:
            raise ExtractError(f"unknown filter |{name} in {text!r} (filters: |len, |hash)")
    steps: list[str | int] = []
    position = 0
    while position < len(head):
        if head[position] == "." and steps:
            position += 1
        match = _STEP.match(head, position)
        if match is None:
            raise ExtractError(f"cannot read {text!r} at character {position + 1} (use a.b[0].c|len)")
        steps.append(int(match.group(2)) if match.group(2) is not None else match.group(1))
        position = match.end()
    return Path(tuple(steps), tuple(filters))


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()[:16]


def apply_extract(path: Path, value: Any) -> Any:
    """Walk ``value`` along ``path`` and apply its filters."""
    where = ""
    for step in path.steps:
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                raise ExtractError(f"no item [{step}] at {where or 'the top'}")
            value = value[step]
            where += f"[{step}]"
        else:
            if not isinstance(value, dict) or step not in value:
                raise ExtractError(f"no key {step!r} at {where or 'the top'}")
            value = value[step]
            where += f".{step}" if where else step
    for name in path.filters:
        if name == "len":
            if not isinstance(value, list | dict | str):
                raise ExtractError(f"|len needs a list, object or string at {where or 'the top'}")
            value = len(value)
        else:
            value = fingerprint(value)
    return value
