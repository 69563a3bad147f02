"""The ``pagination`` cases: the cursors the list walks were issued, followed again and made up."""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = ["CASES", "CURSOR_NEW_CONNECTION", "INVALID_CURSOR", "SAME_CURSOR"]

declare = Declare("pagination")

SAME_CURSOR = declare(
    "same-cursor", "PAGE-01 PAGE-04 RES-10",
    sends="a list request with a cursor the server issued, again", expects="the same page",
)  # fmt: skip
CURSOR_NEW_CONNECTION = declare(
    "cursor-new-connection", "VER-17",
    sends="an issued cursor followed on a new connection (2026 HTTP)", expects="served the same",
)  # fmt: skip
INVALID_CURSOR = declare(
    "invalid-cursor", "PAGE-05",
    sends="a list request with a cursor the server never issued", expects="-32602", invalid=True,
    judging=Judging.SELECTED,
)  # fmt: skip

CASES = tuple(declare.cases)
