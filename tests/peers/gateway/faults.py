"""The seeded relay faults, one small function each, selected by name (``--fault NAME``, repeatable).

Each fault is a function registered at one hook of the relay; the faithful gateway runs no fault
function and behaves as the specification asks at every hook. Hooks:

- ``to_client(message, exchange)``: a message on its way to the client, after the faithful mapping
  (ids, progress tokens and subscription ids back to the client's, tool names prefixed); returns
  the message to send, or None to drop it;
- ``to_upstream_headers(headers, exchange)``: the headers of a request on its way upstream;
- ``cancel(notification, exchange)``: a client's ``notifications/cancelled`` on its way upstream
  (None: not forwarded); ``keep_working(exchange)``: whether a request whose client went away
  (the 2026 cancellation) is left running upstream;
- ``stream(exchange)``: how a request's event stream reaches the client ("relay", "hold" or "strip");
- ``origin_allowed(origin)``, ``parse_error()``, ``share_upstream_session()``,
  ``event_targets(own, everyone)``, ``session_gone_status()``: the front's checks and sessions.

``FAULTS`` lists them; ``python -m tests.peers.gateway --list-faults`` prints the list.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.peers.gateway.relay import Exchange


SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LISTEN = "subscriptions/listen"


@dataclass
class Fault:
    name: str
    summary: str
    seen: str = ""
    """Where the fault shows: "front" (the client's hop alone), "back" (the upstream's hop alone), or "hops
    compared" (only the two hops side by side); "two principals" when it needs two users."""
    hooks: dict[str, Callable[..., Any]] = field(default_factory=dict)


FAULTS: dict[str, Fault] = {}


