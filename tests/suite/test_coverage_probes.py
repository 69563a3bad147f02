"""The probes that give passive requirements their traffic: logging and progress on the calls the
suite may make, an unknown log level, discover stability, the 2025 handshake's confirmation and two
concurrent subscriptions. Each runs against a scripted server (the broken-suite server with the
behaviour under test added) that gets it right, and against one that gets it wrong."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from mcp_assay.recording.records import read_recording
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.judging import revision_of_items
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome, Side, Verdict
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.model import Exchange
from mcp_assay.wire.traffic import ExchangeLog
from tests.peers.broken_suite.core import LEGACY, SUB, TOOLS, Answer, Server, _error
from tests.suite.scripted import Handler, mock, respond


def probe_name(item: Exchange) -> str | None:
    """The name the recording gives the case that made ``item``."""
    return item.probe.name if item.probe is not None else None


URL = "http://127.0.0.1:9/mcp"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
EXTRA_TOOLS = [
    {"name": "chatty", "description": "Logs and reports progress.", "inputSchema": {"type": "object"}},
    {"name": "touch", "description": "Announces a tools list change.", "inputSchema": {"type": "object"}},
]
CHANGED = "notifications/tools/list_changed"


class CoverageServer(Server):
    """The conformant broken-suite server plus logging, progress, list-changed and listen streams.

    Each keyword switches on one deviation: ``logging=False`` logs without declaring the
    capability (LOG-05), ``ignore_level`` logs below the requested level (LOG-02),
    ``accept_unknown_level`` serves a request with logLevel "verbose" (LOG-04), ``ttl`` and
    ``drifting`` shape discover (VER-09), ``early_request`` sends a request before
    notifications/initialized (HS-09), ``cross_talk`` delivers a list change to the wrong
    subscription (SUB-14), ``list_changed=False`` advertises no listChanged at all; ``paginate``
    splits tools/list in two pages with a fresh cursor per walk, which ``single_use`` honours only
    once (a continuation on a new connection then fails, VER-17); ``versionless_500`` answers a 2025
    request with neither a version header nor a session with 500 (HS-13)."""

    def __init__(
        self,
        *,
        logging: bool = True,
        ignore_level: bool = False,
        accept_unknown_level: bool = False,
        ttl: int = 60_000,
        drifting: bool = False,
        early_request: bool = False,
        cross_talk: bool = False,
        list_changed: bool = True,
        paginate: bool = False,
        single_use: bool = False,
        versionless_500: bool = False,
    ) -> None:
        super().__init__()
        self.logging = logging
        self.ignore_level = ignore_level
        self.accept_unknown_level = accept_unknown_level
        self.ttl = ttl
        self.drifting = drifting
        self.early_request = early_request
        self.cross_talk = cross_talk
        self.list_changed = list_changed
        self.paginate = paginate
        self.single_use = single_use
        self.versionless_500 = versionless_500
        self.cursors: dict[str, bool] = {}
        """Issued cursors, and whether each was used."""
        self.discovers = 0
        self.listens: dict[Any, tuple[dict[str, Any], asyncio.Queue[dict[str, Any]]]] = {}

    # -- 2026 ------------------------------------------------------------------------------------
    def _modern(self, payload: dict[str, Any]) -> Answer:
        meta = (payload.get("params") or {}).get("_meta") or {}
        if self.accept_unknown_level and meta.get(LOG_LEVEL) not in (None, *LEVELS):
            payload = json.loads(json.dumps(payload))
            del payload["params"]["_meta"][LOG_LEVEL]
        return super()._modern(payload)

    def _capabilities(self) -> dict[str, Any]:
        flag = {"listChanged": True} if self.list_changed else {}
        capabilities: dict[str, Any] = {"tools": dict(flag), "prompts": dict(flag), "resources": {}, "completions": {}}
        if self.logging:
            capabilities["logging"] = {}
        return capabilities

    def _m_server_discover(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        self.discovers += 1
        versions = ["2026-07-28"] if not (self.drifting and self.discovers > 1) else ["2026-07-28", "2027-01-01"]
        result = {"supportedVersions": versions, "capabilities": self._capabilities()}
        answer = self._complete(ident, result, cache=True)
        answer.body["result"]["ttlMs"] = self.ttl
        return answer

    def _m_tools_list(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        tools = [*TOOLS, *EXTRA_TOOLS]
        cursor = params.get("cursor")
        if not self.paginate and cursor is None:
            return self._complete(ident, {"tools": tools})
        if cursor is None:
            issued = f"walk-{len(self.cursors) + 1}"
            self.cursors[issued] = False
            return self._complete(ident, {"tools": tools[:2], "nextCursor": issued})
        if cursor not in self.cursors or (self.single_use and self.cursors[cursor]):
            return Answer(0, _error(-32602, "Invalid cursor", ident))
        self.cursors[cursor] = True
        return self._complete(ident, {"tools": tools[2:]})

    def _m_tools_call(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        name = params.get("name")
        if name == "chatty":
            events: list[Any] = []
            token = meta.get("progressToken")
            if token is not None:
                events.append({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": token, "progress": 1, "total": 1}})  # fmt: skip
            wanted = meta.get(LOG_LEVEL)
            if wanted in LEVELS:
                floor = 0 if self.ignore_level else LEVELS.index(wanted)
                for level in ("debug", "info", "error"):
                    if LEVELS.index(level) >= floor:
                        events.append({"jsonrpc": "2.0", "method": "notifications/message",
                                       "params": {"level": level, "data": f"chatty says {level}"}})  # fmt: skip
            done = self._complete(ident, {"content": [{"type": "text", "text": "done"}]})
            return Answer(0, events=[*events, done.body])
        if name == "touch":
            for listen_id, (wanted, queue) in list(self.listens.items()):
                if (wanted.get("toolsListChanged") is True) != self.cross_talk:
                    note = {"jsonrpc": "2.0", "method": CHANGED, "params": {"_meta": {SUB: listen_id}}}
                    queue.put_nowait(note)
            return self._complete(ident, {"content": [{"type": "text", "text": "touched"}]})
        return super()._m_tools_call(ident, params, meta)

    def _m_subscriptions_listen(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        asked = params.get("notifications") if isinstance(params.get("notifications"), dict) else {}
        granted = {key: True for key in ("toolsListChanged", "promptsListChanged") if asked.get(key) is True}
        if not self.list_changed:
            granted = {}
        self.listens[ident] = (granted, asyncio.Queue())
        ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"notifications": granted, "_meta": {SUB: ident}}}  # fmt: skip
        return Answer(0, events=[ack], keep_open=True)

    # -- 2025 ------------------------------------------------------------------------------------
    def _legacy_http(self, payload: Any, headers: dict[str, str]) -> Answer:
        bare = "mcp-session-id" not in headers and "mcp-protocol-version" not in headers
        if self.versionless_500 and bare and isinstance(payload, dict) and payload.get("method") != "initialize":
            return Answer(500, _error(-32603, "Internal error", payload.get("id")))
        answer = super()._legacy_http(payload, headers)
        if self.early_request and isinstance(payload, dict) and payload.get("method") == "initialize":
            request = {"jsonrpc": "2.0", "id": "server-1", "method": "roots/list"}
            answer.events, answer.body = [request, answer.body], None
        return answer


def handler(server: CoverageServer) -> Handler:
    """Answer like ``server``; a listen stream stays open and carries what the server queues for it."""
    plain = respond(server)

    async def handle(request: httpx.Request) -> httpx.Response:
        try:
            payload = json.loads(request.content)
        except ValueError:
            payload = None
        if not (isinstance(payload, dict) and payload.get("method") == "subscriptions/listen"):
            return await plain(request)
        headers = {key.lower(): value for key, value in request.headers.items()}
        answer = server.handle_http(request.method, headers, request.content)
        if not answer.keep_open or answer.events is None:
            return await plain(request)
        _, queue = server.listens[payload.get("id")]

        async def stream(events: list[Any]) -> AsyncIterator[bytes]:
            for event in events:
                yield b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n"
            while True:
                event = await queue.get()
                yield b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n"

        extra = {"content-type": "text/event-stream", "x-accel-buffering": "no"}
        return httpx.Response(200, headers=extra, content=stream(answer.events))

    return handle


def run(spec: SpecSet, server: CoverageServer, **settings: Any) -> Report:
    config = SuiteConfig(
        url=URL,
        **{
            "timeout": 2.0,
            "stream_budget_ms": 400,
            "tool_args": {"echo": {"message": "hi"}, "chatty": {}, "touch": {}},
            "prompt_args": {"greet": {"who": "x"}},
            **settings,
        },
    )
    return asyncio.run(arun(config, spec, mock=mock(handler(server))))


def verdict(report: Report, check: str) -> Verdict:
    return next(item for item in report.results if item.check == check)


def requests(record: Path, probe: str) -> list[dict[str, Any]]:
    """Bodies of the requests a recorded run tagged with ``probe``."""
    log = ExchangeLog()
    read_recording(record, log)
    bodies = []
    for exchange in log.http_exchanges():
        message = exchange.request_message
        if probe_name(exchange) == probe and message is not None:
            bodies.append({"method": message.method, "params": message.params})
    return bodies


# -- logging and progress on the calls the suite may make (2026) ---------------------------------
def test_each_callable_tool_is_called_once_more_asking_for_every_log_message(spec: SpecSet, tmp_path: Path) -> None:
    """Spec-mandated (LOG-02, LOG-03, LOG-05, PROG-03): a server that declares logging and logs at or
    above the requested level, on the call's own stream, passes; the level floor is probed with error."""
    record = tmp_path / "run.jsonl"
    report = run(spec, CoverageServer(), record=str(record))
    logged = requests(record, "call-logged")
    assert sorted(body["params"]["name"] for body in logged) == ["chatty", "echo", "now", "touch"]
    assert all(body["params"]["_meta"][LOG_LEVEL] == "debug" for body in logged)
    assert len({body["params"]["_meta"]["progressToken"] for body in logged}) == 4
    floor = requests(record, "call-log-error")
    assert [(body["params"]["name"], body["params"]["_meta"][LOG_LEVEL]) for body in floor] == [("chatty", "error")]
    assert report.tested[0] == "2026-07-28"
    for check in (
        "log_messages_respect_the_requested_level",
        "log_messages_stay_on_their_request_stream",
        "log_messages_need_the_logging_capability",
        "log_messages_only_for_requests_that_asked",
        "progress_names_a_request_in_flight",
        "request_streams_carry_only_notifications_about_their_request",
    ):
        assert verdict(report, check).outcome is Outcome.PASSED, (check, verdict(report, check).reason)


