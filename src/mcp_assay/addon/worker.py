"""Judging in a process of its own, so the traffic never waits for the checks.

Checks are CPU work (schema validation above all) and Python threads share one interpreter
lock: judging on a thread inside mitmproxy or the stdio tap would hold back the event loop or
the relay threads for milliseconds per exchange. So the proxy and the tap only describe what
they see as records and hand them to a worker process (``python -m mcp_assay.addon.worker``):
a writer thread sends them as JSON lines on the worker's stdin, and the worker records, judges,
prints live findings and, at end of input, writes the reports.

The worker runs in its own process group and ignores SIGINT/SIGTERM: a Ctrl-C aimed at the
proxy, or a client killing the tap's process group, must not cost the report. It stops when
its input ends, including when the parent dies.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

__all__ = ["Finished", "RemoteSession", "WorkerSettings", "finish", "main"]

log = logging.getLogger("mcp_assay.worker")

_STOP = object()
WAIT_S = 60.0


@dataclass
class WorkerSettings:
    """Everything the worker needs; sent as the first line of its input (never on its command line)."""

    spec_dir: str | None = None
    spec_paths: list[str] = field(default_factory=list)
    record: str | None = None
    record_source: str = ""
    secrets: list[str] = field(default_factory=list)
    live: str = "all"
    reports: list[str] = field(default_factory=list)
    stream: str = "stdout"
    """Where live lines and the terminal report go: ``stdout`` or ``stderr``."""
    fail_on: str = "must"
    baseline: str | None = None
    """A baseline file (checked by whoever started the worker) applied to the final report."""
    target: dict[str, Any] = field(default_factory=dict)
    result: str = ""
    """A file the worker writes its :class:`Finished` summary to."""


@dataclass
class Finished:
    """What a finished session produced."""

    exit_code: int
    verdict: str = ""
    written: list[str] = field(default_factory=list)
    error: str = ""


def finish(session: Any, reports: Sequence[str], stream: IO[str]) -> Finished:
    """Close a :class:`~mcp_assay.addon.live.LiveSession`, judge everything, write the reports."""
    from rich.console import Console

    from mcp_assay.report import emit_reports, parse_report_option

    session.close()
    report = session.report()
    console = Console(file=stream)
    written = emit_reports(
        report, [parse_report_option(value) for value in reports], stdout=console, notices=Console(stderr=True)
    )
    return Finished(report.exit_code(), report.verdict()[1], [str(path) for path in written])


# -- the worker (child) ------------------------------------------------------------------------------
def main() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    from rich.console import Console

    from mcp_assay.addon.live import LiveSession, Printer
    from mcp_assay.recording import RecordingWriter
    from mcp_assay.redaction import Redactor
    from mcp_assay.report.baseline import read_baseline
    from mcp_assay.report.model import FailOn
    from mcp_assay.spec import load_spec
    from mcp_assay.spec.engine import registered_checks

    source = sys.stdin.buffer
    settings = WorkerSettings(**json.loads(source.readline()))
    stream = sys.stderr if settings.stream == "stderr" else sys.stdout
    result = Finished(exit_code=3)
    try:
        spec = load_spec(spec_dir=settings.spec_dir, spec_paths=settings.spec_paths)
        redactor = Redactor(secrets=settings.secrets)
        recorder = None
        if settings.record:
            recorder = RecordingWriter(settings.record, redactor, source=settings.record_source)
        session = LiveSession(
            spec,
            redactor=redactor,
            recorder=recorder,
            printer=Printer(settings.live, console=Console(file=stream)),
            target=settings.target,
            fail_on=FailOn(settings.fail_on),
            baseline=read_baseline(settings.baseline, registered_checks()),
            threaded=False,
        )
        for line in source:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                session.feed(record)
        result = finish(session, settings.reports, stream)
    except Exception as exc:  # say why there is no report rather than dying silently
        logging.getLogger("mcp_assay").exception("mcp-assay: judging failed")
        result = Finished(exit_code=3, error=f"{type(exc).__name__}: {exc}")
    finally:
        stream.flush()
        if settings.result:
            Path(settings.result).write_text(json.dumps(asdict(result)), encoding="utf-8")


# -- the parent side ---------------------------------------------------------------------------------
def _descriptor(stream: IO[str]) -> int | None:
    """The file descriptor behind a stream, or None (inherit) when it has none (a test's capture)."""
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


class RemoteSession:
    """Feeds records to a worker process; :meth:`feed` never blocks and never raises."""

    def __init__(self, settings: WorkerSettings, *, python: str = sys.executable) -> None:
        handle, result = tempfile.mkstemp(prefix="mcp-assay-worker-", suffix=".json")
        os.close(handle)
        self.result_path = Path(result)
        settings.result = str(self.result_path)
        self.process = subprocess.Popen(
            [python, "-m", "mcp_assay.addon.worker"],
            stdin=subprocess.PIPE,
            stdout=_descriptor(sys.stderr if settings.stream == "stderr" else sys.stdout),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            process_group=0,
        )
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._queue.put(asdict(settings))
        self._broken = False
        self._closed = False
        self._writer = threading.Thread(target=self._write, name="mcp-assay-feed", daemon=True)
        self._writer.start()

    def feed(self, record: Mapping[str, Any]) -> None:
        if not self._closed and not self._broken:
            self._queue.put(record)

    def _write(self) -> None:
        pipe = self.process.stdin
        assert pipe is not None
        while True:
            item = self._queue.get()
            if item is _STOP:
                break
            if self._broken:
                continue
            try:
                pipe.write(json.dumps(item, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
                if self._queue.empty():
                    pipe.flush()
            except (OSError, ValueError):
                self._broken = True
                log.warning("mcp-assay: the judging process went away; traffic keeps flowing unjudged")
        try:
            pipe.close()
        except OSError:
            pass

    def close(self, timeout: float = WAIT_S) -> Finished:
        """End the input and wait for the worker to judge everything and write the reports."""
        if not self._closed:
            self._closed = True
            self._queue.put(_STOP)
        self._writer.join(timeout)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return Finished(exit_code=3, error=f"the judging process did not finish within {timeout:.0f} s")
        try:
            data = json.loads(self.result_path.read_text(encoding="utf-8"))
            return Finished(**data)
        except (OSError, ValueError, TypeError):
            return Finished(exit_code=3, error=f"the judging process ended with {self.process.returncode}")
        finally:
            self.result_path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
