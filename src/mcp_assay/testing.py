"""mcp-assay inside your own tests: a judging proxy in front of your server, and its verdicts.

Server authors already have tests that drive their server with a real client. Putting
``mcp-assay proxy`` between the two for the length of a ``with`` block turns every one of those
tests into a conformance check of the traffic it makes, with no second harness to keep in step:

    from mcp_assay.testing import assay_proxy

    def test_my_tools(my_server_url):
        with assay_proxy(my_server_url) as proxy:
            run_my_client(proxy.url)        # the client talks to the proxy, not the server
        proxy.assert_conformant()           # a failed MUST (or SHOULD, with fail_on="should") fails the test

The proxy is the real ``mcp-assay proxy`` in a subprocess (mitmproxy needs its own event loop and
judging its own process), started on a free port; leaving the block stops it as Ctrl-C would, so
it writes its report, which :attr:`AssayProxy.report` reads back. :mod:`mcp_assay.pytest_plugin`
wraps this in a fixture.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from mcp_assay.addon.worker import HURRY_GRACE
from mcp_assay.report.model import FailOn, Report
from mcp_assay.vocabulary.verdicts import Verdict
from mcp_assay.wire.lines import lines_until_closed

__all__ = ["AssayProxy", "ProxyProcess", "assay_proxy", "describe_failures"]

READY_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0
PROXY_READY = re.compile(r"mcp-assay proxy listening on (?:http://)?([\d.]+):(\d+)")
"""The line ``mcp-assay proxy`` prints once it listens (its port is the second group)."""


@dataclass
class ProxyProcess:
    """A proxy subprocess, the port it announced, and everything it printed (read on threads, so the
    pipes never fill)."""

    process: subprocess.Popen[bytes]
    port: int = 0
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)

    @property
    def output(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)

    @classmethod
    def start(
        cls,
        command: Sequence[str],
        ready: re.Pattern[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        on_line: Callable[[str], None] | None = None,
        new_session: bool = False,
    ) -> ProxyProcess:
        """Start ``command`` and wait (bounded) until a line matches ``ready``; its second group is the port.

        ``on_line`` is called with every line the process prints (on a reader thread), as it prints it.
        ``new_session``: start it as the leader of a session of its own, so that every process it ever
        started can be found afterwards (they keep its session id)."""
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=new_session,
        )
        running = cls(process)
        announced = threading.Event()
        for stream, sink in ((process.stdout, running.stdout), (process.stderr, running.stderr)):
            reader = threading.Thread(target=running._read, args=(stream, sink, ready, announced, on_line), daemon=True)
            reader.start()
            running.readers.append(reader)
        deadline = time.monotonic() + READY_TIMEOUT
        while not announced.wait(0.05):
            if process.poll() is not None or time.monotonic() > deadline:
                running.stop()
                raise RuntimeError(f"the proxy did not start (exit {process.poll()}):\n{running.output}")
        return running

    def _read(
        self,
        stream: IO[bytes] | None,
        sink: list[str],
        ready: re.Pattern[str],
        announced: threading.Event,
        on_line: Callable[[str], None] | None = None,
    ) -> None:
        if stream is None:
            return
        for raw in lines_until_closed(stream):
            line = raw.decode("utf-8", "replace")
            sink.append(line)
            if on_line is not None:
                on_line(line)
            match = ready.search(line)
            if match and not announced.is_set():
                self.port = int(match.group(2))
                announced.set()

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """Ctrl-C: the proxy finishes, writes its report and exits. If judging takes longer than ``timeout``,
        a second Ctrl-C has the report written from what was judged; a proxy still running after that is killed."""
        for signum, wait in ((signal.SIGINT, timeout), (signal.SIGINT, HURRY_GRACE + 5.0), (signal.SIGKILL, 5.0)):
            if self.process.poll() is not None:
                break
            self.process.send_signal(signum)
            try:
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        for reader, pipe in zip(self.readers, (self.process.stdout, self.process.stderr), strict=False):
            reader.join(5)
            if pipe is not None and not reader.is_alive():
                pipe.close()  # a pipe still held open elsewhere is left to its reader, never closed under it
        return self.process.returncode


def describe_failures(verdicts: Sequence[Verdict]) -> str:
    """One line per failed verdict (requirement IDs, level, check, reason), for an assertion message."""
    return "\n".join(
        f"  ✗ {' '.join(verdict.requirements)} [{verdict.level.value}] {verdict.check}: {verdict.reason}"
        for verdict in verdicts
    )


@dataclass
class AssayProxy:
    """A running (then stopped) ``mcp-assay proxy`` in front of one server."""

    upstream: str
    running: ProxyProcess
    report_path: Path
    recording: Path | None
    path: str

    @property
    def url(self) -> str:
        """Where the client connects: the proxy, on the upstream's path."""
        return f"http://127.0.0.1:{self.running.port}{self.path}"

    @property
    def output(self) -> str:
        """Everything the proxy printed: live findings, then the terminal report."""
        return self.running.output

    @property
    def report(self) -> Report:
        """The proxy's report (available once the proxy has stopped)."""
        if self.running.process.poll() is None:
            raise RuntimeError("the proxy is still running: its report is written when the `with` block ends")
        if not self.report_path.is_file():
            raise RuntimeError(f"the proxy wrote no report (exit {self.running.process.returncode}):\n{self.output}")
        return Report.from_json(json.loads(self.report_path.read_text(encoding="utf-8")))

    checked: bool = False
    """Whether the verdicts were asked for (the pytest fixture then leaves them to the test)."""

    def stop(self) -> None:
        """Stop the proxy now (it writes its report); leaving the ``with`` block does the same."""
        self.running.stop()

    def failures(self, fail_on: str = "must") -> list[Verdict]:
        """The failed verdicts ``fail_on`` (``must`` or ``should``) counts against the software."""
        policy = FailOn(fail_on)
        self.checked = True
        return [verdict for verdict in self.report.failed() if policy.decides(verdict)]

    def assert_conformant(self, fail_on: str = "must") -> None:
        """Raise ``AssertionError`` listing every failure ``fail_on`` counts; the report has the evidence."""
        __tracebackhide__ = True  # pytest shows the message, not this frame
        report = self.report
        if report.unjudged is not None:
            self.checked = True
            raise AssertionError(
                f"mcp-assay judged nothing between the client and {self.upstream}: {report.unjudged} "
                f"(report: {self.report_path})"
            )
        failed = self.failures(fail_on)
        if failed:
            raise AssertionError(
                f"mcp-assay: {len(failed)} requirement(s) failed between the client and {self.upstream} "
                f"(report: {self.report_path})\n{describe_failures(failed)}"
            )