def fault(name: str, hook: str, seen: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``function`` as fault ``name`` at ``hook`` (a fault may act at several hooks); its docstring
    says what the fault does."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        entry = FAULTS.setdefault(name, Fault(name, ""))
        entry.summary = entry.summary or (function.__doc__ or "").strip().rstrip(".")
        entry.seen = entry.seen or seen
        entry.hooks[hook] = function
        return function

    return register


# -- what reaches the client ------------------------------------------------------------------------------


@fault("strip-notifications", "stream", seen="hops compared")
def strip_notifications(exchange: Exchange) -> str:
    """the POST's event stream ends at the response: notifications during a call are dropped."""
    return "strip"


@fault("hold-notifications", "stream", seen="hops compared")
def hold_notifications(exchange: Exchange) -> str:
    """the whole event stream is buffered: notifications arrive with the response, at the end."""
    return "hold"


@fault("drop-cursor", "to_client", seen="hops compared")
def drop_cursor(message: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """list results lose nextCursor, so the pages after the first are unreachable."""
    result = message.get("result")
    if isinstance(result, dict):
        result.pop("nextCursor", None)
    return message


@fault("rewrite-error-code", "to_client", seen="hops compared")
def rewrite_error_code(message: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """error codes are rewritten: -32601 becomes -32602, every other code -32603."""
    error = message.get("error")
    if isinstance(error, dict) and "code" in error:
        error["code"] = -32602 if error["code"] == -32601 else -32603
    return message


@fault("made-up-error-id", "to_client", seen="front")
def made_up_error_id(message: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """an error answer carries the gateway's upstream id, not the client's request id."""
    if "error" in message and "id" in message:
        message["id"] = exchange.back_id
    return message


@fault("progress-token-unmapped", "to_client", seen="front")
def progress_token_unmapped(message: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """progress notifications keep the gateway's own progress token."""
    params = message.get("params")
    if message.get("method") == "notifications/progress" and isinstance(params, dict):
        if exchange.back_progress is not None and params.get("progressToken") == exchange.front_progress:
            params["progressToken"] = exchange.back_progress
    return message


@fault("subscription-id-unmapped", "to_client", seen="front")
def subscription_id_unmapped(message: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """events on a subscriptions/listen stream carry the gateway's upstream subscription id, not the client's."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID) == exchange.front_id and exchange.method == LISTEN:
        meta[SUBSCRIPTION_ID] = exchange.back_id
    return message


@fault("alter-content", "to_client", seen="hops compared")
def alter_content(message: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """structuredContent values become strings and blobs are re-encoded through text."""
    result = message.get("result")
    if not isinstance(result, dict):
        return message
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        result["structuredContent"] = {key: _as_text(value) for key, value in structured.items()}
    for item in result.get("contents") or []:
        if isinstance(item, dict) and isinstance(item.get("blob"), str):
            text = base64.b64decode(item["blob"]).decode("utf-8", errors="replace")
            item["blob"] = base64.b64encode(text.encode("utf-8")).decode()
    return message


# -- what reaches the upstream ----------------------------------------------------------------------------


@fault("drop-version", "to_upstream_headers", seen="back")
def drop_version(headers: dict[str, str], exchange: Exchange) -> dict[str, str]:
    """MCP-Protocol-Version is not forwarded upstream."""
    headers.pop("mcp-protocol-version", None)
    return headers


@fault("stale-mcp-name", "to_upstream_headers", seen="back")
def stale_mcp_name(headers: dict[str, str], exchange: Exchange) -> dict[str, str]:
    """a prefixed tool name is stripped in the body but Mcp-Name keeps the prefix."""
    front = exchange.front_headers.get("mcp-name")
    if front is not None and "mcp-name" in headers:
        headers["mcp-name"] = front
    return headers


@fault("cancel-client-id", "cancel", seen="back")
def cancel_client_id(notification: dict[str, Any], exchange: Exchange) -> dict[str, Any] | None:
    """a cancellation is forwarded naming the client's request id, not the upstream's."""
    params = notification.get("params")
    if isinstance(params, dict):
        params["requestId"] = exchange.front_id
    return notification


@fault("drop-cancel", "cancel", seen="back")
def drop_cancel(notification: dict[str, Any], exchange: Exchange) -> dict[str, Any] | None:
    """a cancellation is never forwarded (notice dropped, the upstream request left running)."""
    return None


@fault("drop-cancel", "keep_working")
def drop_cancel_keeps_working(exchange: Exchange) -> bool:
    return True


# -- the front's checks and sessions ----------------------------------------------------------------------


@fault("no-origin-check", "origin_allowed", seen="front")
def no_origin_check(origin: str) -> bool:
    """a foreign Origin is served (no Origin check at the front)."""
    return True


@fault("html-parse-error", "parse_error", seen="front")
def html_parse_error() -> tuple[int, str, bytes]:
    """a body that is not JSON gets an HTML error page (500), not -32700."""
    page = b"<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head>"
    page += b"<body><h1>Internal Server Error</h1></body></html>"
    return 500, "text/html; charset=utf-8", page


@fault("shared-session", "share_upstream_session", seen="back, two principals")
def shared_session() -> bool:
    """every client session is relayed on one upstream session (users merged)."""
    return True


@fault("cross-events", "event_targets", seen="front, two principals")
def cross_events(own: Any, everyone: list[Any]) -> list[Any]:
    """an event of one user's session stream is delivered to every open session stream."""
    return list(everyone)


@fault("session-404-as-500", "session_gone_status", seen="hops compared")
def session_404_as_500() -> int:
    """the upstream's 404 for an ended session is relayed as 500."""
    return 500


def _as_text(value: Any) -> Any:
    return value if isinstance(value, str) else str(value)


class Faults:
    """The faults a gateway runs, applied at each hook; with none, every hook is faithful."""

    def __init__(self, names: list[str] | tuple[str, ...] = ()) -> None:
        unknown = sorted(set(names) - set(FAULTS))
        if unknown:
            raise ValueError(f"unknown fault(s): {', '.join(unknown)}; known: {', '.join(sorted(FAULTS))}")
        self.names = tuple(dict.fromkeys(names))
        self._by_hook: dict[str, list[Callable[..., Any]]] = {}
        for name in self.names:
            for hook, function in FAULTS[name].hooks.items():
                self._by_hook.setdefault(hook, []).append(function)

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def _at(self, hook: str) -> list[Callable[..., Any]]:
        return self._by_hook.get(hook, [])

    def to_client(self, message: dict[str, Any], exchange: Exchange) -> dict[str, Any] | None:
        for function in self._at("to_client"):
            message = function(message, exchange)
        return message

    def to_upstream_headers(self, headers: dict[str, str], exchange: Exchange) -> dict[str, str]:
        for function in self._at("to_upstream_headers"):
            headers = function(headers, exchange)
        return headers

    def cancel(self, notification: dict[str, Any], exchange: Exchange) -> dict[str, Any] | None:
        for function in self._at("cancel"):
            result = function(notification, exchange)
            if result is None:
                return None
            notification = result
        return notification

    def keep_working(self, exchange: Exchange) -> bool:
        return any(function(exchange) for function in self._at("keep_working"))

    def stream(self, exchange: Exchange) -> str:
        modes = [function(exchange) for function in self._at("stream")]
        return modes[-1] if modes else "relay"

    def origin_allowed(self, origin: str, allowed: frozenset[str]) -> bool:
        return origin in allowed or any(function(origin) for function in self._at("origin_allowed"))

    def parse_error(self) -> tuple[int, str, bytes] | None:
        functions = self._at("parse_error")
        return functions[-1]() if functions else None

    def share_upstream_session(self) -> bool:
        return any(function() for function in self._at("share_upstream_session"))

    def event_targets(self, own: Any, everyone: list[Any]) -> list[Any]:
        targets = [own]
        for function in self._at("event_targets"):
            targets = function(own, everyone)
        return targets

    def session_gone_status(self) -> int:
        functions = self._at("session_gone_status")
        return functions[-1]() if functions else 404
