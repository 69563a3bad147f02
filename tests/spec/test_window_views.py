"""What a window's log checks share is found once per window and question, not once per check (counted work).

Each test counts the walks behind a shared view: two checks asking the same question of one window's log make
one walk, a check asking another question (or the log grown since) makes its own, and a released window keeps
nothing. Without the view each check walks again, and these counts fail."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY, Check
from mcp_assay.spec.context import Context
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import log_of, modern_call


def _counted[T](owner: Any, name: str, calls: list[str]) -> None:
    """Replace ``owner.name`` by a wrapper noting each call in ``calls``."""
    original: Callable[..., T] = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> T:
        calls.append(name)
        return original(*args, **kwargs)

    setattr(owner, name, counting)


def _traffic() -> ExchangeLog:
    return log_of(*(modern_call("tools/list", {}, {"tools": []}, ident=n) for n in range(1, 6)))


def _twins(*, side: Side | None = None) -> tuple[Check, Check]:
    """Two registered log checks with one gate, side and off-version flag (so one question of the log)."""
    by_question: dict[Any, Check] = {}
    for check in REGISTRY.values():
        if check.scope != "log" or (side is not None and check.side is not side):
            continue
        question = (check.gate, check.side, check.off_version)
        if question in by_question:
            return by_question[question], check
        by_question[question] = check
    raise AssertionError("no two log checks share a gate")


def test_checks_asking_the_same_messages_share_one_walk(spec: SpecSet) -> None:
    log = _traffic()
    walks: list[str] = []
    _counted(log, "messages", walks)
    ctx = Context(log, spec)
    first, second = _twins()
    ctx.check = first
    found = list(ctx.messages(kinds=[Kind.REQUEST]))
    ctx.check = second
    assert list(ctx.messages(kinds=[Kind.REQUEST])) == found
    assert len(found) == 5
    assert len(walks) == 1, "the second check walked the log again"
    list(ctx.messages(kinds=[Kind.RESULT]))
    assert len(walks) == 2, "another question is a walk of its own"
    log.add(modern_call("tools/list", {}, {"tools": []}, ident=9))
    assert len(list(ctx.messages(kinds=[Kind.REQUEST]))) == 6, "the log grew: found again"
    assert len(walks) == 3
    ctx.release()
    assert not ctx._passing, "a released window keeps nothing"
