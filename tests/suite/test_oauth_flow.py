"""mcp-assay's own OAuth client (suite/oauth): discovery, both grants, the loopback redirect, and every way a
sign-in can stop, against the real stub authorization server and a small protected resource on loopback.

The resource is a scripted HTTP server (a 401 with a challenge, and its metadata); the authorization
server is the stub, configured per test through its policy. Tokens are checked with PyJWT against the
stub's key, and every printed line is checked for every secret the flow handled.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from mcp_assay.suite.oauth import Line, OAuthSettings, SignIn, sign_in
from mcp_assay.suite.oauth.discovery import metadata_urls
from mcp_assay.suite.oauth.grants import auth_method, pkce
from mcp_assay.suite.oauth.loopback import LoopbackReceiver
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import PresetClient, StubPolicy
from mcp_assay.suite.stub.server import StubServer
from mcp_assay.vocabulary.errors import ConfigError, InsecureTransport
from tests.peers.oauth_resource import Resource, serving
from tests.peers.process import free_port

CC = ("authorization_code", "client_credentials", "refresh_token")
SECRET = "runner-secret-0c7d1e55"
TIMEOUT = 5.0


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@contextmanager
def stub(key: SigningKey, policy: StubPolicy | None = None) -> Iterator[StubServer]:
    port = free_port()
    server = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", key, SigningKey.generate(), ["notes:read"],
                        policy=policy)  # fmt: skip
    try:
        yield server
    finally:
        server.close()


@dataclass
class Outcome:
    result: SignIn
    lines: list[tuple[Line, str]]

    def text(self) -> str:
        return "\n".join(text for _, text in self.lines)

    def assert_no_secret_printed(self) -> None:
        assert self.result.secrets, "the flow handled no secret at all"
        for secret in self.result.secrets:
            assert secret not in self.text()


async def browser(url: str) -> None:
    """What a browser does with the authorization URL: follow the redirects back to the loopback receiver."""
    await asyncio.to_thread(httpx.get, url, follow_redirects=True, timeout=TIMEOUT)


def run(resource: Resource, *, attended: bool = False, opener: Any = browser, **settings: Any) -> Outcome:
    lines: list[tuple[Line, str]] = []
    result = asyncio.run(
        sign_in(
            resource.url,
            OAuthSettings(**settings),
            lambda kind, text: lines.append((kind, text)),
            version="2026-07-28",
            timeout=TIMEOUT,
            opener=opener,
            attended_now=attended,
        )  # fmt: skip
    )
    return Outcome(result, lines)


def verified(token: str, key: SigningKey, server: StubServer, audience: str) -> dict[str, Any]:
    return dict(jwt.decode(token, jwt.PyJWK(key.jwk()).key, algorithms=["RS256"], audience=audience,
                           issuer=server.grants.issuer))  # fmt: skip


def paths(server: StubServer) -> list[str]:
    return [f"{note['method']} {note['path']}" for note in server.notes()]


# -- client_credentials ------------------------------------------------------------------------------------------


def test_client_credentials_with_a_dynamically_registered_client(key: SigningKey) -> None:
    """Spec-mandated (MCP authorization; RFC 9728, 8414, 7591, 6749 §4.4, 8707): challenge, resource metadata,
    server metadata, registration as a native confidential client, then a token for the resource; every step is
    told, no secret is."""
    with stub(key, StubPolicy(grant_types=CC)) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource)
    assert outcome.result.needed and outcome.result.token is not None, outcome.text()
    claims = verified(outcome.result.token, key, server, resource.url)
    assert claims["scope"] == "notes:read"  # the challenge's scope
    steps = [text for kind, text in outcome.lines]
    assert steps[0] == "endpoint returned 401; discovering OAuth configuration"
    assert f"found protected-resource metadata at {resource.prm_url}" in steps
    assert (
        f"found authorization server metadata at {server.grants.issuer}/.well-known/oauth-authorization-server" in steps
    )
    assert "signing in with client_credentials: the registered client has a secret (client_secret_basic), so nobody " \
           "needs to answer a browser" in steps  # fmt: skip
    assert f"no client credentials given; registering a client for client_credentials with {server.grants.issuer}" \
           "/register" in steps  # fmt: skip
    assert any(
        text.startswith(f"registered client_id {claims['client_id']} using client_secret_basic") for text in steps
    )
    assert outcome.lines[-1] == (Line.DONE, f"obtained an access token for resource {resource.url}")
    assert paths(server) == ["GET /.well-known/oauth-authorization-server", "POST /register", "POST /token"]
    assert "registered dynamically" in outcome.result.summary
    outcome.assert_no_secret_printed()


def test_client_credentials_with_the_client_given_and_registration_closed(key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §4.4): --client-id and --client-secret are used as given; nothing is registered."""
    policy = StubPolicy(grant_types=CC, registration=False, clients=(PresetClient("ci-runner", SECRET),))
    with stub(key, policy) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, client_id="ci-runner", client_secret=SECRET, scope="notes:read")
    assert outcome.result.token is not None, outcome.text()
    assert verified(outcome.result.token, key, server, resource.url)["client_id"] == "ci-runner"
    assert "POST /register" not in paths(server)
    assert "using client_id ci-runner (given with --client-id)" in outcome.text()
    assert SECRET in outcome.result.secrets
    outcome.assert_no_secret_printed()


