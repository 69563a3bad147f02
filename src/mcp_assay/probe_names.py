"""Every probe mcp-assay sends, by name: the one place a probe is named.

A probe is a request mcp-assay sends on purpose (the active suite, or the proxy probing a server
on a live session); its name travels with the exchange in a :class:`~mcp_assay.wire.Probe` and in
recordings (an answer ``--inject`` makes up is named by its case, in the injection registry). Rules
that need to know which case produced an exchange compare names with these constants, never with
string literals, and the suite refuses to send a probe whose name is not registered here
(:func:`registered`). Names that carry a variant (a page number, the kind of a
metadata URL, a token variant, an HTTP verb) are built by the functions below.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ProbeName", "http_verb", "page", "prm_fetch", "registered", "stub_token"]


class ProbeName(StrEnum):
    """The fixed probe names, grouped by the part of the protocol their case exercises."""

    # -- Lifecycle, sessions, JSON-RPC and listings ----------------------------------------------------
    ACCEPTED = "accepted"
    AGAIN = "again"
    DISCOVER_LAST = "discover-last"
    BATCH = "batch"
    CLIENT_RESPONSE = "client-response"
    CURSOR_NEW_CONNECTION = "cursor-new-connection"
    DELETE_SESSION = "delete-session"
    DEMO_SESSION = "demo-session"
    DISCOVER = "discover"
    ENDED_SESSION = "ended-session"
    FRESH_CONNECTION = "fresh-connection"
    GET = "get"
    HANDSHAKE_CLOSE_SELECTION_SESSION = "handshake/close-selection-session"
    INITIALIZE = "initialize"
    INITIALIZED = "initialized"
    INVALID_CURSOR = "invalid-cursor"
    INVALID_JSON = "invalid-json"
    JSONRPC_1_0 = "jsonrpc-1.0"
    LIST = "list"
    LIST_AGAIN = "list-again"
    LIST_FOR_PARAM_HEADERS = "list-for-param-headers"
    PING = "ping"
    SAME_CURSOR = "same-cursor"
    SESSION_ID_IGNORED = "session-id-ignored"
    TRY_MODERN = "try-modern"
    SET_LEVEL = "set-level"
    SET_LEVEL_INVALID = "set-level-invalid"
    TEMPLATES = "templates"

    # -- Version negotiation and the request envelope --------------------------------------------------
    BAD_VERSION_HEADER = "bad-version-header"
    BODY_HEADER_MISMATCH = "body-header-mismatch"
    FOREIGN_ORIGIN = "foreign-origin"
    HEADER_BODY_MISMATCH = "header-body-mismatch"
    HEADER_INVALID_CHARACTERS = "header-invalid-characters"
    HEADER_NAME_CASE = "header-name-case"
    LEGACY_INITIALIZE = "legacy-initialize"
    OLD_INITIALIZE = "old-initialize"
    LOG_LEVEL_UNKNOWN = "log-level-unknown"
    MCP_METHOD_CASE = "mcp-method-case"
    MCP_METHOD_MISMATCH = "mcp-method-mismatch"
    MCP_NAME = "mcp-name"
    MCP_NAME_BASE64 = "mcp-name-base64"
    MCP_NAME_BASE64_MISMATCH = "mcp-name-base64-mismatch"
    MCP_NAME_MISMATCH = "mcp-name-mismatch"
    MCP_NAME_NEEDS_SENTINEL = "mcp-name-needs-sentinel"
    MCP_PARAM = "mcp-param"
    NO_CAPABILITY = "no-capability"
    NO_CLIENT_CAPABILITIES = "no-client-capabilities"
    NO_CLIENT_INFO = "no-client-info"
    NO_MCP_METHOD = "no-mcp-method"
    NO_MCP_NAME = "no-mcp-name"
    NO_META = "no-meta"
    NO_META_VERSION = "no-meta-version"
    NO_METHOD = "no-method"
    NO_NAME = "no-name"
    NO_PARAMS = "no-params"
    NO_SESSION_ID = "no-session-id"
    NO_VERSION_HEADER = "no-version-header"
    NO_VERSION_NO_SESSION = "no-version-no-session"
    ORIGIN_CONTROL = "origin-control"
    FOREIGN_HOST = "foreign-host"
    OTHER_CLIENT_INFO = "other-client-info"
    REMOVED_METHOD = "removed-method"
    UNSUPPORTED_VERSION = "unsupported-version"
    WITH_CAPABILITIES = "with-capabilities"
    WRONG_ACCEPT = "wrong-accept"

    # -- Cancellation and streams ----------------------------------------------------------------------
    AFTER_CANCELLATION = "after-cancellation"
    CALL_WHILE_LISTENING = "call-while-listening"
    LISTEN_WRITES = "listen-writes"
    WRITE_WHILE_LISTENING = "write-while-listening"
    CANCEL = "cancel"
    CANCEL_CALL = "cancel-call"
    CANCEL_FINISHED_REQUEST = "cancel-finished-request"
    CANCEL_LISTEN = "cancel-listen"
    CANCEL_UNKNOWN_REQUEST = "cancel-unknown-request"
    CONCURRENT = "concurrent"
    GET_STREAM = "get-stream"
    LAST_EVENT_ID_IGNORED = "last-event-id-ignored"
    LIST_WHILE_LISTENING = "list-while-listening"
    STILL_SERVING = "still-serving"
    SUBSCRIBE = "subscribe"
    UNSUBSCRIBE = "unsubscribe"

    ONE_TYPE = "one-type"
    EMPTY_FILTER = "empty-filter"
    STRING_ID = "string-id"
    EVERYTHING = "everything"
    # -- Tools, resources, prompts, completion and MRTR ------------------------------------------------
    ARGUMENTS_NOT_OBJECT = "arguments-not-object"
    BAD_ARGUMENTS = "bad-arguments"
    CALL = "call"
    CALL_LOG_ERROR = "call-log-error"
    CALL_LOGGED = "call-logged"
    COMPLETE = "complete"
    COMPLETION_UNKNOWN_PROMPT = "completion-unknown-prompt"
    EXTRA_PROPERTY = "extra-property"
    FAILING_TOOL = "failing-tool"
    INVALID_TOOL_ARGUMENTS = "invalid-tool-arguments"
    MALFORMED_URI = "malformed-uri"
    MISSING_ARGUMENT = "missing-argument"
    MISSING_PROMPT_ARGUMENT = "missing-prompt-argument"
    MISSING_RESOURCE = "missing-resource"
    MRTR_EXTRA_RESPONSES = "mrtr-extra-responses"
    MRTR_INCOMPLETE_RETRY = "mrtr-incomplete-retry"
    MRTR_MALFORMED_RESPONSES = "mrtr-malformed-responses"
    MRTR_MISSING_CAPABILITY = "mrtr-missing-capability"
    MRTR_TAMPERED_STATE = "mrtr-tampered-state"
    PATH_TRAVERSAL = "path-traversal"
    READ = "read"
    STABILITY = "stability"
    UNKNOWN_METHOD = "unknown-method"
    UNKNOWN_PROMPT = "unknown-prompt"
    UNKNOWN_TOOL = "unknown-tool"
    EXPLORE = "explore"
    """A tools/call with arguments ``run --explore`` drew from the tool's inputSchema (``suite/explore``)."""

    PARAM_MISSING = "param-missing"
    PARAM_MISMATCH = "param-mismatch"
    PARAM_INVALID_CHARACTERS = "param-invalid-characters"
    PARAM_BASE64 = "param-base64"
    PARAM_BASE64_MISMATCH = "param-base64-mismatch"
    PARAM_NUMERIC = "param-numeric"
    PARAM_ABSENT = "param-absent"
    PARAM_NULL = "param-null"

    # -- Authorization and tokens ----------------------------------------------------------------------
    AUTH_ALG_NONE = "auth-alg-none"
    AUTH_BASIC = "auth-basic"
    AUTH_CONTROL = "auth-control"
    AUTH_EMPTY_BEARER = "auth-empty-bearer"
    AUTH_EXPIRED_JWT = "auth-expired-jwt"
    AUTH_GARBAGE_TOKEN = "auth-garbage-token"
    AUTH_NO_TOKEN = "auth-no-token"
    AUTH_NO_TOKEN_DISCOVER = "auth-no-token-discover"
    AUTH_NOT_A_JWT = "auth-not-a-jwt"
    AUTH_PASSTHROUGH = "auth-passthrough"
    AUTH_PRM_HEADER = "auth-prm-header"
    AUTH_QUERY_ACCESS_TOKEN = "auth-query-access-token"
    AUTH_QUERY_TOKEN = "auth-query-token"
    AUTH_QUERY_WITH_GARBAGE_HEADER = "auth-query-with-garbage-header"
    AUTH_SCOPE_BROAD = "auth-scope-broad"
    AUTH_SCOPE_CONTROL = "auth-scope-control"
    AUTH_SCOPE_HEADER_ROUTED = "auth-scope-header-routed"
    AUTH_SCOPE_LACKING = "auth-scope-lacking"
    AUTH_STUB_CONTROL = "auth-stub-control"

    # -- Behaviour cases -------------------------------------------------------------------------------
    BEH_RATE_LIMIT = "beh-rate-limit"
    BEHAVIOUR_INITIALIZE = "behaviour-initialize"
    BEHAVIOUR_INITIALIZED = "behaviour-initialized"
    BEHAVIOUR_LIST = "behaviour-list"
    CANCEL_RACE = "cancel-race"
    HANDLE_CREATE = "handle-create"
    HANDLE_USE = "handle-use"
    PRINCIPAL_LIST = "principal-list"
    READ_TOOL = "read-tool"
    REFUSAL = "refusal"
    SESSION_OTHER_PRINCIPAL = "session-other-principal"
    WITNESS_READ = "witness-read"
    WRITE_BASELINE = "write-baseline"


