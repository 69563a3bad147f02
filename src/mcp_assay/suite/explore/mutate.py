"""Arguments outside a tool's ``inputSchema`` by exactly one broken constraint.

A language model's wrong arguments are rarely random bytes: a number sent as a string, a bound missed
by one, a string one character too long, an enum member misspelt, a required property forgotten, a
property the schema does not define. :func:`mutations` takes arguments that satisfy the schema and
breaks one constraint at a time — ``type``, ``bound`` (``minimum``, ``maximum`` and their exclusive
forms), ``multipleOf``, ``length`` (``minLength``/``maxLength``, ``minItems``/``maxItems``,
``uniqueItems``), ``pattern``, ``enum``/``const``, ``required`` and ``additionalProperties`` — at the
top level and in nested objects and arrays. A candidate is kept only when the validator the rules use
(:func:`~mcp_assay.suite.explore.schemas.violations`) finds the arguments break the schema at exactly
the place that was changed, so each one is a call TOOL-14 judges, and its finding names one cause.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from mcp_assay.suite.explore.schemas import MAX_DEPTH, outside, resolve, types_of, violations

__all__ = ["CONSTRAINTS", "EXTRA_PROPERTY", "Mutation", "mutations"]

EXTRA_PROPERTY = "mcp_assay_unexpected"
"""The property added where ``additionalProperties`` forbids others (the same name the fixed case uses)."""
CONSTRAINTS = (
    "required", "additionalProperties", "type", "bound", "multipleOf", "length", "pattern", "enum",
)  # fmt: skip
"""The constraints :func:`mutations` breaks, in the order it breaks them."""
_LONGEST = 4096
"""The longest string or array a length mutation builds (past a ``maxLength`` larger than this, none is made)."""


@dataclass(frozen=True, slots=True)
class Mutation:
    """Arguments that break one constraint of a tool's ``inputSchema``."""

    constraint: str
    """Which kind of constraint was broken (one of :data:`CONSTRAINTS`)."""
    path: str
    """Where, as the validator names it (``arguments.limit``)."""
    arguments: dict[str, Any]
    description: str
    """What was broken, in words (``arguments.limit 51, above its maximum 50``)."""


def mutations(schema: Mapping[str, Any], valid: Mapping[str, Any]) -> list[Mutation]:
    """Every single-constraint break of ``valid`` (arguments inside ``schema``) this module knows, in a fixed order."""
    root = dict(schema)
    found: list[Mutation] = []
    seen: set[str] = set()
    for constraint, path, arguments, words in _object_breaks(root, root, dict(valid), (), 0):
        wanted = _validator_path(path)
        broken = violations(root, arguments)
        if not broken or set(broken) != {wanted} or not outside(root, arguments):
            continue
        key = repr(sorted(arguments.items(), key=lambda item: item[0])) + constraint
        if key in seen:
            continue
        seen.add(key)
        found.append(Mutation(constraint, wanted, arguments, words))
    return found


Path = tuple[str | int, ...]


