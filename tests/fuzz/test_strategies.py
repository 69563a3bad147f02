"""The fuzz's "valid" answers really are valid: each drawn shape passes the official schema unbroken."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_assay.spec import SpecSet
from tests.fuzz.strategies import SHAPES

REVISION = {"InitializeResult": "2025-11-25"}
"""The revision whose schema defines each shape (2026-07-28 unless named here)."""


@settings(max_examples=30, deadline=None, database=None, derandomize=True)
@given(data=st.data())
def test_the_drawn_results_match_their_schema_definition(spec: SpecSet, data: Any) -> None:
    """Tool-defined: answers are drawn from the schema's shapes before the hostile server breaks them."""
    for definition, strategy in SHAPES.items():
        value = data.draw(strategy, label=definition)
        revision = spec.require(REVISION.get(definition, "2026-07-28"))
        issues = revision.validator.validate_def(definition, value)
        assert not issues, (definition, value, issues)
