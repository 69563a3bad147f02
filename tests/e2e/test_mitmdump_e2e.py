"""The addon inside a stock mitmdump (`mitmdump -s "$(mcp-assay addon-path)" --mode reverse:…`),
between the official Python SDK client and server, both revisions; mitmproxy's own flow file of
the same traffic is judged offline too.
"""

from __future__ import annotations

import json
import os
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
from mcp_assay.wire.model import EVENTS_LOST
from tests.e2e.pasting import evidence_by_replay, http_reproduced, paste
from tests.peers.assay import RunningProxy, mitmdump
from tests.peers.process import free_port, sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TOKEN = "mitmdump-e2e-token-5d1c0e"


@dataclass
class DumpRun:
    proxy: RunningProxy
    report: dict[str, Any]
    recording: Path
    flows: Path
    har: Path
    versions: dict[str, str] = field(default_factory=dict)
    listen_delay: float = -1.0
    listen_open_after: float = -1.0


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def _drive(url: str, run: DumpRun) -> None:
    for mode in ("auto", "legacy", "2026-07-28"):
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                await client.list_tools()
                await client.call_tool("add", {"a": 1, "b": 1})
                await client.call_tool("progress_tool", {"steps": 2}, progress_callback=_progress)
                await client.read_resource("info://static")
                await client.get_prompt("summarize", {"text": "mitmdump"})
                run.versions[mode] = str(client.protocol_version)
                if mode != "legacy":
                    async with client.listen(tools_list_changed=True) as subscription:
                        touched = time.time()
                        await client.call_tool("touch_tools", {})
                        with anyio.fail_after(5):
                            await subscription.__anext__()
                        arrived = time.time()
                        run.listen_delay = arrived - touched
                        await anyio.sleep(0.25)
                    run.listen_open_after = time.time() - arrived


def _settle(*files: Path, quiet: float = 0.5, ceiling: float = 5.0) -> None:
    """Wait until the captures stop growing (the SDK client's last requests, such as its session
    DELETE and a GET reconnect, may still be in flight on a busy machine), bounded by ``ceiling``."""
    deadline = time.monotonic() + ceiling
    sizes: tuple[int, ...] = ()
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        now = tuple(file.stat().st_size if file.exists() else -1 for file in files)
        if now != sizes:
            sizes, stable_since = now, time.monotonic()
        elif time.monotonic() - stable_since >= quiet:
            return
        time.sleep(0.05)


@pytest.fixture(scope="module")
def dump_run(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> Iterator[DumpRun]:
    folder = tmp_path_factory.mktemp("mitmdump")
    recording, report, flows = folder / "recording.jsonl", folder / "report.json", folder / "capture.flows"
    har = folder / "capture.har"
    with sdk_http_server() as server:
        origin = server.url.removesuffix("/mcp")
        with mitmdump(
            origin,
            f"mcp_assay_record={recording}",
            f"mcp_assay_report=json:{report}",
            f"mcp_assay_spec_dir={spec_path}",
            "mcp_assay_secrets=never-seen-secret",
            "mcp_assay_fail_on=should",  # the SDK server misses SHOULDs (TOOL-11): the exit status must say 1
            f"save_stream_file={flows}",
            f"hardump={har}",
            "store_streamed_bodies=true",
        ) as proxy:
            run = DumpRun(proxy, {}, recording, flows, har)
            anyio.run(_drive, proxy.url, run)
            _settle(recording, flows)
        run.report = json.loads(report.read_text())
        yield run  # the server still runs: replays are pasted against it


def _validate(path: Path, spec_path: Path, folder: Path) -> dict[str, Any]:
    out = folder / f"{path.name}.json"
    result = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), str(path), "--report", f"json:{out}"])
    assert result.exit_code in (0, 1), result.output
    return dict(json.loads(out.read_text()))


