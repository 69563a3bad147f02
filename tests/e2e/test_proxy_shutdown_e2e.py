"""`mcp-assay proxy` under load and while stopping: the report always arrives, counts exactly what
crossed, and no process outlives the proxy.

The soak is bounded for CI: a few thousand exchanges through the real proxy subprocess (against
``tests/peers/soak_server.py``, which answers in microseconds), some of them event streams the
client leaves mid-stream. It is sized to finish in well under a minute on a 2-core machine while
the final judging is still one pass over the whole log; the proxy itself waits for judging however
long it takes, so a longer session changes the time, not the outcome.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.testing import PROXY_READY, ProxyProcess
from mcp_assay.wire.model import EndReason
from tests.peers.process import HERE as PEERS
from tests.peers.process import PYTHON, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
}
CLIENTS = 4
EXIT_WAIT = 120.0
"""Bound on how long the proxy may take to judge and exit (it finishes in a fraction of this)."""


@dataclass
class Sent:
    """What the clients sent through the proxy."""

    calls: int = 0
    abandoned: int = 0
    """Event streams the client closed after the first event (disconnects mid-stream)."""


def _post(connection: http.client.HTTPConnection, ident: int, method: str, params: dict[str, object]) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": META}})
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if method == "tools/call":
        headers["mcp-name"] = str(params["name"])
    connection.request("POST", "/mcp", body=body, headers=headers)


def _client(port: int, first: int, count: int, every: int, sent: Sent, lock: threading.Lock) -> None:
    """``count`` calls on keep-alive connections; every ``every``-th is a stream left after its first event."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for ident in range(first, first + count):
        if every and ident % every == 0:
            _post(connection, ident, "tools/call", {"name": "stream", "arguments": {}})
            response = connection.getresponse()
            assert response.status == 200 and response.readline().startswith(b"event:")
            connection.close()  # mid-stream: the proxy sees the client go away
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            with lock:
                sent.calls += 1
                sent.abandoned += 1
            continue
        _post(connection, ident, "tools/list", {})
        response = connection.getresponse()
        assert response.status == 200 and b'"resultType"' in response.read()
        with lock:
            sent.calls += 1
    connection.close()


def _drive(port: int, total: int, every: int) -> Sent:
    sent, lock = Sent(), threading.Lock()
    share = total // CLIENTS
    threads = [
        threading.Thread(target=_client, args=(port, 1 + n * share, share, every, sent, lock)) for n in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(EXIT_WAIT)
    assert sent.calls == share * CLIENTS
    return sent


def _session_members(session: int) -> list[int]:
    """Live (not zombie) processes whose session id is ``session``: whatever the proxy started and left."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


@contextmanager
def _proxy(upstream: str, folder: Path, spec_path: Path) -> Iterator[ProxyProcess]:
    command = [
        PYTHON, "-m", "mcp_assay", "proxy", "--upstream", upstream, "--listen-port", "0", "--live", "off",
        "--record", str(folder / "soak.jsonl"), "--report", f"json:{folder / 'soak.json'}",
        "--spec-dir", str(spec_path), "--fail-on", "never",
    ]  # fmt: skip
    running = ProxyProcess.start(
        command, PROXY_READY, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, new_session=True
    )
    try:
        yield running
    finally:
        if running.process.poll() is None:
            os.killpg(running.process.pid, signal.SIGKILL)
        running.stop()


def _wait_for(running: ProxyProcess, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in running.output:
        assert running.process.poll() is None, running.output
        assert time.monotonic() < deadline, f"{text!r} not printed within {timeout} s:\n{running.output}"
        time.sleep(0.05)


def test_a_soak_of_thousands_of_exchanges_with_disconnects_reports_exactly_what_crossed(
    tmp_path: Path, spec_path: Path
) -> None:
    """Tool-defined: 2,000 calls (1 in 10 a stream the client leaves mid-stream), then SIGTERM: the report
    arrives, counts every exchange and no more, and no process of the proxy's session is left behind."""
    port = free_port()
    with http_server([PYTHON, str(PEERS / "soak_server.py"), str(port)], port) as server:
        with _proxy(server.url, tmp_path, spec_path) as running:
            sent = _drive(running.port, 2000, every=10)
            running.process.send_signal(signal.SIGTERM)
            code = running.process.wait(EXIT_WAIT)
            assert _session_members(running.process.pid) == []
    assert code == 0, running.output
    report = json.loads((tmp_path / "soak.json").read_text())
    assert report["stats"]["exchanges"] == sent.calls == 2000
    assert report["stats"]["observations"] == len(report["audit"]) == sent.calls
    outcomes = [line["outcome"] for line in report["audit"]]
    assert outcomes.count("no-result") == sent.abandoned and outcomes.count("ok") == sent.calls - sent.abandoned
    exchanges = read_recording(tmp_path / "soak.jsonl").log.http_exchanges()
    endings = [exchange.ending.reason for exchange in exchanges if exchange.ending is not None]
    assert len(exchanges) == sent.calls and endings.count(EndReason.CLIENT_DISCONNECT) == sent.abandoned


def test_a_second_interrupt_still_leaves_a_report_and_nothing_behind(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: Ctrl-C twice in a row after a long session: the proxy exits with a report and leaves no
    process behind. Judging in windows leaves only the last window to judge at the end, so the report is
    usually complete; if the second interrupt did cut it short (the worker, yielding to the traffic, may
    be up to about a second behind it), the report says so and the checks it did not run are not
    verified (the worker tests force that path with a deadline), and the recording still holds every
    exchange."""
    port = free_port()
    with http_server([PYTHON, str(PEERS / "soak_server.py"), str(port)], port) as server:
        with _proxy(server.url, tmp_path, spec_path) as running:
            _drive(running.port, 1500, every=0)
            running.process.send_signal(signal.SIGINT)
            running.process.send_signal(signal.SIGINT)
            code = running.process.wait(EXIT_WAIT)
            assert _session_members(running.process.pid) == []
    assert code == 0, running.output
    report = json.loads((tmp_path / "soak.json").read_text())
    cut = [note for note in report["notes"] if "cut short" in note]
    if report["stats"]["exchanges"] != 1500:  # the worker yields to the traffic, so it may be behind it
        assert 0 < report["stats"]["exchanges"] < 1500 and cut, report["notes"]
        assert "record(s) that arrived after that were not judged (they are in the recording)" in cut[0]
    # judged or not, every exchange the client made is evidence in the recording
    assert len(read_recording(tmp_path / "soak.jsonl").log.http_exchanges()) == 1500
    not_run = [result for result in report["results"] if "judging was cut short" in result["reason"]]
    assert bool(cut) == bool(not_run)
    assert all(result["outcome"] == "not_verified" for result in not_run)
