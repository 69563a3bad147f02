"""A scripted MCP client for the broken-peer scenarios: correct where the server is at fault,
wrong in exactly one way where the client is.

usage: python http_client.py BASE_URL        (BASE_URL: where /<scenario>/mcp lives, e.g. a proxy)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.peers.broken import CONTROL, FAULTS  # noqa: E402

MODERN = "2026-07-28"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "broken-client", "version": "1.0.0"},
}
ACCEPT = "application/json, text/event-stream"


class Conversation:
    """Requests to one scenario's endpoint, with ids counted per scenario."""

    def __init__(self, http: httpx2.AsyncClient, base: str, scenario: str) -> None:
        self.http = http
        self.url = f"{base.rstrip('/')}/{scenario}/mcp"
        self.next_id = 0

    def ident(self) -> int:
        self.next_id += 1
        return self.next_id

    def headers(self, method: str, name: str | None = None, **extra: str) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": MODERN}
        headers["mcp-method"] = method
        if name is not None:
            headers["mcp-name"] = name
        return {**headers, **extra}

    async def post(self, body: Any, headers: dict[str, str]) -> httpx2.Response:
        response = await self.http.post(self.url, headers=headers, content=json.dumps(body))
        await response.aread()
        return response

    async def call(self, method: str, params: dict[str, Any] | None = None, *, name: str | None = None) -> None:
        params = dict(params or {})
        params["_meta"] = {**META, **params.get("_meta", {})}
        body = {"jsonrpc": "2.0", "id": self.ident(), "method": method, "params": params}
        await self.post(body, self.headers(method, name))

    async def listen(self) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": f"listen-{self.ident()}",
            "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": META},
        }
        async with self.http.stream(
            "POST", self.url, headers=self.headers("subscriptions/listen"), content=json.dumps(body)
        ) as response:
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                seen = 0
                async for line in response.aiter_lines():
                    seen += line.startswith("data:")
                    if seen == 2:
                        break  # closing the stream ends the subscription


async def server_scenario(http: httpx2.AsyncClient, base: str, scenario: str) -> None:
    """A well-behaved 2026 conversation touching every feature the faults live in."""
    talk = Conversation(http, base, scenario)
    await talk.call("server/discover")
    await talk.call("tools/list")
    await talk.call(
        "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": 1}}, name="add"
    )
    await talk.call("resources/list")
    await talk.call("resources/read", {"uri": "info://a"}, name="info://a")
    await talk.call("prompts/get", {"name": "hello", "arguments": {"who": "you"}}, name="hello")
    await talk.call(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "hello"}, "argument": {"name": "who", "value": "y"}},
    )
    await talk.listen()
    await talk.call("mcp/no-such-method")


async def handshake_scenario(http: httpx2.AsyncClient, base: str, scenario: str) -> None:
    """A well-behaved 2025-11-25 session opening."""
    talk = Conversation(http, base, scenario)
    headers = {"content-type": "application/json", "accept": ACCEPT}
    init = {
        "jsonrpc": "2.0",
        "id": talk.ident(),
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "broken-client", "version": "1.0.0"},
        },
    }
    answer = await talk.post(init, headers)
    session = {"mcp-session-id": answer.headers.get("mcp-session-id", ""), "mcp-protocol-version": "2025-11-25"}
    await talk.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, {**headers, **session})
    await talk.post({"jsonrpc": "2.0", "id": talk.ident(), "method": "tools/list"}, {**headers, **session})


async def client_scenario(http: httpx2.AsyncClient, base: str, scenario: str) -> None:
    """One deliberately wrong request after a correct discover."""
    talk = Conversation(http, base, scenario)
    await talk.call("server/discover")
    if scenario == "client-envelope":
        await talk.post({"jsonrpc": "2.0", "id": talk.ident(), "method": "tools/list"}, talk.headers("tools/list"))
    elif scenario == "client-http":
        body = {"jsonrpc": "2.0", "id": talk.ident(), "method": "tools/list", "params": {"_meta": META}}
        await talk.post(body, talk.headers("prompts/list"))
    elif scenario == "client-jsonrpc":
        batch = [
            {"jsonrpc": "2.0", "id": talk.ident(), "method": "tools/list", "params": {"_meta": META}},
            {"jsonrpc": "2.0", "id": talk.ident(), "method": "prompts/list", "params": {"_meta": META}},
        ]
        await talk.post(batch, talk.headers("tools/list"))
    elif scenario == "client-subscriptions":
        body = {
            "jsonrpc": "2.0",
            "id": talk.ident(),
            "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": "yes"}, "_meta": META},
        }
        await talk.post(body, talk.headers("subscriptions/listen"))
    elif scenario == "client-pagination":
        await talk.call("resources/list", {"cursor": 5})
    elif scenario == "client-prompts":
        await talk.call("prompts/get", {"name": "hello", "arguments": {"who": 5}}, name="hello")
    else:
        raise ValueError(scenario)


async def drive(base: str) -> None:
    async with httpx2.AsyncClient(timeout=20) as http:
        await server_scenario(http, base, CONTROL)
        await handshake_scenario(http, base, CONTROL)
        for scenario in FAULTS:
            if scenario == "handshake":
                await handshake_scenario(http, base, scenario)
            elif scenario.startswith("client-"):
                await client_scenario(http, base, scenario)
            else:
                await server_scenario(http, base, scenario)


if __name__ == "__main__":
    anyio.run(drive, sys.argv[1])
