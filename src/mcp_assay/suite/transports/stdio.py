"""stdio for the suite: a spawned server, one JSON-RPC message per line, every line recorded.

The server is started from a command line; each line the suite writes to its stdin and each line
it prints on stdout becomes a :class:`~mcp_assay.wire.model.StdioLine` in capture order, and the end of
the process a :class:`~mcp_assay.wire.model.ProcessExit`. Its stderr is kept (shown with ``--verbose``)
but never treated as protocol traffic.

Three ways a server can fail to be driven are told apart and raised as what they are, never as
protocol failures: the process exited (:class:`ServerExited`), it never answered within the time
allowed (:class:`NoAnswer`), and — recorded as data for the stdio rules to judge — it printed
something that is not JSON on stdout.

Stderr is read in chunks and passed on (``--verbose``) line by line as it comes, but only a tail is
kept: the last :data:`STDERR_TAIL` lines, each cut at :data:`STDERR_LINE_LIMIT` bytes. A server that
writes hundreds of megabytes there, or one endless line, costs the run that much and no more; the
bytes it wrote are counted and a note in the report says how much was not kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mcp_assay.suite.launch import listening_addresses
from mcp_assay.suite.transports import Recorder, Reply, StreamControl, final_response
from mcp_assay.suite.transports.banner import http_advice, port_of, served_url
from mcp_assay.suite.transports.connect import start_failure
from mcp_assay.vocabulary.errors import NoAnswer, ServerExited, Unreachable
from mcp_assay.vocabulary.protocol import MetaKey
from mcp_assay.vocabulary.replays import STARTED
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import IdKey, Kind, Message
from mcp_assay.wire.lines import Line, LineSplitter
from mcp_assay.wire.model import Observation, Probe, ProcessExit, StdioLine

__all__ = ["STDERR_LINE_LIMIT", "STDERR_TAIL", "StdioTransport"]

LINE_LIMIT = 64 * 1024 * 1024
STDERR_TAIL = 200
"""Lines of the server's stderr kept (the last ones: what a failure message quotes)."""
STDERR_LINE_LIMIT = 4000
"""Bytes of one stderr line kept; the rest of the line is counted, not kept."""
_READ = 64 * 1024
STARTUP_GRACE = 10.0
"""Seconds from the process's start within which its first answer is awaited, whatever the time allowed
per answer: an interpreter importing its SDK on a busy machine can take longer than ``--timeout``, and a
server that is still starting has not failed to answer."""


