"""The JUnit XML report: valid XML, counts that add up, and failures only where the run fails."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from mcp_assay.report.junit import render_junit
from mcp_assay.report.model import FailOn
from tests.report.sample import (
    assert_golden,
    failed_must,
    failed_should,
    info_note,
    not_applicable,
    not_verified,
    passed,
    sample_report,
    with_reason,
)


def parse(xml: str) -> ET.Element:
    return ET.fromstring(xml.encode("utf-8"))


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.attrib["classname"].split(".", 1)[1]: case for case in root.iter("testcase")}


def test_junit_report_matches_its_golden_file() -> None:
    """Tool-defined: the JUnit layout of the sample report is stable."""
    assert_golden("report.junit.xml", render_junit(sample_report()))


def test_junit_counts_add_up_per_suite_and_overall() -> None:
    """Tool-defined: tests/failures/skipped/errors match the testcases each suite holds."""
    for fail_on in FailOn:
        root = parse(render_junit(sample_report(fail_on)))
        totals = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0}
        for suite in root.iter("testsuite"):
            counted = {
                "tests": len(suite.findall("testcase")),
                "failures": len(suite.findall("testcase/failure")),
                "skipped": len(suite.findall("testcase/skipped")),
                "errors": len(suite.findall("testcase/error")),
            }
            assert {key: int(suite.attrib[key]) for key in counted} == counted
            for key, value in counted.items():
                totals[key] += value
        assert {key: int(root.attrib[key]) for key in totals} == totals
        assert totals["tests"] == 6


def test_junit_has_one_suite_per_area_and_leaves_out_not_applicable() -> None:
    """Tool-defined: suites are areas, in order; a not-applicable result has no testcase."""
    root = parse(render_junit(sample_report()))
    assert [suite.attrib["name"] for suite in root.iter("testsuite")] == ["JSON-RPC", "Tools"]
    assert not_applicable().check not in cases(root)


def test_a_failed_must_is_a_failure_with_requirements_reason_and_evidence() -> None:
    """Tool-defined: the failure message is the reason; its text carries evidence and the curl."""
    failure = cases(parse(render_junit(sample_report())))[failed_must().check].find("failure")
    assert failure is not None
    assert failure.attrib == {"message": failed_must().reason, "type": "MUST-level"}
    assert failure.text is not None
    assert "requirements: RPC-15" in failure.text
    assert "evidence: POST /mcp no/such_method id=7 -> 200 application/json (exchange a-12)" in failure.text
    assert "reproduce: curl -sS -X POST" in failure.text


def test_a_should_finding_passes_with_a_note_unless_fail_on_should() -> None:
    """Tool-defined: SHOULD-level findings fail the testcase only with --fail-on should."""
    case = cases(parse(render_junit(sample_report())))[failed_should().check]
    assert case.find("failure") is None
    note = case.find("system-out")
    assert note is not None and note.text is not None and note.text.startswith("SHOULD")
    strict = cases(parse(render_junit(sample_report(FailOn.SHOULD))))[failed_should().check]
    assert strict.find("failure") is not None


def test_an_informational_note_never_fails() -> None:
    """Tool-defined: notes pass, with the finding in system-out."""
    case = cases(parse(render_junit(sample_report(FailOn.SHOULD))))[info_note().check]
    assert case.find("failure") is None
    out = case.find("system-out")
    assert out is not None and out.text is not None and out.text.startswith("NOTE")


def test_not_verified_is_skipped_with_its_reason() -> None:
    """Tool-defined: a skip is reported as <skipped message=reason>."""
    case = cases(parse(render_junit(sample_report())))[not_verified().check]
    skipped = case.find("skipped")
    assert skipped is not None
    assert skipped.attrib["message"].startswith(not_verified().reason)
    assert "blocked by undefined_method_is_answered_with_method_not_found" in skipped.attrib["message"]


def test_a_passed_result_is_a_bare_testcase() -> None:
    """Tool-defined: passes have no children."""
    case = cases(parse(render_junit(sample_report())))[passed().check]
    assert list(case) == []
    assert case.attrib["name"] == "RPC-01: Every message declares jsonrpc 2.0 [passive]"


def test_control_characters_xml_forbids_still_give_valid_xml() -> None:
    """Tool-defined: NUL, ESC and friends from the server are escaped, so the XML parses."""
    hostile = 'nul\x00 esc\x1b[31m bell\x07 <tag> & "quote" ]]> \udcff \ufffe'
    root = parse(render_junit(sample_report(results=[with_reason(failed_must(), hostile)])))
    failure = next(root.iter("failure"))
    assert failure.attrib["message"] == 'nul\\x00 esc\\x1b[31m bell\\x07 <tag> & "quote" ]]> \\udcff \\ufffe'


def test_an_empty_report_is_still_valid_junit() -> None:
    """Tool-defined: nothing applied gives an empty <testsuites> with zero counts."""
    root = parse(render_junit(sample_report(results=[not_applicable()])))
    assert root.tag == "testsuites"
    assert root.attrib["tests"] == "0" and list(root) == []
