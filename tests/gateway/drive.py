"""Traffic that makes each seeded fault of the test gateway show (tests.peers.gateway), for the judged e2e tests.

One driver per fault, each a short conversation through the gateway's front (``url``) with the raw probe client
of the test peers; ``upstream`` is the server behind it, asked directly where a driver needs to know what
landed there. The drivers only make traffic: what mcp-assay makes of it is the tests' business.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from tests.peers.gateway.probe import LEGACY, MODERN, Answer, Probe

FOREIGN = "https://mcp-assay.invalid"
DELAY_MS = 1500
Driver = Callable[[str, str], None]


def tag() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def progress(url: str, upstream: str) -> None:
    with Probe(url) as probe:
        probe.modern("tools/call", {"name": "progress_tool", "arguments": {"steps": 3}}, progress="mine")


def gated(url: str, upstream: str) -> None:
    """Call ``gate`` and release it from a second client once its first progress notification arrived."""
    key = tag()
    seen: list[float] = []
    releaser = Probe(url)

    def on_message(message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/progress":
            seen.append(time.monotonic())
            if len(seen) == 1:
                releaser.modern("tools/call", {"name": "release", "arguments": {"key": key}})

    with Probe(url) as probe:
        probe.modern("tools/call", {"name": "gate", "arguments": {"key": key}}, progress="g", on_message=on_message)
    releaser.close()


def _names(upstream: str, tool: str) -> list[str]:
    with Probe(upstream) as probe:
        found: list[str] = probe.modern("tools/call", {"name": tool, "arguments": {}}).result["structuredContent"][
            "result"
        ]
        return found


def _started(upstream: str, name: str) -> None:
    deadline = time.monotonic() + 20
    while name not in _names(upstream, "started") and time.monotonic() < deadline:
        time.sleep(0.05)


def legacy_cancel(url: str, upstream: str) -> None:
    """A 2025 call, cancelled by notice once it runs upstream."""
    name = tag()
    done: dict[str, Answer] = {}
    call = {"name": "tracked_write", "arguments": {"tag": name, "delay_ms": DELAY_MS}}
    with Probe(url) as probe, Probe(url) as caller:
        probe.initialize()
        caller.session, caller.version = probe.session, probe.version
        worker = threading.Thread(target=lambda: done.setdefault("call", caller.legacy("tools/call", call, ident=5)))
        worker.start()
        _started(upstream, name)
        probe.notify("notifications/cancelled", {"requestId": 5, "reason": "test"})
        worker.join(20)


def modern_give_up(url: str, upstream: str) -> None:
    """A 2026 call the client abandons by closing its stream; then wait out the upstream's work."""
    name = tag()
    with Probe(url) as probe:
        probe.modern("tools/call", {"name": "tracked_write", "arguments": {"tag": name, "delay_ms": DELAY_MS}},
                     give_up=0.5)  # fmt: skip
    time.sleep(DELAY_MS / 1000 + 0.5)


def cancels(url: str, upstream: str) -> None:
    legacy_cancel(url, upstream)
    modern_give_up(url, upstream)


def pages(url: str, upstream: str) -> None:
    with Probe(url) as probe:
        cursor = probe.modern("tools/list").result.get("nextCursor")
        while cursor:
            cursor = probe.modern("tools/list", {"cursor": cursor}).result.get("nextCursor")


def unknown_method(url: str, upstream: str) -> None:
    with Probe(url) as probe:
        probe.modern("no/such-method", ident=42)
        probe.modern("tools/list", ident=43)