# -- authorization_code --------------------------------------------------------------------------------------------


def test_authorization_code_with_pkce_through_the_loopback_redirect(key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §4.1, RFC 7636 S256, RFC 8252 §7.3, RFC 9207): a public native client registered
    for the exact loopback redirect, state and iss checked, the code redeemed with its verifier."""
    shown: list[str] = []

    async def watching(url: str) -> None:
        shown.append(url)
        await browser(url)

    with stub(key) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, interactive=True, opener=watching)
    assert outcome.result.token is not None, outcome.text()
    verified(outcome.result.token, key, server, resource.url)
    query = {name: values[0] for name, values in parse_qs(urlsplit(shown[0]).query).items()}
    assert query["code_challenge_method"] == "S256" and query["resource"] == resource.url
    assert query["redirect_uri"].startswith("http://127.0.0.1:") and query["redirect_uri"].endswith("/callback")
    assert "code_verifier" not in query and query["state"]
    assert (Line.URL, shown[0]) in outcome.lines
    assert (
        paths(server).index("POST /register")
        < paths(server).index("GET /authorize")
        < paths(server).index("POST /token")
    )
    assert "authorization code received; exchanging it for a token" in outcome.text()
    outcome.assert_no_secret_printed()
    port = int(urlsplit(query["redirect_uri"]).port or 0)
    with pytest.raises(OSError):  # the receiver is closed once the flow is done
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_authorization_code_with_a_preset_public_client_and_no_registration(key: SigningKey) -> None:
    """Spec-mandated (RFC 8252 §7.3, §8.5): a client id given without a secret is a public client; its loopback
    redirect is registered without a port."""
    preset = PresetClient("desktop", redirect_uris=("http://127.0.0.1/callback",))
    with stub(key, StubPolicy(registration=False, clients=(preset,))) as server:
        with serving(Resource(server.grants.issuer)) as resource:
            outcome = run(resource, client_id="desktop", attended=True)
    assert outcome.result.token is not None, outcome.text()
    assert verified(outcome.result.token, key, server, resource.url)["client_id"] == "desktop"


def test_interactive_prefers_the_browser_even_where_client_credentials_exists(key: SigningKey) -> None:
    """Tool-defined (--interactive): "check that the sign-in works" is a fair thing to ask."""
    with stub(key, StubPolicy(grant_types=CC)) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, interactive=True)
    assert outcome.result.token is not None
    assert "GET /authorize" in paths(server)


# -- what the authorization server registered, and a grant it refuses ------------------------------------------------


def token_requests(server: StubServer) -> int:
    return paths(server).count("POST /token")


def test_a_client_registered_as_public_signs_in_with_the_authorization_code_and_pkce(key: SigningKey) -> None:
    """Spec-mandated (RFC 7591 §3.2.1: the registered metadata is the server's answer; RFC 6749 §4.4: a public client
    has no client_credentials) and tool-defined (issue 21): both grants offered, one registration for both, and the
    server registers a public authorization_code client: the run signs in with the code and PKCE, never asking for
    client_credentials, and says why."""
    shown: list[str] = []

    async def watching(url: str) -> None:
        shown.append(url)
        await browser(url)

    policy = StubPolicy(grant_types=CC, public_registration=True)
    with stub(key, policy) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, attended=True, opener=watching)
    assert outcome.result.token is not None, outcome.text()
    claims = verified(outcome.result.token, key, server, resource.url)
    assert paths(server) == ["GET /.well-known/oauth-authorization-server", "POST /register", "GET /authorize",
                             "POST /token"]  # fmt: skip
    steps = [text for _, text in outcome.lines]
    registering = next(text for text in steps if text.startswith("no client credentials given; registering"))
    assert "registering a client for client_credentials and authorization_code with " in registering
    redirect = parse_qs(urlsplit(shown[0]).query)["redirect_uri"][0]
    assert registering.endswith(f" for redirect {redirect}")  # the redirect registered is the one used
    assert "note: asked to register for client_secret_basic; the server registered none, which is used" in steps
    assert "signing in with authorization_code + PKCE: the registered client is public (token_endpoint_auth_method " \
           "none)" in steps  # fmt: skip
    assert not any(text.startswith("falling back") for text in steps)
    assert f"authorization_code grant at {server.grants.issuer} (client {claims['client_id']}, registered " \
           "dynamically), token" in outcome.result.summary  # fmt: skip
    outcome.assert_no_secret_printed()


@pytest.mark.parametrize(
    ("settings", "blocked"),
    [({"attended": False}, "nobody is there to answer it"), ({"attended": True, "interactive": False},
                                                             "--no-interactive forbids it")],
    ids=["unattended", "no-interactive"],
)  # fmt: skip
def test_where_no_browser_may_be_asked_a_public_registration_stops_at_choosing_a_grant(
    key: SigningKey, settings: dict[str, Any], blocked: str
) -> None:
    """Tool-defined (issue 21): the registered client cannot use client_credentials and nobody may answer a browser:
    the sign-in says so at choosing a grant, and no token is asked for with a grant the client does not have."""
    policy = StubPolicy(grant_types=CC, public_registration=True)
    with stub(key, policy) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, **settings)
    assert failure(outcome).startswith(
        "choosing a grant: the registered client is public (token_endpoint_auth_method none), so client_credentials "
        f"cannot be used; only a browser sign-in (authorization_code) is left, and {blocked}"
    )
    assert paths(server) == ["GET /.well-known/oauth-authorization-server", "POST /register"]
    assert "registering a client for client_credentials with " in outcome.text()  # no redirect: no browser planned


def test_a_grant_refused_at_the_token_endpoint_falls_back_to_the_next_once_and_says_so(key: SigningKey) -> None:
    """Tool-defined (issue 21; RFC 6749 §5.2 unauthorized_client): client_credentials is advertised and registered,
    the token endpoint refuses it; the sign-in falls back to the authorization code with the same client, in one
    line, and the summary says so."""
    policy = StubPolicy(grant_types=CC, refused_grants=("client_credentials",))
    with stub(key, policy) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, attended=True)
    assert outcome.result.token is not None, outcome.text()
    claims = verified(outcome.result.token, key, server, resource.url)
    assert paths(server) == ["GET /.well-known/oauth-authorization-server", "POST /register", "POST /token",
                             "GET /authorize", "POST /token"]  # fmt: skip
    steps = [text for _, text in outcome.lines]
    assert "signing in with client_credentials: the registered client has a secret (client_secret_basic), so nobody " \
           "needs to answer a browser" in steps  # fmt: skip
    fallbacks = [text for text in steps if text.startswith("falling back")]
    assert fallbacks == [
        "falling back to authorization_code + PKCE: the token endpoint refused client_credentials (HTTP 400 "
        "unauthorized_client: client_credentials is advertised but not given to this client (stub policy "
        "refused_grants))"
    ]
    assert f"(client {claims['client_id']}, registered dynamically), after the token endpoint refused " \
           "client_credentials" in outcome.result.summary  # fmt: skip
    outcome.assert_no_secret_printed()


def test_the_fallback_happens_once_and_only_to_a_grant_that_may_run(key: SigningKey) -> None:
    """Tool-defined (issue 21): both grants refused at the token endpoint: one fallback, then the second refusal is
    the failure; unattended, there is nothing to fall back to and the first refusal is."""
    both = StubPolicy(grant_types=CC, refused_grants=("client_credentials", "authorization_code"))
    with stub(key, both) as server, serving(Resource(server.grants.issuer)) as resource:
        twice = run(resource, attended=True)
        asked_twice = token_requests(server)
    with stub(key, StubPolicy(grant_types=CC, refused_grants=("client_credentials",))) as server:
        with serving(Resource(server.grants.issuer)) as resource:
            unattended = run(resource)
            asked_once = token_requests(server)
    assert failure(twice).startswith("token request: ")
    assert "unauthorized_client: authorization_code is advertised" in failure(twice)
    assert [text for _, text in twice.lines if text.startswith("falling back")] and asked_twice == 2
    assert failure(unattended).startswith("token request: ") and "HTTP 400 unauthorized_client" in failure(unattended)
    assert not any(text.startswith("falling back") for _, text in unattended.lines) and asked_once == 1


def test_a_given_confidential_client_refused_client_credentials_falls_back_to_the_browser(key: SigningKey) -> None:
    """Tool-defined (issue 21): a client given with --client-id and --client-secret keeps its secret on the
    authorization-code exchange it falls back to; nothing is registered."""
    preset = PresetClient("ci-runner", SECRET, ("http://127.0.0.1/callback",))
    policy = StubPolicy(grant_types=CC, registration=False, clients=(preset,), refused_grants=("client_credentials",))
    with stub(key, policy) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, attended=True, client_id="ci-runner", client_secret=SECRET)
    assert outcome.result.token is not None, outcome.text()
    assert verified(outcome.result.token, key, server, resource.url)["client_id"] == "ci-runner"
    assert "signing in with client_credentials: the client given with --client-id has a secret" in outcome.text()
    assert "falling back to authorization_code + PKCE: the token endpoint refused client_credentials" in outcome.text()
    assert "POST /register" not in paths(server) and token_requests(server) == 2
    outcome.assert_no_secret_printed()


# -- failures: each names its step ---------------------------------------------------------------------------------


def failure(outcome: Outcome) -> str:
    assert outcome.result.needed and outcome.result.token is None, outcome.text()
    assert outcome.lines[-1][0] is Line.FAILED
    assert outcome.result.failure is not None
    return outcome.result.failure


def test_a_wrong_issuer_in_the_metadata_is_refused_not_worked_around(key: SigningKey) -> None:
    """Spec-mandated (RFC 8414 §3.3): the metadata's issuer must be the issuer its URL was built from."""
    policy = StubPolicy(grant_types=CC, metadata_issuer="https://somewhere-else.example")
    with stub(key, policy) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource)
    assert failure(outcome).startswith(
        f"authorization server metadata: refused: {server.grants.issuer}/.well-known/oauth-authorization-server "
        f'declares issuer "https://somewhere-else.example", expected "{server.grants.issuer}"'
    )
    assert paths(server) == ["GET /.well-known/oauth-authorization-server"]


