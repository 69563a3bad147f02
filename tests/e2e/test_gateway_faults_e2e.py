"""Every seeded fault of the test gateway (``tests.peers.gateway``) is real: each test shows on the wire what the
faithful build does and what the fault changes, with the witness server behind the gateway reporting what
reached the upstream. mcp-assay judges nothing here: these tests prove the peers that its gateway tests use.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.peers.gateway.faults import FAULTS
from tests.peers.gateway.probe import LEGACY, MODERN, Answer, Probe
from tests.peers.process import RunningServer
from tests.peers.topology import gateway, gateway_chain, upstream_server
from tests.peers.witness_server import BLOB, GATE_BOUND_S, blob_base64

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]

FOREIGN = "https://mcp-assay.invalid"


@pytest.fixture(scope="module")
def upstream() -> Iterator[RunningServer]:
    with upstream_server("witness") as server:
        yield server


@pytest.fixture(scope="module")
def faithful(upstream: RunningServer) -> Iterator[str]:
    with gateway(upstream.url) as running:
        yield running.url


@pytest.fixture(scope="module")
def faithful_prefixed(upstream: RunningServer) -> Iterator[str]:
    with gateway(upstream.url, prefix="up_") as running:
        yield running.url


@contextmanager
def faulty(upstream: RunningServer, *names: str, prefix: str = "", log: Path | None = None) -> Iterator[str]:
    with gateway(upstream.url, faults=names, prefix=prefix, log=log) as running:
        yield running.url


def tag() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def witnessed(answer: Answer) -> dict[str, Any]:
    structured: dict[str, Any] = answer.result["structuredContent"]
    return structured


def test_every_fault_is_listed_with_what_it_does() -> None:
    """The registry is the list the report names faults by: 14 the issue names, each with its summary."""
    assert len(FAULTS) >= 14
    for fault in FAULTS.values():
        assert fault.summary and fault.hooks, fault.name


# -- notifications during a call ------------------------------------------------------------------------------


def test_strip_notifications_ends_the_stream_at_the_response(upstream: RunningServer, faithful: str) -> None:
    call = {"name": "progress_tool", "arguments": {"steps": 3}}
    with Probe(faithful) as probe:
        relayed = probe.modern("tools/call", call, progress="p-1")
    assert relayed.content_type == "text/event-stream"
    assert len(relayed.notifications("notifications/progress")) == 3
    assert relayed.result["content"][0]["text"] == "did 3 steps"
    with faulty(upstream, "strip-notifications") as url, Probe(url) as probe:
        stripped = probe.modern("tools/call", call, progress="p-1")
        legacy = Probe(url)
        legacy.initialize()
        stripped_legacy = legacy.legacy("tools/call", {"name": "chatty", "arguments": {}})
        legacy.close()
    assert stripped.content_type == "application/json" and stripped.notifications() == []
    assert stripped.result["content"][0]["text"] == "did 3 steps"
    assert stripped_legacy.notifications() == [] and stripped_legacy.result["content"][0]["text"] == "done"


def _gated_call(url: str) -> tuple[Answer, list[float]]:
    """Call ``gate`` and release it from a second client as soon as its first progress notification arrives."""
    key = tag()
    seen_at: list[float] = []
    releaser = Probe(url)

    def on_message(message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/progress":
            seen_at.append(time.monotonic())
            if len(seen_at) == 1:
                releaser.modern("tools/call", {"name": "release", "arguments": {"key": key}})

    with Probe(url) as probe:
        answer = probe.modern(
            "tools/call", {"name": "gate", "arguments": {"key": key}}, progress="g", on_message=on_message
        )
    releaser.close()
    return answer, seen_at


def test_hold_notifications_delivers_them_only_with_the_response(upstream: RunningServer, faithful: str) -> None:
    """The gate opens only when the client has seen the call's first progress notification: relayed, the call is
    released; held, the notification cannot arrive before the call ends, so the gate times out."""
    answer, _ = _gated_call(faithful)
    assert answer.result["content"][0]["text"].endswith("released")
    with faulty(upstream, "hold-notifications") as url:
        held, seen_at = _gated_call(url)
    assert held.result["content"][0]["text"].endswith("timed out"), f"gate bound {GATE_BOUND_S}s"
    assert [m.get("method") for m in held.messages] == ["notifications/progress", "notifications/progress", None]


def test_progress_token_unmapped_shows_the_gateways_own_token(upstream: RunningServer, faithful: str) -> None:
    call = {"name": "progress_tool", "arguments": {"steps": 2}}
    with Probe(faithful) as probe:
        tokens = {
            m["params"]["progressToken"] for m in probe.modern("tools/call", call, progress="mine").notifications()
        }
    assert tokens == {"mine"}
    with faulty(upstream, "progress-token-unmapped") as url, Probe(url) as probe:
        answer = probe.modern("tools/call", call, progress="mine")
    tokens = {m["params"]["progressToken"] for m in answer.notifications("notifications/progress")}
    assert len(tokens) == 1 and tokens != {"mine"} and next(iter(tokens)).startswith("gw-progress-")


def _listen_ids(url: str) -> list[Any]:
    """Listen for tools list-changed as "L1", touch the tools once acknowledged: the subscription ids of the events."""
    toucher = Probe(url)

    def on_message(message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/subscriptions/acknowledged":
            toucher.modern("tools/call", {"name": "touch_tools", "arguments": {}})

    with Probe(url) as probe:
        filters = {"notifications": {"toolsListChanged": True}}
        answer = probe.modern("subscriptions/listen", filters, ident="L1", on_message=on_message, give_up=1.5)
    toucher.close()
    methods = [m.get("method") for m in answer.messages]
    assert methods[:2] == ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"], methods
    return [m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for m in answer.messages[:2]]


def test_subscription_id_unmapped_shows_the_gateways_listen_id(upstream: RunningServer, faithful: str) -> None:
    assert _listen_ids(faithful) == ["L1", "L1"]
    with faulty(upstream, "subscription-id-unmapped") as url:
        ids = _listen_ids(url)
    assert ids[0] == ids[1] and ids[0] != "L1" and int(ids[0]) >= 1001


# -- cancellation ---------------------------------------------------------------------------------------------


DELAY_MS = 1500
"""How long a tracked write sleeps before it lands: longer than any wait for a cancellation to cross the gateway."""


def _call_names(upstream_url: str, tool: str) -> list[str]:
    """A list tool's answer, asked of the upstream directly (not through the gateway under test)."""
    with Probe(upstream_url) as probe:
        result: list[str] = probe.modern("tools/call", {"name": tool, "arguments": {}}).result["structuredContent"][
            "result"
        ]
        return result


