"""The stand-in authorization server: its key, the tokens it mints, its config section and its HTTP side.

Tokens are checked with PyJWT (a test dependency, through the official SDK), an implementation
the suite's own signing code shares nothing with: the control token must verify, and each variant
must fail exactly on the property it changes.
"""

from __future__ import annotations

import json
import os
import stat
import urllib.request
from pathlib import Path
from typing import Any

import jwt
import pytest

from mcp_assay.suite.config import read_config_file
from mcp_assay.suite.stub.config import parse_stub
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.lifetime import StubSession
from mcp_assay.suite.stub.server import FETCHES_PATH, FOREIGN_JWKS_PATH, StubServer
from mcp_assay.suite.stub.tokens import control_token, variants
from mcp_assay.vocabulary.errors import ConfigError
from tests.peers.process import free_port

ISSUER = "http://127.0.0.1:9411"
AUDIENCE = "http://127.0.0.1:8000/mcp"


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


@pytest.fixture(scope="module")
def foreign() -> SigningKey:
    return SigningKey.generate()


def verify(token: str, key: SigningKey) -> dict[str, Any]:
    public = jwt.PyJWK(key.jwk()).key
    return dict(jwt.decode(token, public, algorithms=["RS256"], audience=AUDIENCE, issuer=ISSUER))


def test_the_control_token_verifies_with_an_independent_implementation(key: SigningKey) -> None:
    """Tool-defined: right key, issuer, audience and lifetime; the scopes go in the scope claim."""
    token = control_token(key, ISSUER, AUDIENCE, ["notes:read", "notes:write"])
    claims = verify(token, key)
    assert claims["scope"] == "notes:read notes:write" and claims["exp"] > claims["iat"]
    assert jwt.get_unverified_header(token) == {"alg": "RS256", "typ": "at+jwt", "kid": key.kid}


def test_every_variant_fails_on_the_property_it_changes(key: SigningKey, foreign: SigningKey) -> None:
    """Tool-defined: one property changed per token, and it is the one the requirement is about."""
    made = {v.name: v for v in variants(key, foreign, ISSUER, AUDIENCE, [], f"{ISSUER}{FOREIGN_JWKS_PATH}")}
    expected = {
        "expired": jwt.ExpiredSignatureError, "not-yet-valid": jwt.ImmatureSignatureError,
        "no-expiry": jwt.MissingRequiredClaimError, "no-issuer": jwt.MissingRequiredClaimError,
        "foreign-audience": jwt.InvalidAudienceError, "no-audience": jwt.MissingRequiredClaimError,
        "look-alike-audience": jwt.InvalidAudienceError, "audience-list": jwt.InvalidAudienceError,
        "foreign-issuer": jwt.InvalidIssuerError, "foreign-key": jwt.InvalidSignatureError,
        "unknown-kid": jwt.InvalidSignatureError, "jku": jwt.InvalidSignatureError,
        "embedded-jwk": jwt.InvalidSignatureError, "alg-none": jwt.InvalidAlgorithmError,
        "alg-None": jwt.InvalidAlgorithmError, "alg-NONE": jwt.InvalidAlgorithmError,
        "hs256-confusion": jwt.InvalidAlgorithmError,
    }  # fmt: skip
    assert set(made) == set(expected)
    for name, error in expected.items():
        with pytest.raises(error):
            jwt.decode(made[name].token, jwt.PyJWK(key.jwk()).key, algorithms=["RS256"], audience=AUDIENCE,
                       issuer=ISSUER, options={"require": ["aud", "exp", "iss"]})  # fmt: skip
    assert jwt.get_unverified_header(made["jku"].token)["jku"] == f"{ISSUER}{FOREIGN_JWKS_PATH}"
    assert jwt.get_unverified_header(made["embedded-jwk"].token)["jwk"] == foreign.jwk()
    assert jwt.get_unverified_header(made["foreign-key"].token)["kid"] == key.kid
    assert {v.requirement for v in made.values()} == {"AUTH-16", "AUTH-17", "AUTH-18", "AUTH-19"}


def test_a_key_file_round_trips_with_owner_only_permissions(tmp_path: Path, key: SigningKey) -> None:
    """Tool-defined: the kid is the key's thumbprint, so it survives a reload."""
    path = tmp_path / "stub-key.pem"
    key.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert SigningKey.load(path).kid == key.kid and SigningKey.load(path).jwk() == key.jwk()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"listen": "127.0.0.1:9411"}, "key_file: required"),
        ({"key_file": "KEY", "listen": "nowhere"}, "expected HOST:PORT"),
        ({"key_file": "KEY", "issuer": "ftp://x"}, "issuer: expected an http:// or https:// URL"),
        ({"key_file": "KEY", "scopes": "notes:read"}, "scopes: expected a list"),
        ({"key_file": "KEY", "tokens": 3}, "unknown key(s) tokens"),
        ({"key_file": "MISSING"}, "cannot read it"),
        ({"key_file": "NOT_A_KEY"}, "not an unencrypted PEM private key"),
        ({"key_file": "KEY", "tool_scopes": {"add": []}}, "tool_scopes.add: expected a non-empty list"),
        ({"key_file": "KEY", "implies": ["calc:admin"]}, "implies: expected a mapping"),
    ],
)
def test_a_stub_section_with_a_mistake_is_one_clear_error(
    tmp_path: Path, key: SigningKey, section: dict[str, Any], message: str
) -> None:
    """Tool-defined: checked when the config is read, before any request."""
    key.save(tmp_path / "key.pem")
    (tmp_path / "not-a-key.pem").write_text("hello", encoding="utf-8")
    paths = {"KEY": str(tmp_path / "key.pem"), "MISSING": str(tmp_path / "nope.pem"),
             "NOT_A_KEY": str(tmp_path / "not-a-key.pem")}  # fmt: skip
    section = {name: paths.get(value, value) if isinstance(value, str) else value for name, value in section.items()}
    with pytest.raises(ConfigError, match=None) as raised:
        parse_stub(section, "cfg.yaml")
    assert message in str(raised.value)


