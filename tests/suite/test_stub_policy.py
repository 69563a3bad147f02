"""What the stub offers an OAuth client, one config option per case: the client_credentials grant, registration
on or off (or public clients only), preset clients, a grant refused at the token endpoint, a denied consent and a
deliberately wrong issuer in its metadata.

Each test starts a real stub on a free loopback port and talks to it with httpx; tokens are checked with PyJWT.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from mcp_assay.suite.stub.config import parse_stub
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import PresetClient, StubPolicy
from mcp_assay.suite.stub.server import StubServer
from mcp_assay.vocabulary.errors import ConfigError
from tests.peers.process import free_port

RESOURCE = "http://127.0.0.1:8000/mcp"
CC = ("authorization_code", "client_credentials", "refresh_token")
SECRET = "preset-secret-5b0d9c21"
TIMEOUT = 5.0


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@contextmanager
def stub(key: SigningKey, policy: StubPolicy) -> Iterator[httpx.Client]:
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    server = StubServer("127.0.0.1", port, issuer, key, SigningKey.generate(), ["notes:read"], policy=policy)
    try:
        with httpx.Client(base_url=issuer, timeout=TIMEOUT, follow_redirects=False, trust_env=False) as client:
            yield client
    finally:
        server.close()


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def claims(token: str, key: SigningKey, issuer: str) -> dict[str, Any]:
    return dict(jwt.decode(token, jwt.PyJWK(key.jwk()).key, algorithms=["RS256"], audience=RESOURCE, issuer=issuer))


def test_client_credentials_is_advertised_and_serves_a_preset_confidential_client(key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §4.4, RFC 8707): with the grant offered, a preset client's credentials alone get a
    token for the resource asked for, and no refresh token (§4.4.3)."""
    policy = StubPolicy(grant_types=CC, clients=(PresetClient("ci-runner", SECRET),))
    with stub(key, policy) as http:
        metadata = http.get("/.well-known/oauth-authorization-server").json()
        assert metadata["grant_types_supported"] == list(CC)
        form = {"grant_type": "client_credentials", "resource": RESOURCE, "scope": "notes:read"}
        answer = http.post("/token", data=form, headers={"authorization": basic("ci-runner", SECRET)})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert "refresh_token" not in body and body["token_type"] == "Bearer" and body["scope"] == "notes:read"
        granted = claims(body["access_token"], key, str(http.base_url).rstrip("/"))
        assert granted["client_id"] == "ci-runner" and granted["aud"] == RESOURCE
        wrong = http.post("/token", data=form, headers={"authorization": basic("ci-runner", "not-it")})
        assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"


def test_a_client_registered_for_client_credentials_needs_no_redirect_and_gets_a_token(key: SigningKey) -> None:
    """Spec-mandated (RFC 7591 §2): redirect URIs are for redirect-based grants; a client_credentials client
    registers with response_types [] and authenticates with the secret it is given."""
    with stub(key, StubPolicy(grant_types=CC)) as http:
        answer = http.post("/register", json={"grant_types": ["client_credentials"], "response_types": [],
                                              "token_endpoint_auth_method": "client_secret_post"})  # fmt: skip
        assert answer.status_code == 201, answer.text
        client = answer.json()
        assert client["response_types"] == [] and client["redirect_uris"] == []
        form = {"grant_type": "client_credentials", "resource": RESOURCE, "client_id": client["client_id"],
                "client_secret": client["client_secret"]}  # fmt: skip
        token = http.post("/token", data=form)
        assert token.status_code == 200, token.text
        public = http.post("/register", json={"grant_types": ["client_credentials"], "token_endpoint_auth_method":
                                              "none"})  # fmt: skip
        assert public.status_code == 400 and public.json()["error"] == "invalid_client_metadata"