def _wait_started(upstream_url: str, name: str) -> None:
    deadline = time.monotonic() + 20
    while name not in _call_names(upstream_url, "started"):
        assert time.monotonic() < deadline, f"{name} never started upstream"
        time.sleep(0.05)


def _landed(upstream_url: str, name: str, expected: bool) -> bool:
    """Whether the write landed: awaited (bounded) where it should, given its full delay and more where not."""
    deadline = time.monotonic() + (15 if expected else DELAY_MS / 1000 + 1.0)
    while time.monotonic() < deadline:
        if name in _call_names(upstream_url, "get_writes") and expected:
            return True
        time.sleep(0.1)
    return name in _call_names(upstream_url, "get_writes")


def _legacy_cancel(url: str, upstream_url: str) -> tuple[Answer, str]:
    """A 2025 call, cancelled by notice once it runs upstream, its stream kept open for whatever answer comes."""
    name = tag()
    done: dict[str, Answer] = {}
    call = {"name": "tracked_write", "arguments": {"tag": name, "delay_ms": DELAY_MS}}
    with Probe(url) as probe, Probe(url) as caller:
        probe.initialize()
        caller.session, caller.version = probe.session, probe.version
        worker = threading.Thread(target=lambda: done.setdefault("call", caller.legacy("tools/call", call, ident=5)))
        worker.start()
        _wait_started(upstream_url, name)
        assert probe.notify("notifications/cancelled", {"requestId": 5, "reason": "test"}).status == 202
        worker.join(20)
    return done["call"], name


