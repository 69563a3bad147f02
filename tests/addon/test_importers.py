"""Captures made by other tools: mitmproxy flow files and HAR files, read by ``validate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mitmproxy import http, io
from mitmproxy.test import tflow

from mcp_assay.addon.importers import READERS
from mcp_assay.cli import cli
from mcp_assay.recording.inputs import load_inputs
from mcp_assay.vocabulary.errors import RecordingError
from mcp_assay.wire.model import EndReason, HttpExchange

URL = "http://127.0.0.1:8000/mcp"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
}


def _rpc(method: str, ident: Any, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": META}}).encode()


def _result(ident: Any, **fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": {"resultType": "complete", **fields}}).encode()


def _flow(request_body: bytes, method: str, response: http.Response | None, *, url: str = URL) -> http.HTTPFlow:
    flow = tflow.tflow(
        req=http.Request.make("POST", url, request_body, {**HEADERS, "mcp-method": method}), resp=response or False
    )
    if response is not None:
        response.timestamp_start = flow.request.timestamp_start + 0.01
        response.timestamp_end = flow.request.timestamp_start + 0.02
    return flow


def _write_flows(path: Path, flows: list[http.HTTPFlow]) -> None:
    with path.open("wb") as handle:
        writer = io.FlowWriter(handle)
        for flow in flows:
            writer.add(flow)


def test_a_mitmproxy_flow_file_is_read_with_only_its_mcp_flows(tmp_path: Path) -> None:
    """Tool-defined: `mitmdump -w` captures are judged as they are; other traffic is left out."""
    listed = _flow(_rpc("tools/list", 1), "tools/list", http.Response.make(200, _result(1, tools=[]), HEADERS))
    sse_body = b"event: message\r\ndata: " + _result(2, content=[]) + b"\r\n\r\n"
    called = _flow(
        _rpc("tools/call", 2, name="add", arguments={}),
        "tools/call",
        http.Response.make(200, sse_body, {"content-type": "text/event-stream"}),
    )
    page = tflow.tflow(
        req=http.Request.make("GET", "http://example.test/", b"", {}), resp=http.Response.make(200, b"hi", {})
    )
    dropped = _flow(_rpc("tools/call", 3, name="slow", arguments={}), "tools/call", None)
    dropped.error = tflow.terr("Client disconnected.")
    dropped.error.timestamp = dropped.request.timestamp_start + 0.05
    path = tmp_path / "flows"
    _write_flows(path, [listed, called, page, dropped])
    log, problems, kinds = load_inputs([path], READERS)
    assert kinds == ["mitmproxy flows"]
    exchanges = log.http_exchanges()
    assert [exchange.request_message.describe() for exchange in exchanges if exchange.request_message] == [
        "request tools/list id=1",
        "request tools/call id=2",
        "request tools/call id=3",
    ]
    assert [m.describe() for m in exchanges[1].response_messages] == ["result id=2"]
    assert exchanges[2].ending is not None and exchanges[2].ending.reason is EndReason.CLIENT_DISCONNECT
    assert any("not MCP traffic" in problem for problem in problems)


def test_a_streamed_event_stream_without_its_body_is_reported_not_guessed(tmp_path: Path) -> None:
    """Tool-defined: mitmproxy drops streamed bodies unless told to keep them; the reader says so."""
    flow = _flow(_rpc("tools/call", 1, name="x", arguments={}), "tools/call", None)
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    flow.response.content = None
    path = tmp_path / "streamed.flows"
    _write_flows(path, [flow])
    log, problems, _ = load_inputs([path], READERS)
    (exchange,) = log.http_exchanges()
    assert exchange.response is not None and exchange.response.events == ()
    assert any("store_streamed_bodies" in problem for problem in problems)


def _har(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}}


def _entry(body: bytes, status: int, content_type: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "startedDateTime": "2026-11-29T10:00:00.000Z",
        "time": 25,
        "request": {
            "method": "POST",
            "url": URL,
            "headers": [{"name": name, "value": value} for name, value in HEADERS.items()],
            "postData": {"mimeType": "application/json", "text": body.decode()},
        },
        "response": {
            "status": status,
            "statusText": "OK",
            "headers": [{"name": "content-type", "value": content_type}],
            "content": {"mimeType": content_type, "text": text},
        },
        "timings": {"send": 1, "wait": 10, "receive": 14},
        **extra,
    }


def test_a_har_file_is_read_with_event_streams_parsed(tmp_path: Path) -> None:
    """Tool-defined: HAR entries become exchanges; SSE bodies go through the SSE parser."""
    sse = "event: message\ndata: " + _result(2, content=[]).decode() + "\n\n"
    entries = [
        _entry(_rpc("tools/list", 1), 200, "application/json", _result(1, tools=[]).decode()),
        _entry(_rpc("tools/call", 2, name="add", arguments={}), 200, "text/event-stream", sse),
        {
            "startedDateTime": "2026-11-29T10:00:01Z",
            "time": 3,
            "request": {"method": "GET", "url": "http://example.test/logo.png", "headers": []},
            "response": {"status": 200, "headers": [], "content": {"mimeType": "image/png", "text": ""}},
            "timings": {},
        },
        {**_entry(_rpc("tools/call", 3, name="slow", arguments={}), 0, "", ""), "_error": "net::ERR_ABORTED"},
    ]
    path = tmp_path / "capture.har"
    path.write_text(json.dumps(_har(entries), indent=2))
    log, problems, kinds = load_inputs([path], READERS)
    assert kinds == ["har"]
    exchanges = log.http_exchanges()
    assert len(exchanges) == 3
    first, second, third = exchanges
    assert first.request.time == pytest.approx(1795946400.0)
    assert first.response is not None and first.response.time == pytest.approx(first.request.time + 0.011)
    assert [m.describe() for m in second.response_messages] == ["result id=2"]
    assert third.response is None and third.ending is not None and third.ending.reason is EndReason.ERROR
    assert any("not MCP traffic" in problem for problem in problems)


def test_validate_sniffs_recordings_flow_files_and_har_files(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: `mcp-assay validate` takes all three formats, even together, without flags."""
    flows = tmp_path / "capture.flows"
    _write_flows(
        flows, [_flow(_rpc("tools/list", 1), "tools/list", http.Response.make(200, _result(1, tools=[]), HEADERS))]
    )
    har = tmp_path / "capture.har"
    har.write_text(json.dumps(_har([_entry(_rpc("tools/list", 1), 200, "application/json", "{}")])))
    recording = Path(__file__).parents[1] / "data" / "recordings" / "python-sdk-2026-07-28.jsonl"
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        ["validate", "--spec-dir", str(spec_path), str(flows), str(har), str(recording), "--report", f"json:{report}"],
    )
    assert result.exit_code in (0, 1), result.output
    data = json.loads(report.read_text())
    assert data["target"]["inputs"] == ["mitmproxy flows", "har", "recording"]


