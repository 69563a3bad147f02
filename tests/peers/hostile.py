"""A hostile Streamable HTTP server on a real socket, for fuzzing the suite.

Every answer starts faithful — what the broken-suite core (:mod:`tests.peers.broken_suite.core`)
would send, which follows the schema's shapes — and is then broken the way a :class:`Script` says:
members of the wrong type or missing, huge or deeply nested values, results replaced by other
drawn values, ids of another type or value, bodies cut short or announced longer than they are,
floods of notifications, the wrong framing or status, silence. The script is plain data, so a
hypothesis strategy draws it in the test's thread; the server applies it, in a thread of its own,
to the n-th request it receives. Every wait is bounded, so a run against it always ends.
"""

from __future__ import annotations

import json
import re
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.peers.broken_suite.core import Answer, Server

__all__ = ["Behaviour", "Break", "HostileServer", "Script", "hostile_server"]

SILENCE_S = 2.0
"""How long a silent answer keeps the connection open before closing it without a word."""
OPEN_STREAM_S = 3.0
"""How long an event stream the core keeps open (a listen stream) stays open at most."""
_DEEP = "\x00mcp-assay-deep:"
_DIGITS = "\x00mcp-assay-digits:"


@dataclass(frozen=True)
class Break:
    """One thing done to the JSON-RPC answer (in the result object when there is one, else the message)."""

    kind: str
    """``retype``, ``drop``, ``huge``, ``deep``, ``id`` or ``result``."""
    where: int = 0
    """Which member (an index into the sorted member names, modulo their number)."""
    value: Any = None
    """The new value (``retype``), a size (``huge``), a depth (``deep``), an id mode (``id``) or a result."""


@dataclass(frozen=True)
class Behaviour:
    """How to answer one request."""

    breaks: tuple[Break, ...] = ()
    status: int | None = None
    """An HTTP status instead of the faithful one."""
    framing: str = "faithful"
    """``faithful``, ``json`` (one body), ``sse`` (an event stream), ``empty`` or ``text``."""
    flood: int = 0
    """Notifications streamed before the answer (an event stream)."""
    cut: float | None = None
    """Keep only this fraction of the body's bytes."""
    lie_length: bool = False
    """Announce a Content-Length larger than the bytes sent, then close."""
    silent: bool = False
    """Read the request and never answer."""


@dataclass(frozen=True)
class Script:
    """Requests answered faithfully first, then the plan, cycled; ``answers`` replace the faithful result
    of the methods they name (values drawn in the schema's shapes) before anything is broken."""

    faithful_first: int = 0
    plan: tuple[Behaviour, ...] = ()
    answers: tuple[tuple[str, dict[str, Any]], ...] = ()

    def behaviour(self, number: int) -> Behaviour:
        if number < self.faithful_first or not self.plan:
            return Behaviour()
        return self.plan[(number - self.faithful_first) % len(self.plan)]


def _target(message: dict[str, Any]) -> dict[str, Any]:
    result = message.get("result")
    return result if isinstance(result, dict) and result else message


def _apply(message: dict[str, Any], item: Break) -> None:
    if item.kind == "id":
        _reid(message, str(item.value))
        return
    if item.kind == "result":
        message["result"] = item.value
        return
    target = _target(message)
    if not target:
        return
    key = sorted(target)[item.where % len(target)]
    if item.kind == "retype":
        target[key] = item.value
    elif item.kind == "drop":
        del target[key]
    elif item.kind == "huge":
        target[key] = "x" * int(item.value)
    elif item.kind == "deep":
        target[key] = f"{_DEEP}{int(item.value)}"


def _reid(message: dict[str, Any], mode: str) -> None:
    ident = message.get("id")
    if mode == "missing":
        message.pop("id", None)
    elif mode == "string":
        message["id"] = str(ident)
    elif mode == "float":
        message["id"] = float(ident) + 0.5 if isinstance(ident, int) else 1.5
    elif mode == "null":
        message["id"] = None
    elif mode == "bool":
        message["id"] = True
    elif mode == "other":
        message["id"] = ident + 1000 if isinstance(ident, int) and not isinstance(ident, bool) else 1000
    elif mode == "object":
        message["id"] = {"id": ident}
    elif mode == "digits":
        message["id"] = f"{_DIGITS}5000"


def encode(value: Any) -> bytes:
    """JSON text, with the deep and long-number placeholders expanded (json.dumps could not nest so deep)."""
    text = json.dumps(value, separators=(",", ":"))
    text = _PLACEHOLDER.sub(_expand, text)
    return text.encode()


_PLACEHOLDER = re.compile(r'"\\u0000mcp-assay-(deep|digits):(\d+)"')


def _expand(match: re.Match[str]) -> str:
    size = int(match.group(2))
    return "[" * size + "]" * size if match.group(1) == "deep" else "7" * size


def _method(body: bytes) -> str | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    method = payload.get("method") if isinstance(payload, dict) else None
    return method if isinstance(method, str) else None


def _is_answer(message: Any) -> bool:
    return isinstance(message, dict) and ("result" in message or "error" in message)