def test_cancel_client_id_cancels_nothing_upstream(upstream: RunningServer, faithful: str, tmp_path: Path) -> None:
    call, name = _legacy_cancel(faithful, upstream.url)
    assert call.code == -32800 and not _landed(upstream.url, name, False)  # cancelled upstream: no write
    log = tmp_path / "gateway.jsonl"
    with faulty(upstream, "cancel-client-id", log=log) as url:
        call, name = _legacy_cancel(url, upstream.url)
    assert call.result["content"][0]["text"] == f"wrote {name}" and _landed(upstream.url, name, True)
    events = [line for line in _log(log) if line["event"] == "cancel"]
    assert events and events[0]["forwarded"] == 5 and events[0]["back_id"] != 5


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _modern_give_up(url: str) -> str:
    """A 2026 call the client abandons by closing its stream (the 2026 cancellation on HTTP): whenever the gateway
    learns of it, the upstream has not finished (its write waits DELAY_MS)."""
    name = tag()
    call = {"name": "tracked_write", "arguments": {"tag": name, "delay_ms": DELAY_MS}}
    with Probe(url) as probe:
        assert probe.modern("tools/call", call, give_up=0.5).gave_up
    return name


def test_drop_cancel_lets_the_abandoned_work_land(upstream: RunningServer, faithful: str) -> None:
    assert not _landed(upstream.url, _modern_give_up(faithful), False)
    call, name = _legacy_cancel(faithful, upstream.url)
    assert call.code == -32800 and not _landed(upstream.url, name, False)
    with faulty(upstream, "drop-cancel") as url:
        assert _landed(upstream.url, _modern_give_up(url), True)
        call, name = _legacy_cancel(url, upstream.url)
    assert call.result["content"][0]["text"] == f"wrote {name}" and _landed(upstream.url, name, True)


# -- what the client receives ---------------------------------------------------------------------------------


def test_drop_cursor_hides_the_later_pages(upstream: RunningServer, faithful: str) -> None:
    with Probe(faithful) as probe:
        first = probe.modern("tools/list").result
        names = [tool["name"] for tool in first["tools"]]
        cursor = first.get("nextCursor")
        while cursor:
            page = probe.modern("tools/list", {"cursor": cursor}).result
            names += [tool["name"] for tool in page["tools"]]
            cursor = page.get("nextCursor")
    assert "witness" in names and len(first["tools"]) < len(names)
    with faulty(upstream, "drop-cursor") as url, Probe(url) as probe:
        cut = probe.modern("tools/list").result
        resources = probe.modern("resources/list").result
    assert "nextCursor" not in cut and "witness" not in [tool["name"] for tool in cut["tools"]]
    assert "nextCursor" not in resources


def test_rewrite_error_code_turns_method_not_found_into_invalid_params(upstream: RunningServer, faithful: str) -> None:
    with Probe(faithful) as probe:
        relayed = probe.modern("no/such-method")
    assert (relayed.status, relayed.code) == (404, -32601)
    with faulty(upstream, "rewrite-error-code") as url, Probe(url) as probe:
        rewritten = probe.modern("no/such-method")
    assert (rewritten.status, rewritten.code) == (404, -32602)


def test_made_up_error_id_answers_with_an_id_the_client_never_sent(upstream: RunningServer, faithful: str) -> None:
    with Probe(faithful) as probe:
        relayed = probe.modern("no/such-method", ident=42)
        ok = probe.modern("tools/list", ident=43)
    assert relayed.final is not None and relayed.final["id"] == 42 and ok.final is not None and ok.final["id"] == 43
    with faulty(upstream, "made-up-error-id") as url, Probe(url) as probe:
        made_up = probe.modern("no/such-method", ident=42)
        ok = probe.modern("tools/list", ident=43)
    assert made_up.final is not None and made_up.final["id"] not in (42, None)
    assert ok.final is not None and ok.final["id"] == 43  # results keep their id: only errors are wrong


