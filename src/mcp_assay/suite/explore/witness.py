"""A write tool explored with its witness: what exploring sends outside its schema must be refused, and change nothing.

A tool that may write is explored only when the user names it (``--explore-tool``). Its calls outside
the ``inputSchema`` go first, all together, between two reads of the witness the behaviour config
gives it (``write_tools.<tool>.witness``, read the way the behaviour cases read it:
:class:`~mcp_assay.suite.behaviour.witness.WitnessReader`). Refused calls that moved the witness
changed something they had no right to (the property BEH-05 states); the note says so, with the two
values. Without a witness the tool is explored all the same, and the note says what was not verified.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mcp_assay.suite.behaviour.config import Witness
from mcp_assay.suite.behaviour.lanes import Lane
from mcp_assay.suite.behaviour.witness import Read, WitnessReader
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.era_clients import ModernClient

__all__ = ["WriteGuard", "guard_for"]


@dataclass
class WriteGuard:
    """The witness of one write tool, read before and after its calls outside the schema."""

    tool: str
    witness: Witness
    reader: WitnessReader
    lane: Lane
    settle_ms: int
    before: Read | None = None

    @property
    def case(self) -> str:
        return f"explore/{self.lane.revision.name}/{self.tool}"

    async def open(self) -> None:
        self.before = await self.reader.read(self.witness, case=self.case, read="before")

    async def verdict(self, sent: int, refused: int) -> str:
        """What the witness showed of the ``sent`` calls outside the schema (``refused`` of them refused), in words."""
        await asyncio.sleep(self.settle_ms / 1000)
        after = await self.reader.read(self.witness, case=self.case, read="after")
        await self.lane.close()
        before = self.before
        head = f"{self.tool}: {sent} call(s) outside its inputSchema, {refused} refused; witness {self.witness.name}"
        if before is None or not before.ok or not after.ok:
            problem = (before.error if before is not None and not before.ok else after.error) or "no read"
            return f"{head} could not be read ({problem}), so whether they changed anything is not verified"
        if before.value == after.value:
            return f"{head} did not move ({before.value!r}): the refused calls changed nothing"
        what = "a refused call must change nothing (BEH-05)" if refused == sent else "some were served (TOOL-14)"
        return f"{head} moved from {before.value!r} to {after.value!r}: {what}"


def guard_for(ctx: SuiteContext, tool: str) -> tuple[WriteGuard | None, str]:
    """The witness guard of ``tool`` from the behaviour config, or why there is none (a note's words)."""
    behaviour = ctx.config.behaviour
    write = behaviour.write_tools.get(tool) if behaviour is not None else None
    witness = behaviour.witnesses.get(write.witness) if behaviour is not None and write and write.witness else None
    if behaviour is None or write is None or witness is None or ctx.connect is None:
        return None, (
            f"{tool} may write and was explored without a witness, so whether a refused call changed anything "
            f"is not verified (give write_tools.{tool}.witness in --config)"
        )
    tools = dict(ctx.client.tools) if isinstance(ctx.client, ModernClient) else {}
    lane = Lane(
        revision=ctx.revision, transport=ctx.transport.kind, config=ctx.config, behaviour=behaviour,
        connect=ctx.connect, tools=tools, main=ctx.client,
    )  # fmt: skip
    reader = WitnessReader(lane, ctx.recorder(), ctx.new_id)
    return WriteGuard(tool, witness, reader, lane, write.settle_ms), ""
