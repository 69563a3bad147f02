"""The gateway's front: an ASGI app serving MCP clients at one path and relaying each message upstream.

Faithful by default, as an aggregating gateway should be: requests go upstream under the gateway's own
ids (and progress tokens), answers and the notifications on a request's stream come back under the
client's, a ``--prefix`` is added to tool names (and removed, with ``Mcp-Name`` recomputed, on the way
up), 2025-11-25 sessions are the gateway's own, one upstream session each and bound to the principal
(the bearer token) that opened it, a foreign ``Origin`` gets 403, a body that is not JSON gets -32700, a
client that goes away cancels its upstream request, and a 404 for an ended upstream session reaches the
client as a 404. The seeded faults (``faults.py``) change one of these each.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.peers.gateway import sse, transport
from tests.peers.gateway.backends import Answer, BackSession, HttpUpstream, StdioUpstream
from tests.peers.gateway.faults import Faults

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
FORWARDED = ("accept", "mcp-protocol-version", "mcp-method", "mcp-name")
RELAYED = ("allow",)
"""The upstream's answer headers the front repeats besides Content-Type (sessions are the gateway's own)."""
MAX_BODY = 4 * 1024 * 1024
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
HANDSHAKE = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
FIRST_BACK_ID = 1001
"""The gateway's upstream ids start here, so a test can tell them from a client's small integers."""


@dataclass
class Config:
    upstream: HttpUpstream | StdioUpstream
    faults: Faults = field(default_factory=Faults)
    prefix: str = ""
    path: str = "/mcp"
    allowed_origins: frozenset[str] = frozenset()
    log: Path | None = None


@dataclass
class FrontSession:
    """A 2025-11-25 session the gateway gave a client, bound to the principal that opened it."""

    ident: str
    principal: str
    back: BackSession
    inflight: dict[str, Exchange] = field(default_factory=dict)


@dataclass
class Exchange:
    """One client request as the gateway relays it: both ids, both progress tokens, both tool names."""

    front_id: Any
    back_id: Any
    method: str
    principal: str
    front_headers: dict[str, str]
    session: FrontSession | None = None
    front_progress: Any = None
    back_progress: Any = None
    front_name: str | None = None
    back_name: str | None = None


@dataclass
class Listener:
    """An open 2025 GET stream at the front: what the upstream's session stream relays to it."""

    session: FrontSession
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(maxsize=1000))


