"""The report as JUnit XML, so a CI system shows each requirement as a test.

One ``<testsuite>`` per area, one ``<testcase>`` per applicable result, in the same order as the
other writers. What fails a test is what fails the run: a result in the report's FAILED section
(MUST-level, or SHOULD-level with ``--fail-on should``) carries a ``<failure>``; a SHOULD-level or
informational finding that does not count passes, with the finding in ``<system-out>``; a result
that could not be verified is ``<skipped>``; not-applicable results are left out. Text from the
traffic passes through :func:`~mcp_assay.report.console.printable` first, because XML 1.0 cannot
carry most control characters at all.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from mcp_assay.report.console import by_area, sections
from mcp_assay.report.findings import finding_id
from mcp_assay.report.model import Report
from mcp_assay.report.plain import evidence_lines, one_line
from mcp_assay.report.sdks import accepted_by, sdk_line
from mcp_assay.vocabulary.verdicts import Outcome, Verdict

__all__ = ["render_junit"]

_PREFIX = {
    "recommended": "SHOULD (recommended; fails the run only with --fail-on should)",
    "notes": "NOTE (informational; never fails the run)",
}


def _details(result: Verdict) -> str:
    """The finding as plain text: requirements, reason, and every piece of evidence."""
    lines = [
        *([f"finding: {finding_id(result)}"] if result.outcome is Outcome.FAILED else []),
        f"check: {one_line(result.check)}",
        f"requirements: {', '.join(result.requirements)} "
        f"({result.level.value}, severity {result.severity.value}, {result.whose}, {result.source.value})",
    ]
    if result.reason:
        lines.append(f"reason: {one_line(result.reason)}")
    if result.blocked_by:
        lines.append(f"blocked by: {one_line(result.blocked_by)}")
    sdk = sdk_line(result)
    if sdk is not None:
        lines.append(f"sdk: {one_line(sdk)}")
    lines += evidence_lines(result)
    if result.violations > len(result.evidence):
        lines.append(f"{result.violations - len(result.evidence)} more occurrence(s) not kept in the report")
    return "\n".join(lines)


def _failure_message(result: Verdict) -> str:
    """The reason; for a failure an SDK is known to have, whose it is."""
    message = result.reason or result.title
    return f"{message} (known in {result.sdk.named})" if result.sdk is not None else message


def _in(result: Verdict) -> str:
    return f", {result.revision}" if result.revision else ""


def _testcase(parent: ET.Element, result: Verdict, key: str) -> str:
    """Add one testcase; return what it counts as (``failure``, ``skipped`` or ``passed``)."""
    ids = ", ".join(result.requirements)
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": one_line(f"{result.area or 'Other'}.{result.check}"),
            "name": one_line(f"{ids}: {result.title} [{result.source.value}{_in(result)}]"),
        },
    )
    if key == "failed":
        failure = ET.SubElement(
            case,
            "failure",
            {"message": one_line(_failure_message(result)), "type": f"{result.severity.value.upper()}-level"},
        )
        failure.text = _details(result)
        return "failure"
    if key == "known":
        ET.SubElement(
            case,
            "skipped",
            {"message": one_line(f"known finding, accepted by the {accepted_by(result)}: {result.known}")},
        )
        ET.SubElement(case, "system-out").text = _details(result)
        return "skipped"
    if key == "not_verified":
        reason = result.reason or "not verified"
        if result.blocked_by:
            reason += f" (blocked by {result.blocked_by})"
        ET.SubElement(case, "skipped", {"message": one_line(reason)})
        return "skipped"
    if key in _PREFIX:
        ET.SubElement(case, "system-out").text = f"{_PREFIX[key]}\n{_details(result)}"
    return "passed"


def render_junit(report: Report) -> str:
    """The report as a JUnit XML document (the common Jenkins/GitLab/GitHub dialect)."""
    section_of = {id(result): key for key, _, _, results in sections(report) for result in results}
    code, verdict = report.verdict()
    root = ET.Element("testsuites", {"name": one_line(f"mcp-assay: {report.target.shown_description}")})
    properties = {
        "target": report.target.shown_description,
        "kind": report.target.shown_kind,
        "revision": report.revision or "",
        "tested": ", ".join(report.tested),
        "supported": ", ".join(report.window),
        "fail_on": report.fail_on.value,
        "verdict": code,
        "verdict_text": verdict,
        "tool": report.tool,
        **{f"sdk_{recognition.side}": recognition.describe() for recognition in report.sdks},
    }
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for area, members in by_area(report.applied(), report.result_revisions()).items():
        suite = ET.SubElement(root, "testsuite", {"name": one_line(area), "timestamp": one_line(report.generated_at)})
        props = ET.SubElement(suite, "properties")
        for prop, text in properties.items():
            ET.SubElement(props, "property", {"name": prop, "value": one_line(text)})
        counted = {"tests": 0, "failures": 0, "skipped": 0}
        for result in members:
            outcome = _testcase(suite, result, section_of[id(result)])
            counted["tests"] += 1
            if outcome == "failure":
                counted["failures"] += 1
            elif outcome == "skipped":
                counted["skipped"] += 1
        for name, value in counted.items():
            suite.set(name, str(value))
            totals[name] += value
        suite.set("errors", "0")
    if report.unjudged is not None:
        # nothing to judge is an error of the run, not a failed requirement: CI marks it red either way
        suite = ET.SubElement(root, "testsuite", {"name": "Target", "timestamp": one_line(report.generated_at)})
        case = ET.SubElement(suite, "testcase", {"classname": "Target", "name": "an MCP peer to judge"})
        ET.SubElement(case, "error", {"message": one_line(verdict), "type": code})
        for name, value in (("tests", 1), ("failures", 0), ("skipped", 0), ("errors", 1)):
            suite.set(name, str(value))
        totals["tests"] += 1
    stale = report.baseline.stale if report.baseline is not None else ()
    if stale:
        suite = ET.SubElement(root, "testsuite", {"name": "Baseline", "timestamp": one_line(report.generated_at)})
        for entry in stale:
            case = ET.SubElement(suite, "testcase", {"classname": "Baseline.stale", "name": one_line(entry)})
            ET.SubElement(case, "failure", {"message": one_line(f"stale baseline entry: {entry}"), "type": "baseline"})
        for name, value in (("tests", len(stale)), ("failures", len(stale)), ("skipped", 0), ("errors", 0)):
            suite.set(name, str(value))
        totals["tests"] += len(stale)
        totals["failures"] += len(stale)
    for name, value in totals.items():
        root.set(name, str(value))
    root.set("errors", "1" if report.unjudged is not None else "0")
    if report.stats.duration_ms is not None:
        root.set("time", f"{float(report.stats.duration_ms) / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
