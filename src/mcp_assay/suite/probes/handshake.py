"""The 2025-11-25 handshake and session: what discover replaced.

Selection already sent ``initialize`` offering the revision under test; :func:`confirm` completes the
handshake before any family runs (``notifications/initialized``, ``202`` on HTTP; only then may the
session carry other requests, and only from then on may the server send its own), and this family
pings, offers an unsupported version on
a new session (a counter-offer or a refusal, never an echo), and on HTTP probes the session rules:
an invalid ``MCP-Protocol-Version`` (``400``), no version header (served as 2025-03-26 or refused),
no ``Mcp-Session-Id`` (``400`` when the server requires sessions), neither of the two (served as
``2025-03-26`` or refused, A22), ``GET`` (an event stream or
``405``), and ``logging/setLevel`` where logging is advertised. The session is ended at the very end
of the run (see :func:`teardown`), after which its id must get ``404``.
"""

from __future__ import annotations

from mcp_assay.probe_names import ProbeName
from mcp_assay.protocol import Era, Header, HeaderKey, MediaType
from mcp_assay.suite.context import Family, SuiteContext
from mcp_assay.suite.session import LegacyClient
from mcp_assay.suite.transports import StreamControl

__all__ = ["CLOSING", "FAMILY", "OPENING", "confirm", "teardown"]

UNSUPPORTED = "1900-01-01"


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, LegacyClient)
    await client.request("ping", probe=ctx.probe(ProbeName.PING, "ping is answered with an empty result"))
    fresh = await ctx.fresh_client()
    if isinstance(fresh, LegacyClient):
        await fresh.initialize(
            UNSUPPORTED,
            ctx.probe(
                ProbeName.UNSUPPORTED_VERSION,
                f"initialize offering {UNSUPPORTED}: a counter-offer, not an echo",
                off_version=True,
            ),
            adopt=False,
        )
    if ctx.advertises("logging"):
        await client.request(
            "logging/setLevel",
            {"level": "warning"},
            probe=ctx.probe(ProbeName.SET_LEVEL, "logging/setLevel answers {}"),
        )
        await client.request(
            "logging/setLevel",
            {"level": "verbose"},
            probe=ctx.probe(
                ProbeName.SET_LEVEL_INVALID, "logging/setLevel with an unknown level: -32602", invalid=True
            ),
        )
    if not ctx.http:
        return
    await client.request(
        "ping",
        headers={Header.PROTOCOL_VERSION: UNSUPPORTED},
        probe=ctx.probe(
            ProbeName.BAD_VERSION_HEADER,
            f"MCP-Protocol-Version {UNSUPPORTED} in the session: 400",
            invalid=True,
            off_version=True,
        ),
    )
    await client.request(
        "ping",
        version=False,
        probe=ctx.probe(
            ProbeName.NO_VERSION_HEADER,
            "no MCP-Protocol-Version header: served as 2025-03-26 or refused (A22)",
            invalid=True,
            off_version=True,
        ),
    )
    if client.session is not None:
        await client.request(
            "ping",
            session=False,
            probe=ctx.probe(ProbeName.NO_SESSION_ID, "a request without the session id: 400", invalid=True),
        )
    await client.request(
        "ping",
        session=False,
        version=False,
        probe=ctx.probe(
            ProbeName.NO_VERSION_NO_SESSION,
            "neither MCP-Protocol-Version nor a session: served as 2025-03-26 or refused with 400 (A22)",
            invalid=True,
            off_version=True,
        ),
    )
    await client.transport.send(
        b"",
        probe=ctx.probe(ProbeName.GET_STREAM, "GET with Accept: text/event-stream: an event stream or 405").at(
            ctx.revision.name
        ),
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


async def confirm(ctx: SuiteContext) -> None:
    """Send ``notifications/initialized`` on the session selection opened, before the families run."""
    client = ctx.client
    if not isinstance(client, LegacyClient) or client.initialize_result is None:
        return
    ctx.family = "handshake"
    await client.initialized(
        ctx.probe(ProbeName.INITIALIZED, "notifications/initialized completes the handshake (202 on HTTP, no answer)")
    )


async def teardown(ctx: SuiteContext) -> None:
    """End the 2025 HTTP session with DELETE; if the server ended it, its id must now get 404."""
    client = ctx.client
    if not isinstance(client, LegacyClient) or not ctx.http or client.session is None:
        return
    ctx.family = "handshake"
    reply = await client.transport.send(
        b"",
        probe=ctx.probe(ProbeName.DELETE_SESSION, "DELETE ends the session (or 405)").at(ctx.revision.name),
        expect=None,
        headers={k: v for k, v in client.headers().items() if k.lower() != HeaderKey.CONTENT_TYPE},
        method="DELETE",
        timeout=ctx.short_timeout,
    )  # type: ignore[call-arg]
    if reply.status is not None and 200 <= reply.status < 300:
        await client.request(
            "ping",
            probe=ctx.probe(ProbeName.ENDED_SESSION, "a request with the id of an ended session: 404", invalid=True),
            timeout=ctx.short_timeout,
        )


FAMILY = Family(
    name="handshake",
    requirements=frozenset(
        {"HS-04", "HS-05", "HS-06", "HS-09", "HS-12", "HS-13", "HS-17", "HS-20", "HS-21", "HTTP-38", "LOG-08"}
    ),
    run=run,
    eras=frozenset({Era.HANDSHAKE}),
    description="initialize, ping, session rules",
)

OPENING = Family(
    name="handshake",
    requirements=frozenset({"HS-08", "HS-09"}),
    run=confirm,
    eras=frozenset({Era.HANDSHAKE}),
    description="notifications/initialized on the session selection opened, before any family",
)
"""Completes the handshake of each handshake-era revision before its families run."""

CLOSING = Family(
    name="handshake",
    requirements=frozenset({"HS-21"}),
    run=teardown,
    eras=frozenset({Era.HANDSHAKE}),
    description="DELETE ends the session after every family; its id then gets 404",
)
"""Ends the session of each handshake-era revision after its families, while its transport still serves."""
