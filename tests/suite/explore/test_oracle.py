"""Judging one explored call as it is answered (mcp_assay.suite.explore.oracle), on hand-built traffic."""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.explore.oracle import INTERNAL_ERROR, NO_ANSWER, SERVER_ERROR, Oracle
from mcp_assay.suite.transports import Reply
from tests.factories import error_body, http, modern_call, request_body

TOOL: dict[str, Any] = {
    "name": "list_drafts",
    "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 50}}},
    "outputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]},
    "annotations": {"readOnlyHint": True},
}
LISTING = {"tools": [TOOL], "ttlMs": 0, "cacheScope": "private"}
EXPLORED = {"name": "explore", "family": "explore", "explored": {"tool": "list_drafts", "role": "search"}}


def oracle(spec: SpecSet) -> Oracle:
    return Oracle(spec, spec.require("2026-07-28"), [modern_call("tools/list", {}, LISTING, ident=1)], None)


def call(arguments: dict[str, Any], structured: Any, ident: int) -> tuple[Any, Reply]:
    result = {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}
    exchange = modern_call(
        "tools/call", {"name": "list_drafts", "arguments": arguments}, result, ident=ident, probe=EXPLORED
    )
    return exchange, Reply(exchange=exchange.id, request=None, status=200)


def test_a_call_the_rules_pass_has_no_failure(spec: SpecSet) -> None:
    """Tool-defined: an answer that keeps to the outputSchema fails no check."""
    exchange, reply = call({"limit": 3}, {"count": 0}, 2)
    assert oracle(spec).judge_call([exchange], reply).failures == ()


def test_structured_content_outside_the_output_schema_is_the_rules_failure(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-10): the oracle finds what the registered check finds, with its requirement."""
    exchange, reply = call({}, {"count": None}, 2)
    found = oracle(spec).judge_call([exchange], reply)
    assert "structured_content_matches_the_output_schema" in found.names
    failure = next(item for item in found.failures if item.name == "structured_content_matches_the_output_schema")
    assert failure.requirements == ("TOOL-10",) and not failure.signal


def test_arguments_outside_the_schema_served_as_a_success_fail_tool_14(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-14): judged from the listing in the oracle's context."""
    exchange, reply = call({"limit": 51}, {"count": 0}, 2)
    assert "invalid_tool_arguments_never_succeed" in oracle(spec).judge_call([exchange], reply).names


def test_what_no_check_judges_is_read_off_the_transport(spec: SpecSet) -> None:
    """Tool-defined: a hang, an HTTP 5xx and -32603 are signals, with no requirement of their own."""
    judge = oracle(spec)
    assert judge.judge_call([], None).names == {NO_ANSWER}
    assert not judge.judge_call([], None).answered
    assert SERVER_ERROR in judge.judge_call([], Reply(exchange="x", request=None, status=500)).names
    body = request_body("tools/call", 6, {"name": "list_drafts", "arguments": {}})
    failing = http(body, error_body(-32603, "internal error\nTraceback (most recent call last):\n  File x", 6))
    reply = Reply(exchange=failing.id, request=None, status=200, response=failing.response_messages[0])
    found = judge.judge_call([], reply)
    signal = next(item for item in found.failures if item.name == INTERNAL_ERROR)
    assert signal.signal and signal.detail == "-32603 (internal error): internal error (a message of 3 lines)"


def test_a_traceback_answering_arguments_inside_the_schema_is_tool_15s_failure(spec: SpecSet) -> None:
    """Issue 28 (TOOL-15, SHOULD): the drafts server's non-ASCII crash is a finding the oracle shrinks, not a note."""
    judge = oracle(spec)
    trace = "Traceback (most recent call last):\n  File \"/srv/x.py\", line 3, in f\nUnicodeEncodeError: 'ascii'"
    body = request_body("tools/call", 7, {"name": "list_drafts", "arguments": {"limit": 3}})
    explored = {**EXPLORED, "explored": {"tool": "list_drafts", "role": "search", "kind": "inside"}}
    crashed = http(body, error_body(-32603, trace, 7), probe=explored)
    reply = Reply(exchange=crashed.id, request=None, status=200, response=crashed.response_messages[0])
    found = judge.judge_call([crashed], reply)
    failure = next(item for item in found.failures if item.name == "tool_failures_are_results_with_is_error")
    assert failure.requirements == ("TOOL-15",) and "leaks" in failure.detail and not failure.signal
