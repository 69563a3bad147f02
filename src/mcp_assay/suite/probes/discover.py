"""server/discover (2026-07-28): answered without a session, stable within its TTL, naming the window.

The first discover is the one revision selection sent; this family asks again to see whether the
answer is stable, and asks with a revision the server cannot serve (which may be answered either
with a discover result or with ``-32022``, ambiguity A20). Stability is owed only for as long as
the first answer said it may be cached (``ttlMs``): an answer with ``ttlMs`` 0 (or none) promises
nothing beyond the moment, and the run says so instead of reporting that nothing was observed.
"""

from __future__ import annotations

from mcp_assay.probe_names import ProbeName
from mcp_assay.suite.context import Family, SuiteContext
from mcp_assay.suite.session import PROTOCOL_VERSION_KEY, ModernClient

__all__ = ["FAMILY"]

UNSUPPORTED = "1900-01-01"


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    assert isinstance(client, ModernClient)
    await client.request(
        "server/discover", probe=ctx.probe(ProbeName.AGAIN, "a second discover to compare with the first")
    )
    ttl = ctx.discover_result.get("ttlMs") if ctx.discover_result is not None else None
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl <= 0:
        shown = "no ttlMs" if ttl is None else f"ttlMs {ttl!r}"
        ctx.skip(
            f"the first server/discover answer carries {shown}, so it promises no period within which a second "
            "answer must list the same supportedVersions",
            requirements={"VER-09"},
            case="stability",
        )
    meta = client.meta(**{PROTOCOL_VERSION_KEY: UNSUPPORTED})
    await client.request(
        "server/discover",
        meta=meta,
        probe=ctx.probe(
            ProbeName.UNSUPPORTED_VERSION,
            f"server/discover declaring {UNSUPPORTED}: a discover result or -32022 (A20)",
            invalid=True,
        ),
        headers={"MCP-Protocol-Version": UNSUPPORTED},
    )


FAMILY = Family(
    name="discover",
    requirements=frozenset({"VER-06", "VER-07", "VER-08", "VER-09"}),
    run=run,
    eras=frozenset({"modern"}),
    description="server/discover: fields, identity, cache hints, stability",
)
