"""Judging in a process of its own, so the traffic never waits for the checks.

Checks are CPU work (schema validation above all) and Python threads share one interpreter
lock: judging on a thread inside mitmproxy or the stdio tap would hold back the event loop or
the relay threads for milliseconds per exchange. So the proxy and the tap only describe what
they see as records and hand them to a worker process (``python -m mcp_assay.addon.worker``):
the thread that saw a record writes it as a JSON line and sends the lines in batches on the worker's stdin
(:mod:`mcp_assay.addon.feeder`, which says why not another thread), and the worker records
each at once on its reading thread, judges it on another (printing live findings) and, at end of
input, writes the reports. While the traffic flows the judging thread yields the CPU to it
(:mod:`mcp_assay.addon.sharing`) and never takes more: what it has yet to judge is bounded, and when
judging cannot keep up it stops judging new exchanges live, records them, and the report says how many
are left to ``mcp-assay validate`` (:mod:`mcp_assay.addon.backlog`).

The worker runs in its own process group and ignores SIGINT/SIGTERM: a Ctrl-C aimed at the
proxy, or a client killing the tap's process group, must not cost the report. How it stops is
defined whatever the session's length (:meth:`RemoteSession.close`):

* at end of input it judges everything and writes the reports, however long that takes; the
  parent waits for it and never exits before it;
* asked to *hurry* (a second Ctrl-C or SIGTERM while the report is being written, or the finish
  timeout passing) it judges no more records (it still writes them to the recording, which stays
  whole), runs no further check, and writes the report from what it has judged, which says so: the
  checks it did not run are *not verified*, with that reason;
* if that takes longer than :data:`HURRY_GRACE` seconds, or on a third signal, the parent kills
  it and says that no report was written;
* if the parent itself dies (SIGKILL), the end of the control pipe tells the worker, which hurries
  and exits within :data:`HURRY_GRACE` seconds: no process is left behind, and the report is kept.

The stdio tap differs in two ways, because MCP clients stop their server by closing its stdin and
then, a couple of seconds later, signalling and killing it (the tap, here) as a matter of course: a
signal while the tap waits for the report does not cut judging short, and a worker whose tap was
killed finishes the whole report (``orphaned="finish"``) instead of hurrying.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO, cast

from mcp_assay.addon.backlog import JudgingBacklog
from mcp_assay.addon.feeder import BATCH_DELAY, LineFeeder
from mcp_assay.addon.sharing import Pace, Sharing
from mcp_assay.report.about import Target
from mcp_assay.wire import jsontext

__all__ = ["BATCH_DELAY", "HURRY_GRACE", "Finished", "RemoteSession", "WorkerSettings", "finish", "main", "say"]

log = logging.getLogger("mcp_assay.worker")

HURRY_GRACE = 10.0
"""Seconds a worker asked to hurry has to write its report before it is killed."""
PROGRESS_AFTER = 2.0
"""Seconds of waiting for the report before the parent asks the worker to say what it is waiting for."""
_REASONS = {
    b"i": "a second interrupt (Ctrl-C or SIGTERM) while the report was being written",
    b"t": "the finish timeout",
    b"": "the process that fed it ended",
}
"""Why a worker hurries, by what the parent wrote on the control pipe (nothing: the pipe ended)."""
_ENDING = b"e"
"""Control byte: the traffic has ended (the input is being closed), so the worker stops yielding to it."""
_PROGRESS = {
    b"p": "mcp-assay: judging the session for the report…",
    b"q": "mcp-assay: judging the session for the report… (interrupt to write it from what has been judged so far)",
}
"""Status lines the parent asks the worker to print while it waits (the worker drops them once it reports, so
that one never follows the verdict), by the byte on the control pipe."""


@dataclass
class WorkerSettings:
    """Everything the worker needs; sent as the first line of its input (never on its command line)."""

    spec_dir: str | None = None
    spec_paths: list[str] = field(default_factory=list)
    record: str | None = None
    record_source: str = ""
    record_options: dict[str, Any] = field(default_factory=dict)
    """The options the session was started with, for the recording's header (redacted there)."""
    secrets: list[str] = field(default_factory=list)
    live: str = "all"
    reports: list[str] = field(default_factory=list)
    stream: str = "stdout"
    """Where live lines and the terminal report go: ``stdout`` or ``stderr``."""
    fail_on: str = "must"
    baseline: str | None = None
    """A baseline file (checked by whoever started the worker) applied to the final report."""
    show: list[str] = field(default_factory=list)
    """The listings the terminal report gives in full (``--show``: section keys)."""
    write_baseline: str | None = None
    """A baseline file to write from the session's failures (``--write-baseline``)."""
    sdk: list[str] = field(default_factory=list)
    """``--sdk`` values (checked by whoever started the worker): the SDKs the peers are built on, or ``none``."""
    accept_sdk_findings: bool = False
    """``--accept-sdk-findings``: the failures known in those SDKs no longer decide the exit status."""
    target: dict[str, Any] = field(default_factory=dict)
    """The report's :class:`~mcp_assay.report.about.Target`, in its JSON form."""
    result: str = ""
    """A file the worker writes its :class:`Finished` summary to."""
    orphaned: str = "hurry"
    """What the worker does when its parent dies: ``hurry`` (the proxy) or ``finish`` the whole report (the tap,
    which clients kill as a matter of course once they have closed its stdin)."""
    log_level: int = logging.WARNING
    """The parent's log level: the worker's log lines go to stderr as the parent's do, redacted the same way."""
    control_fd: int | None = None
    """The read end of the control pipe: a byte from :data:`_REASONS` asks the worker to hurry, and its
    end means the parent is gone."""


