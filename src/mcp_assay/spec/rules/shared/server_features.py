"""What the rules for server features (tools, prompts, resources, completion) share.

Each feature is a capability a server declares and a few methods it then serves; the rules for
all of them ask the same questions of an answer: which request it replies to, whether the
capability was declared, whether the result's shape matches its definition (issues filtered to
the members a rule is about), whether content blocks are well formed, and whether an error is a
protocol-level one or a failure inside a handler. Repeated listings are compared the same way
for tools, prompts and resources.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from mcp_assay.cases import behaviour
from mcp_assay.spec.checks import Finding, failed, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.revisions import Revision
from mcp_assay.spec.rules.pagination import list_changed_between, walks
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.validator import FORMAT_CHECKER, SchemaIssue, canonical
from mcp_assay.vocabulary.protocol import JSONRPC_STANDARD_CODES, MCP_DEFINED_CODES, ErrorCode
from mcp_assay.wire.jsonrpc import Kind, Message

__all__ = [
    "ENVELOPE_CODES",
    "NEUTRAL_CODES",
    "PROTOCOL_CODES",
    "answered_method",
    "capability_declared",
    "completes",
    "content_block_issues",
    "declared_capability_is_served",
    "filtered_issues",
    "is_base64",
    "is_input_required",
    "is_uri",
    "listed_tools",
    "listing_consistency",
    "protocol_error",
    "shape_finding",
    "tool_label",
]

ENVELOPE_CODES = MCP_DEFINED_CODES
"""Codes that reject a request's envelope (headers, version, capabilities) before its method runs."""
PROTOCOL_CODES = (
    JSONRPC_STANDARD_CODES | MCP_DEFINED_CODES | {ErrorCode.RESOURCE_NOT_FOUND, ErrorCode.URL_ELICITATION_REQUIRED}
)
"""Codes that report a protocol-level problem rather than a failure inside a tool or a handler."""
NEUTRAL_CODES = PROTOCOL_CODES | {ErrorCode.REQUEST_CANCELLED, ErrorCode.REQUEST_TIMEOUT}
"""Also not a handler failure: request cancelled (-32800) and request timeout (-32001), as SDKs use them."""
REFUSED_ON_PURPOSE = (behaviour.SESSION_OTHER_PRINCIPAL,)
"""Well-formed probes sent where a refusal is the expected answer (AUTH-33: another principal inside a session);
their refusal says nothing about whether the method is served."""
BLOCK_DEFS = {
    "text": "TextContent",
    "image": "ImageContent",
    "audio": "AudioContent",
    "resource_link": "ResourceLink",
    "resource": "EmbeddedResource",
}


def answered_method(message: Message, ctx: Context) -> tuple[Message, str] | None:
    """The request a server answer replies to, with its method."""
    request = ctx.log.request_of(message)
    if request is None or request.method is None:
        return None
    return request, request.method


def completes(message: Message, ctx: Context, method: str) -> bool:
    """``message`` is a complete (not ``input_required``) answer to a ``method`` request."""
    answered = answered_method(message, ctx)
    return answered is not None and answered[1] == method and not is_input_required(message)


def is_input_required(message: Message) -> bool:
    return message.kind is Kind.RESULT and message.result_type == "input_required"


def protocol_error(code: int | None) -> bool:
    return code in NEUTRAL_CODES


