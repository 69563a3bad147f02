"""The mitmproxy addon's hooks, driven with mitmproxy's own test helpers (``taddons`` + ``tflow``)."""

from __future__ import annotations

import gzip
import json
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions, http
from mitmproxy.test import taddons, tflow

from mcp_assay.addon.assay import Assay
from mcp_assay.recording.records import read_recording
from mcp_assay.wire.model import EndReason, HttpExchange

URL = "http://127.0.0.1:8000/mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "unit", "version": "1"},
}
SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "unit-server", "version": "1"}}
TOKEN = "s3cr3t-unit-token-4711"


def request_headers(method: str, **extra: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        **extra,
    }


def rpc(method: str, ident: Any = 1, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": META}}).encode()


def result(ident: Any, value: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": value}).encode()


def flow_of(body: bytes, headers: dict[str, str], *, url: str = URL, method: str = "POST") -> http.HTTPFlow:
    return tflow.tflow(req=http.Request.make(method, url, body, headers))


@dataclass
class Harness:
    """One addon inside a mitmproxy test context, with its recording and JSON report."""

    assay: Assay
    context: taddons.context
    record: Path
    report_path: Path

    def exchange(self, flow: http.HTTPFlow, response: http.Response | None, chunks: list[bytes] | None = None) -> None:
        """Run a flow through the hooks in mitmproxy's order; ``chunks`` stream the body."""
        self.assay.request(flow)
        if response is None:
            return
        flow.response = response
        self.assay.responseheaders(flow)
        if chunks is not None:
            stream = flow.response.stream
            assert callable(stream), "an event stream must be streamed, not buffered"
            passed = b"".join(bytes(stream(chunk)) for chunk in [*chunks, b""])  # type: ignore[arg-type]
            assert passed == b"".join(chunks), "the addon changed streamed bytes"
            flow.response.content = None
        self.assay.response(flow)

    def finish(self) -> dict[str, Any]:
        self.assay.done()
        return dict(json.loads(self.report_path.read_text()))

    def exchanges(self) -> list[HttpExchange]:
        return [item for item in read_recording(self.record).log if isinstance(item, HttpExchange)]


@pytest.fixture
def harness(tmp_path: Path, spec_path: Path) -> Iterator[Harness]:
    assay = Assay(in_process=True)
    with taddons.context(assay) as context:
        record = tmp_path / "recording.jsonl"
        report_path = tmp_path / "report.json"
        context.configure(
            assay,
            mcp_assay_spec_dir=str(spec_path),
            mcp_assay_record=str(record),
            mcp_assay_report=[f"json:{report_path}"],
            mcp_assay_secrets=["configured-secret-value"],
        )
        assay.running()
        yield Harness(assay, context, record, report_path)


def outcome(report: dict[str, Any], requirement: str) -> set[str]:
    return {item["outcome"] for item in report["results"] if requirement in item["requirements"]}


def test_a_json_rpc_exchange_is_recorded_and_judged(harness: Harness) -> None:
    """Tool-defined: an MCP POST and its JSON answer become one recorded, judged exchange."""
    listed = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private", "_meta": SERVER_META}
    flow = flow_of(rpc("tools/list", 7), request_headers("tools/list"))
    harness.exchange(flow, http.Response.make(200, result(7, listed), {"content-type": "application/json"}))
    report = harness.finish()
    (exchange,) = harness.exchanges()
    assert exchange.request_message is not None and exchange.request_message.method == "tools/list"
    assert exchange.response is not None and exchange.response.status == 200
    assert [m.describe() for m in exchange.response_messages] == ["result id=7"]
    assert outcome(report, "RES-01") == {"passed"}
    assert report["target"]["kind"] == "proxy"
    assert report["audit"][0]["method"] == "tools/list" and report["audit"][0]["outcome"] == "ok"


def test_traffic_that_is_not_mcp_passes_unjudged_and_unrecorded(harness: Harness) -> None:
    """Tool-defined: in forward mode only MCP traffic is judged; a web page is left alone."""
    page = flow_of(b"", {"accept": "text/html"}, url="http://example.test/index.html", method="GET")
    harness.exchange(page, http.Response.make(200, b"<html></html>", {"content-type": "text/html"}))
    form = flow_of(b'{"name": "x"}', {"content-type": "application/json"}, url="http://example.test/api")
    harness.exchange(form, http.Response.make(200, b'{"ok": true}', {"content-type": "application/json"}))
    harness.finish()
    assert harness.exchanges() == []
    assert page.response is not None and page.response.content == b"<html></html>"


def test_a_plain_json_post_is_judged_once_the_answer_is_json_rpc(harness: Harness) -> None:
    """Tool-defined: a POST without MCP markers counts as MCP when the server answers in JSON-RPC."""
    flow = flow_of(b'{"not": "rpc"}', {"content-type": "application/json"})
    answer = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
    harness.exchange(flow, http.Response.make(400, answer.encode(), {"content-type": "application/json"}))
    harness.finish()
    (exchange,) = harness.exchanges()
    assert exchange.request.body == b'{"not": "rpc"}'
    assert exchange.response is not None and exchange.response.status == 400


def test_event_streams_are_passed_through_chunk_by_chunk_and_parsed_across_chunk_boundaries(harness: Harness) -> None:
    """Tool-defined: SSE is streamed (never buffered); chunk edges split lines and CRLF pairs."""
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 5, "progress": 1, "total": 2},
    }
    final = {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"resultType": "complete", "content": [{"type": "text", "text": "ok"}], "_meta": SERVER_META},
    }
    body = (
        b": keep-alive\r\n\r\n"
        + b"event: message\r\ndata: "
        + json.dumps(progress).encode()
        + b"\r\n\r\n"
        + b"id: 9\nretry: 1500\nevent: message\ndata: "
        + json.dumps(final).encode()
        + b"\r\r"
    )
    cuts = [3, 17, 18, 19, 40, len(body) // 2, len(body) - 1]  # inside ": keep", between \r and \n, mid-JSON
    edges = [0, *sorted({c for c in cuts if 0 < c < len(body)}), len(body)]
    chunks = [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    assert any(chunk.endswith(b"\r") for chunk in chunks)
    flow = flow_of(
        rpc("tools/call", 5, name="work", arguments={}), request_headers("tools/call", **{"mcp-name": "work"})
    )
    harness.exchange(flow, http.Response.make(200, b"", {"content-type": "text/event-stream"}), chunks)
    harness.finish()
    (exchange,) = harness.exchanges()
    assert exchange.response is not None
    events = exchange.response.events
    assert [e.comment for e in events if e.is_comment] == ["keep-alive"]
    data = [json.loads(e.data) for e in events if e.carries_message and e.data]
    assert data == [progress, final]
    last = [e for e in events if e.carries_message][-1]
    assert last.id == "9" and last.retry == 1500
    assert [m.describe() for m in exchange.response_messages] == ["notification notifications/progress", "result id=5"]


def test_a_gzip_event_stream_is_decoded_for_judging_and_passed_on_compressed(harness: Harness) -> None:
    """Tool-defined: content-encoding is undone on the copy the checks see, never on the wire."""
    payload = b'event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete"}}\n\n'
    compressed = gzip.compress(payload)
    flow = flow_of(rpc("ping", 3), request_headers("ping"))
    response = http.Response.make(200, b"", {"content-type": "text/event-stream", "content-encoding": "gzip"})
    harness.exchange(flow, response, [compressed[:10], compressed[10:]])
    harness.finish()
    (exchange,) = harness.exchanges()
    assert exchange.response is not None
    assert [m.describe() for m in exchange.response_messages] == ["result id=3"]


def test_a_malformed_body_is_forwarded_unchanged_and_fails_a_check(harness: Harness) -> None:
    """Spec-mandated (RPC-01): the addon never repairs traffic; the broken message is a finding."""
    broken = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list",'
    flow = flow_of(broken, request_headers("tools/list"))
    answer = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}).encode()
    response = http.Response.make(400, answer, {"content-type": "application/json"})
    harness.exchange(flow, response)
    report = harness.finish()
    assert flow.request.content == broken
    assert flow.response is not None and flow.response.content == answer
    assert "failed" in outcome(report, "RPC-01")
    (exchange,) = harness.exchanges()
    assert exchange.request.body == broken