def test_the_config_file_reads_the_stub_section(tmp_path: Path, key: SigningKey) -> None:
    """Tool-defined: issuer defaults to the listen address."""
    key.save(tmp_path / "key.pem")
    config = tmp_path / "mcp-assay.yaml"
    config.write_text(f"stub:\n  key_file: {tmp_path / 'key.pem'}\n  listen: 127.0.0.1:9500\n", encoding="utf-8")
    config.write_text(
        f"stub:\n  key_file: {tmp_path / 'key.pem'}\n  listen: 127.0.0.1:9500\n  scopes: [a]\n"
        "  tool_scopes: {add: [b, a]}\n  implies: {admin: [a, b]}\n",
        encoding="utf-8",
    )
    stub = read_config_file(config)["stub"]
    assert stub.issuer == "http://127.0.0.1:9500" and stub.jwks_uri == "http://127.0.0.1:9500/jwks.json"
    assert stub.all_scopes == ("a", "b") and stub.implies == {"admin": ("a", "b")}
    assert stub.key.kid == key.kid


def test_a_relative_key_file_is_read_next_to_the_config(
    tmp_path: Path, key: SigningKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: a run from another folder finds the same key."""
    (tmp_path / "keys").mkdir()
    key.save(tmp_path / "keys" / "stub.pem")
    config = tmp_path / "mcp-assay.yaml"
    config.write_text("stub:\n  key_file: keys/stub.pem\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert read_config_file(config)["stub"].key.kid == key.kid


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 - loopback only
        return json.loads(answer.read())


def test_the_stub_serves_metadata_and_keys_and_notes_every_fetch(key: SigningKey, foreign: SigningKey) -> None:
    """Tool-defined: RFC 8414 metadata, the trusted and the untrusted key set, and the fetch notes."""
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    server = StubServer("127.0.0.1", port, issuer, key, foreign)
    try:
        assert _get(f"{issuer}/.well-known/oauth-authorization-server")["jwks_uri"] == f"{issuer}/jwks.json"
        assert _get(f"{issuer}/jwks.json") == {"keys": [key.jwk()]}
        assert _get(f"{issuer}{FOREIGN_JWKS_PATH}") == {"keys": [foreign.jwk()]}
        paths = [note["path"] for note in _get(f"{issuer}{FETCHES_PATH}")]
        assert paths == ["/.well-known/oauth-authorization-server", "/jwks.json", FOREIGN_JWKS_PATH]
    finally:
        server.close()


def test_the_sink_notes_where_each_part_of_an_upstream_request_was(key: SigningKey, foreign: SigningKey) -> None:
    """Tool-defined: the query, the headers and the body of what reached /sink/, for AUTH-27."""
    port = free_port()
    server = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", key, foreign)
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/sink/items?q=1", data=b"payload", method="POST",
                                         headers={"X-Forwarded": "yes"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 - loopback only
            assert json.loads(answer.read()) == {"ok": True}
        (note,) = server.notes()
        assert note["path"] == "/sink/items" and note["method"] == "POST"
        assert note["carried"]["query"] == "q=1" and note["carried"]["body"] == "payload"
        assert "X-Forwarded: yes" in note["carried"]["headers"]
    finally:
        server.close()


def test_a_run_uses_a_stub_already_serving_the_key_and_refuses_a_stranger(tmp_path: Path, key: SigningKey) -> None:
    """Tool-defined: `mcp-assay stub serve` on the port is reused; anything else there is one clear error."""
    port = free_port()
    key.save(tmp_path / "key.pem")
    config = parse_stub({"key_file": str(tmp_path / "key.pem"), "listen": f"127.0.0.1:{port}"}, "cfg.yaml")
    assert config is not None
    running = StubServer("127.0.0.1", port, config.issuer, key, SigningKey.generate())
    try:
        session = StubSession.open(config)
        _get(f"{config.issuer}{FOREIGN_JWKS_PATH}")
        assert [note["path"] for note in session.notes()][-1] == FOREIGN_JWKS_PATH
        session.close()
    finally:
        running.close()
    other = StubServer("127.0.0.1", port, config.issuer, SigningKey.generate(), SigningKey.generate())
    try:
        with pytest.raises(ConfigError, match="is not a stub serving the key"):
            StubSession.open(config)
    finally:
        other.close()
