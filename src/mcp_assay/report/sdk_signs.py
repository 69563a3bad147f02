"""Which SDK a peer is built on, recognized from what the peer itself shows: never from a guess.

A failure is only the SDK's when the peer is built on that SDK, and the user must be able to check why mcp-assay
thinks so. So recognition rests on *signs*: things a peer shows that its SDK's own code writes, each quoted with
the exchange it was seen in. A server on the official Python SDK answers a request without a session with the
error text ``Bad Request: Missing session ID`` and titles a tool's inputSchema ``<tool>Arguments`` (the pydantic
model its ``MCPServer`` builds); the TypeScript SDK v2 answers a header that disagrees with the body with
``Bad Request: the request headers and body disagree``; the reference server server-everything names itself in
``serverInfo``; the Python SDK's client sends its default ``clientInfo`` (``mcp`` ``0.1.0``), the TypeScript one
probes with ``server/discover`` ids ``server-discover-probe-N``. Every text is the SDK's own (its source, at the
pinned version).

A *strong* sign is one no other known SDK shows; a *weak* one (a Node ``User-Agent``, an error wording others may
share) is only reported beside a strong one. A side is recognized when the signs of exactly one SDK include a
strong one; signs of two SDKs are a note, and nothing is assumed. The observer is fed each exchange once and
keeps one sighting per sign, so it is linear in the traffic and bounded in memory whatever a peer sends.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mcp_assay.report.model import SdkRecognition
from mcp_assay.report.sdks import known_sdk
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Exchange, HttpExchange, answered_by_assay, sent_by_assay

__all__ = ["SIGNS", "Sightings", "Sign", "SdkSigns"]

PYTHON = "mcp"
TS_SERVER = "@modelcontextprotocol/server"
TS_CLIENT = "@modelcontextprotocol/client"
EVERYTHING = "@modelcontextprotocol/server-everything"
Sightings = tuple[dict[int, str], dict[str, list[str]]]
"""What an observer saw: each sign's first sighting (by its place in :data:`SIGNS`), the transports per side."""
MAX_SHOWN = 60
"""A quoted text is cut to this many characters."""


@dataclass(frozen=True, slots=True)
class Sign:
    """One thing a peer shows that tells its SDK."""

    sdk: str
    """The package name of the SDK (as the built-in known findings name it)."""
    side: Side
    strong: bool
    test: Callable[[Message, Exchange], str | None]
    """What the message shows of this sign, in words (``None``: not this sign)."""
    kinds: frozenset[Kind] | None = None
    """The only kinds of message :attr:`test` can find the sign in (``None``: any): the observer asks it of no other,
    so a capture's every message is not put to every sign."""


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…")


def _error_text(message: Message) -> str | None:
    error = message.error
    if message.kind is Kind.ERROR and isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return None


def _error(pattern: str) -> Callable[[Message, Exchange], str | None]:
    """The error text matching ``pattern`` (a regular expression, anchored at the start)."""
    compiled = re.compile(pattern)

    def test(message: Message, item: Exchange) -> str | None:
        text = _error_text(message)
        return f"the error text {_quoted(text)}" if text is not None and compiled.match(text) else None

    return test


def _argument_titles(message: Message, item: Exchange) -> str | None:
    """A tools/list result whose tool's inputSchema is titled ``<name>Arguments``: the pydantic model the Python
    SDK's MCPServer builds for a decorated function."""
    result = message.result
    tools = result.get("tools") if message.kind is Kind.RESULT and isinstance(result, dict) else None
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        schema = tool.get("inputSchema")
        if isinstance(schema, dict) and schema.get("title") == f"{tool['name']}Arguments":
            return f"tools/list giving {_quoted(tool['name'])} an inputSchema titled {_quoted(schema['title'])}"
    return None


def _server_info(message: Message) -> dict[str, Any] | None:
    result = message.result
    if message.kind is not Kind.RESULT or not isinstance(result, dict):
        return None
    info = result.get("serverInfo")
    meta = result.get("_meta")
    if not isinstance(info, dict) and isinstance(meta, dict):
        info = meta.get("io.modelcontextprotocol/serverInfo")
    return info if isinstance(info, dict) else None


