"""`mcp-assay proxy` between real peers: the official Python SDK client and server, both revisions,
and the TypeScript SDK v2 server behind the proxy in forward (HTTP_PROXY) mode.

One proxy run per fixture; each test checks one property of it: the clients work through it, the
report lists what was judged, the bytes each side saw are the same, a listen notification arrives
while its stream is open, the recording re-validates to the same verdicts, and no credential is
written anywhere.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_assay.cli import cli
from tests.peers.assay import RunningProxy, assay_forward_proxy, assay_proxy, wait_until_exchanges_end
from tests.peers.process import HERE as PEERS
from tests.peers.process import PYTHON, free_port, http_server
from tests.peers.wire import RecordingTransport, WireExchange, compare, read_server_log

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TOKEN = "e2e-bearer-token-3f9a7c"
QUERY_TOKEN = "e2e-query-token-b81d22"
MODES = ("auto", "legacy", "2026-07-28")
EVENT_WAIT = 5.0


@dataclass
class Timing:
    touched: float = 0.0
    event: float = 0.0
    closed: float = 0.0


@dataclass
class ProxyRun:
    proxy: RunningProxy
    report: dict[str, Any]
    recording: Path
    client: list[WireExchange]
    server: list[WireExchange]
    versions: dict[str, str] = field(default_factory=dict)
    answers: dict[str, list[str]] = field(default_factory=dict)
    listen: Timing = field(default_factory=Timing)


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def _exercise(client: Client) -> list[str]:
    tools = await client.list_tools()
    added = await client.call_tool("add", {"a": 40, "b": 2})
    stepped = await client.call_tool("progress_tool", {"steps": 3}, progress_callback=_progress)
    read = await client.read_resource("greeting://assay")
    prompt = await client.get_prompt("summarize", {"text": "proxies"})
    texts = [getattr(block, "text", "") for block in added.content + stepped.content]
    return [
        ",".join(sorted(tool.name for tool in tools.tools)),
        *texts,
        getattr(read.contents[0], "text", ""),
        str(len(prompt.messages)),
    ]


async def _drive(url: str, run: ProxyRun, transports: list[RecordingTransport]) -> None:
    for mode in MODES:
        transport = RecordingTransport()
        transports.append(transport)
        headers = {"authorization": f"Bearer {TOKEN}"} if mode == "2026-07-28" else {}
        target = f"{url}?token={QUERY_TOKEN}" if mode == "2026-07-28" else url
        async with httpx2.AsyncClient(transport=transport, headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(target, http_client=http), mode=mode) as client:
                run.answers[mode] = await _exercise(client)
                run.versions[mode] = str(client.protocol_version)
                if mode == "2026-07-28":
                    async with client.listen(tools_list_changed=True) as subscription:
                        await client.call_tool("touch_tools", {})
                        run.listen.touched = time.time()
                        with anyio.fail_after(EVENT_WAIT):
                            await subscription.__anext__()
                        run.listen.event = time.time()
                        await anyio.sleep(0.3)  # the stream stays open past the event
                    run.listen.closed = time.time()


@pytest.fixture(scope="module")
def proxy_run(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> Iterator[ProxyRun]:
    folder = tmp_path_factory.mktemp("proxy")
    port = free_port()
    wire_log = folder / "server-wire.jsonl"
    recording, report = folder / "recording.jsonl", folder / "report.json"
    transports: list[RecordingTransport] = []
    with http_server([PYTHON, str(PEERS / "recorded_server.py"), str(port), str(wire_log)], port) as server:
        with assay_proxy(
            server.url, "--record", str(recording), "--report", f"json:{report}", "--spec-dir", str(spec_path),
            "--fail-on", "never",
        ) as proxy:  # fmt: skip
            run = ProxyRun(proxy, {}, recording, [], [])
            anyio.run(_drive, proxy.url, run, transports)
            wait_until_exchanges_end(recording)  # the client's last disconnects reached the proxy
    run.report = json.loads(report.read_text())
    run.client = [exchange for transport in transports for exchange in transport.exchanges]
    run.server = read_server_log(wire_log)
    yield run


def test_the_sdk_client_works_through_the_proxy_in_every_mode(proxy_run: ProxyRun) -> None:
    """Tool-defined: auto and the pin speak 2026-07-28, legacy 2025-11-25, and every call returns."""
    assert proxy_run.versions == {"auto": "2026-07-28", "legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
    for answers in proxy_run.answers.values():
        assert answers[1] == "42" and answers[2] == "did 3 steps" and answers[3] == "Hello, assay!"
    assert proxy_run.proxy.returncode == 0  # --fail-on never


def test_the_report_lists_what_was_judged(proxy_run: ProxyRun) -> None:
    """Tool-defined: both revisions judged, the audit names every call, live lines were printed."""
    report = proxy_run.report
    assert report["target"]["kind"] == "proxy"
    assert report["stats"]["exchanges"] >= 20  # audit lines are counted apart, as observations
    assert report["stats"]["observations"] >= len(report["audit"]) > 0
    judged = {revision for result in report["results"] for revision in result["revisions"]}
    assert {"2026-07-28", "2025-11-25"} <= judged
    statuses = {item["id"]: item["outcome"] for item in report["requirements"]}
    assert statuses["RES-01"] == "passed" and statuses["HS-04"] == "passed" and statuses["SUB-03"] == "passed"
    calls = [line for line in report["audit"] if line["method"] == "tools/call"]
    assert {line["tool"] for line in calls} == {"add", "progress_tool", "touch_tools"}
    assert {line["outcome"] for line in calls} == {"ok"}
    assert "POST /mcp · request tools/call" in proxy_run.proxy.output
    assert "⇢ event: notification notifications/tools/list_changed" in proxy_run.proxy.output


def test_live_traffic_is_unchanged_between_client_and_server(proxy_run: ProxyRun) -> None:
    """Tool-defined: bodies, MCP headers, statuses and response bytes are identical on both ends."""
    assert len(proxy_run.client) >= 20
    assert compare(proxy_run.client, proxy_run.server) == []


def test_the_listen_notification_arrives_while_the_stream_is_open(proxy_run: ProxyRun) -> None:
    """Tool-defined: subscriptions/listen events pass the proxy live, not when the stream closes."""
    timing = proxy_run.listen
    assert timing.event - timing.touched < 1.0
    assert timing.closed - timing.event >= 0.25
    (client_side,) = [entry for entry in proxy_run.client if b"subscriptions/listen" in entry.body]
    (server_side,) = [entry for entry in proxy_run.server if b"subscriptions/listen" in entry.body]
    sent = next(t for t, chunk in server_side.chunks if b"tools/list_changed" in chunk)
    received = next(t for t, chunk in client_side.chunks if b"tools/list_changed" in chunk)
    assert received - sent < 0.5
    assert received < timing.closed - 0.2


def test_progress_events_are_streamed_before_the_result_in_both_revisions(proxy_run: ProxyRun) -> None:
    """Tool-defined: each SSE event reaches the client before the server has sent the final result."""
    progress = [entry for entry in proxy_run.client if b'"progress_tool"' in entry.body]
    assert len(progress) == len(MODES)
    for entry in progress:
        (server_side,) = [seen for seen in proxy_run.server if seen.body == entry.body]
        first_event = next(t for t, chunk in entry.chunks if b"notifications/progress" in chunk)
        final_sent = next(t for t, chunk in server_side.chunks if b'"result"' in chunk)
        assert first_event < final_sent, entry.label()


def test_the_recording_revalidates_to_the_same_verdicts(proxy_run: ProxyRun, spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: `mcp-assay validate` on the recording reproduces every live verdict."""
    again = tmp_path / "again.json"
    result = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(proxy_run.recording), "--report", f"json:{again}"]
    )
    assert result.exit_code in (0, 1), result.output
    offline = json.loads(again.read_text())

    def verdicts(report: dict[str, Any]) -> set[tuple[str, str, int, int]]:
        return {(r["check"], r["outcome"], r["judged"], r["violations"]) for r in report["results"]}

    assert verdicts(offline) == verdicts(proxy_run.report)
    assert offline["stats"]["exchanges"] == proxy_run.report["stats"]["exchanges"]