class Front:
    """One HTTP exchange at the front: the request's head and body, the answer, and whether the client left."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope, self.receive, self._send = scope, receive, send
        self.method: str = scope["method"]
        self.headers: dict[str, str] = {}
        for key, value in scope.get("headers", []):
            name = key.decode("latin-1").lower()
            text = value.decode("latin-1")
            self.headers[name] = f"{self.headers[name]}, {text}" if name in self.headers else text
        self.started = False
        self.gone = False

    async def body(self) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            event = await self.receive()
            if event["type"] == "http.disconnect":
                self.gone = True
                return b""
            chunk = event.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                return None
            chunks.append(chunk)
            if not event.get("more_body", False):
                return b"".join(chunks)

    async def until_gone(self) -> None:
        while True:
            event = await self.receive()
            if event["type"] == "http.disconnect":
                self.gone = True
                return

    async def send(self, event: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            await self._send(event)
        except OSError:
            self.gone = True

    async def start(self, status: int, content_type: str | None, headers: dict[str, str] | None = None) -> None:
        pairs = [(b"content-type", content_type.encode())] if content_type else []
        if content_type == "text/event-stream":
            pairs += [(b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
        pairs += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
        self.started = True
        await self.send({"type": "http.response.start", "status": status, "headers": pairs})

    async def chunk(self, data: bytes, more: bool = True) -> None:
        await self.send({"type": "http.response.body", "body": data, "more_body": more})

    async def whole(
        self, status: int, content_type: str | None, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        await self.start(status, content_type, headers)
        await self.chunk(body, more=False)

    async def json(self, status: int, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        await self.whole(status, "application/json", _dump(message), headers)


def _dump(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _error(ident: Any, code: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}}


def _key(ident: Any) -> str:
    return json.dumps(ident)


def _is_answer(message: dict[str, Any]) -> bool:
    return "id" in message and "method" not in message and ("result" in message or "error" in message)


class Gateway:
    """The ASGI application: ``uvicorn`` serves it (``python -m tests.peers.gateway``)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.faults = config.faults
        self.upstream = config.upstream
        self.ids = itertools.count(FIRST_BACK_ID)
        self.tokens = itertools.count(1)
        self.sessions: dict[str, FrontSession] = {}
        self.shared: BackSession | None = None
        self.listeners: list[Listener] = []
        self.background: set[asyncio.Task[Any]] = set()
        self.log_file = config.log.open("a", encoding="utf-8") if config.log is not None else None

    # -- ASGI ---------------------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        front = Front(scope, receive, send)
        if scope["path"].rstrip("/") != self.config.path.rstrip("/"):
            await front.whole(404, "text/plain", b"not found")
            return
        origin = front.headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            self.note("refused", reason="origin", origin=origin)
            await front.json(403, _error(None, -32600, "Forbidden: Origin not allowed"))
            return
        try:
            if front.method == "POST":
                await self.post(front)
            elif front.method == "GET":
                await self.get(front)
            elif front.method == "DELETE":
                await self.delete(front)
            else:
                await front.whole(405, None, b"", {"allow": "GET, POST, DELETE"})
        except httpx.HTTPError as failure:
            self.note("upstream-error", error=type(failure).__name__)
            if not front.started:
                await front.json(502, _error(None, -32603, f"upstream unreachable: {type(failure).__name__}"))
        except Exception as failure:  # a bug of the gateway's own: still a JSON-RPC answer, and the log says what
            self.note("gateway-error", error=f"{type(failure).__name__}: {failure}")
            if not front.started:
                await front.json(500, _error(None, -32603, f"gateway error: {type(failure).__name__}"))

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                for task in list(self.background):
                    task.cancel()
                await self.upstream.aclose()
                if self.log_file is not None:
                    self.log_file.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _origin_allowed(self, origin: str) -> bool:
        host = urlsplit(origin).hostname or ""
        return host in LOOPBACK or self.faults.origin_allowed(origin, self.config.allowed_origins)

    def note(self, event: str, **fields: Any) -> None:
        """One line of the gateway's log (ground truth for tests: which front id became which back id)."""
        if self.log_file is not None:
            self.log_file.write(json.dumps({"t": round(time.time(), 3), "event": event, **fields}, default=str) + "\n")
            self.log_file.flush()

    # -- POST ---------------------------------------------------------------------------------------------
    async def post(self, front: Front) -> None:
        body = await front.body()
        if body is None:
            await front.json(413, _error(None, -32600, "request body too large"))
            return
        try:
            message = json.loads(body)
        except ValueError:
            page = self.faults.parse_error()
            if page is not None:
                await front.whole(*page)
            else:
                await front.json(400, _error(None, -32700, "Parse error"))
            return
        if not isinstance(message, dict):
            await front.json(400, _error(None, -32600, "Body must be a single JSON-RPC message object"))
            return
        principal = front.headers.get("authorization", "")
        session: FrontSession | None = None
        session_id = None if _modern(front, message) else front.headers.get("mcp-session-id")
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None or session.principal != principal:
                await front.json(404, _error(message.get("id"), -32600, "Session not found"))
                return
        if self.upstream.stdio:  # the bridge is the HTTP server: it checks what an HTTP server checks
            modern = _modern(front, message)
            refusal = (
                transport.modern_refusal(message, front.headers)
                if modern
                else transport.legacy_refusal(message, front.headers, session is not None)
            )
            if refusal is not None:
                ident = message.get("id") if isinstance(message.get("id"), str | int) else None
                await front.json(refusal.status, refusal.error(ident))
                return
        if "method" in message and "id" in message:
            await self.request(front, message, principal, session)
        elif "method" in message:
            await self.notification(front, message, session)
        else:  # a client's answer to a server's request: the upstream's ids, relayed unchanged
            answer = await self.upstream.post(message, self._headers(front, None, session), session and session.back)
            await self._relay_plain(front, answer, None)

    async def request(
        self, front: Front, message: dict[str, Any], principal: str, session: FrontSession | None
    ) -> None:
        method = str(message.get("method"))
        exchange = Exchange(message["id"], next(self.ids), method, principal, front.headers, session)
        outgoing = json.loads(_dump(message))
        outgoing["id"] = exchange.back_id
        params = outgoing.get("params")
        if isinstance(params, dict):
            meta = params.get("_meta")
            if isinstance(meta, dict) and "progressToken" in meta:
                exchange.front_progress = meta["progressToken"]
                exchange.back_progress = f"gw-progress-{next(self.tokens)}"
                meta["progressToken"] = exchange.back_progress
            if method == "tools/call" and self.config.prefix and isinstance(params.get("name"), str):
                exchange.front_name = params["name"]
                if exchange.front_name.startswith(self.config.prefix):
                    exchange.back_name = exchange.front_name[len(self.config.prefix) :]
                    params["name"] = exchange.back_name
                stated = front.headers.get("mcp-name")
                if stated is not None and stated != exchange.front_name:
                    await front.json(400, _error(message["id"], -32020, "Mcp-Name header does not match params.name"))
                    return
        if method == "initialize" and session is None and self.faults.share_upstream_session() and self.shared:
            await self._join_shared(front, exchange)
            return
        if session is not None:
            session.inflight[_key(exchange.front_id)] = exchange
        self.note("request", method=method, front_id=exchange.front_id, back_id=exchange.back_id,
                  front_session=session and session.ident, back_session=session and session.back.ident,
                  principal=_fingerprint(principal))  # fmt: skip
        headers = self._headers(front, exchange, session)
        try:
            await self._relay_request(front, outgoing, headers, exchange)
        finally:
            if session is not None:
                session.inflight.pop(_key(exchange.front_id), None)

    async def _relay_request(self, front: Front, outgoing: dict[str, Any], headers: dict[str, str],
                             exchange: Exchange) -> None:  # fmt: skip
        """Send upstream and relay the answer, unless the client goes away first (then cancel, or not)."""
        session = exchange.session
        work = asyncio.create_task(self._forward(front, outgoing, headers, exchange))
        watch = asyncio.create_task(front.until_gone())
        done, _ = await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            watch.cancel()
            work.result()
            return
        self.note("client-gone", front_id=exchange.front_id, back_id=exchange.back_id)
        if self.faults.keep_working(exchange):
            self.background.add(work)
            work.add_done_callback(self.background.discard)
            return
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
            await work
        notice = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": exchange.back_id, "reason": "the client went away"}}  # fmt: skip
        await self.upstream.cancelled(session and session.back, exchange.back_id, self.faults.cancel(notice, exchange))

    async def _forward(self, front: Front, outgoing: dict[str, Any], headers: dict[str, str],
                       exchange: Exchange) -> None:  # fmt: skip
        session = exchange.session
        answer = await self.upstream.request(outgoing, headers, session and session.back, exchange.back_progress)
        extra: dict[str, str] = {}
        if exchange.method == "initialize" and session is None and answer.status == 200:
            back = self.upstream.new_session(answer)
            if back is not None:
                extra["mcp-session-id"] = self._open_session(exchange, back).ident
        if session is not None and answer.status == 404:
            await self._session_gone(front, answer, exchange)
            return
        if not answer.streaming:
            await self._relay_plain(front, answer, exchange, extra)
            return
        mode = "relay" if exchange.method == "subscriptions/listen" else self.faults.stream(exchange)
        if mode == "relay":
            await front.start(answer.status, "text/event-stream", extra)
        held: list[dict[str, Any]] = []
        final: dict[str, Any] | None = None
        try:
            async with contextlib.aclosing(answer.messages()) as messages:
                async for message in messages:
                    is_final = _is_answer(message) and _key(message.get("id")) == _key(exchange.back_id)
                    if exchange.method == "initialize" and is_final and isinstance(message.get("result"), dict):
                        self._remember_initialize(exchange, message["result"])
                    out = self.to_client(message, exchange)
                    if out is not None:
                        if mode == "relay":
                            await front.chunk(sse.frame(out))
                        elif mode == "hold" or is_final:
                            held.append(out)
                    if is_final:
                        final = out
                        break
        finally:
            await answer.close()
        if mode == "relay":
            await front.chunk(b"", more=False)
        elif mode == "strip" and final is not None:
            await front.json(answer.status, final, extra)
        elif mode == "strip":
            await front.json(502, _error(exchange.front_id, -32603, "upstream stream ended without an answer"), extra)
        else:
            await front.whole(answer.status, "text/event-stream", b"".join(sse.frame(m) for m in held), extra)

    async def _relay_plain(self, front: Front, answer: Answer, exchange: Exchange | None,
                           extra: dict[str, str] | None = None, status: int | None = None) -> None:  # fmt: skip
        content = await answer.body()
        content_type = answer.headers.get("content-type")
        if exchange is not None and content:
            try:
                message = json.loads(content)
            except ValueError:
                message = None
            if isinstance(message, dict):
                if exchange.method == "initialize" and isinstance(message.get("result"), dict):
                    self._remember_initialize(exchange, message["result"])
                out = self.to_client(message, exchange)
                content = _dump(out) if out is not None else b""
                if out is not None and self.upstream.stdio and _modern(front, None) and status is None:
                    status = transport.status_of(out, answer.status)
        relayed = {name: answer.headers[name] for name in RELAYED if name in answer.headers}
        await front.whole(status or answer.status, content_type, content, {**relayed, **(extra or {})})

    # -- mapping back ---------------------------------------------------------------------------------------
    def to_client(self, message: dict[str, Any], exchange: Exchange) -> dict[str, Any] | None:
        """The faithful mapping of one upstream message for the client, then the faults at ``to_client``."""
        message = json.loads(_dump(message))
        if "id" in message and "method" not in message and _key(message["id"]) == _key(exchange.back_id):
            message["id"] = exchange.front_id
        params = message.get("params")
        if isinstance(params, dict):
            if message.get("method") == "notifications/progress" and exchange.back_progress is not None:
                if params.get("progressToken") == exchange.back_progress:
                    params["progressToken"] = exchange.front_progress
            meta = params.get("_meta")
            if isinstance(meta, dict) and str(meta.get(SUBSCRIPTION_ID)) == str(exchange.back_id):
                meta[SUBSCRIPTION_ID] = exchange.front_id
        result = message.get("result")
        if self.config.prefix and exchange.method == "tools/list" and isinstance(result, dict):
            for tool in result.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    tool["name"] = self.config.prefix + tool["name"]
        return self.faults.to_client(message, exchange)

    # -- headers toward the upstream ------------------------------------------------------------------------
    def _headers(self, front: Front, exchange: Exchange | None, session: FrontSession | None) -> dict[str, str]:
        headers = {name: front.headers[name] for name in FORWARDED if name in front.headers}
        headers.update({name: value for name, value in front.headers.items() if name.startswith("mcp-param-")})
        headers["content-type"] = "application/json"
        headers.setdefault("accept", "application/json, text/event-stream")
        if exchange is None:
            return headers
        if exchange.back_name is not None and "mcp-name" in headers:
            headers["mcp-name"] = exchange.back_name
        return self.faults.to_upstream_headers(headers, exchange)

    # -- notifications --------------------------------------------------------------------------------------
    async def notification(self, front: Front, message: dict[str, Any], session: FrontSession | None) -> None:
        params = message.get("params")
        if message.get("method") == "notifications/cancelled" and isinstance(params, dict) and session is not None:
            exchange = session.inflight.get(_key(params.get("requestId")))
            if exchange is not None:
                mapped = json.loads(_dump(message))
                mapped["params"]["requestId"] = exchange.back_id
                forwarded = self.faults.cancel(mapped, exchange)
                self.note("cancel", front_id=exchange.front_id, back_id=exchange.back_id,
                          forwarded=forwarded and forwarded["params"].get("requestId"))  # fmt: skip
                if forwarded is None:
                    await front.whole(202, None, b"")
                    return
                message = forwarded
        exchange_headers = self._headers(front, None, session)
        dummy = Exchange(None, None, str(message.get("method")), "", front.headers, session)
        headers = self.faults.to_upstream_headers(exchange_headers, dummy)
        answer = await self.upstream.post(message, headers, session and session.back)
        if session is not None and answer.status == 404:
            await self._session_gone(front, answer, dummy)
            return
        await self._relay_plain(front, answer, None)

    # -- sessions -------------------------------------------------------------------------------------------
    def _open_session(self, exchange: Exchange, back: BackSession) -> FrontSession:
        if self.faults.share_upstream_session() and self.shared is None:
            self.shared = back
        session = FrontSession(uuid.uuid4().hex, exchange.principal, back)
        back.users += 1
        self.sessions[session.ident] = session
        self.note("session", front_session=session.ident, back_session=back.ident,
                  principal=_fingerprint(exchange.principal))  # fmt: skip
        return session

    def _remember_initialize(self, exchange: Exchange, result: dict[str, Any]) -> None:
        if self.shared is not None and self.shared.initialize_result is None:
            self.shared.initialize_result = result

    async def _join_shared(self, front: Front, exchange: Exchange) -> None:
        """The shared-session fault: a later client's initialize is answered from the first one's upstream session."""
        assert self.shared is not None
        session = self._open_session(exchange, self.shared)
        result = self.shared.initialize_result or {}
        await front.json(200, {"jsonrpc": "2.0", "id": exchange.front_id, "result": result},
                         {"mcp-session-id": session.ident})  # fmt: skip

    async def _session_gone(self, front: Front, answer: Answer, exchange: Exchange) -> None:
        session = exchange.session
        status = self.faults.session_gone_status()
        if status == 404 and session is not None:
            self.sessions.pop(session.ident, None)
        self.note("session-gone", front_session=session and session.ident, relayed=status)
        await self._relay_plain(front, answer, exchange if exchange.back_id is not None else None, status=status)

    # -- GET and DELETE (2025-11-25 sessions) ---------------------------------------------------------------
    def _session(self, front: Front) -> FrontSession | None:
        session = self.sessions.get(front.headers.get("mcp-session-id", ""))
        if session is None or session.principal != front.headers.get("authorization", ""):
            return None
        return session

    async def _sessionless(self, front: Front) -> None:
        """A GET or DELETE under a 2026 version: no session of the gateway's is involved (the upstream answers it)."""
        headers = {name: front.headers[name] for name in ("accept", "mcp-protocol-version") if name in front.headers}
        answer = await self.upstream.bare(front.method, headers)
        await self._relay_plain(front, answer, None)

    async def get(self, front: Front) -> None:
        if _modern(front, None):
            await self._sessionless(front)
            return
        session = self._session(front)
        if session is None:
            status = 400 if "mcp-session-id" not in front.headers else 404
            await front.json(status, _error(None, -32600, "Session not found"))
            return
        headers = {name: front.headers[name] for name in ("accept", "mcp-protocol-version") if name in front.headers}
        answer = await self.upstream.stream(headers, session.back)
        if answer.status == 404:
            await self._session_gone(front, answer, Exchange(None, None, "GET", "", front.headers, session))
            return
        if not answer.streaming:
            await self._relay_plain(front, answer, None)
            return
        own = Listener(session)
        self.listeners.append(own)
        reader = asyncio.create_task(self._read_session_stream(answer, own))
        await front.start(answer.status, "text/event-stream")
        watch = asyncio.create_task(front.until_gone())
        try:
            while not front.gone:
                getter = asyncio.create_task(own.queue.get())
                done, _ = await asyncio.wait({getter, watch}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    break
                await front.chunk(sse.frame(getter.result()))
        finally:
            watch.cancel()
            reader.cancel()
            self.listeners.remove(own)
            await answer.close()

    async def _read_session_stream(self, answer: Answer, own: Listener) -> None:
        async for message in answer.messages():
            for target in self.faults.event_targets(own, list(self.listeners)):
                with contextlib.suppress(asyncio.QueueFull):
                    target.queue.put_nowait(message)

    async def delete(self, front: Front) -> None:
        if _modern(front, None):
            await self._sessionless(front)
            return
        session = self._session(front)
        if session is None:
            status = 400 if "mcp-session-id" not in front.headers else 404
            await front.json(status, _error(None, -32600, "Session not found"))
            return
        self.sessions.pop(session.ident, None)
        session.back.users -= 1
        if session.back.users > 0:
            await front.whole(200, None, b"")
            return
        if session.back is self.shared:
            self.shared = None
        headers = {name: front.headers[name] for name in ("mcp-protocol-version",) if name in front.headers}
        answer = await self.upstream.end(headers, session.back)
        await self._relay_plain(front, answer, None)


def _modern(front: Front, message: dict[str, Any] | None) -> bool:
    """A 2026 request (version header past the handshake era, or the 2026 envelope without a header): sessions are no
    part of it, and an Mcp-Session-Id it carries is ignored."""
    version = front.headers.get("mcp-protocol-version")
    if version is not None:
        return version.strip() not in HANDSHAKE
    params = message.get("params") if message is not None else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta


def _fingerprint(principal: str) -> str:
    """A principal as the log shows it: never the token itself."""
    return hashlib.sha256(principal.encode()).hexdigest()[:12] if principal else "anonymous"
