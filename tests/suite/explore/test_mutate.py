"""Breaking one constraint of an inputSchema at a time (mcp_assay.suite.explore.mutate)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_assay.spec.toolschema import validate_instance
from mcp_assay.suite.explore.edges import full
from mcp_assay.suite.explore.mutate import CONSTRAINTS, EXTRA_PROPERTY, mutations

LISTING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"enum": ["draft", "archived"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "query": {"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$"},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.25},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": True},
        "owner": {
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 0}},
            "required": ["id"],
            "additionalProperties": False,
        },
    },
    "required": ["limit"],
    "additionalProperties": False,
}
VALID: dict[str, Any] = {
    "status": "draft", "limit": 20, "query": "abc", "ratio": 0.5, "tags": ["a"], "owner": {"id": 3},
}  # fmt: skip


def by_constraint(schema: dict[str, Any], valid: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(item.constraint, item.path): item.arguments for item in mutations(schema, valid)}


def test_each_mutation_breaks_the_schema_at_exactly_the_place_it_changed() -> None:
    """Tool-defined: one broken constraint per call, as the validator TOOL-14 judges by sees it."""
    found = mutations(LISTING, VALID)
    assert found
    for item in found:
        review = validate_instance(LISTING, item.arguments, "arguments")
        assert {issue.path for issue in review.issues} == {item.path}, item
        assert item.constraint in CONSTRAINTS


def test_every_kind_of_constraint_is_broken() -> None:
    """Tool-defined: type, bounds, multipleOf, lengths, pattern, enum, required and additionalProperties."""
    found = by_constraint(LISTING, VALID)
    assert found[("bound", "arguments.limit")]["limit"] in (0, 51)
    limits = {item.arguments["limit"] for item in mutations(LISTING, VALID) if item.path == "arguments.limit"}
    assert limits == {"20", 0, 51}
    assert found[("type", "arguments.limit")]["limit"] == "20"  # a number sent as text, as a model would
    assert found[("enum", "arguments.status")]["status"] == "draft-not-a-member"
    assert found[("required", "arguments")] == {key: value for key, value in VALID.items() if key != "limit"}
    assert found[("additionalProperties", "arguments")][EXTRA_PROPERTY] is True
    assert found[("multipleOf", "arguments.ratio")]["ratio"] == 0.625
    assert ("pattern", "arguments.query") in found
    lengths = {
        len(item.arguments["query"]) for item in mutations(LISTING, VALID) if item.path == "arguments.query"
        and item.constraint == "length"
    }  # fmt: skip
    assert lengths == {1, 9}
    assert ("length", "arguments.tags") in found
    assert found[("bound", "arguments.owner.id")]["owner"] == {"id": -1}
    assert found[("additionalProperties", "arguments.owner")]["owner"] == {"id": 3, EXTRA_PROPERTY: True}
    assert found[("required", "arguments.owner")]["owner"] == {}
    assert found[("type", "arguments.tags[0]")]["tags"] == [1]


def test_mutations_leave_the_valid_arguments_untouched() -> None:
    """Tool-defined: every mutation is a copy; the arguments it started from are not changed."""
    before = repr(VALID)
    mutations(LISTING, VALID)
    assert repr(VALID) == before


def test_the_same_schema_and_arguments_give_the_same_mutations_in_the_same_order() -> None:
    """Tool-defined: a run is reproducible from its seed only if the mutations are fixed."""
    assert mutations(LISTING, VALID) == mutations(LISTING, VALID)


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "object"}, "a schema with no constraint has nothing to break"),
        ({"type": "object", "properties": {"x": {}}}, "an unconstrained property takes any value"),
        ({"type": "object", "additionalProperties": {"type": "integer"}, "properties": {}}, "extras are allowed"),
    ],
)
def test_a_schema_without_a_constraint_to_break_gives_no_mutation(schema: dict[str, Any], why: str) -> None:
    """Tool-defined: nothing is sent as 'outside the schema' that the schema in fact accepts."""
    assert mutations(schema, {"x": 1} if "properties" in schema else {}) == [], why


def test_mutations_of_the_drafts_servers_list_drafts_name_their_cause() -> None:
    """Tool-defined: the descriptions say what was broken, in the report's words."""
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 50}},
        "additionalProperties": False,
    }
    words = [item.description for item in mutations(schema, full(schema) or {})]
    assert "arguments.limit 0, below its minimum 1" in words
    assert "arguments.limit 51, above its maximum 50" in words
    assert any("additionalProperties: false does not allow" in text for text in words)
