"""`mitmdump -s "$(mcp-assay addon-path)"` and `mcp-assay proxy` take the same path.

Tool-defined: both judge in the same worker process, which yields to the traffic while it flows
(:mod:`mcp_assay.addon.sharing`) and logs at the level the proxy shows (mitmdump's own root logger is
at DEBUG, for its terminal log to filter), and both write the report when stopped.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace

import httpx2
import pytest

from mcp_assay.addon.assay import _log_level
from tests.peers.assay import RunningProxy, assay_proxy, mitmdump
from tests.peers.process import sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "paths", "version": "1"},
}


def _worker(proxy: int) -> int | None:
    """The judging worker among the proxy's children."""
    for task in Path(f"/proc/{proxy}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"mcp_assay.addon.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)
    return None


def _yielding(worker: int) -> set[int]:
    """The yielding policies among the worker's threads (its judging thread's, while traffic flows)."""
    found = set()
    for task in Path(f"/proc/{worker}/task").iterdir():
        try:
            found.add(os.sched_getscheduler(int(task.name)))
        except OSError:
            continue
    return found & {os.SCHED_IDLE, os.SCHED_BATCH}


def _paths(tmp_path: Path, spec_path: Path) -> Iterator[tuple[str, AbstractContextManager[RunningProxy], Path]]:
    with sdk_http_server() as server:
        origin = server.url.removesuffix("/mcp")
        addon = tmp_path / "addon.json"
        yield "mitmdump -s", mitmdump(origin, f"mcp_assay_report=json:{addon}", f"mcp_assay_spec_dir={spec_path}",
                                      "mcp_assay_live=off"), addon  # fmt: skip
        proxy = tmp_path / "proxy.json"
        yield (
            "mcp-assay proxy",
            assay_proxy(server.url, "--report", f"json:{proxy}", "--spec-dir", str(spec_path), "--live", "off"),
            proxy,
        )


@pytest.mark.skipif(not hasattr(os, "sched_getscheduler"), reason="no scheduling policies here")
def test_both_paths_judge_in_a_worker_that_yields_to_the_traffic(tmp_path: Path, spec_path: Path) -> None:
    seen: dict[str, int] = {}
    for name, running, report in _paths(tmp_path, spec_path):
        with running as proxy, httpx2.Client(timeout=10) as client:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
            headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list",
                       "accept": "application/json, text/event-stream"}  # fmt: skip
            assert client.post(proxy.url, json=body, headers=headers).status_code == 200
            worker = _worker(proxy.process.pid)
            assert worker is not None, name
            deadline = time.monotonic() + 30  # the judging thread starts once the schemas are loaded
            while not _yielding(worker) and time.monotonic() < deadline:
                time.sleep(0.05)
            seen[name] = min(_yielding(worker) or {os.SCHED_OTHER})
            assert proxy.stop() in (0, 1), proxy.output
        assert json.loads(report.read_text())["stats"]["exchanges"] >= 1, name
    assert seen["mitmdump -s"] == seen["mcp-assay proxy"] in (os.SCHED_IDLE, os.SCHED_BATCH)


def test_the_worker_logs_at_the_level_the_proxy_shows() -> None:
    """mitmdump's root logger is at DEBUG for its terminal log to filter: its worker takes termlog_verbosity."""
    assert _log_level(SimpleNamespace(termlog_verbosity="info")) == logging.INFO
    assert _log_level(SimpleNamespace(termlog_verbosity="error")) == logging.ERROR
    assert _log_level(SimpleNamespace()) is None  # mcp-assay proxy: its own root level
