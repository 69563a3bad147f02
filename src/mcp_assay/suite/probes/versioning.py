"""Per-request versioning (2026-07-28): the version in ``_meta`` decides, one request at a time.

Each probe changes exactly one thing from a known-good request (ambiguity A6): a request without
``clientInfo`` (optional, must be served), without ``clientCapabilities`` or without a protocol
version (``-32602``, or ``-32020`` when a header still names one, A7), with an unsupported version
(``-32022`` naming the supported ones), with the header and ``_meta`` disagreeing (``-32020``), with
no ``MCP-Protocol-Version`` header at all, and with another ``clientInfo`` (same answer expected).
A request whose ``logLevel`` is not a defined level (``"verbose"``) is to be refused with ``-32602``
(LOG-04); the logging page asks that of any server, whether or not it declares ``logging``.

Over HTTP one ``initialize`` offers ``2025-03-26``, as a client from before the
``MCP-Protocol-Version`` header would (no 2026 headers): a server that serves such clients may
take a POST without that header for ``2025-03-26``, any other must refuse it (HTTP-26), and its
answer says which kind it is.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.cases import versioning as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import ModernClient
from mcp_assay.suite.outgoing import encode, validate_outgoing
from mcp_assay.vocabulary.protocol import Era, Header, MetaKey

__all__ = ["FAMILY", "baseline_method"]

UNSUPPORTED = "1900-01-01"
BEFORE_VERSION_HEADER = "2025-03-26"
"""The last handshake revision whose clients sent no MCP-Protocol-Version header."""
UNKNOWN_LOG_LEVEL = "verbose"
"""Not a LoggingLevel: the level a request names must be one of the eight syslog levels."""


def baseline_method(ctx: SuiteContext) -> tuple[str, dict[str, Any]]:
    """A real capability-backed method to vary (tools/list where there are tools), else discover."""
    for capability, method in (("tools", "tools/list"), ("prompts", "prompts/list"), ("resources", "resources/list")):
        if ctx.advertises(capability):
            return method, {}
    return "server/discover", {}


def _other_version(ctx: SuiteContext) -> str:
    others = [rev.name for rev in ctx.spec.window if rev is not ctx.revision]
    return others[0] if others else UNSUPPORTED


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, ModernClient)
    method, params = baseline_method(ctx)
    name = ctx.revision.name
    await client.request(method, params, probe=ctx.probe(cases.ACCEPTED, f"{method} declaring {name} in _meta"))
    await client.request(
        method,
        params,
        meta=client.meta(drop=[MetaKey.CLIENT_INFO]),
        probe=ctx.probe(cases.NO_CLIENT_INFO),
    )
    await client.request(
        method,
        params,
        meta=client.meta(**{MetaKey.CLIENT_INFO: {"name": "mcp-assay-other-client", "version": "9.9.9"}}),
        probe=ctx.probe(cases.OTHER_CLIENT_INFO),
    )
    await client.request(
        method,
        params,
        meta=client.meta(drop=[MetaKey.CLIENT_CAPABILITIES]),
        probe=ctx.probe(cases.NO_CLIENT_CAPABILITIES),
    )
    await client.request(
        method,
        params,
        meta=client.meta(drop=[MetaKey.PROTOCOL_VERSION]),
        probe=ctx.probe(cases.NO_META_VERSION),
    )
    body = client.build(method, params)
    body["params"] = {key: value for key, value in body["params"].items() if key != "_meta"}
    await client.send(body, ctx.probe(cases.NO_META))
    body = client.build(method, params)
    del body["params"]
    await client.send(body, ctx.probe(cases.NO_PARAMS))
    await client.request(
        method,
        params,
        meta=client.meta(**{MetaKey.PROTOCOL_VERSION: UNSUPPORTED}),
        headers={Header.PROTOCOL_VERSION: UNSUPPORTED},
        probe=ctx.probe(cases.UNSUPPORTED_VERSION),
    )
    await client.request(
        method,
        params,
        meta=client.meta(**{MetaKey.LOG_LEVEL: UNKNOWN_LOG_LEVEL}),
        probe=ctx.probe(
            cases.LOG_LEVEL_UNKNOWN, f"{method} with logLevel {UNKNOWN_LOG_LEVEL!r}, not a defined level: -32602"
        ),
    )
    if not ctx.http:
        return
    other = _other_version(ctx)
    # the body of this probe names the other revision, so its method must exist in both
    shared = method if method != "server/discover" else "tools/list"
    await client.request(
        shared,
        params,
        meta=client.meta(**{MetaKey.PROTOCOL_VERSION: other}),
        headers={Header.PROTOCOL_VERSION: name},
        probe=ctx.probe(cases.HEADER_BODY_MISMATCH, f"MCP-Protocol-Version {name}, _meta {other}: 400 and -32020"),
    )
    await client.request(
        method,
        params,
        headers={Header.PROTOCOL_VERSION: other},
        probe=ctx.probe(cases.BODY_HEADER_MISMATCH, f"MCP-Protocol-Version {other}, _meta {name}: 400 and -32020"),
    )
    await client.request(
        method,
        params,
        headers={Header.PROTOCOL_VERSION: None},
        probe=ctx.probe(cases.NO_VERSION_HEADER),
    )
    await _old_initialize(ctx)
    fresh = await ctx.fresh_client()
    if isinstance(fresh, ModernClient) and ctx.advertises("tools"):
        await fresh.request(
            "tools/list",
            {},
            probe=ctx.probe(cases.FRESH_CONNECTION),
        )
    if not ctx.handshake_offered or ctx.config.modern_only:
        body = {
            "jsonrpc": "2.0",
            "id": client.ids(),
            "method": "initialize",
            "params": {
                "protocolVersion": _other_version(ctx),
                "capabilities": {},
                "clientInfo": {"name": "mcp-assay", "version": "legacy-probe"},
            },
        }
        await client.send(
            body,
            ctx.probe(cases.LEGACY_INITIALIZE),
            headers={Header.PROTOCOL_VERSION: None, Header.METHOD: None},
        )


async def _old_initialize(ctx: SuiteContext) -> None:
    """HTTP-26: does the server serve clients older than 2025-06-18? Ask it as one of them would."""
    client = ctx.client
    assert isinstance(client, ModernClient)
    body = {
        "jsonrpc": "2.0",
        "id": client.ids(),
        "method": "initialize",
        "params": {
            "protocolVersion": BEFORE_VERSION_HEADER,
            "capabilities": {},
            "clientInfo": {"name": "mcp-assay", "version": "old-client-probe"},
        },
    }
    handshake = next((rev for rev in ctx.spec.window if rev.has("handshake")), None)
    if handshake is not None:  # no 2026 message: checked against the handshake schema, then sent as it is
        validate_outgoing(handshake, encode(body), invalid=False)
    await client.send(
        body,
        ctx.probe(cases.OLD_INITIALIZE),
        headers={Header.PROTOCOL_VERSION: None, Header.METHOD: None},
    )


FAMILY = ProbeFamily(
    name="versioning",
    cases=cases.CASES,
    run=run,
    eras=frozenset({Era.MODERN}),
    description="per-request versioning: version in _meta, mismatches, unsupported versions",
)