def test_without_the_grant_client_credentials_is_unsupported(key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §5.2): the default stub does not advertise or grant client_credentials, even to a
    preset confidential client."""
    with stub(key, StubPolicy(clients=(PresetClient("ci-runner", SECRET),))) as http:
        metadata = http.get("/.well-known/oauth-authorization-server").json()
        assert "client_credentials" not in metadata["grant_types_supported"]
        answer = http.post("/token", data={"grant_type": "client_credentials"},
                           headers={"authorization": basic("ci-runner", SECRET)})  # fmt: skip
        assert answer.status_code == 400 and answer.json()["error"] == "unsupported_grant_type"
        register = http.post("/register", json={"grant_types": ["client_credentials"],
                                                "token_endpoint_auth_method": "client_secret_basic"})  # fmt: skip
        assert register.status_code == 400


def test_registration_can_be_closed(key: SigningKey) -> None:
    """Tool-defined: registration: false drops registration_endpoint from the metadata and /register is a 404."""
    with stub(key, StubPolicy(registration=False)) as http:
        for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            assert "registration_endpoint" not in http.get(path).json()
        assert http.post("/register", json={"redirect_uris": ["http://127.0.0.1/cb"]}).status_code == 404
    with stub(key, StubPolicy()) as http:
        assert http.post("/register", json={"redirect_uris": ["http://127.0.0.1/cb"]}).status_code == 201


def test_public_registration_registers_a_public_authorization_code_client_whatever_was_asked(key: SigningKey) -> None:
    """Tool-defined (issue 21: an authorization server that registers only public clients): the answer says what was
    registered (RFC 7591 §3.2.1), no secret is issued, and the client cannot take client_credentials."""
    with stub(key, StubPolicy(grant_types=CC, public_registration=True)) as http:
        answer = http.post("/register", json={"grant_types": ["client_credentials"], "response_types": [],
                                              "token_endpoint_auth_method": "client_secret_basic"})  # fmt: skip
        assert answer.status_code == 201, answer.text
        body = answer.json()
        assert body["token_endpoint_auth_method"] == "none" and body["grant_types"] == ["authorization_code"]
        assert body["response_types"] == ["code"] and "client_secret" not in body
        token = http.post("/token", data={"grant_type": "client_credentials", "client_id": body["client_id"]})
        assert token.status_code == 400 and token.json()["error"] == "unauthorized_client"
    with stub(key, StubPolicy(grant_types=CC)) as http:  # without it, what was asked is registered
        asked = {"grant_types": ["client_credentials"], "response_types": [],
                 "token_endpoint_auth_method": "client_secret_basic"}  # fmt: skip
        honoured = http.post("/register", json=asked).json()
        assert honoured["grant_types"] == ["client_credentials"] and honoured["client_secret"]


def test_a_refused_grant_is_advertised_and_registered_but_refused_at_the_token_endpoint(key: SigningKey) -> None:
    """Tool-defined (issue 21): refused_grants keeps the grant in the metadata and in registrations; the token
    endpoint answers unauthorized_client (RFC 6749 §5.2) to a client that authenticated; other grants still work."""
    policy = StubPolicy(grant_types=CC, clients=(PresetClient("ci-runner", SECRET),),
                        refused_grants=("client_credentials",))  # fmt: skip
    with stub(key, policy) as http:
        metadata = http.get("/.well-known/oauth-authorization-server").json()
        assert "client_credentials" in metadata["grant_types_supported"]
        form = {"grant_type": "client_credentials", "resource": RESOURCE}
        refused = http.post("/token", data=form, headers={"authorization": basic("ci-runner", SECRET)})
        assert refused.status_code == 400 and refused.json()["error"] == "unauthorized_client"
        wrong = http.post("/token", data=form, headers={"authorization": basic("ci-runner", "not-it")})
        assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"  # authentication comes first
    with stub(key, StubPolicy(grant_types=CC, clients=(PresetClient("ci-runner", SECRET),))) as http:
        given = http.post("/token", data=form, headers={"authorization": basic("ci-runner", SECRET)})
        assert given.status_code == 200


def test_the_metadata_can_declare_a_wrong_issuer_while_tokens_keep_the_real_one(key: SigningKey) -> None:
    """Tool-defined: metadata_issuer is only what the metadata says (to test a client's RFC 8414 §3.3 check)."""
    policy = StubPolicy(grant_types=CC, clients=(PresetClient("ci-runner", SECRET),),
                        metadata_issuer="https://somewhere-else.example")  # fmt: skip
    with stub(key, policy) as http:
        assert http.get("/.well-known/oauth-authorization-server").json()["issuer"] == "https://somewhere-else.example"
        answer = http.post("/token", data={"grant_type": "client_credentials", "resource": RESOURCE},
                           headers={"authorization": basic("ci-runner", SECRET)})  # fmt: skip
        assert claims(answer.json()["access_token"], key, str(http.base_url).rstrip("/"))["client_id"] == "ci-runner"


def _authorize(http: httpx.Client, client_id: str, redirect: str) -> httpx.Response:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect, "state": "st-9",
              "code_challenge": "A" * 43, "code_challenge_method": "S256", "resource": RESOURCE}  # fmt: skip
    return http.get("/authorize", params=params)


