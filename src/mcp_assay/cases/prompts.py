"""The ``prompts`` cases: the list, a get per listed prompt the suite can fill, and the error paths."""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "GET", "LIST", "LIST_AGAIN", "MISSING_PROMPT_ARGUMENT", "UNKNOWN_PROMPT"]

declare = Declare("prompts")

LIST = declare(
    "list", "PRM-01 PRM-02 PRM-04",
    sends="prompts/list, following nextCursor to the end", expects="the prompts, matching the schema", paged=True,
)  # fmt: skip
LIST_AGAIN = declare(
    "list-again", "PRM-03",
    sends="prompts/list walked again, on a new connection over HTTP (2026)", expects="the same prompts", paged=True,
    needs=LIST,
)  # fmt: skip
GET = declare(
    "get", "PRM-05 PRM-06 PRM-09 PRM-10 PRM-11",
    sends="prompts/get of each listed prompt the suite can fill (--prompt-args, or no required argument)",
    expects="a GetPromptResult matching the schema", needs=LIST,
)  # fmt: skip
UNKNOWN_PROMPT = declare(
    "unknown-prompt", "PRM-07",
    sends="prompts/get of a prompt that does not exist", expects="-32602", invalid=True, judging=Judging.SELECTED,
    needs=LIST,
)  # fmt: skip
MISSING_PROMPT_ARGUMENT = declare(
    "missing-prompt-argument", "PRM-08",
    sends="prompts/get without a required argument", expects="-32602", invalid=True, judging=Judging.SELECTED,
    needs=LIST,
)  # fmt: skip

CASES = tuple(declare.cases)
