"""The reference clients under ``mcp-assay proxy --inject all --probe-server``, in front of the SDK server.

Each reference client (the official Python SDK's and the TypeScript SDK v2's) connects four times
through one proxy session: in ``auto`` mode the first connection meets the version refusal and
falls back to 2025-11-25, where the 2025 faults wait for it (its fallback ``initialize`` is the
reaction to the refusal, and only how its answer arrives is changed: the header names respelled);
the second speaks 2026-07-28 and meets the 2026 ones; the third, in ``legacy`` mode, meets the held
``initialize``, and the fourth the counter-offer of a version no revision defines (a connect that
fails is retried once, as an application would). Each call is made as an application would (``add``
twice), with a one-second timeout (the hold is longer); a call that fails is recorded and the next
one made. Meanwhile the proxy probes the server on each era the client opened, with the client's
own credentials. Every case of ``--inject all`` must meet its point.

What the clients get wrong is pinned in ``inject_expected.yaml`` (each finding explained there
against the specification text, and in docs/known-findings.md): a finding that appears or disappears fails
the test. No answer mcp-assay injected may ever be held against the server, what the probes
found is reported as probed, and the recording judges again to the same verdicts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import yaml
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_assay.addon.inject import FAULTS
from mcp_assay.cli import cli
from mcp_assay.report.sdks import known_sdk
from tests.peers.assay import assay_proxy, wait_until_exchanges_end
from tests.peers.inproc_proxy import injected_exchanges, injected_in
from tests.peers.once import built_once
from tests.peers.process import HERE as PEERS
from tests.peers.process import free_port, http_server, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TOKEN = "inject-e2e-bearer-5c1d9e"
MODES = ("auto", "auto", "legacy", "legacy")
"""The 2025 fallback after the refusal, then 2026-07-28, then a legacy client (whose initialize is held), then one
whose initialize is answered with a counter-offer."""
HOLD_MS = "1500"
TIMEOUT_S = 1.0
PROBES_DONE = 60.0
EXPECTED = yaml.safe_load((Path(__file__).with_name("inject_expected.yaml")).read_text())
NODE_CLIENT = PEERS / "node" / "node_modules" / "@modelcontextprotocol" / "client"


@dataclass
class Session:
    report: dict[str, Any]
    recording: Path
    returncode: int | None
    """The proxy's exit status."""
    output: str
    """What the proxy printed."""
    steps: list[tuple[str, bool, str]] = field(default_factory=list)
    """(step, ok, detail) of every call the client made, in order."""


async def _python_steps(url: str, steps: list[tuple[str, bool, str]]) -> None:
    async def step(name: str, work: Any) -> None:
        try:
            await work
            steps.append((name, True, ""))
        except Exception as exc:  # noqa: BLE001 - the client's failure is the observation
            steps.append((name, False, f"{type(exc).__name__}: {exc}"[:200]))

    for mode in MODES:
        for attempt in range(2):
            try:
                async with httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
                    async with Client(
                        streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=TIMEOUT_S
                    ) as client:
                        steps.append(("connect", True, str(client.protocol_version)))
                        await step("tools/list", client.list_tools())
                        await step("tools/call add", client.call_tool("add", {"a": 40, "b": 2}))
                        await step("tools/call progress", client.call_tool("progress_tool", {"steps": 2}))
                        await step("resources/read", client.read_resource("greeting://sdk"))
                        await step("prompts/get", client.get_prompt("summarize", {"text": "proxies"}))
                        await step("tools/call add again", client.call_tool("add", {"a": 1, "b": 2}))
                        await step("tools/list again", client.list_tools())
                break
            except Exception as exc:  # noqa: BLE001 - a connect the client gave up on is retried once
                steps.append(("connect", False, f"{type(exc).__name__}"[:200]))
                if attempt:
                    raise


