"""The message path shares its per-message and per-key work: counted (calls made), never timed, and bounded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.engine import Judge
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.spec.rules.envelope import meta_keys
from tests.scale.growth import traffic

META_KEY_RULES = (
    "meta_keys_follow_the_key_grammar",
    "reserved_meta_prefixes_hold_only_defined_keys",
    "meta_prefixes_are_reverse_dns",
)


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[object]:
    """Count the calls of ``owner.name`` (the list grows by one per call)."""
    calls: list[object] = []
    original: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0] if args else None)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_each_distinct_meta_key_is_read_once(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    meta_keys._KEY_FACTS.clear()
    reads = _counting(monkeypatch, meta_keys, "_read_key")
    judge = Judge(spec, checks=[REGISTRY[name] for name in META_KEY_RULES])
    for exchange in traffic(3):
        judge.add(exchange)
    verdicts = {verdict.check: verdict for verdict in judge.verdicts()}
    judged = sum(verdicts[name].judged for name in META_KEY_RULES)
    assert judged > 300  # the three rules read many keys, of many messages
    assert 0 < len(reads) == len(set(reads)) < 40  # but each distinct key was read once, by whichever rule asked


def test_the_meta_key_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meta_keys, "KEYS_KEPT", 16)
    meta_keys._KEY_FACTS.clear()
    for number in range(100):
        meta_keys.key_facts(f"com.example/key{number}")
        assert len(meta_keys._KEY_FACTS) <= 16
    assert meta_keys.key_facts("com.example/key99").dns == meta_keys.REVERSE_DNS
