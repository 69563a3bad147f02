"""The search's time bound and its hangs, counted in calls (issue 28: ``--explore-time 3`` ran 8.5 s).

A :class:`ToolRun` whose ``send`` answers from a script stands in for a server: what is counted is the
calls shrinking makes and which it reports, never wall time. The tool's server either answers (a crash
on one input: TOOL-15's failure), hangs on one input and then serves again, or stays stuck after the
first hang (every later call hangs too, so no smaller input may be taken for the hang).
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from mcp_assay.cases import ExploreRole
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.explore import draws
from mcp_assay.suite.explore import family as explore_family
from mcp_assay.suite.explore.oracle import NO_ANSWER, Failure, Oracle, Verdict
from mcp_assay.suite.explore.search import HANG_SHRINK_CALLS, INSIDE, Candidate, Found, ToolRun
from mcp_assay.suite.transports import Reply

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}, "count": {"type": "integer"}}}
HANG = Failure(NO_ANSWER, (), "no answer came within --timeout")
CRASH = Failure("tool_failures_are_results_with_is_error", ("TOOL-15",), "a stack trace leaks")
FIRST = {"text": "kkkk\u008b", "count": 3}
PLAIN = Candidate({}, INSIDE, "plain", "the plainest valid arguments")


class ScriptedRun(ToolRun):
    """A tool whose answers come from ``fails``: the arguments in, the failure (or None) out."""

    def __init__(self, fails: Any, deadline: float, *, stuck_after_hang: bool = False) -> None:
        router = SimpleNamespace(recorded=lambda buffer: [])
        ctx = cast(SuiteContext, SimpleNamespace(router=router, buffer=None))
        super().__init__(ctx, "echo", SCHEMA, 7, cast(Oracle, None), deadline, budget=50)
        self.fails = fails
        self.stuck_after_hang = stuck_after_hang
        self.hung = False
        self.sent: list[tuple[ExploreRole, dict[str, Any]]] = []
        self.hang_s = 0.0
        """How long a hanging call takes (the client's --timeout)."""

    async def send(self, candidate: Candidate, role: ExploreRole, **story: Any) -> tuple[Verdict, Reply | None]:
        self.sent.append((role, candidate.arguments))
        self.calls += 1
        failure = HANG if self.hung and self.stuck_after_hang else self.fails(candidate.arguments)
        if failure is HANG:
            self.hung = True
            await asyncio.sleep(self.hang_s)
            return Verdict((HANG,), answered=False), None
        return Verdict(() if failure is None else (failure,)), None


def _non_ascii(arguments: dict[str, Any]) -> bool:
    return not str(arguments.get("text", "")).isascii()


def _roles(run: ScriptedRun) -> list[ExploreRole]:
    return [role for role, _ in run.sent]


def test_a_crash_inside_the_schema_is_shrunk_to_its_cause_and_reported_once() -> None:
    """Issue 28 (TOOL-15): the non-ASCII crash shrinks to the one character that causes it, and that is reported."""
    run = ScriptedRun(lambda arguments: CRASH if _non_ascii(arguments) else None, time.monotonic() + 60)
    run.found.append(Found((CRASH,), Candidate(dict(FIRST), INSIDE, "drawn")))
    asyncio.run(run.shrink_all())
    found = run.found[0]
    assert found.shrunk is not None and found.shrunk.arguments == {"text": "\u008b"}, found.shrunk
    assert found.reported is not None and CRASH.name in found.reported.names
    assert _roles(run).count(ExploreRole.REPORTED) == 1 and run.sent[-1][1] == {"text": "\u008b"}


def test_nothing_is_shrunk_or_reported_once_the_bound_has_passed() -> None:
    """Issue 28 (--explore-time): past the bound no call is sent; the failure stands as the search found it."""
    run = ScriptedRun(lambda arguments: CRASH, time.monotonic() - 1)
    run.found.append(Found((CRASH,), Candidate(dict(FIRST), INSIDE, "drawn")))
    asyncio.run(run.shrink_all())
    assert run.sent == [] and run.found[0].shrunk is None and run.found[0].reported is None


def test_a_hang_reached_at_the_bound_is_not_sent_again() -> None:
    """Issue 28: a reported hang would wait a whole --timeout past the bound, so a hang whose shrinking reached the
    bound is left as the search found it (each hanging try here takes 0.3 s of a 0.2 s bound)."""
    run = ScriptedRun(lambda arguments: HANG if _non_ascii(arguments) else None, time.monotonic() + 0.2)
    run.hang_s = 0.3
    run.found.append(Found((HANG,), Candidate(dict(FIRST), INSIDE, "edge")))
    asyncio.run(run.shrink_all())
    assert _roles(run) == [ExploreRole.SHRINK], run.sent  # one try, then the bound: no reported call
    found = run.found[0]
    assert found.reported is None and found.shrunk is not None
    assert found.shrunk.stopped == "the exploration's time bound was reached"


def test_a_hang_is_shrunk_while_the_server_still_answers_its_plainest_call() -> None:
    """Tool-defined: a server that hangs on one input only serves its plainest call between tries, so smaller inputs
    that still hang are taken (within HANG_SHRINK_CALLS tries, each a --timeout)."""
    run = ScriptedRun(lambda arguments: HANG if _non_ascii(arguments) else None, time.monotonic() + 60)
    run.plainest = PLAIN
    run.found.append(Found((HANG,), Candidate(dict(FIRST), INSIDE, "edge")))
    asyncio.run(run.shrink_all())
    found = run.found[0]
    assert found.shrunk is not None and found.shrunk.steps and not found.shrunk.stopped.startswith("the server")
    assert found.shrunk.calls <= HANG_SHRINK_CALLS
    assert _non_ascii(found.shrunk.arguments) and found.reported is not None and NO_ANSWER in found.reported.names


def test_a_server_stuck_after_the_first_hang_makes_no_smaller_input_look_like_the_hang() -> None:
    """Issue 28 (the cache kept {"text": "k"}, answered, for a hang on "k\\x8b"): once the plainest call hangs too, the
    server is stuck, shrinking stops and the input reported is the one that hung first."""
    run = ScriptedRun(
        lambda arguments: HANG if _non_ascii(arguments) else None, time.monotonic() + 60, stuck_after_hang=True
    )
    run.plainest = PLAIN
    run.hung = False
    run.found.append(Found((HANG,), Candidate(dict(FIRST), INSIDE, "edge")))
    asyncio.run(run.shrink_all())
    found = run.found[0]
    assert found.shrunk is not None and found.shrunk.arguments == FIRST and found.shrunk.steps == ()
    assert found.shrunk.stopped == "the server no longer answered its plainest call"
    assert [arguments for role, arguments in run.sent if role is ExploreRole.SHRINK].count(PLAIN.arguments) == 1
    kept = explore_family._kept(found)
    assert [example.arguments for example in kept] == [FIRST], kept  # never a smaller input the stuck server hid


def test_drawing_gets_a_share_of_the_time_left_and_a_slow_draw_is_left_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 28 (a ~7 s CPU-bound stall drawing): a draw still running at its share of the bound is left to stop at
    its own deadline, and the search goes on without its arguments, saying so."""
    deadlines: list[float | None] = []

    def slow_draw(schema: Any, count: int, seed: int, deadline: float | None = None) -> draws.Drawn:
        deadlines.append(deadline)
        time.sleep(0.5)
        return draws.Drawn(({"text": "late"},), "")

    monkeypatch.setattr(draws, "draw", slow_draw)
    run = ScriptedRun(lambda arguments: None, time.monotonic() + 0.3)
    drawn = asyncio.run(explore_family._drawn(SCHEMA, run))
    assert drawn.arguments == () and "share of --explore-time" in drawn.reason
    assert deadlines and deadlines[0] is not None and deadlines[0] <= run.deadline
    quick = ScriptedRun(lambda arguments: None, time.monotonic() + 60)
    monkeypatch.setattr(draws, "draw", lambda *args, **kwargs: draws.Drawn(({"text": "a"},), ""))
    assert asyncio.run(explore_family._drawn(SCHEMA, quick)).arguments == ({"text": "a"},)


def test_each_tool_gets_an_equal_part_of_the_time_left() -> None:
    """Issue 28 (--explore-time 3: one tool got one call): the first of three tools may take a third of the time
    left, the last all of it, and past the bound none."""
    now = time.monotonic()
    assert now + 1.5 <= explore_family._share(now + 6, 3) <= now + 2.5
    last = explore_family._share(now + 6, 1)
    assert now + 5.5 <= last <= now + 6.5
    assert explore_family._share(now - 5, 2) <= time.monotonic()
