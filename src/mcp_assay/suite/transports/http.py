"""Streamable HTTP for the suite: one POST per message, JSON or SSE answers, every exchange recorded.

Each request becomes one :class:`~mcp_assay.wire.model.HttpExchange` with the headers as actually sent,
the response head, and either the body or every SSE event with the time it arrived. An event
stream is read until the server ends it, or until the suite closes it (a listen stream after its
acknowledgement, a request past its time budget); a stream the suite closes is recorded as
:attr:`~mcp_assay.wire.model.EndReason.CLIENT_DISCONNECT`, which in 2026-07-28 is how a client cancels.

Rate limits and refused credentials are not protocol traffic: a ``429`` is waited out (see
:mod:`mcp_assay.suite.ratelimit`) and recorded as an observation, and a ``401``/``403`` raises
:class:`~mcp_assay.suite.credentials.CredentialsRefused` carrying the server's own answer.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass

import httpx

from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports import Recorder, Reply, StreamControl, final_response
from mcp_assay.suite.transports.connect import connection_failure
from mcp_assay.vocabulary.errors import CredentialsRefused, NoAnswer
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import IdKey, Message, parse_message
from mcp_assay.wire.model import (
    Ending,
    EndReason,
    Headers,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    Observation,
    Probe,
    body_text,
    media_type,
)
from mcp_assay.wire.sse import SseEvent, SseParser

__all__ = ["AFTER_ANSWER_GRACE", "ANSWER_LIMIT", "EVENT_LIMIT", "HttpTransport"]

AFTER_ANSWER_GRACE = 1.0
"""Seconds an SSE stream may stay open after its final response before the suite closes it."""
ANSWER_LIMIT = 16 * 1024 * 1024
"""Bytes of one answer the suite reads: a body (after content decoding), or the whole of an event stream.
Past it the suite closes the connection, records the exchange as closed by the client (a cut body is
never judged as if the server had sent it) with the events read so far, and notes it in the report."""
EVENT_LIMIT = 10_000
"""Events of one event stream the suite reads: many tiny events cost far more memory than their bytes."""
CLIENT_TIMEOUT_FIRST = 0.25
"""Seconds the overall bound on a request's head waits past the HTTP client's own timeouts, so that a connect
that times out is reported as such, and not as a server that accepted the request and never answered."""
REFUSAL_LIMIT = 64 * 1024
"""Bytes read of a 401/403/429 answer, which is only quoted."""


async def _raw_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as it arrives; a response already read (an in-process mock) comes as one chunk."""
    try:
        async for chunk in response.aiter_raw():
            yield chunk
    except httpx.StreamConsumed:
        yield response.content


async def _read_capped(response: httpx.Response, limit: int, into: bytearray | None = None) -> bytes | None:
    """The decoded body, read up to ``limit`` bytes; ``None`` when it is longer (reading stops there).

    What arrived is kept in ``into`` as it comes, so a body the server cut short is still there to quote."""
    body = into if into is not None else bytearray()
    try:
        async for chunk in response.aiter_bytes():
            if len(body) + len(chunk) > limit:
                return None
            body += chunk
    except httpx.StreamConsumed:
        content = response.content
        return content if len(content) <= limit else None
    return bytes(body)


@dataclass(frozen=True, slots=True)
class _Head:
    """A response whose head has arrived, with what its exchange is recorded and answered under."""

    ident: str
    sent: HttpRequest
    response: httpx.Response
    headers: Headers
    time: float
    """When the response head arrived."""
    probe: Probe
    expect: IdKey | None


