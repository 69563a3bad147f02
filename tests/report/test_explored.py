"""Every report format shows an explored finding: its source ``explored``, the input first drawn, the shrink steps."""

from __future__ import annotations

import json

import jsonschema
import pytest

from mcp_assay.report import FORMATS, render
from tests.report.sample import sample_report
from tests.schemastore import SARIF_2_1_0, schema

STEP = "removed limit"
"""A shrink step of the sample's explored finding (its other step holds markup each format escapes its way)."""


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_shows_the_source_and_the_shrink_steps_of_an_explored_finding(name: str) -> None:
    """Tool-defined (issue 23): the report of a run --explore finding names its source and how its input was reduced."""
    text = render(sample_report(), name)
    assert "explored" in text, name
    if name == "brief":
        return  # the short terminal report keeps one line of evidence per cause: `--show all` prints the rest
    assert STEP in text, name
    assert "edges)" in text or '"origin": "edge"' in text, name


def test_sarif_with_an_explored_finding_still_matches_the_published_schema() -> None:
    """Tool-defined: the explored lines travel inside SARIF's own message text, which stays valid SARIF 2.1.0."""
    data = json.loads(render(sample_report(), "sarif"))
    jsonschema.validate(data, schema(SARIF_2_1_0))
    sources = {result["properties"]["source"] for run in data["runs"] for result in run["results"]}
    assert "explored" in sources
