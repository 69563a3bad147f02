"""A raw MCP client for proving what a gateway does on the wire, in either revision.

It sends exactly the JSON-RPC it is told to, reads JSON and event-stream answers message by message
(``on_message`` sees each one as it arrives, so a test can act while a call is still open), and keeps
every status, header and message for the test to assert on. Two principals are two ``Probe``s with
different bearer tokens.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
INFO = {"name": "gateway-probe", "version": "1.0.0"}
OnMessage = Callable[[dict[str, Any]], None]


def envelope(version: str = MODERN) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": INFO,
    }


@dataclass
class Answer:
    """One HTTP answer: status, headers, and the JSON-RPC messages in arrival order."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    messages: list[dict[str, Any]] = field(default_factory=list)
    gave_up: bool = False

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    @property
    def final(self) -> dict[str, Any] | None:
        return next((m for m in self.messages if "id" in m and ("result" in m or "error" in m)), None)

    @property
    def result(self) -> dict[str, Any]:
        final = self.final
        assert final is not None and "result" in final, (self.status, self.body[:300], self.messages)
        result: dict[str, Any] = final["result"]
        return result

    @property
    def code(self) -> int | None:
        final = self.final
        error = final.get("error") if final is not None else None
        return error.get("code") if isinstance(error, dict) else None

    def notifications(self, method: str | None = None) -> list[dict[str, Any]]:
        return [m for m in self.messages if "id" not in m and (method is None or m.get("method") == method)]


def _lines_to_messages(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                try:
                    value = json.loads("\n".join(data))
                except ValueError:
                    value = None
                if isinstance(value, dict):
                    yield value
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))


class Probe:
    """One client (one principal) talking to one endpoint."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 15.0) -> None:
        self.url = url
        self.token = token
        self.http = httpx.Client(timeout=timeout)
        self.ids = itertools.count(1)
        self.session: str | None = None
        self.version = MODERN

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _base(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": ACCEPT}
        if self.token is not None:
            headers["authorization"] = f"Bearer {self.token}"
        return {**headers, **(extra or {})}

    def send(self, body: bytes | dict[str, Any], headers: dict[str, str] | None = None, *,
             on_message: OnMessage | None = None, give_up: float | None = None,
             method: str = "POST") -> Answer:  # fmt: skip
        """One HTTP request; an event stream is read to its end (or until ``give_up`` seconds pass without data)."""
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        answer = Answer()
        timeout = httpx.Timeout(15.0, read=give_up) if give_up is not None else None
        try:
            with self.http.stream(
                method, self.url, content=content or None, headers=self._base(headers),
                timeout=timeout or httpx.USE_CLIENT_DEFAULT,
            ) as response:  # fmt: skip
                answer.status = response.status_code
                answer.headers = {k.lower(): v for k, v in response.headers.items()}
                if answer.content_type == "text/event-stream":
                    for message in _lines_to_messages(response.iter_lines()):
                        answer.messages.append(message)
                        if on_message is not None:
                            on_message(message)
                else:
                    answer.body = response.read()
                    try:
                        value = json.loads(answer.body)
                    except ValueError:
                        value = None
                    if isinstance(value, dict):
                        answer.messages.append(value)
        except httpx.ReadTimeout:
            answer.gave_up = True  # leaving the block dropped the connection
        return answer

    # -- 2026-07-28 ----------------------------------------------------------------------------------------
    def modern(self, method: str, params: dict[str, Any] | None = None, *, ident: Any = None,
               progress: Any = None, headers: dict[str, str] | None = None, **options: Any) -> Answer:  # fmt: skip
        meta = envelope()
        if progress is not None:
            meta["progressToken"] = progress
        body = {"jsonrpc": "2.0", "id": next(self.ids) if ident is None else ident, "method": method,
                "params": {**(params or {}), "_meta": meta}}  # fmt: skip
        head = {"mcp-protocol-version": MODERN, "mcp-method": method}
        named = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
        if named is not None and params is not None and named in params:
            head["mcp-name"] = str(params[named])
        return self.send(body, {**head, **(headers or {})}, **options)

    # -- 2025-11-25 ----------------------------------------------------------------------------------------
    def initialize(self, version: str = LEGACY) -> Answer:
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": INFO}}  # fmt: skip
        answer = self.send(body)
        self.session = answer.headers.get("mcp-session-id")
        self.version = version
        if self.session is not None:
            self.notify("notifications/initialized")
        return answer

    def _session_headers(self) -> dict[str, str]:
        headers = {"mcp-protocol-version": self.version}
        if self.session is not None:
            headers["mcp-session-id"] = self.session
        return headers

    def legacy(self, method: str, params: dict[str, Any] | None = None, *, ident: Any = None,
               progress: Any = None, headers: dict[str, str] | None = None, **options: Any) -> Answer:  # fmt: skip
        params = dict(params or {})
        if progress is not None:
            params["_meta"] = {"progressToken": progress}
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.ids) if ident is None else ident, "method": method}
        if params:
            body["params"] = params
        return self.send(body, {**self._session_headers(), **(headers or {})}, **options)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> Answer:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        return self.send(body, self._session_headers())

    def delete(self) -> Answer:
        return self.send(b"", self._session_headers(), method="DELETE")

    def listen(self) -> Listening:
        """Open the session's GET stream on a thread of its own; ``stop()`` closes it."""
        headers = {**self._base(), **self._session_headers(), "accept": "text/event-stream"}
        headers.pop("content-type", None)
        listening = Listening(self.url, headers)
        listening.start()
        return listening