def _validator_path(path: Path) -> str:
    text = "arguments"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _replaced(arguments: Any, path: Path, value: Any) -> Any:
    """A copy of ``arguments`` with the value at ``path`` replaced (copies only along the path)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(arguments, dict) and isinstance(head, str):
        return {**arguments, head: _replaced(arguments[head], rest, value)}
    if isinstance(arguments, list) and isinstance(head, int):
        copy = list(arguments)
        copy[head] = _replaced(copy[head], rest, value)
        return copy
    return arguments


def _at(arguments: Any, path: Path) -> Any:
    for part in path:
        arguments = arguments[part]
    return arguments


Break = tuple[str, Path, Any, str]
"""(constraint, path of the changed place, the whole arguments, words)."""


def _object_breaks(schema: Mapping[str, Any], root: Mapping[str, Any], arguments: Any, path: Path, depth: int) -> (
    Iterator[Break]
):  # fmt: skip
    """Breaks of the object at ``path`` (``schema`` is its resolved schema) and of everything inside it."""
    here = _at(arguments, path)
    if not isinstance(here, dict) or depth > MAX_DEPTH:
        return
    where = _validator_path(path)
    required = [name for name in schema.get("required", []) if isinstance(name, str)]
    for name in required:
        if name in here:
            smaller = {key: value for key, value in here.items() if key != name}
            yield "required", path, _replaced(arguments, path, smaller), f"{where} without its required {name!r}"
    properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    assert isinstance(properties, Mapping)
    extra = schema.get("additionalProperties")
    if (extra is False or (isinstance(extra, Mapping) and extra.get("not") == {})) and EXTRA_PROPERTY not in properties:
        bigger = {**here, EXTRA_PROPERTY: True}
        yield (
            "additionalProperties", path, _replaced(arguments, path, bigger),
            f"{where} with {EXTRA_PROPERTY!r}, which its additionalProperties: false does not allow",
        )  # fmt: skip
    for name in sorted(here):
        sub = resolve(properties.get(name), root) if name in properties else None
        if sub is None:
            continue
        yield from _value_breaks(sub, root, arguments, (*path, name), depth + 1)


def _value_breaks(schema: Mapping[str, Any], root: Mapping[str, Any], arguments: Any, path: Path, depth: int) -> (
    Iterator[Break]
):  # fmt: skip
    value = _at(arguments, path)
    where = _validator_path(path)

    def put(constraint: str, new: Any, words: str) -> Break:
        return constraint, path, _replaced(arguments, path, new), f"{where} {_shown(new)}, {words}"

    declared = types_of(schema)
    wrong = _wrong_type(declared, value)
    if wrong is not None:
        yield put("type", wrong, f"where the schema says {' or '.join(_declared(schema))}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        yield from (put("bound", new, words) for new, words in _bounds(schema, declared))
        step = schema.get("multipleOf")
        if _number(step) and step > 0:
            odd = value + (step / 2 if "integer" not in declared or step < 2 else 1)
            yield put("multipleOf", odd, f"not a multiple of {_figure(step)}")
    if isinstance(value, str):
        yield from (put("length", new, words) for new, words in _string_lengths(schema, value))
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            miss = _pattern_miss(pattern, schema, value)
            if miss is not None:
                yield put("pattern", miss, f"which does not match its pattern {pattern[:60]!r}")
    if isinstance(value, list):
        yield from (put("length", new, words) for new, words in _array_lengths(schema, value))
    members = schema.get("enum")
    if isinstance(members, list) and members:
        stray = _stray(members, value)
        if stray is not None:
            yield put("enum", stray, f"not one of its enum members {_shown(members)}")
    if "const" in schema:
        stray = _stray([schema["const"]], value)
        if stray is not None:
            yield put("enum", stray, f"not its const {_shown(schema['const'])}")
    if isinstance(value, dict):
        yield from _object_breaks(schema, root, arguments, path, depth)
    if isinstance(value, list) and value and depth <= MAX_DEPTH:
        items = resolve(schema.get("items"), root)
        if items is not None:
            yield from _value_breaks(items, root, arguments, (*path, 0), depth + 1)


def _declared(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    return [declared] if isinstance(declared, str) else [str(item) for item in declared or []]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _wrong_type(declared: tuple[str, ...], value: Any) -> Any:
    """A value of a type the schema does not allow, as a model would get it wrong: a number sent as text, a flag
    as a word; ``None`` when the schema names no type (or every type)."""
    if not declared:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        candidates: list[Any] = [str(value), True, None]
    elif isinstance(value, bool):
        candidates = ["true" if value else "false", 1, None]
    elif isinstance(value, str):
        candidates = [1, True, None, [value]]
    elif isinstance(value, list):
        candidates = ["mcp-assay", {}, None]
    elif isinstance(value, dict):
        candidates = ["mcp-assay", [value], None]
    else:
        candidates = [0, "null", False]
    for candidate in candidates:
        kind = _json_type(candidate)
        allowed = kind in declared or (kind == "integer" and "number" in declared)
        if not allowed:
            return candidate
    return None


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _figure(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _bounds(schema: Mapping[str, Any], declared: tuple[str, ...]) -> Iterator[tuple[Any, str]]:
    whole = "integer" in declared and "number" not in declared
    one = 1 if whole else 0.5
    low, high = schema.get("minimum"), schema.get("maximum")
    if _number(low):
        yield _whole(low - one, whole, down=True), f"below its minimum {_figure(low)}"
    if _number(high):
        yield _whole(high + one, whole, down=False), f"above its maximum {_figure(high)}"
    low, high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if _number(low):
        yield _whole(low, whole, down=True), f"not above its exclusiveMinimum {_figure(low)}"
    if _number(high):
        yield _whole(high, whole, down=False), f"not below its exclusiveMaximum {_figure(high)}"


def _whole(value: float, whole: bool, *, down: bool) -> int | float:
    if not whole:
        return value
    return int(math.floor(value) if down else math.ceil(value))


def _string_lengths(schema: Mapping[str, Any], value: str) -> Iterator[tuple[str, str]]:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and not isinstance(low, bool) and 0 < low <= _LONGEST:
        yield (value + "a" * low)[: low - 1], f"{low - 1} characters, shorter than its minLength {low}"
    if isinstance(high, int) and not isinstance(high, bool) and 0 <= high < _LONGEST:
        yield (value + "a" * (high + 1))[: high + 1], f"{high + 1} characters, longer than its maxLength {high}"


def _array_lengths(schema: Mapping[str, Any], value: list[Any]) -> Iterator[tuple[list[Any], str]]:
    low, high = schema.get("minItems"), schema.get("maxItems")
    if isinstance(low, int) and not isinstance(low, bool) and 0 < low <= len(value):
        yield value[: low - 1], f"{low - 1} items, fewer than its minItems {low}"
    if isinstance(high, int) and not isinstance(high, bool) and value and 0 <= high < 64:
        longer = (value * (high + 1))[: high + 1]
        yield longer, f"{high + 1} items, more than its maxItems {high}"
    if schema.get("uniqueItems") is True and value:
        yield [*value, value[0]], "an item repeated, where its uniqueItems asks for none"


def _pattern_miss(pattern: str, schema: Mapping[str, Any], value: str) -> str | None:
    """A string of fitting length that its ``pattern`` does not match (Python's reading of the pattern; the
    validator has the last word)."""
    try:
        matcher = re.compile(pattern)
    except re.error:
        return None
    low = schema.get("minLength") if isinstance(schema.get("minLength"), int) else 0
    high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
    for candidate in ("", " ", "mcp-assay!", "0", "A", "-", value + "!", "!" + value, "~" * max(low or 0, 1)):
        fits = len(candidate) >= (low or 0) and (high is None or len(candidate) <= high)
        if fits and matcher.search(candidate) is None:
            return candidate
    return None


def _stray(members: list[Any], value: Any) -> Any:
    """A value of the same JSON type as ``value`` that is none of ``members``."""
    if isinstance(value, str):
        for candidate in (f"{value}-not-a-member", f"{value.upper()}", "mcp-assay-not-a-member"):
            if candidate not in members:
                return candidate
    if isinstance(value, bool):
        return None if {True, False} <= set(item for item in members if isinstance(item, bool)) else (not value)
    if isinstance(value, int | float):
        numbers = [item for item in members if _number(item)]
        return (max(numbers) if numbers else value) + 1
    return None


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
