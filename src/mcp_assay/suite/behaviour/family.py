"""The behaviour family: one lane per era the server serves, each running every configured case."""

from __future__ import annotations

import asyncio

from mcp_assay.suite.behaviour.cases import LaneRun
from mcp_assay.suite.behaviour.lanes import Lane
from mcp_assay.suite.behaviour.witness import WitnessReader
from mcp_assay.suite.context import Family, SuiteContext
from mcp_assay.suite.session import ModernClient

__all__ = ["EXPECTATION", "FAMILY", "REQUIREMENTS"]

REQUIREMENTS = frozenset(
    {"BEH-03", "BEH-04", "BEH-05", "BEH-06", "BEH-07", "BEH-08", "AUTH-21", "AUTH-24", "AUTH-25", "AUTH-33", "AUTH-35"}
)
EXPECTATION = "expectation"
"""Observation kind carrying the user's expected tool table, so a recording is judged like the run."""


async def run(ctx: SuiteContext) -> None:
    behaviour = ctx.config.behaviour
    if behaviour is None:
        # BEH-03 is left out: other families feed it too, and their own skips say why they could not
        ctx.skip(
            "no behaviour cases configured: describe principals, witnesses and write_tools in --config "
            "(see docs/walkthrough.md)",
            requirements=REQUIREMENTS - {"BEH-03"},
        )
        return
    connect = ctx.connect
    if connect is None:
        ctx.skip("harness error: this run cannot open connections of its own", requirements=REQUIREMENTS)
        return
    if behaviour.tools_by_principal:
        ctx.observe(
            EXPECTATION, tools_by_principal={name: list(tools) for name, tools in behaviour.tools_by_principal.items()}
        )
    tools = dict(ctx.client.tools) if isinstance(ctx.client, ModernClient) else {}
    eras = [revision for revision in ctx.spec.window if revision.name in ctx.offered]
    lanes = [
        Lane(
            revision=revision,
            transport=ctx.transport.kind,
            config=ctx.config,
            behaviour=behaviour,
            connect=connect,
            family=ctx.family or "behaviour",
            tools=tools,
            main=ctx.client if revision is ctx.revision else None,
        )
        for revision in eras
    ]
    runs = [LaneRun(ctx, lane, WitnessReader(lane, ctx.router.sink(), ctx.new_id)) for lane in lanes]
    try:
        # every connection (over stdio: every server process) is opened before the first case, so no
        # server is busy starting up while another lane's timings are being measured
        await asyncio.gather(*(run.warm_up() for run in runs))
        for run in runs:
            await run.run()
    finally:
        await asyncio.gather(*(lane.close() for lane in lanes), return_exceptions=True)


FAMILY = Family(
    name="behaviour",
    requirements=REQUIREMENTS,
    run=run,
    capability="tools",
    description="principals' tool lists, refusals proved with a witness, handles, and the cancel race per era",
)
