"""Judge JSON Schemas that a server (not the specification) supplies, without trusting them.

Tools publish an ``inputSchema`` and an ``outputSchema``; elicitations carry a
``requestedSchema``. mcp-assay checks each of them against its dialect's metaschema (``$schema``
when given, else 2020-12) and validates arguments and ``structuredContent`` against them. Those
schemas come from the peer under test, so nothing here may reach out or run unbounded:

* references resolve against an empty :class:`referencing.Registry`, so a ``$ref`` to a URL is
  never fetched; it is reported as a reference mcp-assay will not follow, never silently passed;
* schemas nested deeper than :data:`MAX_DEPTH` or larger than :data:`MAX_SIZE` are not judged,
  and a ``RecursionError`` while validating becomes a reason instead of a crash;
* an unknown ``$schema`` dialect is reported as such (no jsonschema warning, no guessing).

Instances are judged by the dialect as written: a server's own schema means what JSON Schema
says it means (``1.0`` is an integer, ``format`` only annotates), so a peer is never held to more
than its schema asks. ``strict=True`` applies the MCP messages' stricter reading (integers without
a fraction, formats asserted) where a caller needs it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs
import jsonschema_specifications  # type: ignore[import-untyped]
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import Draft202012Validator, validators
from jsonschema.protocols import Validator

from mcp_assay.spec.fastschema import passes
from mcp_assay.spec.validator import FORMAT_CHECKER, SchemaIssue, StrictValidator
from mcp_assay.wire import jsontext

__all__ = [
    "DEFAULT_DIALECT",
    "MAX_DEPTH",
    "MAX_SIZE",
    "InstanceReview",
    "SchemaReview",
    "lax_reading",
    "review_schema",
    "validate_instance",
]

MAX_DEPTH = 64
"""Schemas nested deeper than this (objects and arrays counted alike) are not judged."""
MAX_SIZE = 1_000_000
"""Schemas whose compact JSON text is longer than this many characters are not judged."""
MAX_PROBLEMS = 8

DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_REF_KEYWORDS = ("$ref", "$dynamicRef")


@dataclass(frozen=True, slots=True)
class SchemaReview:
    """What mcp-assay concluded about one supplied schema."""

    dialect: str
    """The ``$schema`` URI the schema is judged under (the 2020-12 URI when absent)."""
    problems: tuple[str, ...] = ()
    """Why the schema is not a valid schema in its dialect; empty when it is."""
    blocked: str | None = None
    """Why it could not be judged completely (too big, unknown dialect, a reference not followed)."""

    @property
    def valid(self) -> bool:
        """No problem was found (it may still be ``blocked``)."""
        return not self.problems


@dataclass(frozen=True, slots=True)
class InstanceReview:
    """The outcome of validating one value against a supplied schema."""

    issues: tuple[SchemaIssue, ...] = ()
    blocked: str | None = None
    """Why the value could not be judged (the schema is invalid, unresolvable, too big ...)."""

    @property
    def ok(self) -> bool:
        return not self.issues and self.blocked is None


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _sized(schema: Any) -> tuple[str | None, str | None]:
    """Why ``schema`` is not judged (``None``: it is), and its canonical text when it is.

    The size is that of the schema written compactly in ASCII (each character past it escaped), worked out
    from the canonical text, which is written once: key order does not change a length."""
    if _depth_exceeds(schema, MAX_DEPTH):
        return f"the schema is nested deeper than {MAX_DEPTH} levels, which mcp-assay does not judge", None
    text = _canonical(schema)
    if text is None:
        return "the schema cannot be serialised as JSON", None
    size = len(text) if text.isascii() else sum(1 if ord(c) < 128 else 6 if ord(c) < 0x10000 else 12 for c in text)
    if size > MAX_SIZE:
        return f"the schema is {size} characters long, over the {MAX_SIZE} mcp-assay judges", None
    return None, text


def _dialect_of(schema: Any) -> tuple[str, type[Validator] | None]:
    if not isinstance(schema, dict) or "$schema" not in schema:
        return DEFAULT_DIALECT, Draft202012Validator
    uri = schema["$schema"]
    if not isinstance(uri, str):
        return repr(uri), None
    found: type[Validator] | None = validators.validator_for(schema, default=None)  # type: ignore[arg-type]
    return uri, found


@lru_cache(maxsize=16)
def _meta_validator(cls: type[Validator]) -> Validator:
    meta_cls: type[Validator] = validators.validator_for(cls.META_SCHEMA, default=cls)
    return meta_cls(
        meta_cls.META_SCHEMA,
        format_checker=meta_cls.FORMAT_CHECKER,
        registry=jsonschema_specifications.REGISTRY,
    )


def _strict_integer(checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@lru_cache(maxsize=16)
def _instance_class(cls: type[Validator]) -> type[Validator]:
    if cls is Draft202012Validator:
        return StrictValidator
    return validators.extend(  # type: ignore[no-untyped-call,no-any-return]
        cls, type_checker=cls.TYPE_CHECKER.redefine("integer", _strict_integer)
    )


def _path(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _subschemas(resource: referencing.Resource[Any]) -> Iterator[referencing.Resource[Any]]:
    try:
        yield from resource.subresources()
    except (TypeError, AttributeError, ValueError):  # a malformed keyword value; the metaschema reports it
        return


def _unresolvable_refs(schema: Any, specification: referencing.Specification[Any]) -> tuple[list[str], list[str]]:
    """References that point to nothing (local) and references mcp-assay will not fetch (remote)."""
    broken: list[str] = []
    remote: list[str] = []
    root = specification.create_resource(schema)
    registry: referencing.Registry[Any] = referencing.Registry()
    stack: list[tuple[referencing.Resource[Any], Any]] = [(root, registry.resolver_with_root(root))]
    visited = 0
    while stack and visited < 100_000:
        resource, resolver = stack.pop()
        visited += 1
        contents = resource.contents
        if isinstance(contents, dict):
            for keyword in _REF_KEYWORDS:
                ref = contents.get(keyword)
                if not isinstance(ref, str):
                    continue
                try:
                    resolver.lookup(ref)
                except referencing.exceptions.Unresolvable:
                    (broken if ref.startswith("#") else remote).append(ref)
                except (TypeError, ValueError, AttributeError):
                    broken.append(ref)
        for sub in _subschemas(resource):
            stack.append((sub, resolver.in_subresource(sub)))
    return broken, remote


@lru_cache(maxsize=256)
def _review(text: str) -> SchemaReview:
    schema = json.loads(text)
    dialect, cls = _dialect_of(schema)
    if cls is None:
        return SchemaReview(dialect, blocked=f"the schema names a dialect mcp-assay does not know: $schema {dialect}")
    if not isinstance(schema, dict | bool):
        return SchemaReview(dialect, problems=(f"a schema is an object or a boolean, not a JSON {_json_type(schema)}",))
    try:
        errors = sorted(_meta_validator(cls).iter_errors(schema), key=lambda e: list(e.absolute_path))
        problems = list(dict.fromkeys(f"{_path(e.absolute_path) or 'the schema'}: {_short(e.message)}" for e in errors))
        problems = problems[:MAX_PROBLEMS]
        if problems:
            return SchemaReview(dialect, problems=tuple(problems))
        specification = referencing.jsonschema.specification_with(dialect, default=referencing.jsonschema.DRAFT202012)
        broken, remote = _unresolvable_refs(schema, specification)
    except RecursionError:
        return SchemaReview(dialect, blocked="the schema is too deeply recursive to judge")
    if broken:
        listed = ", ".join(sorted(set(broken))[:MAX_PROBLEMS])
        return SchemaReview(dialect, problems=(f"the schema has a $ref that points to nothing: {listed}",))
    if remote:
        listed = ", ".join(sorted(set(remote))[:MAX_PROBLEMS])
        return SchemaReview(dialect, blocked=f"the schema has a $ref mcp-assay will not fetch: {listed}")
    return SchemaReview(dialect)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}.get(type(value), "value")


def _canonical(schema: Any) -> str | None:
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


def review_schema(schema: Any) -> SchemaReview:
    """Whether ``schema`` is a valid schema in its dialect, judged without any network access."""
    return _reviewed(schema)[0]


_BY_OBJECT: dict[int, tuple[Any, SchemaReview, str | None]] = {}
"""The review and canonical text of each schema object met, held with the object (so its id stays its own): a
tool's schema is read once per listing, and each call and answer of that tool asks for it again."""
HELD = 1024


