"""``docs/probes.md`` is the case registry's, not a table kept by hand.

Tool-defined. The page is rendered from the families and their cases; this test fails when the file
differs, and ``UPDATE_DOCS=1`` rewrites it.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp_assay.cases import probe_cases
from mcp_assay.suite.probes.table import probe_table

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = DOCS / "probes.md"


def test_the_probe_page_is_generated_from_the_registry() -> None:
    """Tool-defined: edit the cases in src/mcp_assay/cases/, then run with UPDATE_DOCS=1."""
    expected = probe_table()
    if os.environ.get("UPDATE_DOCS") == "1":
        PAGE.write_text(expected, encoding="utf-8")
    assert PAGE.read_text(encoding="utf-8") == expected, "docs/probes.md is stale: rerun with UPDATE_DOCS=1"


def test_every_case_is_on_the_page() -> None:
    """Tool-defined: the page can fail: it names every declared case."""
    page = probe_table()
    assert all(f"`{case.name}`" in page for case in probe_cases())
    assert "`auth-stub-hs256-confusion`" in page and "`wrong-accept` (`accept: text/html`)" in page
