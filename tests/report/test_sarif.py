"""The SARIF report: valid against the published SARIF 2.1.0 schema, one rule per check, one result per finding."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import jsonschema
import pytest

from mcp_assay.report.about import Target
from mcp_assay.report.model import BaselineStatus, FailOn, Report
from mcp_assay.report.sarif import FINGERPRINT, artifact_uri, render_sarif
from mcp_assay.spec.requirements import catalogue, glossary
from mcp_assay.vocabulary.verdicts import Severity
from tests.report.sample import (
    CURL,
    failed_must,
    failed_should,
    info_note,
    not_applicable,
    not_verified,
    passed,
    sample_report,
    with_reason,
)
from tests.schemastore import SARIF_2_1_0, schema


def catalogued_report() -> Report:
    """The sample report with what the catalogue says of its requirements, as build_report attaches it."""
    report = sample_report()
    report.glossary = glossary(report.results)
    return report


def sarif(report: Report) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(render_sarif(report))
    return data


def validate(document: dict[str, Any]) -> None:
    published = schema(SARIF_2_1_0)
    validator = jsonschema.Draft7Validator(published, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path))
    assert errors == [], "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def results_by_rule(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["ruleId"]: item for item in document["runs"][0]["results"]}


@pytest.mark.parametrize("fail_on", list(FailOn))
def test_sarif_validates_against_the_published_2_1_0_schema(fail_on: FailOn) -> None:
    """Spec-mandated (SARIF 2.1.0): the log is valid against the OASIS schema, for every --fail-on."""
    document = sarif(sample_report(fail_on))
    assert document["version"] == "2.1.0"
    validate(document)


def test_a_report_without_findings_is_a_valid_log_with_no_results() -> None:
    """Spec-mandated (SARIF 2.1.0): an empty results array still describes the rules that ran."""
    document = sarif(sample_report(results=[passed()]))
    validate(document)
    run = document["runs"][0]
    assert run["results"] == []
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [passed().check]


def test_the_tool_has_one_rule_per_check_with_its_requirements_and_help() -> None:
    """Tool-defined: every check in the report is a rule carrying its IDs, level and the catalogue's paraphrase."""
    driver = sarif(catalogued_report())["runs"][0]["tool"]["driver"]
    assert driver["name"] == "mcp-assay" and driver["version"] == "0.0.0"
    rules = {rule["id"]: rule for rule in driver["rules"]}
    checks = {result.check for result in catalogued_report().results}
    assert set(rules) == checks and len(driver["rules"]) == len(checks)
    rule = rules[failed_must().check]
    assert rule["properties"]["requirements"] == ["RPC-15"]
    assert rule["properties"]["level"] == "MUST" and rule["defaultConfiguration"]["level"] == "error"
    assert rule["shortDescription"]["text"] == failed_must().title
    summary = " ".join(catalogue()["RPC-15"].summary.split())
    assert summary in rule["help"]["text"] and summary in rule["help"]["markdown"]
    assert catalogue()["RPC-15"].source in rule["help"]["text"]
    assert rules[failed_should().check]["defaultConfiguration"]["level"] == "warning"
    assert rules[info_note().check]["defaultConfiguration"]["level"] == "note"


def test_one_result_per_failed_recommended_or_informational_finding_with_its_level() -> None:
    """Tool-defined: FAILED is error, SHOULD warning, a note a note; passes and skips are not results."""
    document = sarif(catalogued_report())
    results = results_by_rule(document)
    assert len(document["runs"][0]["results"]) == 3
    assert {rule: item["level"] for rule, item in results.items()} == {
        failed_must().check: "error",
        failed_should().check: "warning",
        info_note().check: "note",
    }
    for absent in (passed(), not_verified(), not_applicable()):
        assert absent.check not in results
    rules = document["runs"][0]["tool"]["driver"]["rules"]
    for item in results.values():
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]


def test_with_fail_on_should_a_should_finding_is_an_error() -> None:
    """Tool-defined: the level follows the section the finding lands in, as the exit code does."""
    results = results_by_rule(sarif(sample_report(FailOn.SHOULD)))
    assert results[failed_should().check]["level"] == "error"
    assert results[info_note().check]["level"] == "note"


def test_the_message_is_the_evidence_with_its_reproduction() -> None:
    """Tool-defined: reason, each evidence line with its exchange, and the curl reproduction."""
    item = results_by_rule(sarif(catalogued_report()))[failed_must().check]
    text = item["message"]["text"]
    first, second = failed_must().evidence
    assert text.splitlines()[0] == failed_must().reason
    assert f"evidence: {first.summary} (exchange a-12)" in text
    assert f"evidence: {second.summary} (exchange a-13)" in text
    assert f"reproduce: {CURL}" in text
    assert item["properties"]["reproductions"] == [CURL]
    assert item["properties"]["exchanges"] == ["a-12", "a-13"]


