"""Passes are counted, not built: a rule hands many passes over at once, and the engine makes a finding only for
the pass a verdict keeps; the verdicts are the ones a pass per subject gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from mcp_assay.spec import engine
from mcp_assay.spec.checks import REGISTRY, Check, Finding, Passes, passed, passed_each
from mcp_assay.spec.context import Context
from mcp_assay.spec.engine import Judge, _normalise, registered_checks
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from tests.scale.growth import traffic


def _one_by_one(check: Check) -> Check:
    """``check`` with every pass it hands over at once made a finding of its own, as before counting."""

    def expanded(*args: Any) -> Iterator[Finding]:
        for item in _normalise(check.func(*args)):
            if isinstance(item, Passes):
                yield from (passed(subject, item.detail) for subject in item.subjects)
            else:
                yield item

    return dataclasses.replace(check, func=expanded)


def _verdicts(spec: SpecSet, checks: Iterable[Check], window: int | None) -> list[dict[str, object]]:
    judge = Judge(spec, checks=list(checks), window=window)
    for exchange in traffic(2):
        judge.add(exchange)
    return [dataclasses.asdict(verdict) for verdict in judge.verdicts()]


@pytest.mark.parametrize("window", [None, 40])
def test_counted_passes_give_the_verdicts_of_a_pass_each(spec: SpecSet, window: int | None) -> None:
    checks = registered_checks()
    counted = _verdicts(spec, checks, window)
    assert counted == _verdicts(spec, [_one_by_one(check) for check in checks], window)
    judged = {verdict["check"]: verdict for verdict in counted}
    assert judged["each_request_gets_exactly_one_response"]["judged"] > 100  # the counted rules did pass things


def test_only_the_kept_pass_is_built(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Finding] = []

    class Counted(Finding):
        """A finding that notes it was made (the engine makes the kept pass with its name ``Finding``)."""

        __slots__ = ()

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            built.append(self)

    monkeypatch.setattr(engine, "Finding", Counted)
    every = dataclasses.replace(
        REGISTRY["each_request_gets_exactly_one_response"],
        name="every_message_passes",
        func=lambda ctx: passed_each(message for message in ctx.log.messages()),
    )
    judge = Judge(spec, checks=[every])
    exchanges = traffic(1)
    for exchange in exchanges:
        judge.add(exchange)
    (verdict,) = judge.verdicts()
    assert verdict.outcome is Outcome.PASSED
    assert verdict.judged == judge.messages_seen > 300
    assert len(built) <= 2  # one kept pass (made again only if a later one replaced it), not one per message


def test_passes_of_nothing_count_nothing(spec: SpecSet) -> None:
    def nothing(ctx: Context) -> Passes:
        return passed_each([])

    empty = dataclasses.replace(REGISTRY["each_request_gets_exactly_one_response"], name="nothing", func=nothing)
    judge = Judge(spec, checks=[empty])
    for exchange in traffic(1):
        judge.add(exchange)
    (verdict,) = judge.verdicts()
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert verdict.judged == 0
