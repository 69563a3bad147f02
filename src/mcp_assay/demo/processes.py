"""The demo's two processes: the bundled drafts server, and ``mcp-assay proxy`` in front of it.

Both listen on 127.0.0.1 only, on free ports, and both are waited for with a bound. The server's
bearer tokens reach it through its environment (never its command line, which other local users
can read), its output goes to ``server.log`` in the demo's folder, and it runs in a process group
of its own so stopping it stops everything it started. The proxy is the real ``mcp-assay proxy``
(:class:`~mcp_assay.testing.ProxyProcess`): a subprocess, since mitmproxy wants its own event loop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_assay.testing import PROXY_READY, ProxyProcess
from mcp_assay.vocabulary.errors import TargetError, Unreachable

__all__ = ["DraftsServer", "free_port", "start_proxy"]

START_TIMEOUT = 30.0
STOP_GRACE = 5.0
HOST = "127.0.0.1"
_KEPT_ENV = ("MCP_ASSAY_CACHE_DIR",)
"""The only ``MCP_ASSAY_*`` variables the proxy inherits (the demo passes everything else as flags)."""


def free_port() -> int:
    """A port nothing listens on right now, on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no output)"
    return " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip()) or "(no output)"


@dataclass
class DraftsServer:
    """The drafts example server, started for the demo."""

    process: subprocess.Popen[bytes]
    build: str
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/mcp"

    @property
    def count_url(self) -> str:
        """The server's test route that counts the stored drafts (a witness read behind the MCP tools' back)."""
        return f"http://{HOST}:{self.port}/_test/drafts/count"

    @classmethod
    def start(
        cls, build: str, folder: Path, tokens: Mapping[str, str], *, timeout: float = START_TIMEOUT
    ) -> DraftsServer:
        """Start the ``build`` build with its store in ``folder`` and wait until its port accepts connections."""
        port = free_port()
        log = folder / "server.log"
        argv = [
            sys.executable, "-m", "mcp_assay.demo.drafts_server", "--build", build,
            "--store", str(folder / "drafts.json"), "http", str(port),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.update({f"DRAFTS_{role.upper()}_TOKEN": token for role, token in tokens.items()})
        with log.open("wb") as output:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,
            )  # fmt: skip
        server = cls(process, build, port, log)
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise Unreachable(
                    f"the demo's example server (drafts, {build} build) exited with code {process.returncode} before "
                    f"it listened on {HOST}:{port}; its last output: {_tail(log, 3)} (all of it: {log})"
                )
            with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
                return server
            if time.monotonic() > deadline:
                server.stop()
                raise Unreachable(
                    f"the demo's example server (drafts, {build} build) did not listen on {HOST}:{port} within "
                    f"{timeout:g} s; its last output: {_tail(log, 3)} (all of it: {log})"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL if it is still there after a grace period."""
        for sig, wait in ((signal.SIGTERM, STOP_GRACE), (signal.SIGKILL, 2.0)):
            if self.process.poll() is not None:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=wait)


def start_proxy(
    upstream: str,
    *,
    record: Path,
    report: Path,
    secrets: Sequence[str],
    spec_args: Sequence[str],
    on_line: Callable[[str], None],
) -> ProxyProcess:
    """``mcp-assay proxy --upstream UPSTREAM`` on a free loopback port, printing live findings only."""
    command = [
        sys.executable, "-m", "mcp_assay", "proxy", "--upstream", upstream, "--listen-host", HOST,
        "--listen-port", "0", "--live", "findings", "--record", str(record), "--report", f"json:{report}",
        "--fail-on", "never", *spec_args,
    ]  # fmt: skip
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_ASSAY_") or key in _KEPT_ENV}
    # Secrets through the environment, not the command line; a wide virtual terminal keeps each line whole.
    env.update({"MCP_ASSAY_SECRETS": " ".join(secrets), "PYTHONUNBUFFERED": "1", "COLUMNS": "250"})
    try:
        return ProxyProcess.start(command, PROXY_READY, env=env, on_line=on_line)
    except RuntimeError as exc:
        raise TargetError(f"mcp-assay proxy could not start in front of the drafts server: {exc}") from exc