class HttpTransport:
    """Sends the suite's requests to one MCP endpoint over Streamable HTTP."""

    kind = "http"

    def __init__(
        self,
        url: str,
        *,
        credentials: Credentials,
        recorder: Recorder,
        new_id: Callable[[str], str],
        limiter: RateLimiter,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
        connection: str = "c1",
        answer_limit: int | None = None,
        event_limit: int | None = None,
    ) -> None:
        self.endpoint = url
        self.url = credentials.url(url)
        self.credentials = credentials
        self.recorder = recorder
        self.new_id = new_id
        self.limiter = limiter
        self.timeout = timeout
        self._transport = transport
        self.connection = connection
        self.answer_limit = answer_limit if answer_limit is not None else ANSWER_LIMIT
        self.event_limit = event_limit if event_limit is not None else EVENT_LIMIT
        self._client: httpx.AsyncClient | None = None
        self._connections = 1

    # -- lifecycle -------------------------------------------------------------------------------
    def _make_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            transport=self._transport,
            verify=_tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")),
            timeout=httpx.Timeout(self.timeout),
            follow_redirects=False,
            headers={"user-agent": "mcp-assay"},
        )

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def fresh(self) -> HttpTransport:
        """Another transport to the same endpoint on a new connection (for statelessness probes)."""
        self._connections += 1
        return HttpTransport(
            self.endpoint,
            credentials=self.credentials,
            recorder=self.recorder,
            new_id=self.new_id,
            limiter=self.limiter,
            timeout=self.timeout,
            transport=self._transport,
            connection=f"{self.connection}.{self._connections}",
            answer_limit=self.answer_limit,
            event_limit=self.event_limit,
        )

    # -- sending ---------------------------------------------------------------------------------
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
        method: str = "POST",
        allow_refusal: bool = False,
        cancel_after: float | None = None,
        answer_rate_limits: bool = False,
    ) -> Reply:
        """Send one HTTP request and read its answer; retries after a 429 within the retry budget.

        ``cancel_after`` closes the connection that many seconds after sending unless the answer is
        complete by then — the 2026 way to cancel a request. ``answer_rate_limits`` hands a 429 back
        as the answer instead (the burst that looks for a rate limit wants to see it)."""
        wanted = self.credentials.apply(headers or {})
        if cancel_after is not None:
            stream = StreamControl(budget=cancel_after)
        while True:
            await self.limiter.before_request()
            reply = await self._once(
                method, body, wanted, probe=probe, expect=expect, stream=stream,
                timeout=timeout or self.timeout, allow_refusal=allow_refusal, cancel_after=cancel_after,
                answer_rate_limits=answer_rate_limits,
            )  # fmt: skip
            if reply is not None:
                self.limiter.on_success()
                return reply

    async def _once(
        self,
        method: str,
        body: bytes,
        headers: Mapping[str, str | bytes],
        *,
        probe: Probe,
        expect: IdKey | None,
        stream: StreamControl | None,
        timeout: float,
        allow_refusal: bool,
        cancel_after: float | None = None,
        answer_rate_limits: bool = False,
    ) -> Reply | None:
        ident = self.new_id("h")
        raw_headers = [
            (name.encode("ascii"), value if isinstance(value, bytes) else value.encode("utf-8"))
            for name, value in headers.items()
        ]
        request = self.client.build_request(
            method,
            self.url,
            headers=raw_headers,
            content=body or None,
            timeout=httpx.Timeout(self.timeout, connect=timeout),
        )
        sent = HttpRequest(
            method=method,
            url=str(request.url),
            headers=Headers(
                (name.decode("latin-1"), value.decode("utf-8", "replace")) for name, value in request.headers.raw
            ),
            body=body,
            time=time.time(),
        )
        try:
            # the client's own timeouts come first (a connect that times out is told from a silent server)
            bound = cancel_after if cancel_after is not None else timeout + CLIENT_TIMEOUT_FIRST
            response = await asyncio.wait_for(self.client.send(request, stream=True), timeout=bound)
        except (TimeoutError, httpx.TimeoutException) as exc:
            if cancel_after is None and isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
                raise connection_failure(exc, self.endpoint, method=method, timeout=timeout) from exc
            if cancel_after is not None:
                ending = Ending(reason=EndReason.CLIENT_DISCONNECT, time=time.time(), detail="closed by the suite")
                exchange = self._record(ident, sent, None, ending, probe)
                return Reply(exchange=exchange.id, request=exchange.request_message, closed_by_client=True)
            self._record(ident, sent, None, Ending(reason=EndReason.ERROR, time=time.time(), detail="no answer"), probe)
            raise NoAnswer(f"{method} {sent.path} got no answer within {timeout:g} s", ident) from exc
        except httpx.TransportError as exc:
            raise connection_failure(exc, self.endpoint, method=method, timeout=timeout) from exc
        head_time = time.time()
        head = _Head(ident, sent, response, Headers(response.headers.multi_items()), head_time, probe, expect)
        try:
            if response.status_code == 429 and not answer_rate_limits:
                await _read_capped(response, REFUSAL_LIMIT)
                await response.aclose()
                retry_after = response.headers.get(HeaderKey.RETRY_AFTER)
                delay = self.limiter.on_rate_limited(retry_after)
                self.recorder(
                    Observation(
                        id=self.new_id("o"),
                        time=head_time,
                        kind="rate-limited",
                        data={"request": f"{method} {sent.path}", "probe": probe.to_record(),
                              "retry_after": retry_after,
                              "waiting_s": round(delay, 3)},
                    )
                )  # fmt: skip
                return None
            if response.status_code in (401, 403) and not allow_refusal:
                raw = await _read_capped(response, REFUSAL_LIMIT) or b""
                await response.aclose()
                self.recorder(
                    Observation(
                        id=self.new_id("o"),
                        time=head_time,
                        kind="refused",
                        data={"request": f"{method} {sent.path}", "probe": probe.to_record(),
                              "status": response.status_code,
                              "answer": body_text(raw, 400)},
                    )
                )  # fmt: skip
                raise CredentialsRefused(
                    response.status_code, body_text(raw, 400).strip(), response.headers.get(HeaderKey.WWW_AUTHENTICATE)
                )
            if media_type(response.headers.get(HeaderKey.CONTENT_TYPE)) == MediaType.EVENT_STREAM:
                return await self._read_stream(head, stream=stream, timeout=timeout)
            return await self._read_body(head, timeout=timeout)
        finally:
            await response.aclose()

    async def _read_body(self, head: _Head, *, timeout: float) -> Reply:
        raw: bytes | None = b""
        arrived = bytearray()
        try:
            raw = await asyncio.wait_for(_read_capped(head.response, self.answer_limit, arrived), timeout=timeout)
            ending = Ending(reason=EndReason.COMPLETE, time=time.time())
        except (TimeoutError, httpx.TimeoutException):
            ending = Ending(reason=EndReason.CLIENT_DISCONNECT, time=time.time(), detail="body not finished in time")
        except httpx.TransportError as exc:
            # the server closed the connection inside the body: what it sent is its answer, cut short
            raw = bytes(arrived)
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            ending = Ending(reason=EndReason.SERVER_DISCONNECT, time=time.time(), detail=detail)
        if raw is None:
            raw = b""
            ending = Ending(reason=EndReason.CLIENT_DISCONNECT, time=time.time(), detail=self._over_limit)
            self._note_cut(head, f"the answer body was longer than {self.answer_limit} bytes")
        return self._conclude(head, ending, body=raw)

    @property
    def _over_limit(self) -> str:
        return f"closed by the suite: the answer passed the {self.answer_limit}-byte limit"

    def _note_cut(self, head: _Head, what: str) -> None:
        detail = (
            f"{head.sent.method} {head.sent.path} (exchange {head.ident}): {what}, the limit the run reads of one "
            "answer; the run closed the connection and judged the exchange as closed by the client"
        )
        self.recorder(Observation(id=self.new_id("o"), time=time.time(), kind="note", data={"detail": detail}))

    async def _read_stream(self, head: _Head, *, stream: StreamControl | None, timeout: float) -> Reply:
        events: list[SseEvent] = []
        messages: list[Message] = []

        def on_event(event: SseEvent) -> None:
            events.append(event)
            if event.carries_message and event.data is not None:
                messages.append(parse_message(event.data, sender=Side.SERVER, time=event.time, transport="http"))

        parser = SseParser(on_event)
        start = time.monotonic()
        budget = stream.budget if stream is not None else timeout
        deadline = start + budget
        stop_at: float | None = None
        ending: Ending | None = None
        chunks = _raw_chunks(head.response)
        received = 0
        cut: str | None = None  # the limit that stopped the read, if one did
        while ending is None:
            now = time.monotonic()
            limit = deadline if stop_at is None else min(deadline, stop_at)
            if now >= limit:
                ending = Ending(reason=EndReason.CLIENT_DISCONNECT, time=time.time(), detail="closed by the suite")
                break
            try:
                async with asyncio.timeout(limit - now):
                    chunk = await anext(chunks)
            except TimeoutError:
                ending = Ending(reason=EndReason.CLIENT_DISCONNECT, time=time.time(), detail="closed by the suite")
                break
            except StopAsyncIteration:
                parser.close(time.time())
                ending = Ending(reason=EndReason.COMPLETE, time=time.time())
                break
            except httpx.TransportError as exc:
                parser.close(time.time())
                ending = Ending(reason=EndReason.SERVER_DISCONNECT, time=time.time(), detail=type(exc).__name__)
                break
            received += len(chunk)
            if received > self.answer_limit:
                cut = f"{self.answer_limit} bytes"
                self._note_cut(head, f"the event stream passed {cut} after {len(events)} complete event(s)")
            else:
                parser.feed(chunk, time.time())
                if len(events) > self.event_limit:
                    cut = f"{self.event_limit} events"
                    self._note_cut(head, f"the event stream passed {cut}")
            if cut is not None:
                detail = f"closed by the suite: the answer passed the {cut} limit"
                ending = Ending(reason=EndReason.CLIENT_DISCONNECT, time=time.time(), detail=detail)
                break
            if stop_at is None:
                if stream is not None and stream.stop(messages):
                    stop_at = time.monotonic() + stream.linger
                elif stream is None and head.expect is not None and final_response(messages, head.expect) is not None:
                    stop_at = time.monotonic() + AFTER_ANSWER_GRACE
        reply = self._conclude(head, ending, events=tuple(events))
        if stream is None and reply.response is None and ending.reason is EndReason.CLIENT_DISCONNECT:
            within = cut or f"{budget:g} s"
            raise NoAnswer(f"{head.sent.method} {head.sent.path} streamed no answer within {within}", reply.exchange)
        return reply

    # -- recording -------------------------------------------------------------------------------
    def _conclude(
        self, head: _Head, ending: Ending, *, body: bytes | None = None, events: tuple[SseEvent, ...] = ()
    ) -> Reply:
        """Record the exchange ``head`` began, answered by ``body`` or the stream's ``events``, and reply."""
        response = HttpResponse(
            status=head.response.status_code,
            reason=head.response.reason_phrase,
            headers=head.headers,
            time=head.time,
            body=body,
            events=events,
        )
        exchange = self._record(head.ident, head.sent, response, ending, head.probe)
        return self._reply(exchange, head.expect, head.response.status_code, head.headers, body or b"")

    def _record(
        self,
        ident: str,
        request: HttpRequest,
        response: HttpResponse | None,
        ending: Ending,
        probe: Probe,
    ) -> HttpExchange:
        exchange = HttpExchange.build(
            id=ident, request=request, response=response, ending=ending, connection=self.connection, probe=probe
        )
        self.recorder(exchange)
        return exchange

    @staticmethod
    def _reply(exchange: HttpExchange, expect: IdKey | None, status: int, headers: Headers, raw: bytes) -> Reply:
        server = exchange.response_messages
        return Reply(
            exchange=exchange.id,
            request=exchange.request_message,
            response=final_response(server, expect),
            messages=server,
            status=status,
            headers=headers,
            content_type=media_type(headers.get(HeaderKey.CONTENT_TYPE)),
            closed_by_client=exchange.client_disconnected,
            body=raw,
        )


@functools.cache
def _tls_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    """The one TLS context of every client with the same trust settings (httpx's own default, which honours
    SSL_CERT_FILE and SSL_CERT_DIR): building one reads the whole CA bundle, about 20 ms of CPU, and a run opens a
    client for every fresh connection its probes need."""
    return httpx.create_ssl_context()