_BY_VALUE: dict[bytes, tuple[SchemaReview, str | None]] = {}
"""The review and canonical text of each clean schema value met (:func:`~mcp_assay.wire.jsontext.fingerprint`, which
tells clean values apart): a server lists the same tools again and again, each listing a new object per schema."""
HELD_TEXT = 64 * 1024
"""The longest schema text :data:`_BY_VALUE` keeps (so that what it holds stays small)."""


def _reviewed(schema: Any) -> tuple[SchemaReview, str | None]:
    """The review of ``schema`` and its canonical text (``None`` when it has none), worked out once per object, and
    once per value for schemas of a clean value."""
    held = _BY_OBJECT.get(id(schema))
    if held is not None and held[0] is schema:
        return held[1], held[2]
    value = jsontext.fingerprint(schema)
    known = _BY_VALUE.get(value) if value is not None else None
    if known is not None:
        review, text = known
    else:
        dialect, _ = _dialect_of(schema)
        blocker, text = _sized(schema)
        if blocker is not None or text is None:
            review = SchemaReview(dialect, blocked=blocker or "the schema cannot be serialised as JSON")
        else:
            review = _review(text)
        if value is not None and len(value) <= HELD_TEXT:
            if len(_BY_VALUE) >= HELD:
                _BY_VALUE.clear()
            _BY_VALUE[value] = (review, text)
    if len(_BY_OBJECT) >= HELD:
        _BY_OBJECT.clear()
    _BY_OBJECT[id(schema)] = (schema, review, text)
    return review, text


