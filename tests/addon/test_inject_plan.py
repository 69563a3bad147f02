"""Where ``--inject`` lands: the families, the points, the budget, and the answers it makes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from mcp_assay.addon.inject import (
    FAMILIES,
    FAULTS,
    STDIO_FAMILIES,
    RequestFacts,
    build_plan,
    family_names,
    parse_families,
)
from mcp_assay.addon.inject.actions import Respell
from mcp_assay.addon.inject.families import cut, headers, hold, session, version
from mcp_assay.addon.inject.families.cut import RETRY_MS, cut_legacy, cut_modern
from mcp_assay.addon.inject.families.version import refusal
from mcp_assay.addon.inject.points import AnswerHead
from mcp_assay.cases import Facts
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.protocol import Era
from mcp_assay.wire.faults import FaultKind, fault_kind_of
from mcp_assay.wire.model import Probe
from mcp_assay.wire.sse import parse_sse

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
WINDOW = ("2026-07-28", "2025-11-25")


def modern(method: str, ident: Any = 1, **params: Any) -> RequestFacts:
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": META}}
    facts = RequestFacts.of(json.dumps(body).encode(), transport="http", headers={"Accept": "text/event-stream"})
    assert facts is not None
    return facts


def legacy(method: str, ident: Any = 1, *, session: str | None = "s-1") -> RequestFacts:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if method == "initialize":
        body["params"] = params
    headers = {"accept": "application/json, text/event-stream"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    facts = RequestFacts.of(json.dumps(body).encode(), transport="http", headers=headers)
    assert facts is not None
    return facts


def test_families_are_named_one_by_one_or_all_and_unknown_names_are_refused() -> None:
    """Tool-defined."""
    assert parse_families("version, hold") == {version.FAMILY, hold.FAMILY}
    assert parse_families(["all"]) == frozenset(FAMILIES)
    assert parse_families(None) == frozenset()
    ranked = sorted(FAMILIES, key=lambda family: family.rank)  # the order the families declare, not one kept here
    assert family_names() == ", ".join(family.name for family in ranked)
    assert len({family.rank for family in FAMILIES}) == len(FAMILIES), "two families share a rank"
    with pytest.raises(ConfigError, match=f"unknown family; choose from {family_names()}, all"):
        parse_families("versions")


def test_stdio_has_the_families_whose_actions_the_tap_can_apply() -> None:
    """Tool-defined: a reply line and a held answer exist on stdio; statuses, headers and streams do not."""
    plan = build_plan(frozenset(FAMILIES), transport="stdio", window=WINDOW)
    assert plan is not None and {case.family for case in plan.cases} == STDIO_FAMILIES
    assert build_plan(frozenset(), transport="http") is None


def test_the_facts_of_a_request_name_its_era_version_and_session() -> None:
    """Tool-defined."""
    facts = modern("tools/list", 7)
    assert (facts.era, facts.version, facts.ident, facts.is_request, facts.streams) == (
        "modern",
        "2026-07-28",
        7,
        True,
        True,
    )
    init = legacy("initialize", session=None)
    assert (init.era, init.version, init.session_id, init.ordinary) == (Era.HANDSHAKE, "2025-11-25", None, False)
    assert legacy("tools/list").session_id == "s-1"
    assert RequestFacts.of(b"not json", transport="http") is None
    assert RequestFacts.of(b"[1, 2]", transport="stdio") is None


def test_each_case_fires_once_per_era_and_a_request_carries_at_most_one() -> None:
    """Tool-defined: the first 2026 request is refused; the client's fallback initialize is its reaction, never
    answered in the server's place, but its answer may be held (issue 28: a client that falls back meets the
    initialize cases in one session); any other reaction is left alone."""
    plan = build_plan(frozenset(FAMILIES), transport="http", window=WINDOW)
    assert plan is not None
    first = plan.claim(modern("server/discover"), "http")
    assert first is not None and first is version.REFUSAL
    fallback = legacy("initialize", session=None)  # the reaction: only how its answer arrives may change
    assert plan.claim(fallback, "http") is None
    assert plan.candidates(fallback, reaction=True) == (headers.CASE_LEGACY,)
    assert plan.confirm(headers.CASE_LEGACY, "http")
    assert plan.claim(legacy("tools/list"), "http") is None  # the reaction to the respelling
    expiry = plan.claim(legacy("tools/list"), "http")
    assert expiry is not None and expiry is session.EXPIRY
    restart = plan.claim(legacy("initialize", session=None), "http")  # the reaction to the 404: its answer is held
    assert restart is hold.HELD_INITIALIZE
    assert plan.claim(legacy("tools/list"), "http") is None  # the reaction to the hold
    offered = plan.claim(legacy("initialize", session=None), "http")
    assert offered is version.COUNTER_OFFER  # an initialize that is no reaction: answered in the server's place
    assert plan.claim(modern("tools/list"), "http") is None
    refused = plan.claim(modern("tools/call", name="add"), "http")
    assert refused is not None and refused is headers.REFUSAL
    assert plan.claim(modern("server/discover"), "http") is None
    held_modern = plan.claim(modern("tools/list"), "http")
    assert held_modern is not None and held_modern.name == "inject-held-answer"
    assert plan.claim(modern("tools/list"), "http") is None
    cut_modern_case = plan.claim(modern("tools/list"), "http")
    assert cut_modern_case is cut.CUT_MODERN
    assert plan.claim(modern("tools/list"), "http") is None
    assert plan.claim(modern("tools/list"), "http") is None  # every 2026 request-time case has fired
    unmet = plan.unmet()
    assert version.REFUSAL not in unmet
    assert cut.CUT_LEGACY in unmet


def test_an_injected_exchange_records_its_era_and_an_older_recordings_legacy_still_reads() -> None:
    """Tool-defined: the era is the enum everywhere, recordings included; ``legacy``, which older recordings wrote
    for the handshake era, reads back as it, and an older behaviour lane's revision under ``era`` as its lane."""
    probe = session.EXPIRY.probe()
    assert probe.facts.era is Era.HANDSHAKE and probe.to_record()["era"] == "handshake"
    assert version.REFUSAL.probe().facts.era is Era.MODERN
    assert {case.probe().facts.era for case in FAULTS} == set(Era)
    older = Probe.from_record({**probe.to_record(), "era": "legacy"})
    assert older is not None and older.facts.era is Era.HANDSHAKE
    lane = Facts.from_record({"era": "2026-07-28", "transport": "http"})
    assert (lane.era, lane.lane, lane.transport) == (None, "2026-07-28", "http")


