"""What a revision defines, read from its schema rather than from its date.

Rules and probes are gated on these feature names. A 2025-11-25 session skips the result-envelope
rules *because its schema's ``Result`` does not require ``resultType``*, not because 2025 is
before 2026; a future revision that moves things around selects the right rules unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_assay.vocabulary.protocol import MetaKey

__all__ = ["FEATURES", "derive_features"]


def _required(defs: Mapping[str, Any], name: str) -> list[str]:
    definition = defs.get(name, {})
    required = definition.get("required", []) if isinstance(definition, dict) else []
    return list(required) if isinstance(required, list) else []


def _properties(defs: Mapping[str, Any], name: str) -> dict[str, Any]:
    definition = defs.get(name, {})
    props = definition.get("properties", {}) if isinstance(definition, dict) else {}
    return props if isinstance(props, dict) else {}


FEATURES: dict[str, str] = {
    "discover": "defines server/discover (DiscoverRequest)",
    "handshake": "negotiates once at initialize (InitializeRequest)",
    "per_request_version": "every request names its protocol version in params._meta",
    "per_request_capabilities": "every request declares the client's capabilities in params._meta",
    "per_request_log_level": "a request opts into log messages with a logLevel in params._meta",
    "result_envelope": "every result carries resultType",
    "cache_hints": "cacheable results carry ttlMs and cacheScope (CacheableResult)",
    "listen_subscriptions": "subscriptions/listen streams (SubscriptionsListenRequest)",
    "resource_subscribe": "resources/subscribe and resources/unsubscribe (SubscribeRequest)",
    "input_required": "multi round-trip results (InputRequiredResult)",
    "server_requests": "servers may send requests to clients (ServerRequest)",
    "ping": "ping (PingRequest)",
    "set_log_level": "logging/setLevel (SetLevelRequest)",
    "header_mismatch_error": "HeaderMismatchError (-32020)",
    "unsupported_version_error": "UnsupportedProtocolVersionError (-32022)",
    "missing_capability_error": "MissingRequiredClientCapabilityError (-32021)",
    "tasks": "the tasks utility (GetTaskRequest)",
    "url_elicitation_error": "URLElicitationRequiredError (-32042)",
    "capability_extensions": "capabilities.extensions on both sides",
    "structured_content_any_json": "structuredContent may be any JSON value",
    "output_schema_object_only": "outputSchema must have type object",
    "completions": "completion/complete (CompleteRequest)",
}
"""Every feature name a rule may gate on, with what it means."""


def derive_features(defs: Mapping[str, Any]) -> frozenset[str]:
    """The feature set of one revision, from its ``$defs``."""
    found: set[str] = set()
    presence = {
        "discover": "DiscoverRequest",
        "handshake": "InitializeRequest",
        "cache_hints": "CacheableResult",
        "listen_subscriptions": "SubscriptionsListenRequest",
        "resource_subscribe": "SubscribeRequest",
        "input_required": "InputRequiredResult",
        "server_requests": "ServerRequest",
        "ping": "PingRequest",
        "set_log_level": "SetLevelRequest",
        "header_mismatch_error": "HeaderMismatchError",
        "unsupported_version_error": "UnsupportedProtocolVersionError",
        "missing_capability_error": "MissingRequiredClientCapabilityError",
        "tasks": "GetTaskRequest",
        "url_elicitation_error": "URLElicitationRequiredError",
        "completions": "CompleteRequest",
    }
    for feature, definition in presence.items():
        if definition in defs:
            found.add(feature)
    meta_required = _required(defs, "RequestMetaObject")
    if MetaKey.PROTOCOL_VERSION in meta_required:
        found.add("per_request_version")
    if MetaKey.CLIENT_CAPABILITIES in meta_required:
        found.add("per_request_capabilities")
    if MetaKey.LOG_LEVEL in _properties(defs, "RequestMetaObject"):
        found.add("per_request_log_level")
    if "resultType" in _required(defs, "Result"):
        found.add("result_envelope")
    if "extensions" in _properties(defs, "ClientCapabilities"):
        found.add("capability_extensions")
    structured = _properties(defs, "CallToolResult").get("structuredContent", {})
    if isinstance(structured, dict) and structured.get("type") is None:
        found.add("structured_content_any_json")
    output = _properties(defs, "Tool").get("outputSchema", {})
    if isinstance(output, dict) and "type" in output.get("required", []):
        found.add("output_schema_object_only")
    return frozenset(found)
