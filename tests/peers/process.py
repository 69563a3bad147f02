"""Start peers as subprocesses on free loopback ports and stop them, with every wait bounded."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
START_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"peer exited with {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout}s")


def stop(process: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


@dataclass
class RunningServer:
    url: str
    port: int
    process: subprocess.Popen[bytes]


@contextmanager
def http_server(
    command: Sequence[str], port: int, path: str = "/mcp", env: dict[str, str] | None = None
) -> Iterator[RunningServer]:
    """Run ``command`` (which must listen on ``port``) until the block ends."""
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    try:
        wait_for_port(port, process)
        yield RunningServer(f"http://127.0.0.1:{port}{path}", port, process)
    finally:
        stop(process)


def sdk_server_command(*flags: str, port: int | None = None) -> list[str]:
    """The Python SDK fixture server: stdio when ``port`` is None, else Streamable HTTP."""
    script = str(HERE / "sdk_server.py")
    if port is None:
        return [PYTHON, script, "stdio"]
    return [PYTHON, script, "http", str(port), *flags]


@contextmanager
def sdk_http_server(*flags: str) -> Iterator[RunningServer]:
    port = free_port()
    with http_server(sdk_server_command(*flags, port=port), port) as server:
        yield server