def test_cases_decided_at_the_answer_are_candidates_until_confirmed_once() -> None:
    """Tool-defined: a 2025 stream cut and a header respelling need the answer's head."""
    plan = build_plan({cut.FAMILY, headers.FAMILY}, transport="http", window=WINDOW)
    assert plan is not None
    assert plan.candidates(legacy("tools/list")) == (cut.CUT_LEGACY,)
    (case,) = plan.candidates(legacy("tools/list"))
    assert plan.confirm(case, "http") and not plan.confirm(case, "http")
    assert plan.candidates(legacy("tools/list")) == ()


def test_a_refusal_offers_the_servers_own_versions_else_the_window_without_the_requested_one() -> None:
    """Spec-mandated (VER-03 shape): data.supported lists what the client can fall back to; requested its version."""
    plan = build_plan({version.FAMILY}, transport="http", window=WINDOW)
    assert plan is not None
    assert plan.supported_for("2026-07-28") == ["2025-11-25"]
    plan.learn_discover({"supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18"]})
    assert plan.supported_for("2026-07-28") == ["2025-11-25", "2025-06-18"]
    body = refusal(3, "2026-07-28", ["2025-11-25"])
    assert body["error"]["code"] == -32022 and body["error"]["data"] == {
        "supported": ["2025-11-25"],
        "requested": "2026-07-28",
    }
    assert "injected by mcp-assay" in body["error"]["message"]


def test_header_names_are_respelled_in_another_case() -> None:
    """Spec-mandated (HTTP-14): the same name, another legal spelling."""
    assert Respell.respelled("Mcp-Session-Id") == "mCP-sESSION-iD"
    assert Respell.respelled("Mcp-Session-Id").lower() == "mcp-session-id"