def test_a_server_that_logs_without_declaring_logging_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (LOG-05): the log messages a logLevel call brings out need the logging capability."""
    report = run(spec, CoverageServer(logging=False))
    found = verdict(report, "log_messages_need_the_logging_capability")
    assert found.outcome is Outcome.FAILED
    assert "do not include logging" in found.reason


def test_a_server_that_logs_below_the_requested_level_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (LOG-02): the call asking for error and above gets debug and info messages."""
    report = run(spec, CoverageServer(ignore_level=True))
    found = verdict(report, "log_messages_respect_the_requested_level")
    assert found.outcome is Outcome.FAILED
    assert "asked for error" in found.reason


def test_when_no_callable_tool_logs_the_level_floor_is_not_probed(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: only the tool that needs no arguments is called (no read-only tool with generated
    arguments) and it logs nothing, so no error-only call is made and the log rules stay not verified."""
    record = tmp_path / "run.jsonl"
    report = run(spec, CoverageServer(), tool_args={}, generate_args_read_only=False, record=str(record))
    assert [body["params"]["name"] for body in requests(record, "call-logged")] == ["now"]
    assert requests(record, "call-log-error") == []
    assert verdict(report, "log_messages_stay_on_their_request_stream").outcome is Outcome.NOT_VERIFIED
    assert verdict(report, "log_messages_respect_the_requested_level").outcome is Outcome.NOT_VERIFIED


# -- an unknown log level (2026) -------------------------------------------------------------------
def test_an_unknown_log_level_is_probed_even_without_the_logging_capability(spec: SpecSet) -> None:
    """Spec-mandated (LOG-04): "verbose" is refused with -32602 by a server that does not declare logging."""
    report = run(spec, CoverageServer(logging=False))
    assert verdict(report, "unknown_log_levels_are_rejected").outcome is Outcome.PASSED


def test_a_server_that_serves_an_unknown_log_level_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (LOG-04): a request with logLevel "verbose" served instead of refused."""
    report = run(spec, CoverageServer(accept_unknown_level=True))
    found = verdict(report, "unknown_log_levels_are_rejected")
    assert found.outcome is Outcome.FAILED
    assert "'verbose'" in found.reason


# -- discover stability (2026) ---------------------------------------------------------------------
def test_a_second_discover_within_the_ttl_is_compared_with_the_first(spec: SpecSet) -> None:
    """Spec-mandated (VER-09): the same supportedVersions within ttlMs passes."""
    report = run(spec, CoverageServer(ttl=60_000))
    assert verdict(report, "discover_versions_hold_for_their_ttl").outcome is Outcome.PASSED


def test_a_discover_that_changes_within_its_ttl_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (VER-09): supportedVersions that change within the first answer's ttlMs."""
    report = run(spec, CoverageServer(drifting=True))
    found = verdict(report, "discover_versions_hold_for_their_ttl")
    assert found.outcome is Outcome.FAILED
    assert "within the 60000 ms" in found.reason


def test_a_discover_with_ttl_zero_leaves_stability_unverified_and_says_why(spec: SpecSet) -> None:
    """Tool-defined: ttlMs 0 promises nothing to compare against; the reason names it."""
    report = run(spec, CoverageServer(ttl=0))
    found = verdict(report, "discover_versions_hold_for_their_ttl")
    assert found.outcome is Outcome.NOT_VERIFIED
    assert "ttlMs 0" in found.reason


# -- the 2025 handshake is confirmed ---------------------------------------------------------------
def test_the_2025_session_is_confirmed_with_initialized_before_other_requests(spec: SpecSet, tmp_path: Path) -> None:
    """Spec-mandated (HS-08, HS-09): the suite sends notifications/initialized first; a server that waits passes."""
    record = tmp_path / "run.jsonl"
    report = run(spec, CoverageServer(), spec_version=LEGACY, record=str(record))
    log = ExchangeLog()
    read_recording(record, log)
    sent = [m.method for m in log.messages() if m.sender is Side.CLIENT and m.kind is not Kind.RESULT]
    assert sent[:3] == ["initialize", "notifications/initialized", "ping"]
    assert report.revision == LEGACY
    assert verdict(report, "servers_wait_for_initialized_before_requests").outcome is Outcome.PASSED
    assert not [note for note in report.notes if note.startswith("harness self-check")]


def test_a_server_request_before_initialized_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (HS-09): roots/list on the initialize stream, before notifications/initialized."""
    report = run(spec, CoverageServer(early_request=True), spec_version=LEGACY)
    found = verdict(report, "servers_wait_for_initialized_before_requests")
    assert found.outcome is Outcome.FAILED
    assert "roots/list" in found.reason


def test_only_the_2026_run_lists_again_since_only_2026_compares_two_listings(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined: TOOL-03/04, PRM-03 and RSRC-03 compare two listings and are 2026-07-28's; a 2025 list may
    depend on its session, so the handshake run lists each kind once (no second session just to list)."""
    record = tmp_path / "run.jsonl"
    run(spec, CoverageServer(), record=str(record))
    log = ExchangeLog()
    read_recording(record, log)
    again = [item for item in log.http_exchanges() if probe_name(item) == "list-again"]
    assert again and all(item.request.headers.get("mcp-session-id") is None for item in again)
    assert {revision for revision, item in revision_of_items(log) if item in again} == {"2026-07-28"}
    assert len(requests(record, "initialize")) == 1  # selection's session is the 2025 run's only one for listing


def test_a_request_without_version_header_or_session_is_served_or_refused(spec: SpecSet) -> None:
    """Spec-mandated (HS-13, A22): the scripted server answers 400 (no session), which A22 accepts."""
    report = run(spec, CoverageServer(), spec_version=LEGACY)
    assert verdict(report, "missing_version_headers_are_tolerated").outcome is Outcome.PASSED


def test_a_request_without_version_header_or_session_answered_500_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (HS-13): neither served nor refused with 400."""
    report = run(spec, CoverageServer(versionless_500=True), spec_version=LEGACY)
    found = verdict(report, "missing_version_headers_are_tolerated")
    assert found.outcome is Outcome.FAILED
    assert "HTTP 500" in found.reason


# -- two concurrent subscriptions (2026) -----------------------------------------------------------
def test_a_list_change_reaches_only_the_subscription_that_asked(spec: SpecSet) -> None:
    """Spec-mandated (SUB-14, SUB-08, SUB-10, SUB-16): touch, called again while two subscriptions listen,
    announces the change on the tools subscription only."""
    report = run(spec, CoverageServer())
    for check in (
        "notifications_reach_only_subscriptions_that_asked",
        "listen_notifications_carry_the_subscription_id",
        "change_notifications_travel_only_on_listen_streams",
        "list_changed_needs_the_list_changed_capability",
        "listen_streams_carry_only_requested_types",
    ):
        assert verdict(report, check).outcome is Outcome.PASSED, (check, verdict(report, check).reason)


def test_a_list_change_sent_to_the_wrong_subscription_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (SUB-14): the change goes to the subscription that asked for prompt changes."""
    report = run(spec, CoverageServer(cross_talk=True))
    found = verdict(report, "notifications_reach_only_subscriptions_that_asked")
    assert found.outcome is Outcome.FAILED
    assert "did not ask for it" in found.reason


def test_without_list_changed_or_subscribe_no_concurrent_subscriptions_are_opened(spec: SpecSet) -> None:
    """Tool-defined: nothing could reach either subscription, so SUB-14 is not verified and says why."""
    report = run(spec, CoverageServer(list_changed=False))
    found = verdict(report, "notifications_reach_only_subscriptions_that_asked")
    assert found.outcome is Outcome.NOT_VERIFIED
    assert "neither listChanged nor resources.subscribe" in found.reason


# -- a continuation on a new connection (2026 HTTP) -------------------------------------------------
def test_an_issued_cursor_is_followed_on_a_new_connection(spec: SpecSet, tmp_path: Path) -> None:
    """Spec-mandated (VER-17): the first walk's cursor, sent on another connection, is served."""
    record = tmp_path / "run.jsonl"
    report = run(spec, CoverageServer(paginate=True), record=str(record))
    continued = requests(record, "cursor-new-connection")
    assert len(continued) == 1 and continued[0]["params"]["cursor"].startswith("walk-")
    assert verdict(report, "continuations_work_on_a_new_connection").outcome is Outcome.PASSED


def test_a_continuation_refused_on_a_new_connection_is_failed(spec: SpecSet) -> None:
    """Spec-mandated (VER-17): a cursor the server no longer honours there gets an error."""
    report = run(spec, CoverageServer(paginate=True, single_use=True))
    found = verdict(report, "continuations_work_on_a_new_connection")
    assert found.outcome is Outcome.FAILED
    assert "new connection" in found.reason


# -- --spec-version and removed initialize ---------------------------------------------------------
def test_with_spec_version_the_removed_initialize_case_is_left_out(spec: SpecSet, tmp_path: Path) -> None:
    """Tool-defined (A21): a forced 2026-07-28 run never asked initialize, so it does not know whether the
    server is modern-only and sends no initialize as a removed method."""
    record = tmp_path / "run.jsonl"
    report = run(spec, CoverageServer(), spec_version="2026-07-28", record=str(record))
    assert "initialize" not in {body["method"] for body in requests(record, "removed-method")}
    removed = verdict(report, "removed_methods_are_unknown_to_modern_requests")
    assert removed.outcome is Outcome.PASSED
    assert "3 removed methods" in removed.reason
