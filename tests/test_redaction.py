"""Secrets never reach reports, recordings or logs."""

from __future__ import annotations

from mcp_assay.redaction import REDACTED, Redactor, fingerprint

JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"


def test_authorization_headers_keep_their_scheme_and_lose_the_credential() -> None:
    redactor = Redactor()
    assert redactor.header("Authorization", "Bearer s3cr3t-token") == f"Bearer {REDACTED}"
    assert redactor.header("x-api-key", "abcdef123") == REDACTED
    assert redactor.header("Cookie", "session=abc123; theme=dark") == f"session={REDACTED}; theme={REDACTED}"


def test_a_credential_seen_in_a_header_is_scrubbed_from_bodies_too() -> None:
    redactor = Redactor()
    redactor.learn_header("Authorization", "Bearer s3cr3t-token")
    assert redactor.text('{"echo": "s3cr3t-token"}') == f'{{"echo": "{REDACTED}"}}'


def test_query_tokens_keep_their_name() -> None:
    redactor = Redactor()
    url = redactor.url("https://h.example/mcp?token=abc123456&x=1")
    assert "abc123456" not in url
    assert "token=" in url and "x=1" in url


def test_jwts_and_configured_secrets_are_scrubbed_anywhere() -> None:
    redactor = Redactor(secrets=["hunter2hunter2"])
    text = redactor.text(f"token {JWT} and hunter2hunter2")
    assert JWT not in text and "hunter2hunter2" not in text


def test_fingerprints_identify_without_revealing() -> None:
    assert fingerprint("abc").startswith("sha256:") and "abc" not in fingerprint("abc")[7:]
