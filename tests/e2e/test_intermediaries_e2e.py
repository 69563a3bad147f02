"""Published intermediaries between the official Python SDK client and the Python SDK server, judged on both hops, and
every finding pinned with its justification (``intermediaries_expected.yaml``), as the server corpus pins its servers'.

Each intermediary runs once (``tests.gateway.intermediaries.judged``, tests/peers/intermediaries.py has the launch
recipes, tests/peers/setup.sh installs them): its front and back hops are recorded by ``mcp-assay proxy --hop`` or
``mcp-assay tap --hop`` while the SDK client crosses it in every mode its front speaks and the survey's marked probes
(a foreign Origin, an unknown method, a body that is not JSON) reach its HTTP front; ``mcp-assay validate`` judges the
two recordings as one gateway. The test fails on a failure (MUST or SHOULD) not pinned for its hop and party, on a
pinned one that no longer occurs, on a step of the client that fails unpinned (or a smoke step that fails at all),
and on a pin without a justification. Spec-mandated: each pin quotes the requirement that makes it a failure.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gateway.intermediaries import hop_of, judged
from tests.peers.intermediaries import RECIPES, installed

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(240)]

HERE = Path(__file__).parent
EXPECTED: dict[str, Any] = yaml.safe_load((HERE / "intermediaries_expected.yaml").read_text("utf-8"))
GATEWAYS_DOC = HERE.parents[1] / "docs" / "gateways.md"
SMOKE = ("connect", "tools/list pages", "tools/call structured")
"""What every intermediary must carry in every mode its front speaks."""
Pin = tuple[str, str, str]
"""(hop, party, the result's requirement IDs joined by spaces)."""


def pins(name: str) -> dict[Pin, str]:
    return {
        (hop, party, str(ids)): str(why)
        for hop, parties in EXPECTED[name]["failures"].items()
        for party, found in parties.items()
        for ids, why in found.items()
    }


def found(report: dict[str, Any]) -> dict[Pin, str]:
    """Every failure of the report (notes left out) by hop, party and requirements, with its reason."""
    return {
        (hop_of(item), str(item.get("party")), " ".join(item["requirements"])): str(item["reason"])
        for item in report["results"]
        if item["outcome"] == "failed" and item["severity"] != "info"
    }


def test_every_pin_is_justified_and_names_a_known_intermediary() -> None:
    for name, entry in EXPECTED.items():
        assert name in RECIPES and entry["direction"] == RECIPES[name].direction, name
        for (hop, party, ids), why in pins(name).items():
            assert hop in {"front", "back", "both"} and party in {"gateway", "server", "client"}, (name, hop, party)
            assert why.strip() and "\n" not in why and len(why) >= 30, (name, hop, party, ids)
            assert all(ident in why for ident in ids.split()), f"{name} {ids}: the justification names its requirement"
        for step, why in entry["failing steps"].items():
            assert len(str(why)) >= 20, (name, step)
    directions = {entry["direction"] for entry in EXPECTED.values()}
    assert {"http-to-http", "stdio-to-http", "http-to-stdio"} <= directions
    assert {"PyPI", "npm"} <= {word for entry in EXPECTED.values() for word in re.findall(r"PyPI|npm", entry["about"])}


def test_the_gateways_doc_shows_what_each_intermediary_was_found_to_do() -> None:
    """docs/gateways.md's table lists, per intermediary, exactly the requirements pinned against the gateway."""
    text = GATEWAYS_DOC.read_text("utf-8")
    for name in EXPECTED:
        row = next((line for line in text.splitlines() if line.startswith(f"| {name} |")), None)
        assert row is not None, f"docs/gateways.md has no row for {name}"
        gateway = {ident for (hop, party, ids) in pins(name) if party == "gateway" for ident in ids.split()}
        assert set(re.findall(r"\b[A-Z]+-\d+\b", row)) == gateway, (name, row)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_intermediary_crosses_and_fails_exactly_the_pinned_requirements(name: str, tmp_path: Path) -> None:
    """One run: the SDK client's smoke steps pass in every mode the front speaks and only the pinned steps fail;
    every failure on either hop is pinned for its hop and party, and every pin still occurs."""
    installed(RECIPES[name])
    crossing = judged(name, tmp_path)
    report = crossing.report
    assert not [note for note in report["notes"] if note.startswith("harness self-check")], report["notes"]
    seen, expected = found(report), pins(name)
    problems: list[str] = []
    unpinned = {pin: seen[pin] for pin in sorted(set(seen) - set(expected))}
    if unpinned:
        problems.append(f"failures with no justification pinned (hop, party, ids: reason): {unpinned}")
    if gone := sorted(set(expected) - set(seen)):
        problems.append(f"pinned failures that no longer occur (remove them): {gone}")
    modes = RECIPES[name].modes
    assert sorted(crossing.steps) == sorted(modes), crossing.steps
    pinned_steps = set(EXPECTED[name]["failing steps"])
    for mode, steps in crossing.steps.items():
        failed = {step for step, line in steps.items() if not line["ok"]}
        wanted = pinned_steps & set(steps) if mode == modes[0] else failed & pinned_steps  # the first runs every step
        if failed != wanted or not all(steps.get(step, {}).get("ok") for step in SMOKE):
            details = {step: line["detail"] for step, line in steps.items() if step in failed ^ wanted}
            problems.append(f"{mode}: steps failed {sorted(failed)}, pinned {sorted(wanted)}: {details}")
    # a step that fails unpinned shows with the findings beside it: the gateway's fault behind it, if mcp-assay saw one
    assert not problems, f"{name}:\n" + "\n".join(problems)
    must = any(item["severity"] == "must" for item in report["results"] if item["outcome"] == "failed")
    assert report["verdict"]["exit_code"] == (1 if must else 0), report["verdict"]
