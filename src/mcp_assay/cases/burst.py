"""The ``burst`` case: a burst of calls to one tool, to see whether the server limits their rate."""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "RATE_LIMIT"]

declare = Declare("burst")

RATE_LIMIT = declare(
    "beh-rate-limit", "BEH-11",
    sends="rate_limit_probe.burst calls of rate_limit_probe.tool within its window",
    expects="some refused with 429 (or an error) once past the limit", judging=Judging.SELECTED,
)  # fmt: skip

CASES = tuple(declare.cases)
