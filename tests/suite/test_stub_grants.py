"""The stub as an OAuth 2.1 authorization server: registration, auto-consent, and the token endpoint.

Each test starts a real stub on a free loopback port and talks to it with httpx; the access tokens
are checked with PyJWT against the stub's public key, an implementation the stub shares nothing with.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest

from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.server import StubServer
from tests.peers.process import free_port

REDIRECT = "http://127.0.0.1:53682/callback"
RESOURCE = "http://127.0.0.1:8000/mcp"
TIMEOUT = 5.0


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@pytest.fixture
def stub(key: SigningKey) -> Iterator[StubServer]:
    port = free_port()
    server = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", key, SigningKey.generate(), ["notes:read"])
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def http(stub: StubServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stub.grants.issuer, timeout=TIMEOUT, follow_redirects=False, trust_env=False) as client:
        yield client


def pkce() -> tuple[str, str]:
    """A verifier and its S256 challenge (RFC 7636 §4.1, §4.2)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def register(http: httpx.Client, **metadata: Any) -> dict[str, Any]:
    answer = http.post("/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
                                          **metadata})  # fmt: skip
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def authorize(http: httpx.Client, client_id: str, challenge: str | None, **extra: str) -> httpx.Response:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st-1",
              "code_challenge_method": "S256", "scope": "notes:read", "resource": RESOURCE, **extra}  # fmt: skip
    if challenge is not None:
        params["code_challenge"] = challenge
    return http.get("/authorize", params=params)


def redirected(answer: httpx.Response) -> dict[str, str]:
    """The query of a 302 back to REDIRECT, one value per name."""
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(f"{REDIRECT}?")
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items() if len(values) == 1}


def code_for(http: httpx.Client, client_id: str, challenge: str, **extra: str) -> str:
    return redirected(authorize(http, client_id, challenge, **extra))["code"]


def exchange(http: httpx.Client, client_id: str, code: str, verifier: str, **extra: str) -> httpx.Response:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
            "code_verifier": verifier, "resource": RESOURCE, **extra}  # fmt: skip
    return http.post("/token", data=form)


def claims_of(token: str, key: SigningKey, issuer: str, audience: str | None = RESOURCE) -> dict[str, Any]:
    options = {} if audience is not None else {"verify_aud": False}
    return dict(jwt.decode(token, jwt.PyJWK(key.jwk()).key, algorithms=["RS256"], audience=audience, issuer=issuer,
                           options=options))  # fmt: skip


def test_the_metadata_names_the_registration_endpoint_and_what_the_grants_support(
    stub: StubServer, http: httpx.Client, key: SigningKey
) -> None:
    """Spec-mandated (RFC 8414 §2, RFC 9207 §3): the endpoints, grants, client auth methods, iss support and the
    configured scopes, in both discovery documents; a stub without scopes names none."""
    issuer = stub.grants.issuer
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        metadata = http.get(path).json()
        assert metadata["issuer"] == issuer and metadata["jwks_uri"] == f"{issuer}/jwks.json"
        assert metadata["authorization_endpoint"] == f"{issuer}/authorize"
        assert metadata["token_endpoint"] == f"{issuer}/token"
        assert metadata["registration_endpoint"] == f"{issuer}/register"
        assert metadata["authorization_response_iss_parameter_supported"] is True
        methods = metadata["token_endpoint_auth_methods_supported"]
        assert methods == ["none", "client_secret_post", "client_secret_basic"]
        assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token"]
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["scopes_supported"] == ["notes:read"]
    port = free_port()
    bare = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", key, SigningKey.generate())
    try:
        answer = httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server", timeout=TIMEOUT)
        assert "scopes_supported" not in answer.json()
    finally:
        bare.close()


