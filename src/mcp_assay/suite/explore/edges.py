"""Arguments inside a tool's ``inputSchema`` on its edges, where input-dependent faults live.

Random draws find the middle of a schema; faults sit at its edges: the bound itself, the longest
string allowed, every member of an enum (each may take its own branch), text that is not ASCII, an
empty array and a full one, every optional property present. :func:`edges` builds those values for
each property, one property at a time on top of the plainest valid arguments (so a failure has one
cause), keeping only what the schema accepts strictly. :func:`plain` and :func:`full` are the bases:
the required properties alone, and every property the schema lets exist.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mcp_assay.suite.explore.schemas import MAX_DEPTH, canonical, inside, resolve, types_of
from mcp_assay.suite.generate import FORMATS, generate_arguments

__all__ = ["LONG", "NON_ASCII", "Edge", "edges", "full", "plain", "plain_value"]

NON_ASCII = "Grüße, 世界 — ñ 🙂"
"""Text outside ASCII: Latin with diacritics, CJK, a dash and an emoji (a surrogate pair in UTF-16)."""
LONG = 10_000
"""The length of a long string where the schema sets no maxLength."""
_MISSING = object()
_INTEGERS = (0, 1, -1, 2**31 - 1, -(2**31), 2**53 - 1, -(2**53 - 1))
_NUMBERS = (0.5, -0.5, 1e-9, 1.0e15)

Edge = tuple[str, dict[str, Any]]
"""(what the value is, in words; the arguments)."""


def plain(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The plainest valid arguments: the required properties only (``None`` when none can be made)."""
    made = generate_arguments(dict(schema)).arguments
    return made if made is not None and inside(schema, made) else None


def plain_value(sub: Any, root: Mapping[str, Any]) -> Any:
    """The plainest value ``sub`` (a subschema of ``root``) accepts, or ``_MISSING``."""
    wrapper = {key: root[key] for key in ("$defs", "definitions", "$schema") if key in root}
    wrapper.update({"type": "object", "properties": {"v": sub}, "required": ["v"]})
    made = generate_arguments(wrapper).arguments
    return made["v"] if made is not None and "v" in made else _MISSING


def full(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The plainest arguments with every property the schema defines present (each kept only if still valid)."""
    base = plain(schema)
    if base is None:
        return None
    properties = schema.get("properties")
    for name, sub in sorted(properties.items()) if isinstance(properties, Mapping) else []:
        if name in base:
            continue
        value = plain_value(sub, schema)
        if value is not _MISSING and inside(schema, {**base, name: value}):
            base = {**base, name: value}
    return base


def edges(schema: Mapping[str, Any]) -> list[Edge]:
    """Valid arguments on the schema's edges, one property at a time, each distinct, in a fixed order."""
    base = plain(schema)
    if base is None:
        return []
    found: list[Edge] = []
    seen = {canonical(base)}
    candidates: list[Edge] = []
    whole = full(schema)
    if whole is not None:
        candidates.append(("every property present", whole))
    properties = schema.get("properties")
    for name, sub in sorted(properties.items()) if isinstance(properties, Mapping) else []:
        resolved = resolve(sub, schema)
        if resolved is None:
            continue
        for words, value in _values(resolved, schema, 0):
            candidates.append((f"{name}: {words}", {**base, name: value}))
    for words, arguments in candidates:
        key = canonical(arguments)
        if key not in seen and inside(schema, arguments):
            seen.add(key)
            found.append((words, arguments))
    return found


def _values(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Iterator[tuple[str, Any]]:
    """Values on the edges of one subschema (the validator decides which the schema accepts)."""
    members = schema.get("enum")
    if isinstance(members, list):
        for member in members[:16]:
            yield f"enum member {member!r}"[:80], member
    if "const" in schema:
        yield "its const", schema["const"]
    kinds = types_of(schema) or _guessed(schema)
    if "integer" in kinds or "number" in kinds:
        yield from _numbers(schema, whole="number" not in kinds)
    if "string" in kinds:
        yield from _strings(schema)
    if "boolean" in kinds:
        yield "true", True
        yield "false", False
    if "null" in kinds:
        yield "null", None
    if "array" in kinds and depth < MAX_DEPTH:
        item = plain_value(schema.get("items", {}), root)
        yield "an empty array", []
        if item is not _MISSING:
            low, high = schema.get("minItems"), schema.get("maxItems")
            if isinstance(low, int) and 0 < low <= 64:
                yield f"{low} items (its minItems)", [item] * low
            count = high if isinstance(high, int) and 0 < high <= 64 else 16
            yield f"{count} items" + (" (its maxItems)" if count == high else ""), [item] * count
    if "object" in kinds and depth < MAX_DEPTH:
        nested = full({**{key: root[key] for key in ("$defs", "definitions") if key in root}, **schema})
        if nested is not None:
            yield "an object with every property present", nested
        yield "an empty object", {}


def _guessed(schema: Mapping[str, Any]) -> tuple[str, ...]:
    if "properties" in schema or "required" in schema:
        return ("object",)
    if "items" in schema:
        return ("array",)
    if any(key in schema for key in ("minLength", "maxLength", "pattern", "format")):
        return ("string",)
    if any(key in schema for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return ("number",)
    return ()


def _numbers(schema: Mapping[str, Any], *, whole: bool) -> Iterator[tuple[str, Any]]:
    for key in ("minimum", "maximum"):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            yield f"its {key} {bound}", int(bound) if whole and float(bound).is_integer() else bound
    for key, step in (("exclusiveMinimum", 1), ("exclusiveMaximum", -1)):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            near = int(bound) + step if whole else bound + step * 1e-6
            yield f"just inside its {key} {bound}", near
    for value in _INTEGERS:
        yield f"{value}", value
    if not whole:
        for number in _NUMBERS:
            yield f"{number}", number


def _length(schema: Mapping[str, Any], key: str) -> int | None:
    value = schema.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _strings(schema: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    low = _length(schema, "minLength") or 0
    high = _length(schema, "maxLength")
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in FORMATS:
        yield f"a {fmt}", FORMATS[fmt]
    yield "an empty string", ""
    if low:
        yield f"{low} characters (its minLength)", "a" * low
    longest = high if high is not None and high <= LONG else LONG
    yield f"{longest} characters" + (" (its maxLength)" if longest == high else ""), "x" * longest
    text = NON_ASCII
    while len(text) < low:
        text += NON_ASCII
    yield "text outside ASCII", text[: high if high is not None else len(text)]
    yield "whitespace only", " "
    yield "quotes, a newline and markup", 'line 1\nline "2" <b>&amp;</b> \\ ;'
