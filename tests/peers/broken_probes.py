"""The broken-suite server plus two tools for the envelope, header and channel probes, broken one bug at a time.

:class:`ProbeServer` extends :class:`tests.peers.broken_suite.core.Server` (which it serves unchanged
otherwise) with

* ``lookup`` — ``region`` (string) and ``limit`` (integer, optional) marked with ``x-mcp-header``,
  a strict ``inputSchema`` (``additionalProperties: false``), ``Mcp-Param-*`` headers checked the way
  the specification asks (missing or different after decoding: ``400`` and ``-32020``; integers
  compared as numbers; nothing demanded for an absent argument), invalid arguments answered as a
  tool result with ``isError: true``;
* ``explode`` — always fails, reported as a tool result with ``isError: true``.

Without a bug a suite run finds nothing to fail. Each name in :data:`BUGS` switches on one deviation
that a probe of issue 4 must catch, under the requirement IDs given.

usage: python -m tests.peers.broken_probes http PORT [BUG]
       python -m tests.peers.broken_probes stdio [BUG]
"""

from __future__ import annotations

import json
import sys
from base64 import b64encode
from decimal import Decimal, InvalidOperation
from typing import Any

from tests.peers.broken_suite.core import TOOLS, Answer, Server, _decode_header, _error

BUGS = {
    "routing-headers-ignored": "Mcp-Method and Mcp-Name are not checked at all (BEH-02, HTTP-12, HTTP-13)",
    "unknown-tool-success": "a call of an unknown tool is answered with a plain success (BEH-01, TOOL-12)",
    "unknown-tool-500": "a call of an unknown tool is answered HTTP 500 with -32603 (BEH-01, TOOL-12)",
    "arguments-unvalidated": "lookup serves any arguments, even ones its strict schema forbids (TOOL-14, BEH-03)",
    "arguments-as-protocol-error": "lookup refuses invalid arguments with -32602, not isError (BEH-03 SHOULD)",
    "failure-as-protocol-error": "explode reports its failure as JSON-RPC error -32603 (TOOL-15)",
    "param-headers-ignored": "Mcp-Param-* headers are not checked (HTTP-19, HTTP-16, HTTP-17)",
    "param-integers-as-text": "Mcp-Param-Limit is compared as text, so 42.0 is refused for 42 (HTTP-21)",
    "param-absent-demanded": "Mcp-Param-Limit is demanded even when limit is absent (HTTP-20)",
    "hostile-input-breaks": "after a body that is not JSON, the next request gets HTTP 500 (BEH-09)",
}

LOOKUP = {
    "name": "lookup",
    "description": "Look entries up in one region.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
        },
        "required": ["region"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}
EXPLODE = {
    "name": "explode",
    "description": "Always fails.",
    "inputSchema": {"type": "object", "properties": {}},
}
PARAMS = (("region", "mcp-param-region"), ("limit", "mcp-param-limit"))


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