def test_results_have_a_repository_relative_location_and_a_stable_fingerprint() -> None:
    """Tool-defined: code scanning needs a relative path; the fingerprint does not change between runs."""
    first = results_by_rule(sarif(catalogued_report()))
    again = results_by_rule(sarif(sample_report(generated_at="2030-01-01T00:00:00+00:00")))
    for rule, item in first.items():
        (location,) = item["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == "127.0.0.1_8000/mcp"
        assert item["partialFingerprints"][FINGERPRINT] == again[rule]["partialFingerprints"][FINGERPRINT]
    assert len({item["partialFingerprints"][FINGERPRINT] for item in first.values()}) == len(first)


@pytest.mark.parametrize(
    ("description", "uri"),
    [
        ("http://127.0.0.1:8000/mcp", "127.0.0.1_8000/mcp"),
        ("https://mcp.example.com/v1/mcp (reverse proxy)", "mcp.example.com/v1/mcp"),
        ("http://localhost:9000", "localhost_9000"),
        ("python server.py --port 8000", "server.py"),
        ("uvx some-server --flag", "mcp-server"),
        ("node /abs/path/build/index.js", "index.js"),
        ("python src/app/server.py", "src/app/server.py"),
        ("/tmp/run/session.jsonl, /tmp/run/more.jsonl", "session.jsonl"),
        ("http://127.0.0.1:1/mcp (reverse proxy) + http://127.0.0.1:2/mcp", "127.0.0.1_1/mcp"),
        ("python 'unbalanced", "mcp-server"),
        ("", "mcp-server"),
    ],
)
def test_the_location_is_named_after_the_target(description: str, uri: str) -> None:
    """Tool-defined: a URL becomes host_port/path, a stdio command its script, else a fixed name."""
    assert artifact_uri(Target(description=description)) == uri


def test_a_baseline_accepted_failure_is_suppressed_with_the_reason() -> None:
    """Tool-defined (SARIF suppressions): a known failure keeps its level and says why it is accepted."""
    reason = "mcp 2.3.0 routes on the version header; upstream issue #1"
    known = replace(failed_must(), known=reason)
    report = sample_report(results=[known, passed()], baseline=BaselineStatus(path="baseline.yaml", known=1))
    document = sarif(report)
    validate(document)
    item = results_by_rule(document)[known.check]
    assert item["level"] == "error"
    assert item["suppressions"] == [{"kind": "external", "status": "accepted", "justification": reason}]
    assert document["runs"][0]["properties"]["baseline"]["known"] == 1
    assert document["runs"][0]["invocations"][0]["exitCode"] == 0


def test_the_run_carries_the_verdict_and_counts() -> None:
    """Tool-defined: what the other formats say at the bottom is on the run too."""
    report = catalogued_report()
    run = sarif(report)["runs"][0]
    assert run["properties"]["verdict"] == {"code": report.verdict()[0], "text": report.verdict()[1]}
    assert run["properties"]["summary"] == report.counts()
    assert run["invocations"][0]["exitCode"] == 1


def test_control_characters_and_markup_from_the_server_stay_inert() -> None:
    """Tool-defined: an ANSI escape in server text is escaped; the document stays valid JSON and SARIF."""
    hostile = with_reason(failed_must(), "\x1b[31mred\x1b[0m <script>x</script>\u202e")
    document = sarif(sample_report(results=[hostile]))
    validate(document)
    text = results_by_rule(document)[hostile.check]["message"]["text"]
    assert "\x1b" not in text and "\\x1b[31mred" in text and "\\u202e" in text


def test_a_requirement_missing_from_the_catalogue_still_gets_a_rule() -> None:
    """Tool-defined: a report from another version may cite an unknown ID; the rule names it anyway."""
    odd = replace(failed_must(), requirements=("ZZZ-99",), severity=Severity.MUST)
    document = sarif(sample_report(results=[odd]))
    validate(document)
    (rule,) = document["runs"][0]["tool"]["driver"]["rules"]
    assert "ZZZ-99 (MUST)" in rule["help"]["text"]


def test_sarif_is_deterministic() -> None:
    """Tool-defined: rendering twice gives the same bytes."""
    assert render_sarif(catalogued_report()) == render_sarif(catalogued_report())


def test_the_schema_check_refuses_what_sarif_does_not_allow() -> None:
    """Tool-defined: guard against a validation that accepts anything (a level SARIF does not have)."""
    document = sarif(catalogued_report())
    document["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(AssertionError, match="fatal"):
        validate(document)
