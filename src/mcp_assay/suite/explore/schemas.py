"""Reading a tool's ``inputSchema`` the way exploring needs it: local references followed, types listed, and
whether a value stands inside the schema or outside it, by the very validator the rules use.

A value is *inside* when it passes :func:`~mcp_assay.spec.toolschema.validate_instance` strictly (formats
asserted, ``1.0`` not an integer): nothing borderline is sent as a valid call. It is *outside* when it fails
the ordinary validation TOOL-14 judges by (:func:`~mcp_assay.spec.rules.behaviour.channels.argument_violation`),
so every call made outside the schema is one the rules see as such.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp_assay.spec.toolschema import validate_instance

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "MAX_DEPTH",
    "canonical",
    "inside",
    "json_size",
    "outside",
    "resolve",
    "types_of",
    "violations",
]

MAX_DEPTH = 4
"""Nesting (objects in objects, arrays of objects) past which exploring looks no deeper."""
MAX_ARGUMENT_BYTES = 64 * 1024
"""The largest arguments object sent (serialised): exploring tests a tool, not the target's body limit."""
JSON_TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")


def canonical(value: Any) -> str:
    """One text per JSON value (keys sorted, no spaces): what tells two argument sets apart."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_size(value: Any) -> int | None:
    """Bytes of ``value`` as JSON (UTF-8), or ``None`` when it is no plain JSON (NaN, infinity, a cycle)."""
    try:
        return len(json.dumps(value, allow_nan=False, separators=(",", ":")).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        return None


def resolve(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Mapping[str, Any] | None:
    """``schema`` with its local ``$ref`` chain followed (siblings kept); ``None`` for a boolean schema or a
    reference that leads nowhere or out of the document."""
    if not isinstance(schema, Mapping):
        return None
    found: Mapping[str, Any] = schema
    seen = 0
    while isinstance(found.get("$ref"), str):
        reference = found["$ref"]
        if not reference.startswith("#") or seen > MAX_DEPTH + depth:
            return None
        target: Any = root
        for part in reference[1:].lstrip("/").split("/") if reference != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return None
        found = {**target, **{key: value for key, value in found.items() if key != "$ref"}}
        seen += 1
    return found


def types_of(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The JSON types a schema names (``integer`` counts as a ``number`` too); empty when it names none."""
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    found = [name for name in names if name in JSON_TYPES]
    if "number" in found and "integer" not in found:
        found.append("integer")
    return tuple(found)


def violations(schema: Mapping[str, Any], arguments: Any) -> tuple[str, ...] | None:
    """The paths at which ``arguments`` break ``schema`` (ordinary validation, as TOOL-14 judges); ``None`` when the
    schema cannot be used."""
    review = validate_instance(dict(schema), arguments, "arguments")
    if review.blocked is not None:
        return None
    return tuple(sorted({issue.path for issue in review.issues}))


def inside(schema: Mapping[str, Any], arguments: Any) -> bool:
    """``arguments`` satisfy ``schema`` strictly (formats asserted), and are small enough to send."""
    size = json_size(arguments)
    if size is None or size > MAX_ARGUMENT_BYTES:
        return False
    review = validate_instance(dict(schema), arguments, "arguments", strict=True)
    return review.blocked is None and not review.issues


def outside(schema: Mapping[str, Any], arguments: Any) -> bool:
    """``arguments`` break ``schema`` as TOOL-14 sees it, and are small enough to send."""
    size = json_size(arguments)
    if size is None or size > MAX_ARGUMENT_BYTES:
        return False
    found = violations(schema, arguments)
    return bool(found)
