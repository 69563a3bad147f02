"""server/discover (2026-07-28): answered without a session, stable within its TTL, naming the window.

The first discover is the one revision selection sent; this family asks again to see whether the
answer is stable, and asks with a revision the server cannot serve (which may be answered either
with a discover result or with ``-32022``, ambiguity A20). Stability is owed only for as long as
the first answer said it may be cached (``ttlMs``): an answer with ``ttlMs`` 0 (or none) promises
nothing beyond the moment, and the run says so instead of reporting that nothing was observed.

:data:`LATER` asks the same question once more after every other family has had its turn (calls,
listings, subscriptions, hostile input): within the first answer's ``ttlMs`` the capabilities and
versions must be the same, or the answer depends on what came before (VER-09, VER-16).
"""

from __future__ import annotations

from mcp_assay.cases import discover as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import ModernClient
from mcp_assay.vocabulary.protocol import Era, Header, MetaKey

__all__ = ["FAMILY", "LATER"]

UNSUPPORTED = "1900-01-01"


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, ModernClient)
    await client.request("server/discover", probe=ctx.probe(cases.AGAIN))
    _skip_without_ttl(ctx)
    meta = client.meta(**{MetaKey.PROTOCOL_VERSION: UNSUPPORTED})
    await client.request(
        "server/discover",
        meta=meta,
        probe=ctx.probe(cases.UNSUPPORTED_VERSION),
        headers={Header.PROTOCOL_VERSION: UNSUPPORTED},
    )


def _skip_without_ttl(ctx: SuiteContext) -> bool:
    """Say so when the first answer promises no period of stability; ``True`` when it does promise one."""
    ttl = ctx.discover_result.get("ttlMs") if ctx.discover_result is not None else None
    if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0:
        return True
    shown = "no ttlMs" if ttl is None else f"ttlMs {ttl!r}"
    ctx.skip(
        f"the first server/discover answer carries {shown}, so it promises no period within which a later "
        "answer must list the same supportedVersions and capabilities",
        case=cases.DISCOVER_LAST,
    )
    return False


async def last(ctx: SuiteContext) -> None:
    """The first discover's question again, after everything else the run sent."""
    client = ctx.client
    assert isinstance(client, ModernClient)
    if ctx.discover_result is None:
        ctx.skip("the first server/discover got no result to compare a later one with", case=cases.DISCOVER_LAST,
                 blocked_by="VER-06")  # fmt: skip
        return
    await client.request(
        "server/discover",
        probe=ctx.probe(cases.DISCOVER_LAST),
    )


FAMILY = ProbeFamily(
    name="discover",
    cases=cases.CASES,
    run=run,
    eras=frozenset({Era.MODERN}),
    description="server/discover: fields, identity, cache hints, stability",
)

LATER = ProbeFamily(
    name="discover-last",
    cases=cases.LATER_CASES,
    run=last,
    eras=frozenset({Era.MODERN}),
    description="server/discover once more after the other families: the answer has not moved within its ttl",
)
