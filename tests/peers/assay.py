"""Run mcp-assay's passive half as real subprocesses: ``mcp-assay proxy`` and ``mitmdump -s``.

Both print where they listen once they do; the helpers read that line (bounded), keep reading
the output on a thread so the pipe never fills, and stop the proxy with SIGINT so it writes its
report, as Ctrl-C would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp_assay.testing import PROXY_READY, STOP_TIMEOUT, ProxyProcess
from tests.peers.process import PYTHON, free_port

ROOT = Path(__file__).resolve().parents[2]
MITMDUMP = str(Path(PYTHON).with_name("mitmdump"))

_MITMDUMP_READY = re.compile(r"listening at (?:http://)?([\d.]+):(\d+)")


@dataclass
class RunningProxy:
    """A proxy subprocess (mcp-assay's own :class:`ProxyProcess`), and the path clients use on it."""

    running: ProxyProcess
    path: str
    returncode: int | None = None

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.running.process

    @property
    def port(self) -> int:
        return self.running.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    @property
    def output(self) -> str:
        return self.running.output

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """Ctrl-C: the proxy finishes, writes its report and exits."""
        self.returncode = self.running.stop(timeout)
        return self.returncode


@contextmanager
def _running(
    command: Sequence[str], pattern: re.Pattern[str], path: str, env: dict[str, str] | None
) -> Iterator[RunningProxy]:
    running = RunningProxy(
        ProxyProcess.start(
            command, pattern, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200", **(env or {})}
        ),
        path,
    )
    try:
        yield running
    finally:
        running.stop()


@contextmanager
def assay_proxy(
    upstream: str, *args: str, path: str | None = None, env: dict[str, str] | None = None
) -> Iterator[RunningProxy]:
    """``mcp-assay proxy --upstream URL --listen-port 0 ARGS...``"""
    command = [PYTHON, "-m", "mcp_assay", "proxy", "--upstream", upstream, "--listen-port", "0", *args]
    with _running(command, PROXY_READY, path if path is not None else "/mcp", env) as running:
        yield running


@contextmanager
def assay_forward_proxy(*args: str, env: dict[str, str] | None = None) -> Iterator[RunningProxy]:
    """``mcp-assay proxy --mode regular --listen-port 0 ARGS...``"""
    command = [PYTHON, "-m", "mcp_assay", "proxy", "--mode", "regular", "--listen-port", "0", *args]
    with _running(command, PROXY_READY, "", env) as running:
        yield running


def addon_path() -> str:
    result = subprocess.run(
        [PYTHON, "-m", "mcp_assay", "addon-path"], capture_output=True, check=True, timeout=30, cwd=ROOT
    )
    return result.stdout.decode().strip()


@contextmanager
def mitmdump(
    upstream_origin: str, *settings: str, path: str = "/mcp", env: dict[str, str] | None = None
) -> Iterator[RunningProxy]:
    """``mitmdump -s "$(mcp-assay addon-path)" --mode reverse:ORIGIN --set …`` on a free port."""
    port = free_port()
    command = [
        MITMDUMP, "-s", addon_path(), "--mode", f"reverse:{upstream_origin}", "--listen-host", "127.0.0.1",
        "-p", str(port), "--set", "flow_detail=0",
    ]  # fmt: skip
    for setting in settings:
        command += ["--set", setting]
    with _running(command, _MITMDUMP_READY, path, env) as running:
        yield running


if __name__ == "__main__":  # pragma: no cover - manual use
    print(addon_path(), file=sys.stderr)


def wait_until_exchanges_end(recording: Path, ceiling: float = 5.0) -> bool:
    """Wait until every HTTP exchange the recording began has its ``end`` record (a client's last
    disconnects have reached the proxy), bounded by ``ceiling``; whether they all did."""
    deadline = time.monotonic() + ceiling
    while True:
        begun, ended = set(), set()
        if recording.exists():
            for line in recording.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # the line being written
                if record.get("type") == "http":
                    begun.add(record.get("x"))
                elif record.get("type") == "end":
                    ended.add(record.get("x"))
        if begun and begun <= ended:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
