"""Judging in units gives what one judge gives: shares of a long recording, recordings one by one, any order.

Tool-defined (issue 31). ``validate`` cuts its work into units (a recording, or a share of a long one)
that any process may judge; merged, their findings must be one judge's findings, byte for byte, and
what the merging process holds must not grow with the number of recordings. Small windows cut the
recorded sessions many times, so the shares really split the work.
"""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.recording.records import RECORDING_FORMAT, records_of
from mcp_assay.report.sdks import AUTO
from mcp_assay.scale.local import judge_here
from mcp_assay.scale.locations import Recording
from mcp_assay.scale.reduce import Reduction, reduce_units
from mcp_assay.scale.units import Unit, UnitResult, judge_unit, plan_units
from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import Judge, registered_checks
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import Exchange
from tests.scale.growth import package_lines, traffic
from tests.scale.test_growth import LIMIT, marginal

WINDOW = 60
DATA = Path(__file__).resolve().parents[1] / "data" / "recordings"


def _write(path: Path, exchanges: list[Exchange]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "recording", "format": RECORDING_FORMAT, "source": "test"}) + "\n")
        for exchange in exchanges:
            for record in records_of(exchange):
                handle.write(json.dumps(record) + "\n")
    return path


@pytest.fixture(scope="module")
def long_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(tmp_path_factory.mktemp("units") / "long.jsonl", traffic(2))


@pytest.fixture(scope="module")
def whole(spec: SpecSet, long_recording: Path) -> UnitResult:
    """The long recording judged as one unit."""
    return judge_unit(Unit(str(long_recording), 0, window=WINDOW), spec, None)


@pytest.fixture(scope="module")
def in_shares(spec: SpecSet, long_recording: Path) -> list[UnitResult]:
    """The long recording judged in three shares by a pool of two processes."""
    return list(judge_here(_shares(long_recording, 3), spec, None, 2))


def _report(results: list[UnitResult], spec: SpecSet, described: list[str]) -> dict[str, Any]:
    data = reduce_units(results, spec=spec, checks=None, sdk=AUTO, described=described).to_json()
    data.pop("generated_at")
    return data


def _shares(path: Path, shares: int, index: int = 0, prefix: str = "") -> list[Unit]:
    return [Unit(str(path), index, prefix, share, shares, WINDOW) for share in range(shares)]


def test_the_shares_of_a_recording_find_what_one_judge_finds(
    spec: SpecSet, long_recording: Path, whole: UnitResult, in_shares: list[UnitResult]
) -> None:
    expected = _report([whole], spec, [str(long_recording)])
    assert expected["stats"]["windows"] >= 6, "the recording was cut into many windows"
    assert expected["summary"]["failed"] and expected["summary"]["passed"], "failures and passes to merge"
    results = in_shares
    assert _report(results, spec, [str(long_recording)]) == expected
    calls = [result.partial.counts["check_calls"] for result in results]
    assert sum(calls) == whole.partial.counts["check_calls"]
    assert max(calls) < 0.75 * whole.partial.counts["check_calls"], "each share judged a part of the messages"


def test_a_judge_of_one_share_is_the_judge_of_the_whole_when_the_share_is_all(spec: SpecSet, whole: UnitResult) -> None:
    """The verdicts a unit gives are those of the engine's own judge, fed the recording window by window."""
    judge = Judge(spec, window=WINDOW)
    for exchange in traffic(2):
        judge.add(exchange)
    direct = {verdict.check: verdict for verdict in judge.verdicts()}
    report = reduce_units([whole], spec=spec, checks=None, sdk=AUTO, described=["x"])
    for verdict in report.results:
        theirs = direct[verdict.check]
        assert (verdict.outcome, verdict.reason, verdict.judged, verdict.violations, verdict.evidence) == (
            theirs.outcome, theirs.reason, theirs.judged, theirs.violations, theirs.evidence,
        ), verdict.check  # fmt: skip


def test_results_in_any_order_and_across_processes_give_the_same_report(
    spec: SpecSet, in_shares: list[UnitResult]
) -> None:
    units = [
        *_shares(DATA / "broken-2026-07-28.jsonl", 1, 1, "f2:"),
        *_shares(DATA / "python-sdk-2025-11-25.jsonl", 1, 2, "f3:"),
    ]
    results = [*in_shares, *(judge_unit(unit, spec, None) for unit in units)]
    described = [result.unit.location for result in results if result.unit.share == 0]
    expected = _report(results, spec, described)
    shuffled = [pickle.loads(pickle.dumps(result)) for result in results]
    for seed in range(3):
        random.Random(seed).shuffle(shuffled)
        assert _report(shuffled, spec, described) == expected


