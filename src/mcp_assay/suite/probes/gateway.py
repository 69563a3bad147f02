"""The ``gateway`` family: two more client sessions, sent only when ``run`` watches a gateway's back hop.

``run -u GATEWAY --gateway-back PORT=URL`` reaches the upstream through the gateway, and what reached it
is judged with what the suite sent (the GW rules). Whether the gateway keeps principals apart (GW-14) needs
more than one of them: this family opens two more sessions of their own (2025; a 2026 client has no
session for a gateway to share) and lists the tools in each. It is opt-in: without ``--gateway-back`` there
is no back hop to look at.
"""

from __future__ import annotations

from mcp_assay.cases import gateway as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import LegacyClient
from mcp_assay.vocabulary.protocol import Era

__all__ = ["FAMILY"]

SESSIONS = 2


async def run(ctx: SuiteContext) -> None:
    for _ in range(SESSIONS):
        fresh = await ctx.fresh_client()
        if not isinstance(fresh, LegacyClient):
            ctx.skip("no new connection to open a session of its own on", requirements=cases.INITIALIZE.feeds)
            return
        opened = await ctx.tolerant(fresh.initialize(ctx.revision.name, ctx.probe(cases.INITIALIZE)))
        if opened is None or not opened.ok or fresh.session is None:
            ctx.skip("the gateway opened no session for a second client", requirements=cases.INITIALIZE.feeds)
            return
        await ctx.tolerant(fresh.initialized(ctx.probe(cases.INITIALIZE)))
        await ctx.tolerant(fresh.request("tools/list", probe=ctx.probe(cases.LIST)))


FAMILY = ProbeFamily(
    name="gateway",
    cases=cases.CASES,
    run=run,
    eras=frozenset({Era.HANDSHAKE}),
    transports=frozenset({"http"}),
    description="two more client sessions, to see whether the gateway keeps them apart upstream (GW-14; "
    "--gateway-back only)",
    wanted=lambda config: config.gateway_back is not None,
)