def test_credentials_never_reach_the_recording_the_report_or_the_output(proxy_run: ProxyRun) -> None:
    """Tool-defined: a real client's bearer token and ?token= value are scrubbed everywhere."""
    assert any(entry.header("authorization") == f"Bearer {TOKEN}" for entry in proxy_run.server), "token was sent"
    written = proxy_run.recording.read_text() + json.dumps(proxy_run.report) + proxy_run.proxy.output
    assert TOKEN not in written and QUERY_TOKEN not in written
    principals = {line["principal"] for line in proxy_run.report["audit"]}
    assert any(str(p).startswith("token:sha256:") for p in principals)


# -- forward (regular) mode, with the TypeScript SDK v2 server ----------------------------------------
NODE_PEERS = PEERS / "node" / "node_modules" / "@modelcontextprotocol" / "server"


@dataclass
class ForwardRun:
    proxy: RunningProxy
    report: dict[str, Any]
    recording: Path
    versions: dict[str, str]
    page: int


async def _drive_forward(mcp_url: str, page_url: str, proxy_url: str, run: ForwardRun) -> None:
    for mode in ("auto", "legacy"):
        async with httpx2.AsyncClient(proxy=proxy_url, timeout=30) as http:
            async with Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client:
                await client.list_tools()
                added = await client.call_tool("add", {"a": 2, "b": 3})
                assert getattr(added.content[0], "text", "") == "5"
                await client.read_resource("info://readme")
                await client.get_prompt("shorten", {"text": "a long text"})
                run.versions[mode] = str(client.protocol_version)
    async with httpx2.AsyncClient(proxy=proxy_url, timeout=10) as http:
        run.page = (await http.get(page_url)).status_code


