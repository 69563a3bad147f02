"""Probe a gateway's front and print what it does on the wire, one JSON line per probe.

The evidence behind each pinned finding about a published intermediary: a foreign ``Origin``, an unknown
method (status, code, id), a body that is not JSON, notifications during a call (on which stream, in which
content type), a cancellation (answered when, and whether the write behind it landed), a session ended by
DELETE, and, when the upstream is ``witness_server.py``, what reached the upstream (ids, protocol version,
``Mcp-Name``). Every probe is bounded; a probe that cannot run says why.

usage: python -m tests.peers.gateway.survey URL [--witness] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from mcp_assay.addon.marked import PROBE_HEADER
from tests.peers.gateway.probe import LEGACY, Answer, Probe

FOREIGN = "https://mcp-assay.invalid"


def marked(case: str) -> dict[str, str]:
    """The header that tells an mcp-assay proxy on the way a request is the probe ``case``, sent wrong on purpose
    (never held against the client; the answer judged as ``run`` judges that probe)."""
    return {PROBE_HEADER: case}


def brief(answer: Answer) -> dict[str, Any]:
    """An answer as the survey prints it: status, content type, and its messages (short)."""
    shown: dict[str, Any] = {"status": answer.status, "type": answer.content_type}
    if answer.messages:
        shown["messages"] = [json.dumps(m)[:240] for m in answer.messages]
    elif answer.body:
        shown["body"] = answer.body[:240].decode("utf-8", "replace")
    if answer.gave_up:
        shown["gave_up"] = True
    return shown


def _writes(probe: Probe, legacy: bool) -> list[str]:
    call = {"name": "get_writes", "arguments": {}}
    answer = probe.legacy("tools/call", call) if legacy else probe.modern("tools/call", call)
    try:
        return list(answer.result.get("structuredContent", {}).get("result", []))
    except AssertionError:
        return []


def origin(url: str, witness: bool) -> dict[str, Any]:
    with Probe(url) as probe:
        modern = probe.modern("tools/list", headers={"origin": FOREIGN, **marked("foreign-origin")})
        legacy = probe.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "s", "version": "0"}}},
            {"origin": FOREIGN, **marked("foreign-origin")},
        )  # fmt: skip
    return {"2026 tools/list": brief(modern), "2025 initialize": brief(legacy)}


def unknown_method(url: str, witness: bool) -> dict[str, Any]:
    with Probe(url) as probe:
        modern = probe.modern("no/such-method", ident=42, headers=marked("unknown-method"))
        probe.initialize()
        legacy = probe.legacy("no/such-method", ident=43, headers=marked("unknown-method"))
    return {"2026 (id 42)": brief(modern), "2025 (id 43)": brief(legacy)}


def bad_json(url: str, witness: bool) -> dict[str, Any]:
    with Probe(url) as probe:
        modern = probe.send(b'{"jsonrpc": "2.0", "id": 1, "method": ',
                            {"mcp-protocol-version": "2026-07-28", **marked("invalid-json")})  # fmt: skip
        probe.initialize()
        legacy = probe.send(
            b'{"jsonrpc": "2.0", "id": 2, "method": ', {**probe._session_headers(), **marked("invalid-json")}
        )
    return {"2026": brief(modern), "2025 session": brief(legacy)}


def notifications(url: str, witness: bool) -> dict[str, Any]:
    progress = {"name": "progress_tool", "arguments": {"steps": 3}}
    chatty = {"name": "chatty", "arguments": {}}
    with Probe(url) as probe:
        modern = probe.modern("tools/call", progress, progress="p-modern")
        probe.initialize()
        stream = probe.listen()
        legacy = probe.legacy("tools/call", progress, progress="p-legacy")
        logs = probe.legacy("tools/call", chatty)
        time.sleep(0.5)
        on_get = stream.stop()
    return {
        "2026 progress_tool": brief(modern),
        "2025 progress_tool": brief(legacy),
        "2025 chatty (logs)": brief(logs),
        "2025 GET stream meanwhile": brief(on_get),
    }


def _landed(probe: Probe, legacy: bool, tag: str, delay_s: float) -> bool:
    """Whether ``tag`` was written: looked for until the write's delay and two more seconds have passed."""
    deadline = time.monotonic() + delay_s + 2.0
    while time.monotonic() < deadline:
        if tag in _writes(probe, legacy):
            return True
        time.sleep(0.2)
    return False


