"""The ``behaviour`` cases: what each principal is offered and may do, proved by a witness read.

They run once per lane (a revision over the run's transport, with a client per principal), with
the facts of the lane, the principal, the tool and the step on every request
(:class:`~mcp_assay.cases.sending.Facts`); a witness read (a user-named read of storage) before and
after each write, refusal or read says whether it changed anything.
"""

from __future__ import annotations

from mcp_assay.cases.model import Case, Declare, Judging
from mcp_assay.cases.sending import Refusal

__all__ = [
    "CANCEL_RACE",
    "CASES",
    "HANDLE_CREATE",
    "HANDLE_USE",
    "INITIALIZE",
    "INITIALIZED",
    "PRINCIPAL_LIST",
    "READ_TOOL",
    "REFUSALS",
    "SCHEMA_LIST",
    "SESSION_OTHER_PRINCIPAL",
    "WITNESS_READ",
    "WRITE_BASELINE",
]

declare = Declare("behaviour")

INITIALIZE = declare(
    "behaviour-initialize",
    sends="initialize of a 2025 session for one principal of the lane",
    expects="nothing of its own: the session the lane's cases need",
    judging=Judging.SETUP,
)  # fmt: skip
INITIALIZED = declare(
    "behaviour-initialized",
    sends="notifications/initialized on that session", expects="nothing of its own", judging=Judging.SETUP,
)  # fmt: skip
WITNESS_READ = declare(
    "witness-read",
    sends="a witness read through an MCP tool (witnesses.<name> with kind mcp)",
    expects="nothing of its own: its value is the evidence of the case it belongs to",
    judging=Judging.SETUP,
)  # fmt: skip
PRINCIPAL_LIST = declare(
    "principal-list", "BEH-04 AUTH-25",
    sends="tools/list as each principal tools_by_principal names",
    expects="exactly the tools the config expects for that principal, and no other principal's",
    judging=Judging.SELECTED,
)  # fmt: skip
SESSION_OTHER_PRINCIPAL = declare(
    "session-other-principal", "AUTH-33",
    sends="tools/list with a second principal's credentials inside the 2025 session the first one opened",
    expects="refused", judging=Judging.SELECTED,
)  # fmt: skip
SCHEMA_LIST = declare(
    "behaviour-list", "BEH-03",
    sends="tools/list as a write tool's principal, for its inputSchema", expects="the tool and its inputSchema",
)  # fmt: skip
WRITE_BASELINE = declare(
    "write-baseline", "BEH-05",
    sends="an accepted tools/call of a write tool (calibration)", expects="served, and the witness moves",
    judging=Judging.SELECTED,
)  # fmt: skip


def _refusal(kind: Refusal, feeds: str, sends: str, *, invalid: bool) -> Case:
    return declare(
        "refusal", feeds, sends=sends, expects="refused, and the witness does not move", invalid=invalid,
        judging=Judging.SELECTED, marker=("refusal", kind.value),
    )  # fmt: skip


REFUSALS = {
    kind: _refusal(kind, feeds, sends, invalid=invalid)
    for kind, feeds, sends, invalid in (
        (Refusal.EXTRA_ARGUMENTS, "BEH-05 BEH-03", "tools/call of a write tool with arguments its inputSchema forbids",
         True),
        (Refusal.PRINCIPAL_WITHOUT_SCOPE, "BEH-05 AUTH-24",
         "tools/call of a write tool as a principal who must not be able to use it", False),
        (Refusal.INVALID_TOKEN, "BEH-05 AUTH-21", "tools/call of a write tool with an invalid token (HTTP)", True),
        (Refusal.ANONYMOUS, "BEH-05", "tools/call of a write tool without credentials (HTTP)", True),
        (Refusal.MISMATCHED_NAME, "BEH-05",
         "tools/call of a write tool under an Mcp-Name header naming another tool (2026 HTTP)", True),
        (Refusal.UNKNOWN_TOOL, "BEH-05", "tools/call of an unknown tool with a write tool's arguments", False),
    )
}  # fmt: skip
"""One case per way a write is tried that must be refused (AUTH-AND-BEHAVIOUR §3.4, R1..R6)."""
CANCEL_RACE = declare(
    "cancel-race", "BEH-06",
    sends="tools/call of a write tool given up after a client timeout shorter than its work (the stream closed, or "
    "notifications/cancelled), and the calibration of such a tool",
    expects="no late write: the witness after the settle time shows none", judging=Judging.SELECTED,
)  # fmt: skip
HANDLE_CREATE = declare(
    "handle-create", "BEH-07 AUTH-35",
    sends="one principal creates a handle (with a canary, where configured)", expects="served, with the handle",
)  # fmt: skip
HANDLE_USE = declare(
    "handle-use", "BEH-07 AUTH-35",
    sends="another principal presents that handle", expects="refused: holding a handle is not authentication",
    judging=Judging.SELECTED,
)  # fmt: skip
READ_TOOL = declare(
    "read-tool", "BEH-08",
    sends="tools/call of a tool used as a read (read_tools)", expects="the witness does not move",
    judging=Judging.SELECTED,
)  # fmt: skip

CASES = tuple(declare.cases)