def _everything(message: Message, item: Exchange) -> str | None:
    info = _server_info(message)
    if info is None or info.get("name") != "mcp-servers/everything":
        return None
    return f"serverInfo naming it {_quoted('mcp-servers/everything')}"


def _client_info(message: Message) -> dict[str, Any] | None:
    params = message.params
    if message.kind is not Kind.REQUEST or not isinstance(params, dict):
        return None
    info = params.get("clientInfo") if message.method == "initialize" else None
    meta = params.get("_meta")
    if not isinstance(info, dict) and isinstance(meta, dict):
        info = meta.get("io.modelcontextprotocol/clientInfo")
    return info if isinstance(info, dict) else None


def _python_client_info(message: Message, item: Exchange) -> str | None:
    info = _client_info(message)
    if info is None or info.get("name") != "mcp" or info.get("version") != "0.1.0":
        return None
    return "clientInfo {'name': 'mcp', 'version': '0.1.0'} (the SDK's default)"


def _discover_probe_id(message: Message, item: Exchange) -> str | None:
    ident = message.id
    if (
        message.method == "server/discover"
        and isinstance(ident, str)
        and re.fullmatch(r"server-discover-probe-\d+", ident)
    ):
        return f"server/discover sent with the id {_quoted(ident)}"
    return None


def _user_agent(pattern: str) -> Callable[[Message, Exchange], str | None]:
    compiled = re.compile(pattern)

    def test(message: Message, item: Exchange) -> str | None:
        if not isinstance(item, HttpExchange) or message.index != 0:
            return None
        agent = item.request.headers.get("user-agent")
        return f"the User-Agent {_quoted(agent)}" if agent is not None and compiled.match(agent) else None

    return test


_ERRORS = frozenset({Kind.ERROR})
_RESULTS = frozenset({Kind.RESULT})
_REQUESTS = frozenset({Kind.REQUEST})

SIGNS: tuple[Sign, ...] = (
    # the official Python SDK (mcp): src/mcp/server/streamable_http.py, _streamable_http_modern.py,
    # shared/inbound.py, server/mcpserver (prompts/base.py, utilities/func_metadata.py)
    Sign(PYTHON, Side.SERVER, True, _error(r"Bad Request: Missing session ID$"), _ERRORS),
    Sign(PYTHON, Side.SERVER, True, _error(r"Body must be a single JSON-RPC request or notification object$"), _ERRORS),
    Sign(PYTHON, Side.SERVER, True, _error(r"params\._meta is missing the required envelope key\(s\): "), _ERRORS),
    Sign(PYTHON, Side.SERVER, True, _error(r"Missing required arguments: \{'"), _ERRORS),
    Sign(PYTHON, Side.SERVER, True, _argument_titles, _RESULTS),
    Sign(PYTHON, Side.SERVER, False, _error(r"Unknown (?:prompt|resource): "), _ERRORS),
    # the TypeScript SDK v2 (@modelcontextprotocol/server): its Streamable HTTP handler and McpServer
    Sign(TS_SERVER, Side.SERVER, True, _error(r"Bad Request: the request headers and body disagree"), _ERRORS),
    Sign(
        TS_SERVER,
        Side.SERVER,
        True,
        _error(r"Bad Request: JSON-RPC batches may not contain requests for protocol"),
        _ERRORS,
    ),
    Sign(TS_SERVER, Side.SERVER, False, _error(r"(?:Tool|Prompt) .+ not found$"), _ERRORS),
    Sign(TS_SERVER, Side.SERVER, False, _error(r"Parse error: Invalid JSON$"), _ERRORS),
    # the reference server server-everything (on the TypeScript SDK 1.x)
    Sign(EVERYTHING, Side.SERVER, True, _everything, _RESULTS),
    # the clients
    Sign(PYTHON, Side.CLIENT, True, _python_client_info, _REQUESTS),
    Sign(PYTHON, Side.CLIENT, False, _user_agent(r"python-httpx2/")),
    Sign(TS_CLIENT, Side.CLIENT, True, _discover_probe_id),
    Sign(TS_CLIENT, Side.CLIENT, False, _user_agent(r"node$")),
)
"""Every sign, in the order they are reported."""


