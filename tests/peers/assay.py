"""Run mcp-assay's passive half as real subprocesses: ``mcp-assay proxy`` and ``mitmdump -s``.

Both print where they listen once they do; the helpers read that line (bounded), keep reading
the output on a thread so the pipe never fills, and stop the proxy with SIGINT so it writes its
report, as Ctrl-C would.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.peers.process import PYTHON, free_port

ROOT = Path(__file__).resolve().parents[2]
MITMDUMP = str(Path(PYTHON).with_name("mitmdump"))
READY_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0

_PROXY_READY = re.compile(r"mcp-assay proxy listening on (?:http://)?([\d.]+):(\d+)")
_MITMDUMP_READY = re.compile(r"listening at (?:http://)?([\d.]+):(\d+)")


@dataclass
class RunningProxy:
    """A proxy subprocess and everything it printed so far."""

    process: subprocess.Popen[bytes]
    port: int
    path: str
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    returncode: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    @property
    def output(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """Ctrl-C: the proxy finishes, writes its report and exits."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.returncode = self.process.returncode
        return self.returncode


def _reader(
    stream: object, sink: list[str], ready: threading.Event, pattern: re.Pattern[str], found: list[int]
) -> None:
    assert hasattr(stream, "readline")
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        sink.append(line)
        match = pattern.search(line)
        if match and not ready.is_set():
            found.append(int(match.group(2)))
            ready.set()


@contextmanager
def _running(
    command: Sequence[str], pattern: re.Pattern[str], path: str, env: dict[str, str] | None
) -> Iterator[RunningProxy]:
    process = subprocess.Popen(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200", **(env or {})},
        cwd=ROOT,
    )
    ready = threading.Event()
    found: list[int] = []
    running = RunningProxy(process, 0, path)
    threads = [
        threading.Thread(target=_reader, args=(process.stdout, running.stdout, ready, pattern, found), daemon=True),
        threading.Thread(target=_reader, args=(process.stderr, running.stderr, ready, pattern, found), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while not ready.wait(0.05):
            if process.poll() is not None or time.monotonic() > deadline:
                for thread in threads:
                    thread.join(2)
                raise RuntimeError(f"proxy did not start (exit {process.poll()}):\n{running.output}")
        running.port = found[0]
        yield running
    finally:
        running.stop()
        for thread in threads:
            thread.join(5)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


@contextmanager
def assay_proxy(
    upstream: str, *args: str, path: str | None = None, env: dict[str, str] | None = None
) -> Iterator[RunningProxy]:
    """``mcp-assay proxy --upstream URL --listen-port 0 ARGS...``"""
    command = [PYTHON, "-m", "mcp_assay", "proxy", "--upstream", upstream, "--listen-port", "0", *args]
    with _running(command, _PROXY_READY, path if path is not None else "/mcp", env) as running:
        yield running


@contextmanager
def assay_forward_proxy(*args: str, env: dict[str, str] | None = None) -> Iterator[RunningProxy]:
    """``mcp-assay proxy --mode regular --listen-port 0 ARGS...``"""
    command = [PYTHON, "-m", "mcp_assay", "proxy", "--mode", "regular", "--listen-port", "0", *args]
    with _running(command, _PROXY_READY, "", env) as running:
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