@pytest.fixture(scope="module")
def forward_run(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> Iterator[ForwardRun]:
    if shutil.which("node") is None or not NODE_PEERS.is_dir():
        pytest.skip("the TypeScript SDK v2 peer is not installed (run `bash tests/peers/setup.sh`; needs node)")
    folder = tmp_path_factory.mktemp("forward")
    (folder / "index.html").write_text("<p>not MCP</p>")
    recording, report = folder / "recording.jsonl", folder / "report.json"
    ts_port, page_port = free_port(), free_port()
    with (
        http_server(["node", str(PEERS / "ts_server.mjs"), str(ts_port)], ts_port) as ts_server,
        http_server(
            [PYTHON, "-m", "http.server", str(page_port), "--bind", "127.0.0.1", "--directory", str(folder)],
            page_port,
            path="/index.html",
        ) as page,
    ):
        with assay_forward_proxy(
            "--record", str(recording), "--report", f"json:{report}", "--spec-dir", str(spec_path),
        ) as proxy:  # fmt: skip
            run = ForwardRun(proxy, {}, recording, {}, 0)
            anyio.run(_drive_forward, ts_server.url, page.url, f"http://127.0.0.1:{proxy.port}", run)
            wait_until_exchanges_end(recording)  # the client's last disconnects reached the proxy
    run.report = json.loads(report.read_text())
    yield run


def test_a_forward_proxy_judges_the_typescript_sdk_server_for_http_proxy_clients(forward_run: ForwardRun) -> None:
    """Tool-defined: regular mode carries an HTTP_PROXY client to the TS SDK v2 server and judges both eras."""
    assert forward_run.versions == {"auto": "2026-07-28", "legacy": "2025-11-25"}
    report = forward_run.report
    judged = {revision for result in report["results"] for revision in result["revisions"]}
    assert {"2026-07-28", "2025-11-25"} <= judged
    tools = [line for line in report["audit"] if line["method"] == "tools/call"]
    assert [line["tool"] for line in tools] == ["add", "add"]
    assert all(line["outcome"] == "ok" and line["status"] == 200 for line in tools)


def test_traffic_that_is_not_mcp_passes_the_forward_proxy_unjudged(forward_run: ForwardRun) -> None:
    """Tool-defined: a plain web request goes through, and is neither recorded nor judged."""
    assert forward_run.page == 200
    recorded = forward_run.recording.read_text()
    assert "index.html" not in recorded and "not MCP" not in recorded
    assert "/mcp" in recorded