class SdkSigns:
    """Feed it every exchange (:meth:`see`); :meth:`recognitions` says which SDK each side is built on, and why."""

    def __init__(self, signs: Iterable[Sign] = SIGNS) -> None:
        self._order = list(signs)
        self._signs = {
            (side, kind): [
                (key, sign)
                for key, sign in enumerate(self._order)
                if sign.side is side and (sign.kinds is None or kind in sign.kinds)
            ]
            for side in (Side.SERVER, Side.CLIENT)
            for kind in Kind
        }
        """The signs to look for in a message, by its sender and kind (:attr:`Sign.kinds`)."""
        self._seen: dict[int, str] = {}
        """Sign (its position in the list) -> what was seen, and where: its first sighting only."""
        self._transports: dict[Side, set[str]] = {Side.SERVER: set(), Side.CLIENT: set()}

    def see(self, item: Exchange) -> None:
        """Look at the messages of one exchange: the server's (unless mcp-assay answered in its place) and the
        client's (unless mcp-assay sent the request itself)."""
        if not item.messages:
            return
        theirs = {Side.SERVER: not answered_by_assay(item), Side.CLIENT: not sent_by_assay(item)}
        for message in item.messages:
            side = message.sender
            if side not in theirs or not theirs[side]:
                continue
            if message.transport:
                self._transports[side].add(message.transport)
            for key, sign in self._signs[(side, message.kind)]:
                if key in self._seen:
                    continue
                try:
                    shown = sign.test(message, item)
                except Exception:  # noqa: BLE001 - a peer's odd message is never a crash of the report
                    shown = None
                if shown is not None:
                    self._seen[key] = f"{shown} (exchange {item.id})"

    def sightings(self) -> Sightings:
        """What was seen so far, as plain data (it crosses processes): each sign's first sighting, the transports."""
        return dict(self._seen), {side.value: sorted(found) for side, found in self._transports.items()}

    def absorb(self, sightings: Sightings) -> None:
        """Take in what another observer saw (of traffic after this one's): its first sightings count where this
        one saw none, as if it had been fed that traffic itself."""
        seen, transports = sightings
        for key, shown in seen.items():
            self._seen.setdefault(key, shown)
        for side, found in transports.items():
            self._transports[Side(side)].update(found)

    def recognitions(self) -> tuple[list[SdkRecognition], list[str]]:
        """The SDK recognized on each side (at most one), and a note for each side whose signs disagree."""
        found: list[SdkRecognition] = []
        notes: list[str] = []
        for side in (Side.SERVER, Side.CLIENT):
            by_sdk: dict[str, list[tuple[Sign, str]]] = {}
            for key, shown in sorted(self._seen.items()):
                sign = self._order[key]
                if sign.side is side:
                    by_sdk.setdefault(sign.sdk, []).append((sign, shown))
            candidates = [name for name, signs in by_sdk.items() if any(sign.strong for sign, _ in signs)]
            if len(candidates) > 1:
                shown = "; ".join(f"{name}: {by_sdk[name][0][1]}" for name in candidates)
                notes.append(
                    f"the {side.value} shows signs of several SDKs ({shown}): no SDK is assumed, so no failure is "
                    "attributed to one; --sdk NAME@VERSION names it"
                )
                continue
            if not candidates:
                continue
            sdk = known_sdk(candidates[0])
            if sdk is None:
                continue
            signs = sorted(by_sdk[candidates[0]], key=lambda pair: not pair[0].strong)
            found.append(
                SdkRecognition(
                    side=side.value,
                    name=sdk.name,
                    version=sdk.version,
                    label=sdk.label,
                    signs=tuple(shown for _, shown in signs),
                    transports=tuple(sorted(self._transports[side])),
                )
            )
        return found, notes
