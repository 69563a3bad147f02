"""Reading a recording whose records hold wrong-typed or out-of-range fields: notes, never a crash.

Every field of every record type is mutated in turn into values a careless editor, a truncated
write or a hostile file could leave behind. Reading must never raise; a record it cannot trust is
left out with a note naming the line and the field, and what is read has the types the wire model
promises. ``mcp-assay validate`` on such files always ends in a report with a verdict.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.recording.records import RecordingWriter, read_recording
from mcp_assay.recording.redaction import Redactor
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import HttpExchange, Observation, Probe, ProcessExit, StdioLine
from tests.factories import http, modern_call, request_body, result_body, stdio

TOOLS = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
HOSTILE: tuple[Any, ...] = (
    "now",
    None,
    True,
    math.inf,
    -math.inf,
    math.nan,
    -1,
    10**400,
    1e300,
    [],
    {},
    [["a"]],
    "",
    "\ud800",
    "%%%not-base64%%%",
)
"""Values a field may be mutated into: wrong types, non-finite and huge numbers, lone surrogates."""


def _records(path: Path) -> list[dict[str, Any]]:
    """Every record type the format has: JSON and streamed HTTP, stdio lines, an exit, an observation."""
    writer = RecordingWriter(path, Redactor(), source="test")
    writer.exchange(modern_call("tools/list", {}, TOOLS, ident=1))
    writer.exchange(http(request_body("tools/call", 2, {"name": "p"}), events=[result_body({"content": []}, 2)]))
    writer.exchange(stdio(Side.CLIENT, request_body("tools/list", 3)))
    writer.exchange(stdio(Side.SERVER, result_body(TOOLS, 3)))
    writer.exchange(ProcessExit(id="x1", connection="conn-1", time=1_700_000_001.0, code=0, signals=("SIGTERM",)))
    writer.exchange(Observation(id="o1", time=1_700_000_002.0, kind="note", data={"detail": "hello"}))
    writer.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[1]["body_b64"] = "e30="  # one base64 body too
    return records


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8", errors="surrogatepass")
    return path


def _mutations(records: list[dict[str, Any]]) -> Iterator[tuple[int, str, Any]]:
    for index, record in enumerate(records):
        if record["type"] == "recording":
            continue
        for key in [*record, "body_b64", "b64", "retry", "incomplete", "probe"]:
            if key == "type":
                continue
            for value in HOSTILE:
                yield index, key, value


def _assert_typed(recording_log: Any) -> None:
    """What the reader built has the types the wire model promises (finite times above all)."""
    for item in recording_log:
        assert isinstance(item.id, str)
        assert isinstance(item.time, float) and math.isfinite(item.time)
        if isinstance(item, HttpExchange):
            request = item.request
            assert isinstance(request.method, str) and isinstance(request.url, str)
            assert isinstance(request.body, bytes)
            assert all(isinstance(name, str) and isinstance(value, str) for name, value in request.headers)
            if item.response is not None:
                assert isinstance(item.response.status, int) and not isinstance(item.response.status, bool)
                assert math.isfinite(item.response.time)
                for event in item.response.events:
                    assert math.isfinite(event.time)
                    assert event.retry is None or (isinstance(event.retry, int) and event.retry >= 0)
            assert item.ending is None or math.isfinite(item.ending.time)
            assert item.probe is None or isinstance(item.probe, Probe)
        elif isinstance(item, StdioLine):
            assert isinstance(item.raw, bytes) and isinstance(item.connection, str)
        elif isinstance(item, ProcessExit):
            assert item.code is None or (isinstance(item.code, int) and not isinstance(item.code, bool))
            assert item.stdin_closed_at is None or math.isfinite(item.stdin_closed_at)
            assert all(isinstance(name, str) for name in item.signals)
        elif isinstance(item, Observation):
            assert isinstance(item.kind, str) and isinstance(item.data, dict)


def test_every_mutated_field_is_read_or_noted_and_never_raises(tmp_path: Path) -> None:
    """Tool-defined: a wrong-typed field anywhere makes its record a note; reading never crashes."""
    records = _records(tmp_path / "clean.jsonl")
    clean = read_recording(_write(tmp_path / "clean.jsonl", records))
    assert clean.problems == []
    path = tmp_path / "mutated.jsonl"
    for index, key, value in _mutations(records):
        mutated = [dict(record) for record in records]
        mutated[index][key] = value
        recording = read_recording(_write(path, mutated))
        _assert_typed(recording.log)
        if len(recording.log) < len(clean.log):  # something was left out: a note says what and why
            assert any(f"line {index + 1}" in problem and repr(key) in problem for problem in recording.problems), (
                index,
                key,
                value,
                recording.problems,
            )


def test_a_record_type_of_another_json_type_is_noted_not_raised(tmp_path: Path) -> None:
    """Tool-defined: ``type`` itself holding a list, an object or a number is an unknown record type, noted
    with its line (found by tests/fuzz/test_mutated_recordings.py: a list there once raised TypeError)."""
    records = _records(tmp_path / "clean.jsonl")
    index = next(index for index, record in enumerate(records) if record["type"] == "response")
    for value in HOSTILE:
        mutated = [dict(record) for record in records]
        mutated[index]["type"] = value
        recording = read_recording(_write(tmp_path / "mutated.jsonl", mutated))
        _assert_typed(recording.log)
        assert any(f"line {index + 1}" in problem for problem in recording.problems), (value, recording.problems)


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        ("http", "t", "now"),
        ("response", "t", "now"),
        ("response", "status", math.inf),
        ("response", "status", "ok"),
        ("exit", "signals", None),
        ("body", "body_b64", "%%%"),
        ("event", "retry", "soon"),
        ("line", "from", 7),
    ],
)
def test_validate_of_a_wrong_typed_field_ends_in_a_report_with_a_note(
    kind: str, key: str, value: Any, tmp_path: Path, spec_path: Path
) -> None:
    """Tool-defined: the issue's cases end in a report (exit 0 or 1 by the verdict), never a traceback."""
    records = _records(tmp_path / "clean.jsonl")
    index = next(number for number, record in enumerate(records) if record["type"] == kind)
    records[index][key] = value
    path = _write(tmp_path / "bad.jsonl", records)
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli, ["validate", str(path), "--spec-dir", str(spec_path), "--report", f"json:{report}", "--fail-on", "never"]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["verdict"]
    assert any(f"line {index + 1}" in note and repr(key) in note for note in data["notes"]), data["notes"]


def test_every_hostile_value_survives_judging_and_every_report_format(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: values the reader accepts or leaves out never crash the checks or the writers."""
    records = _records(tmp_path / "clean.jsonl")
    formats = ("json", "markdown", "html", "junit", "tap", "terminal")
    keys = sorted({key for record in records[1:] for key in record if key != "type"})
    for number, value in enumerate(HOSTILE):
        mutated = [dict(record) for record in records]
        for position, record in enumerate(mutated[1:]):  # a different field of every record each round
            fields = [key for key in keys if key in record]
            record[fields[(number + position) % len(fields)]] = value
        path = _write(tmp_path / f"m{number}.jsonl", mutated)
        targets = [arg for fmt in formats for arg in ("--report", f"{fmt}:{tmp_path / f'm{number}.{fmt}'}")]
        result = CliRunner().invoke(cli, ["validate", str(path), "--spec-dir", str(spec_path), *targets])
        assert result.exception is None or isinstance(result.exception, SystemExit), (value, result.output)
        assert result.exit_code in (0, 1, 3), (value, result.output)
        verdict = json.loads((tmp_path / f"m{number}.json").read_text(encoding="utf-8"))["verdict"]
        assert result.exit_code == verdict["exit_code"], (value, verdict)
