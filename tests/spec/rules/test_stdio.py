"""stdio (STDIO-): framing, clean pipes, request-scoped notifications and shutdown, hand-built and real."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Outcome, Severity, Side
from mcp_assay.wire.model import Observation, ProcessExit, StdioLine
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import LEGACY, as_probe, judge, log_of, request_body, result_body, stdio, tick
from tests.peers.process import sdk_server_command

_ids = itertools.count(1)
CLIENT, SERVER = Side.CLIENT, Side.SERVER
INVALID = {"name": "probe", "invalid": True}
DONE = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}


def line(sender: Side, raw: bytes | str, *, connection: str = "conn-1", probe: Any = None) -> StdioLine:
    data = raw.encode() if isinstance(raw, str) else raw
    return StdioLine.build(
        id=f"l{next(_ids)}", connection=connection, sender=sender, time=tick(), raw=data, probe=as_probe(probe)
    )


def pretty(sender: Side, body: Any, **kwargs: Any) -> list[StdioLine]:
    """``body`` pretty-printed, one StdioLine per output line (what ``json.dumps(indent=2)`` + print gives)."""
    return [line(sender, text + "\n", **kwargs) for text in json.dumps(body, indent=2).splitlines()]


def exit_record(**fields: Any) -> ProcessExit:
    defaults: dict[str, Any] = {"id": f"p{next(_ids)}", "connection": "conn-1", "time": tick(), "code": 0}
    return ProcessExit(**{**defaults, **fields})


def outcome(spec: SpecSet, check: str, *items: Any, **settings: Any) -> Outcome:
    return judge(log_of(*items), spec, check, **settings).outcome


def listing(ident: Any = 1) -> list[StdioLine]:
    return [stdio(CLIENT, request_body("tools/list", ident)), stdio(SERVER, result_body(DONE, ident))]


# -- STDIO-01: one message per line --------------------------------------------------------------------
def test_one_line_messages_pass_stdio_01(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-01)."""
    assert outcome(spec, "stdio_messages_take_exactly_one_line", listing()) is Outcome.PASSED


