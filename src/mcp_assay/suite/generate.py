"""Arguments for a tool drawn from its ``inputSchema``, for the tools the user allows (``--generate-args``).

Many requirements are about what a server does *while* a tool runs: the ``Mcp-Param-*`` mirror of
marked arguments, log levels, progress, the request stream. They stay not verified when the suite
may call no tool, and a tool with required arguments is never called with invented ones unless the
server annotates it ``readOnlyHint`` (the default, ``--no-generate-args-read-only`` turns it off)
or the user names it (``--generate-args``).

The values are the plainest the schema accepts, chosen the same way every time (no randomness,
no dependency): a ``const``, else the first ``enum`` value, else ``default``, else the first of
``examples``, else a value built from ``type`` and its bounds (``minimum``, ``minLength``,
``minItems``, ``multipleOf``, a handful of ``format`` values). An object gets its required
properties and the ones marked ``x-mcp-header`` (so the header mirror has something to mirror);
``anyOf``/``oneOf`` take the first branch that yields a valid value; local ``$ref`` s are followed
a bounded number of times. The result is checked against the schema with
:func:`~mcp_assay.spec.toolschema.validate_instance` before it is used; a schema this cannot
satisfy (a ``pattern`` no plain value matches, a remote ``$ref``) gives a reason instead of a
guess.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_assay.spec.toolschema import validate_instance

__all__ = ["Generated", "generate_arguments"]

MAX_DEPTH = 8
"""Nesting (objects, arrays, references) past which generation gives up."""
HEADER_MARK = "x-mcp-header"
FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00Z",
    "email": "mcp-assay@example.com",
    "uri": "https://example.com/mcp-assay",
    "uri-reference": "https://example.com/mcp-assay",
    "url": "https://example.com/mcp-assay",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
}
"""One plain value per common ``format`` (addresses from the documentation ranges)."""
_TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")


class _Unsatisfiable(Exception):
    """The schema asks for something this generator does not build."""


@dataclass(frozen=True)
class Generated:
    """Arguments for one tool, or why there are none."""

    arguments: dict[str, Any] | None
    reason: str = ""


def generate_arguments(schema: Any) -> Generated:
    """Valid arguments for a tool whose ``inputSchema`` is ``schema``, or the reason none could be made."""
    if not isinstance(schema, Mapping):
        return Generated(None, "its inputSchema is not an object")
    try:
        value = _value(schema, schema, 0)
    except _Unsatisfiable as exc:
        return Generated(None, str(exc))
    except RecursionError:
        return Generated(None, "its inputSchema nests too deeply")
    if not isinstance(value, dict):
        return Generated(None, "its inputSchema does not describe an object")
    review = validate_instance(dict(schema), value, strict=True)
    if review.blocked is not None:
        return Generated(None, f"its inputSchema cannot be used: {review.blocked}")
    if review.issues:
        return Generated(None, f"no plain value satisfies it ({review.issues[0].render()})")
    return Generated(value)


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Mapping[str, Any]:
    reference = schema.get("$ref")
    while isinstance(reference, str):
        if depth > MAX_DEPTH:
            raise _Unsatisfiable("its inputSchema nests too deeply")
        if not reference.startswith("#/"):
            raise _Unsatisfiable(f"it refers to {reference[:80]}, which mcp-assay does not fetch")
        target: Any = root
        for part in reference[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            raise _Unsatisfiable(f"its reference {reference[:80]} leads nowhere")
        schema = {**target, **{key: value for key, value in schema.items() if key != "$ref"}}
        reference = target.get("$ref")
        depth += 1
    return schema


def _value(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    if schema is True or schema == {}:
        return "mcp-assay"
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        raise _Unsatisfiable("its inputSchema nests too deeply" if depth > MAX_DEPTH else "a subschema is false")
    schema = _resolve(schema, root, depth)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    if isinstance(schema.get("allOf"), list):
        merged = {key: item for key, item in schema.items() if key != "allOf"}
        for part in schema["allOf"]:
            if isinstance(part, Mapping):
                merged = _merge(merged, _resolve(part, root, depth + 1))
        return _value(merged, root, depth + 1)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            base = {name: item for name, item in schema.items() if name != key}
            return _first_branch(base, branches, root, depth)
    kind = _kind(schema)
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        return _array(schema, root, depth)
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise _Unsatisfiable(f"it names no type mcp-assay can build ({schema.get('type')!r})")


def _merge(left: Mapping[str, Any], right: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(left)
    for key, value in right.items():
        if key == "properties" and isinstance(merged.get(key), Mapping) and isinstance(value, Mapping):
            merged[key] = {**merged[key], **value}
        elif key == "required" and isinstance(merged.get(key), list) and isinstance(value, list):
            merged[key] = [*merged[key], *value]
        else:
            merged.setdefault(key, value)
    return merged


def _first_branch(base: Mapping[str, Any], branches: list[Any], root: Mapping[str, Any], depth: int) -> Any:
    last = "no branch of anyOf/oneOf can be built"
    for branch in branches:
        if not isinstance(branch, Mapping):
            continue
        candidate = _merge(base, _resolve(branch, root, depth + 1))
        try:
            value = _value(candidate, root, depth + 1)
        except _Unsatisfiable as exc:
            last = str(exc)
            continue
        if validate_instance(dict(candidate), value, strict=True).ok:
            return value
    raise _Unsatisfiable(last)


def _kind(schema: Mapping[str, Any]) -> str:
    declared = schema.get("type")
    if isinstance(declared, list):
        chosen = [item for item in declared if item in _TYPES and item != "null"] or [
            item for item in declared if item in _TYPES
        ]
        declared = chosen[0] if chosen else None
    if isinstance(declared, str):
        return declared
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _object(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> dict[str, Any]:
    found = schema.get("properties")
    properties: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    required = [name for name in schema.get("required", []) if isinstance(name, str)]
    marked = [
        name
        for name, sub in properties.items()
        if isinstance(sub, Mapping) and isinstance(_resolve(sub, root, depth + 1).get(HEADER_MARK), str)
    ]
    value: dict[str, Any] = {}
    for name in dict.fromkeys([*required, *marked]):
        sub = properties.get(name, True)
        extra = schema.get("additionalProperties", True)
        value[name] = _value(sub if name in properties else extra, root, depth + 1)
    needed = schema.get("minProperties")
    if isinstance(needed, int) and len(value) < needed:
        for name, sub in properties.items():
            if len(value) >= needed:
                break
            value.setdefault(name, _value(sub, root, depth + 1))
    return value


def _array(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> list[Any]:
    count = schema.get("minItems", 0)
    count = count if isinstance(count, int) and 0 <= count <= 16 else 0
    items = schema.get("items", True)
    given = schema.get("prefixItems")
    prefix: list[Any] = given if isinstance(given, list) else []
    built = [_value(sub, root, depth + 1) for sub in prefix[:count]]
    while len(built) < count:
        built.append(_value(items, root, depth + 1))
    if schema.get("uniqueItems") is True and len({repr(item) for item in built}) < len(built):
        raise _Unsatisfiable("it asks for several unique items, and mcp-assay builds one plain value per schema")
    return built


def _string(schema: Mapping[str, Any]) -> str:
    value = FORMATS.get(str(schema.get("format")), "mcp-assay")
    low = schema.get("minLength")
    high = schema.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        value = value + "x" * (low - len(value))
    if isinstance(high, int) and len(value) > high:
        value = value[: max(high, 0)]
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matcher = re.compile(pattern)
        except re.error as exc:
            raise _Unsatisfiable(f"its pattern {pattern[:60]!r} is not a regular expression ({exc})") from exc
        longest = "a" * low if isinstance(low, int) and 0 < low <= 256 else "a"
        for candidate in (value, "a", "A", "0", "mcp-assay", "mcp_assay", longest):
            if matcher.search(candidate) and _fits(candidate, low, high):
                return candidate
        raise _Unsatisfiable(f"no plain value matches its pattern {pattern[:60]!r}")
    return value


def _fits(value: str, low: Any, high: Any) -> bool:
    return not (isinstance(low, int) and len(value) < low) and not (isinstance(high, int) and len(value) > high)


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str, tighter: Any) -> tuple[float | None, bool]:
    """The tighter of an inclusive and an exclusive bound, and whether it is exclusive."""
    chosen: tuple[float | None, bool] = (None, False)
    for key, strict in ((inclusive, False), (exclusive, True)):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool) and math.isfinite(bound):
            if chosen[0] is None or tighter(bound, chosen[0]) != chosen[0] or (bound == chosen[0] and strict):
                chosen = (float(bound), strict)
    return chosen


def _number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    low, low_open = _bound(schema, "minimum", "exclusiveMinimum", max)
    high, high_open = _bound(schema, "maximum", "exclusiveMaximum", min)
    step = schema.get("multipleOf")
    step = step if isinstance(step, int | float) and not isinstance(step, bool) and step > 0 else None
    value: float
    if integer:
        first = None if low is None else (math.floor(low) + 1 if low_open else math.ceil(low))
        last = None if high is None else (math.ceil(high) - 1 if high_open else math.floor(high))
        value = first if first is not None else (min(1, last) if last is not None else 1)
        if step is not None:
            value = math.ceil(value / step) * step
        if last is not None and value > last or value != int(value):
            raise _Unsatisfiable(f"no plain integer lies between its bounds ({low}..{high})")
        return int(value)
    if low is not None and high is not None:
        value = (low + high) / 2 if (low_open or high_open) else low
    elif low is not None:
        value = low + 1 if low_open else low
    elif high is not None:
        value = min(1.0, high - 1 if high_open else high)
    else:
        value = 1
    if step is not None:
        value = math.ceil(value / step) * step
    if (low is not None and (value < low or (low_open and value == low))) or (
        high is not None and (value > high or (high_open and value == high))
    ):
        raise _Unsatisfiable(f"no plain number lies between its bounds ({low}..{high})")
    return value
