"""Scripted MCP clients for ``--inject``: one correct client per family, and one broken in exactly one way.

Each scenario is a function that talks to a proxy (HTTP) or a tap (stdio) running with that
family's injection, and does what a client does next: the correct one what the specification asks
(retry from ``data.supported``, start over after a ``404``, cancel a request it gave up on, never
its ``initialize``, read header names in any case, re-list tools after a ``-32020``, re-send a
broken 2026 stream's work under a new id, wait ``retry`` ms before resuming a 2025 stream, leave a
version it cannot use), the broken one the single mistake its requirement names.
"""

from __future__ import annotations

import itertools
import json
import select
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import httpx

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
INFO = {"name": "inject-scripted-client", "version": "1.0.0"}
GIVE_UP_S = 0.3
"""How long the scripted clients wait for an answer before giving up (the hold is longer)."""
INJECTED_MARKS = (b"(injected by mcp-assay)", b"an injected counter-offer")
"""What the answers a tap injects carry (the server's own answers never do)."""
STARTUP_S = 20.0
"""How long a stdio client waits for its first answer: the tap and the server start first (slow on a busy machine)."""


@dataclass
class Answer:
    """What came back for one POST (or resuming GET)."""

    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    event_ids: list[str] = field(default_factory=list)
    retry_ms: int | None = None
    gave_up: bool = False

    def header(self, name: str, *, case_sensitive: bool = False) -> str | None:
        for key, value in self.headers:
            if key == name or (not case_sensitive and key.lower() == name.lower()):
                return value
        return None

    @property
    def final(self) -> dict[str, Any] | None:
        return next((m for m in self.messages if "result" in m or "error" in m), None)

    @property
    def code(self) -> int | None:
        final = self.final
        error = final.get("error") if final is not None else None
        return error.get("code") if isinstance(error, dict) else None


def _meta(version: str = MODERN) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": INFO,
    }


