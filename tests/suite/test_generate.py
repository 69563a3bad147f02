"""Arguments drawn from a tool's inputSchema: valid, plain, the same every time, or a reason."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_assay.spec.toolschema import validate_instance
from mcp_assay.suite.generate import generate_arguments


def made(schema: dict[str, Any]) -> dict[str, Any]:
    generated = generate_arguments(schema)
    assert generated.arguments is not None, generated.reason
    return generated.arguments


def test_required_and_header_marked_properties_get_plain_values_within_their_bounds() -> None:
    """Tool-defined: the required properties, plus the marked ones (the Mcp-Param mirror needs a value)."""
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 12},
            "limit": {"type": "integer", "minimum": 5, "maximum": 50, "multipleOf": 5},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.25},
            "region": {"type": "string", "enum": ["eu", "us"], "x-mcp-header": "Region"},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "strict": {"type": "boolean"},
            "optional": {"type": "string"},
        },
        "required": ["query", "limit", "ratio", "when", "tags", "strict"],
        "additionalProperties": False,
    }
    value = made(schema)
    assert value == {
        "query": "mcp-assayxxx", "limit": 5, "ratio": 0.125, "region": "eu", "when": "2026-01-01T00:00:00Z",
        "tags": ["mcp-assay", "mcp-assay"], "strict": False,
    }  # fmt: skip
    assert generate_arguments(schema) == generate_arguments(schema)


def test_references_unions_defaults_and_patterns_are_followed() -> None:
    """Tool-defined: local $ref, anyOf (first branch that works), default and examples, a simple pattern."""
    schema = {
        "type": "object",
        "$defs": {"id": {"type": "string", "pattern": "^[0-9]+$"}},
        "properties": {
            "id": {"$ref": "#/$defs/id"},
            "mode": {"anyOf": [{"type": "string", "pattern": "^zz$"}, {"type": "integer", "minimum": 3}]},
            "size": {"type": "integer", "default": 7},
            "name": {"type": "string", "examples": ["Ada"]},
            "nested": {"type": "object", "properties": {"x": {"type": ["null", "integer"]}}, "required": ["x"]},
        },
        "required": ["id", "mode", "size", "name", "nested"],
    }
    assert made(schema) == {"id": "0", "mode": 3, "size": 7, "name": "Ada", "nested": {"x": 1}}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}, "required": ["a"]},
         "does not fetch"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"}},
          "required": ["a"]}, "no plain value matches its pattern"),
        ({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 4}}, "required": ["n"]},
         "no plain integer lies between its bounds"),
        ({"type": "array"}, "does not describe an object"),
        ("not a schema", "is not an object"),
    ],
)  # fmt: skip
def test_a_schema_it_cannot_satisfy_gives_a_reason_not_a_guess(schema: Any, reason: str) -> None:
    """Tool-defined: arguments are sent only when they validate."""
    generated = generate_arguments(schema)
    assert generated.arguments is None and reason in generated.reason


_LEAF = st.one_of(
    st.builds(lambda low, extra: {"type": "integer", "minimum": low, "maximum": low + extra},
              st.integers(-1000, 1000), st.integers(0, 50)),
    st.builds(lambda low: {"type": "string", "minLength": low}, st.integers(0, 40)),
    st.builds(lambda high: {"type": "string", "maxLength": high}, st.integers(0, 40)),
    st.just({"type": "boolean"}),
    st.just({"type": "number", "exclusiveMinimum": 1.5}),
    st.builds(lambda values: {"enum": values}, st.lists(st.integers() | st.text(max_size=5), min_size=1, max_size=3)),
    st.sampled_from([{"type": "string", "format": name} for name in ("date-time", "date", "email", "uri", "uuid")]),
)  # fmt: skip
_SCHEMA = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.builds(lambda items, count: {"type": "array", "items": items, "minItems": count}, inner, st.integers(0, 3)),
        st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4).map(
            lambda props: {"type": "object", "properties": props, "required": sorted(props)}
        ),
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["p", "q", "r"]), _SCHEMA, max_size=3))
def test_whatever_it_generates_validates_against_the_schema(properties: dict[str, Any]) -> None:
    """Tool-defined (property): a generated value always satisfies the schema it came from, strictly."""
    schema = {"type": "object", "properties": properties, "required": sorted(properties)}
    generated = generate_arguments(schema)
    if generated.arguments is None:
        assert generated.reason
        return
    assert validate_instance(schema, generated.arguments, strict=True).ok
    assert set(generated.arguments) == set(properties)
