"""Resources (RSRC-): listings, reads, templates, URIs, and the errors around missing resources.

A read "of a resource that does not exist" is recognised from the traffic when the server's own
error says so, from the conventional probe URIs ``file:///mcp-assay/does-not-exist-…`` and
``file:///mcp-conformance/does-not-exist-…``, or from the case ``missing-resource``; a
malformed or escaping ``file://`` URI is recognised from the request itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

from mcp_assay.cases import resources as cases
from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.revisions import Revision
from mcp_assay.spec.rules.shared.answers import (
    answer_to,
    expects_invalid_params,
    listing_shape,
    refused_at_envelope,
    reports_internal_error,
)
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.reads import ANY_RESULT
from mcp_assay.spec.rules.shared.selected import sent_as
from mcp_assay.spec.rules.shared.server_features import (
    answered_method,
    capability_declared,
    completes,
    declared_capability_is_served,
    is_base64,
    is_uri,
    listing_consistency,
)
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message

MISSING_RESOURCE_PREFIXES = ("file:///mcp-assay/does-not-exist", "file:///mcp-conformance/does-not-exist")
"""URIs probes read to provoke RSRC-08/09 (e.g. ``…/does-not-exist-<random>``)."""
NOT_FOUND = re.compile(r"not\s+(?:be\s+)?found|unknown resource|does not exist|no such (?:resource|file)", re.I)
RESOURCE_METHODS = frozenset({"resources/list", "resources/read", "resources/templates/list"})


def _read_of(message: Message, ctx: Context) -> tuple[Message, Any] | None:
    """For an answer to resources/read: the request and its ``params.uri`` (anything)."""
    read = answer_to(message, ctx, "resources/read")
    return (read[0], read[1].get("uri")) if read is not None else None


def _known_missing(message: Message, request: Message, uri: Any, ctx: Context) -> bool:
    if sent_as(request, ctx, cases.MISSING_RESOURCE):
        return True
    if isinstance(uri, str) and uri.startswith(MISSING_RESOURCE_PREFIXES):
        return True
    if message.kind is Kind.ERROR and isinstance(message.error, dict) and is_uri(uri):
        text = message.error.get("message")
        return isinstance(text, str) and bool(NOT_FOUND.search(text))
    return False


def _missing_read(message: Message, ctx: Context) -> tuple[Message, Any] | None:
    """For an answer to a read of a resource known not to exist: the request and its ``params.uri``."""
    read = _read_of(message, ctx)
    return read if read is not None and _known_missing(message, read[0], read[1], ctx) else None


def _served_missing(uri: Any) -> str:
    return f"a read of the missing resource {uri!r} was answered with a result"[:300]


@message_check(
    requirements="RSRC-01",
    level=Level.MUST,
    subject="resource results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods=RESOURCE_METHODS,
)
def servers_serving_resources_declare_resources(message: Message, ctx: Context) -> Finding | None:
    """A server that serves resources/list, resources/read or resources/templates/list declares resources."""
    return capability_declared(message, ctx, "resources", RESOURCE_METHODS)


@message_check(
    requirements="RSRC-02",
    level=Level.MUST,
    subject="answers to resources/list",
    capability="resources",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"resources/list"},
)
def declared_resources_are_listed(message: Message, ctx: Context) -> Finding | None:
    """A server declaring resources answers resources/list with a result.

    Triggered by any well-formed ``resources/list`` without a cursor."""
    return declared_capability_is_served(message, ctx, "resources", "resources/list")


@log_check(
    requirements="RSRC-03",
    level=Level.MUST_NOT,
    subject="repeated resource listings",
    features={"per_request_version"},
    follows={"resources/list"},
)
def resource_lists_do_not_depend_on_the_connection(ctx: Context) -> Iterator[Finding]:
    """The set of resources does not change with the connection or earlier requests (same credentials).

    Compares complete ``resources/list`` walks with the same credentials taken within
    ``listing_window_s`` seconds of each other with no list-changed notification between them."""
    yield from listing_consistency(ctx, "resources/list", order=False)


@message_check(
    requirements="RSRC-04",
    level=Level.MUST,
    subject="resources/list results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"resources/list"},
)
def resource_lists_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """resources/list results hold a resources array of Resource objects (uri and name required)."""
    return listing_shape(message, ctx, "resources/list", "resources")


def contents_issues(item: Any, revision: Revision, path: str) -> list[str]:
    """What is wrong with one resource contents item, dispatched on text/blob (base64 left to RSRC-06)."""
    if not isinstance(item, dict):
        return [f"{path}: a contents item is an object, not {type(item).__name__}"]
    if "text" in item:
        definition = "TextResourceContents"
    elif "blob" in item:
        definition = "BlobResourceContents"
    else:
        return [f"{path}: a contents item carries neither text nor blob"]
    return [
        issue.render()
        for issue in revision.validator.validate_def(definition, item, prefix=path)
        if "is not a 'byte'" not in issue.message
    ]


@message_check(
    requirements="RSRC-05",
    level=Level.MUST,
    subject="resources/read results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"resources/read"},
)
def resource_reads_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """resources/read results hold a contents array of {uri, text} or {uri, blob} items."""
    if not completes(message, ctx, "resources/read") or not isinstance(message.result, dict):
        return None
    revision = ctx.revision(message)
    if revision is None:
        return None
    contents = message.result.get("contents")
    if not isinstance(contents, list):
        shown = "missing" if "contents" not in message.result else type(contents).__name__
        return failed(message, f"the resources/read result's contents is {shown}, not an array")
    issues = [
        issue
        for position, item in enumerate(contents)
        for issue in contents_issues(item, revision, f"result.contents[{position}]")
    ]
    if issues:
        return failed(message, "; ".join(issues[:4]))
    return passed(message)


_CARRY_CONTENT = frozenset({"content", "contents", "messages", "resource", "params"})
"""The members through which the protocol carries content blocks and resource contents (a tool or prompt
result, resource contents, a sampling message, an embedded resource, an input request's params). Everything
else is data of another kind: a tool's ``inputSchema``/``outputSchema`` may describe a ``blob`` property, and
``structuredContent`` is the tool's own JSON, so neither is walked as if it were protocol content."""


def _binary_fields(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Every ``blob`` of resource contents and every image/audio ``data`` the protocol carries in a result."""
    if depth > 32:
        return
    if isinstance(value, dict):
        if "blob" in value and "uri" in value:
            yield f"{path}.blob", value["blob"]
        if value.get("type") in ("image", "audio") and "data" in value:
            yield f"{path}.data", value["data"]
        for key, inner in value.items():
            if key in _CARRY_CONTENT and isinstance(inner, dict | list):
                yield from _binary_fields(inner, f"{path}.{key}", depth + 1)
        requests = value.get("inputRequests")
        if isinstance(requests, dict):  # an input-required result: a map of server-initiated requests
            for key, request in requests.items():
                yield from _binary_fields(request, f"{path}.inputRequests.{key}", depth + 1)
    elif isinstance(value, list):
        for position, inner in enumerate(value):
            yield from _binary_fields(inner, f"{path}[{position}]", depth + 1)


@message_check(
    requirements="RSRC-06",
    level=Level.MUST,
    subject="results carrying binary data",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods=ANY_RESULT,
)
def binary_data_is_valid_base64(message: Message, ctx: Context) -> Finding | None:
    """Every blob, and every image or audio data field, is valid base64."""
    raw = message.raw
    if not (b"blob" in raw or b"image" in raw or b"audio" in raw):
        return None  # the bytes name no binary field (a fast path: the tree walk is the costly part)
    fields = list(_binary_fields(message.result, "result"))
    if not fields:
        return None
    bad = [path for path, value in fields if not is_base64(value)]
    if bad:
        return failed(message, f"not valid base64: {', '.join(bad[:4])}")
    return passed(message)


def _content_uris(blocks: Any, path: str) -> Iterator[tuple[str, Any]]:
    for position, block in enumerate(blocks if isinstance(blocks, list) else []):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "resource_link" and "uri" in block:
            yield f"{path}[{position}].uri", block["uri"]
        resource = block.get("resource")
        if block.get("type") == "resource" and isinstance(resource, dict) and "uri" in resource:
            yield f"{path}[{position}].resource.uri", resource["uri"]


def _uris(message: Message, ctx: Context) -> list[tuple[str, Any]]:
    if message.kind is Kind.NOTIFICATION:
        if message.method == "notifications/resources/updated" and isinstance(message.params, dict):
            return [("params.uri", message.params.get("uri"))]
        return []
    answered = answered_method(message, ctx)
    result = message.result
    if answered is None or not isinstance(result, dict):
        return []
    method = answered[1]
    found: list[tuple[str, Any]] = []
    if method == "resources/list" and isinstance(result.get("resources"), list):
        for position, item in enumerate(result["resources"]):
            if isinstance(item, dict) and "uri" in item:
                found.append((f"result.resources[{position}].uri", item["uri"]))
    if method == "resources/read" and isinstance(result.get("contents"), list):
        for position, item in enumerate(result["contents"]):
            if isinstance(item, dict) and "uri" in item:
                found.append((f"result.contents[{position}].uri", item["uri"]))
    if method == "tools/call":
        found.extend(_content_uris(result.get("content"), "result.content"))
    if method == "prompts/get" and isinstance(result.get("messages"), list):
        for position, item in enumerate(result["messages"]):
            if isinstance(item, dict):
                found.extend(_content_uris([item.get("content")], f"result.messages[{position}].content"))
    return found


@message_check(
    requirements="RSRC-07",
    level=Level.MUST,
    subject="resource URIs",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.NOTIFICATION},
    methods={"notifications/resources/updated", "resources/list", "resources/read", "tools/call", "prompts/get"},
)
def resource_uris_are_valid_uris(message: Message, ctx: Context) -> Finding | None:
    """Resource URIs in listings, contents, links and resource-updated notifications are valid RFC 3986 URIs."""
    uris = _uris(message, ctx)
    if not uris:
        return None
    bad = [f"{path} = {value!r}"[:120] for path, value in uris if not is_uri(value)]
    if bad:
        return failed(message, f"not an absolute RFC 3986 URI: {'; '.join(bad[:3])}")
    return passed(message)


@message_check(
    requirements="RSRC-08",
    level=Level.MUST,
    subject="answers to reads of missing resources",
    features={"per_request_version"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"resources/read"},
)
def missing_resources_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A read of a resource that does not exist gets -32602 (2026).

    Triggered by a ``resources/read`` of a URI starting ``file:///mcp-assay/does-not-exist`` (or
    ``file:///mcp-conformance/does-not-exist``),
    one sent as the case ``missing-resource``, or one the server itself answers with a
    "not found" error."""
    read = _missing_read(message, ctx)
    if read is None or refused_at_envelope(message):
        return None
    return expects_invalid_params(message, "a read of a missing resource", on_result=_served_missing(read[1]))


@message_check(
    requirements="RSRC-08",
    level=Level.SHOULD,
    subject="answers to reads of missing resources",
    features={"handshake"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"resources/read"},
)
def missing_resources_get_resource_not_found(message: Message, ctx: Context) -> Finding | None:
    """A read of a resource that does not exist gets -32002 (2025).

    Triggered like ``missing_resources_get_invalid_params``, in 2025-11-25 sessions."""
    read = _missing_read(message, ctx)
    if read is None:
        return None
    if message.kind is Kind.RESULT:
        return failed(message, _served_missing(read[1]))
    code = error_code(message)
    if code == ErrorCode.RESOURCE_NOT_FOUND:
        return passed(message)
    return failed(message, f"a read of a missing resource got code {code}; 2025-11-25 recommends -32002")


@message_check(
    requirements="RSRC-09",
    level=Level.MUST_NOT,
    subject="answers to reads of missing resources",
    features={"per_request_version"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"resources/read"},
)
def missing_resources_are_not_empty_contents(message: Message, ctx: Context) -> Finding | None:
    """A read of a resource that does not exist is never answered with "contents": [].

    Triggered like ``missing_resources_get_invalid_params``."""
    read = _missing_read(message, ctx)
    if read is None:
        return None
    result = message.result
    if message.kind is Kind.RESULT and isinstance(result, dict) and result.get("contents") == []:
        return failed(message, f"a read of the missing resource {read[1]!r} returned empty contents"[:300])
    return passed(message)


@message_check(
    requirements="RSRC-10",
    level=Level.SHOULD,
    subject="failed resource reads",
    sent_by=Side.SERVER,
    kinds={Kind.ERROR},
    methods={"resources/read"},
)
def failed_reads_report_internal_errors(message: Message, ctx: Context) -> Finding | None:
    """A failure inside the server while reading a resource is reported as -32603.

    Errors for resources that do not exist are RSRC-08's concern."""
    read = _read_of(message, ctx)
    if read is None or _known_missing(message, read[0], read[1], ctx):
        return None
    return reports_internal_error(message, "resources/read")


@message_check(
    requirements="RSRC-11",
    level=Level.MUST,
    subject="resources/templates/list results",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods={"resources/templates/list"},
)
def resource_templates_match_the_schema(message: Message, ctx: Context) -> Finding | None:
    """resources/templates/list results hold ResourceTemplate objects with an RFC 6570 uriTemplate and a name."""
    return listing_shape(message, ctx, "resources/templates/list", "resourceTemplates")


@message_check(
    requirements="RSRC-12",
    level=Level.MUST,
    subject="answers to reads of malformed URIs",
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"resources/read"},
)
def malformed_uris_are_refused(message: Message, ctx: Context) -> Finding | None:
    """A resources/read of a malformed uri gets a JSON-RPC error, not contents.

    Triggered by a ``resources/read`` whose ``uri`` is not an absolute RFC 3986 URI (e.g. ``"not a
    uri"``), or one sent as the case ``malformed-uri``."""
    read = _read_of(message, ctx)
    if read is None:
        return None
    request, uri = read
    if is_uri(uri) and not sent_as(request, ctx, cases.MALFORMED_URI):
        return None
    if message.kind is Kind.ERROR:
        return passed(message)
    return failed(message, f"a read of the malformed uri {uri!r} was served with a result"[:300])


def _escapes(uri: Any) -> bool:
    """A file:// URI whose dot-dot segments climb above the root of its path."""
    if not isinstance(uri, str) or not uri.lower().startswith("file:"):
        return False
    path = unquote(urlsplit(uri).path)
    depth = 0
    for segment in path.split("/"):
        if segment == "..":
            depth -= 1
            if depth < 0:
                return True
        elif segment not in ("", "."):
            depth += 1
    return False


@message_check(
    requirements="RSRC-13",
    level=Level.MUST,
    subject="answers to path-traversal reads",
    features={"per_request_version"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods={"resources/read"},
)
def file_uris_cannot_escape_the_served_tree(message: Message, ctx: Context) -> Finding | None:
    """A file:// read that climbs out of the served tree with .. (or %2e%2e) fails with an error.

    Triggered by a ``resources/read`` of a ``file://`` URI whose ``..`` segments climb above the
    root of its path (e.g. ``file:///../../etc/passwd``). The active suite sends no such read: it cannot tell a
    refused escape from a missing file without reading something it should not."""
    read = _read_of(message, ctx)
    if read is None:
        return None
    request, uri = read
    if not _escapes(uri):
        return None
    if message.kind is Kind.ERROR:
        return passed(message)
    return failed(message, f"the path-traversal read {uri!r} was served with a result"[:300])
