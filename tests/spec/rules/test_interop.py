"""Stock clients (VER-07, HS-04/05, TOOL-05 through the official SDK's client): pass, fail, not verified."""

from __future__ import annotations

import itertools
from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from mcp_assay.wire.model import Exchange, Observation
from tests.factories import judge, legacy_session, log_of, tick
from tests.spec.rules._capability_builders import caps

_ids = itertools.count(1)
INVALID = "the SDK's own validation refused the answer (ValidationError: 1 validation error for ListToolsResult)"


def seen(case: str, era: str, outcome: str, **data: Any) -> Observation:
    return Observation(id=f"o{next(_ids)}", time=tick(), kind="interop",
                       data={"case": case, "era": era, "mode": "auto", "outcome": outcome, **data})  # fmt: skip


def outcome_of(spec: SpecSet, check: str, *items: Exchange) -> tuple[Outcome, str]:
    verdict = judge(log_of(*items), spec, check)
    return verdict.outcome, verdict.reason


def test_the_sdk_client_accepting_the_discover_result_passes_ver_07(spec: SpecSet) -> None:
    """Spec-mandated (VER-07), independent evidence: the SDK validates the DiscoverResult with its own models."""
    check = "a_stock_sdk_client_discovers_the_server"
    outcome, reason = outcome_of(spec, check, caps(), seen("connect", "modern", "ok", negotiated="2026-07-28"))
    assert outcome is Outcome.PASSED and "settled on 2026-07-28" in reason


def test_the_sdk_client_refusing_the_discover_result_fails_ver_07(spec: SpecSet) -> None:
    """Spec-mandated (VER-07): the SDK's validation error about the answer is the server's failure."""
    check = "a_stock_sdk_client_discovers_the_server"
    refused = seen("connect", "modern", "invalid", detail=INVALID.replace("ListToolsResult", "DiscoverResult"))
    outcome, reason = outcome_of(spec, check, caps(), refused)
    assert outcome is Outcome.FAILED and "DiscoverResult" in reason


def test_a_connection_the_sdk_could_not_make_or_a_fallback_leaves_ver_07_not_verified(spec: SpecSet) -> None:
    """Tool-defined: a refused connection establishes nothing; a fallback to initialize judged no DiscoverResult."""
    check = "a_stock_sdk_client_discovers_the_server"
    lost = seen("connect", "modern", "error", detail="the SDK could not complete it (ConnectError: refused)")
    assert outcome_of(spec, check, caps(), lost)[0] is Outcome.NOT_VERIFIED
    fell = seen("connect", "modern", "ok", negotiated="2025-11-25")
    outcome, reason = outcome_of(spec, check, caps(), fell)
    assert outcome is Outcome.NOT_VERIFIED and "fell back to the initialize handshake" in reason
    assert outcome_of(spec, check, caps())[0] is Outcome.NOT_VERIFIED


def test_the_sdk_handshake_on_a_version_in_the_window_passes_hs_04(spec: SpecSet) -> None:
    """Spec-mandated (HS-04, HS-05)."""
    check = "a_stock_sdk_client_completes_the_handshake"
    outcome, reason = outcome_of(spec, check, legacy_session(), seen("connect", "handshake", "ok",
                                                                     negotiated="2025-11-25"))  # fmt: skip
    assert outcome is Outcome.PASSED and "on 2025-11-25" in reason


def test_a_refused_or_out_of_window_sdk_handshake_fails_hs_04(spec: SpecSet) -> None:
    """Spec-mandated (HS-04: a valid InitializeResult; HS-05: the version asked for, when served)."""
    check = "a_stock_sdk_client_completes_the_handshake"
    refused = seen("connect", "handshake", "invalid", detail=INVALID.replace("ListToolsResult", "InitializeResult"))
    assert outcome_of(spec, check, legacy_session(), refused)[0] is Outcome.FAILED
    old = seen("connect", "handshake", "ok", negotiated="2024-11-05")
    outcome, reason = outcome_of(spec, check, legacy_session(), old)
    assert outcome is Outcome.FAILED and "on 2024-11-05, outside the window" in reason


def test_an_sdk_handshake_that_never_happened_is_not_verified(spec: SpecSet) -> None:
    """Tool-defined."""
    check = "a_stock_sdk_client_completes_the_handshake"
    lost = seen("connect", "handshake", "error", detail="the SDK client got nowhere within 30 s")
    outcome, reason = outcome_of(spec, check, legacy_session(), lost)
    assert outcome is Outcome.NOT_VERIFIED and "got nowhere" in reason


def test_the_sdk_listing_the_tools_passes_and_its_validation_error_fails_tool_05(spec: SpecSet) -> None:
    """Spec-mandated (TOOL-05), through the SDK's own models; not verified without a listing."""
    check = "a_stock_sdk_client_lists_the_tools"
    outcome, reason = outcome_of(spec, check, caps(), seen("list-tools", "modern", "ok", listed=3))
    assert outcome is Outcome.PASSED and "listed 3 tool(s)" in reason
    outcome, reason = outcome_of(spec, check, caps(), seen("list-tools", "modern", "invalid", detail=INVALID))
    assert outcome is Outcome.FAILED and "ListToolsResult" in reason
    assert outcome_of(spec, check, caps())[0] is Outcome.NOT_VERIFIED
