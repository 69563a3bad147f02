"""The short id every report prints for a finding, and finding one again by it.

Tool-defined (issue 27: ``mcp-assay replay REPORT FINDING`` takes the id the reports print).
"""

from __future__ import annotations

import json
from dataclasses import replace

from mcp_assay.report.findings import ID_LENGTH, finding_fingerprint, finding_id, matching
from mcp_assay.report.model import Report
from mcp_assay.report.sarif import render_sarif
from mcp_assay.vocabulary.verdicts import Outcome, Source
from tests.report.sample import failed_must, failed_should, passed, sample_report


def test_an_id_is_stable_short_and_the_head_of_the_sarif_fingerprint() -> None:
    result = failed_must()
    ident = finding_id(result)
    assert len(ident) == ID_LENGTH and ident == finding_id(replace(result, reason="another run", evidence=()))
    assert finding_fingerprint(result).startswith(ident)
    sarif = json.loads(render_sarif(sample_report(results=[result])))
    found = sarif["runs"][0]["results"][0]
    assert found["partialFingerprints"]["mcpAssayResult/v1"].startswith(ident)
    assert found["properties"]["finding"] == ident


def test_the_same_check_from_another_source_or_revision_is_another_finding() -> None:
    result = failed_must()
    others = {finding_id(replace(result, source=Source.PASSIVE)), finding_id(replace(result, revision="2025-11-25"))}
    assert finding_id(result) not in others and len(others) == 2


def test_the_json_report_carries_each_id_and_reads_back_to_the_same_one() -> None:
    report = sample_report(results=[failed_must(), failed_should(), passed()])
    data = report.to_json()
    assert [item["id"] for item in data["results"]] == [finding_id(result) for result in report.results]
    assert [finding_id(result) for result in Report.from_json(data).results] == [item["id"] for item in data["results"]]


def test_a_finding_is_found_by_its_id_a_longer_prefix_a_requirement_or_its_check() -> None:
    must, should = failed_must(), failed_should()
    results = [must, should, passed()]
    assert matching(results, finding_id(must)) == [must]
    assert matching(results, finding_fingerprint(must)[:12].upper()) == [must]
    assert matching(results, "rpc-15") == [must]
    assert matching(results, should.check) == [should]
    assert matching(results, "RPC-01") == []  # a requirement that passed names no finding
    twice = replace(must, revision="2025-11-25")
    assert matching([must, twice], "RPC-15") == [must, twice]
    assert matching([replace(must, outcome=Outcome.PASSED)], finding_id(must)) == []
