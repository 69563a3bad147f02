"""The protocol constants stand in for the literals they replaced, in every way a value is used.

Tool-defined: a constant compares equal to, hashes like, formats, prints (``repr`` included) and
serialises as the plain value, so replacing a literal by one changes no message and no wire byte.
"""

from __future__ import annotations

import json

from mcp_assay.spec.sources import load_pins
from mcp_assay.vocabulary.protocol import (
    JSONRPC_RESERVED,
    LEGACY_SERVER_ERRORS,
    MCP_DEFINED_CODES,
    MCP_RESERVED,
    PRE_RELEASE_CODES,
    REVISIONS,
    SERVER_ERRORS,
    Era,
    ErrorCode,
    Header,
    HeaderKey,
    MediaType,
    MetaKey,
)


def test_every_header_key_is_its_header_lowercased() -> None:
    assert [key.name for key in HeaderKey] == [header.name for header in Header]
    assert all(HeaderKey[header.name] == header.lower() for header in Header)


def test_constants_read_as_the_plain_values() -> None:
    assert HeaderKey.SESSION_ID == "mcp-session-id" and hash(HeaderKey.SESSION_ID) == hash("mcp-session-id")
    assert {"mcp-session-id": 1}[HeaderKey.SESSION_ID] == 1
    assert f"{Header.PROTOCOL_VERSION}: x" == "MCP-Protocol-Version: x"
    assert repr(MetaKey.LOG_LEVEL) == repr("io.modelcontextprotocol/logLevel")
    assert str([Header.NAME, MediaType.JSON]) == "['Mcp-Name', 'application/json']"
    assert f"{ErrorCode.INVALID_PARAMS} {ErrorCode.INVALID_PARAMS!r} {(400, ErrorCode.INVALID_PARAMS)}" == (
        "-32602 -32602 (400, -32602)"
    )
    body = {
        "error": {"code": ErrorCode.HEADER_MISMATCH},
        "_meta": {MetaKey.PROTOCOL_VERSION: "2026-07-28"},
        "era": Era.MODERN,
    }
    assert json.dumps(body) == json.dumps(
        {"error": {"code": -32020}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, "era": "modern"}
    )


def test_code_ranges_are_inclusive_and_hold_integers_only() -> None:
    assert -32768 in JSONRPC_RESERVED and -32000 in JSONRPC_RESERVED and -31999 not in JSONRPC_RESERVED
    assert -32099 in SERVER_ERRORS and -32100 not in SERVER_ERRORS
    assert ErrorCode.HEADER_MISMATCH in MCP_RESERVED and -32019 not in MCP_RESERVED
    assert -32019 in LEGACY_SERVER_ERRORS and -32020 not in LEGACY_SERVER_ERRORS
    assert "-32000" not in SERVER_ERRORS
    assert set(PRE_RELEASE_CODES.values()) == MCP_DEFINED_CODES


def test_an_era_is_recorded_as_its_value_and_older_recordings_still_read() -> None:
    assert [Era.read(value) for value in ("modern", "handshake", "legacy", "2025-11-25", None)] == [
        Era.MODERN,
        Era.HANDSHAKE,
        Era.HANDSHAKE,
        None,
        None,
    ]
    assert (Era.MODERN.revision, Era.HANDSHAKE.revision) == REVISIONS
    assert (str(Era.MODERN), str(Era.HANDSHAKE)) == ("modern", "handshake")


def test_the_revisions_are_the_pinned_ones() -> None:
    assert set(REVISIONS) == set(load_pins())
