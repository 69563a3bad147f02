"""Which flows the addon treats as MCP traffic."""

from __future__ import annotations

from mcp_assay.addon.flows import Decision, classify_request
from mcp_assay.wire import Headers

KNOWN = {"http://127.0.0.1:8000/mcp"}


def test_authorization_metadata_of_an_mcp_origin_is_kept_for_the_auth_rules() -> None:
    """Tool-defined: PRM fetches of a server already seen speaking MCP are judged (AUTH-01..08)."""
    prm = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
    assert classify_request("GET", prm, Headers(), b"", KNOWN) is Decision.MCP


def test_metadata_of_other_origins_and_plain_pages_pass_unjudged() -> None:
    other = "http://127.0.0.1:9999/.well-known/oauth-protected-resource"
    assert classify_request("GET", other, Headers(), b"", KNOWN) is Decision.NOT
    assert classify_request("GET", "http://127.0.0.1:8000/index.html", Headers(), b"", KNOWN) is Decision.NOT


def test_mcp_markers_decide_from_the_request() -> None:
    headers = Headers({"mcp-protocol-version": "2026-07-28"})
    assert classify_request("POST", "http://h/x", headers, b"{}", set()) is Decision.MCP
    assert classify_request("POST", "http://h/x", Headers({"content-type": "application/json"}), b"{}", set()) is (
        Decision.MAYBE
    )
