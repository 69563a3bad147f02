"""The ``listen`` and ``listen-writes`` cases (2026-07-28): ``subscriptions/listen`` and what reaches it.

``listen`` opts into one type, none, everything, with a string id, and holds two subscriptions
open together while the lists are read and the suite's calls repeated; ``listen-writes`` holds a
subscription to the resources a configured write tool changes while the tool is called.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare

__all__ = [
    "CALL_WHILE_LISTENING",
    "CANCEL_LISTEN",
    "CASES",
    "CONCURRENT",
    "EMPTY_FILTER",
    "EVERYTHING",
    "LIST_WHILE_LISTENING",
    "LISTEN_WRITES",
    "ONE_TYPE",
    "STRING_ID",
    "WRITES_CANCEL_LISTEN",
    "WRITES_CASES",
    "WRITE_WHILE_LISTENING",
]

declare = Declare("listen")

ONE_TYPE = declare(
    "one-type", "SUB-02 SUB-03 SUB-04 SUB-05 SUB-07 SUB-08 SUB-09 SUB-10 SUB-11 CAN-06 CAN-07",
    sends="subscriptions/listen opting into one notification type",
    expects="an event stream starting with an acknowledgement that grants no more",
)  # fmt: skip
EMPTY_FILTER = declare(
    "empty-filter", "SUB-03 SUB-05 SUB-07",
    sends="subscriptions/listen with an empty filter", expects="an acknowledgement granting nothing, then silence",
)  # fmt: skip
STRING_ID = declare(
    "string-id", "SUB-04",
    sends="subscriptions/listen with a string request id", expects="the acknowledgement carries the same string",
)  # fmt: skip
EVERYTHING = declare(
    "everything", "SUB-05 SUB-06",
    sends="subscriptions/listen asking for every type", expects="types the capabilities cannot back are dropped",
)  # fmt: skip
CANCEL_LISTEN = declare(
    "cancel-listen", "CAN-06 CAN-07 SUB-11",
    sends="notifications/cancelled for a listen request (stdio)", expects="any teardown is conformant",
)  # fmt: skip
CONCURRENT = declare(
    "concurrent", "SUB-07 SUB-08 SUB-10 SUB-14 SUB-15",
    sends="two subscriptions with different filters held open together, where listChanged or subscribe is advertised",
    expects="each notification goes only to a subscription that asked for it, on its listen stream",
)  # fmt: skip
LIST_WHILE_LISTENING = declare(
    "list-while-listening", "SUB-15",
    sends="the lists read while both subscriptions are open, and again after the calls",
    expects="a changed list was announced to its listener", needs=CONCURRENT,
)  # fmt: skip
CALL_WHILE_LISTENING = declare(
    "call-while-listening", "SUB-14 SUB-15",
    sends="the tools the suite already called, called again (same arguments) while both subscriptions are open",
    expects="a list change it causes goes only to the subscription that asked for it", needs=CONCURRENT,
)  # fmt: skip

CASES = tuple(declare.cases)

writes = Declare("listen-writes")

LISTEN_WRITES = writes(
    "listen-writes", "SUB-07 SUB-08 SUB-09 SUB-10",
    sends="a subscription to the resources a write tool changes (write_tools.<tool>.changes in --config)",
    expects="every notification names this subscription, and only the types it asked for",
)  # fmt: skip
WRITE_WHILE_LISTENING = writes(
    "write-while-listening", "SUB-08 SUB-10",
    sends="tools/call of the configured write while the subscription is open",
    expects="the change is announced on the listen stream, not on the call's",
)  # fmt: skip
WRITES_CANCEL_LISTEN = writes(
    "cancel-listen", "SUB-07 SUB-08",
    sends="notifications/cancelled for the subscription (stdio)", expects="any teardown is conformant",
)  # fmt: skip

WRITES_CASES = tuple(writes.cases)