def _ts_steps(url: str, steps: list[tuple[str, bool, str]]) -> None:
    for mode in MODES:
        result = subprocess.run(
            ["node", str(PEERS / "ts_client.mjs"), url, mode, str(int(TIMEOUT_S * 1000)), TOKEN],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
        for line in result.stdout.decode().splitlines():
            item = json.loads(line)
            steps.append((item["step"], item["ok"], item["detail"]))


def _session(folder: Path, spec_path: Path, client: str) -> None:
    """One client's session through the proxy, its report, recording and ``session.json`` (the proxy's exit status
    and output, the client's steps) written to ``folder``."""
    port = free_port()
    recording, report = folder / f"{client}.jsonl", folder / f"{client}.json"
    steps: list[tuple[str, bool, str]] = []
    with http_server(sdk_server_command(port=port), port) as server:
        with assay_proxy(
            server.url, "--inject", "all", "--inject-hold-ms", HOLD_MS, "--probe-server", "--record", str(recording),
            "--report", f"json:{report}", "--spec-dir", str(spec_path), "--fail-on", "never", "--live", "findings",
        ) as proxy:  # fmt: skip
            if client == "python":
                anyio.run(_python_steps, proxy.url, steps)
            else:
                _ts_steps(proxy.url, steps)
            deadline = time.monotonic() + PROBES_DONE
            while proxy.output.count("): done") < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            wait_until_exchanges_end(recording)
    session = {"returncode": proxy.returncode, "output": proxy.output, "steps": steps}
    (folder / "session.json").write_text(json.dumps(session), encoding="utf-8")


def _shared_session(tmp_path_factory: pytest.TempPathFactory, spec_path: Path, client: str) -> Session:
    """The client's session, run once per test run whichever worker asks first (``tests/peers/once.py``): the
    tests only read its report, recording and steps."""
    folder = built_once(tmp_path_factory, f"inject-sdk-{client}", lambda folder: _session(folder, spec_path, client))
    data = json.loads((folder / "session.json").read_text(encoding="utf-8"))
    report = json.loads((folder / f"{client}.json").read_text(encoding="utf-8"))
    steps = [(str(step), bool(ok), str(detail)) for step, ok, detail in data["steps"]]
    return Session(report, folder / f"{client}.jsonl", data["returncode"], data["output"], steps)


@pytest.fixture(scope="module")
def python_session(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> Session:
    return _shared_session(tmp_path_factory, spec_path, "python")


@pytest.fixture(scope="module")
def ts_session(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> Session:
    if shutil.which("node") is None or not NODE_CLIENT.is_dir():
        pytest.skip("the TypeScript SDK v2 client is not installed (run `bash tests/peers/setup.sh`; needs node)")
    return _shared_session(tmp_path_factory, spec_path, "typescript")


@pytest.fixture(params=["python", "typescript"])
def session(request: pytest.FixtureRequest) -> Iterator[tuple[str, Session]]:
    name = str(request.param)
    yield name, request.getfixturevalue("python_session" if name == "python" else "ts_session")


def test_the_session_completes_in_both_revisions(session: tuple[str, Session]) -> None:
    """Tool-defined: both connections are made, the last calls of each succeed, and the report is written."""
    _, run = session
    connected = [detail for step, ok, detail in run.steps if step == "connect" and ok]
    assert len(connected) == len(MODES), run.steps
    finals = [ok for step, ok, _ in run.steps if step == "tools/list again"]
    assert finals == [True] * len(MODES), run.steps
    judged = {revision for result in run.report["results"] for revision in result["revisions"]}
    assert {"2026-07-28", "2025-11-25"} <= judged
    assert run.returncode == 0


def test_every_case_of_all_fired_and_the_report_says_so(session: tuple[str, Session]) -> None:
    """Issue 28: every case of ``--inject all`` met its point in its era, against clients that fall back after the
    refusal (the fallback initialize is a reaction: its answer may still be held or respelled); each is a note of
    the report, and no case is left saying it never met its point."""
    _, run = session
    notes = run.report["notes"]
    fired = {note.split(":")[0] for note in notes if note.startswith("injected ")}
    http_cases = [case for case in FAULTS if "http" in case.transports]  # the registry's, not a list kept here
    for case in http_cases:
        assert f"injected {case.name}" in fired, notes
    assert {(case.name, case.era.value) for case in http_cases} <= injected_in(run.recording)
    assert not [note for note in notes if "never met its point" in note], notes


def test_the_reference_clients_findings_are_the_known_ones(session: tuple[str, Session]) -> None:
    """Spec-mandated: the client-side failures are exactly those pinned (and explained) in inject_expected.yaml."""
    name, run = session
    failed = {
        (req, item["check"])
        for item in run.report["results"]
        if item["outcome"] == "failed" and item["side"] == "client"
        for req in item["requirements"]
    }
    expected = {(entry["requirement"], entry["check"]) for entry in EXPECTED[f"{name}-client"]}
    assert failed == expected


def test_the_reference_clients_failures_are_marked_as_their_sdks(session: tuple[str, Session]) -> None:
    """Issue 27: each client's SDK is recognized from what the client itself sends (the Python SDK's default
    clientInfo, the TypeScript SDK's server/discover probe ids), the server's from what it answers, and every pinned
    client failure is marked as a known finding of that SDK and version."""
    name, run = session
    package = {"python": "mcp", "typescript": "@modelcontextprotocol/client"}[name]
    sdk = known_sdk(package)
    assert sdk is not None
    recognized = {(item["side"], item["name"]): item for item in run.report.get("sdks", [])}
    assert ("client", package) in recognized and ("server", "mcp") in recognized, run.report.get("sdks")
    assert recognized[("client", package)]["how"] == "recognized" and recognized[("client", package)]["signs"]
    failed = [item for item in run.report["results"] if item["outcome"] == "failed" and item["side"] == "client"]
    assert failed
    for item in failed:
        assert (item.get("sdk") or {}).get("name") == package and item["sdk"]["version"] == sdk.version, item
    assert f"known in {package} {sdk.version}" in run.report["verdict"]["text"]


def test_no_injected_answer_is_blamed_on_the_server(session: tuple[str, Session]) -> None:
    """Tool-defined: server-side results never rest on an exchange mcp-assay answered."""
    _, run = session
    marked = injected_exchanges(run.recording)
    for item in run.report["results"]:
        for evidence in item["evidence"] if item["side"] != "client" else ():
            if evidence["exchange"] in marked:
                assert item["side"] == "both" and evidence["message"] == 0, (item["check"], evidence)


def test_the_server_probes_ran_on_the_clients_credentials_and_are_reported_as_probed(
    session: tuple[str, Session],
) -> None:
    """Tool-defined: what the probes established about the server says active; the token is never written."""
    _, run = session
    probed = {item["check"] for item in run.report["results"] if item["source"] == "active"}
    assert {"version_header_mismatch_is_rejected", "unknown_tools_get_invalid_params"} <= probed
    failed = {req for item in run.report["results"] if item["outcome"] == "failed" and item["source"] == "active"
              for req in item["requirements"]}  # fmt: skip
    assert "HTTP-09" in failed  # the SDK server's known finding, found through the client's session
    written = run.recording.read_text() + json.dumps(run.report) + run.output
    assert TOKEN not in written
    assert "[REDACTED]" in run.recording.read_text()


def test_the_recording_judges_again_to_the_same_verdicts(
    session: tuple[str, Session], spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined: `mcp-assay validate` of the session recording reproduces every verdict and its source."""
    _, run = session
    again = tmp_path / "again.json"
    result = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(run.recording), "--report", f"json:{again}"]
    )
    assert result.exit_code in (0, 1), result.output
    offline = json.loads(again.read_text())

    def verdicts(report: dict[str, Any]) -> set[tuple[str, str, str, int]]:
        return {(r["check"], r["outcome"], r["source"], r["violations"]) for r in report["results"]}

    assert verdicts(offline) == verdicts(run.report)