@lru_cache(maxsize=256)
def _compiled(text: str, strict: bool) -> Validator:
    schema = json.loads(text)
    _, cls = _dialect_of(schema)
    assert cls is not None  # _review vetted the dialect first
    if not strict:
        return cls(schema, registry=referencing.Registry())
    return _instance_class(cls)(schema, format_checker=FORMAT_CHECKER, registry=referencing.Registry())


def validate_instance(schema: Any, instance: Any, prefix: str = "", *, strict: bool = False) -> InstanceReview:
    """Validate ``instance`` against a supplied schema; issue paths start with ``prefix``.

    By default the dialect applies as written (``1.0`` is an integer, formats annotate);
    ``strict=True`` counts ``1.0`` as a number, not an integer, and asserts formats,
    for deciding whether a peer could fairly have accepted a value.

    Calls repeat themselves (a client calls a tool with the same arguments again and again), so the review of a
    value already validated against the same schema is reused; and a clean value the compiled validator passes
    is valid without :mod:`jsonschema` (as for the revisions' schemas, :mod:`mcp_assay.spec.fastschema`)."""
    review, text = _reviewed(schema)
    if review.blocked is not None:
        return InstanceReview(blocked=review.blocked)
    if not review.valid:
        return InstanceReview(blocked=f"the schema itself is invalid ({review.problems[0]})")
    assert text is not None  # review_schema returned a verdict, so the schema serialises
    value = jsontext.fingerprint(instance)
    key = (text, strict, prefix, value)
    found = _CHECKED.get(key) if value is not None else None
    if found is None:
        if value is not None and not strict and _fast_valid(text, instance):
            found = InstanceReview()
        else:
            found = _validated(text, instance, prefix, strict)
        if value is not None:
            if len(_CHECKED) >= HELD * 4:
                _CHECKED.clear()
            _CHECKED[key] = found
    return found


_CHECKED: dict[tuple[str, bool, str, bytes | None], InstanceReview] = {}
"""Reviews of clean values by schema text, strictness, prefix and the value's text."""


