"""The gateway's back hop: an upstream MCP server over Streamable HTTP, or one it spawns on stdio.

Both give the relay the same operations (send a request, a notification or a client's answer, open
the session's event stream, end the session, start a session) and, for a request, an ``Answer``:
a status, the upstream's headers and either a body or a stream of JSON-RPC messages, which the relay
may stop reading. On HTTP a dropped connection is the 2026 cancellation; on stdio the bridge writes
``notifications/cancelled`` (which the relay has built, faults included).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.peers.gateway import sse


@dataclass
class BackSession:
    """One session on the upstream: its ``Mcp-Session-Id`` (HTTP) or its own child process (stdio)."""

    ident: str | None = None
    child: Child | None = None
    initialize_result: dict[str, Any] | None = None
    users: int = 0


class Answer:
    """What the upstream answered to one request: a status, headers, and a body or a message stream."""

    status: int = 200
    headers: dict[str, str]
    streaming: bool = False

    async def body(self) -> bytes:
        raise NotImplementedError

    def messages(self) -> AsyncIterator[dict[str, Any]]:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class HttpAnswer(Answer):
    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status = response.status_code
        self.headers = {key.lower(): value for key, value in response.headers.items()}
        self.streaming = self.headers.get("content-type", "").split(";")[0].strip() == "text/event-stream"

    async def body(self) -> bytes:
        try:
            return await self.response.aread()
        finally:
            await self.response.aclose()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        async for event in sse.events(self.response.aiter_lines()):
            if event.message is not None:
                yield event.message

    async def close(self) -> None:
        await self.response.aclose()


class Reply(Answer):
    """An answer with nothing to stream (a notification's 202, a bridge's own reply)."""

    def __init__(self, status: int, content: bytes = b"", content_type: str = "application/json",
                 headers: dict[str, str] | None = None) -> None:  # fmt: skip
        self.status = status
        self.content = content
        self.headers = {"content-type": content_type} if content else {}
        self.headers.update(headers or {})

    async def body(self) -> bytes:
        return self.content

    async def close(self) -> None:
        return None


class HttpUpstream:
    """An upstream Streamable HTTP endpoint; every front request becomes its own upstream HTTP request."""

    stdio = False

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None), follow_redirects=False)

    async def _send(self, method: str, headers: dict[str, str], session: BackSession | None, body: Any) -> HttpAnswer:
        headers = dict(headers)
        if session is not None and session.ident is not None:
            headers["mcp-session-id"] = session.ident
        content = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        # values go up byte for byte as they came (the front read them as latin-1), whatever characters they hold
        raw = {name: value.encode("latin-1", "replace") for name, value in headers.items()}
        request = self.client.build_request(method, self.url, headers=raw, content=content)
        return HttpAnswer(await self.client.send(request, stream=True))

    async def request(self, message: dict[str, Any], headers: dict[str, str], session: BackSession | None,
                      progress: Any) -> Answer:  # fmt: skip
        return await self._send("POST", headers, session, message)

    async def post(self, message: dict[str, Any], headers: dict[str, str], session: BackSession | None) -> Answer:
        return await self._send("POST", headers, session, message)

    async def stream(self, headers: dict[str, str], session: BackSession) -> Answer:
        return await self._send("GET", headers, session, None)

    async def end(self, headers: dict[str, str], session: BackSession) -> Answer:
        return await self._send("DELETE", headers, session, None)

    async def bare(self, method: str, headers: dict[str, str]) -> Answer:
        """A GET or DELETE outside any session (a 2026 one), relayed as it came."""
        return await self._send(method, headers, None, None)

    async def cancelled(self, session: BackSession | None, back_id: Any, notification: dict[str, Any] | None) -> None:
        """Nothing to write: dropping the upstream request (done by the caller) is the HTTP signal."""

    def new_session(self, answer: Answer) -> BackSession | None:
        ident = answer.headers.get("mcp-session-id")
        return BackSession(ident=ident) if ident else None

    async def aclose(self) -> None:
        await self.client.aclose()


# -- stdio ------------------------------------------------------------------------------------------------


@dataclass
class Waiter:
    """The messages the child sends for one request: related notifications, then the answer."""

    queue: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)
    progress: Any = None
    listen: bool = False


CANCELLED: dict[str, Any] = {}
"""What a request's waiter gets once its cancellation went to the child: the stream ends with no answer."""


class StdioAnswer(Answer):
    """The child's answer: JSON when the response comes first, an event stream when a notification does (or when
    the request was cancelled first: a stream that ends without an answer, as the client asked)."""

    def __init__(self, child: Child, back_id: Any, waiter: Waiter, first: dict[str, Any] | None) -> None:
        self.child, self.back_id, self.waiter, self.first = child, back_id, waiter, first
        self.status = 200 if first is not None else 502
        self.streaming = first is CANCELLED or (first is not None and not _is_answer(first))
        self.headers = {"content-type": "text/event-stream" if self.streaming else "application/json"}

    async def body(self) -> bytes:
        self.child.forget(self.back_id)
        if self.first is None:
            failure = {"code": -32603, "message": "the upstream process ended"}
            return json.dumps({"jsonrpc": "2.0", "id": self.back_id, "error": failure}).encode()
        return json.dumps(self.first, separators=(",", ":")).encode()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        try:
            message = self.first
            while message is not None and message is not CANCELLED:
                yield message
                if _is_answer(message) and message.get("id") == self.back_id:
                    return
                message = await self.waiter.queue.get()
        finally:
            self.child.forget(self.back_id)

    async def close(self) -> None:
        self.child.forget(self.back_id)