def test_a_2025_cut_keeps_the_answer_for_the_resumption_and_announces_retry() -> None:
    """Tool-defined: the client gets the events before the answer, then an id and retry; the rest resumes."""
    body = (
        b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n'
        b'event: message\ndata: {"jsonrpc":"2.0","id":4,"result":{"tools":[]}}\n\n'
    )
    split = cut_legacy(body, 4)
    assert split is not None
    sent, rest = split
    events = list(parse_sse(sent, time=0.0))
    assert "notifications/progress" in (events[0].data or "")
    assert events[-1].id == rest.event_id and events[-1].retry == RETRY_MS and events[-1].data == ""
    (answer,) = [event for event in parse_sse(rest.rest, time=0.0) if event.carries_message]
    assert json.loads(answer.data or "")["id"] == 4
    assert cut_legacy(body, 99) is None  # no answer to this request in the stream: nothing is cut


def test_a_2026_cut_is_a_stream_with_no_answer() -> None:
    """Tool-defined."""
    assert [event.carries_message for event in parse_sse(cut_modern(), time=0.0)] == [False]


def test_an_action_decided_at_the_answer_takes_only_the_answer_it_can_act_on() -> None:
    """Tool-defined: a cut needs a 200 event stream; a respelling an HTTP/1 answer (and the header it is about)."""
    stream = AnswerHead(status=200, content_type="text/event-stream", names=frozenset({"mcp-session-id"}))
    assert cut.CUT_LEGACY.action.accepts(stream)
    assert not cut.CUT_LEGACY.action.accepts(AnswerHead(status=200, content_type="application/json"))
    assert not cut.CUT_LEGACY.action.accepts(AnswerHead(status=404, content_type="text/event-stream"))
    assert headers.CASE_LEGACY.action.accepts(stream)
    assert not headers.CASE_LEGACY.action.accepts(AnswerHead(status=200))  # no session id issued
    assert not headers.CASE_MODERN.action.accepts(AnswerHead(status=200, http1=False))


def test_a_case_the_tap_cannot_apply_or_nothing_judges_is_refused() -> None:
    """Tool-defined: a line has no headers to respell, and a fault no check judges is noise."""
    with pytest.raises(ValueError, match="cannot apply Respell"):
        dataclasses.replace(headers.CASE_MODERN, transports=frozenset({"http", "stdio"}))
    with pytest.raises(ValueError, match="nothing judges"):
        dataclasses.replace(headers.CASE_MODERN, reactions=())


def test_an_injected_exchange_says_what_was_done_to_it_and_older_recordings_are_read_by_name() -> None:
    """Tool-defined: the rules select held and respelled exchanges by their fault, never by a case name."""
    held = hold.HELD_INITIALIZE.probe(Facts(hold_ms=5))
    assert fault_kind_of(held) is FaultKind.HELD and held.facts.hold_ms == 5
    assert fault_kind_of(version.REFUSAL.probe()) is FaultKind.ANSWERED
    back = Probe.from_record(held.to_record())  # what the judging worker and a recording's reader get
    assert (
        back is not None
        and back.facts == held.facts
        and back.name == held.name
        and fault_kind_of(back) is FaultKind.HELD
    )
    older = {"name": "inject-header-case", "family": "inject-headers"}  # written before the tag
    assert fault_kind_of(Probe.from_record({**older, "injected": True})) is FaultKind.RESPELLED
    assert fault_kind_of(Probe.from_record(older)) is None  # a probe, not an injection
    assert fault_kind_of(None) is None


def test_a_case_that_never_met_its_point_says_how_another_session_meets_it() -> None:
    """Issue 28: the report's first screen names each case the client was never shown, and how to show it."""
    from mcp_assay.addon.inject.plan import unmet_note

    note = unmet_note(version.COUNTER_OFFER)
    assert note.startswith("injection inject-version-counter-offer (handshake) never met its point in this session")
    assert "never a reaction to another fault" in note and "in 2025-11-25 (a legacy-mode client)" in note
    held = unmet_note(hold.HELD_INITIALIZE, via="tap")
    assert "never a reaction" not in held and "through this tap again" in held
