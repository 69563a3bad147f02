"""The ``tools`` cases: the list, the calls the suite may make, and the error paths.

The suite invents arguments only for a tool annotated read-only: it calls the tools ``--tool-args``
names, those ``--generate-args`` names and every ``readOnlyHint`` tool (unless
``--no-generate-args-read-only``) with plain arguments drawn from the inputSchema, and otherwise one
tool that needs none; progress and logging ride on those calls.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = [
    "ARGUMENTS_NOT_OBJECT",
    "CALL",
    "CALL_LOGGED",
    "CALL_LOG_ERROR",
    "CANCEL",
    "CANCEL_CALL",
    "CASES",
    "EXTRA_PROPERTY",
    "FAILING_TOOL",
    "LIST",
    "LIST_AGAIN",
    "MISSING_REQUIRED",
    "NO_NAME",
    "UNKNOWN_TOOL",
]

declare = Declare("tools")

LIST = declare(
    "list", "TOOL-01 TOOL-02 TOOL-03 TOOL-04 TOOL-05 TOOL-06 TOOL-07 TOOL-08 TOOL-16 TOOL-18",
    sends="tools/list, following nextCursor to the end (at most --page-limit pages)",
    expects="the tools, each well formed, its schemas valid", paged=True,
)  # fmt: skip
LIST_AGAIN = declare(
    "list-again", "TOOL-03 TOOL-04",
    sends="tools/list walked again, on a new connection over HTTP (2026)",
    expects="the same tools in the same order", paged=True, needs=LIST,
)  # fmt: skip
CALL = declare(
    "call",
    "TOOL-09 TOOL-10 TOOL-11 TOOL-19 TOOL-20 TOOL-21 HTTP-18 HTTP-19 HTTP-20 HTTP-21 HTTP-27 HTTP-29 LOG-01 "
    "PROG-01 PROG-02 PROG-06 META-09",
    sends="tools/call of each tool the suite may call, with a progress token",
    expects="a CallToolResult matching the schema (and the tool's outputSchema); progress only for it", needs=LIST,
)  # fmt: skip
CANCEL_CALL = declare(
    "cancel-call", "CAN-01 CAN-08",
    sends="tools/call of a tool the suite may call, cancelled at once (the stream closed, or notifications/cancelled)",
    expects="nothing more about it afterwards", needs=CALL,
)  # fmt: skip
CANCEL = declare(
    "cancel", "CAN-08",
    sends="notifications/cancelled for the call just sent (stdio; 2025 HTTP after closing its stream)",
    expects="no answer to the cancelled call", needs=CANCEL_CALL,
)  # fmt: skip
CALL_LOGGED = declare(
    "call-logged",
    "LOG-01 LOG-02 LOG-03 LOG-05 LOG-07 PROG-03 PROG-04 PROG-05 PROG-07 HTTP-27 HTTP-29",
    sends="each such tool called once more asking for every log message (logLevel debug) and progress (2026)",
    expects="log messages and progress only on the call's own stream, before its answer", needs=CALL,
)  # fmt: skip
CALL_LOG_ERROR = declare(
    "call-log-error", "LOG-02",
    sends="the first tool that logged below error, asking for error-level messages only",
    expects="nothing below error", needs=CALL_LOGGED,
)  # fmt: skip
UNKNOWN_TOOL = declare(
    "unknown-tool", "TOOL-12 BEH-01",
    sends="tools/call of mcp-assay-no-such-tool",
    expects="protocol error -32602 (HTTP 200 or 400, A5); an isError result fails the SHOULD, a success fails",
    invalid=True, judging=Judging.SELECTED, needs=LIST,
)  # fmt: skip
NO_NAME = declare(
    "no-name", "TOOL-13", sends="tools/call without a name", expects="a JSON-RPC error", invalid=True, needs=LIST,
)  # fmt: skip
ARGUMENTS_NOT_OBJECT = declare(
    "arguments-not-object", "TOOL-13",
    sends="tools/call whose arguments are a string", expects="a JSON-RPC error", invalid=True, needs=LIST,
)  # fmt: skip
MISSING_REQUIRED = declare(
    "invalid-tool-arguments", "TOOL-14 BEH-03",
    sends="the allowed arguments of a tool minus its first required property",
    expects="isError (or -32602); never a plain success",
    invalid=True, judging=Judging.SELECTED, marker=("case", "missing-required"), needs=LIST,
)  # fmt: skip
EXTRA_PROPERTY = declare(
    "invalid-tool-arguments", "TOOL-14 BEH-03",
    sends="the allowed arguments of a tool with a strict inputSchema, plus mcp_assay_unexpected",
    expects="isError (or -32602); never a plain success",
    invalid=True, judging=Judging.SELECTED, marker=("case", "extra-property"), needs=LIST,
)  # fmt: skip
FAILING_TOOL = declare(
    "failing-tool", "TOOL-15",
    sends="tools/call of the tool --failing-tool names", expects="a result with isError: true",
    judging=Judging.SELECTED, needs=LIST,
)  # fmt: skip

CASES = tuple(declare.cases)