@pytest.mark.parametrize(("marked", "tagged"), [("invalid-json", True), ("no-such-case", False), (None, False)])
def test_a_request_marked_as_a_probe_case_is_judged_as_that_probe_and_never_held_against_the_client(
    harness: Harness, marked: str | None, tagged: bool
) -> None:
    """Tool-defined (docs/gateways.md § Published intermediaries): ``X-Mcp-Assay-Probe: invalid-json`` tags the request
    with that registered case, as ``run`` tags its own, so RPC-01 does not blame the client, while the answer is judged
    (RPC-12); a name no case has, or no header, tags nothing and the client's broken body is its own."""
    broken = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list",'
    headers = request_headers("tools/list", **({"x-mcp-assay-probe": marked} if marked is not None else {}))
    answer = json.dumps({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad"}}).encode()
    flow = flow_of(broken, headers)
    harness.exchange(flow, http.Response.make(400, answer, {"content-type": "application/json"}))
    report = harness.finish()
    assert flow.request.content == broken and flow.request.headers.get("x-mcp-assay-probe") == marked  # forwarded
    (exchange,) = harness.exchanges()
    assert (exchange.probe.name if exchange.probe is not None else None) == ("invalid-json" if tagged else None)
    assert ("failed" in outcome(report, "RPC-01")) is not tagged
    assert "failed" in outcome(report, "RPC-12")  # -32000, not -32700: the answer is judged either way


def test_a_client_disconnect_is_recorded_as_the_end_of_the_exchange(harness: Harness) -> None:
    """Tool-defined: a client closing the stream (the 2026 cancellation signal) is kept as evidence."""
    flow = flow_of(
        rpc("tools/call", 11, name="slow", arguments={}), request_headers("tools/call", **{"mcp-name": "slow"})
    )
    harness.assay.request(flow)
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    harness.assay.responseheaders(flow)
    flow.error = tflow.terr("Client disconnected.")
    harness.assay.error(flow)
    report = harness.finish()
    (exchange,) = harness.exchanges()
    assert exchange.ending is not None and exchange.ending.reason is EndReason.CLIENT_DISCONNECT
    assert report["audit"][0]["outcome"] == "no-result"


def test_an_exchange_still_open_at_shutdown_is_judged_as_open(harness: Harness) -> None:
    """Tool-defined: a listen stream open when mitmproxy stops is in the report, marked open."""
    listen = rpc("subscriptions/listen", "L1", notifications={"toolsListChanged": True})
    flow = flow_of(listen, request_headers("subscriptions/listen"))
    harness.assay.request(flow)
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    harness.assay.responseheaders(flow)
    stream = flow.response.stream
    assert callable(stream)
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}},
    }
    stream(b"event: message\ndata: " + json.dumps(ack).encode() + b"\n\n")
    harness.finish()
    (exchange,) = harness.exchanges()
    assert exchange.ending is not None and exchange.ending.reason is EndReason.OPEN
    assert [m.method for m in exchange.response_messages] == ["notifications/subscriptions/acknowledged"]


