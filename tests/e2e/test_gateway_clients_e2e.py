"""The faithful build of the test gateway is crossed by the official clients: the Python SDK client (mcp 2.3.0) in
its three modes and the TypeScript SDK v2 client, over an HTTP upstream and over a stdio upstream the gateway
spawns (a bridge), with pages, structured content, progress, logs, a cancelled call whose write must not land,
text and binary resources and, in 2026-07-28, a ``subscriptions/listen`` event. A gateway test that blames the
gateway for a failure can lean on this: the faithful build gives the official clients no failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.peers.assay import assay_proxy
from tests.peers.process import PYTHON
from tests.peers.topology import ROOT, Chain, gateway_chain, tap_command

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]

TS_CLIENT = ROOT / "tests" / "peers" / "ts_client.mjs"
SDK_STEPS = 8
TS_STEPS = 7


@pytest.fixture(scope="module", params=["http", "stdio"])
def chain(request: pytest.FixtureRequest) -> Iterator[Chain]:
    with gateway_chain(stdio=request.param == "stdio") as running:
        yield running


def steps(command: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run(command, capture_output=True, timeout=90, cwd=ROOT, env=_env())
    lines = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    assert lines, done.stderr.decode()[-2000:]
    return lines


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("mode", ["auto", "legacy", "2026-07-28"])
def test_the_python_sdk_client_crosses_the_faithful_gateway(chain: Chain, mode: str) -> None:
    lines = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", chain.url, mode])
    failed = [line for line in lines if not line["ok"]]
    assert not failed and len(lines) == SDK_STEPS, lines
    assert lines[0]["detail"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_typescript_sdk_client_crosses_the_faithful_gateway(chain: Chain, mode: str) -> None:
    if not (ROOT / "tests" / "peers" / "node" / "node_modules" / "@modelcontextprotocol" / "client").exists():
        pytest.skip("TypeScript SDK client missing: run `bash tests/peers/setup.sh`")
    lines = steps(["node", str(TS_CLIENT), chain.url, mode, "5000"])
    failed = [line for line in lines if not line["ok"]]
    assert not failed and len(lines) == TS_STEPS, lines


def test_a_prefixing_gateway_is_crossed_under_the_prefixed_names() -> None:
    with gateway_chain(prefix="up_") as running:
        lines = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", running.url, "auto", "--prefix", "up_"])
    failed = [line for line in lines if not line["ok"]]
    assert not failed and len(lines) == SDK_STEPS, lines
    assert "up_witness" in lines[1]["detail"]


def test_the_launcher_puts_mcp_assays_proxy_on_both_hops_and_its_tap_on_a_bridges_back(tmp_path: Path) -> None:
    """The topology gateway tests use: client, mcp-assay proxy, gateway, mcp-assay proxy, server (and for a bridge,
    mcp-assay tap around the stdio server); the SDK client crosses it and both proxies saw the traffic."""
    records = {hop: tmp_path / f"{hop}.jsonl" for hop in ("front", "back", "tap")}

    def proxy(hop: str) -> Any:
        return lambda url: assay_proxy(url, "--record", str(records[hop]))

    with gateway_chain(front=proxy("front"), back=proxy("back")) as running:
        lines = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", running.url, "auto", "--steps", "smoke"])
        assert running.url != running.gateway.url and running.upstream_url not in (None, running.url)
    assert all(line["ok"] for line in lines) and len(lines) == 4, lines
    with gateway_chain(stdio=True, stdio_back=tap_command("--record", str(records["tap"]), "--live", "off")) as bridge:
        lines = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", bridge.url, "legacy", "--steps", "smoke"])
    assert all(line["ok"] for line in lines) and len(lines) == 4, lines
    for hop, record in records.items():
        assert record.exists() and "tools/call" in record.read_text(encoding="utf-8"), hop
