"""The JSON-RPC and HTTP request envelope: what a server does with input that is not quite right.

JSON-RPC (both revisions, both transports): a body that is not JSON (``-32700``), valid JSON that is
not a request (``-32600``), a batch, a notification (never answered; ``202`` on HTTP), a
cancellation for a request that never existed (ignored), and afterwards an ordinary request, which
must still be served.

2026-07-28 HTTP headers: ``Mcp-Method`` / ``Mcp-Name`` missing or disagreeing with the body
(``400`` and ``-32020``, case-only differences included; the ``Mcp-Name`` mismatch names a listed
tool in the header and a tool that does not exist in the body, so a server that dispatches on the
body without checking the header still causes no side effect, BEH-02), header names in other
spellings (accepted), ``Mcp-Name`` in the base64 sentinel form (accepted when it decodes to the
body's value, refused when it does not) and a name that needs that form (non-ASCII, a leading
space), ``Mcp-Param-*`` headers for tools with ``x-mcp-header`` marks (:mod:`.params`),
``Mcp-Session-Id`` and ``Last-Event-ID`` (ignored), and a foreign ``Origin`` (``403``) followed by
the same request without it (served: the control that makes the ``403`` attributable).

Three cases have no server-side requirement to judge them, so their answers are recorded as notes in
the report rather than as findings: a JSON-RPC *response* sent by the client (2026 clients send
none, HTTP-04 / STDIO-06 bind the client), an ``Accept`` header that does not list both media
types (HTTP-03 binds the client), and a foreign ``Host`` header. A web page that rebinds its own
DNS name to 127.0.0.1 reaches a local server with its own name in ``Host`` (and, from a script
that sends none, without ``Origin``); checking ``Host`` is the usual defence, but the
specification names only ``Origin`` (HTTP-35), so serving it is noted, never failed.

The result envelope (``resultType``, cache hints, ``serverInfo``) needs no probe of its own: the
rules judge every result the other families bring back.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from mcp_assay.cases import envelope as cases
from mcp_assay.cases import params as param_cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import LegacyClient, ModernClient, encode_header_value
from mcp_assay.suite.outgoing import encode
from mcp_assay.suite.probes import params as param_headers
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.protocol import ACCEPT_BOTH, Header, HeaderKey, MediaType

__all__ = ["FAMILY"]

NO_SUCH_TOOL = "mcp-assay-no-such-tool"
NEEDS_SENTINEL = " mcp-assay-no-such-tool-\u00e9"
"""A name with a leading space and a non-ASCII letter: only the =?base64?…?= form can carry it."""
NO_SUCH_REQUEST = "mcp-assay-no-such-request"
WRONG_ACCEPT = ((MediaType.JSON, cases.WRONG_ACCEPT_JSON), ("text/html", cases.WRONG_ACCEPT_HTML))


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
            ctx.probe(cases.INVALID_JSON),
            raw=truncated,
            timeout=short,
        )
    )
    wrong_version = dict(client.build(method, _params(ctx)))
    wrong_version["jsonrpc"] = "1.0"
    await ctx.tolerant(
        client.send(
            wrong_version,
            ctx.probe(cases.JSONRPC_1_0),
            timeout=short,
        )
    )
    no_method = {"jsonrpc": "2.0", "id": client.ids()}
    await ctx.tolerant(client.send(no_method, ctx.probe(cases.NO_METHOD), timeout=short))
    batch = [client.build(method, _params(ctx))]
    await ctx.tolerant(
        client.send(
            batch[0],
            ctx.probe(cases.BATCH),
            raw=encode(batch),
            timeout=short,
        )
    )
    await _client_response(ctx)
    body = client.build(
        "notifications/cancelled", {"requestId": "mcp-assay-never-sent", "reason": "probe"}, notification=True
    )
    probe = ctx.probe(cases.CANCEL_UNKNOWN_REQUEST)
    if ctx.http:
        await client.send(body, probe)
    else:
        await ctx.transport.send(encode(body), probe=probe.at(ctx.revision.name), expect=None, wait=False)
        await _quiet(ctx)
    still = await client.request(method, _params(ctx), probe=ctx.probe(cases.STILL_SERVING))
    if still.request is not None and still.response is not None:
        finished = client.build(
            "notifications/cancelled", {"requestId": still.request.id, "reason": "already answered"}, notification=True
        )
        probe = ctx.probe(cases.CANCEL_FINISHED_REQUEST)
        if ctx.http:
            await client.send(finished, probe)
        else:
            await ctx.transport.send(encode(finished), probe=probe.at(ctx.revision.name), expect=None, wait=False)
            await _quiet(ctx)
        await client.request(method, _params(ctx), probe=ctx.probe(cases.AFTER_CANCELLATION))


async def _client_response(ctx: SuiteContext) -> None:
    """A JSON-RPC response from the client, answering a request the server never sent.

    No server-side requirement says how to treat it (HTTP-04 and STDIO-06 bind clients; in
    2025-11-25 a client may POST responses, HTTP-05/06 judge the status), so what came back is
    recorded as a note."""
    body = {"jsonrpc": "2.0", "id": NO_SUCH_REQUEST, "result": {}}
    probe = ctx.probe(cases.CLIENT_RESPONSE)
    if ctx.http:
        reply = await ctx.tolerant(ctx.client.send(body, probe, timeout=ctx.short_timeout))
        answer = reply.describe() if reply is not None else "no answer in time"
        where = "POSTed"
    else:
        transport = ctx.transport
        assert isinstance(transport, StdioTransport)
        await transport.send(encode(body), probe=probe.at(ctx.revision.name), expect=None, wait=False)
        seen = await transport.observe(0.3)
        answer = "; ".join(message.describe() for message in seen) or "nothing (ignored)"
        where = "written to stdin"
    ctx.observe(
        "note",
        detail=f"observation (no server requirement applies): a JSON-RPC response from the client, {where} in "
        f"{ctx.revision.name}, was answered with {answer}",
    )


async def _accept(ctx: SuiteContext) -> None:
    """POSTs whose Accept does not list both media types; HTTP-03 binds the client, so these are notes."""
    client = ctx.client
    method = _safe_method(ctx)
    for accept, case in WRONG_ACCEPT:
        probe = ctx.probe(case, f"Accept: {accept} only: the server may refuse (406) or answer")
        reply = await ctx.tolerant(
            client.request(
                method, _params(ctx), headers={Header.ACCEPT: accept}, probe=probe, timeout=ctx.short_timeout
            )
        )
        answer = reply.describe() if reply is not None else "no answer in time"
        if reply is not None and reply.content_type:
            answer += f" as {reply.content_type}"
        ctx.observe(
            "note",
            detail=f"observation (no server requirement applies): {method} with Accept: {accept} only was "
            f"answered {answer}",
        )


async def _origin(ctx: SuiteContext) -> None:
    """A foreign Origin (403 expected), then the same request without it (the control)."""
    client = ctx.client
    method = _safe_method(ctx)
    await client.request(
        method,
        _params(ctx),
        headers={Header.ORIGIN: "https://mcp-assay.invalid"},
        probe=ctx.probe(cases.FOREIGN_ORIGIN),
        allow_refusal=True,
    )
    await client.request(
        method,
        _params(ctx),
        probe=ctx.probe(cases.ORIGIN_CONTROL),
        allow_refusal=True,
    )


FOREIGN_HOST = "mcp-assay-rebinding.invalid"


async def _host(ctx: SuiteContext) -> None:
    """The same request under a foreign Host header (DNS rebinding); what the server does is only noted."""
    method = _safe_method(ctx)
    reply = await ctx.client.request(
        method,
        _params(ctx),
        headers={Header.HOST: FOREIGN_HOST},
        probe=ctx.probe(cases.FOREIGN_HOST),
        allow_refusal=True,
    )
    host = (urlsplit(ctx.config.url or "").hostname or "").lower()
    local = host in ("localhost", "::1") or host.startswith("127.")
    if reply.ok:
        verdict = "served it: " + (
            "a web page that rebinds its DNS name to this loopback server could use it (check Host as well as Origin)"
            if local
            else "the server does not check Host (a defence against DNS rebinding that matters most on loopback)"
        )
    else:
        verdict = f"refused it ({reply.describe()}): the server checks Host"
    ctx.observe(
        "note",
        detail=f"observation (the specification names only Origin, HTTP-35): {method} with Host: {FOREIGN_HOST} — "
        f"the server {verdict}",
    )


async def headers(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, ModernClient)
    method = _safe_method(ctx)
    await client.request(
        method,
        {},
        headers={Header.METHOD: None},
        probe=ctx.probe(cases.NO_MCP_METHOD),
    )
    await client.request(
        method,
        {},
        headers={Header.METHOD: "prompts/get" if method != "prompts/get" else "tools/list"},
        probe=ctx.probe(cases.MCP_METHOD_MISMATCH),
    )
    await client.request(
        method,
        {},
        headers={Header.METHOD: method.upper()},
        probe=ctx.probe(cases.MCP_METHOD_CASE),
    )
    body = client.build(method, {})
    spelled = {
        HeaderKey.CONTENT_TYPE: MediaType.JSON,
        HeaderKey.ACCEPT: ACCEPT_BOTH,
        HeaderKey.PROTOCOL_VERSION: ctx.revision.name,
        "MCP-METHOD": method,
    }
    await client.send(
        body,
        ctx.probe(cases.HEADER_NAME_CASE),
        headers=spelled,
        replace_headers=True,
    )
    await client.request(
        method,
        {},
        headers={Header.SESSION_ID: "mcp-assay-not-a-session"},
        probe=ctx.probe(cases.SESSION_ID_IGNORED),
    )
    await client.request(
        method,
        {},
        headers={Header.LAST_EVENT_ID: "mcp-assay-0"},
        probe=ctx.probe(cases.LAST_EVENT_ID_IGNORED),
    )
    await _origin(ctx)
    await _host(ctx)
    await _accept(ctx)
    await _named(ctx, client)
    await param_headers.run(ctx)


def _named_methods(ctx: SuiteContext) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(method, body field, value, params) for each advertised method that carries Mcp-Name, naming nothing real."""
    targets: list[tuple[str, str, str, dict[str, Any]]] = []
    if ctx.advertises("tools"):
        targets.append(("tools/call", "name", NO_SUCH_TOOL, {"name": NO_SUCH_TOOL, "arguments": {}}))
    if ctx.advertises("prompts"):
        targets.append(("prompts/get", "name", "mcp-assay-no-such-prompt", {"name": "mcp-assay-no-such-prompt"}))
    if ctx.advertises("resources"):
        uri = "file:///mcp-assay/no-such-resource"
        targets.append(("resources/read", "uri", uri, {"uri": uri}))
    return targets


