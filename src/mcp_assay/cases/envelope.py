"""The ``envelope`` cases: input that is not quite right, the 2026 request headers, and who may call.

JSON-RPC (both revisions, both transports): a body that is not JSON, valid JSON that is not a
request, a batch, a client's response, cancellations for requests that never were or are done,
then ordinary requests, which must still be served. 2026-07-28 HTTP: ``Mcp-Method`` and ``Mcp-Name``
missing or disagreeing with the body, header names in other spellings, the base64 sentinel form,
``Mcp-Session-Id`` and ``Last-Event-ID`` (ignored). HTTP in both eras: a foreign ``Origin`` and its
control, a foreign ``Host``, ``Accept`` headers that do not list both media types. The
``Mcp-Param-*`` cases of the same family are in :mod:`mcp_assay.cases.params`.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = [
    "AFTER_CANCELLATION",
    "BATCH",
    "CANCEL_FINISHED_REQUEST",
    "CANCEL_UNKNOWN_REQUEST",
    "CASES",
    "CLIENT_RESPONSE",
    "FOREIGN_HOST",
    "FOREIGN_ORIGIN",
    "HEADER_INVALID_CHARACTERS",
    "HEADER_NAME_CASE",
    "HOSTILE",
    "INVALID_JSON",
    "JSONRPC_1_0",
    "LAST_EVENT_ID_IGNORED",
    "MCP_METHOD_CASE",
    "MCP_METHOD_MISMATCH",
    "MCP_NAME_BASE64",
    "MCP_NAME_BASE64_MISMATCH",
    "MCP_NAME_MISMATCH",
    "MCP_NAME_NEEDS_SENTINEL",
    "NO_MCP_METHOD",
    "NO_MCP_NAME",
    "NO_METHOD",
    "ORIGIN_CONTROL",
    "SESSION_ID_IGNORED",
    "STILL_SERVING",
    "WRONG_ACCEPT_HTML",
    "WRONG_ACCEPT_JSON",
]

declare = Declare("envelope")

# -- JSON-RPC ----------------------------------------------------------------------------------------
INVALID_JSON = declare(
    "invalid-json", "RPC-12 BEH-09",
    sends="a truncated body", expects="-32700 without id (status not specified, A5)",
    invalid=True, judging=Judging.SELECTED,
)  # fmt: skip
JSONRPC_1_0 = declare(
    "jsonrpc-1.0", "RPC-13 RPC-09 BEH-09",
    sends='a request with jsonrpc "1.0"', expects="-32600 with the request id", invalid=True, judging=Judging.SELECTED,
)  # fmt: skip
NO_METHOD = declare(
    "no-method", "RPC-13 BEH-09",
    sends="a request without method", expects="-32600", invalid=True, judging=Judging.SELECTED,
)  # fmt: skip
BATCH = declare(
    "batch", "RPC-14",
    sends="a JSON array (batch) of one request", expects="refused (-32600 and/or 400), not processed", invalid=True,
)  # fmt: skip
CLIENT_RESPONSE = declare(
    "client-response", "HTTP-05 HTTP-06",
    sends="a JSON-RPC response to a request the server never sent",
    expects="in 2025-11-25 202, or a refusal status without id (HTTP-05/06); otherwise no server requirement: a note",
    invalid=True,
)  # fmt: skip
CANCEL_UNKNOWN_REQUEST = declare(
    "cancel-unknown-request", "CAN-09 CAN-02 RPC-11",
    sends="notifications/cancelled for a request id never sent", expects="ignored, no JSON-RPC answer", invalid=True,
)  # fmt: skip
STILL_SERVING = declare(
    "still-serving", "BEH-09 CAN-09",
    sends="an ordinary request after the hostile ones", expects="served (no 5xx, no dropped connection)",
)  # fmt: skip
CANCEL_FINISHED_REQUEST = declare(
    "cancel-finished-request", "CAN-02 RPC-11",
    sends="notifications/cancelled for a request already answered", expects="ignored",
)  # fmt: skip
AFTER_CANCELLATION = declare(
    "after-cancellation", "CAN-09", sends="an ordinary request after the cancellation", expects="served"
)  # fmt: skip

HOSTILE = (INVALID_JSON, JSONRPC_1_0, NO_METHOD)
"""The hostile inputs after which the server must still serve (BEH-09)."""

# -- HTTP in both eras ---------------------------------------------------------------------------------
WRONG_ACCEPT_JSON = declare(
    "wrong-accept",
    sends="Accept: application/json only",
    expects="no server-side requirement (HTTP-03 binds the client): what came back is a note",
    invalid=True, judging=Judging.NOTED, marker=("accept", "application/json"),
)  # fmt: skip
WRONG_ACCEPT_HTML = declare(
    "wrong-accept",
    sends="Accept: text/html only",
    expects="no server-side requirement (HTTP-03 binds the client): what came back is a note",
    invalid=True, judging=Judging.NOTED, marker=("accept", "text/html"),
)  # fmt: skip
FOREIGN_ORIGIN = declare(
    "foreign-origin", "HTTP-35 AUTH-30 GW-15",
    sends="Origin: https://mcp-assay.invalid", expects="403", invalid=True, judging=Judging.SELECTED,
    also_recorded=(("foreign_origin", True),),
)  # fmt: skip
ORIGIN_CONTROL = declare(
    "origin-control", "HTTP-35",
    sends="the same request without Origin",
    expects="served: makes the 403 attributable (refused too, the 403 is not verified)",
    judging=Judging.SELECTED,
)  # fmt: skip
FOREIGN_HOST = declare(
    "foreign-host",
    sends="Host: mcp-assay-rebinding.invalid (DNS rebinding)",
    expects="no requirement (the specification names only Origin): a note saying whether it was refused",
    invalid=True, judging=Judging.NOTED,
)  # fmt: skip

# -- 2026-07-28 HTTP headers ---------------------------------------------------------------------------
NO_MCP_METHOD = declare(
    "no-mcp-method", "HTTP-12 BEH-02 HTTP-37", sends="no Mcp-Method header", expects="400 and -32020", invalid=True
)  # fmt: skip
MCP_METHOD_MISMATCH = declare(
    "mcp-method-mismatch", "HTTP-13 BEH-02 HTTP-37",
    sends="Mcp-Method naming another method than the body", expects="400 and -32020", invalid=True,
)  # fmt: skip
MCP_METHOD_CASE = declare(
    "mcp-method-case", "HTTP-13",
    sends="Mcp-Method differing from the body only in case", expects="400 and -32020", invalid=True,
)  # fmt: skip
HEADER_NAME_CASE = declare(
    "header-name-case", "HTTP-14",
    sends="mcp-protocol-version, MCP-METHOD …: standard header names in other spellings", expects="served",
)  # fmt: skip
SESSION_ID_IGNORED = declare(
    "session-id-ignored", "HTTP-33",
    sends="an Mcp-Session-Id header", expects="ignored, and no Mcp-Session-Id comes back", invalid=True,
)  # fmt: skip
LAST_EVENT_ID_IGNORED = declare(
    "last-event-id-ignored", "HTTP-34", sends="a Last-Event-ID header", expects="ignored: no replay", invalid=True
)  # fmt: skip
NO_MCP_NAME = declare(
    "no-mcp-name", "HTTP-12 BEH-02",
    sends="tools/call (or prompts/get, resources/read) without Mcp-Name", expects="400 and -32020", invalid=True,
)  # fmt: skip
MCP_NAME_MISMATCH = declare(
    "mcp-name-mismatch", "HTTP-13 BEH-02",
    sends="Mcp-Name naming a listed tool (prompt, resource), the body one that does not exist",
    expects="400 and -32020; an answer about the body's name means it dispatched on the body unchecked",
    invalid=True,
)  # fmt: skip
MCP_NAME_BASE64 = declare(
    "mcp-name-base64", "HTTP-16",
    sends="Mcp-Name in the =?base64?…?= form of the body's name", expects="accepted (not -32020)",
)  # fmt: skip
HEADER_INVALID_CHARACTERS = declare(
    "header-invalid-characters", "HTTP-17",
    sends="Mcp-Name as raw UTF-8 bytes instead of the base64 form",
    expects="400 (-32020, or a bare 400 from the HTTP stack)", invalid=True,
)  # fmt: skip
MCP_NAME_BASE64_MISMATCH = declare(
    "mcp-name-base64-mismatch", "HTTP-16",
    sends="Mcp-Name in base64 form decoding to another name", expects="400 and -32020", invalid=True,
)  # fmt: skip
MCP_NAME_NEEDS_SENTINEL = declare(
    "mcp-name-needs-sentinel", "HTTP-16",
    sends="params.name with a leading space and a non-ASCII letter, Mcp-Name in the sentinel form",
    expects="accepted as a match",
)  # fmt: skip

CASES = tuple(declare.cases)
