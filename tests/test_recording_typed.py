"""The fast path of reading records (recording/typed.py) reads exactly what the readers read.

Every record the typed structs decode must become the exchange the readers' path builds from the
same line, and every record they decline must still be read, or noted, by that path: so each test
here reads a file twice, once as ``validate`` does and once with the fast path declining every
line, and holds the two readings equal, problems included.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.recording import records
from mcp_assay.recording.typed import EndName, TypedRecord, decode_record
from mcp_assay.wire.model import EndReason, Exchange
from tests.test_recording_fields import _mutations, _records, _write

RECORDINGS = sorted((Path(__file__).parent / "data" / "recordings").glob("*.jsonl"))


def _read(path: Path) -> tuple[list[Exchange], list[str]]:
    problems: list[str] = []
    try:
        exchanges = list(records.stream_recording(path, problems))
    except records.RecordingError as exc:
        return [], [f"error: {exc}"]
    return exchanges, problems


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The file read as ``validate`` reads it, and read with every line left to the readers."""
    fast = _read(path)
    with monkeypatch.context() as patch:
        patch.setattr(records, "decode_record", lambda line: None)
        slow = _read(path)
    return fast, slow


def _same(fast: Any, slow: Any) -> bool:
    """Equal exchanges, messages and problems (compared as written out: a probe naming a case this build
    does not register gets a new :class:`~mcp_assay.cases.Case` at each reading, equal only in what it says)."""
    (fast_items, fast_problems), (slow_items, slow_problems) = fast, slow
    return (
        repr(fast_items) == repr(slow_items)
        and [item.messages for item in fast_items] == [item.messages for item in slow_items]
        and fast_problems == slow_problems
    )


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda path: path.name)
def test_the_reference_recordings_read_the_same_either_way(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: the recordings the reports are judged from give the same exchanges on both paths."""
    fast, slow = _both(path, monkeypatch)
    assert fast[0], path
    assert _same(fast, slow)


def test_the_fast_path_takes_every_ordinary_record(tmp_path: Path) -> None:
    """Tool-defined: the fast path is really taken (else the comparisons here prove nothing): every record
    of every type but the header, the closing record and a base64 body decodes."""
    written = _records(tmp_path / "clean.jsonl")
    declined = [
        (record["type"], "body_b64" in record) for record in written if decode_record(json.dumps(record)) is None
    ]
    assert declined == [("recording", False), ("http", True), ("close", False)]
    assert {record["type"] for record in written} >= {"http", "response", "body", "event", "end", "line", "exit"}


def test_every_mutated_field_reads_the_same_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: each field of each record type set to each hostile value (a wrong type, a number out
    of range, a lone surrogate, null ...) is read, or noted, identically by the fast path and the readers."""
    written = _records(tmp_path / "clean.jsonl")
    path = tmp_path / "mutated.jsonl"
    compared = 0
    for index, key, value in _mutations(written):
        mutated = [dict(record) for record in written]
        mutated[index][key] = value
        fast, slow = _both(_write(path, mutated), monkeypatch)
        assert _same(fast, slow), (index, key, value, fast[1], slow[1])
        compared += 1
    assert compared > 1000


def test_every_absent_field_reads_the_same_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a record without one of its fields takes the same default (or the same note) on both paths."""
    written = _records(tmp_path / "clean.jsonl")
    path = tmp_path / "cut.jsonl"
    compared = 0
    for index, record in enumerate(written):
        for key in [key for key in record if key not in ("type", "chain")]:
            cut = [dict(item) for item in written]
            del cut[index][key]
            fast, slow = _both(_write(path, cut), monkeypatch)
            assert _same(fast, slow), (index, key, fast[1], slow[1])
            compared += 1
    assert compared > 40


@pytest.mark.parametrize(
    "change",
    [
        {"x": 7},
        {"x": "\\ud800"},
        {"url": "http://[REDACTED]:1/mcp"},
        {"url": "http://user:[REDACTED]@h:1/mcp"},
        {"url": "http://h:99999/mcp"},
        {"probe": None},
        {"probe": {"name": "p", "family": "f", "invalid": True}},
        {"hop": "front"},
        {"hop": None},
        {"hop": "side"},
        {"headers": [["a", "b"], ["A", "c"]]},
        {"t": 10**30},
        {"t": 253402300800},
    ],
)
def test_edge_records_read_the_same_either_way(
    change: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: the values near the fast path's edges (ids as numbers, an older recording's redacted
    password, hops, repeated headers, times past what a calendar shows) read as the readers read them."""
    written = _records(tmp_path / "clean.jsonl")
    index = next(number for number, record in enumerate(written) if record["type"] == "http")
    written[index].update(change)
    text = "".join(json.dumps(record) + "\n" for record in written).replace("\\\\ud800", "\\ud800")
    path = tmp_path / "edge.jsonl"
    path.write_text(text, encoding="utf-8")
    fast, slow = _both(path, monkeypatch)
    assert _same(fast, slow), (fast[1], slow[1])


def test_the_end_reasons_are_the_model_s() -> None:
    """Tool-defined: the fast path accepts the end reasons :class:`EndReason` has, and only those."""
    assert set(typing.get_args(EndName)) == {reason.value for reason in EndReason}
    assert typing.get_args(TypedRecord)


@pytest.mark.parametrize(
    "edit",
    [
        ('"type": "response"', '"type": "http", "type": "response"'),
        ('"type": "end"', '"type": "end", "type": "end"'),
        ('"reason": "complete"', '"reason": "open", "reason": "complete"'),
        ('"status": 200', '"status": 200, "status": 404'),
    ],
)
def test_repeated_keys_read_the_same_either_way(
    edit: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: a record repeating a key (its type included) reads its last value on both paths, as
    ``json.loads`` does."""
    written = _records(tmp_path / "clean.jsonl")
    text = "".join(json.dumps(record) + "\n" for record in written)
    assert edit[0] in text
    path = tmp_path / "repeated.jsonl"
    path.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    fast, slow = _both(path, monkeypatch)
    assert _same(fast, slow), (fast[1], slow[1])
