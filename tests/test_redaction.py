"""Secrets never reach reports, recordings or logs."""

from __future__ import annotations

import logging
import sys

from mcp_assay.recording.logs import RedactingFormatter
from mcp_assay.recording.redaction import REDACTED, Redactor, command_secrets, fingerprint

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


def test_a_urls_password_becomes_a_marker_that_keeps_it_a_url() -> None:
    """Tool-defined (issue 28): `alice:[REDACTED]@` parsed as an IPv6 literal; the redacted URL still parses, its host
    and port intact, and the password is learnt so it is scrubbed wherever else it appears."""
    from urllib.parse import urlsplit

    redactor = Redactor()
    redactor.learn_url("http://alice:hunter2pw@127.0.0.1:8/mcp")
    shown = redactor.url("http://alice:hunter2pw@127.0.0.1:8/mcp?token=abcdefgh")
    assert shown == "http://alice:REDACTED@127.0.0.1:8/mcp?token=[REDACTED]"
    parts = urlsplit(shown)
    assert (parts.hostname, parts.port, parts.username) == ("127.0.0.1", 8, "alice")
    assert redactor.text("echo hunter2pw") == f"echo {REDACTED}"
    assert redactor.url(shown) == shown  # redacting twice changes nothing
    assert redactor.url("https://ghp-token-123@example.com/x") == "https://REDACTED@example.com/x"


def test_a_password_in_a_url_written_in_text_is_scrubbed_by_its_shape() -> None:
    """Tool-defined: a traceback or a mode string quoting an upstream URL the redactor never saw."""
    redactor = Redactor()
    text = redactor.prose(
        "ValueError: Invalid server specification: http://bob:s3cr3t-pw@h:1 and reverse:http://c:d1e2f3g4@x"
    )
    assert "s3cr3t-pw" not in text and "d1e2f3g4" not in text and "http://bob:REDACTED@h:1" in text


def test_every_spelling_of_a_secret_is_scrubbed() -> None:
    """Tool-defined (issue 28): a secret with `"` and `\\` appears in a JSON body only JSON-escaped, in a JSON string
    quoted inside JSON escaped twice, in a URL percent-encoded, in HTML entity-escaped: each form is scrubbed."""
    import html
    import json
    from urllib.parse import quote, quote_plus

    secret = 'pa"ss\\wörd'
    redactor = Redactor(secrets=[secret])
    once = json.dumps({"a": secret})
    twice = json.dumps({"b": once})
    for text in (once, twice, json.dumps({"a": secret}, ensure_ascii=True), quote(secret), quote_plus(secret),
                 quote(secret).lower(), html.escape(secret)):  # fmt: skip
        scrubbed = redactor.text(f"<{text}>")
        assert REDACTED in scrubbed and "ss" not in scrubbed.replace("[REDACTED]", ""), (text, scrubbed)


def test_bytes_that_are_not_text_are_scrubbed_before_they_are_base64_encoded() -> None:
    """Tool-defined: a body that is not UTF-8 is written as base64; the secret inside it is scrubbed as bytes first."""
    import base64

    from mcp_assay.recording.records import redact_record

    redactor = Redactor(secrets=["binary-secret-1"])
    body = b"\xff\xfe binary-secret-1 \x00" + JWT.encode()
    record = {"type": "body", "x": "1", "t": 1.0, "body_b64": base64.b64encode(body).decode()}
    out = base64.b64decode(redact_record(record, redactor)["body_b64"])
    assert out == b"\xff\xfe [REDACTED] \x00[REDACTED]"


def test_a_basic_credential_teaches_its_password_too() -> None:
    """Tool-defined: the header is redacted whole; the password it carries is scrubbed where it reappears raw."""
    import base64

    redactor = Redactor()
    value = "Basic " + base64.b64encode(b"alice:pa55word-9").decode()
    assert redactor.header("Authorization", value) == f"Basic {REDACTED}"
    redactor.learn_header("Authorization", value)
    assert redactor.text("login alice:pa55word-9 then pa55word-9") == f"login {REDACTED} then {REDACTED}"


def test_a_command_lines_secret_options_are_known_by_where_they_sit() -> None:
    """Tool-defined (issue 28): a server command names its credentials by option or variable name; those values are
    scrubbed without a --secret (a shell snippet's own words too); other options, and values too short to be a
    credential, are left alone."""
    command = ["env", "DB_PASSWORD=db-pass-1234", "sh", "-c", "exec server --auth-token snippet-tok-77", "--api-key",
               "key-value-99", "--client_secret=cs-1234567", "--key", "k1", "--port", "8123456", "--code", "abcdefg",
               "--token", "--verbose", "--name", "visible-name"]  # fmt: skip
    found = command_secrets(command)
    assert sorted(found) == ["cs-1234567", "db-pass-1234", "key-value-99", "snippet-tok-77"]
    from mcp_assay.suite.config import SuiteConfig

    redactor = SuiteConfig(command=tuple(command)).redactor()  # `run --command` knows them
    shown = redactor.prose(" ".join(command))
    assert not any(secret in shown for secret in found) and "visible-name" in shown and "8123456" in shown
    assert command_secrets(["server", "--token", "--other"]) == []  # an option with no value carries none