class Talk:
    """A scripted client's conversation with one HTTP endpoint, in either era."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=10.0)
        self.ids = itertools.count(1)
        self.session: str | None = None

    def close(self) -> None:
        self.http.close()

    def fresh(self) -> None:
        """Go on over a new connection, as an HTTP stack may after a 4xx (or one that opens one per request)."""
        self.http.close()
        self.http = httpx.Client(timeout=10.0)

    # -- sending -----------------------------------------------------------------------------------
    def post(self, body: dict[str, Any], headers: dict[str, str], *, give_up: float | None = None) -> Answer:
        answer = Answer()
        timeout = httpx.Timeout(10.0, read=give_up) if give_up is not None else None
        try:
            with self.http.stream(
                "POST", self.url, content=json.dumps(body), headers=headers, timeout=timeout or httpx.USE_CLIENT_DEFAULT
            ) as response:
                answer.status = response.status_code
                answer.headers = [(k.decode(), v.decode()) for k, v in response.headers.raw]
                _read(response, answer)
        except httpx.ReadTimeout:
            answer.gave_up = True  # leaving the block closed the connection: the stream is dropped
        return answer

    def resume(self, last_event_id: str) -> Answer:
        answer = Answer()
        headers = {"accept": "text/event-stream", "last-event-id": last_event_id, "mcp-protocol-version": LEGACY}
        if self.session is not None:
            headers["mcp-session-id"] = self.session
        with self.http.stream("GET", self.url, headers=headers) as response:
            answer.status = response.status_code
            _read(response, answer)
        return answer

    # -- 2026 -----------------------------------------------------------------------------------------
    def modern(
        self, method: str, params: dict[str, Any] | None = None, *, ident: Any = None, version: str = MODERN,
        give_up: float | None = None,
    ) -> tuple[dict[str, Any], Answer]:  # fmt: skip
        body = {"jsonrpc": "2.0", "id": next(self.ids) if ident is None else ident, "method": method}
        body["params"] = {**(params or {}), "_meta": _meta(version)}
        headers = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": version}
        headers["mcp-method"] = method
        if method == "tools/call":
            headers["mcp-name"] = str((params or {}).get("name"))
        return body, self.post(body, headers, give_up=give_up)

    def modern_notify(self, method: str, params: dict[str, Any]) -> Answer:
        body = {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": _meta()}}
        headers = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": MODERN}
        return self.post(body, {**headers, "mcp-method": method})

    # -- 2025 -----------------------------------------------------------------------------------------
    def legacy_headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": LEGACY}
        if self.session is not None:
            headers["mcp-session-id"] = self.session
        return headers

    def initialize(
        self, version: str = LEGACY, *, case_sensitive: bool = False, give_up: float | None = None, ident: Any = None
    ) -> tuple[dict[str, Any], Answer]:
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": INFO}
        body = {
            "jsonrpc": "2.0",
            "id": next(self.ids) if ident is None else ident,
            "method": "initialize",
            "params": params,
        }
        headers = {"content-type": "application/json", "accept": ACCEPT}
        answer = self.post(body, headers, give_up=give_up)
        self.session = answer.header("Mcp-Session-Id", case_sensitive=case_sensitive)
        if answer.final is not None and "result" in answer.final:
            self.notify("notifications/initialized")
        return body, answer

    def legacy(
        self, method: str, params: dict[str, Any] | None = None, *, ident: Any = None, give_up: float | None = None
    ) -> tuple[dict[str, Any], Answer]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.ids) if ident is None else ident, "method": method}
        if params is not None:
            body["params"] = params
        return body, self.post(body, self.legacy_headers(), give_up=give_up)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        self.post(body, self.legacy_headers())


def _read(response: httpx.Response, answer: Answer) -> None:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for event in _events(response.iter_lines()):
            if "id" in event:
                answer.event_ids.append(event["id"])
            if "retry" in event:
                answer.retry_ms = int(event["retry"])
            data = event.get("data", "")
            if data.strip():
                answer.messages.append(json.loads(data))
                if "result" in answer.messages[-1] or "error" in answer.messages[-1]:
                    return
    else:
        text = response.read()
        if text.strip():
            answer.messages.append(json.loads(text))


def _events(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    event: dict[str, str] = {}
    for line in lines:
        if not line:
            if event:
                yield event
            event = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        event[name] = event.get(name, "") + ("\n" if name == "data" and name in event else "") + value
    if event:
        yield event


# -- HTTP scenarios -------------------------------------------------------------------------------------
def version_correct(url: str) -> None:
    """After -32022 with data.supported = [2025-11-25]: retry in that version (with initialize)."""
    talk = Talk(url)
    _, refused = talk.modern("tools/list")
    assert refused.status == 400 and refused.code == -32022, refused
    supported = refused.final["error"]["data"]["supported"]  # type: ignore[index]
    talk.initialize(supported[0])
    talk.legacy("tools/list")
    talk.close()


def version_broken(url: str) -> None:
    """VER-05: sends the refused version again."""
    talk = Talk(url)
    talk.modern("tools/list")
    talk.modern("tools/list")
    talk.close()


def session_correct(url: str) -> None:
    """After a 404 for the session: a new initialize without the old id."""
    talk = Talk(url)
    talk.initialize()
    _, gone = talk.legacy("tools/list")
    assert gone.status == 404, gone
    talk.session = None
    talk.initialize()
    talk.legacy("tools/list")
    talk.close()


def session_broken(url: str) -> None:
    """HS-22: keeps using the session the 404 ended."""
    talk = Talk(url)
    talk.initialize()
    talk.legacy("tools/list")
    talk.legacy("tools/list")
    talk.close()


def hold_correct(url: str) -> None:
    """Never cancels initialize (it gives up on it and starts again); cancels a request it gives up on
    (2025: notifications/cancelled; 2026: closing the stream)."""
    talk = Talk(url)
    _, held = talk.initialize(give_up=GIVE_UP_S)
    assert held.gave_up, held
    talk.initialize()  # the reaction to the held initialize: a new one, which is not held
    body, late = talk.legacy("tools/list", give_up=GIVE_UP_S)
    assert late.gave_up, late
    talk.notify("notifications/cancelled", {"requestId": body["id"], "reason": "timed out"})
    talk.legacy("prompts/list")
    _, modern = talk.modern("tools/list", give_up=GIVE_UP_S)
    assert modern.gave_up, modern
    talk.modern("tools/list")
    talk.close()


def hold_broken_initialize(url: str) -> None:
    """CAN-10: cancels its initialize."""
    talk = Talk(url)
    body, held = talk.initialize(give_up=GIVE_UP_S)
    talk.notify("notifications/cancelled", {"requestId": body["id"], "reason": "timed out"})
    talk.close()


def hold_broken_request(url: str) -> None:
    """CAN-13: gives up on a 2025 request by dropping its stream, without notifications/cancelled."""
    talk = Talk(url)
    talk.initialize()  # held first; this client waits for it
    talk.legacy("prompts/list")
    _, late = talk.legacy("tools/list", give_up=GIVE_UP_S)
    assert late.gave_up, late
    talk.legacy("prompts/list")
    talk.close()


def headers_correct(url: str) -> None:
    """Reads respelled header names; re-reads tools/list after -32020 and retries under a new id."""
    talk = Talk(url)
    talk.initialize()
    assert talk.session is not None
    talk.legacy("tools/list")
    talk.modern("tools/list")  # its answer comes with respelled names
    talk.modern("prompts/list")
    call = {"name": "add", "arguments": {"a": 1, "b": 2}}
    _, refused = talk.modern("tools/call", call)
    assert refused.code == -32020, refused
    talk.modern("tools/list")
    talk.modern("tools/call", call)
    talk.close()


def headers_broken_refusal(url: str) -> None:
    """HTTP-22: retries the refused call without re-reading tools/list."""
    talk = Talk(url)
    talk.initialize()
    talk.legacy("tools/list")
    talk.modern("tools/list")
    talk.modern("prompts/list")
    call = {"name": "add", "arguments": {"a": 1, "b": 2}}
    talk.modern("tools/call", call)
    talk.modern("tools/call", call)
    talk.close()


def headers_broken_case(url: str) -> None:
    """HS-19 (and HTTP-14): looks the session id up case-sensitively, loses it, and asks again in 2026."""
    talk = Talk(url)
    talk.initialize(case_sensitive=True)
    talk.legacy("tools/list")
    body, answer = talk.modern("tools/list")
    if answer.header("content-type", case_sensitive=True) is None:
        talk.modern("tools/list", {})  # the answer was unreadable to it: the same work again
    talk.close()


def cut_correct(url: str) -> None:
    """2026: re-sends the broken stream's work under a new id; 2025: resumes after waiting retry ms."""
    talk = Talk(url)
    _, cut = talk.modern("tools/list")
    assert cut.final is None, cut
    talk.modern("tools/list")
    talk.initialize()
    _, legacy = talk.legacy("tools/list")
    assert legacy.final is None and legacy.event_ids, legacy
    time.sleep((legacy.retry_ms or 0) / 1000 + 0.05)
    resumed = talk.resume(legacy.event_ids[-1])
    assert resumed.final is not None, resumed
    talk.close()


