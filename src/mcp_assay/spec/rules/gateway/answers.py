"""What the upstream answered, and what the client got for it (GW-08..11).

The gateway passes the upstream's answer on: an error with its code (GW-08), a result with its content
unchanged (GW-09: ``content``, ``structuredContent``, blobs, list entries), where the one change a gateway
may declare is a tool renamed with a prefix, whose calls then reach the upstream under the upstream's
name (GW-10); and the pages of a list, whose cursors travel both ways (GW-11).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.gateway._relays import Relays, answer_of, kind_of, relays, shown, status_of
from mcp_assay.spec.rules.gateway.streams import matched
from mcp_assay.spec.rules.shared.header_mirroring import decode_sentinel, is_sentinel
from mcp_assay.spec.rules.shared.reads import ANY_GATEWAY_RELAY
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.hops import Relay
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import HttpExchange

LISTS = {
    "tools/list": ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}
"""List methods: the member holding the entries, and the member naming each entry."""
CONTENT = {
    "tools/call": ("content", "structuredContent", "isError"),
    "resources/read": ("contents",),
    "prompts/get": ("messages",),
    "completion/complete": ("completion",),
}
"""Results whose members the gateway passes on unchanged."""


def _judged(ctx: Context, relay: Relay) -> bool:
    return relay.back is not None and ctx.in_scope(relay.front.request)


@log_check(
    requirements="GW-08", level=Level.SHOULD, subject="upstream errors relayed to the client", follows=ANY_GATEWAY_RELAY
)
def gateway_relays_error_codes(ctx: Context) -> Iterator[Finding]:
    """A JSON-RPC error the upstream answered reaches the client with the same code, and a refusal never becomes a
    result."""
    for relay in relays(ctx):
        if not _judged(ctx, relay) or relay.front.is_notification:
            continue
        assert relay.back is not None
        upstream = answer_of(relay.back)
        status = status_of(relay.back)
        if status == 404 and relay.back.session is not None:
            continue  # an ended session: GW-13's
        got = answer_of(relay.front)
        if upstream is None and status is not None and status >= 400:
            if got is not None and got.kind is Kind.RESULT:  # a refusal below JSON-RPC: the gateway's own error is fine
                yield failed(
                    got,
                    f"the upstream refused {relay.back.request.describe()} with HTTP {status} and no JSON-RPC answer; "
                    f"the client got a result as if it had been served",
                    related=(relay.back.request,),
                )
            continue
        if upstream is None or upstream.kind is not Kind.ERROR:
            continue
        if got is not None and got.kind is Kind.ERROR and got.error_code == upstream.error_code:
            yield passed(got, related=(upstream,))
            continue
        if got is None:
            front_status = status_of(relay.front)
            what = f"HTTP {front_status} with no JSON-RPC answer" if front_status is not None else "no answer"
        else:
            what = kind_of(got) if got.kind is Kind.ERROR else "a result"
        yield failed(
            got if got is not None else relay.front.request,
            f"the upstream answered {relay.back.request.describe()} with error {upstream.error_code}; the client got "
            f"{what}",
            related=(upstream,),
        )


def _difference(upstream: Any, relayed: Any, path: str) -> str | None:
    """Where two JSON values first differ (``None``: equal), in words; a number re-encoded (``1`` as ``1.0``) is the
    same number."""
    if _number(upstream) and _number(relayed):
        return (
            None
            if upstream == relayed
            else f"{path}: the upstream answered {shown(upstream)}, the client got {shown(relayed)}"
        )
    if type(upstream) is not type(relayed):
        return f"{path}: the upstream answered {shown(upstream)}, the client got {shown(relayed)}"
    if isinstance(upstream, dict):
        for key in sorted(set(upstream) | set(relayed)):
            if key == "_meta":
                continue
            if key not in relayed:
                return f"{path}.{key}: the upstream answered {shown(upstream[key])}, the client got nothing"
            if key not in upstream:
                return f"{path}.{key}: the client got {shown(relayed[key])}, which the upstream never answered"
            found = _difference(upstream[key], relayed[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(upstream, list):
        if len(upstream) != len(relayed):
            return f"{path}: the upstream answered {len(upstream)} entries, the client got {len(relayed)}"
        for number, (left, right) in enumerate(zip(upstream, relayed, strict=True)):
            found = _difference(left, right, f"{path}[{number}]")
            if found:
                return found
        return None
    if upstream != relayed:
        if isinstance(upstream, str) and len(upstream) > 80:
            return f"{path}: {len(upstream)} characters upstream, {len(relayed)} to the client, not the same"
        return f"{path}: the upstream answered {shown(upstream)}, the client got {shown(relayed)}"
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _content_difference(relay: Relay, upstream: dict[str, Any], relayed: dict[str, Any], renames: dict[str, str]) -> (
    str | None
):  # fmt: skip
    method = relay.method
    if method in CONTENT:
        for member in CONTENT[method]:
            if member in upstream or member in relayed:
                found = _difference(upstream.get(member), relayed.get(member), member)
                if found:
                    return found
        return None
    if method in LISTS:
        member, key = LISTS[method]
        entries = upstream.get(member)
        given = relayed.get(member)
        if not isinstance(entries, list) or not isinstance(given, list):
            return None
        upstream_names = {value: name for name, value in renames.items()}
        by_key = {entry.get(key): entry for entry in given if isinstance(entry, dict)}
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            name = entry.get(key)
            shown_as = upstream_names.get(name, name) if isinstance(name, str) and method == "tools/list" else name
            twin = by_key.get(shown_as)
            if twin is None:
                return f"{member}: the upstream listed {shown(name)}; the client's list does not have it"
            found = _difference(_without(entry, key), _without(twin, key), f"{member}[{shown(name)}]")
            if found:
                return found
    return None


def _without(entry: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in entry.items() if name != key}


@log_check(
    requirements="GW-09",
    level=Level.SHOULD,
    subject="upstream results and notifications relayed to the client",
    follows=ANY_GATEWAY_RELAY,
)
def gateway_relays_content_unchanged(ctx: Context) -> Iterator[Finding]:
    """What the upstream answered reaches the client unchanged, apart from tools the gateway renamed."""
    view = relays(ctx)
    for relay in view:
        if not _judged(ctx, relay):
            continue
        assert relay.back is not None
        for upstream_notice, relayed, same in matched(relay):
            if relayed is None:
                continue
            changed = None if same else _difference(upstream_notice.params, relayed.params, "params")
            if changed:
                yield failed(relayed, f"{relayed.describe()} on the stream of {relay.front.request.describe()}: "
                             f"{changed}", related=(upstream_notice,))  # fmt: skip
        if relay.method not in CONTENT and relay.method not in LISTS:
            continue
        upstream, got = answer_of(relay.back), answer_of(relay.front)
        if upstream is None or got is None or upstream.kind is not Kind.RESULT or got.kind is not Kind.RESULT:
            continue
        if not isinstance(upstream.result, dict) or not isinstance(got.result, dict):
            continue
        found = _content_difference(relay, upstream.result, got.result, view.correlation.renames)
        if found:
            yield failed(got, f"{relay.front.request.describe()}: {found}", related=(upstream,))
        else:
            yield passed(got, related=(upstream,))


def header_value(header: str) -> str | None:
    """A mirrored header's text: a Base64 sentinel decoded, a plain value as it is."""
    return decode_sentinel(header) if is_sentinel(header) else header