class Listening:
    """A GET event stream read on a thread of its own (an asyncio loop, so ``stop`` ends the read at once)."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url, self.headers = url, headers
        self.answer = Answer()
        self.opened = threading.Event()
        self.changed = threading.Condition()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    def start(self) -> None:
        self.thread.start()
        if not self.opened.wait(15.0):
            raise TimeoutError("the GET stream did not open within 15 s")

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        try:
            async with httpx.AsyncClient(timeout=httpx.Timeout(15.0, read=None)) as http:
                async with http.stream("GET", self.url, headers=self.headers) as response:
                    self.answer.status = response.status_code
                    self.answer.headers = {k.lower(): v for k, v in response.headers.items()}
                    self.opened.set()
                    if self.answer.content_type != "text/event-stream":
                        self.answer.body = await response.aread()
                        return
                    lines: list[str] = []
                    async for line in response.aiter_lines():
                        lines.append(line)
                        if line == "":
                            for message in _lines_to_messages(iter(lines)):
                                with self.changed:
                                    self.answer.messages.append(message)
                                    self.changed.notify_all()
                            lines = []
        except (httpx.HTTPError, asyncio.CancelledError):
            pass
        finally:
            self.opened.set()

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> dict[str, Any] | None:
        """The first message that satisfies ``predicate`` (None when none arrives within ``timeout``)."""
        with self.changed:
            self.changed.wait_for(lambda: any(predicate(m) for m in self.answer.messages), timeout)
            return next((m for m in self.answer.messages if predicate(m)), None)

    def stop(self) -> Answer:
        if self.loop is not None and self.task is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(5.0)
        return self.answer


class StdioProbe:
    """Raw JSON-RPC lines to a stdio peer (an HTTP-to-stdio bridge), every wait bounded."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            with self.changed:
                self.lines.append(raw.decode("utf-8", "replace").strip())
                self.changed.notify_all()

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    @property
    def messages(self) -> list[dict[str, Any]]:
        found = []
        for line in list(self.lines):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
        return found

    def answer(self, ident: Any, timeout: float = 15.0) -> dict[str, Any] | None:
        """The answer to request ``ident`` (None when none comes within ``timeout``)."""

        def find() -> dict[str, Any] | None:
            return next((m for m in self.messages if m.get("id") == ident and "method" not in m), None)

        with self.changed:
            self.changed.wait_for(lambda: find() is not None, timeout)
            return find()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:  # a bridge that ignores EOF is killed
            self.process.kill()
            self.process.wait(5)
        self.reader.join(5)
        if self.process.stdout is not None:
            self.process.stdout.close()