def test_a_denied_consent_is_the_authorization_servers_own_answer(key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §4.1.2.1): error=access_denied in the redirect stops the flow at authorization."""
    with stub(key, StubPolicy(consent="deny")) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, interactive=True)
    assert failure(outcome).startswith("authorization: the authorization server answered access_denied")
    assert "POST /token" not in paths(server)


def test_without_anybody_to_answer_the_browser_flow_fails_at_once(key: SigningKey) -> None:
    """Tool-defined: no terminal (or CI), or --no-interactive, and only authorization_code: a reason, no wait."""
    with stub(key) as server, serving(Resource(server.grants.issuer)) as resource:
        unattended = run(resource, attended=False)
        refused = run(resource, attended=True, interactive=False)
    assert failure(unattended).startswith("choosing a grant: only a browser sign-in (authorization_code) is possible")
    assert "pass --interactive" in failure(unattended)
    assert "--no-interactive forbids it" in failure(refused)
    assert "GET /authorize" not in paths(server) and "POST /register" not in paths(server)


def test_no_browser_without_a_terminal_prints_the_url_and_waits_for_the_sign_in(key: SigningKey) -> None:
    """Tool-defined (issue 28): --no-browser asks to be shown the URL, so someone is there to open it: no terminal (or
    CI set) does not stop the browser flow; the URL is printed and the redirect awaited, and the run signs in."""
    with stub(key) as server, serving(Resource(server.grants.issuer)) as resource:
        shown = run(resource, attended=False, browser=False)
    assert shown.result.token is not None, shown.text()
    assert any(kind is Line.URL and "/authorize?" in text for kind, text in shown.lines), shown.text()
    assert "GET /authorize" in paths(server) and "POST /token" in paths(server)


def test_no_register_without_a_client_id_stops_before_anything_is_created(key: SigningKey) -> None:
    """Tool-defined (--no-register): registration creates state on somebody else's server; it can be refused."""
    with stub(key, StubPolicy(grant_types=CC)) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, register=False)
    assert "no --client-id was given and --no-register forbids registering one" in failure(outcome)
    assert "POST /register" not in paths(server)


