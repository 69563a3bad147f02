"""The ``Mcp-Param-*`` cases of the ``envelope`` family (2026-07-28 HTTP).

A tool may mark properties of its ``inputSchema`` with ``x-mcp-header``; these cases call such a
tool (only one named in ``--tool-args`` or allowed by ``--generate-args``) with its arguments as
given and the mirrored headers changed one way each.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = [
    "CASES",
    "LIST_FOR_PARAM_HEADERS",
    "PARAM_ABSENT",
    "PARAM_BASE64",
    "PARAM_BASE64_MISMATCH",
    "PARAM_INVALID_CHARACTERS",
    "PARAM_MISMATCH",
    "PARAM_MISSING",
    "PARAM_NULL",
    "PARAM_NUMERIC",
]

declare = Declare("envelope")

LIST_FOR_PARAM_HEADERS = declare(
    "list-for-param-headers",
    sends="tools/list, when the tools family did not list them, to find x-mcp-header marks",
    expects="nothing of its own: the tool rules judge the listing",
    judging=Judging.SETUP, paged=True,
)  # fmt: skip
PARAM_MISSING = declare(
    "param-missing", "HTTP-19",
    sends="a marked argument set, its Mcp-Param header left out", expects="400 and -32020", invalid=True,
)  # fmt: skip
PARAM_MISMATCH = declare(
    "param-mismatch", "HTTP-19",
    sends="an Mcp-Param header with another value than the argument", expects="400 and -32020", invalid=True,
)  # fmt: skip
PARAM_INVALID_CHARACTERS = declare(
    "param-invalid-characters", "HTTP-17",
    sends="an Mcp-Param header carrying raw non-ASCII bytes", expects="400", invalid=True,
)  # fmt: skip
PARAM_BASE64 = declare(
    "param-base64", "HTTP-16", sends="an Mcp-Param header as the =?base64?…?= sentinel of its value", expects="accepted"
)  # fmt: skip
PARAM_BASE64_MISMATCH = declare(
    "param-base64-mismatch", "HTTP-16",
    sends="an Mcp-Param sentinel decoding to another value", expects="400 and -32020", invalid=True,
)  # fmt: skip
PARAM_NUMERIC = declare(
    "param-numeric", "HTTP-21",
    sends="Mcp-Param 42.0 for the integer argument 42", expects="accepted (compared as numbers, a SHOULD)",
    invalid=True,
)  # fmt: skip
PARAM_ABSENT = declare(
    "param-absent", "HTTP-20",
    sends="an optional marked argument left out, its header omitted", expects="served, never -32020",
)  # fmt: skip
PARAM_NULL = declare(
    "param-null", "HTTP-20", sends="a nullable marked argument set to null, its header omitted", expects="not -32020"
)  # fmt: skip

CASES = tuple(declare.cases)