def test_alter_content_changes_structured_content_and_blobs(upstream: RunningServer, faithful: str) -> None:
    add = {"name": "add", "arguments": {"a": 1, "b": 2}}
    with Probe(faithful) as probe:
        assert probe.modern("tools/call", add).result["structuredContent"] == {"result": 3}
        assert probe.modern("resources/read", {"uri": "blob://raw"}).result["contents"][0]["blob"] == blob_base64()
    with faulty(upstream, "alter-content") as url, Probe(url) as probe:
        structured = probe.modern("tools/call", add).result["structuredContent"]
        blob = probe.modern("resources/read", {"uri": "blob://raw"}).result["contents"][0]["blob"]
    assert structured == {"result": "3"}
    assert blob != blob_base64() and len(BLOB) > 0


# -- what reaches the upstream --------------------------------------------------------------------------------


def test_drop_version_leaves_the_upstream_without_the_protocol_version(upstream: RunningServer, faithful: str) -> None:
    witness = {"name": "witness", "arguments": {}}
    with Probe(faithful) as probe:
        assert witnessed(probe.modern("tools/call", witness))["headers"]["mcp-protocol-version"] == MODERN
        probe.initialize()
        assert witnessed(probe.legacy("tools/call", witness))["headers"]["mcp-protocol-version"] == LEGACY
    with faulty(upstream, "drop-version") as url, Probe(url) as probe:
        modern = probe.modern("tools/call", witness)
        probe.initialize()
        legacy = witnessed(probe.legacy("tools/call", witness))
    # without the header the upstream takes the 2026 request for a 2025 one without a session
    assert modern.status == 400 and modern.code == -32600
    assert "mcp-protocol-version" not in legacy["headers"]


def test_stale_mcp_name_keeps_the_prefixed_name_in_the_header(upstream: RunningServer, faithful_prefixed: str) -> None:
    witness = {"name": "up_witness", "arguments": {}}
    with Probe(faithful_prefixed) as probe:
        names = [tool["name"] for tool in probe.modern("tools/list").result["tools"]]
        seen = witnessed(probe.modern("tools/call", witness))["headers"]
    assert names and all(name.startswith("up_") for name in names)
    assert seen["mcp-name"] == "witness"
    with faulty(upstream, "stale-mcp-name", prefix="up_") as url, Probe(url) as probe:
        refused = probe.modern("tools/call", witness)
    assert refused.status == 400 and refused.code == -32020  # the upstream saw Mcp-Name up_witness, name witness


# -- the front's checks ---------------------------------------------------------------------------------------


def test_no_origin_check_serves_a_foreign_origin(upstream: RunningServer, faithful: str) -> None:
    with Probe(faithful) as probe:
        refused = probe.modern("tools/list", headers={"origin": FOREIGN})
        local = probe.modern("tools/list", headers={"origin": "http://127.0.0.1:3000"})
    assert refused.status == 403 and local.status == 200
    with faulty(upstream, "no-origin-check") as url, Probe(url) as probe:
        served = probe.modern("tools/list", headers={"origin": FOREIGN})
    assert served.status == 200 and served.result["tools"]


def test_html_parse_error_answers_bad_json_with_a_page(upstream: RunningServer, faithful: str) -> None:
    headers = {"mcp-protocol-version": MODERN}
    with Probe(faithful) as probe:
        relayed = probe.send(b'{"jsonrpc": "2.0", "id": 1, "method": ', headers)
    assert (relayed.status, relayed.content_type, relayed.code) == (400, "application/json", -32700)
    with faulty(upstream, "html-parse-error") as url, Probe(url) as probe:
        page = probe.send(b'{"jsonrpc": "2.0", "id": 1, "method": ', headers)
    assert (page.status, page.content_type) == (500, "text/html") and b"<html>" in page.body


# -- sessions and principals ----------------------------------------------------------------------------------