def test_credentials_never_reach_the_recording_the_report_or_the_log(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Tool-defined: bearer tokens, cookies, ?token= values and configured secrets are scrubbed."""
    caplog.set_level(logging.DEBUG)
    headers = request_headers(
        "tools/call", **{"mcp-name": "echo", "authorization": f"Bearer {TOKEN}", "cookie": f"sid={TOKEN}-c"}
    )
    body = rpc("tools/call", 2, name="echo", arguments={"text": f"{TOKEN} and configured-secret-value"})
    flow = flow_of(body, headers, url=f"{URL}?token={TOKEN}-q")
    echoed = {"resultType": "complete", "content": [{"type": "text", "text": TOKEN}], "_meta": SERVER_META}
    harness.exchange(flow, http.Response.make(200, result(2, echoed), {"content-type": "application/json"}))
    report = harness.finish()
    written = harness.record.read_text() + json.dumps(report) + caplog.text
    assert TOKEN not in written
    assert "configured-secret-value" not in written
    assert "[REDACTED]" in harness.record.read_text()
    assert report["audit"][0]["principal"].startswith("token:sha256:")
    assert flow.request.headers["authorization"] == f"Bearer {TOKEN}", "the traffic itself is never altered"


def test_a_defect_inside_the_addon_is_logged_and_the_traffic_still_flows(
    harness: Harness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: an exception in the addon never stops or changes a flow."""
    session = harness.assay.session
    assert session is not None

    def explode(record: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(session, "feed", explode)
    flow = flow_of(rpc("tools/list", 1), request_headers("tools/list"))
    response = http.Response.make(200, result(1, {"resultType": "complete", "tools": []}), {"content-type": "text/x"})
    harness.exchange(flow, response)
    sse = flow_of(rpc("tools/list", 2), request_headers("tools/list"))
    harness.exchange(sse, http.Response.make(200, b"", {"content-type": "text/event-stream"}), [b"data: {}\n\n"])
    assert flow.response is not None and flow.response.content == response.content
    assert "could not observe" in caplog.text


def test_bad_options_are_refused_when_mitmproxy_configures_the_addon(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: option errors surface as mitmproxy OptionsError, before any traffic."""
    assay = Assay()
    with taddons.context(assay) as context:
        context.configure(assay, mcp_assay_spec_dir=str(spec_path))
        with pytest.raises(exceptions.OptionsError, match="unknown format"):
            context.configure(assay, mcp_assay_report=["docx"])
        with pytest.raises(exceptions.OptionsError, match="does not exist"):
            context.configure(assay, mcp_assay_record=str(tmp_path / "missing" / "rec.jsonl"))
        with pytest.raises(exceptions.OptionsError, match="schema"):
            context.configure(assay, mcp_assay_spec_dir=str(tmp_path))
        with pytest.raises(exceptions.OptionsError):
            context.configure(assay, mcp_assay_fail_on="sometimes")
        with pytest.raises(exceptions.OptionsError, match="cannot read it"):
            context.configure(assay, mcp_assay_baseline=str(tmp_path / "absent.yaml"))


def test_the_addon_applies_a_baseline_to_its_report(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: ``--set mcp_assay_baseline=FILE`` marks the failure it names as known."""
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(
        "schema: mcp-assay.baseline/1\nknown: [{requirement: RPC-01, reason: the test server says 1.0}]\n", "utf-8"
    )
    report_path = tmp_path / "report.json"
    assay = Assay(in_process=True)
    with taddons.context(assay) as context:
        context.configure(
            assay, mcp_assay_spec_dir=str(spec_path), mcp_assay_report=[f"json:{report_path}"],
            mcp_assay_baseline=str(baseline),
        )  # fmt: skip
        assay.running()
        harness = Harness(assay, context, tmp_path / "unused.jsonl", report_path)
        flow = flow_of(rpc("tools/list", 1), request_headers("tools/list"))
        answer = b'{"jsonrpc":"1.0","id":1,"result":{"tools":[]}}'
        harness.exchange(flow, http.Response.make(200, answer, {"content-type": "application/json"}))
        report = harness.finish()
    known = [item for item in report["results"] if "RPC-01" in item["requirements"] and item["outcome"] == "failed"]
    assert known and all(item["known"] == "the test server says 1.0" for item in known)
    assert report["baseline"]["path"] == str(baseline)


def test_the_addon_script_loads_in_mitmproxy(spec_path: Path) -> None:
    """Tool-defined: `mitmdump -s "$(mcp-assay addon-path)"` finds the observing Assay addon, after its two
    companions (the injector and the server probe, idle unless their options are set)."""
    from mcp_assay.addon.inject.http import Injector
    from mcp_assay.addon.server_probe import ServerProbe
    from mcp_assay.cli.addon_path import addon_script

    with taddons.context() as context:
        script = context.script(str(addon_script()))
        assert [type(addon) for addon in script.addons] == [Injector, ServerProbe, Assay]
        injector, probe, assay = script.addons
        assert injector is assay.injector and probe is assay.server_probe


class _Records:
    """A session that keeps the records it is fed (the hooks' own work, nothing after it)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def feed(self, record: dict[str, Any]) -> None:
        self.records.append(record)


HOOK_CALLS_A_REQUEST = 60
"""Python calls the hooks make for one JSON request and its answer, mitmproxy's properties included (75 before
the hooks' diet of 7 December, 55 after it: docs/performance.md)."""


def test_the_hooks_make_a_bounded_number_of_calls_for_a_json_request() -> None:
    """Counted, never timed: at saturation every call of the hooks is a share of mitmproxy's throughput."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    answer = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    flows = []
    for _ in range(30):
        flow = tflow.tflow(resp=False)
        flow.request = http.Request.make(
            "POST", "http://127.0.0.1:9999/mcp", body,
            {"content-type": "application/json", "mcp-protocol-version": "2026-07-28", "host": "127.0.0.1:9999"},
        )  # fmt: skip
        flows.append((flow, http.Response.make(200, answer, {"content-type": "application/json"})))
    addon, session = Assay(), _Records()
    addon.session = session  # type: ignore[assignment]  # the hooks ask only its feed
    calls = [0]

    def count(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls[0] += 1

    with taddons.context(addon):
        for number, (flow, response) in enumerate(flows):
            if number == 10:  # the first requests fill what is worked out once per URL
                sys.setprofile(count)
            addon.request(flow)
            flow.response = response
            addon.responseheaders(flow)
            addon.response(flow)
        sys.setprofile(None)
    assert [record["type"] for record in session.records] == ["http", "response", "body", "end"] * 30
    assert 0 < calls[0] / 20 <= HOOK_CALLS_A_REQUEST
