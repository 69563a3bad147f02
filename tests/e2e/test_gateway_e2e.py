"""A gateway judged on both hops, end to end: the commands, real mitmproxy, the official SDK peers, and the
project's faithful test gateway between them (tests.peers.gateway; its seeded faults: test_gateway_blame_e2e.py).

Tool-defined (issue 29, docs/gateways.md). The official Python SDK server is the upstream, its client (or the
active suite) the client. Each test checks what the one report says of each party: nothing blamed on a faithful
gateway or a correct client, the upstream's faults blamed on the upstream however faithfully the gateway
relayed them; through ``mcp-assay proxy --gateway-back``, ``mitmdump`` with two listeners, ``run --gateway-back``
and, for a stdio server behind the gateway, ``mcp-assay tap --hop back`` joined by ``validate``.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from mcp_assay.recording.records import read_recording
from mcp_assay.wire.hops import relayed_probes
from mcp_assay.wire.model import Hop
from tests.peers.assay import MITMDUMP, addon_path, assay_proxy
from tests.peers.process import PYTHON, free_port, http_server, sdk_server_command
from tests.peers.topology import gateway_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"},
}


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def _use(url: str, modes: tuple[str, ...] = ("auto", "legacy", "2026-07-28"), steps: int = 3) -> None:
    for mode in modes:
        async with Client(url, mode=mode) as client:
            await client.list_tools()
            await client.call_tool("add", {"a": 1, "b": 2})
            await client.call_tool("progress_tool", {"steps": steps}, progress_callback=_progress)
            await client.read_resource("greeting://gateway")


def _foreign_origin(url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    headers = {
        "origin": "https://evil.invalid", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list",
        "accept": "application/json, text/event-stream",
    }  # fmt: skip
    httpx.post(url, json=body, headers=headers, timeout=10)


class Session:
    """One proxy run over both hops of the relay: its report and recording."""

    def __init__(self, report: dict[str, Any], recording: Path, output: str) -> None:
        self.report = report
        self.recording = recording
        self.output = output

    def results(self, check: str) -> list[dict[str, Any]]:
        return [item for item in self.report["results"] if item["check"] == check]

    def outcome(self, check: str) -> set[tuple[str, str | None]]:
        return {(item["outcome"], item.get("party")) for item in self.results(check)}

    def failures(self) -> list[dict[str, Any]]:
        return [item for item in self.report["results"] if item["outcome"] == "failed"]


def _through_gateway(tmp: Path) -> Session:
    server_port, back_port, gateway_port = free_port(), free_port(), free_port()
    report, recording = tmp / "report.json", tmp / "session.jsonl"
    with http_server(sdk_server_command(port=server_port), server_port) as server:
        with assay_proxy(
            f"http://127.0.0.1:{gateway_port}/mcp", "--gateway-back", f"{back_port}={server.url}",
            "--report", f"json:{report}", "--record", str(recording), "--live", "findings",
        ) as proxy:  # fmt: skip
            gateway = gateway_command(gateway_port, upstream_url=f"http://127.0.0.1:{back_port}/mcp")
            with http_server(gateway, gateway_port, env={"PYTHONPATH": str(ROOT)}):
                anyio.run(_use, proxy.url)
                _foreign_origin(proxy.url)
                time.sleep(0.3)
            proxy.stop()
    return Session(json.loads(report.read_text()), recording, proxy.output)


@pytest.fixture(scope="module")
def faithful(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return _through_gateway(tmp_path_factory.mktemp("faithful"))


def test_the_sdk_client_through_a_faithful_gateway_leaves_the_gateway_and_the_client_blameless(
    faithful: Session,
) -> None:
    """Both hops judged in one report; what fails is the upstream's own (the SDK server's known findings)."""
    hops = {json.loads(line).get("hop") for line in faithful.recording.read_text().splitlines()}
    assert {"front", "back"} <= hops
    assert "the gateway's back hop listens on" in faithful.output
    blamed = [(item["check"], item.get("party")) for item in faithful.failures()]
    assert blamed and all(party == "server" for _, party in blamed), blamed
    assert faithful.report["verdict"]["exit_code"] == 0
    for check in (
        "gateway_relays_stream_notifications", "gateway_keeps_stream_order", "gateway_maps_progress_tokens",
        "gateway_relays_content_unchanged", "gateway_passes_version_on", "gateway_checks_origin",
    ):  # fmt: skip
        assert faithful.outcome(check) == {("passed", "gateway")}, check
    # a fault of the upstream relayed faithfully is the server's, on both hops
    relayed = faithful.results("structured_content_is_mirrored_as_text")
    failed = [item for item in relayed if item["outcome"] == "failed"]
    assert {item["evidence"][0].get("hop") for item in failed} == {"front", "back"}
    assert {item["party"] for item in failed} == {"server"}


def test_the_addon_under_mitmdump_listens_at_both_hops(tmp_path: Path) -> None:
    server_port, back_port, gateway_port, front_port = free_port(), free_port(), free_port(), free_port()
    recording = tmp_path / "session.jsonl"
    with http_server(sdk_server_command(port=server_port), server_port) as server:
        command = [
            MITMDUMP, "-s", addon_path(), "--listen-host", "127.0.0.1",
            "--mode", f"reverse:http://127.0.0.1:{gateway_port}@{front_port}",
            "--mode", f"reverse:http://127.0.0.1:{server_port}@{back_port}",
            "--set", f"mcp_assay_gateway_back={back_port}", "--set", f"mcp_assay_record={recording}",
            "--set", "mcp_assay_report=json:" + str(tmp_path / "report.json"), "--set", "flow_detail=0",
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            gateway = gateway_command(gateway_port, upstream_url=f"http://127.0.0.1:{back_port}/mcp")
            with http_server(gateway, gateway_port, env={"PYTHONPATH": str(ROOT)}):
                _wait_for(front_port)
                anyio.run(_use, f"http://127.0.0.1:{front_port}/mcp", ("2026-07-28",))
        finally:
            process.send_signal(2)
            process.wait(60)
        del server
    hops = [json.loads(line).get("hop") for line in recording.read_text().splitlines()]
    assert hops.count("front") >= 3 and hops.count("back") >= 3
    report = json.loads((tmp_path / "report.json").read_text())
    assert {item.get("party") for item in report["results"]} >= {"gateway", "server", "client"}


def _wait_for(port: int) -> None:
    from tests.peers.process import wait_for_port

    wait_for_port(port)


SuiteRun = tuple[dict[str, Any], Path, subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def suite_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, Any], Path, subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("suite")
    server_port, back_port, gateway_port = free_port(), free_port(), free_port()
    report, recording = folder / "report.json", folder / "run.jsonl"
    with http_server(sdk_server_command(port=server_port), server_port) as server:
        command = gateway_command(gateway_port, upstream_url=f"http://127.0.0.1:{back_port}/mcp")
        with http_server(command, gateway_port, env={"PYTHONPATH": str(ROOT)}) as gateway:
            done = subprocess.run(
                [PYTHON, "-m", "mcp_assay", "run", "-u", gateway.url, "--gateway-back", f"{back_port}={server.url}",
                 "--report", f"json:{report}", "--record", str(recording)],
                capture_output=True, text=True, timeout=170, cwd=ROOT, env={**os.environ, "COLUMNS": "200"},
            )  # fmt: skip
    return json.loads(report.read_text()), recording, done


GATEWAY_AS_SERVER = {
    "gateway_cancels_with_upstream_id": "GW-04: the suite's cancellation of a request already answered is passed "
    "upstream naming the client's id (the gateway maps only requests in flight), which upstream may be another "
    "request's",
}
"""The MUST findings of the test gateway's faithful build under the active suite, each confirmed against the spec
text (docs/gateways.md): a cancellation of a request it never sent upstream is passed on as the client said it."""


def _run_through_a_gateway_judges_what_reached_the_upstream(suite_run: SuiteRun) -> None:
    report, _, done = suite_run
    assert "its back hop listens on" in done.stderr
    failed = [item for item in report["results"] if item["outcome"] == "failed" and item["severity"] == "must"]
    parties: dict[str, set[str | None]] = {}
    for item in failed:
        parties.setdefault(item["check"], set()).add(item.get("party"))
    # the SDK server's own MUST findings (known-findings.md), blamed on it through the gateway, on both hops
    assert parties.get("version_header_mismatch_is_rejected") == {"server"}
    assert parties.get("invalid_requests_get_an_invalid_request_error") == {"server"}
    blamed = {check for check, who in parties.items() if who - {"server"}}
    assert blamed == set(GATEWAY_AS_SERVER), blamed ^ set(GATEWAY_AS_SERVER)
    assert all(who == {"gateway"} for check, who in parties.items() if check in GATEWAY_AS_SERVER)
    by_check = {item["check"]: item for item in report["results"] if item["requirements"][0].startswith("GW-")}
    for check in ("gateway_keeps_client_sessions_apart", "gateway_checks_origin", "gateway_passes_version_on",
                  "gateway_relays_error_codes", "gateway_relays_content_unchanged"):  # fmt: skip
        assert by_check[check]["outcome"] == "passed", (check, by_check[check]["reason"])
    assert "at fault: the gateway" in report["verdict"]["text"] and "the server 2" in report["verdict"]["text"]
    _probes_are_marked_on_the_back_hop(suite_run)


def _probes_are_marked_on_the_back_hop(suite_run: SuiteRun) -> None:
    """The gateway relaying mcp-assay's malformed probes is not the gateway misbehaving as a client."""
    report, recording, _ = suite_run
    log = read_recording(recording).log
    front = [item for item in log if item.hop is not Hop.BACK]
    tagged = relayed_probes(front, [item for item in log if item.hop is Hop.BACK])
    assert any(item.probe is not None and item.probe.invalid for item in tagged)
    blamed = [item["check"] for item in report["results"] if item["outcome"] == "failed" and item.get("party") ==
              "gateway" and item["side"] in ("client", "both")]  # fmt: skip
    assert not blamed, blamed