def test_a_har_that_is_not_json_is_refused_with_its_name(tmp_path: Path) -> None:
    """Tool-defined: a broken HAR is an input error naming the file."""
    path = tmp_path / "broken.har"
    path.write_text('{"log": {"entries": [')
    with pytest.raises(RecordingError, match="broken.har: not a readable HAR file"):
        load_inputs([path], READERS)


def test_exchange_ids_in_a_flow_file_are_the_flow_ids(tmp_path: Path) -> None:
    """Tool-defined: evidence names the mitmproxy flow, so it can be found in mitmweb."""
    flow = _flow(_rpc("tools/list", 1), "tools/list", http.Response.make(200, _result(1, tools=[]), HEADERS))
    path = tmp_path / "one.flows"
    _write_flows(path, [flow])
    log, _, _ = load_inputs([path], READERS)
    (exchange,) = log
    assert isinstance(exchange, HttpExchange) and exchange.id == flow.id


def test_a_flow_file_keeps_a_clients_oauth_steps_once_it_has_spoken_mcp(tmp_path: Path) -> None:
    """Tool-defined: as the live forward proxy does, a flow file read offline keeps the authorization server
    metadata and the token request of a client that spoke MCP, and their bodies carry no JSON-RPC."""
    listed = _flow(_rpc("tools/list", 1), "tools/list", http.Response.make(200, _result(1, tools=[]), HEADERS))
    metadata = tflow.tflow(
        req=http.Request.make("GET", "http://127.0.0.1:9411/.well-known/oauth-authorization-server", b"", {}),
        resp=http.Response.make(200, b'{"issuer": "http://127.0.0.1:9411"}', {"content-type": "application/json"}),
    )
    form = b"grant_type=authorization_code&code=abcdef123&code_verifier=v3rifier-123456&resource=" + URL.encode()
    token = tflow.tflow(
        req=http.Request.make(
            "POST", "http://127.0.0.1:9411/token", form, {"content-type": "application/x-www-form-urlencoded"}
        ),
        resp=http.Response.make(200, b'{"access_token": "t0ken-abcdef"}', {"content-type": "application/json"}),
    )
    other = tflow.tflow(
        req=http.Request.make("GET", "http://127.0.0.1:9411/login.css", b"", {}), resp=http.Response.make(200, b"", {})
    )
    path = tmp_path / "oauth.flows"
    _write_flows(path, [listed, metadata, token, other])
    log, problems, _ = load_inputs([path], READERS)
    assert [exchange.request.path for exchange in log.oauth_exchanges()] == ["/token"]
    assert "/.well-known/oauth-authorization-server" in [exchange.request.path for exchange in log.http_exchanges()]
    assert not log.oauth_exchanges()[0].messages
    assert any("1 flow(s) were not MCP traffic" in problem for problem in problems)


