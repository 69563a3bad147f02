"""Judging a long capture in windows: the same verdicts as judging it whole, in bounded memory.

Tool-defined (the scale issue). The proxy, the tap and ``validate`` judge in windows of a few
thousand exchanges and drop each window once judged, carrying over only what later traffic is
judged against. These tests use small windows, so a capture of a few thousand exchanges is cut
many times.
"""

from __future__ import annotations

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import Judge
from mcp_assay.wire.model import Exchange
from tests.scale.growth import traffic

WINDOW = 120


@pytest.fixture(scope="module")
def capture() -> list[Exchange]:
    return traffic(4)


def test_windowed_judging_reaches_the_verdicts_of_the_whole_log(spec: SpecSet, capture: list[Exchange]) -> None:
    whole = Judge(spec)
    windowed = Judge(spec, window=WINDOW)
    for exchange in capture:
        whole.add(exchange)
        windowed.add(exchange)
    assert windowed.windows >= 4, "the capture was cut many times"
    expected = {verdict.check: verdict.outcome for verdict in whole.verdicts()}
    got = {verdict.check: verdict.outcome for verdict in windowed.verdicts()}
    assert got == expected
    assert windowed.exchanges_seen == whole.exchanges_seen


def test_the_judge_holds_one_window_whatever_the_capture_length(spec: SpecSet, capture: list[Exchange]) -> None:
    judge = Judge(spec, window=WINDOW)
    held = []
    for exchange in capture:
        judge.add(exchange)
        held.append(len(judge.log))
    assert judge.windows >= 4
    assert max(held) <= 2 * WINDOW + judge.tail + 100, "a window plus what it carries, never the whole capture"
    assert len(capture) > 4 * max(held)


def test_a_window_hands_its_audit_and_traffic_to_the_caller_before_it_is_dropped(
    spec: SpecSet, capture: list[Exchange]
) -> None:
    seen: list[int] = []
    judge = Judge(spec, window=WINDOW, on_window=lambda log, carried: seen.append(len(log) - len(carried)))
    for exchange in capture:
        judge.add(exchange)
    assert len(seen) == judge.windows
    assert sum(seen) + len(judge.log) - len(judge.carried_ids) == len(capture)