class ProbeServer(Server):
    """The broken-suite server with ``lookup`` and ``explode``; ``bug`` is a key of :data:`BUGS` or ``None``."""

    def __init__(self, bug: str | None = None, *, handshake: bool = True) -> None:
        if bug is not None and bug not in BUGS:
            raise ValueError(f"unknown bug {bug!r}; choose from {', '.join(BUGS)}")
        super().__init__(None, handshake=handshake)
        self.probe_bug = bug
        self._headers: dict[str, str] = {}
        self._broken = False

    # -- transport-level deviations ----------------------------------------------------------------
    def handle_http(self, method: str, headers: dict[str, str], body: bytes) -> Answer:
        if self._broken:
            return Answer(500, _error(-32603, "Internal error", None, has_id=False))
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            self._broken = self.probe_bug == "hostile-input-breaks"  # wedged from now on
            payload = None
        if self.probe_bug == "routing-headers-ignored" and isinstance(payload, dict):
            headers = {k: v for k, v in headers.items() if k not in ("mcp-method", "mcp-name")}
            if isinstance(payload.get("method"), str):
                headers["mcp-method"] = payload["method"]
            params = payload.get("params") if isinstance(payload.get("params"), dict) else {}
            wanted = params.get("uri" if payload.get("method") == "resources/read" else "name")
            if isinstance(wanted, str):
                safe = wanted.isascii() and wanted == wanted.strip()
                headers["mcp-name"] = wanted if safe else "=?base64?" + b64encode(wanted.encode()).decode() + "?="
        self._headers = headers
        return super().handle_http(method, headers, body)

    def handle_line(self, line: bytes) -> Answer | None:
        self._headers = {}
        return super().handle_line(line)

    # -- tools ---------------------------------------------------------------------------------------
    def _m_tools_list(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        if params.get("cursor") is not None:
            return super()._m_tools_list(ident, params, meta)
        return self._complete(ident, {"tools": [*TOOLS, LOOKUP, EXPLODE]}, cache=True)

    def _m_tools_call(self, ident: Any, params: dict[str, Any], meta: dict[str, Any]) -> Answer:
        name = params.get("name")
        arguments = params.get("arguments", {})
        if name == "lookup" and isinstance(arguments, dict):
            return self._lookup(ident, arguments)
        if name == "explode" and isinstance(arguments, dict):
            if self.probe_bug == "failure-as-protocol-error":
                return Answer(0, _error(-32603, "explode failed", ident))
            return self._complete(ident, {"content": [_text("explode failed")], "isError": True})
        known = {tool["name"] for tool in TOOLS}
        if isinstance(name, str) and name not in known and isinstance(arguments, dict):
            if self.probe_bug == "unknown-tool-success":
                return self._complete(ident, {"content": [_text(f"called {name}")]})
            if self.probe_bug == "unknown-tool-500":
                return Answer(500, _error(-32603, "Internal error", ident))
        return super()._m_tools_call(ident, params, meta)

    def _lookup(self, ident: Any, arguments: dict[str, Any]) -> Answer:
        refusal = self._param_headers(ident, arguments)
        if refusal is not None:
            return refusal
        problem = None
        if not isinstance(arguments.get("region"), str):
            problem = "region is required and must be a string"
        elif "limit" in arguments and (not isinstance(arguments["limit"], int) or isinstance(arguments["limit"], bool)):
            problem = "limit must be an integer"
        elif set(arguments) - {"region", "limit"}:
            problem = f"unexpected arguments: {', '.join(sorted(set(arguments) - {'region', 'limit'}))}"
        if problem is not None and self.probe_bug != "arguments-unvalidated":
            if self.probe_bug == "arguments-as-protocol-error":
                return Answer(0, _error(-32602, f"Invalid arguments for lookup: {problem}", ident))
            return self._complete(ident, {"content": [_text(f"Invalid arguments for lookup: {problem}")],
                                          "isError": True})  # fmt: skip
        text = f"{arguments.get('limit', 10)} entries in {arguments.get('region')}"
        return self._complete(ident, {"content": [_text(text)]})

    def _param_headers(self, ident: Any, arguments: dict[str, Any]) -> Answer | None:
        """Mcp-Param-* validation for lookup over 2026 HTTP (stdio and 2025 carry no such headers)."""
        if not self._headers or self.probe_bug == "param-headers-ignored":
            return None
        for prop, header in PARAMS:
            value = arguments.get(prop)
            sent = self._headers.get(header)
            if value is None:
                if prop == "limit" and self.probe_bug == "param-absent-demanded" and sent is None:
                    return Answer(400, _error(-32020, "Mcp-Param-Limit header missing", ident))
                continue
            if sent is None:
                return Answer(400, _error(-32020, f"Mcp-Param-{prop.title()} header missing", ident))
            if any(ord(ch) < 0x20 or ord(ch) > 0x7E for ch in sent if ch != "\t"):
                return Answer(400, _error(-32020, f"Mcp-Param-{prop.title()} holds invalid characters", ident))
            decoded = _decode_header(sent)
            if not self._equal(decoded, value):
                return Answer(400, _error(-32020, f"Mcp-Param-{prop.title()} does not match the body", ident))
        return None

    def _equal(self, header: str, value: Any) -> bool:
        if isinstance(value, bool):
            return header == ("true" if value else "false")
        if isinstance(value, int) and self.probe_bug != "param-integers-as-text":
            try:
                return Decimal(header) == Decimal(value)
            except InvalidOperation:
                return False
        return header == str(value)


def main(argv: list[str]) -> None:
    mode = argv[1]
    args = [item for item in argv[2:] if not item.startswith("--")]
    if mode == "http":
        import uvicorn

        from tests.peers.broken_suite.app import http_app

        bug = args[1] if len(args) > 1 else None
        server = ProbeServer(bug)
        uvicorn.run(http_app(server), host="127.0.0.1", port=int(args[0]), log_level="warning")
        return
    bug = args[0] if args else None
    server = ProbeServer(bug)
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        answer = server.handle_line(line)
        if answer is None:
            continue
        for item in answer.events or []:
            out.write(json.dumps(item, separators=(",", ":")).encode() + b"\n")
        if answer.body is not None:
            out.write(json.dumps(answer.body, separators=(",", ":")).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv)
