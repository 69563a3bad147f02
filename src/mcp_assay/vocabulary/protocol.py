"""The protocol's vocabulary, named once: header names, ``_meta`` keys, error codes and the two eras.

Spec-derived. Every module that reads or writes one of these uses the constant, so a spelling
lives in one place and a search for a constant finds every use. HTTP header names are
case-insensitive: :class:`Header` spells them as mcp-assay sends them (the spec's spelling), and
:class:`HeaderKey` holds the same names lowercased, for the header maps mcp-assay keeps (and
looks up) in lower case. The constants are ``str`` and ``int`` subclasses that compare equal to,
hash like, serialise and print (``repr`` included) as the plain values they replace, so a message
quoting one reads as it did when the value was written out.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Final

__all__ = [
    "ACCEPT_BOTH",
    "HANDSHAKE_REVISION",
    "JSONRPC_RESERVED",
    "JSONRPC_STANDARD_CODES",
    "LEGACY_SERVER_ERRORS",
    "MCP_DEFINED_CODES",
    "MCP_RESERVED",
    "MODERN_REVISION",
    "PRE_RELEASE_CODES",
    "REVISIONS",
    "SERVER_ERRORS",
    "CodeRange",
    "Era",
    "ErrorCode",
    "Header",
    "HeaderKey",
    "MediaType",
    "MetaKey",
]


class _PlainStr(StrEnum):
    """A string constant whose ``repr`` is the plain string's."""

    def __repr__(self) -> str:
        return str.__repr__(self)


class _PlainInt(IntEnum):
    """An integer constant whose ``repr`` is the plain integer's."""

    def __repr__(self) -> str:
        return int.__repr__(self)


class Era(_PlainStr):
    """How a revision settles the protocol version: the recordings and reports keep these strings."""

    MODERN = "modern"
    """Per request: the version travels in every request's ``_meta`` (2026-07-28 and later)."""
    HANDSHAKE = "handshake"
    """Once per session, negotiated by ``initialize`` (2025-11-25 and earlier)."""

    @property
    def revision(self) -> str:
        """The newest revision of this era mcp-assay knows (:data:`REVISIONS`)."""
        return MODERN_REVISION if self is Era.MODERN else HANDSHAKE_REVISION

    @classmethod
    def read(cls, value: object) -> Era | None:
        """The era a recording names: its value, or ``legacy``, which recordings wrote for the handshake era before
        they wrote the value; ``None`` for anything else."""
        if value == "legacy":
            return cls.HANDSHAKE
        return next((era for era in cls if era.value == value), None)


MODERN_REVISION: Final = "2026-07-28"
"""The newest revision of the modern era mcp-assay knows."""
HANDSHAKE_REVISION: Final = "2025-11-25"
"""The newest revision of the handshake era mcp-assay knows."""
REVISIONS: Final = (MODERN_REVISION, HANDSHAKE_REVISION)
"""The revisions mcp-assay is built for, newest first: declared here once (``spec/pins.toml`` pins their schemas;
which of them a run judges is what is on disk, :mod:`mcp_assay.spec.revisions`)."""


class Header(_PlainStr):
    """HTTP header names, spelled as mcp-assay sends them."""

    PROTOCOL_VERSION = "MCP-Protocol-Version"
    """The revision a request is sent in (every request after ``initialize``; every 2026 request)."""
    SESSION_ID = "Mcp-Session-Id"
    """The session a 2025 server issued at ``initialize``, repeated on every later request."""
    METHOD = "Mcp-Method"
    """The JSON-RPC method of a 2026 request, mirrored from the body."""
    NAME = "Mcp-Name"
    """The tool, prompt or resource a 2026 request names, mirrored from the body."""
    PARAM_PREFIX = "Mcp-Param-"
    """The prefix of the headers a 2026 ``tools/call`` mirrors marked arguments into."""
    LAST_EVENT_ID = "Last-Event-ID"
    """The last event a client saw, sent when it resumes an event stream."""
    WWW_AUTHENTICATE = "WWW-Authenticate"
    """The challenge of a ``401`` (or a ``403`` about scopes)."""
    AUTHORIZATION = "Authorization"
    """The credential a request presents (``Bearer <token>``)."""
    ORIGIN = "Origin"
    """Where a browser-made request comes from; a server refuses foreign ones."""
    HOST = "Host"
    """The host a request is addressed to; a server refuses names it does not serve."""
    ACCEPT = "Accept"
    """The media types a client takes in answer."""
    CONTENT_TYPE = "Content-Type"
    """The media type of a body."""
    RETRY_AFTER = "Retry-After"
    """How long a rate-limited client waits before it tries again."""


