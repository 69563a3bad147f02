"""The ``sdk`` cases: the official Python SDK's own client against the server (HTTP).

The SDK's traffic is its own and is not judged; what it concluded is an ``interop`` observation
whose ``case`` is one of these names, which the rules in :mod:`mcp_assay.spec.rules.interop` judge.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "CONNECT", "LIST_TOOLS", "UNCONFIGURED"]

declare = Declare("sdk")

CONNECT = declare(
    "connect", "VER-07 HS-04 HS-05",
    sends="the SDK client connecting in the revision under test (mode auto in 2026, legacy in 2025)",
    expects="it connects, and validates what it gets with its own models", judging=Judging.SELECTED,
)  # fmt: skip
LIST_TOOLS = declare(
    "list-tools", "TOOL-05",
    sends="list_tools() through the SDK client", expects="the listing passes the SDK's own validation",
    judging=Judging.SELECTED,
)  # fmt: skip
UNCONFIGURED = declare(
    "unconfigured",
    sends="an SDK client with nothing configured (mode auto, no headers)",
    expects="no requirement: a note saying where it landed and whether it works", judging=Judging.NOTED,
)  # fmt: skip

CASES = tuple(declare.cases)
