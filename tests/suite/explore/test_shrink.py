"""The bounded shrink loop (mcp_assay.suite.explore.shrink), driven by predicates instead of a live server."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from mcp_assay.suite.explore.shrink import Shrunk, candidates, shrink


def run(
    arguments: dict[str, Any],
    fails: Callable[[dict[str, Any]], bool],
    *,
    allowed: Callable[[dict[str, Any]], bool] = lambda arguments: True,
    max_calls: int = 100,
    deadline: float = float("inf"),
    clock: Callable[[], float] = lambda: 0.0,
) -> tuple[Shrunk, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    async def still_fails(candidate: dict[str, Any]) -> bool:
        sent.append(candidate)
        return fails(candidate)

    found = asyncio.run(
        shrink(arguments, still_fails, allowed=allowed, max_calls=max_calls, deadline=deadline, clock=clock)
    )
    return found, sent


def test_properties_that_play_no_part_are_removed() -> None:
    """Tool-defined: the shrunk arguments hold only what the failure needs, each removal a recorded step."""
    found, _ = run({"status": "archived", "limit": 17, "query": "abc"}, lambda a: a.get("status") == "archived")
    assert found.arguments == {"status": "archived"}
    assert found.steps == ("removed limit", "removed query")
    assert found.stopped == ""


def test_a_long_string_is_cut_to_the_shortest_length_that_still_fails() -> None:
    """Tool-defined: a fault past 64 characters shrinks to 65 characters, by halves, quarters and eighths."""
    found, sent = run({"query": "x" * 200}, lambda a: len(a.get("query", "")) > 64)
    assert found.arguments == {"query": "x" * 65}
    assert len(sent) < 30
    assert found.steps[0] == "query: 200 characters → 100 characters"


def test_non_ascii_text_shrinks_to_the_one_character_that_matters() -> None:
    """Tool-defined: text outside ASCII keeps its failing character and loses the rest."""
    found, _ = run({"query": "Grüße, 世界"}, lambda a: not str(a.get("query", "")).isascii())
    assert len(found.arguments["query"]) == 1 and not found.arguments["query"].isascii()


def test_numbers_move_toward_zero_while_the_failure_holds() -> None:
    """Tool-defined: an out-of-bounds limit shrinks to the smallest value that is still out of bounds."""
    found, _ = run({"limit": 51_234}, lambda a: a.get("limit", 1) > 50)
    assert found.arguments == {"limit": 51}
    found, _ = run({"limit": -7}, lambda a: a.get("limit", 1) < 1)
    assert found.arguments == {"limit": 0}


def test_a_candidate_that_changes_the_arguments_standing_is_never_sent() -> None:
    """Tool-defined: shrinking keeps a valid call valid (here: the required query stays)."""
    found, sent = run({"query": "abc", "limit": 5}, lambda a: True, allowed=lambda a: "query" in a)
    assert all("query" in candidate for candidate in sent)
    assert found.arguments == {"query": ""}


def test_shrinking_stops_at_its_call_budget_and_says_so() -> None:
    """Tool-defined: bounded in calls: no more calls than allowed, and the reason is kept for the report."""
    found, sent = run({"a": 1, "b": 2, "c": 3, "d": "x" * 50}, lambda a: True, max_calls=3)
    assert len(sent) == 3
    assert found.stopped == "its budget of 3 calls was spent"


def test_shrinking_stops_at_the_deadline_and_says_so() -> None:
    """Tool-defined: bounded in time: past the exploration's deadline nothing more is sent."""
    ticks = itertools.count()
    found, sent = run({"a": 1, "b": 2, "c": 3}, lambda a: True, deadline=2, clock=lambda: float(next(ticks)))
    assert len(sent) == 2
    assert found.stopped == "the exploration's time bound was reached"


def test_arguments_that_no_longer_fail_when_smaller_stay_as_they_are() -> None:
    """Tool-defined: a failure that needs everything it was sent with is reported as it was drawn."""
    original = {"a": 1, "b": "x"}
    found, sent = run(original, lambda a: a == original)
    assert found.arguments == original and found.steps == ()
    assert sent and original not in sent


def test_candidates_are_the_same_every_time() -> None:
    """Tool-defined: the same failure shrinks the same way, so a seed reproduces the whole report."""
    value = {"q": "Grüße" * 3, "n": [1, 2, 3], "f": 2.5, "b": True, "o": {"k": 9}}
    assert list(candidates(value)) == list(candidates(value))
    words = [step for step, _ in candidates(value)]
    assert words[:5] == ["removed b", "removed f", "removed n", "removed o", "removed q"]
    assert "b: true → false" in words and "o.k: 9 → 0" in words and "n: 3 items → 0" in words