def _har_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        found += [(*path, key), *_har_paths(child, (*path, key))]
    return found


def test_every_mutated_har_field_is_read_or_skipped_and_judged_without_a_crash(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: wrong-typed, non-finite, huge and non-Unicode values in a HAR never crash `validate`."""
    from mcp_assay.addon.importers import read_har
    from mcp_assay.report.jsonreport import render_json
    from mcp_assay.report.model import Report
    from mcp_assay.spec import load_spec
    from mcp_assay.spec.engine import evaluate
    from mcp_assay.wire.traffic import ExchangeLog

    entry = {
        "startedDateTime": "2026-01-01T00:00:00Z", "time": 12, "timings": {"send": 1, "wait": 5, "receive": 1},
        "request": {"method": "POST", "url": URL, "headers": [{"name": "content-type", "value": "application/json"}],
                    "postData": {"mimeType": "application/json", "text": _rpc("tools/list", 1).decode()}},
        "response": {"status": 200, "statusText": "OK",
                     "headers": [{"name": "content-type", "value": "application/json"}],
                     "content": {"mimeType": "application/json", "text": _result(1, tools=[]).decode()}},
    }  # fmt: skip
    hostile = ("now", None, True, float("inf"), float("nan"), -1, 10**400, [], {}, "", "\ud800", "0001-01-01T00:00")
    spec = load_spec(spec_dir=spec_path)
    path = tmp_path / "m.har"
    for value in hostile:  # one file per value: entry N has its Nth field mutated
        entries = []
        for where in _har_paths(entry):
            mutated = json.loads(json.dumps(entry))
            parent = mutated
            for key in where[:-1]:
                parent = parent[key]
            parent[where[-1]] = value
            entries.append(mutated)
        path.write_text(json.dumps({"log": {"entries": entries}}), encoding="utf-8", errors="surrogatepass")
        loaded = read_har(path, "")
        report = Report(results=evaluate(ExchangeLog(loaded.exchanges), spec), notes=loaded.problems)
        render_json(report).encode("utf-8")
