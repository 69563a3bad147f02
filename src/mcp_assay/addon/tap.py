"""The stdio tap: a drop-in wrapper between an MCP client and the stdio server it launches.

The client starts ``mcp-assay tap -- <server command>`` where it would start the server. The tap
starts the server and relays the client's stdin to it and the server's stdout back, line by
line and byte for byte, recording each line *before* relaying it so the recording's order is
the causal order. The server's stderr is passed through (and kept in the recording as text);
signals the tap receives are forwarded to the server; end of input on the tap's stdin closes the
server's stdin; and the tap exits the way the server did (the same code, or the same signal).

The tap never writes anything of its own to stdout, which is the protocol channel: live findings
and the terminal report go to stderr. The one exception is asked for: with ``--inject`` the tap
answers a line on the server's behalf, or holds an answer back, as :mod:`mcp_assay.addon.inject.stdio`
decides; those lines are tagged as injected in the recording.

Stderr is not protocol traffic and nothing bounds it, so it is passed on as read and recorded within
limits: each line cut at :data:`STDERR_LINE_LIMIT` bytes, :data:`STDERR_RECORD_LIMIT` bytes recorded in
all, the rest counted and noted.

The server and the client may end in any order. When the server has exited the tap ends its own stdout,
so the client reads end of file as it would from the server itself, and gives the client
:data:`JOIN_TIMEOUT` seconds to close stdin: what the client still writes cannot reach the server, and is
recorded as ``undelivered`` observations, never as lines the server was sent. Run from the command line
the relays use :mod:`mcp_assay.addon.descriptors`, so a relay thread still blocked on the client when
the tap exits cannot make the interpreter abort. A command that cannot be started is recorded as such
(``start-failed``), and the session then has nothing to judge (:mod:`mcp_assay.recording.presence`).
"""

from __future__ import annotations

import itertools
import logging
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp_assay.addon.inject.stdio import Answer, StdioInjector
from mcp_assay.recording.presence import START_FAILED
from mcp_assay.recording.records import exit_record, line_record, observation_record
from mcp_assay.vocabulary.replays import STARTED
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.lines import Line, LineSplitter, Readable, lines_until_closed
from mcp_assay.wire.model import Hop, Probe

__all__ = ["FORWARDED_SIGNALS", "STDERR_LINE_LIMIT", "STDERR_RECORD_LIMIT", "Tap", "exit_like", "start_error"]

log = logging.getLogger("mcp_assay.tap")


class Feed(Protocol):
    """Where records go: a :class:`~mcp_assay.addon.worker.RemoteSession` or a live session."""

    def feed(self, record: Mapping[str, Any]) -> None: ...


class HopFeed:
    """A feed that stamps the tap's traffic with a gateway's hop (``mcp-assay tap --hop back`` in front of the stdio
    server a gateway spawns: its lines are the gateway's back hop, judged with a capture of its front)."""

    def __init__(self, session: Feed, hop: Hop) -> None:
        self.session = session
        self.hop = hop

    def feed(self, record: Mapping[str, Any]) -> None:
        if record.get("type") in ("line", "exit"):
            record = {**record, "hop": self.hop.value}
        self.session.feed(record)