def _two_users(url: str) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Alice and Bob each open a 2025 session; what the upstream saw of each, and Bob's status on Alice's session."""
    witness = {"name": "witness", "arguments": {}}
    with Probe(url, token="alice") as alice, Probe(url, token="bob") as bob:
        alice.initialize()
        bob.initialize()
        seen_alice = witnessed(alice.legacy("tools/call", witness))
        seen_bob = witnessed(bob.legacy("tools/call", witness))
        intruder = Probe(url, token="bob")
        intruder.session, intruder.version = alice.session, LEGACY
        status = intruder.legacy("tools/list").status
        intruder.close()
    return seen_alice, seen_bob, status


def test_shared_session_puts_two_users_on_one_upstream_session(upstream: RunningServer, faithful: str) -> None:
    alice, bob, intruder = _two_users(faithful)
    assert alice["sessionId"] and bob["sessionId"] and alice["sessionId"] != bob["sessionId"]
    assert intruder == 404  # a session belongs to the principal that opened it
    with faulty(upstream, "shared-session") as url:
        alice, bob, _ = _two_users(url)
    assert alice["sessionId"] == bob["sessionId"]


def _bob_hears(url: str) -> tuple[list[Any], str, str]:
    """Alice then Bob announce on their sessions; what Bob's GET stream carried."""
    first, second = tag(), tag()
    announce = {"name": "announce", "arguments": {}}
    with Probe(url, token="alice") as alice, Probe(url, token="bob") as bob:
        alice.initialize()
        bob.initialize()
        alice_stream, bob_stream = alice.listen(), bob.listen()
        alice.legacy("tools/call", {**announce, "arguments": {"tag": first}})
        assert alice_stream.wait_for(lambda m: m.get("params", {}).get("data") == first)
        bob.legacy("tools/call", {**announce, "arguments": {"tag": second}})
        assert bob_stream.wait_for(lambda m: m.get("params", {}).get("data") == second)
        alice_stream.stop()
        heard = bob_stream.stop().messages
    return [m.get("params", {}).get("data") for m in heard if m.get("method") == "notifications/message"], first, second


def test_cross_events_delivers_one_users_events_to_another(upstream: RunningServer, faithful: str) -> None:
    heard, _, second = _bob_hears(faithful)
    assert heard == [second]
    with faulty(upstream, "cross-events") as url:
        heard, first, second = _bob_hears(url)
    assert heard == [first, second]


def _ended_upstream_session(url: str, upstream_url: str) -> Answer:
    """A 2025 session whose upstream session is ended behind the gateway's back; the client's next request."""
    with Probe(url) as probe:
        probe.initialize()
        back = witnessed(probe.legacy("tools/call", {"name": "witness", "arguments": {}}))["sessionId"]
        with httpx.Client(timeout=10) as http:
            ended = http.delete(upstream_url, headers={"mcp-session-id": back, "mcp-protocol-version": LEGACY})
        assert ended.status_code == 200
        return probe.legacy("tools/list")


def test_session_404_as_500_hides_the_ended_session(upstream: RunningServer, faithful: str) -> None:
    assert _ended_upstream_session(faithful, upstream.url).status == 404
    with faulty(upstream, "session-404-as-500") as url:
        assert _ended_upstream_session(url, upstream.url).status == 500


def _bridge_give_up(url: str) -> bool:
    """Through a stdio bridge: a 2026 call abandoned after 1.5 s (its write waits 3 s); whether the write landed."""
    name = tag()
    call = {"name": "tracked_write", "arguments": {"tag": name, "delay_ms": 3000}}
    with Probe(url) as probe:
        assert probe.modern("tools/list").status == 200  # the bridge's 2026 server is up before the clock starts
        assert probe.modern("tools/call", call, give_up=1.5).gave_up
        deadline = time.monotonic() + 3.0 + 2.0
        while time.monotonic() < deadline:
            written = probe.modern("tools/call", {"name": "get_writes", "arguments": {}}).result["structuredContent"]
            if name in written["result"]:
                return True
            time.sleep(0.2)
    return False


@pytest.mark.parametrize(("fault", "lands"), [(None, False), ("cancel-client-id", True), ("drop-cancel", True)])
def test_a_bridge_cancels_an_abandoned_2026_call_by_notice_naming_its_own_id(fault: str | None, lands: bool) -> None:
    """On stdio the 2026 cancellation is notifications/cancelled: the faithful bridge sends it for a client that went
    away, naming the id it gave the call; cancel-client-id names the client's id (nothing is cancelled), drop-cancel
    sends nothing."""
    with gateway_chain(stdio=True, faults=[fault] if fault else []) as bridge:
        assert _bridge_give_up(bridge.url) is lands