def is_base64(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def is_uri(value: Any) -> bool:
    """Whether ``value`` is a URI (RFC 3986), read once per distinct string: traffic names the same few resources
    again and again, and the reading is costly (up to :data:`URIS_KEPT` strings of :data:`URI_KEPT_LENGTH`
    characters at most are remembered; the memory starts afresh when full)."""
    if not isinstance(value, str):
        return False
    known = _URIS.get(value)
    if known is None:
        known = FORMAT_CHECKER.conforms(value, "uri")
        if len(value) <= URI_KEPT_LENGTH:
            if len(_URIS) >= URIS_KEPT:
                _URIS.clear()
            _URIS[value] = known
    return known


URIS_KEPT = 4096
URI_KEPT_LENGTH = 2048
_URIS: dict[str, bool] = {}


def filtered_issues(
    issues: tuple[SchemaIssue, ...], roots: tuple[str, ...], exclude: tuple[str, ...] = ()
) -> list[SchemaIssue]:
    """Issues at or below one of ``roots`` (regular expressions over issue paths), minus ``exclude``.

    A root ``result.tools`` also keeps "'tools' is a required property" reported on ``result``."""
    kept = []
    for issue in issues:
        if any(re.match(f"(?:{pattern})(?:[.\\[]|$)", issue.path) for pattern in exclude):
            continue
        for root in roots:
            parent, _, leaf = root.rpartition(r"\.")
            if re.match(f"(?:{root})(?:[.\\[]|$)", issue.path) or (
                re.fullmatch(parent, issue.path) and issue.message.startswith(f"'{leaf}' is a required property")
            ):
                kept.append(issue)
                break
    return kept


def shape_finding(
    message: Message, ctx: Context, *, roots: tuple[str, ...], exclude: tuple[str, ...] = (), what: str
) -> Finding:
    """Validate ``message`` against its definition, keeping only issues under ``roots``."""
    validation = ctx.validate(message)
    if validation is None:
        return unverified(f"cannot tell which revision {message.describe()} belongs to, so no schema applies", message)
    if validation.note and "was not seen" in validation.note:
        return unverified(f"{what}: {validation.note}", message)
    issues = filtered_issues(validation.issues, roots, exclude)
    if not issues:
        return passed(message)
    text = "; ".join(issue.render() for issue in issues[:4])
    more = f"; … {len(issues) - 4} more" if len(issues) > 4 else ""
    return failed(message, f"{what} does not match {validation.definition} ({ctx.log.revision(message)}): {text}{more}")


def capability_declared(message: Message, ctx: Context, capability: str, methods: frozenset[str]) -> Finding | None:
    """A successful answer to one of ``methods`` comes from a server that declared ``capability``."""
    if message.kind is not Kind.RESULT:
        return None
    answered = answered_method(message, ctx)
    if answered is None or answered[1] not in methods:
        return None
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified(
            f"the server's capabilities were not captured (no server/discover or initialize answer), so whether it "
            f"declared {capability} is unknown",
            message,
        )
    if capability in caps:
        return passed(message)
    declared = ", ".join(sorted(caps)) or "none"
    return failed(message, f"the server served {answered[1]} without declaring {capability} (it declared: {declared})")


def declared_capability_is_served(message: Message, ctx: Context, capability: str, method: str) -> Finding | None:
    """A server that declared ``capability`` answers a plain ``method`` request with a result."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != method:
        return None
    request = answered[0]
    probe = ctx.probe(request)
    if probe is not None and (probe.invalid or probe.of_case(*REFUSED_ON_PURPOSE)):
        return None
    if isinstance(request.params, dict) and "cursor" in request.params:
        return None  # a cursor the server may reject is PAGE-05's concern
    caps = ctx.capabilities(message)
    if caps is None:
        return unverified(
            f"the server's capabilities were not captured, so whether it declared {capability} is unknown", message
        )
    if capability not in caps:
        return None
    if message.kind is Kind.RESULT:
        return passed(message)
    code = error_code(message)
    if code in ENVELOPE_CODES:
        return unverified(f"{method} was refused at the envelope (code {code}) before the method ran", message)
    validation = ctx.validate(request)
    if validation is not None and not validation.ok:
        return None  # the request itself was malformed
    return failed(message, f"the server declares {capability} but answered {method} with error code {code}")


def _iso8601(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def content_block_issues(
    block: Any, revision: Revision, path: str, *, base64_data: bool = True, byte_format: bool = True
) -> list[str]:
    """What is wrong with one content block, dispatched on its ``type``."""
    if not isinstance(block, dict):
        return [f"{path}: a content block is an object, not {type(block).__name__}"]
    kind = block.get("type")
    definition = BLOCK_DEFS.get(kind) if isinstance(kind, str) else None
    if definition is None:
        return [f"{path}: unknown content block type {kind!r}"]
    issues = [
        issue.render()
        for issue in revision.validator.validate_def(definition, block, prefix=path)
        if byte_format or "is not a 'byte'" not in issue.message
    ]
    if base64_data:
        if kind in ("image", "audio") and isinstance(block.get("data"), str) and not is_base64(block["data"]):
            issues.append(f"{path}.data: not valid base64")
        resource = block.get("resource")
        if kind == "resource" and isinstance(resource, dict) and "blob" in resource and not is_base64(resource["blob"]):
            issues.append(f"{path}.resource.blob: not valid base64")
    annotations = block.get("annotations")
    if isinstance(annotations, dict) and "lastModified" in annotations and not _iso8601(annotations["lastModified"]):
        issues.append(f"{path}.annotations.lastModified: {annotations['lastModified']!r} is not an ISO 8601 time")
    return list(dict.fromkeys(issues))


def listed_tools(message: Message, ctx: Context) -> tuple[str, list[Any]] | None:
    if message.kind is not Kind.RESULT or not isinstance(message.result, dict):
        return None
    answered = answered_method(message, ctx)
    if answered is None or answered[1] != "tools/list":
        return None
    tools = message.result.get("tools")
    return ("tools/list", tools) if isinstance(tools, list) else None


def tool_label(tool: Any, position: int) -> str:
    name = tool.get("name") if isinstance(tool, dict) else None
    return f"tool {name!r}" if isinstance(name, str) else f"tools[{position}]"


def listing_consistency(ctx: Context, method: str, *, order: bool) -> Iterator[Finding]:
    """Compare consecutive complete listings of one server and credentials taken close together.

    ``order=False`` compares the sets (TOOL-03 and friends), ``order=True`` compares the order of
    identical sets (TOOL-04)."""
    window = float(ctx.settings.get("listing_window_s", 60.0))
    member, ident = {
        "tools/list": ("tools", "name"),
        "prompts/list": ("prompts", "name"),
        "resources/list": ("resources", "uri"),
    }[method]
    latest: dict[tuple[str, str], Any] = {}
    for walk in walks(ctx, method):
        answer = walk.pages[-1].answer
        if not walk.complete or answer is None or not ctx.in_scope(answer):
            continue
        keys: list[str] = [
            item[ident] if isinstance(item, dict) and isinstance(item.get(ident), str) else canonical(item)
            for item in walk.items()
        ]
        slot = (walk.key, walk.credentials)
        earlier = latest.get(slot)
        latest[slot] = (walk, keys)
        if earlier is None:
            continue
        before, before_keys = earlier
        if walk.start - before.end > window or list_changed_between(ctx, method, before.start, walk.end):
            continue
        subject = answer
        if not order:
            gained = sorted(set(keys) - set(before_keys))
            lost = sorted(set(before_keys) - set(keys))
            if gained or lost:
                change = ", ".join([f"+{k}" for k in gained[:3]] + [f"-{k}" for k in lost[:3]])
                yield failed(subject, f"two {method} listings {walk.start - before.end:.1f}s apart differ: {change}")
            else:
                yield passed(subject)
        elif sorted(keys) == sorted(before_keys):
            if keys == before_keys:
                yield passed(subject)
            else:
                yield failed(subject, f"the same {member} came back in a different order from {method}")
