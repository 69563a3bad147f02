"""The faithful build of the test gateway is crossed by the official clients: the Python SDK client (mcp 2.3.0) in
its three modes and the TypeScript SDK v2 client, over an HTTP upstream and over a stdio upstream the gateway
spawns (a bridge), with pages, structured content, progress, logs, a cancelled call whose write must not land,
text and binary resources and, in 2026-07-28, a ``subscriptions/listen`` event (the TypeScript client: pages, structured
content, progress, a cancelled call, a blob). A gateway test that blames the gateway for a failure can lean on this:
the faithful build gives the official clients no failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.peers.gateway.probe import Probe
from tests.peers.process import PYTHON
from tests.peers.topology import ROOT, Chain, gateway, gateway_chain, tap_command

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]

TS_DRIVE = ROOT / "tests" / "peers" / "gateway" / "ts_drive.mjs"
SDK_STEPS = 9
MODES = ("auto", "legacy", "2026-07-28")
TS_STEPS = 6


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


def test_the_python_sdk_client_crosses_the_faithful_gateway_in_every_mode(chain: Chain) -> None:
    lines = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", chain.url, ",".join(MODES)])
    for mode in MODES:
        done = [line for line in lines if line["mode"] == mode]
        failed = [line for line in done if not line["ok"]]
        assert not failed and len(done) == SDK_STEPS, (mode, done)
        assert done[0]["detail"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_typescript_sdk_client_crosses_the_faithful_gateway(chain: Chain, mode: str) -> None:
    if not (ROOT / "tests" / "peers" / "node" / "node_modules" / "@modelcontextprotocol" / "client").exists():
        pytest.skip("TypeScript SDK client missing: run `bash tests/peers/setup.sh`")
    lines = steps(["node", str(TS_DRIVE), chain.url, mode])
    failed = [line for line in lines if not line["ok"]]
    assert not failed and len(lines) == TS_STEPS, lines


def test_a_prefixing_gateway_is_crossed_under_the_prefixed_names() -> None:
    with gateway_chain(prefix="up_") as running:
        lines = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", running.url, "auto:smoke", "--prefix", "up_"])
    failed = [line for line in lines if not line["ok"]]
    assert not failed and len(lines) == 4, lines
    assert "up_witness" in lines[1]["detail"]


def _crossed(url: str, legacy: bool = True) -> None:
    """Through ``url``: a 2026 call, and (``legacy``) a 2025 session's list and call."""
    with Probe(url) as probe:
        assert probe.modern("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}).result[
            "structuredContent"
        ] == {"result": 5}
        if not legacy:
            return
        assert probe.initialize().status == 200 and probe.session
        assert probe.legacy("tools/list").result["tools"]
        assert probe.legacy("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}).result["content"]


def test_the_launcher_puts_a_watcher_on_each_hop_and_wraps_a_bridges_server(tmp_path: Path) -> None:
    """The topology of gateway tests: client, watcher, gateway, watcher, server (here each watcher is another faithful
    gateway writing its log, standing in for ``tests.peers.assay.assay_proxy``), and for a bridge, mcp-assay tap around
    the stdio server it spawns; both revisions cross it and each hop saw the calls."""
    logs = {hop: tmp_path / f"{hop}.jsonl" for hop in ("front", "back")}
    tapped = tmp_path / "tap.jsonl"

    def watcher(hop: str) -> Any:
        return lambda url: gateway(url, log=logs[hop])

    with gateway_chain(front=watcher("front"), back=watcher("back")) as running:
        assert running.url != running.gateway.url and running.upstream_url not in (None, running.url)
        _crossed(running.url)
    with gateway_chain(stdio=True, stdio_back=tap_command("--record", str(tapped), "--live", "off")) as bridge:
        _crossed(bridge.url, legacy=False)  # each 2025 session would spawn (and tap) a server of its own
    for hop, log in logs.items():
        assert '"method": "tools/call"' in log.read_text(encoding="utf-8"), hop
    assert "tools/call" in tapped.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("flags", "modes"),
    [("--json", "auto:tools/call progress+tools/call cancelled"), ("--stateless", "legacy:tools/call cancelled")],
)
def test_an_upstream_servers_own_faults_cross_the_faithful_gateway_unchanged(flags: str, modes: str) -> None:
    """The server's faults, not the gateway's: a json_response server sends no notifications during a call and lets a
    2026 call whose client left finish; a stateless one lets a 2025 call cancelled by notice finish. The same steps
    fail through the faithful gateway as against the server directly (a gateway test blames the server for them)."""
    with gateway_chain(server_flags=[flags]) as running:
        assert running.upstream_url is not None
        via = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", running.url, modes])
        direct = steps([PYTHON, "-m", "tests.peers.gateway.sdk_drive", running.upstream_url, modes])
    failed_via = {line["step"] for line in via if not line["ok"]}
    failed_direct = {line["step"] for line in direct if not line["ok"]}
    assert "tools/call cancelled" in failed_direct and failed_via == failed_direct, (via, direct)