class QueueAnswer(Answer):
    """The child's messages that belong to no request, as the session's event stream."""

    streaming = True

    def __init__(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self.queue = queue
        self.headers = {"content-type": "text/event-stream"}

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            yield await self.queue.get()

    async def close(self) -> None:
        return None


def _is_answer(message: dict[str, Any]) -> bool:
    return "id" in message and "method" not in message


class Child:
    """One stdio server process: lines out, lines in, each message routed to the request it belongs to."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.process: asyncio.subprocess.Process | None = None
        self.waiters: dict[str, Waiter] = {}
        self.by_progress: dict[str, str] = {}
        self.unrelated: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)
        self.reader: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()

    async def start(self) -> None:
        async with self.lock:
            if self.process is None:
                self.process = await asyncio.create_subprocess_exec(
                    *self.command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    env=dict(os.environ),
                    limit=16 * 1024 * 1024,
                )
                self.reader = asyncio.create_task(self._read())

    async def write(self, message: dict[str, Any]) -> None:
        await self.start()
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, message: dict[str, Any], progress: Any) -> StdioAnswer:
        key = json.dumps(message["id"])
        waiter = Waiter(progress=progress, listen=message.get("method") == "subscriptions/listen")
        self.waiters[key] = waiter
        if progress is not None:
            self.by_progress[json.dumps(progress)] = key
        await self.write(message)
        first = await waiter.queue.get()
        return StdioAnswer(self, message["id"], waiter, first)

    def cancelled(self, back_id: Any) -> None:
        waiter = self.waiters.get(json.dumps(back_id))
        if waiter is not None:
            waiter.queue.put_nowait(CANCELLED)

    def forget(self, back_id: Any) -> None:
        waiter = self.waiters.pop(json.dumps(back_id), None)
        if waiter is not None and waiter.progress is not None:
            self.by_progress.pop(json.dumps(waiter.progress), None)

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        try:
            while line := await self.process.stdout.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    self._route(message)
        finally:
            for waiter in self.waiters.values():
                waiter.queue.put_nowait(None)

    def _route(self, message: dict[str, Any]) -> None:
        if _is_answer(message):
            waiter = self.waiters.get(json.dumps(message["id"]))
            if waiter is not None:
                waiter.queue.put_nowait(message)
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        key = None
        if message.get("method") == "notifications/progress":
            key = self.by_progress.get(json.dumps(params.get("progressToken")))
        meta = params.get("_meta")
        subscription = meta.get("io.modelcontextprotocol/subscriptionId") if isinstance(meta, dict) else None
        if key is None and subscription is not None and json.dumps(subscription) in self.waiters:
            key = json.dumps(subscription)
        if key is None:
            # stdio says nothing of which request a log message (or a server request) belongs to: the latest call
            # still in flight
            calls = [name for name, waiter in self.waiters.items() if not waiter.listen]
            key = calls[-1] if calls else None
        if key is not None and key in self.waiters:
            self.waiters[key].queue.put_nowait(message)
        else:
            with contextlib.suppress(asyncio.QueueFull):
                self.unrelated.put_nowait(message)

    async def aclose(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 3)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        if self.reader is not None:
            self.reader.cancel()


class StdioUpstream:
    """A stdio server the gateway spawns (a stdio-to-HTTP bridge): one child per 2025 session, one shared by
    the 2026 requests (stateless, told apart by the gateway's ids)."""

    stdio = True

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.modern = Child(command)
        self.children: list[Child] = [self.modern]
        self.closing: set[asyncio.Task[None]] = set()

    def _child(self, session: BackSession | None) -> Child:
        return session.child if session is not None and session.child is not None else self.modern

    async def request(self, message: dict[str, Any], headers: dict[str, str], session: BackSession | None,
                      progress: Any) -> Answer:  # fmt: skip
        if message.get("method") == "initialize" and session is None:
            child = Child(self.command)
            self.children.append(child)
            answer = await child.request(message, progress)
            answer.headers["x-bridge-child"] = str(len(self.children) - 1)
            return answer
        return await self._child(session).request(message, progress)

    async def post(self, message: dict[str, Any], headers: dict[str, str], session: BackSession | None) -> Answer:
        child = self._child(session)
        await child.write(message)
        params = message.get("params")
        if message.get("method") == "notifications/cancelled" and isinstance(params, dict):
            child.cancelled(params.get("requestId"))
        return Reply(202)

    async def stream(self, headers: dict[str, str], session: BackSession) -> Answer:
        return QueueAnswer(self._child(session).unrelated)

    async def bare(self, method: str, headers: dict[str, str]) -> Answer:
        """A GET or DELETE outside any session: a stdio server has no such thing."""
        return Reply(405, headers={"allow": "POST"})

    async def end(self, headers: dict[str, str], session: BackSession) -> Answer:
        """The session's server is stopped after the answer (it may take a while to exit)."""
        child = self._child(session)
        if child is not self.modern:
            closing = asyncio.create_task(child.aclose())
            self.closing.add(closing)
            closing.add_done_callback(self.closing.discard)
        return Reply(200)

    async def cancelled(self, session: BackSession | None, back_id: Any, notification: dict[str, Any] | None) -> None:
        child = self._child(session)
        child.forget(back_id)
        if notification is not None:
            await child.write(notification)

    def new_session(self, answer: Answer) -> BackSession | None:
        index = answer.headers.get("x-bridge-child")
        return BackSession(child=self.children[int(index)]) if index is not None else None

    async def aclose(self) -> None:
        for child in self.children:
            await child.aclose()


Upstream = HttpUpstream | StdioUpstream
