"""One run writes every format at once, and each file is read back by a parser for that format.

``mcp-assay validate`` judges a real recording (a deliberately broken server, so every section has
something in it) with one ``--report`` per format: terminal, JSON, Markdown and HTML into a
folder (the timestamped names), JUnit, TAP and SARIF to named files. Each is then parsed the way
its consumer would: JSON and SARIF as JSON (SARIF against the published 2.1.0 schema), JUnit and
HTML by XML and HTML parsers, TAP by its plan and test points, and all of them must agree on the
verdict and on the number of findings.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.report import FORMATS
from tests.report.test_html import Page
from tests.schemastore import SARIF_2_1_0, schema

RECORDING = Path(__file__).resolve().parents[1] / "data" / "recordings" / "broken-2026-07-28.jsonl"


def test_one_run_writes_every_format_and_each_parses(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined (issue 14): every format, SARIF included, from a single run, each checked by its parser."""
    folder = tmp_path / "reports"
    folder.mkdir()
    named = {"junit": tmp_path / "results.xml", "tap": tmp_path / "results.tap", "sarif": tmp_path / "results.sarif"}
    args = ["validate", str(RECORDING), "--spec-dir", str(spec_path)]
    for name in ("terminal", "json", "markdown", "html"):
        args += ["--report", f"{name}:{folder}"]
    for name, path in named.items():
        args += ["--report", f"{name}:{path}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output  # the broken server fails MUST requirements
    assert set(FORMATS) == {"terminal", "json", "markdown", "html", "junit", "tap", "sarif"}
    by_extension = {path.suffix: path for path in folder.iterdir()}
    assert sorted(by_extension) == [".html", ".json", ".md", ".txt"]

    report = json.loads(by_extension[".json"].read_text(encoding="utf-8"))
    assert report["schema"] == "mcp-assay.report/1"
    verdict = report["verdict"]["text"]
    failed = report["summary"]["failed"]
    findings = failed + report["summary"]["recommended"] + report["summary"]["notes"]
    assert failed > 0

    text = by_extension[".txt"].read_text(encoding="utf-8")
    assert f"Verdict: {verdict}" in " ".join(text.split())
    markdown = by_extension[".md"].read_text(encoding="utf-8")
    assert markdown.startswith("# MCP conformance report") and f"## FAILED ({failed})" in markdown
    page = Page(by_extension[".html"].read_text(encoding="utf-8"))
    assert page.problems == [] and f"Verdict: {verdict}" in " ".join("".join(page.text).split())

    junit = ET.fromstring(named["junit"].read_bytes())
    assert int(junit.attrib["failures"]) == failed
    assert {prop.attrib["value"] for prop in junit.iter("property") if prop.attrib["name"] == "verdict_text"} == {
        verdict
    }

    tap = named["tap"].read_text(encoding="utf-8").splitlines()
    assert tap[0] == "TAP version 14"
    plan = next(line for line in tap if re.fullmatch(r"1\.\.\d+", line))
    points = [line for line in tap if re.match(r"(not ok|ok) \d+ - ", line)]
    assert len(points) == int(plan.split("..")[1])
    assert sum(1 for line in points if line.startswith("not ok") and "# TODO" not in line) == failed

    sarif = json.loads(named["sarif"].read_text(encoding="utf-8"))
    assert list(jsonschema.Draft7Validator(schema(SARIF_2_1_0)).iter_errors(sarif)) == []
    (run,) = sarif["runs"]
    assert len(run["results"]) == findings
    assert sum(1 for item in run["results"] if item["level"] == "error") == failed
    assert run["properties"]["verdict"]["text"] == verdict
