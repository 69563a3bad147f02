"""One run, every revision the server serves: side by side, one log segment each, one report.

Scripted servers behind httpx.MockTransport (tests/peers/broken_suite): the conformant dual-era
server, one that leaks its 2026 envelope into 2025 sessions, and a modern-only one; plus the parts
on their own: the turns the revisions take at the server, the router's segments, and the split of
a recorded log back into one log per revision.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.spec import SpecSet
from mcp_assay.suite import plan
from mcp_assay.suite.config import SuiteConfig, read_config_file
from mcp_assay.suite.context import ProbeFamily, Router, SuiteContext
from mcp_assay.suite.events import Event, FamilyFinished, FamilyStarted, RevisionSelected
from mcp_assay.suite.judging import RUN_OBSERVATION, judge_suite_log, segments
from mcp_assay.suite.judging import tested_revisions as revisions_of
from mcp_assay.suite.turns import Turns
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import Observation
from mcp_assay.wire.traffic import ExchangeLog
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import respond
from tests.suite.test_run_scripted import RULE_CONFLICTS, run_suite

MODERN, LEGACY = "2026-07-28", "2025-11-25"
NEWER_SHAPES = "handshake_sessions_get_no_newer_revision_fields"


def results(report: Any, check: str) -> dict[str | None, Any]:
    """The verdicts of one check, by the revision they were reached in."""
    return {item.revision: item for item in report.results if item.check == check}


# -- the run ---------------------------------------------------------------------------------------
def test_both_revisions_are_tested_side_by_side_in_one_run(spec: SpecSet) -> None:
    """Tool-defined (issue 13): the 2025 cases start before the 2026 ones have all finished."""
    report, events = run_suite(spec, respond(Server()))
    (selected,) = [event for event in events if isinstance(event, RevisionSelected)]
    assert selected.revisions == (MODERN, LEGACY)
    started = [i for i, event in enumerate(events) if isinstance(event, FamilyStarted) and event.revision == LEGACY]
    finished = [i for i, event in enumerate(events) if isinstance(event, FamilyFinished) and event.revision == MODERN]
    assert started and finished and started[0] < finished[-1]
    assert report.tested == [MODERN, LEGACY]


def test_a_requirement_binding_both_revisions_has_a_verdict_in_each(spec: SpecSet) -> None:
    """Tool-defined: TOOL-05 is judged on the 2026 and on the 2025 tools/list, each at its own revision."""
    report, _ = run_suite(spec, respond(Server()))
    by_revision = results(report, "tool_lists_match_the_schema")
    assert set(by_revision) == {MODERN, LEGACY}
    assert all(item.outcome is Outcome.PASSED for item in by_revision.values())
    assert all(set(item.revisions) == {revision} for revision, item in by_revision.items())
    statuses = [status for status in report.requirements() if status.id == "TOOL-05"]
    assert [status.revision for status in statuses] == [MODERN, LEGACY]


def test_a_dual_era_server_leaking_its_2026_envelope_into_2025_fails_hs_16_there_alone(spec: SpecSet) -> None:
    """Spec-mandated (HS-16): the finding exists only because the default run tests 2025-11-25 too, and the
    exit code counts it although 2026-07-28 is clean."""
    report, _ = run_suite(spec, respond(Server("legacy-gets-2026-envelope")))
    verdicts = results(report, NEWER_SHAPES)
    assert verdicts[LEGACY].outcome is Outcome.FAILED
    assert "resultType" in verdicts[LEGACY].reason and "which only 2026-07-28 defines" in verdicts[LEGACY].reason
    assert verdicts[MODERN].outcome is Outcome.NOT_APPLICABLE
    modern_failures = {v.check for v in report.results if v.revision == MODERN and v.outcome is Outcome.FAILED}
    assert modern_failures <= RULE_CONFLICTS
    assert report.exit_code() == 1
    violated = {(v.revision, r) for v in report.failed() if v.check not in RULE_CONFLICTS for r in v.requirements}
    assert violated == {(LEGACY, "HS-16")}
    narrowed, _ = run_suite(spec, respond(Server("legacy-gets-2026-envelope")), spec_version=MODERN)
    assert narrowed.tested == [MODERN] and NEWER_SHAPES not in {v.check for v in narrowed.failed()}


def test_the_unbroken_dual_era_server_passes_hs_16_in_its_2025_session(spec: SpecSet) -> None:
    """Spec-mandated (HS-16): the conformant server's 2025 answers keep to 2025-11-25."""
    report, _ = run_suite(spec, respond(Server()))
    assert results(report, NEWER_SHAPES)[LEGACY].outcome is Outcome.PASSED