def content(url: str, upstream: str) -> None:
    with Probe(url) as probe:
        probe.modern("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        probe.modern("resources/read", {"uri": "blob://raw"})


def witness_calls(url: str, upstream: str) -> None:
    witness = {"name": "witness", "arguments": {}}
    with Probe(url) as probe:
        probe.modern("tools/call", witness)
        probe.initialize()
        probe.legacy("tools/call", witness)


def prefixed_call(url: str, upstream: str) -> None:
    with Probe(url) as probe:
        probe.modern("tools/list")
        probe.modern("tools/call", {"name": "up_witness", "arguments": {}})


def foreign_origin(url: str, upstream: str) -> None:
    with Probe(url) as probe:
        probe.modern("tools/list", headers={"origin": FOREIGN})


def bad_json(url: str, upstream: str) -> None:
    with Probe(url) as probe:
        probe.modern("tools/list")
        probe.send(b'{"jsonrpc": "2.0", "id": 1, "method": ', {"mcp-protocol-version": MODERN})


def two_users(url: str, upstream: str) -> None:
    witness = {"name": "witness", "arguments": {}}
    with Probe(url, token="alice") as alice, Probe(url, token="bob") as bob:
        alice.initialize()
        bob.initialize()
        alice.legacy("tools/call", witness)
        bob.legacy("tools/call", witness)


def bob_hears(url: str, upstream: str) -> None:
    """Alice then Bob announce on their sessions while both listen on a GET stream."""
    first, second = tag(), tag()
    with Probe(url, token="alice") as alice, Probe(url, token="bob") as bob:
        alice.initialize()
        bob.initialize()
        alice_stream, bob_stream = alice.listen(), bob.listen()
        alice.legacy("tools/call", {"name": "announce", "arguments": {"tag": first}})
        alice_stream.wait_for(lambda m: m.get("params", {}).get("data") == first)
        bob.legacy("tools/call", {"name": "announce", "arguments": {"tag": second}})
        bob_stream.wait_for(lambda m: m.get("params", {}).get("data") == second)
        time.sleep(0.3)
        alice_stream.stop()
        bob_stream.stop()


def listen(url: str, upstream: str) -> None:
    """Listen for tools list-changed as "L1" and touch the tools once acknowledged, from a second client."""
    toucher = Probe(url)

    def on_message(message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/subscriptions/acknowledged":
            toucher.modern("tools/call", {"name": "touch_tools", "arguments": {}})

    with Probe(url) as probe:
        probe.modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, ident="L1",
                     on_message=on_message, give_up=1.5)  # fmt: skip
    toucher.close()


def ended_session(url: str, upstream: str) -> None:
    """A 2025 session whose upstream session is ended behind the gateway's back; the client's next request."""
    with Probe(url) as probe:
        probe.initialize()
        back = probe.legacy("tools/call", {"name": "witness", "arguments": {}}).result["structuredContent"]["sessionId"]
        with httpx.Client(timeout=10) as http:
            http.delete(upstream, headers={"mcp-session-id": back, "mcp-protocol-version": LEGACY})
        probe.legacy("tools/list")


FAULTS: dict[str, tuple[Driver, str, str]] = {
    "strip-notifications": (progress, "", "gateway_relays_stream_notifications"),
    "hold-notifications": (gated, "", "gateway_does_not_hold_events"),
    "progress-token-unmapped": (progress, "", "gateway_maps_progress_tokens"),
    "subscription-id-unmapped": (listen, "", "gateway_maps_subscription_ids"),
    "cancel-client-id": (legacy_cancel, "", "gateway_cancels_with_upstream_id"),
    "drop-cancel": (cancels, "", "gateway_passes_cancellations_on"),
    "drop-cursor": (pages, "", "gateway_relays_cursors"),
    "rewrite-error-code": (unknown_method, "", "gateway_relays_error_codes"),
    "made-up-error-id": (unknown_method, "", "each_request_gets_exactly_one_response"),
    "alter-content": (content, "", "gateway_relays_content_unchanged"),
    "drop-version": (witness_calls, "", "gateway_passes_version_on"),
    "stale-mcp-name": (prefixed_call, "up_", "gateway_calls_renamed_tools_by_upstream_name"),
    "no-origin-check": (foreign_origin, "", "gateway_checks_origin"),
    "html-parse-error": (bad_json, "", "invalid_json_gets_a_parse_error"),
    "shared-session": (two_users, "", "gateway_keeps_principals_apart"),
    "cross-events": (bob_hears, "", "gateway_keeps_principals_apart"),
    "session-404-as-500": (ended_session, "", "gateway_passes_ended_sessions_on"),
}
"""Each seeded fault: the traffic that shows it, the tool-name prefix the gateway runs with, and the check that must
find it (and blame the gateway)."""

GROUPS: list[list[str]] = [
    ["drop-version", "shared-session"],
    ["hold-notifications", "made-up-error-id", "alter-content", "cancel-client-id", "html-parse-error", "cross-events",
     "session-404-as-500", "progress-token-unmapped"],
    ["drop-cancel", "drop-cursor", "rewrite-error-code", "subscription-id-unmapped", "no-origin-check"],
    ["strip-notifications"],
    ["stale-mcp-name"],
]  # fmt: skip
"""The faults one gateway runs together (one watched session judges each group): no fault of a group hides the
traffic another needs. A version left out upstream turns every 2026 call into a refusal (only front checks and
2025 sessions beside it); a held stream, a cut one and the listen stream's ids each need the events delivered by
the others; made-up error ids and rewritten error codes are on errors apart; the prefixed fault runs with its
prefix."""
