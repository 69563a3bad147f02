"""The 2025-11-25 handshake and session: what discover replaced.

Selection already sent ``initialize`` offering the revision under test; :func:`confirm` completes the
handshake before any family runs (``notifications/initialized``, ``202`` on HTTP; only then may the
session carry other requests, and only from then on may the server send its own), and this family
pings, offers an unsupported version on
a new session (a counter-offer or a refusal, never an echo), and on HTTP probes the session rules:
an invalid ``MCP-Protocol-Version`` (``400``), and one naming a published revision the server
declined when a new connection offered it in ``initialize`` (``400`` too), no version header
(served as 2025-03-26 or refused), no ``Mcp-Session-Id`` (``400`` when the server requires
sessions), neither of the two (served as ``2025-03-26`` or refused, A22), ``GET`` (an event stream or
``405``), and ``logging/setLevel`` where logging is advertised. The session is ended at the very end
of the run (see :func:`teardown`), after which its id must get ``404``.
"""

from __future__ import annotations

from mcp_assay.cases import handshake as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import LegacyClient
from mcp_assay.suite.transports import StreamControl
from mcp_assay.vocabulary.protocol import Era, Header, HeaderKey, MediaType

__all__ = ["CLOSING", "FAMILY", "OPENING", "confirm", "teardown"]

UNSUPPORTED = "1900-01-01"
PUBLISHED = "2024-11-05"
"""A published revision older than the window: one a server may well not support."""


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, LegacyClient)
    await client.request("ping", probe=ctx.probe(cases.PING))
    fresh = await ctx.fresh_client()
    if isinstance(fresh, LegacyClient):
        await fresh.initialize(
            UNSUPPORTED,
            ctx.probe(cases.UNSUPPORTED_VERSION),
            adopt=False,
        )
    if ctx.advertises("logging"):
        await client.request(
            "logging/setLevel",
            {"level": "warning"},
            probe=ctx.probe(cases.SET_LEVEL),
        )
        await client.request(
            "logging/setLevel",
            {"level": "verbose"},
            probe=ctx.probe(cases.SET_LEVEL_INVALID),
        )
    if not ctx.http:
        return
    await client.request(
        "ping",
        headers={Header.PROTOCOL_VERSION: UNSUPPORTED},
        probe=ctx.probe(cases.BAD_VERSION_HEADER),
    )
    await _published_version(ctx, client)
    await client.request(
        "ping",
        version=False,
        probe=ctx.probe(cases.NO_VERSION_HEADER),
    )
    if client.session is not None:
        await client.request(
            "ping",
            session=False,
            probe=ctx.probe(cases.NO_SESSION_ID),
        )
    await client.request(
        "ping",
        session=False,
        version=False,
        probe=ctx.probe(cases.NO_VERSION_NO_SESSION),
    )
    await client.transport.send(
        b"",
        probe=ctx.probe(cases.GET_STREAM).at(ctx.revision.name),
        expect=None,
        headers={
            **{
                k: v for k, v in client.headers().items() if k.lower() not in (HeaderKey.CONTENT_TYPE, HeaderKey.ACCEPT)
            },
            Header.ACCEPT: MediaType.EVENT_STREAM,
        },
        stream=StreamControl(budget=0.5, stop=lambda messages: True),
        method="GET",
        timeout=ctx.short_timeout,
    )  # type: ignore[call-arg]


async def _published_version(ctx: SuiteContext, client: LegacyClient) -> None:
    """HS-12 for a published revision: offer it on a new connection; declined, name it in the session's header."""
    fresh = await ctx.fresh_client()
    if client.session is None or not isinstance(fresh, LegacyClient):
        return
    offer = ctx.probe(cases.PUBLISHED_VERSION_HEADER, f"initialize offering {PUBLISHED}", invalid=False)
    reply = await fresh.initialize(PUBLISHED, offer, adopt=False)
    answered = reply.result.get("protocolVersion") if reply.ok else None
    if not isinstance(answered, str) or answered == PUBLISHED:
        return  # served (or not answered): the server supports it, or says nothing either way
    await client.request(
        "ping",
        headers={Header.PROTOCOL_VERSION: PUBLISHED},
        probe=ctx.probe(cases.PUBLISHED_VERSION_HEADER, f"MCP-Protocol-Version {PUBLISHED}, declined as {answered}"),
    )


async def confirm(ctx: SuiteContext) -> None:
    """Send ``notifications/initialized`` on the session selection opened, before the families run."""
    client = ctx.client
    if not isinstance(client, LegacyClient) or client.initialize_result is None:
        return
    ctx.family = "handshake"
    await client.initialized(ctx.probe(cases.INITIALIZED))


async def teardown(ctx: SuiteContext) -> None:
    """End the 2025 HTTP session with DELETE; if the server ended it, its id must now get 404."""
    client = ctx.client
    if not isinstance(client, LegacyClient) or not ctx.http or client.session is None:
        return
    ctx.family = "handshake"
    reply = await client.transport.send(
        b"",
        probe=ctx.probe(cases.DELETE_SESSION).at(ctx.revision.name),
        expect=None,
        headers={k: v for k, v in client.headers().items() if k.lower() != HeaderKey.CONTENT_TYPE},
        method="DELETE",
        timeout=ctx.short_timeout,
    )  # type: ignore[call-arg]
    if reply.status is not None and 200 <= reply.status < 300:
        await client.request(
            "ping",
            probe=ctx.probe(cases.ENDED_SESSION),
            timeout=ctx.short_timeout,
        )


FAMILY = ProbeFamily(
    name="handshake",
    cases=cases.CASES,
    run=run,
    eras=frozenset({Era.HANDSHAKE}),
    description="initialize, ping, session rules",
)

OPENING = ProbeFamily(
    name="handshake",
    cases=(cases.INITIALIZED,),
    run=confirm,
    eras=frozenset({Era.HANDSHAKE}),
    description="notifications/initialized on the session selection opened, before any family",
)
"""Completes the handshake of each handshake-era revision before its families run."""

CLOSING = ProbeFamily(
    name="handshake",
    cases=(cases.DELETE_SESSION, cases.ENDED_SESSION),
    run=teardown,
    eras=frozenset({Era.HANDSHAKE}),
    description="DELETE ends the session after every family; its id then gets 404",
)
"""Ends the session of each handshake-era revision after its families, while its transport still serves."""