def cut_broken_modern(url: str) -> None:
    """HTTP-36: re-sends the broken 2026 work under the same id."""
    talk = Talk(url)
    body, _ = talk.modern("tools/list")
    talk.modern("tools/list", ident=body["id"])
    talk.close()


def cut_broken_legacy(url: str) -> None:
    """HTTP-43: resumes the 2025 stream at once, without waiting the retry interval."""
    talk = Talk(url)
    talk.modern("tools/list")
    talk.modern("tools/list")
    talk.initialize()
    _, legacy = talk.legacy("tools/list")
    talk.resume(legacy.event_ids[-1])
    talk.close()


def version_broken_new_connection(url: str) -> None:
    """VER-05: after its discover is refused, goes on to other work in the refused version, over a new connection."""
    talk = Talk(url)
    _, refused = talk.modern("server/discover")
    assert refused.code == -32022, refused
    talk.fresh()
    talk.modern("tools/list")
    talk.close()


def version_broken_same_id(url: str) -> None:
    """VER-05: retries from data.supported, but under the refused request's id."""
    talk = Talk(url)
    body, refused = talk.modern("tools/list")
    supported = refused.final["error"]["data"]["supported"]  # type: ignore[index]
    talk.initialize(supported[0], ident=body["id"])
    talk.legacy("tools/list")
    talk.close()


def session_broken_carries_on(url: str) -> None:
    """HS-22: after the 404 drops the session id, and carries on without a new initialize."""
    talk = Talk(url)
    talk.initialize()
    _, gone = talk.legacy("tools/list")
    assert gone.status == 404, gone
    talk.session = None
    talk.legacy("tools/list")
    talk.close()