def _name_of(message: Message) -> Any:
    return message.params.get("name") if isinstance(message.params, dict) else None


@log_check(
    requirements="GW-10", level=Level.SHOULD, subject="calls of tools the gateway renamed", follows=ANY_GATEWAY_RELAY
)
def gateway_calls_renamed_tools_by_upstream_name(ctx: Context) -> Iterator[Finding]:
    """A call of a renamed tool reaches the upstream under the upstream's name, in params.name and Mcp-Name."""
    view = relays(ctx)
    for relay in view:
        if relay.method != "tools/call" or not _judged(ctx, relay):
            continue
        assert relay.back is not None
        name = _name_of(relay.front.request)
        wanted = view.correlation.upstream_name(name) if isinstance(name, str) else None
        if wanted is None:
            continue
        sent = relay.back.request
        if _name_of(sent) != wanted:
            yield failed(
                sent,
                f"the client called {shown(name)}, the gateway's name for the upstream's {shown(wanted)}; the "
                f"upstream was asked for {shown(_name_of(sent))}",
                related=(relay.front.request,),
            )
            continue
        exchange = relay.back.exchange
        header = exchange.request.headers.get(HeaderKey.NAME) if isinstance(exchange, HttpExchange) else None
        if header is not None and header_value(header) != wanted:
            yield failed(
                sent,
                f"the upstream was asked for {shown(wanted)} under Mcp-Name {shown(header)}: the header was not "
                "recomputed when the gateway took its prefix off the name",
                related=(relay.front.request,),
            )
            continue
        yield passed(sent, related=(relay.front.request,))


