"""The envelope, result, version and handshake rules against the real Python SDK server.

One capture per module: a 2026 client (discover, the list methods, a tool call, and the active
suite's envelope probes) and a 2025 client (initialize, initialized, tools/list, ping, DELETE,
and the session probes), sent with httpx and turned into the exchanges the rules judge. Every
rule family must find nothing wrong except the deviations listed below, each confirmed against
the specification text; a listed deviation that disappears fails the test, so the list stays true.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Outcome, Verdict
from mcp_assay.wire.model import Ending, EndReason, Headers, HttpExchange, HttpRequest, HttpResponse, media_type
from mcp_assay.wire.sse import parse_sse
from mcp_assay.wire.traffic import ExchangeLog
from tests.factories import as_probe, rules_of
from tests.peers.process import sdk_http_server

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
CLIENT_INFO = {"name": "assay-e2e", "version": "1.0"}
ACCEPT = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

EXPECTED_DEVIATIONS: dict[str, set[str]] = {
    "envelope": set(),
    "results": set(),
    "versions": set(),
    # HS-18: the SDK answers a legacy request that lacks Mcp-Session-Id with 400 *and a fresh
    # Mcp-Session-Id header*; the 2025 transport assigns session ids on the response carrying the
    # InitializeResult, and this response carries none.
    "handshake": {"session_ids_come_only_with_the_initialize_result"},
}

_ids = itertools.count(1)


def exchange_of(response: httpx.Response, started: float, ended: float, probe: dict[str, Any] | None) -> HttpExchange:
    """An httpx round trip as the exchange a proxy would have recorded (SSE bodies parsed into events)."""
    request = response.request
    streamed = media_type(response.headers.get("content-type")) == "text/event-stream"
    head = started + (ended - started) / 2
    return HttpExchange.build(
        id=f"e2e-{next(_ids)}",
        request=HttpRequest(
            method=request.method,
            url=str(request.url),
            headers=Headers(request.headers.multi_items()),
            body=request.content,
            time=started,
        ),
        response=HttpResponse(
            status=response.status_code,
            headers=Headers(response.headers.multi_items()),
            time=head,
            reason=response.reason_phrase,
            body=None if streamed else response.content,
            events=tuple(parse_sse(response.content, time=ended)) if streamed else (),
        ),
        ending=Ending(reason=EndReason.COMPLETE, time=ended),
        probe=as_probe(probe),
    )


class Recorder:
    """Sends requests to the server and keeps every round trip as an exchange."""

    def __init__(self, client: httpx.Client, url: str) -> None:
        self.client = client
        self.url = url
        self.exchanges: list[HttpExchange] = []

    def send(
        self, method: str, body: Any = None, headers: dict[str, str] | None = None, probe: str | None = None
    ) -> httpx.Response:
        started = time.time()
        response = self.client.request(method, self.url, json=body, headers=headers or {})
        ended = time.time()
        tag = {"name": probe, "invalid": True} if probe else None
        self.exchanges.append(exchange_of(response, started, ended, tag))
        return response

    # -- 2026 ---------------------------------------------------------------------------------------
    def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        version: str = MODERN,
        meta: dict[str, Any] | None = None,
        drop: tuple[str, ...] = (),
        probe: str | None = None,
    ) -> httpx.Response:
        envelope = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            **(meta or {}),
        }
        for key in drop:
            envelope.pop(key)
        body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": {**(params or {}), "_meta": envelope}}
        headers = {**ACCEPT, "mcp-protocol-version": version, "mcp-method": method}
        if method in ("tools/call", "prompts/get"):
            headers["mcp-name"] = str((params or {})["name"])
        if method == "resources/read":
            headers["mcp-name"] = str((params or {})["uri"])
        return self.send("POST", body, headers, probe)

    # -- 2025 ---------------------------------------------------------------------------------------
    def legacy(
        self,
        session: str | None,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        notification: bool = False,
        version: str | None = LEGACY,
        probe: str | None = None,
    ) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if not notification:
            body["id"] = next(_ids)
        if params is not None:
            body["params"] = params
        headers = dict(ACCEPT)
        if version is not None:
            headers["mcp-protocol-version"] = version
        if session is not None:
            headers["mcp-session-id"] = session
        return self.send("POST", body, headers, probe)

    def initialize(self, version: str = LEGACY, probe: str | None = None) -> httpx.Response:
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
        return self.legacy(None, "initialize", params, version=None, probe=probe)


def drive(recorder: Recorder) -> None:
    # a 2026 client
    recorder.modern("server/discover")
    recorder.modern("tools/list")
    recorder.modern("prompts/list")
    recorder.modern("resources/list")
    recorder.modern("resources/templates/list")
    recorder.modern("resources/read", {"uri": "info://static"})
    recorder.modern("prompts/get", {"name": "summarize", "arguments": {"text": "hello"}})
    recorder.modern(
        "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, meta={"io.modelcontextprotocol/logLevel": "info"}
    )
    recorder.modern("tools/list", meta={"io.modelcontextprotocol/clientInfo": {"name": "other", "version": "2"}})
    # the active suite's 2026 envelope probes
    recorder.modern("tools/list", version="1900-01-01", probe="unsupported-version")
    recorder.modern("server/discover", version="1900-01-01", probe="discover-unsupported-version")
    recorder.modern("tools/list", drop=("io.modelcontextprotocol/clientCapabilities",), probe="missing-capabilities")
    recorder.modern("tools/list", drop=("io.modelcontextprotocol/protocolVersion",), probe="missing-body-version")
    recorder.modern("ping", probe="removed-ping")
    recorder.modern("initialize", {"protocolVersion": LEGACY, "capabilities": {}}, probe="modern-initialize")
    completion = {"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "text", "value": "h"}}
    recorder.modern("completion/complete", completion, probe="unadvertised-completions")
    # a 2025 client
    answer = recorder.initialize()
    session = answer.headers["mcp-session-id"]
    recorder.legacy(session, "notifications/initialized", notification=True)
    recorder.legacy(session, "tools/list")
    recorder.legacy(session, "ping")
    # the active suite's 2025 session probes
    recorder.initialize("1900-01-01", probe="initialize-unsupported-version")
    recorder.legacy(session, "tools/list", version="1900-01-01", probe="invalid-version-header")
    recorder.legacy(None, "tools/list", probe="missing-session-id")
    recorder.legacy(None, "tools/list", version=None, probe="missing-version-header")
    recorder.send("DELETE", None, {"mcp-session-id": session, "mcp-protocol-version": LEGACY})
    recorder.legacy(session, "tools/list", probe="ended-session")


@pytest.fixture(scope="module")
def sdk_capture() -> Iterator[ExchangeLog]:
    with sdk_http_server() as server, httpx.Client(timeout=5.0) as client:
        recorder = Recorder(client, server.url)
        drive(recorder)
        yield ExchangeLog(recorder.exchanges)


def judged(log: ExchangeLog, spec: SpecSet, family: str) -> list[Verdict]:
    checks = rules_of(family)
    assert checks, family
    return evaluate(log, spec, checks=checks)


def assert_only_expected_failures(verdicts: list[Verdict], family: str) -> None:
    failures = {verdict.check: verdict.reason for verdict in verdicts if verdict.outcome is Outcome.FAILED}
    assert set(failures) == EXPECTED_DEVIATIONS[family], failures
    crashed = [verdict.check for verdict in verdicts if "the check itself failed" in verdict.reason]
    assert crashed == []


def passed_checks(verdicts: list[Verdict]) -> set[str]:
    return {verdict.check for verdict in verdicts if verdict.outcome is Outcome.PASSED}


def test_the_sdk_server_keeps_the_request_envelope_rules(sdk_capture: ExchangeLog, spec: SpecSet) -> None:
    """Spec-mandated (META-01..10): real 2026 traffic from the SDK passes every envelope rule it exercises."""
    verdicts = judged(sdk_capture, spec, "envelope")
    assert_only_expected_failures(verdicts, "envelope")
    assert passed_checks(verdicts) >= {
        "requests_carry_params_with_meta",
        "requests_declare_client_capabilities",
        "requests_identify_the_client",
        "meta_keys_follow_the_key_grammar",
        "reserved_meta_prefixes_hold_only_defined_keys",
        "answers_do_not_depend_on_client_info",
    }


def test_the_sdk_server_keeps_the_result_envelope_rules(sdk_capture: ExchangeLog, spec: SpecSet) -> None:
    """Spec-mandated (RES-01..12): 2026 results carry envelope and caching hints; 2025 results are not held to them."""
    verdicts = judged(sdk_capture, spec, "results")
    assert_only_expected_failures(verdicts, "results")
    assert passed_checks(verdicts) >= {
        "results_name_their_result_type",
        "result_types_are_core_or_negotiated",
        "results_identify_the_server",
        "cacheable_results_carry_ttl_and_scope",
        "ttl_is_a_non_negative_integer",
        "cache_scope_is_public_or_private",
    }


def test_the_sdk_server_keeps_the_version_negotiation_rules(sdk_capture: ExchangeLog, spec: SpecSet) -> None:
    """Spec-mandated (VER-01..22): discover, refusals of bad envelopes and versions, removed methods."""
    verdicts = judged(sdk_capture, spec, "versions")
    assert_only_expected_failures(verdicts, "versions")
    assert passed_checks(verdicts) >= {
        "requests_name_their_protocol_version",
        "incomplete_envelopes_get_invalid_params",
        "unsupported_versions_get_unsupported_version_errors",
        "unsupported_version_errors_echo_the_request_and_the_discover_list",
        "discover_is_implemented",
        "discover_results_carry_versions_capabilities_and_cache_hints",
        "discover_results_identify_the_server",
        "accepted_versions_match_supported_versions",
        "removed_methods_are_unknown_to_modern_requests",
        "servers_serve_each_request_on_its_own",
    }


def test_the_sdk_server_keeps_the_handshake_and_session_rules(sdk_capture: ExchangeLog, spec: SpecSet) -> None:
    """Spec-mandated (HS-01..23): initialize, initialized, version header and session id handling."""
    verdicts = judged(sdk_capture, spec, "handshake")
    assert_only_expected_failures(verdicts, "handshake")
    assert passed_checks(verdicts) >= {
        "initialize_opens_every_session",
        "initialize_results_name_version_capabilities_and_server",
        "supported_requested_versions_are_echoed",
        "unsupported_requested_versions_get_a_counter_offer",
        "clients_confirm_with_initialized",
        "session_requests_carry_the_version_header",
        "invalid_version_headers_get_400",
        "pings_get_a_prompt_empty_result",
        "sessionless_requests_get_400",
        "ended_sessions_answer_404",
        "session_deletes_name_the_session",
    }
