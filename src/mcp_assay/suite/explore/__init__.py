"""``mcp-assay run --explore``: tools called with arguments drawn from their ``inputSchema``, judged by the same rules.

The suite's fixed cases call a tool with the plainest arguments its schema allows and one wrong set;
faults that depend on the input stay invisible to them. Exploring draws many argument sets — inside
the schema, weighted on its edges (:mod:`.edges`, :mod:`.draws`), and outside it by one broken
constraint at a time (:mod:`.mutate`) — sends them to the tools it may call, judges every answer as
it comes with the registered checks (:mod:`.oracle`), shrinks each failure to a minimal argument set
on the live server (:mod:`.shrink`) and keeps it for the next run (:mod:`.examples`).
:mod:`.family` drives it: the run's last family. It needs the ``explore`` extra (hypothesis and
hypothesis-jsonschema).
"""

from __future__ import annotations

from mcp_assay.suite.explore.draws import available, require
from mcp_assay.suite.explore.seeds import seeded

__all__ = ["available", "require", "seeded"]