@dataclass
class _Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    stream: bool = False
    keep_open: bool = False


def _shape(answer: Answer, behaviour: Behaviour, drawn: dict[str, Any] | None = None) -> _Reply:
    """The faithful answer (its result replaced by ``drawn`` when given), broken as ``behaviour`` says."""
    messages: list[Any] = list(answer.events) if answer.events is not None else []
    if answer.events is None and answer.body is not None:
        messages = [answer.body]
    messages = json.loads(json.dumps(messages))  # a private copy to break
    final = next((m for m in reversed(messages) if _is_answer(m)), None)
    if final is not None and drawn is not None and "result" in final:
        final["result"] = json.loads(json.dumps(drawn))
    for item in behaviour.breaks:
        if final is not None:
            _apply(final, item)
    headers = {key.lower(): value for key, value in answer.headers.items() if key.lower() != "content-type"}
    stream = answer.events is not None if behaviour.framing == "faithful" else behaviour.framing == "sse"
    status = behaviour.status or answer.status or 200
    if behaviour.framing == "empty":
        return _Reply(status, headers, b"")
    if behaviour.framing == "text":
        return _Reply(status, {**headers, "content-type": "text/plain"}, b"upstream error\n")
    if stream:
        flood = [
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n}}
            for n in range(behaviour.flood)
        ]
        body = b"".join(b"event: message\ndata: " + encode(m) + b"\n\n" for m in [*flood, *messages])
        keep_open = answer.keep_open and behaviour.framing == "faithful"
        return _Reply(status, {**headers, "content-type": "text/event-stream"}, body, stream=True, keep_open=keep_open)
    if not messages:
        return _Reply(status, headers, b"")
    return _Reply(status, {**headers, "content-type": "application/json"}, encode(final or messages[-1]))


class _Handler(socketserver.StreamRequestHandler):
    server: _TCPServer

    def handle(self) -> None:
        self.connection.settimeout(10)
        try:
            head = self._read_head()
        except (OSError, ValueError):
            return
        if head is None:
            return
        method, headers, body = head
        owner = self.server.owner
        number, script, core = owner.next_request()
        behaviour = script.behaviour(number)
        if behaviour.silent:
            self._silence()
            return
        drawn = dict(script.answers).get(_method(body) or "")
        reply = _shape(core.handle_http(method, headers, body), behaviour, drawn)
        payload = reply.body
        if behaviour.cut is not None and payload:
            payload = payload[: int(len(payload) * behaviour.cut)]
        lines = [f"HTTP/1.1 {reply.status} Hostile", "connection: close"]
        lines += [f"{name}: {value}" for name, value in reply.headers.items()]
        if behaviour.lie_length or not reply.stream:
            lines.append(f"content-length: {len(payload) + (100 if behaviour.lie_length else 0)}")
        try:
            self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
            self.wfile.flush()
            if reply.keep_open:
                self._hold_open()
        except OSError:
            return

    def _read_head(self) -> tuple[str, dict[str, str], bytes] | None:
        request_line = self.rfile.readline(65536).decode("latin-1").strip()
        if not request_line:
            return None
        method = request_line.split(" ", 1)[0]
        headers: dict[str, str] = {}
        while True:
            line = self.rfile.readline(65536).decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        return method, headers, self.rfile.read(length) if length else b""

    def _silence(self) -> None:
        deadline = time.monotonic() + SILENCE_S
        while time.monotonic() < deadline and not self.server.owner.stopping.is_set():
            if self._peer_gone(0.05):
                return

    def _hold_open(self) -> None:
        deadline = time.monotonic() + OPEN_STREAM_S
        while time.monotonic() < deadline and not self.server.owner.stopping.is_set():
            if self._peer_gone(0.05):
                return

    def _peer_gone(self, wait: float) -> bool:
        self.connection.settimeout(wait)
        try:
            received: bytes = self.connection.recv(1)
            return received == b""
        except TimeoutError:
            return False
        except OSError:
            return True


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: HostileServer


@dataclass
class HostileServer:
    """The server's state: the script in force, a fresh core per script, the request counter."""

    port: int = 0
    script: Script = field(default_factory=Script)
    stopping: threading.Event = field(default_factory=threading.Event)
    requests: int = 0
    _core: Server = field(default_factory=Server)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def load(self, script: Script) -> None:
        """Answer from now on as ``script`` says, counting requests from zero, with a fresh core."""
        with self._lock:
            self.script = script
            self.requests = 0
            self._core = Server()

    def next_request(self) -> tuple[int, Script, Server]:
        with self._lock:
            number = self.requests
            self.requests += 1
            return number, self.script, self._core


@contextmanager
def hostile_server() -> Iterator[HostileServer]:
    """A hostile server on a free loopback port, in a thread, until the block ends."""
    state = HostileServer()
    tcp = _TCPServer(("127.0.0.1", 0), _Handler)
    tcp.owner = state
    state.port = int(tcp.server_address[1])
    thread = threading.Thread(target=tcp.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        tcp.shutdown()
        tcp.server_close()
        thread.join(timeout=5)