@contextmanager
def assay_proxy(
    upstream: str,
    *,
    report: Path | None = None,
    record: Path | None = None,
    spec_dir: str | Path | None = None,
    inject: str | Sequence[str] = (),
    inject_hold_ms: int | None = None,
    probe_server: bool = False,
    options: Sequence[str] = (),
) -> Iterator[AssayProxy]:
    """Run ``mcp-assay proxy --upstream UPSTREAM`` on a free port for the block; read the verdicts after it.

    ``report`` is where the JSON report goes (a temporary file by default), ``record`` an optional
    recording, ``spec_dir`` the schema folder (else ``MCP_ASSAY_SPEC_DIR`` or the cache),
    ``inject`` the fault families to inject toward the client (``"all"``, or ``"version,hold"``
    ...; see ``--inject``) with ``inject_hold_ms`` for the hold family, ``probe_server`` to probe
    the server on the client's revision and credentials as well, and ``options`` any further
    ``mcp-assay proxy`` flags (``--secret``, ``--baseline`` ...)."""
    folder = Path(tempfile.mkdtemp(prefix="mcp-assay-"))
    report_path = report or folder / "report.json"
    command = [
        sys.executable, "-m", "mcp_assay", "proxy", "--upstream", upstream, "--listen-port", "0",
        "--live", "findings", "--report", f"json:{report_path}", "--fail-on", "never",
    ]  # fmt: skip
    if record is not None:
        command += ["--record", str(record)]
    if spec_dir is not None:
        command += ["--spec-dir", str(spec_dir)]
    for family in [inject] if isinstance(inject, str) else inject:
        command += ["--inject", family]
    if inject_hold_ms is not None:
        command += ["--inject-hold-ms", str(inject_hold_ms)]
    if probe_server:
        command.append("--probe-server")
    command += list(options)
    running = ProxyProcess.start(command, PROXY_READY)
    path = re.sub(r"^[a-z]+://[^/]*", "", upstream) or "/"
    proxy = AssayProxy(upstream, running, report_path, record, path)
    try:
        yield proxy
    finally:
        running.stop()