@dataclass
class Finished:
    """What a finished session produced."""

    exit_code: int
    verdict: str = ""
    written: list[str] = field(default_factory=list)
    error: str = ""
    unjudged: str = ""
    """Why the session was not judged (no peer ever answered), when it was not."""


def finish(
    session: Any,
    reports: Sequence[str],
    stream: IO[str],
    stop: Callable[[], str] | None = None,
    *,
    show: Sequence[str] = (),
    write_baseline: str | None = None,
    reporting: Callable[[], None] = lambda: None,
) -> Finished:
    """Close a :class:`~mcp_assay.addon.live.LiveSession`, judge everything, write the reports.

    ``stop`` returning a reason cuts judging short: the checks not run yet are reported not verified.
    The terminal report lists ``show`` in full; ``write_baseline`` is a baseline file to write as well.
    ``reporting`` is called once judging is done, before the first line of a report is written."""
    from rich.console import Console

    from mcp_assay.report import emit_reports, parse_report_option

    session.close()
    report = session.report(stop=stop)
    reporting()
    console = Console(file=stream)
    written = emit_reports(
        report,
        [parse_report_option(value) for value in reports],
        stdout=console,
        notices=Console(stderr=True),
        show=frozenset(show),
        write_baseline=Path(write_baseline) if write_baseline else None,
    )
    return Finished(
        report.exit_code(), report.verdict()[1], [str(path) for path in written], unjudged=report.unjudged or ""
    )


# -- the worker (child) ------------------------------------------------------------------------------
class _Lenient(io.TextIOBase):
    """A terminal stream whose reader may go away (a client that died with the tap, ``| head``): what is
    written after that is dropped instead of raising, so the report files are still all written."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._stream.write(text)
            except (OSError, ValueError):
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self.gone = True

    def isatty(self) -> bool:
        try:
            return self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        return self._stream.fileno()


class _Hurry:
    """Set when the parent asks the worker to hurry (or dies); says why."""

    def __init__(
        self, orphaned: str = "hurry", say: Callable[[str], None] = lambda text: None, sharing: Sharing | None = None
    ) -> None:
        self.event = threading.Event()
        self.reason = ""
        self.orphaned = orphaned
        self.say = say
        """Prints a status line the parent asked for."""
        self.sharing = sharing
        """The judging thread's scheduling: ordinary once the traffic ends."""

    def __call__(self) -> str:
        """Why to hurry; empty while there is no reason to."""
        return self.reason if self.event.is_set() else ""

    def listen(self, fd: int) -> None:
        """Read the control pipe (on a thread) until it ends: status lines to print, the end of the traffic, or a
        reason to hurry."""
        sharing = self.sharing
        while True:
            try:
                data = os.read(fd, 64)
            except (OSError, ValueError):
                data = b""
            for byte in data:
                key = bytes([byte])
                if key in _PROGRESS:
                    self.say(_PROGRESS[key])
                elif key == _ENDING and sharing is not None:
                    sharing.ordinary(for_good=True)
                elif key in _REASONS and not self.event.is_set():
                    self.reason = _REASONS[key]
                    self.event.set()
                    if sharing is not None:
                        sharing.ordinary(for_good=True)
            if data:
                continue
            if sharing is not None:
                sharing.ordinary(for_good=True)
            if self.orphaned == "finish":
                return  # judge everything, however long it takes: nobody is waiting, but the report is wanted
            if not self.event.is_set():
                self.reason = _REASONS[b""]
                self.event.set()
            # the parent is gone: nobody can stop this process any more, so it stops itself
            timer = threading.Timer(HURRY_GRACE, os._exit, args=(3,))
            timer.daemon = True
            timer.start()
            return