def test_the_addon_judges_both_revisions_inside_mitmdump(dump_run: DumpRun) -> None:
    """Tool-defined: the script loads, the clients work, the report lists what was judged."""
    assert dump_run.versions == {"auto": "2026-07-28", "legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
    report = dump_run.report
    judged = {revision for result in report["results"] for revision in result["revisions"]}
    assert {"2026-07-28", "2025-11-25"} <= judged
    assert len([line for line in report["audit"] if line["method"] == "tools/call"]) == 8
    assert "Loading script" in dump_run.proxy.output
    assert "POST /mcp · request tools/call" in dump_run.proxy.output, "live lines go to mitmproxy's log"


def test_listen_events_pass_mitmdump_live(dump_run: DumpRun) -> None:
    """Tool-defined: the addon streams SSE, so the listen notification is not held back."""
    assert 0 <= dump_run.listen_delay < 1.0
    assert dump_run.listen_open_after >= 0.2


def test_the_recording_revalidates_to_the_same_verdicts(dump_run: DumpRun, spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: the addon's recording judged offline gives the live verdicts."""
    offline = _validate(dump_run.recording, spec_path, tmp_path)

    def verdicts(report: dict[str, Any]) -> set[tuple[str, str, int, int]]:
        return {(r["check"], r["outcome"], r["judged"], r["violations"]) for r in report["results"]}

    assert verdicts(offline) == verdicts(dump_run.report)


def test_mitmproxys_own_flow_file_is_judged_like_the_recording(
    dump_run: DumpRun, spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined: `mitmdump -w` output is a valid input and finds the same failures.

    mitmproxy keeps no body for a stream that ended with an error, so the listen streams the
    client closed carry no events in the flow file; the reader says so, and the rules about
    those events are the only ones that may differ."""
    from_flows = _validate(dump_run.flows, spec_path, tmp_path)
    assert from_flows["target"]["inputs"] == ["mitmproxy flows"]
    assert any("ended with an error" in note for note in from_flows["notes"])

    def outcomes(report: dict[str, Any]) -> dict[str, str]:
        return {r["check"]: r["outcome"] for r in report["results"]}

    live, offline = outcomes(dump_run.report), outcomes(from_flows)
    assert {c for c, o in offline.items() if o == "failed"} == {c for c, o in live.items() if o == "failed"}
    reasons = {r["check"]: r["reason"] for r in from_flows["results"]}
    for check in (
        "results_name_their_result_type",
        "results_match_their_method_definition",
        "initialize_results_name_version_capabilities_and_server",
    ):
        assert live[check] == "passed", check
        # on a loaded machine the client may close an answered stream before mitmproxy ends the flow: then the
        # flow file holds no events for it, and the only honest verdict on what it carried is "not verified"
        unseen = EVENTS_LOST in reasons[check] or "observed in the traffic" in reasons[check]
        lost = offline[check] == "not_verified" and unseen
        assert offline[check] == "passed" or lost, (check, offline[check], reasons[check])


def test_mitmproxys_har_export_is_judged_like_the_recording(dump_run: DumpRun, spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: a HAR file (here mitmproxy's own `hardump`) is a valid input with the same failures."""
    from_har = _validate(dump_run.har, spec_path, tmp_path)
    assert from_har["target"]["inputs"] == ["har"]
    live = {r["check"] for r in dump_run.report["results"] if r["outcome"] == "failed"}
    assert {r["check"] for r in from_har["results"] if r["outcome"] == "failed"} == live
    assert from_har["stats"]["messages"] > 30


def test_every_replay_of_the_addon_and_of_its_flow_file_and_har_pastes_without_the_token(
    dump_run: DumpRun, spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined (issue 27): the addon's findings, and those of mitmproxy's own flow file and HAR judged by
    `validate`, carry the client's request as a replay against the server, the bearer token as
    ${MCP_ASSAY_TOKEN}; pasted with the variable set, each gets the answer its evidence describes."""
    reports = {
        "addon": dump_run.report,
        "flows": _validate(dump_run.flows, spec_path, tmp_path),
        "har": _validate(dump_run.har, spec_path, tmp_path),
    }
    pasted: dict[str, str] = {}
    for source, report in reports.items():
        replays = evidence_by_replay(report)
        failures = [result for result in report["results"] if result["outcome"] == "failed"]
        assert all(any(item["reproduction"] for item in result["evidence"]) for result in failures), source
        assert TOKEN not in json.dumps(report), source
        assert any("$MCP_ASSAY_TOKEN" in command for command in replays), source
        for command, pairs in replays.items():
            if command not in pasted:
                done = paste(command, {**os.environ, "MCP_ASSAY_TOKEN": TOKEN})
                stopped = done.returncode == 28 and "--max-time" in command  # a listen stream left open
                assert done.returncode == 0 or stopped, (source, done.stderr, command)
                pasted[command] = done.stdout
            for result, item in pairs:
                assert http_reproduced(item, pasted[command]) is None, (source, result["check"], command)
    assert len(pasted) >= 3


def test_the_token_never_reaches_the_recording_the_report_or_the_log(dump_run: DumpRun) -> None:
    """Tool-defined: the bearer token of a real client is scrubbed from everything the addon writes."""
    written = dump_run.recording.read_text() + json.dumps(dump_run.report) + dump_run.proxy.output
    assert TOKEN not in written
    assert TOKEN in dump_run.flows.read_bytes().decode("latin-1"), "mitmproxy's own capture is untouched"


def test_the_addon_injects_when_mitmdump_is_told_to(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: `--set mcp_assay_inject=version` inside a stock mitmdump refuses the first 2026 request on the
    server's behalf, and the scripted client's retry in 2025-11-25 passes VER-05."""
    from tests.peers.inject_clients import version_correct

    report = tmp_path / "report.json"
    with sdk_http_server() as server:
        with mitmdump(
            server.url.removesuffix("/mcp"), "mcp_assay_inject=version", f"mcp_assay_report=json:{report}",
            f"mcp_assay_spec_dir={spec_path}",
        ) as proxy:  # fmt: skip
            version_correct(proxy.url)
    results = {item["check"]: item for item in json.loads(report.read_text())["results"]}
    verdict = results["clients_retry_refused_versions_from_the_supported_list"]
    assert (verdict["outcome"], verdict["source"]) == ("passed", "injected")


def test_mitmdump_exits_with_the_verdicts_exit_code_after_writing_its_own_files(dump_run: DumpRun) -> None:
    """Tool-defined (issue 28): mitmdump used to exit 0 whatever the verdict; with the addon it exits with the
    verdict's code (1 here: a SHOULD failure under mcp_assay_fail_on=should, as `mcp-assay proxy` would say), the
    JSON report's verdict.exit_code, and only after every addon's `done`: mitmproxy's own flow file and HAR export
    (written at `done`, after the script's) are complete."""
    assert dump_run.proxy.returncode == dump_run.report["verdict"]["exit_code"] == 1
    assert dump_run.flows.stat().st_size > 0 and json.loads(dump_run.har.read_text())["log"]["entries"]


async def _one_call(url: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client:
            await client.call_tool("add", {"a": 1, "b": 2})  # TOOL-11, a SHOULD the SDK server misses


def test_mitmdump_exit_status_is_left_to_mitmproxy_when_asked(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 28): mcp_assay_exit_code=false keeps mitmdump's own 0 where the verdict is 1 (the case
    above), and the JSON report still holds the verdict for CI."""
    report = tmp_path / "report.json"
    with sdk_http_server() as server:
        with mitmdump(
            server.url.removesuffix("/mcp"), f"mcp_assay_report=json:{report}", f"mcp_assay_spec_dir={spec_path}",
            "mcp_assay_fail_on=should", "mcp_assay_exit_code=false",
        ) as proxy:  # fmt: skip
            anyio.run(_one_call, proxy.url)
    verdict = json.loads(report.read_text())["verdict"]
    assert verdict["exit_code"] == 1 and proxy.returncode == 0, proxy.output[-2000:]


def test_mitmdump_with_no_traffic_exits_3(spec_path: Path) -> None:
    """Tool-defined: nothing judged is exit 3 on this path too (no client came; no server is needed for that)."""
    with mitmdump(f"http://127.0.0.1:{free_port()}", f"mcp_assay_spec_dir={spec_path}") as proxy:
        pass
    assert proxy.returncode == 3 and "not judged" in proxy.output