def test_registration_answers_a_fresh_client_id_and_echoes_the_metadata(http: httpx.Client) -> None:
    """Spec-mandated (RFC 7591 §3.2.1): 201 with a new client_id and the registered metadata; a public client
    (token_endpoint_auth_method none) gets no secret, a client_secret_post one does."""
    submitted = {"redirect_uris": [REDIRECT], "client_name": "peer", "grant_types": ["authorization_code",
                 "refresh_token"], "response_types": ["code"], "token_endpoint_auth_method": "none",
                 "scope": "notes:read", "application_type": "native"}  # fmt: skip
    answer = http.post("/register", json=submitted)
    assert answer.status_code == 201 and answer.headers["cache-control"] == "no-store"
    public = answer.json()
    assert {name: public[name] for name in submitted} == submitted
    assert public["client_id"] and "client_secret" not in public
    confidential = register(http, token_endpoint_auth_method="client_secret_post")
    assert confidential["client_secret"] and confidential["client_id"] != public["client_id"]


def test_registration_without_an_auth_method_gets_the_rfc_default_and_a_secret(http: httpx.Client) -> None:
    """Spec-mandated (RFC 7591 §2): an omitted token_endpoint_auth_method means client_secret_basic, which the
    answer says, with the secret that method needs."""
    answer = http.post("/register", json={"redirect_uris": [REDIRECT]})
    assert answer.status_code == 201
    assert answer.json()["token_endpoint_auth_method"] == "client_secret_basic" and answer.json()["client_secret"]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (json.dumps({"client_name": "no redirect"}), "invalid_redirect_uri"),
        (json.dumps({"redirect_uris": []}), "invalid_redirect_uri"),
        (json.dumps({"redirect_uris": ["/relative"]}), "invalid_redirect_uri"),
        (json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}),
         "invalid_client_metadata"),
        ("redirect_uris=http://x", "invalid_client_metadata"),
        (json.dumps([REDIRECT]), "invalid_client_metadata"),
    ],
)  # fmt: skip
def test_registration_with_bad_metadata_is_refused(http: httpx.Client, body: str, error: str) -> None:
    """Spec-mandated (RFC 7591 §3.2.2): 400 with the error code naming what was wrong."""
    answer = http.post("/register", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"] == error


def test_authorize_redirects_back_with_a_code_the_state_and_the_issuer(stub: StubServer, http: httpx.Client) -> None:
    """Spec-mandated (RFC 6749 §4.1.2, RFC 9207 §2): 302 to the registered redirect URI with code, the state as
    sent and iss as the exact issuer string; no state sent, none returned."""
    client_id = register(http)["client_id"]
    _, challenge = pkce()
    answer = redirected(authorize(http, client_id, challenge))
    assert answer["code"] and answer["state"] == "st-1" and answer["iss"] == stub.grants.issuer
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "code_challenge": challenge,
              "code_challenge_method": "S256"}  # fmt: skip
    stateless = redirected(http.get(f"/authorize?{urlencode(params)}"))
    assert "state" not in stateless and stateless["code"] and stateless["iss"] == stub.grants.issuer


def test_the_code_is_exchanged_for_a_stub_signed_token_with_the_verifier(
    stub: StubServer, http: httpx.Client, key: SigningKey
) -> None:
    """Spec-mandated (RFC 6749 §5.1, RFC 7636 §4.6, RFC 8707 §2.2): the right verifier gets a Bearer token signed
    by the stub's key, from its issuer, for the requested resource, with the granted scope; not cacheable."""
    client_id = register(http)["client_id"]
    verifier, challenge = pkce()
    answer = exchange(http, client_id, code_for(http, client_id, challenge), verifier)
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] > 0 and body["scope"] == "notes:read"
    assert body["refresh_token"]
    claims = claims_of(body["access_token"], key, stub.grants.issuer)
    assert claims["aud"] == RESOURCE and claims["scope"] == "notes:read"
    assert claims["sub"] == client_id and claims["client_id"] == client_id
    assert jwt.get_unverified_header(body["access_token"]) == {"alg": "RS256", "typ": "at+jwt", "kid": key.kid}