def _wait_started(probe: Probe, legacy: bool, tag: str, bound: float = 5.0) -> bool:
    """Whether the tracked write ``tag`` is known to run upstream (asked through the front, bounded)."""
    call = {"name": "started", "arguments": {}}
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        answer = probe.legacy("tools/call", call) if legacy else probe.modern("tools/call", call)
        if answer.final is not None and tag in (answer.final.get("result") or {}).get("structuredContent", {}).get(
            "result", []
        ):
            return True
        time.sleep(0.1)
    return False


def cancellation(url: str, witness: bool, patience: float = 5.0) -> dict[str, Any]:
    """A 2026 call dropped by its client, and a 2025 call cancelled by notice once it runs (with the witness
    upstream: ``tracked_write``; else ``slow_write`` and a short wait); the cancelled call's answer is awaited
    ``patience`` s, and whether the write had landed when it came and whether it landed at all."""
    tool, delay_ms = ("tracked_write", 1500) if witness else ("slow_write", 700)
    found: dict[str, Any] = {}
    with Probe(url) as probe, Probe(url) as caller:
        tag = f"m-{uuid.uuid4().hex[:6]}"
        gone = probe.modern("tools/call", {"name": tool, "arguments": {"tag": tag, "delay_ms": delay_ms}}, give_up=0.5)
        found["2026 disconnect"] = {**brief(gone), "landed": _landed(probe, False, tag, delay_ms / 1000)}
        probe.initialize()
        caller.session, caller.version = probe.session, probe.version
        tag = f"l-{uuid.uuid4().hex[:6]}"
        done: dict[str, Any] = {}
        call = {"name": tool, "arguments": {"tag": tag, "delay_ms": delay_ms}}

        def work() -> None:
            try:
                done["answer"] = caller.legacy("tools/call", call, ident=5, give_up=patience)
                done["landed_when_answered"] = tag in _writes(caller, True)
            except httpx.HTTPError as failure:
                done["failure"] = type(failure).__name__

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        if witness:
            running = _wait_started(probe, True, tag)
        else:
            time.sleep(0.25)
            running = None  # not known without the witness server
        notice = probe.notify("notifications/cancelled", {"requestId": 5, "reason": "survey"})
        worker.join(patience + 3)
        answer = done.get("answer")
        found["2025 notice"] = {
            "running when cancelled": running,
            "notice": notice.status,
            "call": brief(answer) if isinstance(answer, Answer) else done.get("failure", "no answer"),
            "landed_when_answered": done.get("landed_when_answered"),
            "landed": _landed(probe, True, tag, delay_ms / 1000),
        }
    return found


def session(url: str, witness: bool) -> dict[str, Any]:
    with Probe(url) as probe:
        opened = probe.initialize()
        if probe.session is None:
            return {"initialize": brief(opened), "note": "no Mcp-Session-Id: stateless front"}
        ended = probe.delete()
        reused = probe.legacy("tools/list", ident=9)
        missing = Probe(url)
        missing.version = LEGACY
        without = missing.legacy("tools/list", ident=10)
        missing.close()
    return {"DELETE": brief(ended), "ended session reused": brief(reused), "no session id": brief(without)}


def upstream_view(url: str, witness: bool) -> dict[str, Any]:
    if not witness:
        return {"note": "needs witness_server.py upstream"}
    call = {"name": "witness", "arguments": {}}
    with Probe(url) as probe:
        modern = probe.modern("tools/call", call, ident=7)
        probe.initialize()
        legacy = probe.legacy("tools/call", call, ident=8)
    seen: dict[str, Any] = {}
    for label, answer in (("2026 (client id 7)", modern), ("2025 (client id 8)", legacy)):
        try:
            seen[label] = answer.result.get("structuredContent")
        except AssertionError:
            seen[label] = brief(answer)
    return seen


PROBES: dict[str, Callable[[str, bool], dict[str, Any]]] = {
    "origin": origin,
    "unknown-method": unknown_method,
    "bad-json": bad_json,
    "notifications": notifications,
    "cancellation": cancellation,
    "session": session,
    "upstream": upstream_view,
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--witness", action="store_true", help="the upstream is witness_server.py")
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    chosen = [name for name in args.only.split(",") if name] or list(PROBES)
    for name in chosen:
        try:
            found = PROBES[name](args.url, args.witness)
        except (httpx.HTTPError, AssertionError, KeyError, TimeoutError) as failure:
            found = {"error": f"{type(failure).__name__}: {failure}"[:300]}
        print(json.dumps({"probe": name, **found}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
