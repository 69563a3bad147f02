"""The addon under hostile traffic: floods pass through untouched while what is judged stays bounded.

A peer decides how much it sends; the addon decides how much of it is kept. Every case ends in a
report with a verdict, the bytes the client receives are the bytes the server sent, what was kept
is counted against the addon's limit, and an exchange cut at the limit is judged as one whose
events were lost (a failure resting on it is not verified, never a guess).
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from mitmproxy import http
from mitmproxy.test import taddons, tflow

from mcp_assay.addon.assay import ANSWER_LIMIT, Assay
from mcp_assay.wire.model import EVENTS_LOST, EndReason
from tests.addon.test_assay import URL, Harness, request_headers, result, rpc

MiB = 1024 * 1024
EVENT = 64 * 1024


@pytest.fixture
def addon(tmp_path: Path, spec_path: Path) -> Iterator[Harness]:
    """The addon judging in this process, recording and writing a JSON report."""
    assay = Assay(in_process=True)
    with taddons.context(assay) as context:
        record, report = tmp_path / "recording.jsonl", tmp_path / "report.json"
        context.configure(
            assay, mcp_assay_spec_dir=str(spec_path), mcp_assay_record=str(record), mcp_assay_report=[f"json:{report}"]
        )
        assay.running()
        yield Harness(assay, context, record, report)


def _post(method: str, **headers: str) -> http.HTTPFlow:
    body = rpc(method, 1, name="t") if method == "tools/call" else rpc(method, 1)
    return tflow.tflow(req=http.Request.make("POST", URL, body, request_headers(method, **headers)))


def _event() -> bytes:
    notice = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x" * EVENT}}
    return b"event: message\ndata: " + json.dumps(notice).encode() + b"\n\n"


def _stream(harness: Harness, chunks: int, chunk: bytes) -> tuple[int, int]:
    """A POST answered with ``chunks`` copies of ``chunk`` as an event stream; the peak memory and bytes passed."""
    flow = _post("tools/call", **{"mcp-name": "t"})
    passed = 0
    tracemalloc.start()
    try:
        harness.assay.request(flow)
        flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
        harness.assay.responseheaders(flow)
        tee = flow.response.stream
        assert callable(tee)
        for _ in range(chunks):
            out = tee(chunk)
            assert out == chunk  # passed on unchanged
            passed += len(chunk)
        tee(b"")
        flow.response.content = None
        harness.assay.response(flow)
        harness.assay.done()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, passed


def test_an_event_stream_flood_passes_through_while_what_is_judged_stops_at_the_limit(addon: Harness) -> None:
    """Tool-defined: 64 MiB of events reach the client; the events kept stay within the limit, the exchange
    is judged as one whose events were lost past it, and the report says so."""
    chunk = _event()
    count = 64 * MiB // len(chunk)
    peak, passed = _stream(addon, count, chunk)
    assert passed == count * len(chunk)
    report = json.loads(addon.report_path.read_text())
    assert report["verdict"]["code"]
    (exchange,) = addon.exchanges()
    assert exchange.response is not None
    kept = sum(len(event.data or "") for event in exchange.response.events)
    assert 0 < kept <= ANSWER_LIMIT
    assert exchange.ending is not None and exchange.ending.reason is EndReason.OPEN and exchange.events_lost
    assert any(exchange.id in note and f"{ANSWER_LIMIT} bytes" in note for note in report["notes"]), report["notes"]
    assert peak < 6 * ANSWER_LIMIT, f"peak {peak / MiB:.0f} MiB"


def test_an_event_stream_line_without_end_costs_the_limit(addon: Harness) -> None:
    """Tool-defined: 32 MiB of one data line, never ended, is passed on; the parser stops at the limit."""
    peak, passed = _stream(addon, 32 * MiB // EVENT, b"x" * EVENT)
    assert passed == 32 * MiB
    (exchange,) = addon.exchanges()
    assert exchange.events_lost
    assert peak < 3 * ANSWER_LIMIT, f"peak {peak / MiB:.0f} MiB"


def test_a_json_answer_larger_than_the_limit_is_passed_on_and_judged_as_lost(addon: Harness) -> None:
    """Tool-defined: a body over the limit is not recorded; the exchange cannot fail a check on what was not kept."""
    body = result(1, {"resultType": "complete", "tools": [], "pad": "x" * (ANSWER_LIMIT + 1)})
    flow = _post("tools/list")
    addon.exchange(flow, http.Response.make(200, body, {"content-type": "application/json"}))
    report = addon.finish()
    (exchange,) = addon.exchanges()
    assert exchange.response is not None and exchange.response.body == b""
    assert exchange.ending is not None and EVENTS_LOST in exchange.ending.detail
    assert any(exchange.id in note for note in report["notes"]), report["notes"]
    assert "x" * 1000 not in Path(addon.record).read_text()