def _validated(text: str, instance: Any, prefix: str, strict: bool) -> InstanceReview:
    try:
        errors = sorted(_compiled(text, strict).iter_errors(instance), key=lambda e: list(e.absolute_path))
        issues = tuple(
            SchemaIssue(_join(prefix, _path(error.absolute_path)), _short(error.message))
            for error in errors[:MAX_PROBLEMS]
        )
    except referencing.exceptions.Unresolvable as exc:
        return InstanceReview(blocked=f"the schema has a $ref mcp-assay will not fetch: {exc}")
    except RecursionError:
        return InstanceReview(blocked="validating against the schema recursed without end")
    return InstanceReview(issues)


def _refuse(uri: str) -> Any:
    raise LookupError(f"mcp-assay retrieves no schema ({uri})")


@lru_cache(maxsize=256)
def _fast(text: str) -> Any:
    """The compiled validator of a 2020-12 schema without patterns (whose regular expressions the two libraries
    may read differently) or references (a schema referring to itself recurses without end in :mod:`jsonschema`,
    which is what a review says), formats annotating as in :mod:`jsonschema`; ``None`` for any other schema."""
    schema = json.loads(text)
    if _dialect_of(schema)[1] is not Draft202012Validator or any(word in text for word in _NOT_FAST):
        return None
    try:
        return jsonschema_rs.Draft202012Validator(schema, validate_formats=False, retriever=_refuse)
    except Exception:  # a schema it cannot compile: jsonschema judges every value
        return None


_NOT_FAST = ('"pattern', '"$ref"', '"$dynamicRef"', '"$recursiveRef"')


def _fast_valid(text: str, instance: Any) -> bool:
    """True when the compiled validator passes a clean ``instance``; False means *ask jsonschema*, never *invalid*."""
    return passes(_fast(text), instance)


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path or path.startswith("["):
        return prefix + path
    return f"{prefix}.{path}"


_LAX_ROUNDS = 4
_LAX_REPLACED = 32


def _spelled(text: str) -> Any:
    """The number or boolean ``text`` is the JSON text of, whole (no space around it); ``None`` for any other text."""
    if not text or text != text.strip() or len(text) > 64:
        return None
    try:
        value = json.loads(text, parse_constant=lambda name: None)
    except ValueError:
        return None
    if isinstance(value, bool) or (isinstance(value, int | float) and math.isfinite(value)):
        return value
    return None


def _replaced(instance: Any, path: list[Any], value: Any) -> Any:
    """A copy of ``instance`` with the value at ``path`` replaced (containers along the path copied)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(instance, dict):
        return {**instance, head: _replaced(instance[head], rest, value)}
    copied = list(instance)
    copied[head] = _replaced(copied[head], rest, value)
    return copied


def lax_reading(schema: Any, instance: Any) -> str | None:
    """Where ``instance`` breaks ``schema`` only by strings that spell the number or boolean the schema asks for.

    Lax validators (pydantic's default mode) read ``"1"`` as the integer ``1``: they validate, loosely,
    and the value served is the one the string spells. When reading every offending string as the
    JSON value it spells (a number, ``true``, ``false``; nothing else, so ``"yes"`` or ``"01"`` never
    count) makes the instance valid, this says which strings (``a: "1" read as 1``); ``None`` when the
    instance is valid, cannot be judged, or breaks the schema any other way."""
    review = review_schema(schema)
    if review.blocked is not None or not review.valid:
        return None
    text = _canonical(schema)
    assert text is not None
    validator = _compiled(text, False)
    read: list[str] = []
    try:
        for _ in range(_LAX_ROUNDS):
            errors = list(validator.iter_errors(instance))
            if not errors:
                return "; ".join(read) if read else None
            for error in errors:
                value = _spelled(error.instance) if isinstance(error.instance, str) else None
                if value is None or len(read) >= _LAX_REPLACED:
                    return None
                path = list(error.absolute_path)
                instance = _replaced(instance, path, value)
                read.append(f"{_path(path) or 'the value'}: {json.dumps(error.instance)} read as {json.dumps(value)}")
    except (RecursionError, referencing.exceptions.Unresolvable, KeyError, IndexError, TypeError):
        return None
    return None
