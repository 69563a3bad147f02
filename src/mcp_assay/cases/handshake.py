"""The ``handshake`` cases (2025-11-25): initialize, ping, and the rules of a 2025 HTTP session.

Selection sends the first ``initialize``; the family completes the handshake before any other
family runs, and ends the session at the very end of the run.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare, Judging

__all__ = [
    "BAD_VERSION_HEADER",
    "CASES",
    "CLOSE_SELECTION_SESSION",
    "DELETE_SESSION",
    "ENDED_SESSION",
    "GET_STREAM",
    "INITIALIZE",
    "INITIALIZED",
    "NO_SESSION_ID",
    "NO_VERSION_HEADER",
    "NO_VERSION_NO_SESSION",
    "PING",
    "PUBLISHED_VERSION_HEADER",
    "SET_LEVEL",
    "SET_LEVEL_INVALID",
    "UNSUPPORTED_VERSION",
]

declare = Declare("handshake")

INITIALIZE = declare(
    "initialize", "HS-04 HS-05",
    sends="initialize offering the revision under test",
    expects="an initialize result naming the version, capabilities and serverInfo; a supported version echoed",
)  # fmt: skip
CLOSE_SELECTION_SESSION = declare(
    "handshake/close-selection-session",
    sends="DELETE of the 2025 session selection opened but the run does not use (kept out of the log)",
    expects="nothing is judged: cleanup",
    judging=Judging.SETUP,
)  # fmt: skip
INITIALIZED = declare(
    "initialized", "HS-09",
    sends="notifications/initialized on the session selection opened",
    expects="202 on HTTP, no answer; only then may the session carry other requests",
)  # fmt: skip
PING = declare("ping", "HS-17", sends="ping", expects="an empty result, promptly")
UNSUPPORTED_VERSION = declare(
    "unsupported-version", "HS-06",
    sends="initialize offering 1900-01-01 on a new connection",
    expects="a counter-offer of a supported version, never an echo (an error is ambiguous, A17)",
    off_version=True,
)  # fmt: skip
SET_LEVEL = declare(
    "set-level", "LOG-08", sends="logging/setLevel warning, where logging is advertised", expects="an empty result"
)  # fmt: skip
SET_LEVEL_INVALID = declare(
    "set-level-invalid", "LOG-08",
    sends="logging/setLevel with an unknown level", expects="-32602", invalid=True,
)  # fmt: skip
BAD_VERSION_HEADER = declare(
    "bad-version-header", "HS-12",
    sends="MCP-Protocol-Version 1900-01-01 on a ping in the session", expects="400",
    invalid=True, off_version=True,
)  # fmt: skip
PUBLISHED_VERSION_HEADER = declare(
    "published-version-header", "HS-12",
    sends="initialize offering 2024-11-05 (a published revision) on a new connection; when the server answers with "
    "another version, a ping in the session naming 2024-11-05 in MCP-Protocol-Version",
    expects="400 to the ping: a published revision the server does not support is an unsupported version",
    invalid=True, off_version=True, judging=Judging.SELECTED,
)  # fmt: skip
NO_VERSION_HEADER = declare(
    "no-version-header", "HS-13",
    sends="a ping in the session without MCP-Protocol-Version",
    expects="served as 2025-03-26, or refused (A22)",
    invalid=True, off_version=True,
)  # fmt: skip
NO_SESSION_ID = declare(
    "no-session-id", "HS-20",
    sends="a ping without the session id, to a server that issued one", expects="400", invalid=True,
)  # fmt: skip
NO_VERSION_NO_SESSION = declare(
    "no-version-no-session", "HS-13",
    sends="a ping with neither MCP-Protocol-Version nor a session",
    expects="served as 2025-03-26, or refused with 400 (A22)",
    invalid=True, off_version=True,
)  # fmt: skip
GET_STREAM = declare(
    "get-stream", "HTTP-38",
    sends="GET with Accept: text/event-stream in the session", expects="an event stream, or 405",
)  # fmt: skip
DELETE_SESSION = declare(
    "delete-session", "HS-21", sends="DELETE of the session at the end of the run", expects="the session ends, or 405"
)  # fmt: skip
ENDED_SESSION = declare(
    "ended-session", "HS-21",
    sends="a ping with the id of the session the DELETE ended", expects="404", invalid=True,
)  # fmt: skip

CASES = tuple(declare.cases)
