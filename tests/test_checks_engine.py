"""The check engine: gates, aggregation, sources, and checks that misbehave."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY, Every, Finding, failed, log_check, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Level, Outcome, Severity, Side, Source
from mcp_assay.wire.jsonrpc import Kind, Message
from tests.factories import legacy_call, legacy_session, log_of, modern_call, stdio

SCRATCH = Every("a scratch check of this test reads everything")

TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}


@pytest.fixture()
def scratch_checks() -> Iterator[list[str]]:
    """Register throwaway checks for one test and remove them afterwards."""
    before = set(REGISTRY)
    names: list[str] = []
    yield names
    for name in set(REGISTRY) - before:
        del REGISTRY[name]


def run(spec: SpecSet, log: object, name: str) -> object:
    (verdict,) = evaluate(log, spec, checks=[REGISTRY[name]])  # type: ignore[arg-type]
    return verdict


def test_a_feature_gate_makes_a_check_not_applicable_with_the_reason(spec: SpecSet, scratch_checks: list[str]) -> None:
    @message_check(
        requirements="RES-01", level=Level.MUST, subject="results", features={"result_envelope"}, methods=SCRATCH
    )
    def scratch_gated(message: Message, ctx: Context) -> Finding:
        return passed(message)

    legacy = log_of(legacy_session(), legacy_call("tools/list", None, {"tools": []}))
    verdict = run(spec, legacy, "scratch_gated")
    assert verdict.outcome is Outcome.NOT_APPLICABLE  # type: ignore[attr-defined]
    assert "2025-11-25 does not define result_envelope" in verdict.reason  # type: ignore[attr-defined]
    modern = log_of(modern_call("tools/list", {}, TOOLS))
    assert run(spec, modern, "scratch_gated").outcome is Outcome.PASSED  # type: ignore[attr-defined]


def test_a_transport_gate_makes_a_check_not_applicable(spec: SpecSet, scratch_checks: list[str]) -> None:
    @message_check(requirements="HTTP-07", level=Level.MUST, subject="answers", methods=SCRATCH)
    def scratch_http_only(message: Message, ctx: Context) -> Finding:
        return passed(message)

    log = log_of(stdio(Side.CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    verdict = run(spec, log, "scratch_http_only")
    assert verdict.outcome is Outcome.NOT_APPLICABLE  # type: ignore[attr-defined]
    assert "stdio has no such requirement" in verdict.reason  # type: ignore[attr-defined]


def test_an_exception_inside_a_check_becomes_not_verified(spec: SpecSet, scratch_checks: list[str]) -> None:
    @message_check(requirements="RPC-01", level=Level.MUST, subject="messages", methods=SCRATCH)
    def scratch_raises(message: Message, ctx: Context) -> Finding:
        raise KeyError("boom")

    verdict = run(spec, log_of(modern_call("tools/list", {}, TOOLS)), "scratch_raises")
    assert verdict.outcome is Outcome.NOT_VERIFIED  # type: ignore[attr-defined]
    assert "the check itself failed" in verdict.reason and "boom" in verdict.reason  # type: ignore[attr-defined]


def test_failures_win_and_carry_evidence_and_counts(spec: SpecSet, scratch_checks: list[str]) -> None:
    @log_check(requirements="RPC-05", level=Level.MUST, subject="requests", follows=SCRATCH)
    def scratch_mixed(ctx: Context) -> Iterator[Finding]:
        for message in ctx.messages(kinds={Kind.REQUEST}):
            yield passed(message)
            yield failed(message, "a reason")

    log = log_of(modern_call("tools/list", {}, TOOLS, ident=1), modern_call("tools/list", {}, TOOLS, ident=2))
    verdict = run(spec, log, "scratch_mixed")
    assert verdict.outcome is Outcome.FAILED  # type: ignore[attr-defined]
    assert verdict.violations == 2 and verdict.judged == 4  # type: ignore[attr-defined]
    assert verdict.reason == "a reason (and 1 more)"  # type: ignore[attr-defined]
    assert verdict.evidence[0].summary.startswith("POST /mcp → 200 application/json")  # type: ignore[attr-defined]
    assert verdict.severity is Severity.MUST  # type: ignore[attr-defined]
    assert verdict.source is Source.PASSIVE  # type: ignore[attr-defined]


def test_no_subject_means_not_verified_with_what_was_missing(spec: SpecSet, scratch_checks: list[str]) -> None:
    @message_check(
        requirements="RPC-07", level=Level.MUST, subject="error responses", kinds={Kind.ERROR}, methods=SCRATCH
    )
    def scratch_errors(message: Message, ctx: Context) -> Finding:
        return passed(message)

    verdict = run(spec, log_of(modern_call("tools/list", {}, TOOLS)), "scratch_errors")
    assert verdict.outcome is Outcome.NOT_VERIFIED  # type: ignore[attr-defined]
    assert verdict.reason == "no error responses observed in the traffic"  # type: ignore[attr-defined]


def test_traffic_of_a_revision_outside_the_window_is_not_judged(spec: SpecSet) -> None:
    old = log_of(legacy_session(version="2024-11-05"), legacy_call("tools/list", None, {"tools": []}))
    verdict = run(spec, old, "results_match_their_method_definition")
    assert verdict.outcome is Outcome.NOT_APPLICABLE  # type: ignore[attr-defined]
    assert "outside the window" in verdict.reason  # type: ignore[attr-defined]


def test_every_registered_check_runs_on_an_empty_log_without_crashing(spec: SpecSet) -> None:
    verdicts = evaluate(log_of(), spec)
    assert len(verdicts) == len(REGISTRY)
    assert {v.outcome for v in verdicts} == {Outcome.NOT_VERIFIED}
