"""Secrets never reach reports, recordings or logs."""

from __future__ import annotations

import logging
import sys

from mcp_assay.logs import RedactingFormatter
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


def test_an_oauth_flows_codes_verifiers_and_tokens_are_scrubbed_where_they_first_appear() -> None:
    """Tool-defined: a captured OAuth flow leaves no credential in a recording, whichever body or
    header carried it first (the code in a redirect, the verifier in a form, an opaque token in JSON)."""
    redactor = Redactor()
    location = redactor.header("Location", "http://127.0.0.1:5/callback?code=auth-code-123&state=st4te-value")
    assert "auth-code-123" not in location and "state=st4te-value" in location
    form = redactor.body("grant_type=authorization_code&code=auth-code-123&code_verifier=verifier-abcdef&resource=x")
    assert "auth-code-123" not in form and "verifier-abcdef" not in form and "grant_type=authorization_code" in form
    answer = redactor.body(
        '{"access_token": "opaque-token-987", "token_type": "Bearer", "client_secret": "s3cret-xyz"}'
    )
    assert "opaque-token-987" not in answer and "s3cret-xyz" not in answer and '"token_type": "Bearer"' in answer
    assert redactor.text("later: opaque-token-987") == f"later: {REDACTED}"


def test_json_rpc_members_named_like_credentials_are_not_learnt() -> None:
    """Tool-defined: only an OAuth object's own top-level members are credentials; a tool result with a
    ``code`` member stays readable."""
    redactor = Redactor()
    body = '{"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"code": "print(1) + 2"}}}'
    assert redactor.body(body) == body
    assert redactor.text("print(1) + 2") == "print(1) + 2"


def test_log_lines_are_scrubbed_whole_message_arguments_and_traceback() -> None:
    """Tool-defined: a secret-named query parameter in any URL, and every known secret, never reach the log."""
    redactor = Redactor(secrets=["known-secret-99"])
    try:
        raise ValueError("failed with known-secret-99")
    except ValueError:
        failure = sys.exc_info()
    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, 'HTTP Request: %s %s "%s"',
        ("POST", "http://h/mcp?api_key=abc123456&page=2", "HTTP/1.1 200 OK"), failure,
    )  # fmt: skip
    line = RedactingFormatter(redactor).format(record)
    assert "HTTP Request: POST http://h/mcp?api_key=[REDACTED]&page=2" in line
    assert "abc123456" not in line and "known-secret-99" not in line and "Traceback" in line