def test_the_audience_comes_from_the_authorization_request_or_is_left_out(
    stub: StubServer, http: httpx.Client, key: SigningKey
) -> None:
    """Tool-defined: without resource on the token request the authorized one is the audience; with neither, the
    token has no aud; a token request naming another resource than the authorized one is refused (RFC 8707)."""
    client_id = register(http)["client_id"]
    verifier, challenge = pkce()
    form = {"grant_type": "authorization_code", "redirect_uri": REDIRECT, "client_id": client_id,
            "code_verifier": verifier}  # fmt: skip
    answer = http.post("/token", data={**form, "code": code_for(http, client_id, challenge)})
    assert claims_of(answer.json()["access_token"], key, stub.grants.issuer)["aud"] == RESOURCE
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "code_challenge": challenge,
              "code_challenge_method": "S256"}  # fmt: skip
    code = redirected(http.get("/authorize", params=params))["code"]
    token = http.post("/token", data={**form, "code": code}).json()["access_token"]
    assert "aud" not in claims_of(token, key, stub.grants.issuer, audience=None)
    other = exchange(http, client_id, code_for(http, client_id, challenge), verifier, resource="http://elsewhere/mcp")
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"


def test_a_wrong_verifier_is_an_invalid_grant(http: httpx.Client) -> None:
    """Spec-mandated (RFC 7636 §4.6): a verifier whose S256 is not the challenge gets invalid_grant."""
    client_id = register(http)["client_id"]
    _, challenge = pkce()
    answer = exchange(http, client_id, code_for(http, client_id, challenge), pkce()[0])
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
    assert "access_token" not in answer.json()


def test_a_code_is_good_once_and_its_replay_revokes_what_it_gave(http: httpx.Client) -> None:
    """Spec-mandated (RFC 6749 §4.1.2, OAuth 2.1 §4.1.3): a second redemption is invalid_grant, and the refresh
    token the first one got stops working."""
    client_id = register(http)["client_id"]
    verifier, challenge = pkce()
    code = code_for(http, client_id, challenge)
    first = exchange(http, client_id, code, verifier)
    assert first.status_code == 200
    again = exchange(http, client_id, code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    refresh = http.post("/token", data={"grant_type": "refresh_token", "refresh_token": first.json()["refresh_token"],
                                        "client_id": client_id})  # fmt: skip
    assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("change", "description"),
    [
        ({"code_challenge": None}, "code_challenge is required"),
        ({"code_challenge_method": "plain"}, "code_challenge_method must be S256"),
        ({"response_type": ""}, "response_type is required"),
    ],
)
def test_an_authorization_request_without_s256_pkce_is_an_error_redirect(
    stub: StubServer, http: httpx.Client, change: dict[str, str | None], description: str
) -> None:
    """Spec-mandated (OAuth 2.1 §4.1.2.1, RFC 7636 §4.4.1): the client and redirect URI are fine, so the error goes
    back to the client as invalid_request, with the state and the issuer, and no code."""
    client_id = register(http)["client_id"]
    _, challenge = pkce()
    extra = {name: value for name, value in change.items() if value is not None}
    answer = redirected(authorize(http, client_id, None if "code_challenge" in change else challenge, **extra))
    assert answer["error"] == "invalid_request" and description in answer["error_description"]
    assert answer["state"] == "st-1" and answer["iss"] == stub.grants.issuer and "code" not in answer


def test_an_unknown_client_or_redirect_uri_is_answered_not_redirected(http: httpx.Client) -> None:
    """Spec-mandated (RFC 6749 §4.1.2.1): with an unknown client_id or an unregistered redirect URI the stub must
    not redirect; it answers 400 itself."""
    _, challenge = pkce()
    unknown = authorize(http, "no-such-client", challenge)
    assert unknown.status_code == 400 and unknown.json()["error"] == "invalid_client"
    client_id = register(http)["client_id"]
    elsewhere = authorize(http, client_id, challenge, redirect_uri="http://127.0.0.1:1/evil")
    assert elsewhere.status_code == 400 and "location" not in elsewhere.headers