class _StatusLines:
    """Status lines and the report share the terminal: once the report is being written, a status line asked for
    would follow the verdict, so it is dropped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reporting = False

    def say(self, text: str) -> None:
        with self._lock:
            if not self.reporting:
                say(text)

    def report_begins(self) -> None:
        with self._lock:
            self.reporting = True


def main() -> None:
    # while traffic flows the judging thread yields to it (sharing.py); once the traffic
    # ends it judges at the proxy's priority again: at a lower one for good (tried: nice 10) a loaded machine
    # starved it, and the report took 7 to 15 s after Ctrl-C instead of about one
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    from rich.console import Console

    from mcp_assay.addon.live import LiveSession, Printer
    from mcp_assay.recording.logs import configure as configure_logs
    from mcp_assay.recording.records import RecordingWriter
    from mcp_assay.recording.redaction import Redactor
    from mcp_assay.report.baseline import read_baseline
    from mcp_assay.report.model import FailOn
    from mcp_assay.report.sdks import parse_sdk
    from mcp_assay.spec import load_spec
    from mcp_assay.spec.collector import JUDGING_THRESHOLDS, set_aside_what_is_loaded
    from mcp_assay.spec.engine import registered_checks
    from mcp_assay.spec.provenance import provenance

    gc.set_threshold(*JUDGING_THRESHOLDS)  # this process judges, and nothing else (collector.py says why)

    sys.stdout, sys.stderr = cast(TextIO, _Lenient(sys.stdout)), cast(TextIO, _Lenient(sys.stderr))
    source = sys.stdin.buffer
    settings = WorkerSettings(**json.loads(source.readline()))
    redactor = Redactor(secrets=settings.secrets)
    configure_logs(settings.log_level, redactor)  # the session's redactor: it learns credentials from the traffic
    status = _StatusLines()
    sharing = Sharing() if settings.control_fd is not None else None
    # judging yields to the traffic and never takes more while it flows, however far behind: the backlog's
    # bound (backlog.py), not the CPU, limits what it holds
    hurry = _Hurry(settings.orphaned, status.say, sharing)
    if settings.control_fd is not None:
        listener = threading.Thread(target=hurry.listen, args=(settings.control_fd,), name="control", daemon=True)
        listener.start()
    stream = sys.stderr if settings.stream == "stderr" else sys.stdout
    result = Finished(exit_code=3)
    reading = [True]
    try:
        spec = load_spec(spec_dir=settings.spec_dir, spec_paths=settings.spec_paths)
        recorder = None
        if settings.record:
            about = {**provenance(spec), "options": settings.record_options}
            recorder = RecordingWriter(settings.record, redactor, source=settings.record_source, about=about)
        session = LiveSession(
            spec,
            redactor=redactor,
            recorder=recorder,
            printer=Printer(settings.live, console=Console(file=stream)),
            target=Target.from_json(settings.target),
            fail_on=FailOn(settings.fail_on),
            baseline=read_baseline(settings.baseline, registered_checks()),
            threaded=False,
            sdk=parse_sdk(settings.sdk, accept=settings.accept_sdk_findings),
        )
        set_aside_what_is_loaded()  # the schemas and the rules, for the rest of the session
        pace = Pace(ended=lambda: sharing.ended) if sharing is not None else None
        backlog = JudgingBacklog(
            session, stop=hurry, started=sharing.take_this_thread if sharing is not None else lambda: None,
            pace=pace.after_record if pace is not None else lambda last_arrival: None, **_test_hooks(),
        )  # fmt: skip
        if os.environ.get(STATUS_VARIABLE):
            backlog.write_status_every(os.environ[STATUS_VARIABLE], lambda: reading[0])
        unread = 0
        for line in source:  # this thread records every record at once; judging follows on the backlog's
            try:
                record = jsontext.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            session.keep_only(record)
            if hurry():  # keep reading, so the parent's writes end, and recording, but judge nothing more
                unread += 1
            else:
                backlog.offer(record, len(line))
        if sharing is not None:
            sharing.ordinary(for_good=True)  # the input ended: the rest and the report at the ordinary share
        backlog.close()
        reading[0] = False
        unread += backlog.unread
        shortfall = backlog.shortfall
        if shortfall:
            session.fell_behind(shortfall.exchanges, shortfall.records, shortfall.since, torn=backlog.torn())
        if hurry():
            session.cut_short(hurry.reason, unread)
        result = finish(
            session, settings.reports, stream, stop=hurry, show=settings.show, write_baseline=settings.write_baseline,
            reporting=status.report_begins,
        )  # fmt: skip
    except Exception as exc:  # say why there is no report rather than dying silently
        logging.getLogger("mcp_assay").exception("mcp-assay: judging failed")
        result = Finished(exit_code=3, error=f"{type(exc).__name__}: {exc}")
    finally:
        stream.flush()
        if settings.result:
            Path(settings.result).write_text(json.dumps(asdict(result)), encoding="utf-8")


STATUS_VARIABLE = "MCP_ASSAY_WORKER_STATUS"
"""An environment variable naming a file the worker writes its backlog's counts to, twice a second (JSON)."""
_TEST_HOOKS = {"MCP_ASSAY_TEST_JUDGE_DELAY": ("delay", float), "MCP_ASSAY_TEST_BACKLOG": ("records", int)}
"""Test hooks: seconds the judging thread sleeps per record, and the backlog's bound in records, so that a test
can make judging fall behind a few hundred requests."""