def hold_broken_modern_notice(url: str) -> None:
    """CAN-13: on 2026 HTTP gives up on a late answer by POSTing notifications/cancelled, and keeps the stream open."""
    waiting, other = Talk(url), Talk(url)
    sent = threading.Event()
    waiting.http.close()
    waiting.http = httpx.Client(timeout=10.0, event_hooks={"request": [lambda _: sent.set()]})
    done: dict[str, Answer] = {}
    ident = 41
    thread = threading.Thread(target=lambda: done.update(late=waiting.modern("tools/list", ident=ident)[1]))
    thread.start()
    assert sent.wait(5.0)
    time.sleep(GIVE_UP_S)
    other.modern_notify("notifications/cancelled", {"requestId": ident, "reason": "timed out"})
    thread.join(10)
    assert done["late"].final is not None, done  # the answer came, late, on the stream it kept open
    other.modern("prompts/list")
    waiting.close()
    other.close()


def headers_broken_fallback(url: str) -> None:
    """HTTP-14: looks Content-Type up case-sensitively, takes the respelled 2026 answer for none, falls back."""
    talk = Talk(url)
    _, answer = talk.modern("server/discover")
    assert answer.header("content-type", case_sensitive=True) is None, answer.headers
    talk.fresh()
    talk.initialize()
    talk.legacy("tools/list")
    talk.close()


