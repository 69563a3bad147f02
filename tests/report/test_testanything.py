"""The TAP version 14 report: plan, test points, directives and YAML diagnostics."""

from __future__ import annotations

import re

import yaml

from mcp_assay.report.model import FailOn
from mcp_assay.report.testanything import render_tap
from tests.report.sample import (
    assert_golden,
    failed_must,
    failed_should,
    not_applicable,
    not_verified,
    passed,
    sample_report,
    with_reason,
)

POINT = re.compile(r"^(not ok|ok) (\d+) - (.*)$")


def points(tap: str) -> list[tuple[str, int, str]]:
    return [(m[1], int(m[2]), m[3]) for line in tap.splitlines() if (m := POINT.match(line))]


def diagnostics(tap: str) -> list[dict[str, object]]:
    """Every YAML block, parsed."""
    blocks = re.findall(r"^  ---\n(.*?)^  \.\.\.$", tap, flags=re.MULTILINE | re.DOTALL)
    return [yaml.safe_load("\n".join(line[2:] for line in block.splitlines())) for block in blocks]


def test_tap_report_matches_its_golden_file() -> None:
    """Tool-defined: the TAP layout of the sample report is stable."""
    assert_golden("report.tap", render_tap(sample_report()))


def test_tap_starts_with_the_version_and_the_plan_matches_the_points() -> None:
    """Tool-defined: TAP version 14, plan 1..N, points numbered 1..N in order."""
    tap = render_tap(sample_report())
    lines = tap.splitlines()
    assert lines[0] == "TAP version 14"
    (plan,) = [line for line in lines if re.match(r"^1\.\.\d+$", line)]
    found = points(tap)
    assert plan == f"1..{len(found)}" == "1..6"
    assert [number for _, number, _ in found] == list(range(1, 7))


def test_tap_leaves_out_not_applicable_results() -> None:
    """Tool-defined: the plan counts what applied."""
    tap = render_tap(sample_report(results=[passed(), not_applicable()]))
    assert "1..1" in tap.splitlines()
    assert not_applicable().title not in tap


def test_a_failed_must_is_not_ok_with_yaml_diagnostics() -> None:
    """Tool-defined: requirements, reason and evidence summary in the YAML block."""
    tap = render_tap(sample_report(results=[failed_must()]))
    assert points(tap) == [("not ok", 1, "JSON-RPC: Requests for undefined methods are answered with -32601 [RPC-15]")]
    (block,) = diagnostics(tap)
    assert block["requirements"] == ["RPC-15"]
    assert block["reason"] == failed_must().reason
    evidence = block["evidence"]
    assert isinstance(evidence, list)
    assert evidence[0]["summary"] == "POST /mcp no/such_method id=7 -> 200 application/json"
    assert evidence[0]["reproduce"].startswith("curl -sS -X POST")


def test_a_should_finding_is_todo_unless_fail_on_should() -> None:
    """Tool-defined: SHOULD findings carry a TODO directive, so harnesses do not fail the run."""
    (lenient,) = points(render_tap(sample_report(results=[failed_should()])))
    assert lenient[0] == "not ok" and " # TODO SHOULD-level" in lenient[2]
    (strict,) = points(render_tap(sample_report(FailOn.SHOULD, results=[failed_should()])))
    assert strict[0] == "not ok" and "# TODO" not in strict[2]


def test_not_verified_is_skipped_with_its_reason() -> None:
    """Tool-defined: ok ... # SKIP reason."""
    (point,) = points(render_tap(sample_report(results=[not_verified()])))
    assert point[0] == "ok"
    assert point[2].endswith(
        "# SKIP no tools/list answer was observed (blocked by undefined_method_is_answered_with_method_not_found)"
    )


def test_hash_and_backslash_in_descriptions_are_escaped() -> None:
    """Spec-mandated (TAP 14): an unescaped # would start a directive."""
    result = with_reason(failed_should(), "# SKIP fake \\ path")
    (point,) = points(render_tap(sample_report(results=[result])))
    assert point[2].endswith("--fail-on should: \\# SKIP fake \\\\ path")
    assert point[2].count(" # ") == 1


def test_every_diagnostic_block_is_valid_yaml_even_with_control_characters() -> None:
    """Tool-defined: server text with control characters still gives parseable YAML."""
    hostile = with_reason(failed_must(), "line\nbreak\x1b[0m: {not: yaml} - [x]")
    tap = render_tap(sample_report(results=[hostile, failed_should()]))
    blocks = diagnostics(tap)
    assert len(blocks) == 2
    (block,) = [b for b in blocks if b["check"] == failed_must().check]
    assert block["reason"] == "line break\\x1b[0m: {not: yaml} - [x]"


def test_tap_ends_with_summary_and_verdict_comments() -> None:
    """Tool-defined: the same summary and verdict as the terminal, as comments."""
    tap = render_tap(sample_report())
    assert tap.splitlines()[-1] == "# Verdict: not conformant — 1 requirement violated (RPC-15)."
