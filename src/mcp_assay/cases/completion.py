"""The ``completion`` cases: ``completion/complete`` for a listed prompt's argument, and for no prompt."""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "COMPLETE", "COMPLETION_UNKNOWN_PROMPT"]

declare = Declare("completion")

COMPLETE = declare(
    "complete", "COMP-01 COMP-03 COMP-04 COMP-05",
    sends="completion/complete for a listed prompt's argument or a resource template's variable",
    expects="a CompleteResult matching the schema",
)  # fmt: skip
COMPLETION_UNKNOWN_PROMPT = declare(
    "completion-unknown-prompt", "COMP-06",
    sends="completion/complete for a prompt that does not exist", expects="-32602", invalid=True,
    judging=Judging.SELECTED,
)  # fmt: skip

CASES = tuple(declare.cases)