class HeaderKey(_PlainStr):
    """The names of :class:`Header` lowercased: keys of the header maps mcp-assay keeps in lower case."""

    PROTOCOL_VERSION = "mcp-protocol-version"
    """:attr:`Header.PROTOCOL_VERSION`, lowercased."""
    SESSION_ID = "mcp-session-id"
    """:attr:`Header.SESSION_ID`, lowercased."""
    METHOD = "mcp-method"
    """:attr:`Header.METHOD`, lowercased."""
    NAME = "mcp-name"
    """:attr:`Header.NAME`, lowercased."""
    PARAM_PREFIX = "mcp-param-"
    """:attr:`Header.PARAM_PREFIX`, lowercased."""
    LAST_EVENT_ID = "last-event-id"
    """:attr:`Header.LAST_EVENT_ID`, lowercased."""
    WWW_AUTHENTICATE = "www-authenticate"
    """:attr:`Header.WWW_AUTHENTICATE`, lowercased."""
    AUTHORIZATION = "authorization"
    """:attr:`Header.AUTHORIZATION`, lowercased."""
    ORIGIN = "origin"
    """:attr:`Header.ORIGIN`, lowercased."""
    HOST = "host"
    """:attr:`Header.HOST`, lowercased."""
    ACCEPT = "accept"
    """:attr:`Header.ACCEPT`, lowercased."""
    CONTENT_TYPE = "content-type"
    """:attr:`Header.CONTENT_TYPE`, lowercased."""
    RETRY_AFTER = "retry-after"
    """:attr:`Header.RETRY_AFTER`, lowercased."""


class MediaType(_PlainStr):
    """The media types of MCP over HTTP."""

    JSON = "application/json"
    """One JSON-RPC message (or a batch) as the body."""
    EVENT_STREAM = "text/event-stream"
    """Server-sent events, each carrying one JSON-RPC message."""


ACCEPT_BOTH: Final = "application/json, text/event-stream"
"""The ``Accept`` of a request POST: a client takes either kind of answer."""


class MetaKey(_PlainStr):
    """Keys of ``_meta`` the spec defines."""

    PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
    """The revision a 2026 request is sent in."""
    CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
    """What a 2026 client can do, sent with every request."""
    CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
    """The name and version of a 2026 client."""
    SERVER_INFO = "io.modelcontextprotocol/serverInfo"
    """The name and version of a 2026 server, on its results."""
    SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
    """The ``subscriptions/listen`` request a notification belongs to."""
    LOG_LEVEL = "io.modelcontextprotocol/logLevel"
    """The least severe log level a 2026 client wants notifications for, per request."""
    RELATED_TASK = "io.modelcontextprotocol/related-task"
    """The task a message belongs to (2025-11-25 tasks)."""
    MODEL_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response"
    """The text a task-creating tool offers the model at once (2025-11-25 tasks)."""
    TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
    """The capability extension of 2026 tasks (a key of ``extensions``, not of ``_meta``)."""


class ErrorCode(_PlainInt):
    """JSON-RPC and MCP error codes."""

    PARSE_ERROR = -32700
    """JSON-RPC: the message is not JSON."""
    INVALID_REQUEST = -32600
    """JSON-RPC: the JSON is not a valid request (2025 servers also use it for an unknown session)."""
    METHOD_NOT_FOUND = -32601
    """JSON-RPC: no such method (or not in this revision)."""
    INVALID_PARAMS = -32602
    """JSON-RPC: the params are wrong (an unknown tool, a missing ``_meta`` field ...)."""
    INTERNAL_ERROR = -32603
    """JSON-RPC: the server failed."""
    HEADER_MISMATCH = -32020
    """MCP 2026: an HTTP header disagrees with the body, or is malformed."""
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    """MCP 2026: the request needs a client capability the request did not declare."""
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    """MCP 2026: the server does not serve the revision the request declares."""
    RESOURCE_NOT_FOUND = -32002
    """MCP 2025: no such resource (retired in 2026, which uses ``-32602``)."""
    URL_ELICITATION_REQUIRED = -32042
    """MCP 2025: the request needs a URL elicitation first (retired in 2026)."""
    REQUEST_TIMEOUT = -32001
    """Not the spec's: the code SDKs give a request that timed out."""
    REQUEST_CANCELLED = -32800
    """Not the spec's: the code SDKs give a request that was cancelled."""


JSONRPC_STANDARD_CODES: Final = frozenset(
    {
        ErrorCode.PARSE_ERROR,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.METHOD_NOT_FOUND,
        ErrorCode.INVALID_PARAMS,
        ErrorCode.INTERNAL_ERROR,
    }
)
"""The codes JSON-RPC 2.0 defines."""
MCP_DEFINED_CODES: Final = frozenset(
    {ErrorCode.HEADER_MISMATCH, ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY, ErrorCode.UNSUPPORTED_PROTOCOL_VERSION}
)
"""The codes MCP 2026 defines (they reject a request's envelope before its method runs)."""
PRE_RELEASE_CODES: Final = {
    -32001: ErrorCode.HEADER_MISMATCH,
    -32003: ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
    -32004: ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
}
"""The codes a pre-release draft of 2026 used, and the codes they became."""


@dataclass(frozen=True, slots=True)
class CodeRange:
    """An inclusive range of error codes."""

    low: int
    high: int

    def __contains__(self, code: object) -> bool:
        return isinstance(code, int) and self.low <= code <= self.high


JSONRPC_RESERVED: Final = CodeRange(-32768, -32000)
"""The codes JSON-RPC reserves: only the defined ones belong inside."""
SERVER_ERRORS: Final = CodeRange(-32099, -32000)
"""JSON-RPC's implementation-defined server errors."""
MCP_RESERVED: Final = CodeRange(-32099, -32020)
"""The server errors MCP 2026 reserves for its own codes."""
LEGACY_SERVER_ERRORS: Final = CodeRange(-32019, -32000)
"""The server errors 2026 implementations avoid (pre-release drafts used them)."""