@dataclass
class _Waiter:
    expect: IdKey | None
    messages: list[Message] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class StdioTransport:
    """Drives one server process over its stdin and stdout."""

    kind = "stdio"

    def __init__(
        self,
        argv: Sequence[str],
        *,
        recorder: Recorder,
        new_id: Callable[[str], str],
        connection: str,
        timeout: float = 10.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_stderr: Callable[[str], None] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.recorder = recorder
        self.new_id = new_id
        self.connection = connection
        self.timeout = timeout
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.on_stderr = on_stderr
        self.stderr: list[str] = []
        """The last :data:`STDERR_TAIL` lines the server wrote on stderr (at most; each cut at the line limit)."""
        self.stderr_bytes = 0
        """Bytes the server wrote on stderr in all."""
        self.stderr_lines = 0
        """Lines the server wrote on stderr in all."""
        self._stderr_cut = False
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stderr_reader: asyncio.Task[None] | None = None
        self._waiters: list[_Waiter] = []
        self._exit: ProcessExit | None = None
        self._stdin_closed_at: float | None = None
        self._signals: list[str] = []
        self._write_lock = asyncio.Lock()
        self.started_at = 0.0
        self._started_clock = 0.0
        self._answered = False
        """Whether the server has written anything on stdout (then it speaks stdio, whatever it logs)."""
        self._served: tuple[str, str] | None = None
        """The local URL a stderr line said a web server listens on, and the line, while nothing came on stdout."""

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, **self.env} if self.env is not None else None,
                cwd=self.cwd,
                limit=LINE_LIMIT,
                start_new_session=True,
            )
        except OSError as exc:
            raise start_failure(exc, self.argv, cwd=self.cwd) from exc
        self.started_at = time.time()
        self._started_clock = time.monotonic()
        extra = [f"{name}={value}" for name, value in (self.env or {}).items()]  # a principal's, over stdio
        command = {"command": shlex.join(["env", *extra, *self.argv] if extra else self.argv)}  # what a replay starts
        self.recorder(Observation(id=self.new_id("o"), time=self.started_at, kind=STARTED, data=command,
                                  connection=self.connection))  # fmt: skip
        self._reader = asyncio.create_task(self._read_stdout())
        self._stderr_reader = asyncio.create_task(self._read_stderr())

    @property
    def alive(self) -> bool:
        return self._process is not None and self._exit is None and self._process.returncode is None

    @property
    def exit(self) -> ProcessExit | None:
        return self._exit

    async def close(self, grace: float = 5.0) -> ProcessExit | None:
        """Close stdin, wait ``grace`` seconds for the server to exit, then terminate and kill it."""
        process = self._process
        if process is None:
            return None
        if self._served is not None and not self._answered:
            grace = 0.1  # a web server does not end with its stdin: no use waiting for it to
        if process.returncode is None and process.stdin is not None and not process.stdin.is_closing():
            self._stdin_closed_at = time.time()
            with contextlib.suppress(OSError, RuntimeError):
                process.stdin.close()
        for sig, wait in ((None, grace), (signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
            if sig is not None and process.returncode is None:
                self._signals.append(sig.name)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
            try:
                await asyncio.wait_for(process.wait(), timeout=wait)
                break
            except TimeoutError:
                continue
        if self._reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, timeout=2.0)
        if self._stderr_reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_reader, timeout=2.0)
        self._finish(process.returncode)
        return self._exit

    def _finish(self, code: int | None) -> None:
        if self._exit is not None:
            return
        self._exit = ProcessExit(
            id=self.new_id("x"),
            connection=self.connection,
            time=time.time(),
            code=code,
            stdin_closed_at=self._stdin_closed_at,
            signals=tuple(self._signals),
        )
        self.recorder(self._exit)
        for waiter in self._waiters:
            waiter.changed.set()

    # -- reading ---------------------------------------------------------------------------------
    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        while True:
            try:
                raw = await stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                raw = await stdout.read(LINE_LIMIT)
            if not raw:
                break
            self._answered = True
            line = StdioLine.build(
                id=self.new_id("s"), connection=self.connection, sender=Side.SERVER, time=time.time(), raw=raw
            )
            self.recorder(line)
            for waiter in self._waiters:
                if self._belongs(line.message, waiter):
                    waiter.messages.append(line.message)
                    waiter.changed.set()
        code = await self._process.wait()
        self._finish(code)

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        splitter = LineSplitter(STDERR_LINE_LIMIT)
        while True:
            chunk = await self._process.stderr.read(_READ)
            if not chunk:
                break
            self.stderr_bytes += len(chunk)
            for line in splitter.feed(chunk):
                self._stderr_line(line)
        last = splitter.close()
        if last is not None:
            self._stderr_line(last)
        del self.stderr[:-STDERR_TAIL]
        if self.stderr_lines > len(self.stderr) or self._stderr_cut:
            detail = (
                f"the server wrote {self.stderr_bytes} bytes of stderr in {self.stderr_lines} line(s) on "
                f"{self.connection}; the last {len(self.stderr)} line(s) were kept, each cut at "
                f"{STDERR_LINE_LIMIT} bytes"
            )
            self.recorder(Observation(id=self.new_id("o"), time=time.time(), kind="note", data={"detail": detail}))

    def _stderr_line(self, line: Line) -> None:
        text = line.text()
        self._stderr_cut = self._stderr_cut or bool(line.dropped)
        self.stderr_lines += 1
        self.stderr.append(text)
        if len(self.stderr) > 2 * STDERR_TAIL:  # trimmed in batches: constant work per line on average
            del self.stderr[:-STDERR_TAIL]
        if self.on_stderr is not None:
            self.on_stderr(text)
        if not self._answered and self._served is None:
            url = served_url(text)
            if url is not None:
                self._served = (url, text.strip())
                for waiter in self._waiters:
                    waiter.changed.set()

    def _http_server(self) -> Unreachable | None:
        """The command started a web server, not a stdio one: what to say, once its own process tree is seen to
        listen on the port it named (where ``/proc`` can tell; the line alone elsewhere)."""
        if self._served is None or self._answered or self._process is None:
            return None
        url, said = self._served
        listening = listening_addresses(self._process.pid)
        port = port_of(url)
        if listening is not None and not any(address.rsplit(":", 1)[-1] == str(port) for address in listening):
            self._served = None  # someone else's server (an upstream the process uses): not this one
            return None
        return Unreachable(
            f"this command started an HTTP server at {url}, not a stdio server (its stderr: {said[:160]!r})",
            advice=http_advice(url, self.argv),
        )

    @staticmethod
    def _belongs(message: Message, waiter: _Waiter) -> bool:
        if message.kind.is_response:
            return message.id_key == waiter.expect or (message.kind is Kind.ERROR and message.id_key is None)
        if message.kind is Kind.NOTIFICATION:
            meta = message.meta or {}
            subscription = meta.get(MetaKey.SUBSCRIPTION_ID)
            if subscription is not None and waiter.expect is not None:
                from mcp_assay.wire.jsonrpc import id_key

                return id_key(subscription) == waiter.expect
            return True
        return message.kind in (Kind.REQUEST, Kind.UNPARSEABLE, Kind.INVALID, Kind.BATCH)

    # -- sending ---------------------------------------------------------------------------------
    async def write(self, body: bytes, *, probe: Probe) -> StdioLine:
        """Write one line to the server's stdin and record it."""
        process = self._process
        if process is None or process.stdin is None or not self.alive:
            code = self._exit.code if self._exit is not None else None
            raise ServerExited(f"the server process has exited (code {code})", code)
        raw = body if body.endswith(b"\n") else body + b"\n"
        async with self._write_lock:
            line = StdioLine.build(
                id=self.new_id("s"),
                connection=self.connection,
                sender=Side.CLIENT,
                time=time.time(),
                raw=raw,
                probe=probe,
            )
            self.recorder(line)
            try:
                process.stdin.write(raw)
                await process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
                await self._await_exit()
                code = self._exit.code if self._exit is not None else None
                raise ServerExited(f"the server process closed its stdin ({type(exc).__name__})", code) from exc
        return line

    async def _await_exit(self) -> None:
        if self._process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.wait(), timeout=1.0)
            self._finish(self._process.returncode)

    async def send(
        self,
        body: bytes,
        *,
        probe: Probe,
        expect: IdKey | None,
        headers: Mapping[str, str | bytes] | None = None,
        stream: StreamControl | None = None,
        timeout: float | None = None,
        wait: bool = True,
    ) -> Reply:
        """Write a message and, unless it is a notification, wait for the line that answers it."""
        waiter = _Waiter(expect)
        self._waiters.append(waiter)
        try:
            line = await self.write(body, probe=probe)
            if not wait:
                return Reply(exchange=line.id, request=line.message)
            budget = stream.budget if stream is not None else (timeout or self.timeout)
            deadline = time.monotonic() + budget
            starting = stream is None and not self._answered
            if starting:
                deadline = max(deadline, self._started_clock + STARTUP_GRACE)
            stop_at: float | None = None
            while True:
                if stream is None and expect is not None and final_response(waiter.messages, expect) is not None:
                    break
                if stream is not None and stop_at is None and stream.stop(waiter.messages):
                    stop_at = time.monotonic() + stream.linger
                if stream is not None and final_response(waiter.messages, expect) is not None:
                    break
                web = self._http_server()
                if web is not None:
                    raise web
                if self._exit is not None:
                    if stream is not None:
                        break
                    raise ServerExited(
                        f"the server exited (code {self._exit.code}) before answering {line.message.describe()}",
                        self._exit.code,
                    )
                limit = deadline if stop_at is None else min(deadline, stop_at)
                remaining = limit - time.monotonic()
                if remaining <= 0:
                    if stream is not None:
                        break
                    allowed = f"{budget:g} s" + (f" ({STARTUP_GRACE:g} s from its start)" if starting else "")
                    raise NoAnswer(f"the server never answered {line.message.describe()} within {allowed}", line.id)
                waiter.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.changed.wait(), timeout=remaining)
            return Reply(
                exchange=line.id,
                request=line.message,
                response=final_response(waiter.messages, expect),
                messages=tuple(waiter.messages),
                closed_by_client=stream is not None and final_response(waiter.messages, expect) is None,
            )
        finally:
            self._waiters.remove(waiter)

    async def observe(self, seconds: float) -> list[Message]:
        """Collect whatever the server prints during ``seconds`` without sending anything."""
        waiter = _Waiter(None)
        self._waiters.append(waiter)
        try:
            await asyncio.sleep(seconds)
            return list(waiter.messages)
        finally:
            self._waiters.remove(waiter)
