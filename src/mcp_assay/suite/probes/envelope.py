"""The JSON-RPC and HTTP request envelope: what a server does with input that is not quite right.

JSON-RPC (both revisions, both transports): a body that is not JSON (``-32700``), valid JSON that is
not a request (``-32600``), a batch, a notification (never answered; ``202`` on HTTP), a
cancellation for a request that never existed (ignored), and afterwards an ordinary request, which
must still be served.

2026-07-28 HTTP headers: ``Mcp-Method`` / ``Mcp-Name`` missing or disagreeing with the body
(``400`` and ``-32020``, case-only differences included), header names in other spellings
(accepted), ``Mcp-Name`` in the base64 sentinel form (accepted when it decodes to the body's value),
``Mcp-Session-Id`` and ``Last-Event-ID`` (ignored), and a foreign ``Origin`` (``403``).

The result envelope (``resultType``, cache hints, ``serverInfo``) needs no probe of its own: the
rules judge every result the other families bring back.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_assay.suite.context import Family, SuiteContext
from mcp_assay.suite.outgoing import encode
from mcp_assay.suite.session import LegacyClient, ModernClient, encode_header_value
from mcp_assay.suite.transports.stdio import StdioTransport

__all__ = ["FAMILY"]

NO_SUCH_TOOL = "mcp-assay-no-such-tool"


def _safe_method(ctx: SuiteContext) -> str:
    if ctx.advertises("tools"):
        return "tools/list"
    if ctx.modern:
        return "server/discover"
    return "ping"


def _params(ctx: SuiteContext) -> dict[str, Any] | None:
    return {} if ctx.modern else None


async def _quiet(ctx: SuiteContext, seconds: float = 0.3) -> None:
    """On stdio, give the server a moment to (wrongly) answer a notification before moving on."""
    transport = ctx.transport
    if isinstance(transport, StdioTransport):
        await transport.observe(seconds)
    else:
        await asyncio.sleep(0)


async def jsonrpc(ctx: SuiteContext) -> None:
    client = ctx.client
    method = _safe_method(ctx)
    short = ctx.short_timeout
    good = client.build(method, _params(ctx))
    good_text = encode(good)
    truncated = good_text[: max(10, len(good_text) // 2)]
    await ctx.tolerant(
        client.send(
            good,
            ctx.probe("invalid-json", "a body that is not valid JSON: -32700 without id", invalid=True),
            raw=truncated,
            timeout=short,
        )
    )
    wrong_version = dict(client.build(method, _params(ctx)))
    wrong_version["jsonrpc"] = "1.0"
    await ctx.tolerant(
        client.send(
            wrong_version,
            ctx.probe("jsonrpc-1.0", 'jsonrpc "1.0": -32600 with the request id', invalid=True),
            timeout=short,
        )
    )
    no_method = {"jsonrpc": "2.0", "id": client.ids()}
    await ctx.tolerant(
        client.send(no_method, ctx.probe("no-method", "a request without method: -32600", invalid=True), timeout=short)
    )
    batch = [client.build(method, _params(ctx))]
    await ctx.tolerant(
        client.send(
            batch[0],
            ctx.probe("batch", "a JSON array (batch) of one request: rejected, not processed", invalid=True),
            raw=encode(batch),
            timeout=short,
        )
    )
    body = client.build(
        "notifications/cancelled", {"requestId": "mcp-assay-never-sent", "reason": "probe"}, notification=True
    )
    probe = ctx.probe(
        "cancel-unknown-request",
        "notifications/cancelled for a request id never sent: ignored, no JSON-RPC answer",
        invalid=True,
    )
    if ctx.http:
        await client.send(body, probe)
    else:
        await ctx.transport.send(encode(body), probe=probe.tag(ctx.revision.name), expect=None, wait=False)
        await _quiet(ctx)
    still = await client.request(
        method, _params(ctx), probe=ctx.probe("still-serving", "an ordinary request after the above")
    )
    if still.request is not None and still.response is not None:
        finished = client.build(
            "notifications/cancelled", {"requestId": still.request.id, "reason": "already answered"}, notification=True
        )
        probe = ctx.probe("cancel-finished-request", "notifications/cancelled for an answered request: ignored")
        if ctx.http:
            await client.send(finished, probe)
        else:
            await ctx.transport.send(encode(finished), probe=probe.tag(ctx.revision.name), expect=None, wait=False)
            await _quiet(ctx)
        await client.request(
            method, _params(ctx), probe=ctx.probe("after-cancellation", "an ordinary request after the cancellation")
        )


async def headers(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, ModernClient)
    method = _safe_method(ctx)
    await client.request(
        method,
        {},
        headers={"Mcp-Method": None},
        probe=ctx.probe("no-mcp-method", "no Mcp-Method header: 400 and -32020", invalid=True),
    )
    await client.request(
        method,
        {},
        headers={"Mcp-Method": "prompts/get" if method != "prompts/get" else "tools/list"},
        probe=ctx.probe("mcp-method-mismatch", "Mcp-Method names another method: 400 and -32020", invalid=True),
    )
    await client.request(
        method,
        {},
        headers={"Mcp-Method": method.upper()},
        probe=ctx.probe(
            "mcp-method-case", "Mcp-Method differs from the body only in case: 400 and -32020", invalid=True
        ),
    )
    body = client.build(method, {})
    spelled = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": ctx.revision.name,
        "MCP-METHOD": method,
    }
    await client.send(
        body,
        ctx.probe("header-name-case", "standard header names in other spellings are accepted"),
        headers=spelled,
        replace_headers=True,
    )
    await client.request(
        method,
        {},
        headers={"Mcp-Session-Id": "mcp-assay-not-a-session"},
        probe=ctx.probe(
            "session-id-ignored",
            "an Mcp-Session-Id header is ignored, and no Mcp-Session-Id comes back",
            invalid=True,
        ),
    )
    await client.request(
        method,
        {},
        headers={"Last-Event-ID": "mcp-assay-0"},
        probe=ctx.probe("last-event-id-ignored", "Last-Event-ID is ignored: no replay", invalid=True),
    )
    await client.request(
        method,
        {},
        headers={"Origin": "https://mcp-assay.invalid"},
        probe=ctx.probe(
            "foreign-origin", "a request from a foreign Origin: 403 Forbidden", invalid=True, foreign_origin=True
        ),
        allow_refusal=True,
    )
    await _named(ctx, client)


async def _named(ctx: SuiteContext, client: ModernClient) -> None:
    """Mcp-Name probes on a method whose capability is advertised, naming nothing that exists."""
    if ctx.advertises("tools"):
        method, field, value = "tools/call", "name", NO_SUCH_TOOL
        params: dict[str, Any] = {"name": NO_SUCH_TOOL, "arguments": {}}
    elif ctx.advertises("prompts"):
        method, field, value = "prompts/get", "name", "mcp-assay-no-such-prompt"
        params = {"name": value}
    elif ctx.advertises("resources"):
        method, field, value = "resources/read", "uri", "file:///mcp-assay/no-such-resource"
        params = {"uri": value}
    else:
        ctx.skip(
            "no tools, prompts or resources capability, so no method carries Mcp-Name",
            requirements=("HTTP-12", "HTTP-13", "HTTP-16"),
            case="mcp-name",
        )
        return
    await client.request(
        method,
        params,
        headers={"Mcp-Name": None},
        probe=ctx.probe("no-mcp-name", f"{method} without Mcp-Name: 400 and -32020", invalid=True),
    )
    await client.request(
        method,
        params,
        headers={"Mcp-Name": value + "-other"},
        probe=ctx.probe("mcp-name-mismatch", f"Mcp-Name differs from params.{field}: 400 and -32020", invalid=True),
    )
    await client.request(
        method,
        params,
        headers={"Mcp-Name": encode_header_value(value, force=True)},
        probe=ctx.probe(
            "mcp-name-base64", "Mcp-Name in the =?base64?…?= form decoding to the body's value is accepted"
        ),
    )
    raw_value = value + "-\u00e9"
    await client.request(
        method,
        {**params, field: raw_value},
        headers={"Mcp-Name": raw_value.encode("utf-8")},
        probe=ctx.probe(
            "header-invalid-characters",
            "Mcp-Name carrying raw non-ASCII bytes instead of the base64 form: 400",
            invalid=True,
        ),
    )
    await client.request(
        method,
        params,
        headers={"Mcp-Name": encode_header_value(value + "-other", force=True)},
        probe=ctx.probe(
            "mcp-name-base64-mismatch",
            "Mcp-Name in base64 form decoding to another value: 400 and -32020",
            invalid=True,
        ),
    )


async def run(ctx: SuiteContext) -> None:
    if ctx.http and ctx.modern:
        await headers(ctx)
    elif ctx.http and isinstance(ctx.client, LegacyClient):
        client = ctx.client
        await client.request(
            _safe_method(ctx),
            _params(ctx),
            headers={"Origin": "https://mcp-assay.invalid"},
            probe=ctx.probe(
                "foreign-origin", "a request from a foreign Origin: 403 Forbidden", invalid=True, foreign_origin=True
            ),
            allow_refusal=True,
        )
    await jsonrpc(ctx)


FAMILY = Family(
    name="envelope",
    requirements=frozenset(
        {
            "RPC-09",
            "RPC-11",
            "RPC-12",
            "RPC-13",
            "RPC-14",
            "HTTP-05",
            "HTTP-06",
            "HTTP-12",
            "HTTP-13",
            "HTTP-14",
            "HTTP-16",
            "HTTP-33",
            "HTTP-34",
            "HTTP-35",
            "HTTP-37",
            "CAN-02",
            "CAN-09",
        }
    ),  # fmt: skip
    run=run,
    description="JSON-RPC envelope and 2026 HTTP request headers",
)
