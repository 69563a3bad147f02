"""Keeping to the negotiated revision, server side (HS-16): no newer revision's fields in a 2025 session.

A server that serves both eras on one endpoint builds its answers with one code path, and the newer
revision's envelope leaks into the older one's: ``resultType``, the caching hints ``ttlMs`` and
``cacheScope``, ``_meta["io.modelcontextprotocol/serverInfo"]`` on a result, an ``input_required``
result, a listen acknowledgement or a ``subscriptionId`` on a notification. The 2025-11-25 schema
lets a result carry members it does not define, so its schema check never sees them. This rule
compares the definition the session's revision gives a message with the definition each newer
revision of the window gives the same message (read from the schemas, never from a list) and fails
what only a newer one defines. Structured content and output schemas only 2026 allows break the
2025 definitions themselves: TOOL-09 and TOOL-07 judge those per revision.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from mcp_assay.spec.checks import Every, Finding, failed, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.revisions import Revision
from mcp_assay.spec.validator import MessageValidator
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message


@cache
def members(validator: MessageValidator, definition: str, path: tuple[str, ...] = ()) -> frozenset[str]:
    """The member names ``$defs/<definition>`` (or the object at ``path`` inside it) defines, ``$ref``,
    ``allOf`` and ``anyOf`` followed."""
    nodes = [validator.defs.get(definition)]
    for step in path:
        nodes = [child for node in nodes for child in _branches(validator, node, step)]
    return frozenset(name for node in nodes for name in _properties(validator, node))


def _resolved(validator: MessageValidator, node: Any, depth: int = 0) -> list[dict[str, Any]]:
    """``node`` with its references resolved and its ``allOf``/``anyOf`` branches spread out."""
    if not isinstance(node, dict) or depth > 8:
        return []
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _resolved(validator, validator.defs.get(ref.removeprefix("#/$defs/")), depth + 1)
    found = [node]
    for key in ("allOf", "anyOf"):
        for branch in node.get(key, []) if isinstance(node.get(key), list) else []:
            found += _resolved(validator, branch, depth + 1)
    return found


def _properties(validator: MessageValidator, node: Any) -> Iterable[str]:
    for part in _resolved(validator, node):
        properties = part.get("properties")
        if isinstance(properties, dict):
            yield from properties


def _branches(validator: MessageValidator, node: Any, step: str) -> list[Any]:
    children = []
    for part in _resolved(validator, node):
        properties = part.get("properties")
        if isinstance(properties, dict) and step in properties:
            children.append(properties[step])
    return children


def _newer(ctx: Context, revision: Revision) -> list[Revision]:
    """The revisions of the window published after ``revision`` (the window is newest first)."""
    window = list(ctx.spec.window)
    return window[: window.index(revision)] if revision in window else []


def _only_newer(
    value: Any, own: frozenset[str], theirs: dict[str, frozenset[str]], prefix: str = ""
) -> list[tuple[str, str]]:
    """(member, the newer revision defining it) for every member of ``value`` only a newer revision defines."""
    if not isinstance(value, dict):
        return []
    found = []
    for name in value:
        if name in own:
            continue  # most members: the session's own revision defines them
        owner = next((revision for revision, defined in theirs.items() if name in defined), None)
        if owner is not None:
            found.append((f"{prefix}{name}", owner))
    return found


def _result_extras(message: Message, ctx: Context, revision: Revision) -> list[tuple[str, str]] | None:
    request = ctx.log.request_of(message)
    method = request.method if request is not None else None
    result = message.result
    if method is None or not isinstance(result, dict):
        return None
    own = revision.validator.result_definition(method, result)
    if own is None:
        return None  # a method this revision lacks: the request is what broke the revision (the client side of HS-16)
    fields: dict[str, frozenset[str]] = {}
    meta: dict[str, frozenset[str]] = {}
    for other in _newer(ctx, revision):
        theirs = other.validator.result_definition(method, result)
        if theirs is not None:
            fields[other.name] = members(other.validator, theirs)
            meta[other.name] = members(other.validator, theirs, ("_meta",))
    if not fields:
        return None  # no newer revision has this method (initialize, ping): nothing to tell apart
    own_fields = members(revision.validator, own)
    own_meta = members(revision.validator, own, ("_meta",))
    return _only_newer(result, own_fields, fields) + _only_newer(result.get("_meta"), own_meta, meta, "_meta ")


def _notification_extras(message: Message, ctx: Context, revision: Revision) -> list[tuple[str, str]] | None:
    method = message.method
    if method is None:
        return None
    own = revision.validator.notification_defs.get(method)
    newer = _newer(ctx, revision)
    if own is None:
        owners = [other.name for other in newer if method in other.validator.notification_defs]
        return [(f"the notification {method}", owners[0])] if owners else None
    params = message.params if isinstance(message.params, dict) else {}
    fields: dict[str, frozenset[str]] = {}
    meta: dict[str, frozenset[str]] = {}
    for other in newer:
        theirs = other.validator.notification_defs.get(method)
        if theirs is not None:
            fields[other.name] = members(other.validator, theirs, ("params",))
            meta[other.name] = members(other.validator, theirs, ("params", "_meta"))
    if not fields:
        return None
    own_fields = members(revision.validator, own, ("params",))
    own_meta = members(revision.validator, own, ("params", "_meta"))
    return _only_newer(params, own_fields, fields, "params.") + _only_newer(
        params.get("_meta"), own_meta, meta, "params._meta "
    )


@message_check(
    requirements="HS-16",
    level=Level.MUST,
    subject="server results and notifications in 2025 sessions",
    features={"handshake"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.NOTIFICATION},
    side=Side.SERVER,
    because=(
        "judges what the server answers and announces in a negotiated session; client messages and server "
        "requests are held to the negotiated schema by the other HS-16 check"
    ),
    methods=Every("a newer revision's field, _meta key or notification may turn up in a message of any method"),
)
def handshake_sessions_get_no_newer_revision_fields(message: Message, ctx: Context) -> Finding | None:
    """In a 2025 session the server sends no field, _meta key or notification that only a newer revision defines."""
    revision = ctx.revision(message)
    if revision is None:
        return None
    if message.kind is Kind.RESULT:
        extras = _result_extras(message, ctx, revision)
    else:
        extras = _notification_extras(message, ctx, revision)
    if extras is None:
        return None
    if not extras:
        return passed(message)
    owners = sorted({owner for _, owner in extras})
    shown = ", ".join(name for name, _ in extras[:6]) + (f" (+{len(extras) - 6} more)" if len(extras) > 6 else "")
    what = f"its answer to {request.method}" if (request := ctx.log.request_of(message)) is not None else "it"
    return failed(
        message,
        f"in a session that negotiated {revision.name}, {what} carries {shown}, which only "
        f"{' and '.join(owners)} define{'s' if len(owners) == 1 else ''}",
    )
