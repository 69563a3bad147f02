"""The suite's off-version probes (a request naming another version than the one under test, or none) are never
evidence of how the server treats the revision under test: a check bound to a revision's features does not see
them; a check of version negotiation itself (``off_version=True``) does. One mechanism in the engine and the
context, so no rule needs a patch of its own (the false HTTP-42 failure of server-everything, issue 21)."""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp_assay.cases import handshake, versioning
from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.context import OFF_VERSION
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import HttpExchange, Probe
from tests.factories import (
    as_probe,
    http,
    initialize_body,
    initialize_result,
    judge,
    legacy_session,
    log_of,
    modern_call,
    result_body,
)
from tests.spec.rules._http_builders import event, legacy_request, legacy_stream, result

PRIMING = "post_streams_are_primed_and_announce_retry"


def tagged(exchange: HttpExchange, name: str, *, off_version: bool) -> HttpExchange:
    tag: dict[str, Any] = {"name": name, "family": "handshake", "invalid": True, "off_version": off_version}
    return dataclasses.replace(exchange, probe=as_probe(tag))


def primed(ident: int) -> HttpExchange:
    return legacy_stream(legacy_request("tools/list", ident), [event(id=f"p{ident}", data=""), event(result(ident))])


def unprimed(ident: int, *, off_version: bool) -> HttpExchange:
    """A ping stream without a priming event, as a server serving the request as 2025-03-26 sends it."""
    return tagged(
        legacy_stream(legacy_request("ping", ident), [result(ident)]), "no-version-header", off_version=off_version
    )


def test_an_off_version_probes_stream_is_not_held_against_the_revision_under_test(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-42, 2025-11-25 only), from server-everything's evidence: the initialize offering
    1900-01-01 and the ping without MCP-Protocol-Version were served as an older revision, which has no priming
    event; the ordinary primed stream is what the revision is judged on."""
    offer = legacy_stream(initialize_body("1900-01-01", ident=3), [result_body(initialize_result(), 3)])
    offer = tagged(offer, "unsupported-version", off_version=True)
    log = log_of(legacy_session(), primed(1), unprimed(2, off_version=True), offer)
    verdict = judge(log, spec, PRIMING)
    assert verdict.outcome is Outcome.PASSED and verdict.judged == 1, verdict.reason


def test_the_same_stream_from_an_ordinary_probe_still_fails(spec: SpecSet) -> None:
    """Spec-mandated (HTTP-42): a probe that speaks the revision under test is evidence like any request."""
    verdict = judge(log_of(legacy_session(), primed(1), unprimed(2, off_version=False)), spec, PRIMING)
    assert verdict.outcome is Outcome.FAILED and "priming" in verdict.reason


def test_only_off_version_evidence_says_why_nothing_was_judged(spec: SpecSet) -> None:
    """Tool-defined: a run whose only stream came from an off-version probe judges nothing and says why."""
    verdict = judge(log_of(legacy_session(), unprimed(2, off_version=True)), spec, PRIMING)
    assert verdict.outcome is Outcome.NOT_APPLICABLE and verdict.reason == OFF_VERSION


def test_version_negotiation_checks_judge_the_off_version_probes(spec: SpecSet) -> None:
    """Spec-mandated (HS-06): the initialize offering 1900-01-01 is the very evidence of the counter-offer rule,
    which declares it judges version negotiation; a counter-offer passes and an echo fails."""
    assert REGISTRY["unsupported_requested_versions_get_a_counter_offer"].off_version
    assert not REGISTRY[PRIMING].off_version
    counter = http(initialize_body("1900-01-01", ident=7), result_body(initialize_result("2025-11-25"), 7))
    probe = {"name": "unsupported-version", "family": "handshake", "invalid": False, "off_version": True}
    counter = dataclasses.replace(counter, probe=as_probe(probe))
    verdict = judge(log_of(legacy_session(), counter), spec, "unsupported_requested_versions_get_a_counter_offer")
    assert verdict.outcome is Outcome.PASSED, verdict.reason
    echo = http(initialize_body("1900-01-01", ident=8), result_body(initialize_result("1900-01-01"), 8))
    echo = dataclasses.replace(echo, probe=as_probe(probe))
    verdict = judge(log_of(legacy_session(), echo), spec, "unsupported_requested_versions_get_a_counter_offer")
    assert verdict.outcome is Outcome.FAILED, verdict.reason


def test_a_message_check_bound_to_a_revision_does_not_see_an_off_version_answer(spec: SpecSet) -> None:
    """Spec-mandated (RES-01, 2026 only): an answer without resultType to a request whose header names another
    revision is that revision's answer, not a 2026 result missing its resultType; the same answer to an ordinary
    request fails."""
    bare = modern_call("tools/list", {}, {"tools": []}, bare=True)
    off = dataclasses.replace(bare, probe=Probe.of(versioning.BODY_HEADER_MISMATCH))
    verdict = judge(log_of(off), spec, "results_name_their_result_type")
    assert verdict.outcome is Outcome.NOT_APPLICABLE and verdict.reason == OFF_VERSION
    assert judge(log_of(bare), spec, "results_name_their_result_type").outcome is Outcome.FAILED


def test_the_off_version_tag_survives_a_recording() -> None:
    """Tool-defined: `validate` of a recording judges as the run did, so the tag is written and read back."""
    probe = Probe.of(handshake.UNSUPPORTED_VERSION)
    assert probe.off_version and Probe.from_record(probe.to_record()) == probe
    assert probe.at("2025-11-25").off_version
    assert not Probe.from_record({"name": "x"}).off_version  # type: ignore[union-attr]
