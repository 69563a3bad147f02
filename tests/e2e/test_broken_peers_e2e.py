"""Deliberately broken servers and clients, one per rule family, judged through the real proxy and
tap: each fault is caught under its requirement ID, in its own scenario and nowhere else.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import HttpExchange
from mcp_assay.wire.traffic import ExchangeLog
from tests.peers.assay import assay_proxy
from tests.peers.broken import CONTROL, FAULTS, STDIO_FAULTS
from tests.peers.broken.http_client import drive
from tests.peers.process import HERE as PEERS
from tests.peers.process import PYTHON, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


@dataclass
class BrokenRun:
    report: dict[str, Any]
    recording: Path


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> Iterator[BrokenRun]:
    folder = tmp_path_factory.mktemp("broken")
    recording, report = folder / "recording.jsonl", folder / "report.json"
    port = free_port()
    command = [PYTHON, str(PEERS / "broken" / "http_server.py"), str(port)]
    with http_server(command, port, path="/") as server:
        with assay_proxy(
            server.url, "--record", str(recording), "--report", f"json:{report}", "--spec-dir", str(spec_path),
            "--live", "findings", path="/",
        ) as proxy:  # fmt: skip
            anyio.run(drive, proxy.url)
    yield BrokenRun(json.loads(report.read_text()), recording)


def _failed(log: ExchangeLog, spec: SpecSet) -> set[str]:
    return {ident for v in evaluate(log, spec) if v.outcome is Outcome.FAILED for ident in v.requirements}


def _scenario_log(recording: Path, scenario: str) -> ExchangeLog:
    prefix = f"/{scenario}/"
    return ExchangeLog(
        item
        for item in read_recording(recording).log
        if isinstance(item, HttpExchange) and item.request.path.startswith(prefix)
    )


def test_every_expected_requirement_has_a_check() -> None:
    """Tool-defined: the fault table names only requirement IDs some check cites."""
    from mcp_assay.spec import rules  # noqa: F401

    cited = {ident for check in REGISTRY.values() for ident in check.requirements}
    expected = {ident for ids in FAULTS.values() for ident in ids} | set(STDIO_FAULTS)
    assert expected <= cited, sorted(expected - cited)


def test_the_live_report_names_every_fault(broken_run: BrokenRun) -> None:
    """Tool-defined: the proxy's own report fails every requirement a scenario breaks."""
    statuses = {item["id"]: item["outcome"] for item in broken_run.report["requirements"]}
    for scenario, ids in FAULTS.items():
        for ident in ids:
            assert statuses.get(ident) == "failed", (scenario, ident)


@pytest.mark.parametrize("scenario", list(FAULTS))
def test_each_fault_is_caught_in_its_own_scenario(scenario: str, broken_run: BrokenRun, spec: SpecSet) -> None:
    """Tool-defined: judged alone, a scenario's traffic fails the requirement its fault breaks."""
    failed = _failed(_scenario_log(broken_run.recording, scenario), spec)
    assert set(FAULTS[scenario]) <= failed


def test_the_faultless_scenario_fails_none_of_the_fault_requirements(broken_run: BrokenRun, spec: SpecSet) -> None:
    """Tool-defined: the same conversation without faults fails none of those requirements."""
    log = _scenario_log(broken_run.recording, CONTROL)
    assert len(log) >= 10
    failed = _failed(log, spec)
    assert failed.isdisjoint({ident for ids in FAULTS.values() for ident in ids}), failed


def test_a_polluted_stdout_and_a_batch_on_stdin_are_stdio_violations(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (STDIO-01, STDIO-02, STDIO-04): non-MCP output is a named stdio violation."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}},
        [{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta}}],
    ]
    report = tmp_path / "stdio.json"
    command = [
        PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path), "--report", f"json:{report}",
        "--", PYTHON, str(PEERS / "broken" / "stdio_server.py"),
    ]  # fmt: skip
    stdin = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    result = subprocess.run(command, input=stdin, capture_output=True, timeout=30, check=False)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.startswith(b"broken-stdio v1.0 starting up...\n"), "the tap relays the pollution unchanged"
    statuses = {item["id"]: item["outcome"] for item in json.loads(report.read_text())["requirements"]}
    for ident in STDIO_FAULTS:
        assert statuses.get(ident) == "failed", ident
