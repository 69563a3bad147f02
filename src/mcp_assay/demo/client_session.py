"""The demo's ordinary client session: what a real client does with the drafts server, once per era.

The proxy judges the traffic of a *real* client, so the session uses the official Python SDK's
client when it can be imported (``mcp``), in its 2026-07-28 mode and in its handshake (legacy)
mode. Without it, the suite's own clients (:class:`~mcp_assay.suite.era_clients.ModernClient` and
:class:`~mcp_assay.suite.era_clients.LegacyClient`) make the same calls. Either way the session lists
the tools, lists the drafts, creates one and reads it back, as the writer, through the proxy.
"""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_assay.cases.elsewhere import DEMO_SESSION
from mcp_assay.spec.revisions import Revision
from mcp_assay.suite.credentials import Credentials
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.transports import Reply
from mcp_assay.suite.transports.http import HttpTransport
from mcp_assay.vocabulary.protocol import Era, HeaderKey
from mcp_assay.wire.model import Exchange, Probe

__all__ = ["CLIENTS", "SessionStep", "choose_client", "drive_session", "sdk_client_available"]

CLIENTS = ("auto", "sdk", "suite")
"""``--client`` values: the SDK when importable (``auto``), the SDK only, or the suite's own clients."""
TITLE = "mcp-assay demo"
BODY = "written through the proxy by the demo's client session"


@dataclass(frozen=True, slots=True)
class SessionStep:
    """One call the session made, for the progress display."""

    revision: str
    call: str
    answer: str


Steps = Callable[[SessionStep], None]


def sdk_client_available() -> bool:
    """Whether the official Python SDK's Streamable HTTP client can be imported."""
    try:
        return importlib.util.find_spec("mcp.client.streamable_http") is not None
    except ModuleNotFoundError:
        return False


def choose_client(wanted: str) -> str:
    """``sdk`` or ``suite`` for ``--client`` (``auto`` picks the SDK when it is installed)."""
    if wanted == "auto":
        return "sdk" if sdk_client_available() else "suite"
    return wanted


async def drive_session(url: str, token: str, revisions: list[Revision], *, client: str, step: Steps) -> None:
    """Run the session against ``url`` once per revision in ``revisions`` with ``client`` (``sdk`` or ``suite``)."""
    for revision in revisions:
        if client == "sdk":
            await _sdk_session(url, token, revision, step)
        else:
            await _suite_session(url, token, revision, step)


async def _sdk_session(url: str, token: str, revision: Revision, step: Steps) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    mode = revision.name if revision.era is Era.MODERN else "legacy"
    credential: dict[str, str] = {HeaderKey.AUTHORIZATION: f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=credential, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as session:
            name = str(session.protocol_version)
            tools = await session.list_tools()
            step(SessionStep(name, "tools/list", ", ".join(tool.name for tool in tools.tools)))
            listed = await session.call_tool("list_drafts", {})
            step(SessionStep(name, "tools/call list_drafts", _sdk_answer(listed)))
            created = await session.call_tool("create_draft", {"title": TITLE, "body": BODY})
            step(SessionStep(name, "tools/call create_draft", _sdk_answer(created)))
            ident = (created.structured_content or {}).get("id")
            if isinstance(ident, str):
                read = await session.call_tool("read_draft", {"draft_id": ident})
                step(SessionStep(name, "tools/call read_draft", _sdk_answer(read)))


def _sdk_answer(result: Any) -> str:
    if getattr(result, "is_error", False):
        return "a tool error"
    content = getattr(result, "structured_content", None)
    return f"a result {content}" if content else "a result"


def _reply_answer(reply: Reply) -> str:
    structured = reply.result.get("structuredContent") if reply.ok else None
    return f"{reply.describe()} {structured}" if structured else reply.describe()


async def _suite_session(url: str, token: str, revision: Revision, step: Steps) -> None:
    counter = itertools.count(1)

    def new_id(prefix: str) -> str:
        return f"{prefix}{next(counter)}"

    def ignore(exchange: Exchange) -> None:
        """The proxy records this session; the client keeps nothing itself."""

    transport = HttpTransport(
        url, credentials=Credentials(token=token), recorder=ignore, new_id=new_id, limiter=RateLimiter()
    )
    probe = Probe.of(DEMO_SESSION, "the demo's ordinary client session")
    try:
        client: ModernClient | LegacyClient
        if revision.era is Era.MODERN:
            client = ModernClient(transport, revision)
        else:
            legacy = LegacyClient(transport, revision)
            reply = await legacy.initialize(revision.name, probe)
            step(SessionStep(revision.name, "initialize", reply.describe()))
            await legacy.initialized(probe)
            client = legacy
        reply = await client.request("tools/list", probe=probe)
        tools = reply.result.get("tools") if reply.ok else None
        names = [tool.get("name") for tool in tools if isinstance(tool, dict)] if isinstance(tools, list) else []
        if isinstance(client, ModernClient) and isinstance(tools, list):
            client.tools = {str(tool["name"]): tool for tool in tools if isinstance(tool, dict) and "name" in tool}
        step(SessionStep(revision.name, "tools/list", ", ".join(str(name) for name in names) or reply.describe()))
        calls: list[tuple[str, dict[str, Any]]] = [
            ("list_drafts", {}),
            ("create_draft", {"title": TITLE, "body": BODY}),
        ]
        for name, arguments in calls:
            reply = await client.request("tools/call", {"name": name, "arguments": arguments}, probe=probe)
            step(SessionStep(revision.name, f"tools/call {name}", _reply_answer(reply)))
        created = reply.result.get("structuredContent") if reply.ok else None
        if isinstance(created, dict) and isinstance(created.get("id"), str):
            arguments = {"draft_id": created["id"]}
            reply = await client.request("tools/call", {"name": "read_draft", "arguments": arguments}, probe=probe)
            step(SessionStep(revision.name, "tools/call read_draft", _reply_answer(reply)))
    finally:
        await transport.close()