def test_run_through_a_gateway_judges_what_reached_the_upstream_and_its_recording_again(
    suite_run: SuiteRun, tmp_path: Path
) -> None:
    """One test for all the run shows, so that the run (the costly part) is made once whatever the workers."""
    _run_through_a_gateway_judges_what_reached_the_upstream(suite_run)
    report, recording, _ = suite_run
    again = tmp_path / "again.json"
    subprocess.run(
        [PYTHON, "-m", "mcp_assay", "validate", str(recording), "--report", f"json:{again}"],
        capture_output=True, timeout=120, cwd=ROOT,
    )  # fmt: skip

    def key(data: dict[str, Any]) -> list[tuple[Any, ...]]:
        return sorted(
            (r["check"], r["outcome"], r.get("party") or "", r.get("revision") or "") for r in data["results"]
        )

    assert key(json.loads(again.read_text())) == key(report)


def test_a_stdio_server_behind_a_gateway_is_its_back_hop_under_the_tap(tmp_path: Path) -> None:
    """HTTP in front, stdio behind: the proxy records the front hop, the tap the back; validate joins them."""
    front, back = tmp_path / "front.jsonl", tmp_path / "back.jsonl"
    gateway_port = free_port()
    tap = [PYTHON, "-m", "mcp_assay", "tap", "--hop", "back", "--record", str(back), "--live", "off",
           "--report", f"json:{tmp_path / 'tap.json'}", "--", *sdk_server_command()]  # fmt: skip
    bridge = gateway_command(gateway_port, stdio=tap)
    with http_server(bridge, gateway_port, env={"PYTHONPATH": str(ROOT)}) as gateway:
        with assay_proxy(gateway.url, "--hop", "front", "--record", str(front), "--live", "off") as proxy:
            anyio.run(_use, proxy.url, ("2026-07-28",))
            proxy.stop()
    _bounded_wait(lambda: back.exists() and '"type":"exit"' in back.read_text())
    joined = tmp_path / "joined.json"
    subprocess.run(
        [PYTHON, "-m", "mcp_assay", "validate", str(front), str(back), "--report", f"json:{joined}"],
        capture_output=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    report = json.loads(joined.read_text())
    outcome = {item["check"]: (item["outcome"], item.get("party")) for item in report["results"]}
    assert outcome["gateway_relays_stream_notifications"] == ("passed", "gateway")
    assert outcome["gateway_maps_progress_tokens"] == ("passed", "gateway")
    relayed = [item for item in report["results"] if item["check"] == "structured_content_is_mirrored_as_text"]
    assert {item.get("party") for item in relayed if item["outcome"] == "failed"} == {"server"}


def _bounded_wait(ready: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.fixture(autouse=True)
def _spec(spec_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MCP_ASSAY_SPEC_DIR", str(spec_path))
    yield
