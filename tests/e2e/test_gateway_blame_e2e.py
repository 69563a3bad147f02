"""Every seeded fault of the project's test gateway is found on both hops and blamed on the gateway (issue 29).

Tool-defined. The test gateway (tests.peers.gateway, with the witness server behind it) runs one seeded relay
fault, or none (the faithful build); ``mcp-assay proxy --gateway-back`` watches both its hops in one process
while a short conversation (tests/gateway/drive.py) makes the fault show. Each fault must fail the check that
names it with the gateway as the party at fault; through the faithful build that check must not fail, and
nothing at all is blamed on the gateway but what it answers on its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from tests.gateway.drive import FAULTS, GROUPS
from tests.gateway.inproc import both_hops
from tests.peers.gateway.faults import FAULTS as SEEDED
from tests.peers.process import RunningServer, free_port, http_server
from tests.peers.topology import ROOT, gateway_command, upstream_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]

OWN_ANSWERS = {"error_responses_never_carry_a_null_id"}
"""SHOULD findings of the faithful build's own answers (a parse error answered with ``"id": null``, as JSON-RPC 2.0
says and MCP's schema does not): the gateway's, but no relay fault."""


@pytest.fixture(scope="module")
def upstream() -> Iterator[RunningServer]:
    with upstream_server("witness") as server:
        yield server


def watched(
    upstream: RunningServer, spec: SpecSet, tmp: Path, faults: list[str], prefix: str, drivers: list[Any]
) -> dict[str, Any]:
    """The report of one watcher over both hops of the gateway (in process), after the drivers' traffic."""
    gateway_port = free_port()
    origin = upstream.url.rsplit("/", 1)[0]
    with both_hops(f"http://127.0.0.1:{gateway_port}", origin, tmp, spec) as hops:
        command = gateway_command(gateway_port, upstream_url=hops.back_url, faults=faults, prefix=prefix)
        with http_server(command, gateway_port, env={"PYTHONPATH": str(ROOT)}):
            for drive in dict.fromkeys(drivers):
                drive(hops.url, upstream.url)
            time.sleep(0.3)
    return hops.report


def test_every_seeded_fault_has_a_judged_test() -> None:
    assert set(FAULTS) == set(SEEDED)
    grouped = [name for group in GROUPS for name in group]
    assert sorted(grouped) == sorted(FAULTS)
    assert all(len({FAULTS[name][1] for name in group}) == 1 for group in GROUPS)


@pytest.mark.parametrize("group", range(len(GROUPS)), ids=lambda index: "+".join(GROUPS[index][:2]))
def test_each_fault_is_found_and_blamed_on_the_gateway(
    upstream: RunningServer, spec: SpecSet, tmp_path: Path, group: int
) -> None:
    """One gateway runs the group's faults together, one watched session judges them all."""
    faults = GROUPS[group]
    prefix = FAULTS[faults[0]][1]
    report = watched(upstream, spec, tmp_path, faults, prefix, [FAULTS[name][0] for name in faults])
    missed = {}
    for fault in faults:
        check = FAULTS[fault][2]
        failed = [item for item in report["results"] if item["check"] == check and item["outcome"] == "failed"
                  and item.get("party") == "gateway" and item["evidence"]]  # fmt: skip
        if not failed:
            missed[fault] = (check, {(item["outcome"], item.get("party")) for item in report["results"]
                                     if item["check"] == check})  # fmt: skip
        elif failed[0]["severity"] == "must":
            assert "the gateway" in report["verdict"]["text"], report["verdict"]
    assert not missed, missed


@pytest.fixture(scope="module")
def faithful(upstream: RunningServer, spec: SpecSet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    drivers = [drive for drive, prefix, _ in FAULTS.values() if not prefix]
    return watched(upstream, spec, tmp_path_factory.mktemp("faithful"), [], "", drivers)


@pytest.fixture(scope="module")
def faithful_prefixed(
    upstream: RunningServer, spec: SpecSet, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    drivers = [drive for drive, prefix, _ in FAULTS.values() if prefix]
    return watched(upstream, spec, tmp_path_factory.mktemp("prefixed"), [], "up_", drivers)


def test_through_the_faithful_build_no_check_of_a_fault_fails_and_nothing_is_blamed_on_the_gateway(
    faithful: dict[str, Any], faithful_prefixed: dict[str, Any]
) -> None:
    """One test, so that the faithful sessions are made once whatever the workers. What fails is the drivers' own
    doing as clients (an unknown method, a body that is not JSON), or the faithful build's own answer to it."""
    checks = {FAULTS[name][2] for name in FAULTS}
    for report in (faithful, faithful_prefixed):
        failed = [
            item["check"] for item in report["results"] if item["check"] in checks and item["outcome"] == "failed"
        ]
        assert not failed, failed
        blamed = {item["check"] for item in report["results"] if item["outcome"] == "failed"
                  and item.get("party") == "gateway"}  # fmt: skip
        assert blamed <= OWN_ANSWERS, blamed
        assert not [item for item in report["results"] if item["outcome"] == "failed" and item["severity"] == "must"
                    and item.get("party") == "gateway"]  # fmt: skip
    judged = {
        item["check"]: item["outcome"] for item in faithful["results"] if item["requirements"][0].startswith("GW")
    }
    assert [name for name, outcome in judged.items() if outcome == "passed"], judged