def test_pretty_printed_server_output_fails_stdio_01_once_per_message(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-01): a line that only parses together with the next lines is a split message."""
    split = pretty(SERVER, result_body(DONE, 1))
    verdict = judge(
        log_of(stdio(CLIENT, request_body("tools/list", 1)), split), spec, "stdio_messages_take_exactly_one_line"
    )
    assert verdict.outcome is Outcome.FAILED
    assert verdict.violations == 1
    assert f"over {len(split)} lines" in verdict.reason


def test_a_raw_newline_inside_a_string_splits_the_message(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-01): an unescaped newline inside a JSON string is still a raw newline."""
    split = [line(CLIENT, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"say","arguments":{"t":"a\n'),
             line(CLIENT, 'b"}}}\n')]  # fmt: skip
    assert outcome(spec, "stdio_messages_take_exactly_one_line", split) is Outcome.FAILED


def test_framing_rule_is_not_applicable_to_http_traffic(spec: SpecSet) -> None:
    """Tool-defined."""
    from tests.factories import modern_call

    assert outcome(spec, "stdio_messages_take_exactly_one_line", modern_call("tools/list", {}, DONE)) is (
        Outcome.NOT_APPLICABLE
    )


# -- STDIO-02 / STDIO-03: nothing but messages ---------------------------------------------------------
def test_a_banner_on_stdout_is_a_named_stdio_02_violation(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-02): the finding names the requirement and quotes the banner."""
    banner = line(SERVER, "Weather MCP server v2.1 listening on stdio\n")
    verdict = judge(log_of(banner, listing()), spec, "server_stdout_carries_only_mcp_messages")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.requirements == ("STDIO-02",)
    assert "Weather MCP server v2.1" in verdict.reason
    assert verdict.severity is Severity.MUST


def test_blank_and_partial_lines_on_stdout_fail_stdio_02(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-02)."""
    blank = judge(log_of(listing(), line(SERVER, "\n")), spec, "server_stdout_carries_only_mcp_messages")
    assert blank.outcome is Outcome.FAILED and "blank" in blank.reason
    cut = judge(log_of(listing(), line(SERVER, '{"jsonrpc":"2.0","id":2,"res')), spec,
                "server_stdout_carries_only_mcp_messages")  # fmt: skip
    assert cut.outcome is Outcome.FAILED and "incomplete" in cut.reason


def test_clean_stdout_passes_and_a_client_only_capture_is_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-02)."""
    assert outcome(spec, "server_stdout_carries_only_mcp_messages", listing()) is Outcome.PASSED
    client_only = stdio(CLIENT, request_body("tools/list", 1))
    assert outcome(spec, "server_stdout_carries_only_mcp_messages", client_only) is Outcome.NOT_VERIFIED


def test_pretty_printing_is_reported_once_under_stdio_01_not_again_as_garbage(spec: SpecSet) -> None:
    """Tool-defined: fragments of one split message are STDIO-01's finding only."""
    split = pretty(SERVER, result_body(DONE, 1))
    verdict = judge(log_of(stdio(CLIENT, request_body("tools/list", 1)), split), spec,
                    "server_stdout_carries_only_mcp_messages")  # fmt: skip
    assert verdict.outcome is Outcome.NOT_VERIFIED


def test_client_garbage_on_stdin_fails_stdio_03_unless_a_probe_sent_it(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-03)."""
    assert outcome(spec, "client_stdin_carries_only_mcp_messages", listing()) is Outcome.PASSED
    chatter = line(CLIENT, "hello?\n")
    assert outcome(spec, "client_stdin_carries_only_mcp_messages", chatter, listing()) is Outcome.FAILED
    probe = line(CLIENT, "not json\n", probe=INVALID)
    assert outcome(spec, "client_stdin_carries_only_mcp_messages", probe, listing()) is Outcome.PASSED
    server_only = stdio(SERVER, {"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
    assert outcome(spec, "client_stdin_carries_only_mcp_messages", server_only) is Outcome.NOT_VERIFIED


def test_stderr_text_is_never_protocol_traffic(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-11): stderr may carry anything; no rule reads it as a message or an error."""
    noise = [
        Observation(id=f"o{n}", time=tick(), kind="stderr", connection="conn-1", data={"text": text})
        for n, text in enumerate(["ERROR: something failed", '{"jsonrpc": "2.0", "id": 1', "Traceback ..."])
    ]
    from mcp_assay.spec import rules  # noqa: F401

    mine = [check for check in REGISTRY.values() if check.func.__module__.endswith(".stdio")]
    verdicts = evaluate(log_of(listing(), noise), spec, checks=mine)
    assert [v.check for v in verdicts if v.outcome is Outcome.FAILED] == []


# -- STDIO-04 / STDIO-05 / STDIO-06 ------------------------------------------------------------------------
def test_batches_on_stdio_fail_stdio_04(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-04)."""
    assert outcome(spec, "stdio_lines_hold_one_message_not_a_batch", listing()) is Outcome.PASSED
    batch = stdio(CLIENT, [request_body("tools/list", 1), request_body("prompts/list", 2)])
    verdict = judge(log_of(batch), spec, "stdio_lines_hold_one_message_not_a_batch")
    assert verdict.outcome is Outcome.FAILED and "array of 2" in verdict.reason
    assert outcome(spec, "stdio_lines_hold_one_message_not_a_batch", line(SERVER, "boot\n")) is Outcome.NOT_VERIFIED


def test_a_2026_stdio_server_writes_no_requests(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-05)."""
    assert outcome(spec, "stdio_servers_write_no_requests", listing()) is Outcome.PASSED
    sampling = stdio(SERVER, {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}})
    verdict = judge(log_of(listing(), sampling), spec, "stdio_servers_write_no_requests")
    assert verdict.outcome is Outcome.FAILED and "MRTR" in verdict.reason


