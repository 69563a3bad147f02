"""What a window's log checks share is found once per window and question, not once per check (counted work).

Each test counts the walks behind a shared view: two checks asking the same question of one window's log make
one walk, a check asking another question (or the log grown since) makes its own, and a released window keeps
nothing. Without the view each check walks again, and these counts fail."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from mcp_assay.spec.checks import REGISTRY, Check, Gate
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules import progress, results
from mcp_assay.spec.rules.auth import clients, facts, use
from mcp_assay.spec.rules.auth.facts import presented
from mcp_assay.spec.rules.auth.use import sent_requests
from mcp_assay.spec.rules.envelope import requests as envelope_requests
from mcp_assay.spec.rules.handshake import _sessions
from mcp_assay.spec.rules.handshake._sessions import ended_sessions
from mcp_assay.spec.rules.http import _exchanges, _header_audit
from mcp_assay.spec.rules.http._exchanges import http_eras
from mcp_assay.spec.rules.shared.headers import request_headers, response_headers
from mcp_assay.spec.rules.versions import _eras
from mcp_assay.spec.rules.versions._eras import advertised_discover, well_formed_requests
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.model import Headers, HttpRequest
from mcp_assay.wire.traffic import ExchangeLog
from tests.counting import count_calls
from tests.factories import URL, http, log_of, modern_call, modern_headers, request_body, result_body
from tests.spec.rules.test_progress import call as progress_call


def _traffic() -> ExchangeLog:
    return log_of(*(modern_call("tools/list", {}, {"tools": []}, ident=n) for n in range(1, 6)))


def _twins(*, side: Side | None = None) -> tuple[Check, Check]:
    """Two registered log checks with one gate, side and off-version flag (so one question of the log)."""
    by_question: dict[Any, Check] = {}
    for check in REGISTRY.values():
        if check.scope != "log" or (side is not None and check.side is not side):
            continue
        question = (check.gate, check.side, check.off_version)
        if question in by_question:
            return by_question[question], check
        by_question[question] = check
    raise AssertionError("no two log checks share a gate")


def test_checks_asking_the_same_messages_share_one_walk(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _traffic()
    walks: list[str] = []
    count_calls(monkeypatch, log, "messages", walks, by_name=True)
    ctx = Context(log, spec)
    first, second = _twins()
    ctx.check = first
    found = list(ctx.messages(kinds=[Kind.REQUEST]))
    ctx.check = second
    assert list(ctx.messages(kinds=[Kind.REQUEST])) == found
    assert len(found) == 5
    assert len(walks) == 1, "the second check walked the log again"
    admissions: list[str] = []
    count_calls(monkeypatch, ctx, "admission", admissions, by_name=True)
    assert len(list(ctx.messages(kinds=[Kind.RESULT]))) == 5
    assert len(walks) == 1, "another question reads the messages and gate keys the first one found"
    assert len(admissions) == 1, "one gate key, one admission"
    log.add(modern_call("tools/list", {}, {"tools": []}, ident=9))
    assert len(list(ctx.messages(kinds=[Kind.REQUEST]))) == 6, "the log grew: found again"
    assert len(walks) == 2
    ctx.release()
    assert not ctx._passing and ctx._rows is None, "a released window keeps nothing"


def _authorized() -> ExchangeLog:
    calls = []
    for n in range(1, 6):
        body = request_body("tools/list", n, {})
        calls.append(
            http(body, result_body({"tools": []}, n), headers={**modern_headers(body), "authorization": "Bearer tok"})
        )
    return log_of(*calls)


def test_authorization_checks_read_each_requests_credentials_once_a_window(
    spec: SpecSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _authorized()
    reads: list[str] = []
    count_calls(monkeypatch, use, "presented", reads, by_name=True)
    count_calls(monkeypatch, clients, "presented", reads, by_name=True)
    ctx = Context(log, spec)
    for name in (
        "clients_send_the_token_on_every_request",
        "clients_keep_tokens_out_of_query_strings",
        "clients_send_only_tokens_meant_for_the_server",
        "clients_keep_tokens_out_of_query_strings",
    ):
        ctx.check = REGISTRY[name]
        list(REGISTRY[name].func(ctx))
    # once each for the gated requests, the window's bearer tokens and where authorization is in use (auth_use):
    # not once per check and request
    assert len(reads) == 3 * 5
    assert [sent.bearer for sent in sent_requests(ctx)] == ["tok"] * 5
    log.add(_authorized().items[0])
    assert len(sent_requests(ctx)) == 6, "the log grew: found again"


def test_the_other_credentials_of_a_set_of_header_names_are_read_once_and_the_memory_is_capped() -> None:
    first = presented(HttpRequest(method="GET", url=URL, headers=Headers({"Cookie": "c", "a": "1"}), body=b"", time=0))
    assert first.other == ("Cookie",)
    assert facts._OTHER[("Cookie", "a")] == ("Cookie",)
    for n in range(400):
        request = HttpRequest(
            method="GET", url=URL, headers=Headers({f"x-{n}": "1", "X-Api-Key": "k"}), body=b"", time=0
        )
        assert presented(request).other == ("X-Api-Key",)
    assert len(facts._OTHER) <= 256


def test_http_rules_ask_each_exchanges_era_once_a_window(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _traffic()
    asked: list[str] = []
    count_calls(monkeypatch, _exchanges, "modern_route", asked, by_name=True)
    ctx = Context(log, spec)
    names = (
        "client_version_header_matches_the_body",
        "client_method_header_matches_the_body",
        "version_header_mismatch_is_rejected",
        "unknown_methods_get_404_with_a_jsonrpc_error",
        "sse_responses_disable_proxy_buffering",
        "messages_travel_on_one_stream_only",
    )
    for name in names:
        ctx.check = REGISTRY[name]
        list(REGISTRY[name].func(ctx))
    assert len(asked) == 5, "each exchange's era was asked once, whatever the rules"
    assert http_eras(ctx).modern == {exchange.id for exchange in log}
    assert not http_eras(ctx).legacy
    log.add(modern_call("tools/list", {}, {"tools": []}, ident=9))
    assert len(http_eras(ctx).modern) == 6, "the log grew: the new exchange is taken in"
    assert len(asked) == 6


def test_an_accept_header_is_read_once_per_value_and_the_memory_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    count_calls(monkeypatch, _exchanges, "_accepted_types", reads, by_name=True)
    value = "application/json, text/event-stream;q=0, Text/Plain"
    for _ in range(3):
        assert _exchanges.accepted_types(value) == {"application/json", "text/plain"}
    assert len(reads) == 1
    for n in range(300):
        assert _exchanges.accepted_types(f"x/{n}") == {f"x/{n}"}
    assert len(_exchanges._ACCEPTED) <= 256


def test_a_header_of_every_exchange_is_read_once_a_window(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _traffic()
    reads: list[str] = []
    count_calls(monkeypatch, Headers, "get", reads, by_name=True)
    ctx = Context(log, spec)
    for _ in range(3):
        values = [value for _, value in request_headers(ctx, HeaderKey.PROTOCOL_VERSION)]
        assert values == ["2026-07-28"] * 5
        assert [value for _, value in response_headers(ctx, HeaderKey.SESSION_ID)] == [None] * 5
    assert len(reads) == 2 * 5, "each header of each exchange read once"
    log.add(modern_call("tools/list", {}, {"tools": []}, ident=9))
    reads.clear()  # what the log read of the new exchange as it took it in
    assert len(list(request_headers(ctx, HeaderKey.PROTOCOL_VERSION))) == 6
    assert len(reads) == 2, "the log grew: only the new exchange is read"


def test_the_ended_sessions_are_found_once_a_window(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _traffic()
    walks: list[str] = []
    count_calls(monkeypatch, _sessions, "request_headers", walks, by_name=True)
    ctx = Context(log, spec)
    for name in ("ended_sessions_answer_404", "invalid_version_headers_get_400", "ended_sessions_answer_404"):
        ctx.check = REGISTRY[name]
        list(REGISTRY[name].func(ctx))
        assert ended_sessions(ctx) == {}
    assert walks.count("request_headers") == 2, "once for the sessions, once for the ended ones"


def test_a_set_of_header_names_is_read_for_respellings_once_and_the_memory_is_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []
    original = _header_audit.STANDARD_HEADERS
    counting = {key: value for key, value in original.items()}

    class Counting(dict[str, Any]):
        def get(self, key: str, default: Any = None) -> Any:
            reads.append(key)
            return counting.get(key, default)

    monkeypatch.setattr(_header_audit, "STANDARD_HEADERS", Counting(counting))
    names = ("Host", "mcp-protocol-version", "Mcp-Method")
    for _ in range(3):
        assert _header_audit._respelled(names) == "header spelled 'mcp-protocol-version' rather than " + repr(
            original["mcp-protocol-version"]
        )
    assert len(reads) == 2, "read once, up to the first respelled name"
    for n in range(300):
        assert _header_audit._respelled((f"x-{n}",)) is None
    assert len(_header_audit._RESPELLED) <= 256


def test_the_version_rules_find_the_well_formed_requests_and_their_discover_once_a_window(
    spec: SpecSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _traffic()
    asked: list[str] = []
    count_calls(monkeypatch, _eras, "complete_envelope", asked, by_name=True)
    count_calls(monkeypatch, _eras, "place_of", asked, by_name=True)
    ctx = Context(log, spec)
    for name in (
        "unadvertised_capabilities_get_method_not_found",
        "servers_serve_each_request_on_its_own",
        "discover_is_implemented",
        "unsupported_versions_get_unsupported_version_errors",
    ):
        ctx.check = REGISTRY[name]
        list(REGISTRY[name].func(ctx))
    assert len(list(well_formed_requests(ctx))) == 5
    assert asked.count("complete_envelope") == 5, "each request's envelope judged once"
    for request in well_formed_requests(ctx):
        assert advertised_discover(ctx, request) is None
        assert advertised_discover(ctx, request) is None
    assert asked.count("place_of") == 5, "each request's discover found once"


def test_checks_with_nothing_to_compare_leave_a_window_early(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests under one Authorization (none) and one clientInfo: the rules comparing callers place nothing."""
    log = _traffic()
    placed: list[str] = []
    count_calls(monkeypatch, results, "place_of", placed, by_name=True)
    count_calls(monkeypatch, envelope_requests, "place_of", placed, by_name=True)
    ctx = Context(log, spec)
    for name in ("public_results_do_not_depend_on_the_caller", "answers_do_not_depend_on_client_info"):
        ctx.check = REGISTRY[name]
        assert list(REGISTRY[name].func(ctx)) == []
    assert placed == []


def test_the_progress_rules_find_each_notifications_request_once_a_window(
    spec: SpecSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = log_of(progress_call("p1", (1, 2, 3)), progress_call("p2", (1, 2), ident=2, start=10.0))
    found: list[str] = []
    count_calls(monkeypatch, progress, "_find_owner", found, by_name=True)
    ctx = Context(log, spec)
    for name in (
        "progress_names_a_request_in_flight",
        "no_progress_after_the_final_response",
        "progress_increases_with_every_notification",
    ):
        ctx.check = REGISTRY[name]
        assert list(REGISTRY[name].func(ctx))
    assert len(found) == 5, "each of the five notifications' request found once"


def test_a_gate_admits_each_revision_of_a_window_once(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _traffic()
    asked: list[str] = []
    count_calls(monkeypatch, Gate, "admits", asked, by_name=True)
    ctx = Context(log, spec)
    ctx.check = REGISTRY["client_version_header_matches_the_body"]
    assert ctx.check.gate.features, "a gate that asks the revision"
    assert len(list(ctx.exchanges())) == 5
    assert len(asked) == 1, "five exchanges of one revision: one question"
