"""The ``versioning`` cases (2026-07-28): the version in ``_meta`` decides, one request at a time.

Each case changes one thing from a request the server serves (ambiguity A6). The baseline method is
``tools/list`` where there are tools, else another list, else ``server/discover``.
"""

from __future__ import annotations

from mcp_assay.cases.model import Declare

__all__ = [
    "ACCEPTED",
    "BODY_HEADER_MISMATCH",
    "CASES",
    "FRESH_CONNECTION",
    "HEADER_BODY_MISMATCH",
    "LEGACY_INITIALIZE",
    "LOG_LEVEL_UNKNOWN",
    "NO_CLIENT_CAPABILITIES",
    "NO_CLIENT_INFO",
    "NO_META",
    "NO_META_VERSION",
    "NO_PARAMS",
    "NO_VERSION_HEADER",
    "OLD_INITIALIZE",
    "OTHER_CLIENT_INFO",
    "UNSUPPORTED_VERSION",
]

declare = Declare("versioning")

ACCEPTED = declare(
    "accepted", "META-10", sends="the baseline request declaring the revision under test in _meta", expects="served"
)  # fmt: skip
NO_CLIENT_INFO = declare(
    "no-client-info", "VER-02",
    sends="_meta without clientInfo", expects="served (clientInfo is a SHOULD)", invalid=True,
)  # fmt: skip
OTHER_CLIENT_INFO = declare(
    "other-client-info", "META-10", sends="the baseline request with another clientInfo", expects="the same answer"
)  # fmt: skip
NO_CLIENT_CAPABILITIES = declare(
    "no-client-capabilities", "VER-02 HTTP-37",
    sends="_meta without clientCapabilities", expects="400 and -32602", invalid=True,
)  # fmt: skip
NO_META_VERSION = declare(
    "no-meta-version", "VER-02 HTTP-37",
    sends="_meta without protocolVersion while the header names one",
    expects="400 and -32602, or -32020 (A7)", invalid=True,
)  # fmt: skip
NO_META = declare(
    "no-meta", "VER-02 HTTP-37", sends="params without _meta", expects="400 and -32602", invalid=True
)  # fmt: skip
NO_PARAMS = declare(
    "no-params", "VER-02 HTTP-37", sends="a request without params", expects="400 and -32602", invalid=True
)  # fmt: skip
UNSUPPORTED_VERSION = declare(
    "unsupported-version", "VER-03 VER-04 HTTP-37",
    sends="1900-01-01 in MCP-Protocol-Version and in _meta",
    expects="400 and -32022 with data.supported and data.requested",
    invalid=True, off_version=True,
)  # fmt: skip
LOG_LEVEL_UNKNOWN = declare(
    "log-level-unknown", "LOG-04",
    sends="the baseline request with logLevel \"verbose\", not a defined level", expects="-32602", invalid=True,
)  # fmt: skip
HEADER_BODY_MISMATCH = declare(
    "header-body-mismatch", "HTTP-09 HTTP-37",
    sends="MCP-Protocol-Version the revision under test, _meta another revision", expects="400 and -32020",
    invalid=True, off_version=True,
)  # fmt: skip
BODY_HEADER_MISMATCH = declare(
    "body-header-mismatch", "HTTP-09 HTTP-37",
    sends="MCP-Protocol-Version another revision, _meta the revision under test", expects="400 and -32020",
    invalid=True, off_version=True,
)  # fmt: skip
NO_VERSION_HEADER = declare(
    "no-version-header", "HTTP-26",
    sends="the baseline request without MCP-Protocol-Version",
    expects="400 and -32020, or served as 2025-03-26 by a server that serves such clients (HTTP-26)",
    invalid=True, off_version=True,
)  # fmt: skip
OLD_INITIALIZE = declare(
    "old-initialize", "HTTP-26",
    sends="initialize offering 2025-03-26 without 2026 headers, as a client from before the version header",
    expects="its answer says whether a POST without MCP-Protocol-Version may be taken for 2025-03-26: an echo "
    "says the server serves such clients, a counter-offer or an error says it does not",
    invalid=True, off_version=True,
)  # fmt: skip
FRESH_CONNECTION = declare(
    "fresh-connection", "VER-16",
    sends="tools/list as the first request on a new connection, without discover", expects="served",
)  # fmt: skip
LEGACY_INITIALIZE = declare(
    "legacy-initialize", "VER-15",
    sends="a 2025-style initialize without 2026 headers, to a server that serves no handshake revision",
    expects="an error naming its supported versions (400, or 404 with a body, A6)",
    invalid=True, off_version=True,
)  # fmt: skip

CASES = tuple(declare.cases)
