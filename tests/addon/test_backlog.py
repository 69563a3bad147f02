"""The judging worker's backlog: bounded, judged as a prefix of whole exchanges, its shortfall counted.

Tool-defined: what the worker holds between recording a record and judging it never passes its bound
(twice it for the exchanges judging had begun); once a new exchange would pass it, that exchange and
every one after it are left to ``validate`` and counted, while the exchanges judging had begun are still
judged whole. Counted work, never wall time: the judging here waits until the test lets it go.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from mcp_assay.addon.backlog import JudgingBacklog


class _HeldJudge:
    """Judges nothing until released; keeps what it was given, in order."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.judged: list[Mapping[str, Any]] = []

    def judge_only(self, record: Mapping[str, Any]) -> None:
        self.release.wait(10)
        self.judged.append(record)


def _exchange(ident: str, t: float) -> list[dict[str, Any]]:
    return [
        {"type": "http", "x": ident, "t": t},
        {"type": "response", "x": ident, "t": t},
        {"type": "body", "x": ident, "t": t},
        {"type": "end", "x": ident, "t": t},
    ]


def test_a_backlog_within_its_bound_judges_everything_in_order() -> None:
    judge = _HeldJudge()
    backlog = JudgingBacklog(judge, records=100)
    records = [record for n in range(20) for record in _exchange(f"x{n}", float(n))]
    assert all(backlog.offer(record, 10) for record in records)
    judge.release.set()
    backlog.close()
    assert judge.judged == records
    assert not backlog.shortfall and backlog.status()["unjudged"] == 0
    assert backlog.status()["judged"] == backlog.status()["received"] == 80


def test_a_backlog_that_cannot_keep_up_holds_its_bound_and_leaves_whole_exchanges_to_validate() -> None:
    judge = _HeldJudge()
    backlog = JudgingBacklog(judge, records=10)
    begun = [record for n in range(2) for record in _exchange(f"b{n}", 1.0)[:1]]  # two requests begun
    for record in begun:
        assert backlog.offer(record, 10)
    flood = [record for n in range(200) for record in _exchange(f"x{n}", 2.0 + n)]
    for record in flood:
        backlog.offer(record, 10)
        assert backlog.status()["queued"] <= 10  # the bound holds whatever the traffic
    for ident in ("b0", "b1"):  # the exchanges judging began still end in judging (within twice the bound)
        for record in _exchange(ident, 900.0)[1:]:
            assert backlog.offer(record, 10)
    judge.release.set()
    backlog.close()
    judged_idents = [record["x"] for record in judge.judged]
    # a prefix of whole exchanges: every exchange judged has all four records, in the order fed
    assert all(judged_idents.count(ident) == 4 for ident in set(judged_idents))
    assert judged_idents[:1] == ["b0"]
    status = backlog.status()
    assert status["most_queued"] <= 2 * 10
    assert status["received"] == 2 + 800 + 6
    assert status["judged"] + status["unjudged_records"] == status["received"]
    left = {record["x"] for record in flood} - set(judged_idents)
    assert backlog.shortfall.exchanges == len(left) > 0
    assert backlog.shortfall.since is not None and backlog.shortfall.since >= 2.0
    assert not backlog.torn()


def test_an_exchange_begun_that_would_double_the_bound_is_torn_and_says_so() -> None:
    judge = _HeldJudge()
    backlog = JudgingBacklog(judge, records=4)
    assert backlog.offer({"type": "http", "x": "s", "t": 1.0}, 10)
    events = [{"type": "event", "x": "s", "t": 1.0, "data": "{}"} for _ in range(20)]  # a long stream
    kept = [backlog.offer(event, 10) for event in events]
    assert kept.count(True) < len(events) and backlog.status()["most_queued"] <= 8
    assert backlog.torn()
    judge.release.set()
    backlog.close()


def test_a_backlog_told_to_stop_judges_nothing_more_and_counts_what_it_skipped() -> None:
    judge = _HeldJudge()
    stop = threading.Event()
    backlog = JudgingBacklog(judge, records=100, stop=lambda: "hurried" if stop.is_set() else "")
    for record in _exchange("x", 1.0):
        backlog.offer(record, 10)
    stop.set()
    judge.release.set()
    backlog.close()
    assert len(judge.judged) + backlog.unread == 4 and backlog.unread >= 3