def _cursor(message: Message | None, holder: str) -> Any:
    if message is None:
        return None
    value = message.params if holder == "params" else message.result
    return value.get("nextCursor" if holder == "result" else "cursor") if isinstance(value, dict) else None


def _pages_asked(view: Relays) -> set[tuple[str, str | None, Any]]:
    """Every (method, upstream session, cursor) the upstream was asked for a page of: a gateway that walks the pages
    itself and answers the client with the whole list owes it no cursor."""
    asked: set[tuple[str, str | None, Any]] = set()
    calls = [*view.correlation.unclaimed(), *(relay.back for relay in view if relay.back is not None)]
    for call in calls:
        if call.method in LISTS:
            cursor = _cursor(call.request, "params")
            if isinstance(cursor, str):
                asked.add((call.method, call.session, cursor))
    return asked


@log_check(
    requirements="GW-11", level=Level.SHOULD, subject="pages of lists relayed to the client", follows=ANY_GATEWAY_RELAY
)
def gateway_relays_cursors(ctx: Context) -> Iterator[Finding]:
    """A nextCursor the upstream returns reaches the client, and the client's cursor reaches the upstream."""
    issued: dict[str, Any] = {}
    """The upstream's cursor behind each cursor the client was given (the same when the gateway passed it on)."""
    view = relays(ctx)
    walked = _pages_asked(view)
    for relay in view:
        if relay.method not in LISTS or not _judged(ctx, relay):
            continue
        assert relay.back is not None
        asked = _cursor(relay.front.request, "params")
        sent = _cursor(relay.back.request, "params")
        if isinstance(asked, str):
            wanted = issued.get(asked)
            if sent is None:
                yield failed(
                    relay.back.request,
                    f"the client asked for the page after cursor {shown(asked)}; the gateway asked the upstream for "
                    "the first page",
                    related=(relay.front.request,),
                )
                continue
            if wanted is not None and sent != wanted:
                yield failed(
                    relay.back.request,
                    f"the client's cursor {shown(asked)} stands for the upstream's {shown(wanted)}; the upstream was "
                    f"sent {shown(sent)}",
                    related=(relay.front.request,),
                )
                continue
        upstream, got = answer_of(relay.back), answer_of(relay.front)
        following = _cursor(upstream, "result") if upstream is not None and upstream.kind is Kind.RESULT else None
        if not isinstance(following, str):
            if isinstance(asked, str):
                yield passed(relay.back.request, related=(relay.front.request,))
            continue
        given = _cursor(got, "result") if got is not None and got.kind is Kind.RESULT else None
        if got is None or got.kind is not Kind.RESULT:
            continue
        if not isinstance(given, str) and (relay.method, relay.back.session, following) in walked:
            walk = "the gateway asked the upstream for the following pages itself"
            yield passed(got, walk, related=() if upstream is None else (upstream,))
            continue
        if not isinstance(given, str):
            yield failed(
                got,
                f"the upstream answered {relay.back.request.describe()} with nextCursor {shown(following)}; the "
                "client's answer has none, so the pages after it are lost",
                related=(upstream,) if upstream is not None else (),
            )
            continue
        issued[given] = following
        yield passed(got, related=(upstream,) if upstream is not None else ())
