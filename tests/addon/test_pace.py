"""Judging keeps to a share of one core while the traffic flows, and catches up when it pauses.

Tool-defined (issue 31, a proxy that never falls behind): where a machine's cores are hyperthreads of one,
judging on the spare one slows the forwarding even at an idle priority, so the worker's judging thread rests
whenever its CPU time in the current second is ahead of :data:`~mcp_assay.addon.sharing.TRAFFIC_SHARE` of
the wall-clock time; a pause in the traffic, or its end, lifts the budget. The clocks are driven by hand here:
what is asserted is how long it rests, never how long anything took.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from mcp_assay.addon.backlog import JudgingBacklog
from mcp_assay.addon.sharing import FLOWING_S, Pace


class Clocks:
    """A wall clock and a thread CPU clock moved by the test; rests move the wall clock."""

    def __init__(self) -> None:
        self.wall = 100.0
        self.cpu = 5.0
        self.rests: list[float] = []

    def rest(self, seconds: float) -> None:
        self.rests.append(seconds)
        self.wall += seconds

    def pace(self, ended: list[bool], share: float = 0.1) -> Pace:
        return Pace(lambda: ended[0], share=share, wall=lambda: self.wall, cpu=lambda: self.cpu, rest=self.rest)


def test_while_the_traffic_flows_judging_rests_until_it_is_back_within_its_share() -> None:
    clocks, ended = Clocks(), [False]
    pace = clocks.pace(ended)
    pace.after_record(clocks.wall)  # the window begins
    clocks.wall += 0.01
    clocks.cpu += 0.004  # 4 ms of judging in 10 ms: 40 ms of wall-clock time are its share's worth
    pace.after_record(clocks.wall)
    assert [round(rest, 6) for rest in clocks.rests] == [0.03]
    clocks.cpu += 0.0005  # half a millisecond more, in a window 40 ms long: 45 ms are owed, 5 ms more
    pace.after_record(clocks.wall)
    assert round(clocks.rests[-1], 6) == 0.005
    assert round(pace.rested, 6) == 0.035


def test_judging_within_its_share_never_rests() -> None:
    clocks, ended = Clocks(), [False]
    pace = clocks.pace(ended)
    pace.after_record(clocks.wall)
    for _ in range(50):
        clocks.wall += 0.01
        clocks.cpu += 0.0009  # 9% of the time
        pace.after_record(clocks.wall)
    assert clocks.rests == [] and pace.rested == 0.0


def test_one_rest_is_bounded_so_the_end_of_the_traffic_is_noticed_soon() -> None:
    clocks, ended = Clocks(), [False]
    pace = clocks.pace(ended)
    pace.after_record(clocks.wall)
    clocks.cpu += 0.5  # a record that took half a second: five seconds owed
    pace.after_record(clocks.wall)
    assert clocks.rests == [0.1]


def test_a_pause_in_the_traffic_or_its_end_lifts_the_budget() -> None:
    clocks, ended = Clocks(), [False]
    pace = clocks.pace(ended)
    arrived = clocks.wall
    pace.after_record(arrived)
    clocks.wall += FLOWING_S + 0.01  # nothing arrived since: judging catches up at full speed
    clocks.cpu += FLOWING_S
    pace.after_record(arrived)
    assert clocks.rests == []
    pace.after_record(clocks.wall)  # the traffic flows again: a fresh window, no old debt
    clocks.wall += 0.01
    clocks.cpu += 0.001
    pace.after_record(clocks.wall)
    assert clocks.rests == []
    ended[0] = True
    clocks.cpu += 1.0
    pace.after_record(clocks.wall)
    assert clocks.rests == []  # the traffic ended: the report comes as soon as it can


def test_the_backlog_paces_after_each_record_it_judged_with_when_the_latest_arrived() -> None:
    judged: list[Mapping[str, Any]] = []
    calls: list[float] = []
    done = threading.Event()

    class Judge:
        def judge_only(self, record: Mapping[str, Any]) -> None:
            judged.append(record)

    def pace(last_arrival: float) -> None:
        calls.append(last_arrival)
        if len(calls) == 3:
            done.set()

    backlog = JudgingBacklog(Judge(), records=100, pace=pace)
    for ident in range(3):
        assert backlog.offer({"type": "http", "x": str(ident), "t": 1.0}, 10)
    assert done.wait(10)
    backlog.close()
    assert len(judged) == 3 and len(calls) == 3
    assert all(arrival <= later for arrival, later in zip(calls, calls[1:], strict=False))