def _listed_name(ctx: SuiteContext, method: str, value: str) -> str:
    """A real listed name for the header of the mismatch probe (BEH-02), else a second made-up one."""
    listing = ctx.listings.get({"tools/call": "tools/list", "prompts/get": "prompts/list"}.get(method, ""))
    for item in listing.items if listing is not None else ():
        name = item.get("name")
        if isinstance(name, str) and name and name != value and encode_header_value(name) == name:
            return name
    return value + "-other"


async def _named(ctx: SuiteContext, client: ModernClient) -> None:
    """Mcp-Name probes on each method whose capability is advertised, the body naming nothing that exists."""
    targets = _named_methods(ctx)
    if not targets:
        ctx.skip(
            "no tools, prompts or resources capability, so no method carries Mcp-Name",
            requirements=("HTTP-12", "HTTP-13", "HTTP-16"),
            case=cases.NO_MCP_NAME,
        )
        return
    method, field, value, params = targets[0]
    await client.request(
        method,
        params,
        headers={Header.NAME: None},
        probe=ctx.probe(cases.NO_MCP_NAME, f"{method} without Mcp-Name: 400 and -32020"),
    )
    for method, field, value, params in targets:
        other = _listed_name(ctx, method, value)
        await client.request(
            method,
            params,
            headers={Header.NAME: other},
            probe=ctx.probe(
                cases.MCP_NAME_MISMATCH,
                f"Mcp-Name {other!r} differs from params.{field} {value!r}: 400 and -32020, not an answer about "
                f"params.{field}",
            ),
        )
    method, field, value, params = targets[0]
    await client.request(
        method,
        params,
        headers={Header.NAME: encode_header_value(value, force=True)},
        probe=ctx.probe(cases.MCP_NAME_BASE64),
    )
    raw_value = value + "-\u00e9"
    await client.request(
        method,
        {**params, field: raw_value},
        headers={Header.NAME: raw_value.encode("utf-8")},
        probe=ctx.probe(cases.HEADER_INVALID_CHARACTERS),
    )
    await client.request(
        method,
        params,
        headers={Header.NAME: encode_header_value(value + "-other", force=True)},
        probe=ctx.probe(cases.MCP_NAME_BASE64_MISMATCH),
    )
    named = [(m, f, p) for m, f, _, p in targets if f == "name"]
    if named:
        method, field, params = named[0]
        await client.request(
            method,
            {**params, field: NEEDS_SENTINEL},
            probe=ctx.probe(
                cases.MCP_NAME_NEEDS_SENTINEL,
                f"params.{field} {NEEDS_SENTINEL!r} (a leading space, non-ASCII) sent as a =?base64?…?= Mcp-Name: "
                "accepted as a match",
            ),
        )


async def run(ctx: SuiteContext) -> None:
    if ctx.http and ctx.modern:
        await headers(ctx)
    elif ctx.http and isinstance(ctx.client, LegacyClient):
        await _origin(ctx)
        await _host(ctx)
        await _accept(ctx)
    await jsonrpc(ctx)


FAMILY = ProbeFamily(
    name="envelope",
    cases=(*cases.CASES, *param_cases.CASES),
    run=run,
    description="JSON-RPC envelope and 2026 HTTP request headers",
)
