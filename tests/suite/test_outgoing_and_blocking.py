"""The suite validates what it sends, and reports blocked cases once, with their cause."""

from __future__ import annotations

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.suite.blocking import Skip, annotate
from mcp_assay.suite.outgoing import encode, validate_outgoing
from mcp_assay.vocabulary.errors import HarnessError
from mcp_assay.vocabulary.verdicts import Level, Outcome, Severity, Side, Source, Verdict

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def test_a_well_formed_request_passes_outgoing_validation(spec: SpecSet) -> None:
    """Tool-defined: the suite's ordinary requests match their revision's schema."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    assert validate_outgoing(spec.require("2026-07-28"), encode(body), invalid=False) == "ListToolsRequest"


def test_a_malformed_request_of_the_suite_is_a_harness_error(spec: SpecSet) -> None:
    """Tool-defined: a message of the suite's own making that fails the schema stops the probe."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": META}}
    with pytest.raises(HarnessError, match="CallToolRequest"):
        validate_outgoing(spec.require("2026-07-28"), encode(body), invalid=False)


def test_a_probe_marked_invalid_is_sent_as_it_is(spec: SpecSet) -> None:
    """Tool-defined: deliberately malformed probes are exempt (and marked so in their tag)."""
    truncated = b'{"jsonrpc": "2.0", "id": 1,'
    assert validate_outgoing(spec.require("2026-07-28"), truncated, invalid=True) is None
    with pytest.raises(HarnessError, match="malformed message"):
        validate_outgoing(spec.require("2026-07-28"), truncated, invalid=False)


def _verdict(check: str, requirements: tuple[str, ...], outcome: Outcome, *, judged: int = 0) -> Verdict:
    return Verdict(
        check=check,
        title=check,
        requirements=requirements,
        level=Level.MUST,
        severity=Severity.MUST,
        side=Side.SERVER,
        outcome=outcome,
        source=Source.ACTIVE,
        reason="no tools/call results observed in the traffic",
        judged=judged,
        area="Tools",
    )


def test_checks_fed_by_a_skipped_family_say_why_and_what_blocked_them() -> None:
    """Tool-defined: one root cause, one finding — dependants are not verified, blocked by it."""
    verdicts = [
        _verdict("discover_is_implemented", ("VER-06",), Outcome.FAILED, judged=1),
        _verdict("tool_results_match_the_schema", ("TOOL-09",), Outcome.NOT_VERIFIED),
        _verdict("unrelated", ("RPC-01",), Outcome.NOT_VERIFIED),
    ]
    skip = Skip(family="tools", requirements=frozenset({"TOOL-09"}), reason="capabilities unknown", blocked_by="VER-06")
    failed, blocked, untouched = annotate(verdicts, [skip])
    assert failed.outcome is Outcome.FAILED
    assert blocked.outcome is Outcome.NOT_VERIFIED
    assert blocked.reason == "capabilities unknown"
    assert blocked.blocked_by == "discover_is_implemented"
    assert untouched.blocked_by is None and untouched.reason.startswith("no tools/call")


def test_a_skip_of_everything_turns_findings_into_not_verified() -> None:
    """Tool-defined: a refused credential is not a wall of failures."""
    verdicts = [
        _verdict("a", ("VER-06",), Outcome.FAILED, judged=1),
        _verdict("b", ("TOOL-09",), Outcome.NOT_APPLICABLE),
    ]
    skip = Skip(family="selection", requirements=frozenset(), reason="refused: HTTP 401", everything=True)
    first, second = annotate(verdicts, [skip])
    assert first.outcome is Outcome.NOT_VERIFIED and first.reason == "refused: HTTP 401"
    assert second.outcome is Outcome.NOT_APPLICABLE
