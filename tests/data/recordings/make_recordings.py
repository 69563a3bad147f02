"""Regenerate the committed recordings of real Python SDK traffic.

    .venv/bin/python tests/data/recordings/make_recordings.py   (from the repository root)

Starts the official Python SDK fixture server (``tests/peers/sdk_server.py``), puts
``mcp-assay proxy --record`` in front of it, and drives the official Python SDK client through the
proxy, once per revision:

* ``python-sdk-2026-07-28.jsonl``: client mode ``auto`` (``server/discover``), then ``tools/list``,
  ``tools/call add``, a ``tools/call`` with progress, ``resources/read`` and ``prompts/get``; plus
  one request for a method the server does not have, sent with httpx2 in the SDK client's own
  header shape (the SDK client cannot send one), so the recording holds a real error answer.
  That request is tagged afterwards as an active probe sent invalid on purpose (the recording
  format's ``probe`` field), so it is not held against the client;
* ``python-sdk-2025-11-25.jsonl``: client mode ``legacy`` (``initialize``), the same calls.

Then it derives ``broken-2026-07-28.jsonl`` from the 2026 recording by editing four things, each a
violation with a known requirement ID:

1. the ``tools/list`` result loses ``resultType`` (RES-01, RES-04);
2. the ``tools/call add`` request's ``MCP-Protocol-Version`` header says ``2025-11-25`` while its
   body ``_meta`` says ``2026-07-28``, and the server's 200 answer is left as it was (HTTP-08 for
   the client, HTTP-09 for the server);
3. the ``resources/read`` result gets ``ttlMs: -1000`` (RES-07);
4. the unknown method's error code becomes ``-32603`` instead of ``-32601`` (RPC-15).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from tests.peers.assay import assay_proxy  # noqa: E402
from tests.peers.process import sdk_http_server  # noqa: E402

SPEC_DIR = ROOT.parent / "shared" / "spec"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
UNKNOWN_METHOD = "mcp/definitely-not-a-method"


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def drive(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        await client.list_tools()
        await client.call_tool("add", {"a": 2, "b": 40})
        await client.call_tool("progress_tool", {"steps": 2}, progress_callback=_progress)
        await client.read_resource("greeting://alice")
        await client.get_prompt("summarize", {"text": "a short text"})
    if mode != "legacy":
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": MODERN,
            "mcp-method": UNKNOWN_METHOD,
        }
        body = {"jsonrpc": "2.0", "id": 7, "method": UNKNOWN_METHOD, "params": {"_meta": meta}}
        async with httpx2.AsyncClient(timeout=10) as http:
            await http.post(url, headers=headers, content=json.dumps(body, separators=(",", ":")))


def record(mode: str, target: Path) -> None:
    with sdk_http_server() as server:
        with assay_proxy(
            server.url, "--record", str(target), "--live", "off", "--report", "json:/dev/null",
            "--spec-dir", str(SPEC_DIR),
        ) as proxy:  # fmt: skip
            anyio.run(drive, proxy.url, mode)
        if proxy.returncode not in (0, 1):
            raise SystemExit(f"proxy exited {proxy.returncode}:\n{proxy.output}")
    if mode != "legacy":
        records = _records(target)
        probe = _request_exchange(records, UNKNOWN_METHOD)
        for item in records:
            if item.get("type") == "http" and item.get("x") == probe:
                item["probe"] = {"name": "unknown-method", "invalid": True, "sent_by": "make_recordings.py (httpx2)"}
        _write(target, records)
    print(f"wrote {target.relative_to(ROOT)} ({sum(1 for _ in target.open())} records)")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _request_exchange(records: list[dict[str, Any]], method: str, name: str | None = None) -> str:
    for item in records:
        if item.get("type") != "http" or "body" not in item:
            continue
        body = json.loads(item["body"])
        if body.get("method") == method and (name is None or body.get("params", {}).get("name") == name):
            return str(item["x"])
    raise LookupError(f"no {method} {name or ''} request in the recording")


def _edit_body(records: list[dict[str, Any]], ident: str, edit: Any) -> None:
    for item in records:
        if item.get("x") == ident and item.get("type") in ("body", "event") and item.get("body", item.get("data")):
            key = "body" if "body" in item else "data"
            payload = json.loads(item[key])
            edit(payload)
            item[key] = json.dumps(payload, separators=(",", ":"))
            return
    raise LookupError(f"no response body for exchange {ident}")


def break_recording(source: Path, target: Path) -> None:
    records = _records(source)
    header = records[0]
    header["source"] = f"hand-broken copy of {source.name} (see make_recordings.py)"

    listing = _request_exchange(records, "tools/list")
    _edit_body(records, listing, lambda payload: payload["result"].pop("resultType"))

    add = _request_exchange(records, "tools/call", "add")
    for item in records:
        if item.get("type") == "http" and item.get("x") == add:
            item["headers"] = [
                [name, LEGACY] if name.lower() == "mcp-protocol-version" else [name, value]
                for name, value in item["headers"]
            ]

    read = _request_exchange(records, "resources/read")
    _edit_body(records, read, lambda payload: payload["result"].__setitem__("ttlMs", -1000))

    unknown = _request_exchange(records, UNKNOWN_METHOD)
    _edit_body(records, unknown, lambda payload: payload["error"].__setitem__("code", -32603))

    _write(target, records)
    print(f"wrote {target.relative_to(ROOT)}")


def _write(target: Path, records: list[dict[str, Any]]) -> None:
    with target.open("w", encoding="utf-8") as handle:
        for item in records:
            handle.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")


def main() -> None:
    modern = HERE / f"python-sdk-{MODERN}.jsonl"
    legacy = HERE / f"python-sdk-{LEGACY}.jsonl"
    record("auto", modern)
    record("legacy", legacy)
    break_recording(modern, HERE / f"broken-{MODERN}.jsonl")


if __name__ == "__main__":
    main()