def test_a_denied_consent_redirects_with_access_denied(key: SigningKey) -> None:
    """Spec-mandated (RFC 6749 §4.1.2.1, RFC 9207): consent: deny sends the user agent back with
    error=access_denied, the state and the issuer, and no code."""
    preset = PresetClient("desktop", redirect_uris=("http://127.0.0.1:4000/callback",))
    with stub(key, StubPolicy(consent="deny", clients=(preset,))) as http:
        answer = _authorize(http, "desktop", "http://127.0.0.1:4000/callback")
        assert answer.status_code == 302
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        assert query["error"] == ["access_denied"] and query["state"] == ["st-9"] and "code" not in query
        assert query["iss"] == [str(http.base_url).rstrip("/")]


def test_a_loopback_redirect_matches_any_port_and_nothing_else_does(key: SigningKey) -> None:
    """Spec-mandated (RFC 8252 §7.3): a registered http loopback redirect URI allows any port; another host, path
    or scheme, or a non-loopback URI with another port, is answered with an error and not redirected."""
    presets = (PresetClient("desktop", redirect_uris=("http://127.0.0.1/callback", "https://app.example/cb")),)
    with stub(key, StubPolicy(clients=presets)) as http:
        answer = _authorize(http, "desktop", "http://127.0.0.1:51515/callback")
        assert answer.status_code == 302 and answer.headers["location"].startswith("http://127.0.0.1:51515/callback?")
        for wrong in ("http://127.0.0.1:51515/other", "http://localhost:51515/callback",
                      "https://app.example:8443/cb", "http://127.0.0.1:51515/callback#x"):  # fmt: skip
            refused = _authorize(http, "desktop", wrong)
            assert refused.status_code == 400, wrong


def test_the_stub_section_reads_the_policy_and_refuses_an_inline_client_secret(
    tmp_path: Path, key: SigningKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: the policy keys are read with the stub section; a client secret is a ${ENV} reference."""
    key.save(tmp_path / "key.pem")
    monkeypatch.setenv("RUNNER_SECRET", SECRET)
    section = {"key_file": str(tmp_path / "key.pem"), "grant_types": list(CC), "registration": False,
               "public_registration": True, "refused_grants": ["client_credentials"], "consent": "deny",
               "metadata_issuer": "https://elsewhere.example",
               "clients": [{"client_id": "ci-runner", "client_secret": "${RUNNER_SECRET}"},
                           {"client_id": "desktop", "redirect_uris": ["http://127.0.0.1/callback"]}]}  # fmt: skip
    read = parse_stub(section, "cfg.yaml")
    assert read is not None
    policy = read.policy
    assert policy.grant_types == CC and not policy.registration and policy.consent == "deny"
    assert policy.public_registration and policy.refused_grants == ("client_credentials",)
    assert policy.metadata_issuer == "https://elsewhere.example"
    assert policy.clients == (
        PresetClient("ci-runner", SECRET),
        PresetClient("desktop", None, ("http://127.0.0.1/callback",)),
    )
    section["clients"] = [{"client_id": "ci-runner", "client_secret": SECRET}]
    with pytest.raises(ConfigError, match="inline secrets are refused"):
        parse_stub(section, "cfg.yaml")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"grant_types": ["implicit"]}, "grant_types: expected a non-empty list"),
        ({"registration": "yes"}, "registration: expected true or false"),
        ({"public_registration": "yes"}, "public_registration: expected true or false"),
        ({"refused_grants": ["client_credentials"]}, "refused_grants: expected a list of grants from grant_types"),
        ({"refused_grants": "authorization_code"}, "refused_grants: expected a list of grants from grant_types"),
        ({"consent": "maybe"}, "consent: expected one of grant, deny"),
        ({"metadata_issuer": "ftp://x"}, "metadata_issuer: expected an http(s) URL"),
        ({"clients": [{"client_id": ""}]}, "clients[0].client_id: required"),
        ({"clients": [{"client_id": "a", "colour": 1}]}, "unknown key(s) colour"),
    ],
)
def test_a_policy_mistake_is_one_clear_error(
    tmp_path: Path, key: SigningKey, extra: dict[str, Any], message: str
) -> None:
    """Tool-defined: checked when the config is read, before any request."""
    key.save(tmp_path / "key.pem")
    with pytest.raises(ConfigError) as raised:
        parse_stub({"key_file": str(tmp_path / "key.pem"), **extra}, "cfg.yaml")
    assert message in str(raised.value)
