"""The cancellation, subscription, logging and progress rules against the official Python SDK server.

Each test drives the real server (``tests/peers/sdk_server.py``) over Streamable HTTP or stdio,
turns what crossed the wire into :class:`HttpExchange` / :class:`StdioLine` records (SSE parsed
incrementally, every event with its arrival time), judges the log with every registered check and
then looks at the verdicts of the CAN/SUB/LOG/PROG rules. Every wait is bounded.

Deviations of the SDK server these tests pin (checked against the specification text):

* LOG-05: the server sends ``notifications/message`` (for requests that set a logLevel) although
  neither its ``server/discover`` result nor its ``InitializeResult`` declares ``logging``
  ("Servers that emit log message notifications MUST declare the logging capability").
* CAN-08 (2025, SHOULD NOT): after a POSTed ``notifications/cancelled`` the legacy HTTP transport
  still answers the cancelled request with error ``-32800`` on its stream ("Not send a response
  for the cancelled request").
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Outcome, Side, Verdict
from mcp_assay.wire.jsonrpc import Message, parse_message
from mcp_assay.wire.model import (
    Ending,
    EndReason,
    Headers,
    HttpExchange,
    HttpRequest,
    HttpResponse,
    ProcessExit,
    StdioLine,
)
from mcp_assay.wire.sse import SseEvent, SseParser
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import as_probe, rules_of
from tests.peers.process import sdk_http_server, sdk_server_command, stop

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
WAIT = 5.0
_ids = itertools.count(1)


def body(ident: Any, method: str, params: dict[str, Any] | None = None, **extra_meta: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-assay-e2e", "version": "0"},
    }
    for key, value in extra_meta.items():
        meta[LOG_LEVEL if key == "logLevel" else key] = value
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**(params or {}), "_meta": meta}}


def modern_headers(message: dict[str, Any]) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": message["method"],
    }
    name = message.get("params", {}).get("name")
    if message["method"] == "tools/call" and isinstance(name, str):
        headers["mcp-name"] = name
    return headers


# -- HTTP capture --------------------------------------------------------------------------------
class Recorded:
    """One POST sent with httpx streaming and recorded as an HttpExchange as it goes."""

    def __init__(self, client: httpx.Client, url: str, message: Any, headers: dict[str, str]) -> None:
        self.raw = json.dumps(message).encode()
        self.headers = headers
        self.url = url
        self.sent = time.time()
        self._context = client.stream("POST", url, headers=headers, content=self.raw)
        self.response = self._context.__enter__()
        self.head = time.time()
        self.events: list[SseEvent] = []
        self.body: bytes | None = None
        self._parser = SseParser(self.events.append)
        self._chunks: Iterator[bytes] | None = None
        self._finished = False
        if not self.streaming:
            self.body = self.response.read()
            self._finish(EndReason.COMPLETE)

    @property
    def streaming(self) -> bool:
        return self.response.headers.get("content-type", "").startswith("text/event-stream")

    def messages(self) -> list[Message]:
        return [
            parse_message(event.data, sender=Side.SERVER, time=event.time)
            for event in self.events
            if event.carries_message and event.data is not None
        ]

    def read_until(self, done: Callable[[list[Message]], bool]) -> bool:
        """Read SSE chunks until ``done`` holds or the stream ends (bounded by the client timeout)."""
        if self._chunks is None:
            self._chunks = self.response.iter_raw()
        while not self._finished and not done(self.messages()):
            try:
                chunk = next(self._chunks)
            except StopIteration:
                self._parser.close(time.time())
                self._finish(EndReason.COMPLETE)
                break
            self._parser.feed(chunk, time.time())
        return done(self.messages())

    def close(self) -> None:
        """Stop reading: if the stream is still open this is a client disconnect."""
        if not self._finished:
            self._finish(EndReason.CLIENT_DISCONNECT)

    def _finish(self, reason: EndReason) -> None:
        self._finished = True
        self.reason = reason
        self.ended = time.time()
        self._context.__exit__(None, None, None)

    def exchange(self) -> HttpExchange:
        assert self._finished, "close or drain the stream first"
        return HttpExchange.build(
            id=f"e2e-http-{next(_ids)}",
            request=HttpRequest(
                method="POST", url=self.url, headers=Headers(self.headers), body=self.raw, time=self.sent
            ),
            response=HttpResponse(
                status=self.response.status_code,
                headers=Headers(list(self.response.headers.multi_items())),
                time=self.head,
                body=self.body,
                events=tuple(self.events),
            ),
            ending=Ending(reason=self.reason, time=self.ended),
        )


def call(client: httpx.Client, url: str, message: Any, headers: dict[str, str] | None = None) -> HttpExchange:
    """A request (or notification) whose answer is read to the end."""
    recorded = Recorded(client, url, message, headers or modern_headers(message))
    recorded.read_until(lambda _messages: False)
    return recorded.exchange()


def has(method: str) -> Callable[[list[Message]], bool]:
    return lambda messages: any(m.method == method for m in messages)


def has_response(messages: list[Message]) -> bool:
    return any(m.kind.is_response for m in messages)


# -- stdio capture -------------------------------------------------------------------------------
class StdioSession:
    """The SDK server on stdio, with every line (both directions) recorded with its time."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            sdk_server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.lines: list[StdioLine] = []
        self._incoming: queue.Queue[tuple[float, bytes]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._incoming.put((time.time(), raw))

    def _record(self, sender: Side, raw: bytes, at: float, probe: dict[str, Any] | None = None) -> StdioLine:
        line = StdioLine.build(
            id=f"e2e-stdio-{next(_ids)}", connection="e2e", sender=sender, time=at, raw=raw, probe=as_probe(probe)
        )
        self.lines.append(line)
        return line

    def send(self, message: Any, probe: dict[str, Any] | None = None) -> None:
        """Write one line; ``probe`` tags it the way the active suite tags its crafted messages."""
        assert self.process.stdin is not None
        raw = json.dumps(message).encode() + b"\n"
        self._record(Side.CLIENT, raw, time.time(), probe)
        self.process.stdin.write(raw)
        self.process.stdin.flush()

    def collect(self, until: Callable[[Message], bool] | None = None, timeout: float = WAIT) -> Message | None:
        """Record server lines until one satisfies ``until`` or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                at, raw = self._incoming.get(timeout=remaining)
            except queue.Empty:
                return None
            line = self._record(Side.SERVER, raw, at)
            if until is not None and until(line.message):
                return line.message

    def answer(self, ident: Any, timeout: float = WAIT) -> Message:
        found = self.collect(lambda m: m.kind.is_response and m.id == ident, timeout)
        assert found is not None, f"no answer to {ident} within {timeout}s"
        return found

    def close(self) -> ProcessExit:
        assert self.process.stdin is not None
        closed = time.time()
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            stop(self.process)
            code = self.process.returncode
        self._reader.join(timeout=WAIT)
        assert self.process.stdout is not None
        self.process.stdout.close()
        while not self._incoming.empty():
            at, raw = self._incoming.get_nowait()
            self._record(Side.SERVER, raw, at)
        return ProcessExit(id="e2e-exit", connection="e2e", time=time.time(), code=code, stdin_closed_at=closed)


# -- judging -------------------------------------------------------------------------------------
def judge_all(log: ExchangeLog, spec: SpecSet) -> dict[str, Verdict]:
    verdicts = evaluate(log, spec)
    assert len(verdicts) == len(REGISTRY)
    mine = {check.name for check in rules_of("cancellation", "subscriptions", "logging", "progress")}
    return {verdict.check: verdict for verdict in verdicts if verdict.check in mine}


def failures(verdicts: dict[str, Verdict], expected: set[str]) -> dict[str, str]:
    broken = {name: v.reason for name, v in verdicts.items() if v.reason.startswith("the check itself failed")}
    assert not broken, broken
    return {
        name: verdict.reason
        for name, verdict in verdicts.items()
        if verdict.outcome is Outcome.FAILED and name not in expected
    }


def assert_passed(verdicts: dict[str, Verdict], *names: str) -> None:
    for name in names:
        assert verdicts[name].outcome is Outcome.PASSED, (name, verdicts[name].outcome, verdicts[name].reason)


# -- tests ---------------------------------------------------------------------------------------
def test_the_sdk_server_over_2026_http(spec: SpecSet) -> None:
    """Spec-mandated (SUB-02..11, PROG-03..07, LOG-01..05): listen, progress and per-request logs."""
    log = ExchangeLog()
    with sdk_http_server() as server, httpx.Client(timeout=WAIT) as client:
        url = server.url
        log.add(call(client, url, body("d", "server/discover")))
        wanted = {"toolsListChanged": True}
        listen_body = body(10, "subscriptions/listen", {"notifications": wanted})
        listen = Recorded(client, url, listen_body, modern_headers(listen_body))
        with httpx.Client(timeout=WAIT) as other:
            assert listen.read_until(has("notifications/subscriptions/acknowledged"))
            log.add(call(other, url, body(11, "tools/call", {"name": "touch_tools", "arguments": {}})))
            assert listen.read_until(has("notifications/tools/list_changed"))
            listen.close()
            log.add(listen.exchange())
            steps = {"name": "progress_tool", "arguments": {"steps": 3}}
            log.add(call(other, url, body(12, "tools/call", steps, progressToken="tok-12")))
            chatty = {"name": "chatty", "arguments": {}}
            log.add(call(other, url, body(13, "tools/call", chatty)))
            log.add(call(other, url, body(14, "tools/call", chatty, logLevel="info")))
            log.add(call(other, url, body(15, "tools/call", chatty, logLevel="error")))
            log.add(call(other, url, body(16, "tools/call", chatty, logLevel="verbose")))
    verdicts = judge_all(log, spec)
    expected = {
        "log_messages_need_the_logging_capability",  # real deviation, see the module docstring
        "clients_do_not_adopt_deprecated_logging",  # our own requests set logLevel: an INFO note
    }
    assert failures(verdicts, expected) == {}
    assert verdicts["log_messages_need_the_logging_capability"].outcome is Outcome.FAILED
    assert_passed(
        verdicts,
        "listen_requests_carry_a_typed_filter",
        "http_listen_answers_are_event_streams",
        "listen_streams_start_with_the_acknowledgement",
        "acknowledgements_name_their_listen_request",
        "acknowledgements_grant_no_more_than_requested",
        "acknowledgements_drop_unsupported_types",
        "listen_streams_carry_only_requested_types",
        "listen_notifications_carry_the_subscription_id",
        "listen_streams_carry_no_progress_or_log",
        "change_notifications_travel_only_on_listen_streams",
        "clients_end_subscriptions_by_closing_or_cancelling",
        "list_changed_needs_the_list_changed_capability",
        "progress_tokens_are_strings_or_integers",
        "progress_names_a_request_in_flight",
        "progress_increases_with_every_notification",
        "no_progress_after_the_final_response",
        "progress_travels_on_its_request_stream",
        "log_messages_only_for_requests_that_asked",
        "log_messages_respect_the_requested_level",
        "log_messages_stay_on_their_request_stream",
        "unknown_log_levels_are_rejected",
        "log_messages_leak_no_secrets",
    )


def test_the_sdk_server_over_2026_stdio(spec: SpecSet) -> None:
    """Spec-mandated (CAN-03/04/08/09, SUB-03/13, LOG-01..03, PROG-03..05): a cancelled slow write and friends."""
    session = StdioSession()
    try:
        session.send(body("d", "server/discover"))
        session.answer("d", timeout=15.0)  # the first answer includes the interpreter start-up
        session.send(
            body(1, "tools/call", {"name": "slow_write", "arguments": {"tag": "e2e", "delay_ms": 500}}, progressToken=1)
        )
        time.sleep(0.1)
        session.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "test"}}
        )
        session.collect(timeout=0.7)  # past the moment the write would have finished
        unknown = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}
        session.send(unknown, probe={"name": "cancel-unknown-id", "invalid": True})
        session.send(body(2, "tools/call", {"name": "get_writes", "arguments": {}}))
        writes = session.answer(2)
        session.send(body(3, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        session.collect(lambda m: m.method == "notifications/subscriptions/acknowledged")
        session.send(body(4, "tools/call", {"name": "touch_tools", "arguments": {}}))
        session.answer(4)
        session.send(body(5, "tools/call", {"name": "chatty", "arguments": {}}, logLevel="warning"))
        session.answer(5)
        session.send(body(6, "tools/call", {"name": "progress_tool", "arguments": {"steps": 2}}, progressToken="p6"))
        session.answer(6)
        session.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
        session.collect(timeout=0.2)
    finally:
        exit_record = session.close()
    assert writes.result["structuredContent"]["result"] == []  # the cancelled write never landed
    log = ExchangeLog([*session.lines, exit_record])
    verdicts = judge_all(log, spec)
    expected = {"log_messages_need_the_logging_capability", "clients_do_not_adopt_deprecated_logging"}
    assert failures(verdicts, expected) == {}
    assert_passed(
        verdicts,
        "cancelled_stdio_requests_get_no_later_messages",
        "cancelled_requests_are_not_answered",
        "stdio_cancellations_repeat_the_request_id_exactly",
        "cancellations_name_requests_their_sender_issued",
        "unknown_cancellations_get_no_reply",
        "servers_keep_serving_after_unknown_cancellations",
        "clients_cancel_requests_they_abandon",
        "listen_streams_start_with_the_acknowledgement",
        "acknowledgements_name_their_listen_request",
        "listen_notifications_carry_the_subscription_id",
        "change_notifications_travel_only_on_listen_streams",
        "clients_end_subscriptions_by_closing_or_cancelling",
        "log_messages_respect_the_requested_level",
        "log_messages_stay_on_their_request_stream",
        "progress_names_a_request_in_flight",
        "progress_increases_with_every_notification",
        "no_progress_after_the_final_response",
    )


def _legacy_headers(session: str | None = None) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": LEGACY}
    return headers


def test_the_sdk_server_answers_a_cancelled_2025_http_request(spec: SpecSet) -> None:
    """Spec-mandated (CAN-08 2025 SHOULD NOT, CAN-12): the legacy transport still answers -32800."""
    log = ExchangeLog()
    with sdk_http_server() as server, httpx.Client(timeout=WAIT) as client:
        url = server.url
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "e2e", "version": "0"}},
        }
        first = call(client, url, init, _legacy_headers())
        log.add(first)
        assert first.response is not None
        session = first.response.headers.get("mcp-session-id")
        assert session
        log.add(call(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, _legacy_headers(session)))
        slow = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "slow_write", "arguments": {"tag": "l", "delay_ms": 800}},
        }
        pending = Recorded(client, url, slow, _legacy_headers(session))
        with httpx.Client(timeout=WAIT) as other:
            time.sleep(0.1)
            notice = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1, "reason": "e2e"},
            }
            log.add(call(other, url, notice, _legacy_headers(session)))
        pending.read_until(has_response)
        pending.close()
        log.add(pending.exchange())
        set_level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}}
        log.add(call(client, url, set_level, _legacy_headers(session)))
        chatty = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}}
        log.add(call(client, url, chatty, _legacy_headers(session)))
    verdicts = judge_all(log, spec)
    # the server logs although its InitializeResult declares no logging (and refuses logging/setLevel)
    assert verdicts["log_messages_need_the_logging_capability"].outcome is Outcome.FAILED
    assert verdicts["set_level_requests_are_answered_as_specified"].outcome is Outcome.NOT_VERIFIED
    assert_passed(verdicts, "legacy_http_cancellations_are_accepted", "cancellations_name_requests_their_sender_issued")
    answered = verdicts["cancelled_requests_are_not_answered"]
    assert answered.outcome is Outcome.FAILED, answered.reason
    assert "-32800" in answered.reason
    expected = {"cancelled_requests_are_not_answered", "log_messages_need_the_logging_capability"}
    assert failures(verdicts, expected) == {}