def test_a_redirect_with_another_state_is_answered_400_and_the_real_one_still_completes(key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §10.12) and tool-defined (issue 18): a redirect whose state is not this request's is
    not used (CSRF), is answered 400 without echoing the code, and does not end the sign-in."""
    strays: list[httpx.Response] = []

    async def forger_then_browser(url: str) -> None:
        redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        stray = f"{redirect}?code=stolen-code&state=not-yours"
        strays.append(await asyncio.to_thread(httpx.get, stray, timeout=TIMEOUT))
        await browser(url)

    with stub(key) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, interactive=True, opener=forger_then_browser)
    assert strays[0].status_code == 400 and "stolen-code" not in strays[0].text
    assert outcome.result.token is not None, outcome.text()
    assert (Line.NOTE, "note: a redirect whose state does not belong to this sign-in was answered 400; still waiting "
            "for the right one") in outcome.lines  # fmt: skip
    assert paths(server).count("POST /token") == 1


def test_a_stray_redirect_alone_ends_in_the_timeout(key: SigningKey) -> None:
    """Tool-defined (issue 18): only the listener's timeout ends a wait that saw nothing but a wrong state."""

    async def forger(url: str) -> None:
        redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        await asyncio.to_thread(httpx.get, f"{redirect}?code=stolen-code&state=not-yours", timeout=TIMEOUT)

    with stub(key) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, interactive=True, opener=forger, auth_timeout_ms=500)
    assert "authorization: no redirect to http://127.0.0.1:" in failure(outcome)
    assert "POST /token" not in paths(server)


