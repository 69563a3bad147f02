"""Counted work for tests: how often a function was called, never how long anything took.

The tests that hold a cache or a shared view to its promise replace the function it spares by a
wrapper that notes each call, then assert how many calls a run made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def count_calls(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, into: list[Any] | None = None, *, by_name: bool = False
) -> list[Any]:
    """Replace ``owner.name`` (until the test ends) by a wrapper noting each call in ``into`` (a new list unless
    given, so several functions can share one): the first argument each call was given, or ``name`` with
    ``by_name``. Returns the list."""
    calls: list[Any] = [] if into is None else into
    original: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(name if by_name else args[0] if args else None)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls
