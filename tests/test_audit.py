"""The edge audit: one line per request, keyed so reused request ids stay apart."""

from __future__ import annotations

from mcp_assay.recording.audit import audit_data, audit_key, audit_lines
from mcp_assay.recording.redaction import fingerprint
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import EndReason, HttpExchange
from tests.factories import (
    error_body,
    http,
    legacy_call,
    legacy_session,
    log_of,
    modern_call,
    modern_headers,
    request_body,
    result_body,
    stdio,
)


def _call(token: str, ident: int, result: dict[str, object] | None = None, error: int | None = None) -> HttpExchange:
    body = request_body("tools/call", ident, {"name": "create_draft", "arguments": {}})
    headers = modern_headers(body, authorization=f"Bearer {token}")
    if error is not None:
        return http(body, error_body(error, "bad arguments", ident), headers=headers, status=400)
    return http(body, result_body(result or {"resultType": "complete", "content": []}, ident), headers=headers)


def test_two_principals_reusing_a_request_id_get_distinct_lines() -> None:
    """Tool-defined: id 0 from editor and id 0 from reader are two requests, not one."""
    editor = _call("editor-token-123456", 0, {"resultType": "complete", "content": []})
    reader = _call("reader-token-654321", 0, error=-32602)
    lines = audit_lines(log_of(editor, reader))
    assert [line.request_id for line in lines] == [0, 0]
    assert [line.principal for line in lines] == [
        f"token:{fingerprint('editor-token-123456')}",
        f"token:{fingerprint('reader-token-654321')}",
    ]
    assert [line.outcome for line in lines] == ["ok", "protocol-error"]
    assert len({audit_key(line) for line in lines}) == 2
    assert all("token-" not in audit_key(line) for line in lines), "the key holds a fingerprint, never the token"


def test_outcomes_tell_a_tool_error_from_a_protocol_error_and_a_missing_result() -> None:
    """Tool-defined: ok, tool-error, protocol-error and no-result, with the HTTP status."""
    ok = modern_call("tools/call", {"name": "add", "arguments": {}}, {"content": []}, ident=1)
    tool_error = modern_call("tools/call", {"name": "add", "arguments": {}}, {"content": [], "isError": True}, ident=2)
    body = request_body("tools/call", 3, {"name": "slow", "arguments": {}})
    dropped = http(body, events=[], ending=EndReason.CLIENT_DISCONNECT)
    refused = http(request_body("tools/list", 4), status=406)
    lines = audit_lines(log_of(ok, tool_error, dropped, refused))
    assert [(line.request_id, line.outcome, line.status) for line in lines] == [
        (1, "ok", 200),
        (2, "tool-error", 200),
        (3, "no-result", 200),
        (4, "protocol-error", 406),
    ]
    assert [line.tool for line in lines] == ["add", "add", "slow", None]
    assert lines[0].revision == "2026-07-28"


def test_the_client_name_is_the_principal_when_no_credential_was_sent() -> None:
    """Tool-defined: 2026 clientInfo per request; 2025 clientInfo from the session's initialize."""
    modern = modern_call("tools/list", {}, {"tools": []}, ident=9)
    session = legacy_session("s-1")
    legacy = legacy_call("tools/list", None, {"tools": []}, ident=5, session="s-1")
    lines = audit_lines(log_of(modern, session, legacy))
    by_id = {line.request_id: line for line in lines}
    assert by_id[9].principal == "client:test"
    assert by_id[5].principal == "client:t"
    assert by_id[5].revision == "2025-11-25"
    assert [line.method for line in lines] == ["tools/list", "initialize", "tools/list"]


def test_stdio_requests_are_audited_from_their_answers() -> None:
    """Tool-defined: on stdio the answer is a separate line; unanswered requests are no-result."""
    answered = stdio(Side.CLIENT, request_body("tools/list", 1))
    answer = stdio(Side.SERVER, result_body({"resultType": "complete", "tools": []}, 1))
    pending = stdio(Side.CLIENT, request_body("tools/call", 2, {"name": "slow", "arguments": {}}))
    notification = stdio(Side.CLIENT, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    lines = audit_lines(log_of(answered, answer, pending, notification))
    assert [(line.request_id, line.outcome, line.status) for line in lines] == [(1, "ok", None), (2, "no-result", None)]


def test_the_recorded_form_carries_the_key() -> None:
    """Tool-defined: the observation record of a line names its key next to its fields."""
    (line,) = audit_lines(log_of(modern_call("tools/list", {}, {"tools": []}, ident="a")))
    data = audit_data(line)
    assert data["key"] == audit_key(line) == f'client:test|"a"|{line.exchange}'
    assert data["outcome"] == "ok"


def test_a_recording_keeps_the_principal_the_live_capture_saw() -> None:
    """Tool-defined: re-read from a redacted recording, a line keeps its live token fingerprint."""
    from mcp_assay.wire.model import Observation

    call = _call("[REDACTED]", 4)
    assert audit_lines(log_of(call))[0].principal == "token:redacted"
    live = Observation(
        id="audit:x", time=call.time, kind="audit", data={"exchange": call.id, "principal": "token:sha256:abc"}
    )
    assert audit_lines(log_of(call, live))[0].principal == "token:sha256:abc"
