"""Choosing the revision judges what the server answered, and tries 2026 before giving up on it.

A server whose answers to ``server/discover`` and ``initialize`` cannot be used (ids of another JSON
type, bodies that are not JSON or are cut short) has not "offered nothing": what arrived is judged,
and such a run never exits 0. A server whose discover is wrong (404, no ``supportedVersions``, a
list without a revision it serves) is still asked a 2026 request; when that is served, 2026 is
tested and the discover exchanges are judged with it, so the discover bug itself is reported.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

import httpx

from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.events import Event, RunFinished
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import Handler, mock, respond

URL = "http://127.0.0.1:9/mcp"
ARGS: dict[str, Any] = {"tool_args": {"echo": {"message": "hi"}}, "prompt_args": {"greet": {"who": "x"}}}


def run_suite(spec: SpecSet, handler: Handler, **settings: Any) -> tuple[Report, RunFinished]:
    events: list[Event] = []
    config = SuiteConfig(url=URL, **{"timeout": 1.0, "stream_budget_ms": 300, **ARGS, **settings})
    report = asyncio.run(arun(config, spec, events.append, mock=mock(handler)))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    return report, finished


def exit_code(report: Report, finished: RunFinished) -> int:
    """What ``mcp-assay run`` exits with (3 for a target error, else the report's own code)."""
    return 3 if finished.unjudged is not None else report.exit_code()


def outcome(report: Report, check: str) -> Outcome:
    return next(item.outcome for item in report.results if item.check == check)


def _json(raw: bytes) -> Any:
    """A request body as JSON; the suite's malformed probes are ``None``."""
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def rewriting(change: Callable[[dict[str, Any], dict[str, Any]], None], inner: Handler | None = None) -> Handler:
    """The conformant scripted server, with each JSON answer passed through ``change(request, answer)``."""
    inner = inner or respond(Server())

    async def handler(request: httpx.Request) -> httpx.Response:
        response = await inner(request)
        if response.headers.get("content-type") != "application/json" or not response.content:
            return response
        body = _json(request.content)
        answer = json.loads(response.content)
        if isinstance(body, dict) and isinstance(answer, dict):
            change(body, answer)
        headers = {key: value for key, value in response.headers.items() if key.lower() != "content-length"}
        return httpx.Response(response.status_code, headers=headers, content=json.dumps(answer).encode())

    return handler


def raw_answers(body: bytes, status: int = 200, content_type: str = "application/json") -> Handler:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": content_type}, content=body)

    return handler


# -- answers no revision can be read from --------------------------------------------------------------
def test_answers_carrying_ids_of_another_json_type_are_judged_and_fail_rpc_05(spec: SpecSet) -> None:
    """Spec-mandated (RPC-05): "1" does not answer 1; the run says so instead of "nothing verified", never exit 0."""

    def stringify(request: dict[str, Any], answer: dict[str, Any]) -> None:
        if "id" in answer and answer["id"] is not None:
            answer["id"] = str(answer["id"])

    report, finished = run_suite(spec, rewriting(stringify))
    assert not report.tested
    assert outcome(report, "each_request_gets_exactly_one_response") is Outcome.FAILED
    assert exit_code(report, finished) == 3
    assert finished.unjudged is not None and "a JSON-RPC answer whose id is not the request's" in finished.unjudged


def test_answers_that_are_not_json_are_judged_and_fail_rpc_01(spec: SpecSet) -> None:
    """Spec-mandated (RPC-01): a JSON body that is not JSON is the server's failure, not "nothing verified"."""
    report, finished = run_suite(spec, raw_answers(b"<html><body>upstream error</body></html>"))
    assert not report.tested
    assert outcome(report, "messages_are_jsonrpc_2_0_objects") is Outcome.FAILED
    assert exit_code(report, finished) == 3
    assert finished.unjudged == (
        f"{URL} answered, but not in JSON-RPC: server/discover, initialize and tools/list got HTTP 200 OK "
        "(application/json, not JSON): '<html><body>upstream error</body></html>' — is it an MCP server?"
    )


def test_answers_cut_short_are_judged_and_fail_rpc_01(spec: SpecSet) -> None:
    """Spec-mandated (RPC-01): a body cut off in the middle of the JSON value is invalid JSON from the server."""
    report, finished = run_suite(spec, raw_answers(b'{"jsonrpc":"2.0","id":1,"result":{"supportedVers'))
    assert not report.tested
    assert outcome(report, "messages_are_jsonrpc_2_0_objects") is Outcome.FAILED
    assert "not JSON" in next(
        item.reason for item in report.results if item.check == "messages_are_jsonrpc_2_0_objects"
    )
    assert exit_code(report, finished) == 3
    assert finished.unjudged is not None and "never in usable JSON-RPC" in finished.unjudged
    assert (
        '(application/json, JSON cut short): \'{"jsonrpc":"2.0","id":1,"result":{"supportedVers\'' in finished.unjudged
    )


def test_a_server_whose_answers_establish_nothing_never_exits_0(spec: SpecSet) -> None:
    """Tool-defined: HTTP 500 with a text body to everything establishes no revision; the run does not pass."""
    report, finished = run_suite(spec, raw_answers(b"internal error", status=500, content_type="text/plain"))
    assert not report.tested
    assert exit_code(report, finished) != 0
    assert "answered" in report.revision_note
    assert (
        finished.unjudged is not None and "HTTP 500 Internal Server Error (text/plain, not JSON)" in finished.unjudged
    )


# -- a wrong discover does not hide 2026 -----------------------------------------------------------------
def test_a_discover_answered_404_still_gets_2026_tested_and_fails_ver_06(spec: SpecSet) -> None:
    """Spec-mandated (VER-06): discover 404/-32601, but a 2026 request is served: 2026 is tested, the bug reported."""
    report, _ = run_suite(spec, respond(Server("no-discover")))
    assert report.tested[:1] == ["2026-07-28"]
    assert "server/discover" in report.revision_note
    assert outcome(report, "discover_is_implemented") is Outcome.FAILED


def test_a_discover_without_supported_versions_still_gets_2026_tested_and_fails_ver_07(spec: SpecSet) -> None:
    """Spec-mandated (VER-07): a DiscoverResult lacking supportedVersions is reported, not skipped as another era."""

    def drop_versions(request: dict[str, Any], answer: dict[str, Any]) -> None:
        if request.get("method") == "server/discover" and isinstance(answer.get("result"), dict):
            answer["result"].pop("supportedVersions", None)

    report, _ = run_suite(spec, rewriting(drop_versions))
    assert report.tested[:1] == ["2026-07-28"]
    assert outcome(report, "discover_results_carry_versions_capabilities_and_cache_hints") is Outcome.FAILED


def test_a_discover_omitting_a_revision_it_serves_still_gets_it_tested_and_fails_ver_09(spec: SpecSet) -> None:
    """Spec-mandated (VER-09): supportedVersions leaves 2026-07-28 out, yet a 2026 request is served."""

    def legacy_only(request: dict[str, Any], answer: dict[str, Any]) -> None:
        if request.get("method") == "server/discover" and isinstance(answer.get("result"), dict):
            answer["result"]["supportedVersions"] = ["2025-11-25"]

    report, _ = run_suite(spec, rewriting(legacy_only))
    assert report.tested[:1] == ["2026-07-28"]
    assert outcome(report, "accepted_versions_match_supported_versions") is Outcome.FAILED


def test_a_server_that_refuses_2026_is_tested_on_the_handshake_without_its_2026_refusals(spec: SpecSet) -> None:
    """Tool-defined: a 2025-only server (2026 requests refused for want of a session) still gets 2025-11-25,
    and its answers to the 2026 requests are left out as another era's."""
    inner = respond(Server())

    async def handler(request: httpx.Request) -> httpx.Response:
        body = _json(request.content)
        if request.headers.get("mcp-protocol-version") == "2026-07-28" and not request.headers.get("mcp-session-id"):
            ident = body.get("id") if isinstance(body, dict) else None
            error = {"jsonrpc": "2.0", "id": ident, "error": {"code": -32600, "message": "Bad Request: no session"}}
            return httpx.Response(400, json=error)
        return await inner(request)

    report, finished = run_suite(spec, handler)
    assert report.tested[:1] == ["2025-11-25"]
    assert "per initialize" in report.revision_note
    assert outcome(report, "discover_is_implemented") is Outcome.NOT_APPLICABLE
    assert finished.unjudged is None


STRINGLY_STDIO = """
import json, sys
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if isinstance(message, dict) and "id" in message and "method" in message:
        answer = {"jsonrpc": "2.0", "id": str(message["id"]), "result": {"resultType": "complete"}}
        sys.stdout.write(json.dumps(answer) + "\\n")
        sys.stdout.flush()
"""


def test_a_stdio_server_answering_ids_of_another_type_is_judged_not_called_silent(spec: SpecSet) -> None:
    """Spec-mandated (RPC-05): on stdio the answers never match, yet they arrived: judged, not "unreachable"."""
    events: list[Event] = []
    config = SuiteConfig(command=(sys.executable, "-c", STRINGLY_STDIO), timeout=0.5, **ARGS)
    report = asyncio.run(arun(config, spec, events.append))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert not report.tested
    assert "answered" in report.revision_note and "could not be reached" not in report.revision_note
    assert outcome(report, "each_request_gets_exactly_one_response") is Outcome.FAILED
    assert exit_code(report, finished) == 3
    assert finished.unjudged is not None
    assert finished.unjudged.startswith(
        'the server answered on stdout, but with ids that match no request (the first: id "1")'
    )