def _test_hooks() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for variable, (key, kind) in _TEST_HOOKS.items():
        value = os.environ.get(variable)
        if value:
            try:
                found[key] = kind(value)
            except ValueError:
                log.warning("mcp-assay: %s=%r is not a number; ignored", variable, value)
    return found


# -- the parent side ---------------------------------------------------------------------------------
def _descriptor(stream: IO[str]) -> int | None:
    """The file descriptor behind a stream, or None (inherit) when it has none (a test's capture)."""
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


@contextmanager
def _interrupts(handler: Callable[[], None]) -> Iterator[None]:
    """Route SIGINT and SIGTERM to ``handler`` for the block (main thread only; elsewhere nothing changes).

    The wait for the report runs inside mitmproxy's ``done`` hook or after the tap's server exited,
    where the usual handlers would be queued behind the wait or forward to a server that is gone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, lambda _signum, _frame: handler())
    try:
        yield
    finally:
        for signum, earlier in previous.items():
            if earlier is not None:
                signal.signal(signum, earlier)


class RemoteSession:
    """Feeds records to a worker process; :meth:`feed` never blocks and never raises."""

    def __init__(
        self,
        settings: WorkerSettings,
        *,
        python: str = sys.executable,
        batch_delay: float = BATCH_DELAY,
        log_level: int | None = None,
    ) -> None:
        """``log_level``: the level the worker logs at (default: this process's root logger's)."""
        handle, result = tempfile.mkstemp(prefix="mcp-assay-worker-", suffix=".json")
        os.close(handle)
        self.result_path = Path(result)
        settings.result = str(self.result_path)
        control, self._control = os.pipe()
        settings.control_fd = control
        settings.log_level = log_level if log_level is not None else logging.getLogger().getEffectiveLevel()
        try:
            self.process = subprocess.Popen(
                [python, "-m", "mcp_assay.addon.worker"],
                stdin=subprocess.PIPE,
                stdout=_descriptor(sys.stderr if settings.stream == "stderr" else sys.stdout),
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                process_group=0,
                pass_fds=(control,),
            )
        finally:
            os.close(control)
        assert self.process.stdin is not None
        self._feeder: LineFeeder[Mapping[str, Any]] = LineFeeder(
            self.process.stdin, self._lines_of, jsontext.dumps_line(asdict(settings)), batch_delay=batch_delay
        )
        self._closed = False
        self._hurried = False
        self._interrupts = 0
        self._unwritable = 0

    def waiting(self) -> int:
        """Records fed and not yet handed to the worker (:mod:`mcp_assay.addon.feeder` sends them in batches)."""
        return self._feeder.waiting()

    def feed(self, record: Mapping[str, Any]) -> None:
        """Hand a record to the worker: written with its batch, on the thread that fills it (feeder.py says why).
        The caller leaves the record unchanged after."""
        if self._closed:
            return
        self._feeder.feed(record)

    def _lines_of(self, records: Sequence[Mapping[str, Any]]) -> bytes:
        """A batch of records as JSON lines; a record that is not JSON data (a defect of ours, never the traffic's)
        is left out, and said once."""
        try:
            return jsontext.dumps_lines(records)
        except (TypeError, ValueError, RecursionError):
            pass
        lines = []
        for record in records:
            try:
                lines.append(jsontext.dumps_line(record))
            except (TypeError, ValueError, RecursionError):
                self._unwritable += 1
                if self._unwritable == 1:
                    log.exception("mcp-assay: a %s record could not be written as JSON; left out", record.get("type"))
        return b"".join(lines)

    def hurry(self, reason: bytes = b"i") -> None:
        """Ask the worker to stop judging and write the report from what it has judged (see the module)."""
        if self._hurried:
            return
        self._hurried = True
        self._tell(reason)

    def _tell(self, byte: bytes) -> None:
        try:
            os.write(self._control, byte)
        except OSError:
            pass

    def _interrupted(self) -> None:
        self._interrupts += 1

    def close(
        self, *, deadline: float | None = None, grace: float = HURRY_GRACE, interruptible: bool = True
    ) -> Finished:
        """End the input and wait until the worker has written the reports, however long judging takes.

        ``deadline`` (seconds from now) hurries the worker when it passes; so does a SIGINT or SIGTERM
        during the wait when ``interruptible``. A worker that has not finished ``grace`` seconds after it was
        hurried, or another signal after that, ends it: the worker is killed and the :class:`Finished` says
        no report was written."""
        if not self._closed:
            self._closed = True
            self._tell(_ENDING)  # first: the worker stops yielding to traffic that has ended
            self._feeder.end()
        started = time.monotonic()
        hurried_at: float | None = None
        seen = 0  # interrupts counted when the worker was hurried
        said = False
        killed = ""
        with _interrupts(self._interrupted) if interruptible else nullcontext():
            while True:
                try:
                    self.process.wait(0.1)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                if hurried_at is None and (self._interrupts or (deadline is not None and now - started >= deadline)):
                    self.hurry(b"i" if self._interrupts else b"t")
                    hurried_at, seen = now, self._interrupts
                    say(
                        "mcp-assay: judging is cut short; the report will cover what was judged so far"
                        + (" (interrupt again to stop without a report)" if interruptible else "")
                    )
                elif hurried_at is not None and (self._interrupts > seen or now - hurried_at >= grace):
                    killed = (
                        "interrupted again after judging was cut short"
                        if self._interrupts > seen
                        else f"still judging {grace:g} s after it was cut short"
                    )
                    self._kill()
                    break
                elif not said and now - started >= PROGRESS_AFTER:
                    said = True
                    self._tell(b"q" if interruptible else b"p")  # the worker says it, unless it is reporting already
        self._feeder.join(5.0)
        try:
            os.close(self._control)
        except OSError:
            pass
        if killed:
            self.result_path.unlink(missing_ok=True)
            return Finished(exit_code=3, error=f"the judging process was killed ({killed})")
        try:
            data = json.loads(self.result_path.read_text(encoding="utf-8"))
            return Finished(**data)
        except (OSError, ValueError, TypeError):
            return Finished(exit_code=3, error=f"the judging process ended with {self.process.returncode}")
        finally:
            self.result_path.unlink(missing_ok=True)

    def _kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.process.wait(5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
            pass


def say(text: str) -> None:
    """A line of mcp-assay's own on stderr, where the person waiting looks (stdout may be a report or the
    protocol); a reader that went away costs the line, never the exit code."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    main()
