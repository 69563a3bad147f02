"""Published intermediaries judged on both hops: every finding pinned with who is at fault and why (issue 29).

Tool-defined. Each intermediary of ``tests/peers/intermediaries.py`` (installed by ``tests/peers/setup.sh``) is put
between the official Python SDK client and the witness server (the Python SDK server), each hop recorded by the
command a user would run (``mcp-assay proxy --hop`` on an HTTP hop, ``mcp-assay tap --hop`` around a stdio process)
and both recordings judged by ``mcp-assay validate`` (tests/gateway/intermediaries.py). Every failure the report
gives, but notes, is pinned in ``intermediaries_expected.yaml`` as ``REQUIREMENTS@party`` with a justification
from the specification text: a failure not pinned fails the test, and so does a pinned one that no longer
occurs, unless it is pinned under ``may`` (a finding that depends on timing, said why). A false failure is fixed
in the rule, never pinned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gateway.intermediaries import judged
from tests.peers.intermediaries import RECIPES, installed

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

EXPECTED: dict[str, Any] = yaml.safe_load(Path(__file__).with_name("intermediaries_expected.yaml").read_text("utf-8"))


def found(report: dict[str, Any]) -> set[str]:
    """The report's failures but notes, as ``REQUIREMENTS@party``."""
    return {
        f"{','.join(item['requirements'])}@{item.get('party')}"
        for item in report["results"]
        if item["outcome"] == "failed" and item["severity"] != "info"
    }


def test_every_intermediary_is_pinned_with_reasons() -> None:
    assert set(EXPECTED) == set(RECIPES)
    for name, pins in EXPECTED.items():
        assert pins.get("about"), name
        for key, why in {**pins.get("failures", {}), **pins.get("may", {})}.items():
            assert "@" in key and isinstance(why, str) and len(why) > 30, (name, key)


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_intermediary_is_judged_as_pinned(name: str, tmp_path: Path) -> None:
    installed(RECIPES[name])
    report = judged(name, tmp_path)
    pins = EXPECTED[name]
    required, allowed = set(pins.get("failures", {})), set(pins.get("may", {}))
    got = found(report)
    assert not got - required - allowed, f"{name}: failures not pinned: {sorted(got - required - allowed)}"
    assert not required - got, f"{name}: pinned failures that no longer occur: {sorted(required - got)}"
    gateway = {key for key in got if key.endswith("@gateway")}
    assert gateway, f"{name}: every intermediary of the corpus does something wrong on the wire"