def _legacy_connection() -> list[StdioLine]:
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    answer = {"protocolVersion": LEGACY, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    return [stdio(CLIENT, init, connection="old"), stdio(SERVER, result_body(answer, 0), connection="old")]


def test_2025_stdio_servers_may_send_requests(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-05 is 2026 only): 2025 servers may ask for roots or sampling."""
    roots = stdio(SERVER, {"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}, connection="old")
    assert outcome(spec, "stdio_servers_write_no_requests", _legacy_connection(), roots) is Outcome.NOT_APPLICABLE


def test_a_2026_stdio_client_writes_no_responses(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-06)."""
    assert outcome(spec, "stdio_clients_write_no_responses", listing()) is Outcome.PASSED
    answer = stdio(CLIENT, result_body({"roots": []}, "r1"))
    assert outcome(spec, "stdio_clients_write_no_responses", listing(), answer) is Outcome.FAILED
    assert outcome(spec, "stdio_clients_write_no_responses", _legacy_connection()) is Outcome.NOT_APPLICABLE


# -- STDIO-07: request-scoped notifications ------------------------------------------------------------------
def _call(ident: Any, **meta: Any) -> StdioLine:
    return stdio(CLIENT, request_body("tools/call", ident, {"name": "slow", "arguments": {}, "_meta": meta}))


def _notify(method: str, params: dict[str, Any]) -> StdioLine:
    return stdio(SERVER, {"jsonrpc": "2.0", "method": method, "params": params})


def test_progress_and_logs_of_in_flight_requests_pass_stdio_07(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-07)."""
    items = [
        _call(1, progressToken="t1", **{"io.modelcontextprotocol/logLevel": "info"}),
        _notify("notifications/progress", {"progressToken": "t1", "progress": 1}),
        _notify("notifications/message", {"level": "info", "data": "half way"}),
        stdio(SERVER, result_body({"resultType": "complete", "content": []}, 1)),
    ]
    assert outcome(spec, "stdio_notifications_belong_to_a_request_or_listen", items) is Outcome.PASSED


def test_notifications_outside_any_request_or_listen_fail_stdio_07(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-07, inferred): severity lowered to SHOULD."""
    items = [
        _call(1, progressToken="t1"),
        stdio(SERVER, result_body({"resultType": "complete", "content": []}, 1)),
        _notify("notifications/progress", {"progressToken": "t1", "progress": 2}),
        _notify("notifications/tools/list_changed", {}),
    ]
    verdict = judge(log_of(items), spec, "stdio_notifications_belong_to_a_request_or_listen")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.violations == 2
    assert verdict.severity is Severity.SHOULD


def test_listen_notifications_and_listen_ending_cancels_pass_stdio_07(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-07): tagged with an open listen's id, or a cancel that ends it."""
    sub = "io.modelcontextprotocol/subscriptionId"
    items = [
        stdio(CLIENT, request_body("subscriptions/listen", "L1", {"notifications": {"toolsListChanged": True}})),
        _notify("notifications/subscriptions/acknowledged", {"notifications": {}, "_meta": {sub: "L1"}}),
        _notify("notifications/tools/list_changed", {"_meta": {sub: "L1"}}),
        _notify("notifications/cancelled", {"requestId": "L1"}),
    ]
    assert outcome(spec, "stdio_notifications_belong_to_a_request_or_listen", items) is Outcome.PASSED
    late = _notify("notifications/tools/list_changed", {"_meta": {sub: "L1"}})
    assert outcome(spec, "stdio_notifications_belong_to_a_request_or_listen", items, late) is Outcome.FAILED


def test_stdio_07_is_not_verified_without_server_notifications(spec: SpecSet) -> None:
    """Tool-defined."""
    assert outcome(spec, "stdio_notifications_belong_to_a_request_or_listen", listing()) is Outcome.NOT_VERIFIED


# -- STDIO-08 / STDIO-09 / STDIO-10: process lifetime --------------------------------------------------------
def test_a_server_exiting_soon_after_eof_passes_stdio_08(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-08, SHOULD)."""
    prompt = exit_record(stdin_closed_at=100.0, time=100.4)
    assert outcome(spec, "stdio_servers_exit_promptly_after_stdin_closes", prompt) is Outcome.PASSED


def test_a_server_lingering_past_the_limit_fails_stdio_08_and_the_limit_is_a_setting(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-08): 5 s by default, configurable as stdio_exit_limit_s."""
    slow = exit_record(stdin_closed_at=100.0, time=107.0, signals=("SIGTERM",))
    verdict = judge(log_of(slow), spec, "stdio_servers_exit_promptly_after_stdin_closes")
    assert verdict.outcome is Outcome.FAILED and verdict.severity is Severity.SHOULD
    assert "7.0 s" in verdict.reason
    unforced = exit_record(stdin_closed_at=100.0, time=107.0)
    assert outcome(spec, "stdio_servers_exit_promptly_after_stdin_closes", unforced) is Outcome.FAILED
    assert outcome(spec, "stdio_servers_exit_promptly_after_stdin_closes", unforced, stdio_exit_limit_s=10) is (
        Outcome.PASSED
    )


def test_an_early_signal_leaves_stdio_08_not_verified(spec: SpecSet) -> None:
    """Tool-defined: a client that escalated after 1 s hides whether the server would have exited."""
    hurried = exit_record(stdin_closed_at=100.0, time=101.0, signals=("SIGTERM",))
    assert outcome(spec, "stdio_servers_exit_promptly_after_stdin_closes", hurried) is Outcome.NOT_VERIFIED
    crashed = exit_record(code=1)
    assert outcome(spec, "stdio_servers_exit_promptly_after_stdin_closes", crashed) is Outcome.NOT_VERIFIED


def test_clients_close_stdin_before_signalling(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-09, SHOULD)."""
    polite = exit_record(stdin_closed_at=100.0, time=100.2)
    escalated = exit_record(stdin_closed_at=100.0, time=106.0, signals=("TERM", "KILL"))
    assert outcome(spec, "clients_close_stdin_before_signalling", polite, escalated) is Outcome.PASSED
    rude = exit_record(time=100.0, signals=("SIGTERM",))
    verdict = judge(log_of(rude), spec, "clients_close_stdin_before_signalling")
    assert verdict.outcome is Outcome.FAILED and "without first closing" in verdict.reason
    assert outcome(spec, "clients_close_stdin_before_signalling", exit_record(code=1)) is Outcome.NOT_VERIFIED


def test_2025_clients_try_sigterm_before_sigkill(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-09, 2025): SIGTERM, then SIGKILL."""
    killed = exit_record(connection="old", stdin_closed_at=100.0, time=106.0, signals=("SIGKILL",))
    verdict = judge(log_of(_legacy_connection(), killed), spec, "clients_close_stdin_before_signalling")
    assert verdict.outcome is Outcome.FAILED and "SIGTERM" in verdict.reason


def test_clients_restart_a_dead_server_and_resend_in_flight_work(spec: SpecSet) -> None:
    """Spec-mandated (STDIO-10, SHOULD)."""
    call = _call(1)
    died = exit_record(code=137)
    again = stdio(CLIENT, request_body("tools/call", 2, {"name": "slow", "arguments": {}}), connection="conn-2")
    assert outcome(spec, "clients_restart_dead_servers_and_resend", listing(), call, died, again) is Outcome.PASSED
    other = stdio(CLIENT, request_body("tools/list", 3), connection="conn-2")
    verdict = judge(log_of(listing(), call, died, other), spec, "clients_restart_dead_servers_and_resend")
    assert verdict.outcome is Outcome.FAILED and "not re-sent" in verdict.reason
    assert outcome(spec, "clients_restart_dead_servers_and_resend", listing(), call, died) is Outcome.NOT_VERIFIED


# -- a fake server that greets on stdout -----------------------------------------------------------------------
FAKE_SERVER = r"""
import json, sys
print("FakeServer 0.1 ready", flush=True)
for raw in sys.stdin:
    message = json.loads(raw)
    if "id" in message:
        result = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


class StdioSession:
    """Drive a stdio server process line by line, recording what each side wrote as StdioLines."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: list[StdioLine] = []
        self.stderr: list[Observation] = []
        self._lock = threading.Lock()
        self._readers = [
            threading.Thread(target=self._pump, args=(self.process.stdout, SERVER), daemon=True),
            threading.Thread(target=self._pump_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        self.stdin_closed_at: float | None = None

    def _record(self, sender: Side, raw: bytes) -> None:
        with self._lock:
            self.lines.append(
                StdioLine.build(id=f"s{len(self.lines)}", connection="proc", sender=sender, time=time.time(), raw=raw)
            )

    def _pump(self, pipe: Any, sender: Side) -> None:
        for raw in iter(pipe.readline, b""):
            self._record(sender, raw)

    def _pump_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in iter(self.process.stderr.readline, b""):
            self.stderr.append(
                Observation(
                    id=f"e{len(self.stderr)}",
                    time=time.time(),
                    kind="stderr",
                    connection="proc",
                    data={"text": raw.decode("utf-8", "replace")},
                )  # fmt: skip
            )

    def send(self, body: Any) -> None:
        raw = (json.dumps(body) + "\n").encode()
        assert self.process.stdin is not None
        self._record(CLIENT, raw)
        self.process.stdin.write(raw)
        self.process.stdin.flush()

    def wait_for(self, ident: Any, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if any(ln.sender is SERVER and ln.message.id == ident for ln in self.lines):
                    return
            time.sleep(0.01)
        raise TimeoutError(f"no answer to id {ident} within {timeout} s")

    def close(self, timeout: float = 10.0) -> ProcessExit:
        assert self.process.stdin is not None
        self.stdin_closed_at = time.time()
        self.process.stdin.close()
        signals: tuple[str, ...] = ()
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout=5)
            signals = ("SIGKILL",)
        ended = time.time()
        for reader in self._readers:
            reader.join(timeout=5)
        self.release()
        return ProcessExit(
            id="exit", connection="proc", time=ended, code=code, stdin_closed_at=self.stdin_closed_at, signals=signals
        )

    def release(self) -> None:
        """Stop the process if it still runs and close every pipe."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()

    def log(self, exit_: ProcessExit | None = None) -> ExchangeLog:
        items: list[Any] = sorted(self.lines, key=lambda ln: ln.time)
        return log_of(items, self.stderr, *([exit_] if exit_ else []))


@pytest.fixture()
def fake_server() -> Iterator[StdioSession]:
    session = StdioSession([sys.executable, "-c", FAKE_SERVER])
    try:
        yield session
    finally:
        session.release()


def test_a_real_process_printing_a_banner_is_caught_by_stdio_02(spec: SpecSet, fake_server: StdioSession) -> None:
    """Spec-mandated (STDIO-02): the banner line of a real subprocess is a named violation, not a crash."""
    fake_server.send(request_body("tools/list", 1))
    fake_server.wait_for(1, timeout=10)
    exit_ = fake_server.close()
    log = fake_server.log(exit_)
    verdict = judge(log, spec, "server_stdout_carries_only_mcp_messages")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.requirements == ("STDIO-02",)
    assert "FakeServer 0.1 ready" in verdict.reason
    assert verdict.evidence[0].summary.startswith("stdio server → client")
    assert judge(log, spec, "stdio_messages_take_exactly_one_line").outcome is Outcome.PASSED
    assert judge(log, spec, "stdio_servers_exit_promptly_after_stdin_closes").outcome is Outcome.PASSED


EXPECTED_TO_PASS = (
    "stdio_messages_take_exactly_one_line",
    "server_stdout_carries_only_mcp_messages",
    "client_stdin_carries_only_mcp_messages",
    "stdio_lines_hold_one_message_not_a_batch",
    "stdio_notifications_belong_to_a_request_or_listen",
    "stdio_servers_exit_promptly_after_stdin_closes",
)


@pytest.mark.e2e
def test_the_sdk_stdio_server_passes_every_stdio_rule(spec: SpecSet) -> None:
    """Tool-defined end-to-end: the official Python SDK server over stdio, both eras on two connections."""
    session = StdioSession(sdk_server_command())
    try:
        session.send(request_body("server/discover", 1))
        session.wait_for(1)
        session.send(request_body("tools/list", 2))
        session.send(request_body("tools/call", 3, {"name": "progress_tool", "arguments": {"steps": 2},
                                                    "_meta": {"progressToken": "p3"}}))  # fmt: skip
        session.wait_for(2)
        session.wait_for(3)
        exit_ = session.close()
    finally:
        session.release()
    log = session.log(exit_)
    assert len(log.stdio_lines()) >= 6
    from mcp_assay.spec import rules  # noqa: F401

    mine = [check for check in REGISTRY.values() if check.func.__module__.endswith(".stdio")]
    verdicts = {v.check: v for v in evaluate(log, spec, checks=mine)}
    failures = {name: v.reason for name, v in verdicts.items() if v.outcome is Outcome.FAILED}
    assert failures == {}
    for name in EXPECTED_TO_PASS:
        assert verdicts[name].outcome is Outcome.PASSED, (name, verdicts[name].reason)
    everything = evaluate(log, spec)
    assert not [v.check for v in everything if v.outcome is Outcome.FAILED and v.area == "stdio"]


def test_odd_lines_never_break_a_stdio_rule(spec: SpecSet) -> None:
    """Tool-defined: odd lines and exits become findings or silence, never a crashed check."""
    items: list[Any] = [
        line(SERVER, b"\xff\xfe\n"),
        line(CLIENT, "{\n"),
        line(CLIENT, "[\n"),
        line(SERVER, '{"jsonrpc":"2.0","method":"notifications/progress","params":[]}\n'),
        line(SERVER, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}\n'),
        line(CLIENT, '{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"_meta":7}}\n'),
        stdio(CLIENT, request_body("tools/list", 1)),
        exit_record(stdin_closed_at=float("nan"), time=1.0, signals=("", "9")),
        exit_record(code=None),
    ]
    from mcp_assay.spec import rules  # noqa: F401

    mine = [check for check in REGISTRY.values() if check.func.__module__.endswith(".stdio")]
    verdicts = evaluate(log_of(items), spec, checks=mine, settings={"stdio_exit_limit_s": "soon"})
    crashed = [f"{v.check}: {v.reason}" for v in verdicts if v.reason.startswith("the check itself failed")]
    assert crashed == []
