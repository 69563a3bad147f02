"""The ``explore`` cases (``run --explore``): tools called with arguments drawn from their inputSchema.

One case for every call exploring makes: the search's, the shrinking's and the reported one (the
sending's :class:`~mcp_assay.cases.Explored` fact says which, and how its arguments came about).
No rule picks these calls out: they are ordinary traffic, judged by every check like any other
``tools/call``; what they feed is what exploring is for. The family lists the tools itself when no
other family did in that revision.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "EXPLORE", "LIST"]

declare = Declare("explore")

LIST = declare(
    "list",
    sends="tools/list, when no other family listed the tools in this revision, to find the tools to explore",
    expects="nothing of its own: the tool rules judge the listing",
    judging=Judging.SETUP, paged=True,
)  # fmt: skip
EXPLORE = declare(
    "explore", "TOOL-09 TOOL-10 TOOL-11 TOOL-14 TOOL-15 TOOL-19 BEH-03 RPC-05",
    sends="tools/call of a read-only tool (or one named with --explore-tool) with arguments drawn from its "
    "inputSchema, inside it or breaking one constraint; each failure shrunk on the live server and sent once more",
    expects="inside the schema, a well-formed result (content, structuredContent matching any outputSchema, "
    "failures as isError); outside it, -32602 or isError, never a normal success; one answer to every call",
)  # fmt: skip

CASES = tuple(declare.cases)
