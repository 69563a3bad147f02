"""Published intermediaries between the official Python SDK client and the Python SDK server, and what each does wrong
on the wire (tests/peers/intermediaries.py has the launch recipes; tests/peers/setup.sh installs them).

The smoke test runs the SDK client through each one in every mode its front speaks, in front of ``sdk_server.py``:
connect, list tools, call one; the steps that fail are pinned with the reason. The wire tests put each in front
of ``witness_server.py`` (the same SDK server, which also reports what reached it) and pin what it changed, each
against what the server alone does (``test_the_server_alone_does_none_of_it``): these are the facts the gateway
rules must find and blame on the intermediary. mcp-assay judges nothing here.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.peers.gateway import survey
from tests.peers.gateway.probe import MODERN, Probe, StdioProbe, envelope
from tests.peers.intermediaries import RECIPES, running
from tests.peers.process import PYTHON
from tests.peers.topology import ROOT, upstream_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(240)]

SMOKE = ("connect", "tools/list pages", "tools/call structured")
"""What every intermediary must carry in every mode its front speaks (progress too, except where pinned)."""
FAILING_STEPS: dict[str, dict[str, str]] = {
    "fastmcp": {"subscriptions/listen": "answers -32601: its discover declares no tools.listChanged (not a fault)"},
    "mcp-proxy-py": {
        "tools/call progress": "progress notifications during a call never reach the client",
        "tools/call logs": "log notifications during a call never reach the client",
        "tools/call cancelled": "the cancelled call's write lands",
    },
    "supergateway": {"subscriptions/listen": "no answer head to subscriptions/listen: the client times out"},
    "supergateway-stateful": {"subscriptions/listen": "no answer head to subscriptions/listen: the client times out"},
    "mcp-proxy-npm": {
        "tools/call logs": "log notifications during a call never reach the client",
        "subscriptions/listen": "acknowledged with nothing honoured and ended at once (its upstream is 2025-11-25)",
    },
    "mcp-remote": {"tools/call cancelled": "a 2026 cancellation is not turned into a disconnect: the write lands"},
}
"""The sdk_drive steps that fail through each intermediary (auto mode runs every step, the other modes the smoke
steps; ``subscriptions/listen`` runs only where 2026-07-28 is negotiated)."""


def drive(target: Any, modes: str, env: dict[str, str]) -> list[dict[str, Any]]:
    front = ["stdio", "--command", " ".join(target.stdio)] if target.url is None else [target.url]
    command = [PYTHON, "-m", "tests.peers.gateway.sdk_drive", front[0], modes, *front[1:], "--upstream", "sdk"]
    done = subprocess.run(
        command, capture_output=True, timeout=200, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env}
    )
    lines = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    assert lines, done.stderr.decode()[-2000:]
    return lines


@pytest.mark.parametrize("name", list(RECIPES))
def test_the_sdk_client_crosses_each_intermediary(name: str, tmp_path: Path) -> None:
    """Every step in auto mode (the failing ones are the pinned ones), and connect, list tools, call one with progress
    in each other mode the front speaks."""
    with running(name, "sdk", config_dir=tmp_path) as target:
        modes = target.recipe.modes
        full = name != "supergateway"  # stateless: every request spawns a server, so its smoke steps only
        lines = drive(target, ",".join(f"{m}:{'all' if m == 'auto' and full else 'smoke'}" for m in modes), target.env)
    for mode in modes:
        steps = {line["step"]: line for line in lines if line["mode"] == mode}
        assert all(steps.get(step, {}).get("ok") for step in SMOKE), (mode, steps)
        failed = {step for step, line in steps.items() if not line["ok"]}
        expected = set(FAILING_STEPS[name]) & set(steps)
        if steps["connect"]["detail"] != MODERN:
            expected -= {"subscriptions/listen"}
        assert failed == expected, (mode, {step: steps[step]["detail"] for step in failed})


# -- the server alone -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference() -> Any:
    with upstream_server("witness") as server:
        yield server


def test_the_server_alone_does_none_of_it(reference: Any) -> None:
    """The baseline every wire finding below is measured against: the SDK server refuses a foreign Origin (403),
    answers an unknown method -32601 under the request's id, bad JSON -32700 in JSON, streams notifications during a
    call, and a cancelled call's write does not land."""
    url = reference.url
    assert survey.origin(url, True)["2025 initialize"]["status"] == 403
    unknown = survey.unknown_method(url, True)
    assert '"id": 43' in unknown["2025 (id 43)"]["messages"][0] and "-32601" in unknown["2025 (id 43)"]["messages"][0]
    assert survey.bad_json(url, True)["2025 session"]["type"] == "application/json"
    noted = survey.notifications(url, True)
    assert len(noted["2025 progress_tool"]["messages"]) == 4 and len(noted["2025 chatty (logs)"]["messages"]) == 3
    cancelled = survey.cancellation(url, True)
    assert not cancelled["2026 disconnect"]["landed"] and not cancelled["2025 notice"]["landed"]


# -- what each intermediary changes ------------------------------------------------------------------------------