def test_recordings_judged_apart_add_up_in_the_report(spec: SpecSet) -> None:
    """Each recording is a capture of its own: the report counts what each one's judge counted, and fails what
    either failed; the evidence of a failure names the file its exchange came from."""
    names = ["broken-2026-07-28.jsonl", "python-sdk-2026-07-28.jsonl"]
    alone = [
        {v["check"]: v for v in _report([judge_unit(Unit(str(DATA / name), 0), spec, None)], spec, [name])["results"]}
        for name in names
    ]
    both = _report(
        [judge_unit(Unit(str(DATA / name), index, f"f{index + 1}:"), spec, None) for index, name in enumerate(names)],
        spec,
        names,
    )
    assert both["stats"]["exchanges"] > 0
    for verdict in both["results"]:
        parts = [each[verdict["check"]] for each in alone]
        assert verdict["judged"] == sum(part["judged"] for part in parts), verdict["check"]
        assert verdict["violations"] == sum(part["violations"] for part in parts)
        if any(part["outcome"] == Outcome.FAILED.value for part in parts):
            assert verdict["outcome"] == Outcome.FAILED.value
            assert all(item["exchange"].startswith(("f1:", "f2:")) for item in verdict["evidence"] if item["exchange"])


def test_the_reduction_holds_no_more_audit_lines_than_the_report_keeps(spec: SpecSet) -> None:
    """What the merging process holds does not grow with the number of recordings: of the audit lines (the one
    part of a result that grows with its recording) it keeps at most what the report will show."""
    one = judge_unit(Unit(str(DATA / "python-sdk-2026-07-28.jsonl"), 0), spec, None)
    lines = len(one.audit)
    assert lines > 5
    reduction = Reduction(limit=3 * lines)
    order = list(range(40))
    random.Random(1).shuffle(order)
    held = []
    for index in order:
        unit = Unit(one.unit.location, index, f"f{index + 1}:")
        reduction.add(pickle.loads(pickle.dumps(UnitResult(unit=unit, partial=one.partial.placed(index),
                                                            audit=one.audit, audit_total=len(one.audit)))))  # fmt: skip
        held.append(reduction.held_audit_lines())
    assert max(held) <= reduction.limit
    report = reduction.report(spec=spec, checks=None, sdk=AUTO, described=["x"])
    assert len(report.audit) == reduction.limit
    assert "latest" in " ".join(report.notes)


def test_a_long_recording_among_short_ones_is_cut_into_shares() -> None:
    long = Recording("long.jsonl", 400_000_000)
    short = [Recording(f"s{index}.jsonl", 1_000_000) for index in range(10)]
    units = plan_units([long, *short], 4)
    assert [unit.shares for unit in units if unit.location == "long.jsonl"] == [4, 4, 4, 4]
    assert all(unit.shares == 1 for unit in units if unit.location != "long.jsonl")
    assert [unit.prefix for unit in units if unit.share == 0] == [f"f{index}:" for index in range(1, 12)]
    assert all(unit.shares == 1 for unit in plan_units([long, *short], 1))
    many = plan_units([Recording(f"r{index}.jsonl", 5_000_000) for index in range(100)], 2)
    assert len(many) == 100, "many recordings of a size: one unit each"
    assert [unit.shares for unit in plan_units([Recording("small.jsonl", 1_000_000)], 8)] == [1]


def test_reducing_does_the_same_work_for_every_recording_more(spec: SpecSet) -> None:
    """Counted work, never time: folding in the 41st to 60th recordings costs what the 21st to 40th did, whatever
    order the results come in (the audit lines are trimmed as they come, each line at most once). One check is
    judged, so the merging of tallies does not hide the rest of the reduction's work."""
    checks = registered_checks()[:1]
    one = judge_unit(Unit(str(DATA / "python-sdk-2026-07-28.jsonl"), 0), spec, checks)
    limit = 3 * len(one.audit)

    def reduce(count: int) -> int:
        order = list(range(count))
        random.Random(count).shuffle(order)
        results = [
            UnitResult(
                unit=Unit(one.unit.location, index, f"f{index + 1}:"),
                partial=one.partial.placed(index),
                sightings=one.sightings,
                audit=one.audit,
                audit_total=len(one.audit),
                transports=one.transports,
            )  # fmt: skip
            for index in order
        ]
        reduction = Reduction(limit=limit)

        def work() -> None:
            for result in results:
                reduction.add(result)
            reduction.report(spec=spec, checks=checks, sdk=AUTO, described=["x"])

        return package_lines(work)

    reduce(2)  # once first, not counted: what is cached for the process
    work = [reduce(count) for count in (20, 40, 60)]
    assert work[1] > work[0], "the work was counted"
    assert marginal(*work) <= LIMIT, f"lines executed for 20, 40, 60 recordings: {work}"