def test_plain_http_to_a_remote_authorization_server_is_refused_unless_allowed(key: SigningKey) -> None:
    """Tool-defined (issue 18): the issuer is checked before any request goes there; allowed, it is noted."""
    resource = Resource("http://auth.example.test")
    with serving(resource):
        with pytest.raises(InsecureTransport, match="to the authorization server at http://auth.example.test "):
            run(resource)
        seen = list(resource.seen)
        allowed = run(resource, allow_insecure_http=True)
    assert seen == ["POST /mcp", "GET /.well-known/oauth-protected-resource/mcp"]
    assert "note: credentials go in clear text to the authorization server at http://auth.example.test, as " \
           "--allow-insecure-http allows" in allowed.text()  # fmt: skip
    assert failure(allowed).startswith("authorization server metadata: ")  # it was tried: the name does not resolve


def test_a_browser_that_never_comes_back_is_a_timeout_not_a_hang(key: SigningKey) -> None:
    """Tool-defined (--auth-timeout): a closed tab becomes a reason within the bound."""

    async def nobody(url: str) -> None:
        return None

    with stub(key) as server, serving(Resource(server.grants.issuer)) as resource:
        outcome = run(resource, interactive=True, opener=nobody, auth_timeout_ms=300)
    assert "authorization: no redirect to http://127.0.0.1:" in failure(outcome)
    assert "/callback within 0.3 s" in failure(outcome)


