"""A small MCP server written to be broken on purpose, one bug at a time.

Without a bug it serves 2026-07-28 (and, unless told not to, the 2025-11-25 handshake) the way the
specification asks, closely enough that a suite run against it finds nothing to fail. Each name in
:data:`BUGS` switches on exactly one deviation, so a test can check that the suite reports that
bug — with the right requirement ID — and nothing else, and that blocked-by grouping collapses the
cascades a broken prerequisite would otherwise cause.

The logic is a pure function of one request (:meth:`Server.handle`), so the same server runs in
process behind ``httpx.MockTransport`` (unit tests), as a Starlette app under uvicorn, and over
stdio (``app.py``).
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
SUB = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "broken-suite", "version": "1.0.0"}}

BUGS = {
    "discover-no-cache-hints": "server/discover answers without ttlMs and cacheScope (VER-07, RES-06)",
    "mismatch-accepted": "a MCP-Protocol-Version header that disagrees with _meta is served (HTTP-09)",
    "unsupported-version-served": "a request naming 1900-01-01 is served instead of refused (VER-03)",
    "parse-error-code": "invalid JSON gets -32600 instead of -32700 (RPC-12)",
    "unknown-method-200": "an unknown method gets HTTP 200 with -32601 instead of 404 (HTTP-25)",
    "tool-without-input-schema": "tools/list lists a tool without inputSchema (TOOL-05)",
    "prompt-bad-role": "prompts/get answers a message with role 'system' (PRM-06)",
    "missing-resource-empty": "a read of a resource that does not exist answers contents: [] (RSRC-09)",
    "cursor-loop": "the second tools/list page hands back the cursor it was asked with (PAGE-04)",
    "completion-too-many": "completion/complete answers 101 values (COMP-04)",
    "ack-without-subscription-id": "the listen acknowledgement carries no subscriptionId (SUB-04)",
    "asks-without-capability": "a tool asks for elicitation the request did not declare (MRTR-05)",
    "initialize-echoes-unsupported": "initialize echoes an unsupported protocolVersion (HS-06)",
    "no-discover": "server/discover is not implemented: 404 and -32601 (VER-06)",
    "no-result-type": "results carry no resultType (RES-01)",
    "legacy-gets-2026-envelope": "2025 session results carry resultType, ttlMs, cacheScope, _meta serverInfo (HS-16)",
    "stdout-banner": "the stdio server prints a banner line on stdout first (STDIO-02)",
    "exit-on-invalid-json": "the stdio server exits when it reads a line that is not JSON",
    "refuses-without-client-info": "a 2026 request without _meta clientInfo is refused with -32602 (META-10)",
    "listed-resource-fails": "a second listed resource cannot be read: -32603 (RSRC-05)",
    "duplicate-prompt-names": "prompts/list lists two prompts named greet (PRM-04)",
    "duplicate-template-names": "resources/templates/list lists two templates named files (RSRC-11)",
    "discover-no-versions": "server/discover answers supportedVersions: [] (VER-07)",
    "discover-undated-versions": "server/discover lists 'latest' among supportedVersions (VER-07)",
    "host-unchecked": "a request naming a foreign Host is served (no requirement: a note)",
    "version-header-optional": "a 2026 POST without MCP-Protocol-Version is served, though 2025-03-26 is not (HTTP-26)",
    "capabilities-drift": "after a tools/call, server/discover also names logging, within its ttlMs (VER-16)",
    "initialize-without-server-info": "the initialize result carries no serverInfo (HS-04)",
    "updated-without-subscription-id": "notifications/resources/updated on a listen stream lacks its subscriptionId"
    " (SUB-08; the server then serves subscriptions)",
    "ended-session-text-404": "a request in an unknown or ended 2025 session gets 404 with a text body and no"
    " Content-Type (HTTP-07's error-body clause, inferred: SHOULD)",
    "call-without-content": "tools/call results carry no content (TOOL-09, RES-04)",
}

TOOLS = [
    {
        "name": "echo",
        "description": "Echo a message.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "now",
        "description": "A fixed time.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "object", "properties": {"time": {"type": "string"}}, "required": ["time"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "ask",
        "description": "Asks the user for confirmation through elicitation.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
PROMPTS = [
    {"name": "greet", "description": "Greet someone.", "arguments": [{"name": "who", "required": True}]},
]
RESOURCES = [{"uri": "file:///broken/readme.txt", "name": "readme", "mimeType": "text/plain"}]
TEMPLATES = [{"uriTemplate": "file:///broken/{name}", "name": "files"}]
FLAKY = {"uri": "file:///broken/flaky.txt", "name": "flaky", "mimeType": "text/plain"}
NOTES = {"uri": "file:///broken/notes.txt", "name": "notes", "mimeType": "text/plain"}
"""Listed when the server serves subscriptions: ``append_note`` changes it, and its listeners hear of it."""
APPEND_NOTE = {
    "name": "append_note",
    "description": "Append a line to the notes resource.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"destructiveHint": False},
}
"""Listed under ``listed-resource-fails``; every read of it fails inside the server."""


@dataclass
class Answer:
    """What to send back: a status, headers, and either one JSON body or SSE events."""

    status: int
    body: Any = None
    """The JSON body; ``bytes`` are sent as they are, with no Content-Type."""
    events: list[Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    keep_open: bool = False
    """An event stream that stays open after ``events`` (a listen stream)."""
    exit: bool = False
    """The stdio server should exit after this answer."""
    feed: list[Any] | None = None
    """Events appended while a kept-open stream lasts (a listen stream's notifications), sent as they come."""


def _error(code: int, message: str, ident: Any = None, data: Any = None, *, has_id: bool = True) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body: dict[str, Any] = {"jsonrpc": "2.0", "error": error}
    if has_id:
        body["id"] = ident
    return body


def _result(ident: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


STATUS = {-32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400, -32022: 400, -32601: 404}


def _decode_header(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return "\x00invalid"
    return value


def _bad_chars(value: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) > 0x7E for ch in value if ch != "\t")


class _Bugs(str):
    """Several bugs at once (``"cursor-loop,prompt-bad-role"``): equal to each bug it names, so every
    ``self.bug == NAME`` below holds for each of them."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other in self.split(",")

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__


class Server:
    """One server instance; ``bug`` is a key of :data:`BUGS` (or several, comma-separated) or ``None``."""

    def __init__(self, bug: str | None = None, *, handshake: bool = True, subscribe: bool = False) -> None:
        unknown = [name for name in (bug or "").split(",") if bug is not None and name not in BUGS]
        if unknown:
            raise ValueError(f"unknown bug {unknown[0]!r}; choose from {', '.join(BUGS)}")
        self.bug = _Bugs(bug) if bug is not None else None
        self.handshake = handshake
        self.subscribe = subscribe or bug == "updated-without-subscription-id"
        """Serve resource subscriptions on listen streams (and the notes resource with its write tool)."""
        self.listeners: list[tuple[Any, list[str], list[Any]]] = []
        """Open listen streams: (listen id, subscribed URIs, the stream's feed)."""
        self.sessions: set[str] = set()
        self.called = False
        """A tools/call was served (``capabilities-drift`` changes discover's answer from then on)."""
        self.stdio_era: str | None = None
        """A stdio connection serves the era of its first request."""
        self._next_session = 0

    # -- entry points ----------------------------------------------------------------------------
    def handle_http(self, method: str, headers: dict[str, str], body: bytes) -> Answer:
        """One HTTP request (header names lower-cased)."""
        origin = headers.get("origin")
        if origin is not None and not origin.startswith(("http://127.0.0.1", "http://localhost")):
            return Answer(403, _error(-32600, "Forbidden origin", has_id=False))
        host = headers.get("host", "127.0.0.1").rsplit(":", 1)[0]
        if host not in ("127.0.0.1", "localhost", "[::1]") and self.bug != "host-unchecked":
            return Answer(403, _error(-32600, "Forbidden host", has_id=False))
        if method != "POST":
            session = headers.get("mcp-session-id")
            if method == "DELETE" and session in self.sessions:
                self.sessions.discard(session)
                return Answer(200)
            return Answer(405, headers={"allow": "POST"})
        try:
            payload = json.loads(body)
        except ValueError:
            code = -32600 if self.bug == "parse-error-code" else -32700
            return Answer(400, _error(code, "Parse error", has_id=False))
        if isinstance(payload, list):
            return Answer(400, _error(-32600, "Batches are not supported", has_id=False))
        version_header = headers.get("mcp-protocol-version")
        legacy_header = version_header is None or version_header == LEGACY or bool(headers.get("mcp-session-id"))
        if _has_envelope(payload) or not legacy_header:
            return self._modern_http(payload, headers, version_header)
        return self._legacy_http(payload, headers)

    def handle_line(self, line: bytes) -> Answer | None:
        """One stdio line; ``None`` when nothing is to be written back."""
        try:
            payload = json.loads(line)
        except ValueError:
            code = -32600 if self.bug == "parse-error-code" else -32700
            return Answer(0, _error(code, "Parse error", has_id=False), exit=self.bug == "exit-on-invalid-json")
        if isinstance(payload, list):
            return Answer(0, _error(-32600, "Batches are not supported", has_id=False))
        if (
            not isinstance(payload, dict)
            or payload.get("jsonrpc") != "2.0"
            or not isinstance(payload.get("method"), str)
        ):
            ident = payload.get("id") if isinstance(payload, dict) else None
            return Answer(0, _error(-32600, "Invalid request", ident))
        if "id" not in payload:
            return None
        if self.stdio_era is None:
            self.stdio_era = "modern" if _has_envelope(payload) else "handshake"
        if self.stdio_era == "handshake":
            return self._legacy(payload)
        if payload["method"] == "initialize":
            return Answer(0, _error(-32601, "Method not found", payload.get("id")))
        return self._modern(payload)

    # -- 2026 ------------------------------------------------------------------------------------
    def _modern_http(self, payload: Any, headers: dict[str, str], version_header: str | None) -> Answer:
        ident = payload.get("id") if isinstance(payload, dict) else None
        if (
            not isinstance(payload, dict)
            or payload.get("jsonrpc") != "2.0"
            or not isinstance(payload.get("method"), str)
        ):
            return Answer(400, _error(-32600, "Invalid request", ident))
        if "id" not in payload:
            return Answer(202)
        method = payload["method"]
        meta = _meta(payload)
        if meta is None or not isinstance(meta.get(PV), str) or not isinstance(meta.get(CAPS), dict):
            if meta is not None and not isinstance(meta.get(PV), str) and version_header:
                return Answer(400, _error(-32020, "protocol version missing from _meta", ident))
            return Answer(400, _error(-32602, "params._meta lacks the required envelope fields", ident))
        if version_header is None and self.bug != "version-header-optional":
            return Answer(400, _error(-32020, "MCP-Protocol-Version header missing", ident))
        version_header = version_header or meta[PV]
        for name in ("mcp-protocol-version", "mcp-method", "mcp-name"):
            if name in headers and _bad_chars(headers[name]):
                return Answer(400, _error(-32020, f"{name} holds invalid characters", ident))
        if version_header != meta[PV] and self.bug != "mismatch-accepted":
            return Answer(400, _error(-32020, "MCP-Protocol-Version does not match _meta", ident))
        if headers.get("mcp-method") != method:
            return Answer(400, _error(-32020, "Mcp-Method does not match the body", ident))
        params = payload.get("params") or {}
        if method in ("tools/call", "prompts/get", "resources/read"):
            wanted = params.get("uri" if method == "resources/read" else "name")
            name = headers.get("mcp-name")
            if name is None or _decode_header(name) != wanted:
                return Answer(400, _error(-32020, "Mcp-Name does not match the body", ident))
        answer = self._modern(payload)
        if answer.status == 0:
            answer.status = 200
            body = answer.body
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                code = body["error"].get("code")
                answer.status = STATUS.get(code, 200)
                if code == -32601 and self.bug == "unknown-method-200":
                    answer.status = 200
        return answer

    def _modern(self, payload: dict[str, Any]) -> Answer:
        ident = payload.get("id")
        method = payload["method"]
        params = payload.get("params") if isinstance(payload.get("params"), dict) else {}
        meta = params.get("_meta") or {}
        if not isinstance(meta.get(PV), str) or not isinstance(meta.get(CAPS), dict):
            return Answer(0, _error(-32602, "params._meta lacks the required envelope fields", ident))
        if "io.modelcontextprotocol/clientInfo" not in meta and self.bug == "refuses-without-client-info":
            return Answer(0, _error(-32602, "clientInfo is required", ident))
        if meta[PV] != MODERN and self.bug != "unsupported-version-served":
            data = {"supported": [MODERN], "requested": meta[PV]}
            return Answer(0, _error(-32022, "Unsupported protocol version", ident, data))
        if "io.modelcontextprotocol/logLevel" in meta and meta["io.modelcontextprotocol/logLevel"] not in (
            "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
        ):  # fmt: skip
            return Answer(0, _error(-32602, "Unknown log level", ident))
        handler = getattr(self, "_m_" + method.replace("/", "_"), None)
        if handler is None or (method == "server/discover" and self.bug == "no-discover"):
            return Answer(0, _error(-32601, "Method not found", ident))
        answer: Answer = handler(ident, params, meta)
        return answer

    def _complete(self, ident: Any, result: dict[str, Any], *, cache: bool = False) -> Answer:
        if self.bug == "call-without-content" and "content" in result:
            result = {key: value for key, value in result.items() if key != "content"}
        body = {"resultType": "complete", **result, "_meta": dict(SERVER_INFO)}
        if cache:
            body.update({"ttlMs": 60_000, "cacheScope": "public"})
        if self.bug == "no-result-type":
            body.pop("resultType")
        return Answer(0, _result(ident, body))

    def _m_server_discover(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        capabilities: dict[str, Any] = {"tools": {}, "prompts": {}, "resources": {}, "completions": {}}
        if self.subscribe:
            capabilities["resources"] = {"subscribe": True}
        if self.called and self.bug == "capabilities-drift":
            capabilities["logging"] = {}
        odd = {"discover-no-versions": [], "discover-undated-versions": [MODERN, "latest"]}
        versions = odd.get(self.bug or "", [MODERN])
        answer = self._complete(ident, {"supportedVersions": versions, "capabilities": capabilities}, cache=True)
        if self.bug == "discover-no-cache-hints":
            answer.body["result"].pop("ttlMs")
            answer.body["result"].pop("cacheScope")
        return answer

    def _page(self, ident: Any, params: dict[str, Any], key: str, items: list[dict[str, Any]]) -> Answer:
        cursor = params.get("cursor")
        if cursor is not None and cursor != "page-2":
            return Answer(0, _error(-32602, "Invalid cursor", ident))
        if key == "tools" and self.bug == "cursor-loop" and cursor is not None:
            return self._complete(ident, {key: items[1:], "nextCursor": "page-2"}, cache=True)
        if key == "tools" and cursor is None:
            return self._complete(ident, {key: items[:1], "nextCursor": "page-2"}, cache=True)
        if key == "tools":
            return self._complete(ident, {key: items[1:]}, cache=True)
        return self._complete(ident, {key: items}, cache=True)

    def _m_tools_list(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        tools = [dict(tool) for tool in TOOLS] + ([APPEND_NOTE] if self.subscribe else [])
        if self.bug == "tool-without-input-schema":
            del tools[0]["inputSchema"]
        return self._page(ident, params, "tools", tools)

    def _m_prompts_list(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        return self._page(ident, params, "prompts", self.prompts())

    def _m_resources_list(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        return self._page(ident, params, "resources", self.resources())

    def _m_resources_templates_list(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        return self._page(ident, params, "resourceTemplates", self.templates())

    def prompts(self) -> list[dict[str, Any]]:
        if self.bug == "duplicate-prompt-names":
            return [*PROMPTS, {**PROMPTS[0], "description": "Greet someone else."}]
        return PROMPTS

    def resources(self) -> list[dict[str, Any]]:
        extra = ([FLAKY] if self.bug == "listed-resource-fails" else []) + ([NOTES] if self.subscribe else [])
        return [*RESOURCES, *extra]

    def templates(self) -> list[dict[str, Any]]:
        if self.bug == "duplicate-template-names":
            return [*TEMPLATES, {"uriTemplate": "file:///broken/archive/{name}", "name": TEMPLATES[0]["name"]}]
        return TEMPLATES

    def _m_tools_call(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        self.called = True
        name = params.get("name")
        arguments = params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return Answer(0, _error(-32602, "Invalid tools/call params", ident))
        if name == "echo":
            if not isinstance(arguments.get("message"), str):
                # input validation failures are tool execution errors (the channel BEH-03 prefers)
                return self._complete(ident, {"content": [{"type": "text", "text": "echo needs a string message"}],
                                              "isError": True})  # fmt: skip
            return self._complete(ident, {"content": [{"type": "text", "text": arguments["message"]}]})
        if name == "now":
            structured = {"time": "2026-01-01T00:00:00Z"}
            return self._complete(
                ident, {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}
            )
        if name == "append_note" and self.subscribe and isinstance(arguments.get("text"), str):
            self._updated(NOTES["uri"])
            return self._complete(ident, {"content": [{"type": "text", "text": "appended"}]})
        if name == "ask":
            declared = meta.get(CAPS, {})
            if "elicitation" not in declared and self.bug != "asks-without-capability":
                return Answer(0, _error(-32021, "ask needs elicitation", ident, {"requiredCapabilities": {
                    "elicitation": {}}}))  # fmt: skip
            if "inputResponses" in params and isinstance(params["inputResponses"], dict):
                if params.get("requestState") != "state-1":
                    return Answer(0, _error(-32602, "Invalid requestState", ident))
                if "confirm" in params["inputResponses"]:
                    return self._complete(ident, {"content": [{"type": "text", "text": "confirmed"}]})
            elif "inputResponses" in params:
                return Answer(0, _error(-32602, "inputResponses must be an object", ident))
            request = {"method": "elicitation/create", "params": {"mode": "form", "message": "Confirm?",
                       "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}  # fmt: skip
            body = {"resultType": "input_required", "inputRequests": {"confirm": request}, "requestState": "state-1"}
            return Answer(0, _result(ident, {**body, "_meta": dict(SERVER_INFO)}))
        return Answer(0, _error(-32602, f"Unknown tool: {name}", ident))

    def _m_prompts_get(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        if params.get("name") != "greet":
            return Answer(0, _error(-32602, "Unknown prompt", ident))
        arguments = params.get("arguments") or {}
        if not isinstance(arguments.get("who"), str):
            return Answer(0, _error(-32602, "greet needs the argument who", ident))
        role = "system" if self.bug == "prompt-bad-role" else "user"
        message = {"role": role, "content": {"type": "text", "text": f"Say hello to {arguments['who']}."}}
        return self._complete(ident, {"messages": [message]})

    def _m_resources_read(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        uri = params.get("uri")
        if not isinstance(uri, str) or " " in uri or ":" not in uri:
            return Answer(0, _error(-32602, "Invalid URI", ident))
        if uri == FLAKY["uri"] and self.bug == "listed-resource-fails":
            return Answer(0, _error(-32603, "Internal error: the backing store is unavailable", ident))
        if uri == NOTES["uri"] and self.subscribe:
            return self._complete(ident, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "notes"}]},
                                  cache=True)  # fmt: skip
        if uri != RESOURCES[0]["uri"]:
            if self.bug == "missing-resource-empty":
                return self._complete(ident, {"contents": []}, cache=True)
            return Answer(0, _error(-32602, "Resource not found", ident, {"uri": uri}))
        contents = [{"uri": uri, "mimeType": "text/plain", "text": "broken on purpose"}]
        return self._complete(ident, {"contents": contents}, cache=True)

    def _m_completion_complete(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        ref = params.get("ref") if isinstance(params.get("ref"), dict) else {}
        if ref.get("type") == "ref/prompt" and ref.get("name") != "greet":
            return Answer(0, _error(-32602, "Unknown prompt", ident))
        count = 101 if self.bug == "completion-too-many" else 2
        values = [f"value-{number}" for number in range(count)]
        return self._complete(ident, {"completion": {"values": values, "total": count, "hasMore": False}})

    def _m_subscriptions_listen(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        granted: dict[str, Any] = {}  # no list-changed capability is advertised; subscribe only when serving them
        asked = params.get("notifications") if isinstance(params.get("notifications"), dict) else {}
        uris = asked.get("resourceSubscriptions")
        known = {item["uri"] for item in self.resources()}
        if self.subscribe and isinstance(uris, list):
            granted["resourceSubscriptions"] = [uri for uri in uris if uri in known]
        ack_meta = {} if self.bug == "ack-without-subscription-id" else {SUB: ident}
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": granted, "_meta": ack_meta},
        }
        feed: list[Any] = []
        if granted.get("resourceSubscriptions"):
            self.listeners.append((ident, list(granted["resourceSubscriptions"]), feed))
        return Answer(0, events=[ack], keep_open=True, feed=feed)

    def _updated(self, uri: str) -> None:
        """Tell every listen stream subscribed to ``uri`` that it changed."""
        for ident, uris, feed in self.listeners:
            if uri in uris:
                meta = {} if self.bug == "updated-without-subscription-id" else {SUB: ident}
                feed.append({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                             "params": {"uri": uri, "_meta": meta}})  # fmt: skip

    # -- 2025 ------------------------------------------------------------------------------------
    def _legacy_http(self, payload: Any, headers: dict[str, str]) -> Answer:
        ident = payload.get("id") if isinstance(payload, dict) else None
        if isinstance(payload, dict) and "method" not in payload and ("result" in payload or "error" in payload):
            return Answer(202)  # 2025 clients may POST responses; one answering nothing is simply dropped
        if (
            not isinstance(payload, dict)
            or payload.get("jsonrpc") != "2.0"
            or not isinstance(payload.get("method"), str)
        ):
            return Answer(400, _error(-32600, "Invalid request", ident))
        if not self.handshake:
            return Answer(400, _error(-32022, "Only 2026-07-28 is served", ident, {"supported": [MODERN],
                                                                                   "requested": LEGACY}))  # fmt: skip
        session = headers.get("mcp-session-id")
        if payload["method"] == "initialize":
            answer = self._legacy(payload)
            if isinstance(answer.body, dict) and "result" in answer.body:
                self._next_session += 1
                session_id = f"session-{self._next_session}-{secrets.token_hex(16)}"  # unguessable (AUTH-34)
                self.sessions.add(session_id)
                answer.headers["mcp-session-id"] = session_id
            answer.status = 200
            return answer
        if session is None:
            return Answer(400, _error(-32600, "Missing session", ident))
        if session not in self.sessions:
            if self.bug == "ended-session-text-404":
                return Answer(404, b"Session not found")
            return Answer(404, _error(-32600, "Session not found", ident))
        version = headers.get("mcp-protocol-version")
        if version is not None and version != LEGACY:
            return Answer(400, _error(-32600, "Unsupported MCP-Protocol-Version", ident))
        if "id" not in payload:
            return Answer(202)
        answer = self._legacy(payload)
        answer.status = 200
        return answer

    def _legacy(self, payload: dict[str, Any]) -> Answer:
        answer = self._legacy_answer(payload)
        result = answer.body.get("result") if isinstance(answer.body, dict) else None
        result = result if isinstance(result, dict) else None
        if self.bug == "legacy-gets-2026-envelope" and payload["method"] not in ("initialize", "ping") and result:
            result.update({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "_meta": SERVER_INFO})
        return answer

    def _legacy_answer(self, payload: dict[str, Any]) -> Answer:
        ident = payload.get("id")
        method = payload["method"]
        params = payload.get("params") if isinstance(payload.get("params"), dict) else {}
        if method == "initialize":
            if not self.handshake:
                return Answer(0, _error(-32022, "Only 2026-07-28 is served", ident, {"supported": [MODERN]}))
            requested = params.get("protocolVersion")
            version = requested if self.bug == "initialize-echoes-unsupported" else LEGACY
            capabilities = {"tools": {}, "prompts": {}, "resources": {}}
            result = {"protocolVersion": version, "capabilities": capabilities,
                      "serverInfo": {"name": "broken-suite", "version": "1.0.0"}}  # fmt: skip
            if self.bug == "initialize-without-server-info":
                del result["serverInfo"]
            return Answer(0, _result(ident, result))
        if method == "ping":
            return Answer(0, _result(ident, {}))
        if method.endswith("/list") and params.get("cursor") is not None:
            return Answer(0, _error(-32602, "Invalid cursor", ident))
        if method == "tools/list":
            return Answer(0, _result(ident, {"tools": [tool for tool in TOOLS if tool["name"] != "ask"]}))
        if method == "prompts/list":
            return Answer(0, _result(ident, {"prompts": self.prompts()}))
        if method in ("resources/list", "resources/templates/list"):
            key = "resources" if method == "resources/list" else "resourceTemplates"
            return Answer(0, _result(ident, {key: self.resources() if key == "resources" else self.templates()}))
        if method == "tools/call":
            name = params.get("name")
            arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else None
            if arguments is None and "arguments" in params:
                return Answer(0, _error(-32602, "arguments must be an object", ident))
            if name == "now":
                structured = {"time": "2026-01-01T00:00:00Z"}
                content = [{"type": "text", "text": json.dumps(structured)}]
                return Answer(0, _result(ident, {"content": content, "structuredContent": structured}))
            if name == "echo" and isinstance((arguments or {}).get("message"), str):
                return Answer(0, _result(ident, {"content": [{"type": "text", "text": (arguments or {})["message"]}]}))
            if name == "echo":
                return Answer(0, _result(ident, {"content": [{"type": "text", "text": "echo needs a string message"}],
                                                 "isError": True}))  # fmt: skip
            return Answer(0, _error(-32602, "Unknown tool", ident))
        if method == "prompts/get":
            arguments = params.get("arguments") or {}
            if params.get("name") != "greet" or not isinstance(arguments.get("who"), str):
                return Answer(0, _error(-32602, "Unknown prompt or missing argument", ident))
            message = {"role": "user", "content": {"type": "text", "text": f"Say hello to {arguments['who']}."}}
            return Answer(0, _result(ident, {"messages": [message]}))
        if method == "resources/read":
            uri = params.get("uri")
            if uri == FLAKY["uri"] and self.bug == "listed-resource-fails":
                return Answer(0, _error(-32603, "Internal error: the backing store is unavailable", ident))
            if uri != RESOURCES[0]["uri"]:
                return Answer(0, _error(-32002, "Resource not found", ident, {"uri": uri}))
            contents = [{"uri": uri, "mimeType": "text/plain", "text": "broken on purpose"}]
            return Answer(0, _result(ident, {"contents": contents}))
        return Answer(0, _error(-32601, "Method not found", ident))


def _has_envelope(payload: Any) -> bool:
    """The body carries a 2026-style ``_meta`` (whatever it is missing)."""
    if not isinstance(payload, dict):
        return False
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and (PV in meta or CAPS in meta)


def _meta(payload: Any) -> dict[str, Any] | None:
    if not isinstance(payload, dict):
        return None
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) and PV in meta else None
