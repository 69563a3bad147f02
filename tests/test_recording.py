"""Recordings: written as traffic happens, redacted, and read back into the same exchanges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_assay.recording.records import RecordingWriter, open_new, read_recording
from mcp_assay.recording.redaction import Redactor
from mcp_assay.vocabulary.errors import RecordingError
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import EndReason, HttpExchange
from tests.factories import http, log_of, modern_call, modern_headers, request_body, stdio

TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}


def test_a_recording_round_trips_exchanges(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    exchanges = [
        modern_call("tools/list", {}, TOOLS),
        http(
            request_body("tools/call", 2, {"name": "p"}),
            events=[{"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "content": []}}],
        ),
        stdio(Side.CLIENT, request_body("tools/list", 3)),
    ]
    writer = RecordingWriter(path, Redactor(), source="test")
    for exchange in exchanges:
        writer.exchange(exchange)
    writer.close()
    recording = read_recording(path)
    assert recording.header["format"] == "mcp-assay.recording/1"
    assert not recording.problems
    back = list(recording.log)
    assert [type(e).__name__ for e in back] == ["HttpExchange", "HttpExchange", "StdioLine"]
    assert [m.payload for m in recording.log.messages()] == [m.payload for m in log_of(*exchanges).messages()]
    streamed = back[1]
    assert isinstance(streamed, HttpExchange) and streamed.response is not None and streamed.response.is_event_stream


def test_recordings_are_redacted_as_they_are_written(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    body = request_body("tools/call", 1, {"name": "echo", "arguments": {"text": "tok-1234567"}})
    exchange = http(
        body,
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        headers=modern_headers(body, authorization="Bearer tok-1234567"),
    )
    writer = RecordingWriter(path, Redactor(), source="test")
    writer.exchange(exchange)
    writer.close()
    text = path.read_text()
    assert "tok-1234567" not in text
    assert "Bearer [REDACTED]" in text


def test_open_streams_and_odd_lines_are_data_not_errors(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    lines = [
        {"type": "recording", "format": "mcp-assay.recording/1"},
        {"type": "http", "x": "a", "t": 1.0, "method": "POST", "url": "http://h/mcp", "headers": [], "body": "{}"},
        {"type": "response", "x": "a", "t": 1.1, "status": 200, "headers": [["content-type", "text/event-stream"]]},
        {"type": "event", "x": "a", "t": 1.2, "data": '{"jsonrpc":"2.0","method":"notifications/x"}'},
        {"type": "event", "x": "zzz", "t": 1.3, "data": "{}"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json at all\n")
    recording = read_recording(path)
    (exchange,) = list(recording.log)
    assert isinstance(exchange, HttpExchange)
    assert exchange.ending is not None and exchange.ending.reason is EndReason.OPEN
    assert any("not JSON" in problem for problem in recording.problems)
    assert any("unknown exchange" in problem for problem in recording.problems)


def test_a_file_that_is_not_a_recording_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("hello\n")
    with pytest.raises(RecordingError, match="not an mcp-assay recording"):
        read_recording(path)


def test_a_recording_never_overwrites_a_file_it_goes_to_a_numbered_sibling(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Tool-defined (issue 18): a recording is evidence; a second session asked to write the same path writes
    ``-2``, then ``-3`` ..., says so, and names the real path."""
    path = tmp_path / "session.jsonl"
    path.write_text("the first session\n")
    (tmp_path / "session-2.jsonl").write_text("the second session\n")
    writer = RecordingWriter(path, Redactor(), source="test")
    writer.close()
    assert writer.requested == path and writer.path == tmp_path / "session-3.jsonl"
    assert path.read_text() == "the first session\n"
    assert read_recording(writer.path).header["source"] == "test"
    assert f"{path} exists already; this recording goes to {writer.path}" in caplog.text


def test_sessions_started_at_once_never_share_a_file(tmp_path: Path) -> None:
    """Tool-defined: each name is created exclusively, so concurrent writers each get their own file."""
    import threading

    paths: list[Path] = []
    lock = threading.Lock()

    def start() -> None:
        path, handle = open_new(tmp_path / "rec.jsonl")
        handle.close()
        with lock:
            paths.append(path)

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(path.name for path in paths) == sorted(
        ["rec.jsonl", *(f"rec-{number}.jsonl" for number in range(2, 9))]
    )