def test_a_server_offering_only_plain_pkce_is_refused() -> None:
    """Spec-mandated (RFC 7636 §4.2, OAuth 2.1): S256 only; a plain-only server is refused before the browser."""
    resource = Resource("")
    resource.issuer = f"http://127.0.0.1:{resource.port}"
    resource.documents["/.well-known/oauth-authorization-server"] = {
        "issuer": resource.issuer, "authorization_endpoint": f"{resource.issuer}/authorize",
        "token_endpoint": f"{resource.issuer}/token", "code_challenge_methods_supported": ["plain"],
    }  # fmt: skip
    opened: list[str] = []

    async def record(url: str) -> None:
        opened.append(url)

    with serving(resource):
        outcome = run(resource, interactive=True, client_id="desktop", opener=record)
    assert "offers PKCE methods ['plain'], not S256" in failure(outcome)
    assert not opened and not any("authorize" in line for line in resource.seen)


# -- discovery -------------------------------------------------------------------------------------------------------


def test_an_endpoint_that_answers_needs_no_sign_in(key: SigningKey) -> None:
    """Tool-defined: one request; anything but 401 means there is nothing to negotiate."""
    with stub(key) as server, serving(Resource(server.grants.issuer, status=200)) as resource:
        outcome = run(resource)
    assert outcome.result == SignIn(needed=False) and not outcome.lines
    assert resource.seen == ["POST /mcp"] and not paths(server)


def test_without_resource_metadata_in_the_challenge_the_well_known_uris_are_tried_in_order(key: SigningKey) -> None:
    """Spec-mandated (MCP authorization, RFC 9728 §3): path-scoped first, then root; the singular
    authorization_server string is tolerated with a note."""
    with stub(key, StubPolicy(grant_types=CC)) as server:
        resource = Resource(server.grants.issuer, challenge='Bearer scope="notes:read"')
        root = "/.well-known/oauth-protected-resource"
        resource.documents[root + "/mcp"] = None
        resource.documents[root] = {"resource": resource.url, "authorization_server": server.grants.issuer}
        with serving(resource):
            outcome = run(resource)
    assert outcome.result.token is not None, outcome.text()
    assert resource.seen[1:3] == [f"GET {root}/mcp", f"GET {root}"]
    assert 'note: the metadata uses "authorization_server" (a string)' in outcome.text()


def test_metadata_describing_another_resource_is_refused(key: SigningKey) -> None:
    """Spec-mandated (RFC 9728 §3.3, §7.3): a token is never requested for a resource that is not this server."""
    with stub(key, StubPolicy(grant_types=CC)) as server:
        resource = Resource(server.grants.issuer)
        resource.documents["/.well-known/oauth-protected-resource/mcp"] = {
            "resource": "https://elsewhere.example/mcp", "authorization_servers": [server.grants.issuer]
        }  # fmt: skip
        with serving(resource):
            outcome = run(resource)
    assert failure(outcome).startswith("protected resource metadata: refused:")
    assert not paths(server)


def test_a_challenge_pointing_at_a_remote_private_address_is_not_followed(key: SigningKey) -> None:
    """Tool-defined (client hygiene): a resource_metadata URL the suite may not fetch is skipped with a note, and the
    well-known URIs are used instead."""
    with stub(key, StubPolicy(grant_types=CC)) as server:
        resource = Resource(server.grants.issuer, challenge='Bearer resource_metadata="http://10.0.0.5/prm"')
        with serving(resource):
            outcome = run(resource)
    assert outcome.result.token is not None
    assert "is not fetched (plain http to a host that is not loopback)" in outcome.text()