def test_a_refresh_token_gets_a_new_token_once(stub: StubServer, http: httpx.Client, key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §6, OAuth 2.1 §4.3.1): the refresh grant issues a new access token for the same
    audience and scope, and rotates the refresh token (the used one is refused)."""
    client_id = register(http)["client_id"]
    verifier, challenge = pkce()
    first = exchange(http, client_id, code_for(http, client_id, challenge), verifier).json()
    form = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client_id}
    refreshed = http.post("/token", data=form)
    assert refreshed.status_code == 200, refreshed.text
    body = refreshed.json()
    assert body["refresh_token"] != first["refresh_token"] and body["scope"] == "notes:read"
    assert claims_of(body["access_token"], key, stub.grants.issuer)["aud"] == RESOURCE
    replay = http.post("/token", data=form)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"


def test_a_confidential_client_must_authenticate_with_its_secret(http: httpx.Client) -> None:
    """Spec-mandated (RFC 6749 §2.3.1, §5.2): client_secret_basic and client_secret_post both work with the right
    secret; a wrong or missing one is 401 invalid_client with a Basic challenge."""
    for method in ("client_secret_basic", "client_secret_post"):
        client = register(http, token_endpoint_auth_method=method)
        verifier, challenge = pkce()
        code = code_for(http, client["client_id"], challenge)
        wrong = exchange(http, client["client_id"], code, verifier, client_secret="not-the-secret")
        assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
        assert wrong.headers["www-authenticate"].startswith("Basic")
        code = code_for(http, client["client_id"], challenge)
        if method == "client_secret_post":
            right = exchange(http, client["client_id"], code, verifier, client_secret=client["client_secret"])
        else:
            form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                    "code_verifier": verifier, "resource": RESOURCE}  # fmt: skip
            right = http.post("/token", data=form, auth=(client["client_id"], client["client_secret"]))
        assert right.status_code == 200, right.text


@pytest.mark.parametrize(
    ("form", "status", "error"),
    [
        ({"grant_type": "client_credentials"}, 400, "unsupported_grant_type"),
        ({"code": "x"}, 400, "invalid_request"),
        ({"grant_type": "authorization_code", "client_id": "nobody", "code": "x"}, 401, "invalid_client"),
        ({"grant_type": "authorization_code", "client_id": "CLIENT", "code": "forged"}, 400, "invalid_grant"),
    ],
)
def test_token_request_errors_follow_rfc_6749(
    http: httpx.Client, form: dict[str, str], status: int, error: str
) -> None:
    """Spec-mandated (RFC 6749 §5.2): an unknown grant type, a missing grant type, an unknown client and an unknown
    code each get their error code; the stub has no client-credentials grant."""
    client_id = register(http)["client_id"]
    form = {name: client_id if value == "CLIENT" else value for name, value in form.items()}
    answer = http.post("/token", data=form)
    assert answer.status_code == status and answer.json()["error"] == error
    assert answer.headers["cache-control"] == "no-store"


def test_the_notes_show_each_endpoint_but_no_secret(stub: StubServer, http: httpx.Client) -> None:
    """Tool-defined: /register, /authorize and /token are noted like every fetch, by path only, so no code, token,
    verifier or client secret reaches the notes."""
    client = register(http, token_endpoint_auth_method="client_secret_post")
    verifier, challenge = pkce()
    code = code_for(http, client["client_id"], challenge)
    tokens = exchange(http, client["client_id"], code, verifier, client_secret=client["client_secret"]).json()
    notes = stub.notes()
    assert [(note["method"], note["path"]) for note in notes] == [
        ("POST", "/register"), ("GET", "/authorize"), ("POST", "/token")
    ]  # fmt: skip
    written = json.dumps(notes)
    for secret in (code, verifier, challenge, client["client_secret"], tokens["access_token"], tokens["refresh_token"]):
        assert secret not in written
