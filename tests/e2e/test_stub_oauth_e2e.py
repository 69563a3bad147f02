"""A real MCP client completes OAuth against the stub: the official Python SDK, both revisions.

``tests/peers/jwt_server.py`` trusts the stub (it is started with the stub as its issuer) and names
it in its Protected Resource Metadata; the SDK client (``tests/peers/oauth_client.py``) is
refused, discovers the stub, registers, is authorized at once, redeems the code with its PKCE
verifier, and lists the tools with the stub's token, whose audience is the server's canonical URI.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import jwt
import pytest

from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.server import StubServer
from tests.peers.oauth_client import Mode, run_oauth_client_sync
from tests.peers.process import HERE, RunningServer, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ROOT = HERE.parent.parent


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@pytest.fixture(scope="module")
def stub(key: SigningKey) -> Iterator[StubServer]:
    port = free_port()
    server = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", key, SigningKey.generate())
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def target(stub: StubServer) -> Iterator[RunningServer]:
    """The JWT-validating MCP server, trusting the stub's issuer and key set."""
    port = free_port()
    command = [sys.executable, str(HERE / "jwt_server.py"), str(port), stub.grants.issuer]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as server:
        yield server


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")])
def test_the_sdk_client_completes_oauth_against_the_stub(
    stub: StubServer, target: RunningServer, key: SigningKey, mode: Mode, version: str
) -> None:
    """Spec-mandated (MCP authorization, RFC 9728, RFC 8414, RFC 7591, RFC 7636, RFC 8707, RFC 9207): the client
    finds the stub through the server's metadata, registers, authorizes with S256 PKCE for the server's canonical
    URI, and its stub-signed token for that audience is served."""
    before = len(stub.notes())
    run = run_oauth_client_sync(target.url, mode, timeout=60.0)
    assert run.protocol_version == version
    assert "add" in run.tools
    params = run.authorization_params
    assert params["code_challenge_method"] == "S256" and params["resource"] == target.url
    assert run.redirects and run.redirects[0]["iss"] == stub.grants.issuer
    assert run.access_token is not None
    claims = jwt.decode(run.access_token, jwt.PyJWK(key.jwk()).key, algorithms=["RS256"], audience=target.url,
                        issuer=stub.grants.issuer)  # fmt: skip
    assert claims["aud"] == target.url
    assert run.client_info is not None and claims["client_id"] == run.client_info.client_id
    paths = [(note["method"], note["path"]) for note in stub.notes()[before:]]
    for used in [("POST", "/register"), ("GET", "/authorize"), ("POST", "/token")]:
        assert used in paths, paths
    assert paths.index(("POST", "/register")) < paths.index(("GET", "/authorize")) < paths.index(("POST", "/token"))
