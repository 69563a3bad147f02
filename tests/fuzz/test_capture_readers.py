"""The capture readers over hostile files: mitmproxy flow files and HAR, every field they read mutated by hypothesis.

Tool-defined (issue 28: "validate of a mitmproxy flow file whose flows lack the `websocket` key: internal error
(KeyError)"): a capture is a file, anyone may have written or edited it. Reading it gives exchanges and notes or one
``RecordingError``; judging and rendering what was read never raises. The flow states start from a real flow's
``get_state()`` (what ``mitmdump -w`` writes), the HAR entries from a real exchange; hypothesis deletes members and
puts values of other types, out of range or huge in their place, at any depth, several at a time. JSONL recordings
are mutated the same way by ``test_mutated_recordings.py``.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mitmproxy import http
from mitmproxy.io import tnetstring
from mitmproxy.test import tflow

from mcp_assay.addon.importers import read_flow_file, read_har
from mcp_assay.report.jsonreport import render_json
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.errors import RecordingError
from mcp_assay.wire.traffic import ExchangeLog

EXAMPLES = int(os.environ.get("MCP_ASSAY_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("MCP_ASSAY_FUZZ_RANDOM") is None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
URL = "http://127.0.0.1:8000/mcp"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'

HOSTILE: st.SearchStrategy[Any] = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**30), st.floats(),
    st.binary(max_size=20), st.text(max_size=20), st.just(b"\xff\xfe"), st.just("\ud800"),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.just([[b"a"]]), st.just([[b"content-type", 5]]), st.just("http://[::1/x"), st.just("http://h:99999/"),
)  # fmt: skip
"""Values a field may hold in a file someone edited: other types, out of range, huge, broken text and URLs."""


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        found += [(*path, key), *_paths(child, (*path, key))]
    return found


def _mutated(document: Any, edits: list[tuple[int, bool, Any]]) -> Any:
    """``document`` with each edit applied: (which path, delete it or not, the new value)."""
    for which, delete, value in edits:
        paths = _paths(document)
        if not paths:
            break
        *parents, last = paths[which % len(paths)]
        node = document
        for key in parents:
            node = node[key]
        if delete and isinstance(node, dict):
            del node[last]
        else:
            node[last] = copy.deepcopy(value)  # a `just` value is one object: shared, it could come to hold itself
    return document


EDITS = st.lists(
    st.tuples(st.integers(0, 10_000), st.booleans(), HOSTILE.filter(lambda value: value != "\ud800")),  # not writable
    min_size=1,
    max_size=4,
)


def _judged(exchanges: list[Any], problems: list[str], spec: SpecSet) -> None:
    """What was read is judged and rendered without an exception."""
    report = Report(results=evaluate(ExchangeLog(exchanges), spec), notes=problems)
    render_json(report).encode("utf-8", "surrogatepass")


def _flow_state() -> dict[Any, Any]:
    request = http.Request.make("POST", URL, REQUEST, HEADERS)
    flow = tflow.tflow(req=request, resp=http.Response.make(200, ANSWER, {"content-type": "application/json"}))
    return dict(flow.get_state())


@FUZZ
@given(edits=EDITS, keep_good=st.booleans())
def test_a_mutated_flow_file_is_read_or_refused_and_judged_without_a_crash(
    edits: list[tuple[int, bool, Any]], keep_good: bool, tmp_path_factory: pytest.TempPathFactory, spec: SpecSet
) -> None:
    path = tmp_path_factory.mktemp("flows") / "capture.flows"
    with path.open("wb") as handle:
        tnetstring.dump(_mutated(_flow_state(), edits), handle)
        if keep_good:
            tnetstring.dump(_flow_state(), handle)  # a good flow after a bad one is still read
    try:
        loaded = read_flow_file(path, "")
    except RecordingError as exc:
        assert str(exc).startswith(str(path))
        return
    if keep_good:
        assert loaded.exchanges, loaded.problems
    _judged(loaded.exchanges, loaded.problems, spec)


def test_flows_without_the_websocket_key_are_left_out_with_a_note(tmp_path: Path, spec: SpecSet) -> None:
    """Issue 28's evidence: a flow state without `websocket` (an older or hand-made file) raised KeyError."""
    path = tmp_path / "capture.flows"
    bare = _flow_state()
    del bare["websocket"]
    with path.open("wb") as handle:
        tnetstring.dump(bare, handle)
        tnetstring.dump(_flow_state(), handle)
    loaded = read_flow_file(path, "")
    assert len(loaded.exchanges) == 1
    assert any("flow 1 could not be read and was left out (KeyError: 'websocket')" in note for note in loaded.problems)
    _judged(loaded.exchanges, loaded.problems, spec)


def _har_entry() -> dict[str, Any]:
    return {
        "startedDateTime": "2026-01-01T00:00:00Z", "time": 12, "timings": {"send": 1, "wait": 5, "receive": 1},
        "request": {"method": "POST", "url": URL, "headers": [{"name": "content-type", "value": "application/json"}],
                    "postData": {"mimeType": "application/json", "text": REQUEST.decode()}},
        "response": {"status": 200, "statusText": "OK",
                     "headers": [{"name": "content-type", "value": "text/event-stream"}],
                     "content": {"mimeType": "text/event-stream", "text": f"data: {ANSWER.decode()}\n\n"}},
    }  # fmt: skip


JSON_HOSTILE = HOSTILE.filter(lambda value: not isinstance(value, bytes) and "b'" not in repr(value))


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), st.booleans(), JSON_HOSTILE), min_size=1, max_size=4))
def test_a_mutated_har_file_is_read_or_refused_and_judged_without_a_crash(
    edits: list[tuple[int, bool, Any]], tmp_path_factory: pytest.TempPathFactory, spec: SpecSet
) -> None:
    path = tmp_path_factory.mktemp("har") / "capture.har"
    document = _mutated({"log": {"entries": [_har_entry(), _har_entry()]}}, edits)
    path.write_bytes(json.dumps(document).encode("utf-8", "surrogatepass"))
    try:
        loaded = read_har(path, "")
    except RecordingError as exc:
        assert str(exc).startswith(str(path))
        return
    _judged(loaded.exchanges, loaded.problems, spec)