def test_metadata_urls_follow_the_prescribed_order() -> None:
    """Spec-mandated (MCP authorization §Authorization Server Metadata Discovery, RFC 8414 §3)."""
    assert metadata_urls("https://auth.example") == [
        "https://auth.example/.well-known/oauth-authorization-server",
        "https://auth.example/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://auth.example/tenant1/") == [
        "https://auth.example/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example/.well-known/openid-configuration/tenant1",
        "https://auth.example/tenant1/.well-known/openid-configuration",
    ]


# -- pieces ----------------------------------------------------------------------------------------------------------


def test_one_function_picks_the_client_authentication() -> None:
    """Spec-mandated (RFC 8414 §2 default, RFC 7591 §2): none for a public client where offered; basic, then post."""
    assert auth_method(None, public=True) == "client_secret_basic"
    assert auth_method(["client_secret_post", "none"], public=True) == "none"
    assert auth_method(["client_secret_post", "none"], public=False) == "client_secret_post"
    assert auth_method(["private_key_jwt"], public=False) is None


def test_pkce_is_s256_of_an_unreserved_verifier() -> None:
    """Spec-mandated (RFC 7636 §4.1, §4.2, appendix B)."""
    verifier, challenge = pkce()
    assert 43 <= len(verifier) <= 128 and verifier.replace("-", "").replace("_", "").isalnum()
    expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == expected and pkce()[0] != verifier


def test_the_receiver_answers_only_its_callback_with_a_page_that_keeps_nothing() -> None:
    """Tool-defined (RFC 8252 §7.3 hygiene): favicon requests are 404s; the page is no-store, no-referrer, and does
    not echo the code."""

    async def scenario() -> tuple[httpx.Response, httpx.Response, Mapping[str, str]]:
        async with LoopbackReceiver("127.0.0.1", None) as receiver:
            async with httpx.AsyncClient(timeout=TIMEOUT) as client:
                base = receiver.redirect_uri.removesuffix("/callback")
                favicon = await client.get(f"{base}/favicon.ico")
                page = await client.get(f"{receiver.redirect_uri}?code=secret-code-123&state=s")
            return favicon, page, await receiver.wait(1.0)

    favicon, page, answer = asyncio.run(scenario())
    assert favicon.status_code == 404
    assert page.status_code == 200 and "secret-code-123" not in page.text
    assert page.headers["cache-control"] == "no-store" and page.headers["referrer-policy"] == "no-referrer"
    assert answer == {"code": "secret-code-123", "state": "s"}


def test_the_receiver_answers_another_state_400_and_keeps_waiting_for_its_own() -> None:
    """Tool-defined (issue 18): a stray or forged redirect cannot end the wait; the one with the state does."""

    async def scenario() -> tuple[list[httpx.Response], Mapping[str, str], int]:
        strays: list[str] = []
        async with LoopbackReceiver("127.0.0.1", None) as receiver:
            receiver.expect("the-right-state", lambda: strays.append("stray"))
            async with httpx.AsyncClient(timeout=TIMEOUT) as client:
                pages = [await client.get(f"{receiver.redirect_uri}?code=c1&state={state}")
                         for state in ("wrong", "", "the-right-state")]  # fmt: skip
            return pages, await receiver.wait(1.0), len(strays)

    pages, answer, strays = asyncio.run(scenario())
    assert [page.status_code for page in pages] == [400, 400, 200] and strays == 2
    assert "keeps waiting" in pages[0].text and "c1" not in pages[0].text
    assert answer == {"code": "c1", "state": "the-right-state"}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"redirect_host": "192.168.1.4"}, "the redirect must come back to this machine"),
        ({"redirect_port": 70000}, "expected a port from 1 to 65535"),
        ({"client_secret": "x"}, "--client-secret needs the --client-id"),
        ({"auth_timeout_ms": 0}, "--auth-timeout must be positive"),
    ],
)
def test_sign_in_settings_are_checked_before_anything_is_sent(settings: dict[str, Any], message: str) -> None:
    """Tool-defined: bad input is one clear error."""
    with pytest.raises(ConfigError, match=None) as raised:
        OAuthSettings(**settings)
    assert message in str(raised.value)