def _first(found: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(found["messages"][0])
    return message


def test_fastmcp_serves_a_foreign_origin_forwards_it_and_rewrites_log_data(tmp_path: Path) -> None:
    with running("fastmcp", "witness") as target:
        url = target.url
        assert url is not None
        origin = survey.origin(url, True)
        with Probe(url) as probe:
            plain = probe.modern("tools/list").result["tools"]
        noted = survey.notifications(url, True)
        seen = survey.upstream_view(url, True)
    assert origin["2025 initialize"]["status"] == 200  # HTTP-35/AUTH-30: a foreign Origin must get 403
    # the client's Origin goes upstream; the upstream's 403 comes back as a successful, empty list
    assert origin["2026 tools/list"]["status"] == 200 and _first(origin["2026 tools/list"])["result"]["tools"] == []
    assert plain
    log = json.loads(noted["2025 chatty (logs)"]["messages"][0])
    assert log["params"]["data"] == {"msg": "working", "extra": None}  # the server sent the string "working"
    assert seen["2026 (client id 7)"]["requestId"] != "7"  # its own id space upstream (allowed)
    assert seen["2026 (client id 7)"]["protocolVersion"] == MODERN


def test_mcp_proxy_py_rewrites_codes_makes_up_ids_strips_notifications_and_lets_cancelled_work_land() -> None:
    with running("mcp-proxy-py", "witness") as target:
        url = target.url
        assert url is not None
        origin = survey.origin(url, True)
        unknown = survey.unknown_method(url, True)
        bad = survey.bad_json(url, True)
        noted = survey.notifications(url, True)
        cancelled = survey.cancellation(url, True)
    assert origin["2025 initialize"]["status"] == 200  # no Origin check
    assert _first(unknown["2025 (id 43)"])["error"]["code"] == -32602  # the server answered -32601
    assert (bad["2025 session"]["status"], _first(bad["2025 session"])["id"]) == (400, "server-error")
    assert unknown["2026 (id 42)"]["status"] == 400  # 2025-11-25 only
    progress = noted["2025 progress_tool"]
    assert progress["type"] == "application/json" and len(progress["messages"]) == 1  # the server sent 3 + answer
    notice = cancelled["2025 notice"]
    assert json.loads(notice["call"]["messages"][0])["error"]["code"] == 0  # answered at once, code 0 ...
    assert notice["landed_when_answered"] is False and notice["landed"]  # ... while the write behind it lands


@pytest.mark.parametrize("name", ["supergateway", "supergateway-stateful"])
def test_supergateway_serves_a_foreign_origin_and_answers_bad_json_with_an_html_page(name: str) -> None:
    with running(name, "witness") as target:
        url = target.url
        assert url is not None
        origin = survey.origin(url, True)
        bad = survey.bad_json(url, True)
        with Probe(url) as probe:
            listen = probe.modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, give_up=2.0)
        session = survey.session(url, True)
        seen = survey.upstream_view(url, True) if name == "supergateway-stateful" else {}
    assert origin["2025 initialize"]["status"] == 200 and origin["2026 tools/list"]["status"] == 200
    assert (bad["2026"]["status"], bad["2026"]["type"]) == (400, "text/html")
    assert "SyntaxError" in bad["2026"]["body"]  # a stack trace, with file paths, for a body that is not JSON
    assert listen.gave_up and listen.status == 0  # the listen stream's head (and acknowledgement) never comes
    if name == "supergateway":
        assert session["note"].startswith("no Mcp-Session-Id")  # every request gets a stdio server of its own
    else:
        ended = _first(session["ended session reused"])
        assert session["ended session reused"]["status"] == 404 and ended["id"] is None  # request id 9 readable
        assert seen["2026 (client id 7)"]["requestId"] == "7"  # ids passed through unchanged


def test_mcp_proxy_npm_talks_2025_upstream_and_drops_log_notifications() -> None:
    with running("mcp-proxy-npm", "witness") as target:
        url = target.url
        assert url is not None
        origin = survey.origin(url, True)
        bad = survey.bad_json(url, True)
        noted = survey.notifications(url, True)
        seen = survey.upstream_view(url, True)
        session = survey.session(url, True)
    assert origin["2025 initialize"]["status"] == 200 and origin["2026 tools/list"]["status"] == 200
    assert seen["2026 (client id 7)"]["protocolVersion"] == "2025-11-25"  # the client negotiated 2026-07-28
    logs, stream = noted["2025 chatty (logs)"], noted["2025 GET stream meanwhile"]
    assert len(logs["messages"]) == 1 and "messages" not in stream  # the server sent 2 log messages
    assert _first(bad["2026"])["error"]["code"] == -32000  # not -32700
    assert _first(session["ended session reused"])["id"] is None


def test_mcp_remote_rewrites_error_codes_and_does_not_cancel_2026_calls(tmp_path: Path) -> None:
    with running("mcp-remote", "witness", config_dir=tmp_path) as target:
        assert target.stdio is not None
        bridge = StdioProbe(target.stdio, target.env)
        try:
            meta = envelope()
            bridge.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}})
            assert bridge.answer(1, 30.0) is not None
            bridge.send("{not json")
            bridge.send({"jsonrpc": "2.0", "id": 2, "method": "no/such-method", "params": {"_meta": meta}})
            unknown = bridge.answer(2)
            tag = f"r-{uuid.uuid4().hex[:6]}"
            call = {"name": "slow_write", "arguments": {"tag": tag, "delay_ms": 700}, "_meta": meta}
            bridge.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
            time.sleep(0.25)
            bridge.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
            cancelled = bridge.answer(3)
            time.sleep(0.5)
            bridge.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                         "params": {"name": "get_writes", "arguments": {}, "_meta": meta}})  # fmt: skip
            writes = bridge.answer(4)
        finally:
            bridge.close()
    assert not [m for m in bridge.messages if m.get("id") is None and "error" in m]  # no -32700 for the bad line
    assert unknown is not None and unknown["error"]["code"] == -32001  # the server answered -32601
    assert "-32601" in unknown["error"]["message"]
    assert cancelled is not None and "result" in cancelled  # the cancelled call ran to its end ...
    assert writes is not None and tag in writes["result"]["structuredContent"]["result"]  # ... and its write landed