PAGE_SUFFIX = "-page-"
PRM_PREFIX = "auth-prm-"
STUB_TOKEN_PREFIX = "auth-stub-"
HTTP_VERB_PREFIX = "http-"


def page(name: str, number: int) -> str:
    """The probe name of page ``number`` of a list walk named ``name`` (page 1 keeps the name)."""
    return name if number == 1 else f"{name}{PAGE_SUFFIX}{number}"


def prm_fetch(kind: str) -> str:
    """Fetching Protected Resource Metadata from one of its candidate URLs (``path``, ``root``, ``header``)."""
    return f"{PRM_PREFIX}{kind}"


def stub_token(variant: str) -> str:
    """A request carrying the stand-in authorization server's token with one property changed."""
    return f"{STUB_TOKEN_PREFIX}{variant}"


def http_verb(verb: str) -> str:
    """An HTTP method the 2026 endpoint does not serve (``GET``, ``DELETE``)."""
    return f"{HTTP_VERB_PREFIX}{verb.lower()}"


_FIXED = frozenset(ProbeName)


def registered(name: str) -> bool:
    """Whether ``name`` is a registered probe name (a fixed one, or one built by the functions above)."""
    if name in _FIXED:
        return True
    if PAGE_SUFFIX in name:
        base, _, number = name.rpartition(PAGE_SUFFIX)
        return number.isdigit() and registered(base)
    return name.startswith((PRM_PREFIX, STUB_TOKEN_PREFIX, HTTP_VERB_PREFIX)) and name.rsplit("-", 1)[-1].isalnum()
