"""Which flows the addon treats as MCP traffic."""

from __future__ import annotations

from mcp_assay.addon.flows import Decision, classify_request
from mcp_assay.wire.model import Headers

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


def test_a_clients_oauth_steps_are_kept_once_it_has_spoken_mcp() -> None:
    """Tool-defined: a forward proxy judges a client's OAuth flow (AUTH-39..49), wherever its authorization
    server lives, but not the OAuth traffic of a proxy that has carried no MCP."""
    issuer = "http://127.0.0.1:9411"
    form = Headers({"content-type": "application/x-www-form-urlencoded"})
    steps = [
        ("GET", f"{issuer}/.well-known/oauth-authorization-server", Headers(), b""),
        ("GET", f"{issuer}/authorize?response_type=code&client_id=c1&state=s", Headers(), b""),
        ("POST", f"{issuer}/token", form, b"grant_type=authorization_code&code=x"),
        ("POST", f"{issuer}/register", Headers({"content-type": "application/json"}), b'{"redirect_uris": ["x"]}'),
    ]
    for method, url, headers, body in steps:
        assert classify_request(method, url, headers, body, KNOWN) is Decision.MCP, url
        assert classify_request(method, url, headers, body, set()) is not Decision.MCP, url
    assert classify_request("GET", f"{issuer}/authorize?state=s", Headers(), b"", KNOWN) is Decision.NOT
    assert classify_request("POST", f"{issuer}/login", form, b"user=a", KNOWN) is Decision.NOT