def test_a_recording_splits_into_the_runs_revisions_and_is_judged_to_the_same_verdicts(
    spec: SpecSet, tmp_path: Path
) -> None:
    """Tool-defined: one segment per revision in the recording, each opened by its suite-run observation."""
    record = tmp_path / "run.jsonl"
    report, _ = run_suite(spec, respond(Server("legacy-gets-2026-envelope")), record=str(record))
    log = read_recording(record).log
    assert revisions_of(log) == [MODERN, LEGACY]
    parts = segments(log)
    assert [part.facts["revision"] for part in parts] == [MODERN, LEGACY]
    assert all(part.facts["tested"] == [MODERN, LEGACY] for part in parts)
    again, _ = judge_suite_log(log, spec)
    assert sorted((v.check, v.revision, v.outcome) for v in again) == sorted(
        (v.check, v.revision, v.outcome) for v in report.results
    )


def test_an_exclusive_family_has_the_server_to_itself(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: while a family that needs the server alone runs, no other revision's case runs."""
    spans: list[tuple[str, str, float, float]] = []

    def timed(name: str, pause: float) -> Any:
        async def run(ctx: SuiteContext) -> None:
            started = time.perf_counter()
            await asyncio.sleep(pause)
            spans.append((name, ctx.revision.name, started, time.perf_counter()))

        return run

    families = (
        ProbeFamily(name="tools", cases=(), run=timed("first", 0.05)),
        ProbeFamily(name="prompts", cases=(), run=timed("alone", 0.1), exclusive=lambda config: True),
        ProbeFamily(name="resources", cases=(), run=timed("last", 0.05)),
    )
    monkeypatch.setattr(plan, "FAMILIES", families)
    run_suite(spec, respond(Server()))
    alone = [span for span in spans if span[0] == "alone"]
    assert len(alone) == 2 and len(spans) == 6
    for name, revision, start, end in alone:
        others = [span for span in spans if span[:2] != (name, revision)]
        assert all(other_end <= start or other_start >= end for _, _, other_start, other_end in others)
    shared = [span for span in spans if span[0] == "first"]
    assert shared[0][2] < shared[1][3] and shared[1][2] < shared[0][3]  # the shared families did overlap


# -- --modern-only ---------------------------------------------------------------------------------
def test_modern_only_tests_the_modern_revision_and_fails_the_initialize_the_server_serves(spec: SpecSet) -> None:
    """Spec-mandated (VER-15, VER-21 with A21): a server declared modern-only must refuse the handshake."""
    report, _ = run_suite(spec, respond(Server()), modern_only=True)
    assert report.tested == [MODERN]
    assert "declared modern-only" in report.revision_note and "initialize negotiates 2025-11-25" in report.revision_note
    ver_15 = results(report, "refused_initialize_names_supported_versions")[MODERN]
    assert ver_15.outcome is Outcome.FAILED and "declared modern-only" in ver_15.reason
    ver_21 = results(report, "removed_methods_are_unknown_to_modern_requests")[MODERN]
    assert ver_21.outcome is Outcome.PASSED and ver_21.judged == 4  # initialize with a 2026 envelope gets -32601


def test_modern_only_passes_a_server_that_refuses_the_handshake(spec: SpecSet) -> None:
    """Spec-mandated (VER-15): the modern-only server's -32022 names the versions it supports."""
    report, _ = run_suite(spec, respond(Server(handshake=False)), modern_only=True)
    assert report.tested == [MODERN]
    assert results(report, "refused_initialize_names_supported_versions")[MODERN].outcome is Outcome.PASSED
    assert {v.check for v in report.failed()} <= RULE_CONFLICTS


def test_modern_only_with_a_handshake_revision_is_refused_before_the_run(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: --modern-only and --spec-version 2025-11-25 contradict each other."""
    with pytest.raises(ConfigError, match="--modern-only"):
        run_suite(spec, respond(Server()), modern_only=True, spec_version=LEGACY)
    config = tmp_path / "run.yaml"
    config.write_text("modern-only: true\n", encoding="utf-8")
    assert read_config_file(config) == {"modern_only": True}
    config.write_text("modern-only: sometimes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="modern-only"):
        SuiteConfig.from_options({"url": "http://127.0.0.1:9/mcp"}, read_config_file(config))


# -- the parts -------------------------------------------------------------------------------------
def test_shared_turns_overlap_and_an_exclusive_turn_runs_alone() -> None:
    """Tool-defined: an exclusive turn waits for the shared ones in flight and keeps new ones out meanwhile."""
    order: list[str] = []

    async def scenario() -> None:
        turns = Turns()

        async def shared(name: str, pause: float) -> None:
            async with turns.take(exclusive=False):
                order.append(f"{name}+")
                await asyncio.sleep(pause)
                order.append(f"{name}-")

        async def alone() -> None:
            async with turns.take(exclusive=True):
                order.append("x+")
                await asyncio.sleep(0.01)
                order.append("x-")

        first = asyncio.create_task(shared("a", 0.03))
        await asyncio.sleep(0)
        exclusive = asyncio.create_task(alone())
        await asyncio.sleep(0)
        late = asyncio.create_task(shared("b", 0.0))
        await asyncio.wait_for(asyncio.gather(first, exclusive, late), timeout=5)

    asyncio.run(scenario())
    assert order == ["a+", "a-", "x+", "x-", "b+", "b-"]


def test_a_cancelled_exclusive_wait_lets_shared_turns_in_again() -> None:
    """Tool-defined: giving up on an exclusive turn never leaves the gate closed."""

    async def scenario() -> bool:
        turns = Turns()
        async with turns.take(exclusive=False):
            waiting = asyncio.create_task(_hold(turns))
            await asyncio.sleep(0.01)
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
        async with asyncio.timeout(5), turns.take(exclusive=False):
            return True

    assert asyncio.run(scenario())


async def _hold(turns: Turns) -> None:
    async with turns.take(exclusive=True):
        await asyncio.sleep(10)


def test_the_router_opens_segments_in_turn_and_leaves_out_what_arrives_after_one_closed() -> None:
    """Tool-defined: held traffic follows its segment's marker; late traffic is kept out (and counted)."""
    log = ExchangeLog()
    events: list[Event] = []
    router = Router(log, None, events.append)

    def item(ident: str, kind: str = "note") -> Observation:
        return Observation(id=ident, time=0.0, kind=kind, data={"detail": ident})

    router.sink()(item("prelude"))
    first, second = router.sink(MODERN), router.sink(LEGACY)
    second(item("held"))
    router.open(MODERN, item("m1", RUN_OBSERVATION))
    first(item("live"))
    router.close(MODERN)
    first(item("late"))
    router.open(LEGACY, item("m2", RUN_OBSERVATION))
    second(item("after"))
    assert [entry.id for entry in log] == ["prelude", "m1", "live", "m2", "held", "after"]
    assert [entry.id for entry in router.late] == ["late"]


def test_a_recording_with_one_suite_run_observation_is_judged_whole() -> None:
    """Tool-defined: recordings from before runs tested several revisions keep their meaning (one segment, the
    traffic recorded before the observation included)."""
    prelude = Observation(id="o1", time=0.0, kind="note", data={"detail": "selection"})
    marker = Observation(id="o2", time=1.0, kind=RUN_OBSERVATION, data={"revision": MODERN})
    log = ExchangeLog([prelude, marker])
    (whole,) = segments(log)
    assert whole.log is log and whole.facts["revision"] == MODERN
    assert segments(ExchangeLog([prelude]))[0].facts == {}
