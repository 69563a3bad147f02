"""The dispatch index: a message visits only the message checks that declared its method, a log check runs only
over windows holding what it follows, and a declaration keeps away nothing its check's body would have judged.

Every body of a check that declares ``methods`` is run, without the index and without the gates, on every
message of every recording in ``tests/data`` (and of the growth traffic, whose copies answer requests of
other copies' ids) that the index would not route to it; none may return a finding. The same traffic judged
with the declarations and with every declaration removed gives the same verdicts, and the index's counted
work (check calls per message) stays under a bound measured when it was built. Likewise every body of a log
check that declares what it ``follows`` runs over every window (of every recording, and of the growth
traffic cut small) that holds none of it, and may find nothing there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.spec.checks import (
    REGISTRY,
    Check,
    accepts_method,
    follows_any,
    observed,
    routed_method,
    window_follows,
)
from mcp_assay.spec.context import Context
from mcp_assay.spec.engine import Judge, _normalise, registered_checks
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.wire.model import Exchange, Observation
from mcp_assay.wire.traffic import ExchangeLog
from tests.scale.growth import RECORDINGS, traffic

CHECK_CALLS_PER_MESSAGE = 15.0
"""Message checks a message of the growth traffic visits on average: 25.6 before the index, 13.9 with it."""


def _logs() -> Iterator[tuple[str, ExchangeLog]]:
    for path in sorted(RECORDINGS.glob("*.jsonl")):
        yield path.name, read_recording(path).log
    log = ExchangeLog()
    for exchange in traffic(2):
        log.add(exchange)
    yield "growth traffic", log


def _kept_away(spec: SpecSet, checks: Iterable[Check]) -> tuple[list[str], int]:
    """Findings the bodies of ``checks`` return on messages their declaration keeps away, and how many such
    (check, message) pairs were tried."""
    declared = [check for check in checks if check.scope == "message" and check.methods is not None]
    wrong: list[str] = []
    tried = 0
    for name, log in _logs():
        ctx: Context = Judge.of(log, spec, checks=[]).ctx
        for message in log.messages():
            method = routed_method(message, log.request_of)
            for check in declared:
                if accepts_method(check.methods, method):
                    continue
                tried += 1
                ctx.check = check
                try:
                    found = _normalise(check.func(message, ctx))
                except Exception:  # a body may assume what its gates guarantee: it judged nothing here
                    found = []
                finally:
                    ctx.check = None
                if found:
                    wrong.append(f"{check.name} judged a {method} message of {name} ({found[0].outcome.value})")
    return wrong, tried


def test_declared_methods_keep_away_nothing_a_body_judges(spec: SpecSet) -> None:
    wrong, tried = _kept_away(spec, registered_checks())
    assert tried > 10_000  # the declarations kept many messages away, and every one of them was tried
    assert wrong == []


def test_a_declaration_narrower_than_its_body_is_caught(spec: SpecSet) -> None:
    """The test above can fail: a tools/call check declared for prompts/get is caught judging tools/call."""
    narrowed = dataclasses.replace(REGISTRY["tool_results_match_the_schema"], methods=frozenset({"prompts/get"}))
    wrong, _ = _kept_away(spec, [narrowed])
    assert wrong and all("judged a tools/call message" in line for line in wrong)


def test_method_families_and_unknown_methods() -> None:
    assert accepts_method(frozenset({"notifications/*"}), "notifications/progress")
    assert not accepts_method(frozenset({"notifications/*"}), "tools/call")
    assert accepts_method(frozenset({"tools/call"}), None)  # an answer to no captured request visits every check
    assert accepts_method(None, "tools/call")


def _verdicts(spec: SpecSet, checks: list[Check], window: int | None) -> tuple[list[dict[str, object]], Judge]:
    judge = Judge(spec, checks=checks, window=window)
    for exchange in traffic(2):
        judge.add(exchange)
    return [dataclasses.asdict(verdict) for verdict in judge.verdicts()], judge


@pytest.mark.parametrize("window", [None, 120])
def test_the_index_changes_no_verdict_and_counts_fewer_calls(spec: SpecSet, window: int | None) -> None:
    checks = registered_checks()
    undeclared = [dataclasses.replace(check, methods=None) for check in checks]
    routed, judge = _verdicts(spec, checks, window)
    everything, unrouted = _verdicts(spec, undeclared, window)
    assert routed == everything
    assert judge.check_calls < unrouted.check_calls
    assert judge.check_calls / judge.messages_seen <= CHECK_CALLS_PER_MESSAGE


def _windows(spec: SpecSet) -> Iterator[tuple[str, ExchangeLog]]:
    """Every recording whole and cut into windows of 30 exchanges, and the growth traffic in windows of 40."""
    sources: list[tuple[str, list[Exchange], int]] = [
        (path.name, list(read_recording(path).log), 30) for path in sorted(RECORDINGS.glob("*.jsonl"))
    ]
    sources.append(("growth traffic", traffic(2), 40))
    for name, exchanges, size in sources:
        whole = ExchangeLog()
        for exchange in exchanges:
            whole.add(exchange)
        yield name, whole
        cut: list[ExchangeLog] = []
        judge = Judge(spec, checks=[], window=size, on_window=lambda log, _carried, cut=cut: cut.append(log))
        for exchange in exchanges:
            judge.add(exchange)
        yield from ((f"{name}, window {number}", log) for number, log in enumerate([*cut, judge.log]))


def _followed_away(spec: SpecSet, checks: Iterable[Check]) -> tuple[list[str], int]:
    """Findings the bodies of log ``checks`` return over windows holding nothing they follow, and how many such
    (check, window) pairs were tried."""
    declared = [check for check in checks if check.scope == "log" and check.follows is not None]
    wrong: list[str] = []
    tried = 0
    for name, log in _windows(spec):
        present = window_follows(log, log.request_of)
        ctx = Context(log, spec)
        for check in declared:
            if follows_any(check.follows, present):
                continue
            tried += 1
            ctx.check = check
            try:
                found = _normalise(check.func(ctx))
            except Exception:  # a body may assume what its gates guarantee: it judged nothing here
                found = []
            finally:
                ctx.check = None
            if found:
                wrong.append(f"{check.name} found {found[0].outcome.value} over {name}")
    return wrong, tried


def test_what_log_checks_follow_keeps_away_nothing_a_body_judges(spec: SpecSet) -> None:
    wrong, tried = _followed_away(spec, registered_checks())
    assert tried > 1_000
    assert wrong == []


def test_a_log_check_following_too_little_is_caught(spec: SpecSet) -> None:
    """The test above can fail: a listing check said to follow only observations is caught judging listings."""
    narrowed = dataclasses.replace(REGISTRY["tool_names_are_well_formed_and_unique"], follows=frozenset({"x"}))
    wrong, _ = _followed_away(spec, [narrowed])
    assert wrong and all(line.startswith("tool_names_are_well_formed_and_unique found") for line in wrong)


def test_a_window_holds_what_its_exchanges_carry() -> None:
    log = ExchangeLog()
    log.add(Observation(id="o1", time=1.0, kind="listening", data={}))
    present = window_follows(log, log.request_of)
    assert present == {observed("listening")}
    assert follows_any(frozenset({observed("listening")}), present)
    assert not follows_any(frozenset({"tools/list", "notifications/*"}), present)
    assert follows_any(frozenset({"notifications/*"}), frozenset({"notifications/progress"}))
    assert follows_any(None, frozenset())


@pytest.mark.parametrize("window", [None, 40])
def test_following_changes_no_verdict_and_runs_fewer_log_checks(spec: SpecSet, window: int | None) -> None:
    checks = registered_checks()
    undeclared = [dataclasses.replace(check, follows=None) for check in checks]
    followed, judge = _verdicts(spec, checks, window)
    everything, unfollowed = _verdicts(spec, undeclared, window)
    assert followed == everything
    assert judge.log_check_calls <= unfollowed.log_check_calls
    if window is not None:
        assert judge.log_check_calls < unfollowed.log_check_calls
