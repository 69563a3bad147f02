"""Which flows the addon treats as MCP traffic."""

from __future__ import annotations

import gzip
from typing import Any

import pytest

from mcp_assay.addon.flows import Decision, classify_request, decoded_content, headers_of, method_and_url
from mcp_assay.wire.model import Headers
from tests.counting import count_calls

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


@pytest.mark.parametrize("name", ["MCP-Protocol-Version", "mcp-session-id", "Mcp-Method", "MCP-NAME"])
def test_each_mcp_header_in_any_case_decides_from_the_request(name: str) -> None:
    assert classify_request("GET", "http://h/x", Headers({name: "v"}), b"", set()) is Decision.MCP
    assert classify_request("GET", "http://h/x", Headers({f"{name}-not": "v"}), b"", set()) is Decision.NOT


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


# -- a body's content-encoding ---------------------------------------------------------------------------
def _message(encoding: str | None, raw: bytes | None) -> Any:
    from mitmproxy import http

    message = http.Response.make(200, b"", {"content-type": "application/json"})
    message.raw_content = raw
    if encoding is not None:
        message.headers["Content-Encoding"] = encoding  # after the body: mitmproxy would encode it when set
    return message


@pytest.mark.parametrize(
    ("encoding", "raw"),
    [
        (None, b'{"jsonrpc":"2.0"}'),
        ("gzip", gzip.compress(b'{"jsonrpc":"2.0"}', mtime=0)),
        ("gzip", b"not gzip at all"),
        ("", b"plain"),
        ("identity", b"plain"),
        ("utf8", b"plain"),
        (None, None),
        ("gzip", None),
    ],
    ids=["plain", "gzip", "not-gzip", "empty-encoding", "identity", "unknown", "no-body", "gzip-no-body"],
)
def test_a_body_reads_as_mitmproxy_reads_it_whatever_its_encoding(encoding: str | None, raw: bytes | None) -> None:
    message = _message(encoding, raw)
    assert decoded_content(message, headers_of(message.headers.fields)) == message.get_content(strict=False)


def test_an_unencoded_body_asks_nothing_of_mitmproxys_header_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted: every MCP message through the proxy passes here, and mitmproxy's lookup is a dozen calls."""
    from mitmproxy import http

    plain, encoded = _message(None, b"{}"), _message("gzip", gzip.compress(b"{}", mtime=0))
    lookups = count_calls(monkeypatch, http.Headers, "get_all", by_name=True)
    assert decoded_content(plain, headers_of(plain.headers.fields)) == b"{}"
    assert lookups == []
    assert decoded_content(encoded, headers_of(encoded.headers.fields)) == b"{}"
    assert lookups  # an encoded body is mitmproxy's to decode


# -- a request's method and URL --------------------------------------------------------------------------
_REQUEST_LINES = {
    "absolute": ("POST", "http://127.0.0.1:8000/mcp?x=1"),
    "https-default-port": ("GET", "https://example.com/mcp"),
    "non-default-port": ("get", "https://example.com:8443/a/b"),
    "asterisk": ("OPTIONS", "http://example.com/*"),
}


@pytest.mark.parametrize(("method", "url"), list(_REQUEST_LINES.values()), ids=list(_REQUEST_LINES))
def test_a_request_line_reads_as_mitmproxy_reads_it_and_follows_its_changes(method: str, url: str) -> None:
    from mitmproxy import http

    request = http.Request.make(method, url)
    assert method_and_url(request) == (request.method, request.url)
    assert method_and_url(request) == (request.method, request.url)  # kept, and still the same
    request.path = "/other"
    request.port = 9
    assert method_and_url(request) == (request.method, request.url)


def test_a_connect_request_reads_as_its_authority() -> None:
    from mitmproxy import http

    request = http.Request.make("CONNECT", "http://example.com:443/")
    request.authority = "example.com:443"
    request.path = ""
    assert method_and_url(request) == ("CONNECT", request.url) == ("CONNECT", "example.com:443")
