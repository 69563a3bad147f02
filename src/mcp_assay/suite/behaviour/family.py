"""The behaviour family: every configured case, in the revision under test.

A run tests each revision the server serves on its own, so the cases run once per revision (one
*lane*: the revision's connections and principals). The family takes the server to itself
(:attr:`~mcp_assay.suite.context.ProbeFamily.exclusive`): a witness read must see only its own writes.
"""

from __future__ import annotations

from mcp_assay.cases import behaviour as cases
from mcp_assay.suite.behaviour.cases import LaneRun
from mcp_assay.suite.behaviour.lanes import Lane
from mcp_assay.suite.behaviour.witness import WitnessReader
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import ModernClient

__all__ = ["EXPECTATION", "FAMILY", "REQUIREMENTS"]

REQUIREMENTS = frozenset().union(*(case.feeds for case in cases.CASES))
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
    lane = Lane(
        revision=ctx.revision,
        transport=ctx.transport.kind,
        config=ctx.config,
        behaviour=behaviour,
        connect=connect,
        tools=tools,
        main=ctx.client,
    )
    lane_run = LaneRun(ctx, lane, WitnessReader(lane, ctx.recorder(), ctx.new_id))
    try:
        # every connection (over stdio: every server process) is opened before the first case, so no
        # server is busy starting up while a case's timings are being measured
        await lane_run.warm_up()
        await lane_run.run()
    finally:
        await lane.close()


FAMILY = ProbeFamily(
    name="behaviour",
    cases=cases.CASES,
    run=run,
    capability="tools",
    description="principals' tool lists, refusals proved with a witness, handles, and the cancel race",
    exclusive=lambda config: config.behaviour is not None,
)
