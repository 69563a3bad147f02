"""Reducing failing arguments to a minimal set, by re-sending smaller ones to the live server.

A drawn failure carries noise: properties that play no part, a 200-character string where 65 do,
an integer of 7 digits where 0 does. :func:`shrink` tries smaller candidates one at a time — a
property removed, a string cut to half, three quarters, seven eighths or one character less, a
number brought toward 0, an array emptied or cut, text made ASCII — and keeps the first that still
fails the same way (``still_fails``, which sends it and asks the rules), then starts over from it. A
candidate must keep its standing (``allowed``: inside the schema for a valid call; outside it, at the
same places, for a call that broke a constraint), so the shrunk input is the same kind of finding.

Shrinking is greedy, deterministic and bounded twice: in calls (``max_calls``) and in time (the
``deadline`` of the exploration). Every accepted step is recorded in words, for the report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mcp_assay.suite.explore.schemas import canonical

__all__ = ["Shrunk", "candidates", "shrink"]


@dataclass(frozen=True, slots=True)
class Shrunk:
    """The smallest arguments found that still fail, and how they were reached."""

    arguments: dict[str, Any]
    steps: tuple[str, ...]
    """Each accepted step, in words (``removed limit``, ``query: 200 characters → 100 characters``)."""
    calls: int
    """Calls made while shrinking."""
    stopped: str = ""
    """Why shrinking stopped before trying every smaller candidate ('' when it tried them all)."""


async def shrink(
    arguments: dict[str, Any],
    still_fails: Callable[[dict[str, Any]], Awaitable[bool]],
    *,
    allowed: Callable[[dict[str, Any]], bool],
    max_calls: int,
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
) -> Shrunk:
    """``arguments`` reduced while ``still_fails`` holds, within ``max_calls`` calls and before ``deadline``."""
    current = arguments
    steps: list[str] = []
    tried = {canonical(arguments)}
    calls = 0
    improved = True
    while improved:
        improved = False
        for words, candidate in candidates(current):
            key = canonical(candidate)
            if key in tried or not isinstance(candidate, dict) or not allowed(candidate):
                continue
            tried.add(key)
            if calls >= max_calls:
                return Shrunk(current, tuple(steps), calls, f"its budget of {max_calls} calls was spent")
            if clock() >= deadline:
                return Shrunk(current, tuple(steps), calls, "the exploration's time bound was reached")
            calls += 1
            if await still_fails(candidate):
                current = candidate
                steps.append(words)
                improved = True
                break
    return Shrunk(current, tuple(steps), calls)


def candidates(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Smaller variants of ``value``, most reducing first: (the step in words, the whole new value)."""
    if isinstance(value, dict):
        for key in sorted(value):
            yield f"removed {_join(path, key)}", {name: item for name, item in value.items() if name != key}
        for key in sorted(value):
            for words, smaller in candidates(value[key], _join(path, key)):
                yield words, {**value, key: smaller}
    elif isinstance(value, list):
        size = len(value)
        for length in _cuts(size):
            yield f"{path or 'the array'}: {size} items → {length}", value[:length]
        if size > 1:
            yield f"{path or 'the array'}: dropped its first item", value[1:]
        for position, item in enumerate(value):
            for words, smaller in candidates(item, f"{path}[{position}]"):
                yield words, [*value[:position], smaller, *value[position + 1 :]]
    elif isinstance(value, str):
        yield from ((f"{path}: {_text(value)} → {_text(new)}", new) for new in _strings(value))
    elif isinstance(value, bool):
        if value:
            yield f"{path}: true → false", False
    elif isinstance(value, int):
        yield from ((f"{path}: {value} → {new}", new) for new in _integers(value))
    elif isinstance(value, float):
        yield from ((f"{path}: {value!r} → {new!r}", new) for new in _floats(value))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _cuts(size: int) -> list[int]:
    """Shorter lengths to try, shortest first: nothing, half, three quarters, seven eighths, one less."""
    found: list[int] = []
    for length in (0, size // 2, size - size // 4, size - size // 8, size - 1):
        if 0 <= length < size and length not in found:
            found.append(length)
    return found


def _strings(value: str) -> Iterator[str]:
    size = len(value)
    for length in _cuts(size):
        yield value[:length]
    if size > 1:
        yield value[size // 2 :]
        yield value[1:]
    ascii_only = "".join(char if char.isascii() else "a" for char in value)
    if ascii_only != value:
        yield ascii_only


def _integers(value: int) -> Iterator[int]:
    seen = {value}
    sign = 1 if value > 0 else -1
    for new in (0, sign, sign * (abs(value) // 2), value - sign):
        if new not in seen and abs(new) <= abs(value):
            seen.add(new)
            yield new
    if value < 0 and -value not in seen:
        yield -value


def _floats(value: float) -> Iterator[float | int]:
    if not math.isfinite(value):
        return
    seen: set[float] = {value}
    for new in (0, float(int(value)), value / 2, round(value, 1)):
        if new not in seen and abs(new) <= abs(value):
            seen.add(new)
            yield new


def _text(value: str) -> str:
    """A string as a shrink step shows it: short ones whole, long ones by their length."""
    if len(value) <= 24:
        return repr(value)
    return f"{len(value)} characters"
