"""Judging grows linearly with the traffic: every check, and the engine around them.

Tool-defined (the scale issue's bar): the work of judging 1, 2 and 3 copies of the project's
recorded sessions is counted (lines of rule code per check, function calls of the engine), never
timed. For linear cost the second copy adds as much work as the third; for quadratic cost the
third adds far more (the step from 2 to 3 copies costs 5/3 of the step from 1 to 2). A check whose
marginal work grows by more than :data:`LIMIT` fails.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY, Check, Every, Finding, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.wire.jsonrpc import Message
from tests.scale.growth import engine_work, traffic, work_per_check

SCRATCH = Every("a scratch check of this test reads everything")

LIMIT = 1.25
"""How much more the third copy may cost than the second (linear: 1.0; n log n: a little more; quadratic: 1.67)."""
FLOOR = 50
"""Checks doing fewer lines than this per copy are too small to measure."""


def marginal(small: int, middle: int, large: int) -> float:
    first, second = middle - small, large - middle
    return second / first if first > 0 else (0.0 if second <= 0 else float("inf"))


@pytest.fixture(scope="module")
def work(spec: SpecSet) -> list[dict[str, int]]:
    # one pass first, not counted: schema lookups cached for the process (``functools.cache``) are work
    # done once, and counted in the first measurement only they would make the second step look steeper
    work_per_check(spec, traffic(1))
    return [dict(work_per_check(spec, traffic(copies))) for copies in (1, 2, 3)]


def test_every_check_costs_linear_work_in_the_traffic(work: list[dict[str, int]]) -> None:
    small, middle, large = work
    assert len(large) > 150, "most checks did work on the sample traffic"
    grown = {
        name: round(marginal(small.get(name, 0), middle.get(name, 0), large[name]), 2)
        for name in large
        if name != "engine" and middle.get(name, 0) - small.get(name, 0) >= FLOOR
    }
    assert len(grown) > 100
    too_fast = {name: ratio for name, ratio in grown.items() if ratio > LIMIT}
    assert not too_fast, f"checks whose work grows faster than the traffic: {too_fast}"


def test_the_engine_costs_linear_work_in_the_traffic(spec: SpecSet) -> None:
    small, middle, large = (engine_work(spec, traffic(copies)) for copies in (1, 2, 3))
    assert marginal(small, middle, large) <= LIMIT, (small, middle, large)


def _quadratic(ctx: Context) -> Iterator[Finding]:
    """A deliberately quadratic rule: every message compared with every earlier one."""
    seen: list[Message] = []
    for message in ctx.log.messages():
        for earlier in seen:
            if earlier.id == message.id and earlier.time > message.time:
                break
        seen.append(message)
        yield passed(message)


def test_the_measure_catches_a_quadratic_check(spec: SpecSet) -> None:
    """The test above can fail: a rule comparing each message with every earlier one is caught."""
    check_name = "every_message_compared_with_every_earlier_one"
    _quadratic.__name__ = check_name
    try:
        log_check(
            requirements="RPC-04",
            level=REGISTRY["request_ids_are_not_reused"].level,
            subject="messages",
            follows=SCRATCH,
        )(_quadratic)
        check: Check = REGISTRY[check_name]
        root = __file__
        counts = [work_per_check(spec, traffic(copies), checks=[check], root=root)[check_name] for copies in (1, 2, 3)]
    finally:
        REGISTRY.pop(check_name, None)
    assert marginal(*counts) > LIMIT, counts