class Writable(Protocol):
    """Where the tap writes for the client: its stdout or stderr (a :class:`~mcp_assay.addon.descriptors.Descriptor`
    when run from the command line)."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


FORWARDED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name)
)  # fmt: skip
STDERR_LINE_LIMIT = 4000
"""Bytes of one stderr line recorded; the rest of the line is counted."""
STDERR_RECORD_LIMIT = 1024 * 1024
"""Bytes of stderr recorded per server; later lines are passed on and counted, not recorded."""
UNDELIVERED_LIMIT = 100
"""Undelivered client lines recorded one by one; later ones are counted."""
JOIN_TIMEOUT = 2.0


@dataclass
class _StderrCount:
    """How much stderr a server wrote, and how much of it was recorded."""

    bytes: int = 0
    lines: int = 0
    recorded: int = 0
    """Characters of stderr text recorded."""
    cut: int = 0
    unrecorded: int = 0


def _text(line: bytes) -> str:
    text = line.decode("utf-8", "replace").rstrip("\r\n")
    return text if len(text) <= STDERR_LINE_LIMIT else text[:STDERR_LINE_LIMIT] + "…"


@dataclass
class Tap:
    """One wrapped server process."""

    command: Sequence[str]
    session: Feed
    stdin: Readable
    stdout: Writable
    stderr: Writable
    signals: list[str] = field(default_factory=list)
    stdin_closed_at: float | None = None
    process: subprocess.Popen[bytes] | None = None
    connection: str = ""
    forward_signals: bool = True
    """Install handlers that pass SIGTERM, SIGINT ... on to the server (off when embedded in tests)."""
    injector: StdioInjector | None = None
    """Answers or holds back lines on the server's behalf (``--inject``); ``None``: the tap only relays."""
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _exited: threading.Event = field(default_factory=threading.Event)
    _stderr: _StderrCount = field(default_factory=lambda: _StderrCount())
    _out: threading.Lock = field(default_factory=threading.Lock)
    """One writer at a time on the client's stdout (the relay, and a held answer's timer)."""
    _timers: list[threading.Timer] = field(default_factory=list)

    def _ident(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    # -- relays ---------------------------------------------------------------------------------------
    def _client_to_server(self) -> None:
        process = self.process
        assert process is not None and process.stdin is not None
        gone = ""
        undelivered = 0
        for line in lines_until_closed(self.stdin):
            action = self.injector.client_line(line) if self.injector is not None else None
            if isinstance(action, Answer):  # answered on the server's behalf: the server never sees it
                self.session.feed(
                    line_record(self._ident("c"), self.connection, Side.CLIENT, time.time(), line, action.probe)
                )
                self._to_client(action.line, action.probe)
                continue
            if not gone and self._exited.is_set():
                gone = "the server had exited"
            if gone:
                undelivered += 1
                if undelivered <= UNDELIVERED_LIMIT:
                    self._feed_observation("undelivered", {"text": _text(line), "reason": gone})
                continue
            ident = self._ident("c")
            probe = action.probe if action is not None else None
            self.session.feed(line_record(ident, self.connection, Side.CLIENT, time.time(), line, probe))
            try:
                process.stdin.write(line)
                process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:
                # recorded before the server went: say it never arrived, and record what follows as undelivered
                gone = f"the server had gone ({type(exc).__name__})"
                self._feed_observation("undelivered", {"line": ident, "reason": f"writing it failed: {gone}"})
        if undelivered > UNDELIVERED_LIMIT:
            detail = f"the client wrote {undelivered} line(s) after the server was gone; the first {UNDELIVERED_LIMIT} "
            self._feed_observation("note", {"detail": detail + "are recorded as undelivered"})
        self.stdin_closed_at = time.time()
        try:
            process.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def _server_to_client(self) -> None:
        process = self.process
        assert process is not None and process.stdout is not None
        for line in lines_until_closed(process.stdout):
            held = self.injector.server_line(line) if self.injector is not None else None
            if held is not None:
                assert self.injector is not None
                timer = threading.Timer(self.injector.hold_seconds, self._to_client, args=(line, held))
                timer.daemon = True
                self._timers.append(timer)
                timer.start()
                continue
            self._to_client(line, None)

    def _to_client(self, line: bytes, probe: Probe | None) -> None:
        """Record a line for the client (tagged when mcp-assay wrote or delayed it), then write it."""
        with self._out:
            self.session.feed(line_record(self._ident("s"), self.connection, Side.SERVER, time.time(), line, probe))
            try:
                self.stdout.write(line)
                self.stdout.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # the client went away; keep draining so the server is never blocked on a full pipe

    def _read_stderr(self) -> None:
        process = self.process
        assert process is not None and process.stderr is not None
        fd = process.stderr.fileno()
        splitter = LineSplitter(STDERR_LINE_LIMIT)
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            try:
                self.stderr.write(chunk)
                self.stderr.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass
            self._stderr.bytes += len(chunk)
            for line in splitter.feed(chunk):
                self._record_stderr(line)
        last = splitter.close()
        if last is not None:
            self._record_stderr(last)
        count = self._stderr
        if count.cut or count.unrecorded:
            detail = (
                f"the server wrote {count.bytes} bytes of stderr in {count.lines} line(s); {count.cut} line(s) "
                f"were cut at {STDERR_LINE_LIMIT} bytes and {count.unrecorded} more line(s), past the "
                f"{STDERR_RECORD_LIMIT} bytes recorded, were passed on but not recorded"
            )
            self._feed_observation("note", {"detail": detail})

    def _record_stderr(self, line: Line) -> None:
        count = self._stderr
        count.lines += 1
        if count.recorded >= STDERR_RECORD_LIMIT:
            count.unrecorded += 1
            return
        text = line.text()
        if len(text) > STDERR_RECORD_LIMIT - count.recorded:
            text = text[: STDERR_RECORD_LIMIT - count.recorded]
        count.recorded += len(text)
        count.cut += 1 if line.dropped else 0
        self._feed_observation("stderr", {"text": text})

    def _feed_observation(self, kind: str, data: dict[str, Any]) -> None:
        self.session.feed(observation_record(self._ident("e"), time.time(), kind, data, self.connection))

    # -- signals --------------------------------------------------------------------------------------
    def _forward(self, signum: int, _frame: object) -> None:
        process = self.process
        self.signals.append(signal.Signals(signum).name)
        if process is not None and process.poll() is None:
            try:
                process.send_signal(signum)
            except OSError:
                pass

    # -- running --------------------------------------------------------------------------------------
    def run(self) -> int:
        """Relay until the server exits; return its exit code (negative: killed by that signal).

        A command that cannot be started raises :class:`OSError`, after telling the session why."""
        try:
            self.process = subprocess.Popen(
                list(self.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,  # only what the tap forwards reaches the server, exactly once
            )
        except OSError as exc:
            self._feed_observation(START_FAILED, {"command": " ".join(self.command), "error": start_error(exc)})
            raise
        self.connection = f"stdio:{self.process.pid}"
        self._feed_observation(STARTED, {"command": shlex.join(self.command)})  # what a replay starts again
        for signum in FORWARDED_SIGNALS if self.forward_signals else ():
            # kept until the tap exits: a signal that arrives while the report is written still reaches
            # the server (if it is alive) instead of killing the tap half-way through the report
            signal.signal(signum, self._forward)
        threads = [
            threading.Thread(target=self._client_to_server, name="tap-stdin", daemon=True),
            threading.Thread(target=self._server_to_client, name="tap-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name="tap-stderr", daemon=True),
        ]
        for thread in threads:
            thread.start()
        code = self.process.wait()
        ended, stdin_closed, signals = time.time(), self.stdin_closed_at, list(self.signals)  # what came before the end
        self._exited.set()
        for thread, pipe in zip(threads[1:], (self.process.stdout, self.process.stderr), strict=True):
            thread.join(JOIN_TIMEOUT)
            if not thread.is_alive() and pipe is not None:
                pipe.close()
        for timer in self._timers:
            timer.cancel()  # an answer still held back when the server ended is never delivered
        with self._out:
            try:
                self.stdout.close()  # the client reads end of file now, as it would from the server itself
            except OSError:
                pass
        # a client that learns of the end this way stops writing and closes stdin; what it writes until
        # then is recorded as undelivered
        threads[0].join(JOIN_TIMEOUT)
        if self.injector is not None:
            self.injector.done()
        self.session.feed(exit_record(self._ident("x"), self.connection, ended, code, stdin_closed, signals))
        return code


def start_error(exc: OSError) -> str:
    """Why a command could not be started, in the words a shell would use."""
    if isinstance(exc, FileNotFoundError):
        return "command not found"
    if isinstance(exc, PermissionError):
        return "not executable (permission denied)"
    return exc.strerror or str(exc)


def exit_like(code: int) -> None:
    """Leave the way the server did: the same exit code, or death by the same signal."""
    if code >= 0:
        raise SystemExit(code)
    signum = -code
    try:
        signal.signal(signum, signal.SIG_DFL)
    except (OSError, ValueError):
        pass  # SIGKILL and SIGSTOP have no handler to reset
    try:
        os.kill(os.getpid(), signum)
    except (OSError, ValueError):
        pass
    raise SystemExit(128 + signum)