def headers_broken_refusal_fallback(url: str) -> None:
    """VER-13: takes the -32020 for an old server's refusal and falls back to initialize, on a new connection."""
    talk = Talk(url)
    talk.modern("tools/list")  # its answer comes with respelled names
    talk.modern("prompts/list")
    _, refused = talk.modern("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert refused.code == -32020, refused
    talk.fresh()
    talk.initialize()
    talk.legacy("tools/list")
    talk.close()


def _counter_offered(talk: Talk) -> Answer:
    """An initialize the version family answers with a counter-offer (its refusal waits for a 2026 request)."""
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": INFO}
    body = {"jsonrpc": "2.0", "id": next(talk.ids), "method": "initialize", "params": params}
    answer = talk.post(body, {"content-type": "application/json", "accept": ACCEPT})
    assert answer.final is not None and answer.final["result"]["protocolVersion"] == "1999-01-01", answer
    return answer


def counter_offer_correct(url: str) -> None:
    """Cannot use 1999-01-01, so it disconnects; the application then starts over with a new initialize."""
    talk = Talk(url)
    _counter_offered(talk)
    talk.fresh()
    talk.initialize()
    talk.legacy("tools/list")
    talk.close()


def counter_offer_broken(url: str) -> None:
    """HS-10: goes on after a counter-offer it cannot use, as if the server had chosen its version."""
    talk = Talk(url)
    _counter_offered(talk)
    talk.notify("notifications/initialized")
    talk.legacy("tools/list")
    talk.close()


HTTP_SCENARIOS: dict[str, tuple[str, Callable[[str], None]]] = {
    "version-correct": ("version", version_correct),
    "version-broken": ("version", version_broken),
    "session-correct": ("session", session_correct),
    "session-broken": ("session", session_broken),
    "hold-correct": ("hold", hold_correct),
    "hold-broken-initialize": ("hold", hold_broken_initialize),
    "hold-broken-request": ("hold", hold_broken_request),
    "headers-correct": ("headers", headers_correct),
    "headers-broken-refusal": ("headers", headers_broken_refusal),
    "headers-broken-case": ("headers", headers_broken_case),
    "cut-correct": ("cut", cut_correct),
    "cut-broken-modern": ("cut", cut_broken_modern),
    "cut-broken-legacy": ("cut", cut_broken_legacy),
    "version-broken-new-connection": ("version", version_broken_new_connection),
    "version-broken-same-id": ("version", version_broken_same_id),
    "session-broken-carries-on": ("session", session_broken_carries_on),
    "hold-broken-modern-notice": ("hold", hold_broken_modern_notice),
    "headers-broken-fallback": ("headers", headers_broken_fallback),
    "headers-broken-refusal-fallback": ("headers", headers_broken_refusal_fallback),
    "counter-offer-correct": ("version", counter_offer_correct),
    "counter-offer-broken": ("version", counter_offer_broken),
}
"""Scenario -> (the ``--inject`` family its proxy runs with, the client)."""


# -- stdio scenarios ------------------------------------------------------------------------------------
class Lines:
    """A scripted client on a tap's stdin and stdout."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin: IO[bytes] = process.stdin
        self.stdout: IO[bytes] = process.stdout
        self.ids = itertools.count(1)
        self.answered = False

    def send(self, body: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(body).encode() + b"\n")
        self.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None, *, version: str | None = MODERN) -> int:
        ident = next(self.ids)
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if version is not None:
            body["params"] = {**(params or {}), "_meta": _meta(version)}
        elif params is not None:
            body["params"] = params
        self.send(body)
        return ident

    def answer(self, ident: int, wait: float = 5.0, *, startup: bool = True) -> dict[str, Any] | None:
        """The answer to ``ident`` within ``wait`` seconds (lines for other ids are skipped); until the server has
        answered once, waiting also covers its start-up (bounded by :data:`STARTUP_S`): an answer the tap injects
        comes at once, the server's first one only once it has started (``startup=False``: no answer is expected)."""
        if startup and not self.answered:
            wait = max(wait, STARTUP_S)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == ident:
                self.answered = self.answered or not any(mark in line for mark in INJECTED_MARKS)
                return dict(message)
        return None

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(30)  # the tap judges and writes its report first (slow on a busy machine)
        self.stdout.close()


def stdio_version_correct(lines: Lines) -> None:
    ident = lines.request("server/discover")
    refused = lines.answer(ident)
    assert refused is not None and refused["error"]["code"] == -32022, refused
    offered = refused["error"]["data"]["supported"][0]
    params = {"protocolVersion": offered, "capabilities": {}, "clientInfo": INFO}
    ident = lines.request("initialize", params, version=None)
    assert lines.answer(ident) is not None
    lines.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    lines.answer(lines.request("tools/list", version=None))


def stdio_version_broken(lines: Lines) -> None:
    """VER-05: discovers again with the refused version."""
    lines.answer(lines.request("server/discover"))
    lines.answer(lines.request("server/discover"))
    lines.answer(lines.request("tools/list"))


def stdio_hold_correct(lines: Lines) -> None:
    lines.answer(lines.request("server/discover"))
    ident = lines.request("tools/list")
    assert lines.answer(ident, wait=GIVE_UP_S, startup=False) is None
    params = {"requestId": ident, "_meta": _meta()}
    lines.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    lines.answer(lines.request("prompts/list"))


def stdio_hold_broken(lines: Lines) -> None:
    """CAN-13: gives up and asks again without cancelling the first request."""
    lines.answer(lines.request("server/discover"))
    ident = lines.request("tools/list")
    assert lines.answer(ident, wait=GIVE_UP_S, startup=False) is None
    lines.answer(lines.request("tools/list"))


def stdio_hold_broken_loose(lines: Lines) -> None:
    """CAN-13 (and CAN-03): cancels the late request, naming its id as a string."""
    lines.answer(lines.request("server/discover"))
    ident = lines.request("tools/list")
    assert lines.answer(ident, wait=GIVE_UP_S, startup=False) is None
    params = {"requestId": str(ident), "_meta": _meta()}
    lines.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    lines.answer(lines.request("prompts/list"))


def _stdio_counter_offered(lines: Lines) -> None:
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": INFO}
    answer = lines.answer(lines.request("initialize", params, version=None))
    assert answer is not None and answer["result"]["protocolVersion"] == "1999-01-01", answer


def stdio_counter_offer_correct(lines: Lines) -> None:
    """Cannot use 1999-01-01: closes the server's stdin (the test closes the tap after it)."""
    _stdio_counter_offered(lines)


def stdio_counter_offer_broken(lines: Lines) -> None:
    """HS-10: goes on after a counter-offer it cannot use."""
    _stdio_counter_offered(lines)
    lines.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    lines.answer(lines.request("tools/list", version=None), wait=1.0, startup=False)


STDIO_SCENARIOS: dict[str, tuple[str, Callable[[Lines], None]]] = {
    "stdio-version-correct": ("version", stdio_version_correct),
    "stdio-version-broken": ("version", stdio_version_broken),
    "stdio-hold-correct": ("hold", stdio_hold_correct),
    "stdio-hold-broken": ("hold", stdio_hold_broken),
    "stdio-hold-broken-loose": ("hold", stdio_hold_broken_loose),
    "stdio-counter-offer-correct": ("version", stdio_counter_offer_correct),
    "stdio-counter-offer-broken": ("version", stdio_counter_offer_broken),
}


# -- what each scenario shows ------------------------------------------------------------------------------
CAUGHT: list[tuple[str, str, str, str]] = [
    ("version-broken", "clients_retry_refused_versions_from_the_supported_list", "VER-05", "injected"),
    ("session-broken", "clients_reinitialize_after_a_session_404", "HS-22", "injected"),
    ("hold-broken-initialize", "initialize_is_never_cancelled", "CAN-10", "injected"),
    ("hold-broken-request", "clients_cancel_requests_whose_answer_is_late", "CAN-13", "injected"),
    ("headers-broken-refusal", "client_refreshes_tools_after_a_parameter_header_rejection", "HTTP-22", "injected"),
    # the lost session id shows on the client's later requests, which mcp-assay did not touch
    ("headers-broken-case", "clients_send_the_session_id_on_every_request", "HS-19", "passive"),
    ("headers-broken-case", "client_reads_header_names_in_any_case", "HTTP-14", "injected"),
    ("cut-broken-modern", "client_reissues_broken_streams_as_new_requests", "HTTP-36", "injected"),
    ("cut-broken-legacy", "client_waits_the_retry_interval", "HTTP-43", "injected"),
    ("stdio-version-broken", "clients_retry_refused_versions_from_the_supported_list", "VER-05", "injected"),
    ("stdio-hold-broken", "clients_cancel_requests_whose_answer_is_late", "CAN-13", "injected"),
    # the clauses issue 21 added: each client below passed (or was not verified) before
    ("version-broken-new-connection", "clients_retry_refused_versions_from_the_supported_list", "VER-05", "injected"),
    ("version-broken-same-id", "clients_retry_refused_versions_from_the_supported_list", "VER-05", "injected"),
    ("session-broken-carries-on", "clients_reinitialize_after_a_session_404", "HS-22", "injected"),
    ("hold-broken-modern-notice", "clients_cancel_requests_whose_answer_is_late", "CAN-13", "injected"),
    ("headers-broken-fallback", "client_reads_header_names_in_any_case", "HTTP-14", "injected"),
    ("headers-broken-refusal-fallback", "http_clients_stay_modern_after_a_modern_refusal", "VER-13", "injected"),
    ("stdio-hold-broken-loose", "clients_cancel_requests_whose_answer_is_late", "CAN-13", "injected"),
    # the counter-offer no revision defines (a case of its own)
    ("counter-offer-broken", "clients_leave_a_version_they_cannot_use", "HS-10", "injected"),
    ("stdio-counter-offer-broken", "clients_leave_a_version_they_cannot_use", "HS-10", "injected"),
]
"""(scenario, check, requirement, source): the broken client's mistake, caught by the check with its requirement;
``source`` is ``injected`` when the failure names the injected exchange (docs/development.md, "Add a fault")."""


CORRECT: dict[str, list[str]] = {
    "version-correct": [
        "clients_retry_refused_versions_from_the_supported_list", "http_clients_stay_modern_after_a_modern_refusal",
    ],
    "session-correct": ["clients_reinitialize_after_a_session_404"],
    "hold-correct": ["initialize_is_never_cancelled", "clients_cancel_requests_whose_answer_is_late"],
    "headers-correct": [
        "clients_send_the_session_id_on_every_request", "client_reads_header_names_in_any_case",
        "client_refreshes_tools_after_a_parameter_header_rejection",
    ],
    "cut-correct": ["client_reissues_broken_streams_as_new_requests", "client_waits_the_retry_interval"],
    "stdio-version-correct": [
        "clients_retry_refused_versions_from_the_supported_list", "stdio_clients_stay_modern_after_a_modern_answer",
    ],
    "stdio-hold-correct": ["clients_cancel_requests_whose_answer_is_late"],
    "counter-offer-correct": ["clients_leave_a_version_they_cannot_use"],
    "stdio-counter-offer-correct": ["clients_leave_a_version_they_cannot_use"],
}  # fmt: skip
"""Scenario -> the reaction checks a correct client passes (and it fails no client check)."""
