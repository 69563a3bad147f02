"""The BEH rules over hand-built behaviour-case traffic: a pass, a failure and a not-verified each."""

from __future__ import annotations

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome, Side
from mcp_assay.wire.model import Observation
from tests.behaviour._logs import T0, Lane, stdio_line, success, tool_error
from tests.factories import LEGACY, judge

INVALID = {"code": -32602, "message": "Unknown tool: create_draft"}


def lane_with_calibration(before: int = 1, after: int = 2) -> Lane:
    lane = Lane()
    lane.listing("writer", ["list_drafts", "create_draft"])
    lane.calibrate(before, after)
    return lane


# -- BEH-04 --------------------------------------------------------------------------------------
def test_principals_offered_exactly_their_expected_tools_pass(spec: SpecSet) -> None:
    """Spec-mandated (BEH-04): each principal's list matches the expected table."""
    lane = Lane()
    lane.expectation({"reader": ["list_drafts"], "writer": ["list_drafts", "create_draft"]})
    lane.listing("reader", ["list_drafts"])
    lane.listing("writer", ["create_draft", "list_drafts"])
    verdict = judge(lane.log, spec, "principals_are_offered_the_expected_tools")
    assert verdict.outcome is Outcome.PASSED
    assert "reader is offered list_drafts" in verdict.reason and "writer is offered" in verdict.reason


def test_a_write_tool_offered_to_a_reader_is_a_finding(spec: SpecSet) -> None:
    """Spec-mandated (BEH-04): an extra tool offered to a lower-privileged principal fails."""
    lane = Lane()
    lane.expectation({"reader": ["list_drafts"]})
    lane.listing("reader", ["list_drafts", "create_draft"])
    verdict = judge(lane.log, spec, "principals_are_offered_the_expected_tools")
    assert verdict.outcome is Outcome.FAILED
    assert "reader is offered create_draft, which the expected table does not list" in verdict.reason


def test_lists_without_an_expected_table_are_not_judged(spec: SpecSet) -> None:
    """Spec-mandated (BEH-04): with no expectation the contract cannot be verified."""
    lane = Lane()
    lane.listing("reader", ["list_drafts"])
    verdict = judge(lane.log, spec, "principals_are_offered_the_expected_tools")
    assert verdict.outcome is Outcome.NOT_VERIFIED


# -- BEH-05 / BEH-03 -----------------------------------------------------------------------------
def test_a_refusal_that_left_storage_alone_passes(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05, BEH-03): isError before writing; the witness stays."""
    lane = lane_with_calibration()
    lane.refusal("extra_arguments", 2, 2, result=tool_error())
    lane.refusal("principal_without_scope", 2, 2, error=INVALID, principal="reader", start=4.0)
    assert judge(lane.log, spec, "refused_calls_change_nothing").outcome is Outcome.PASSED
    beh03 = judge(lane.log, spec, "forbidden_arguments_are_not_accepted")
    assert beh03.outcome is Outcome.PASSED and "a result with isError: true" in beh03.reason


def test_a_polite_error_after_the_write_fails_the_refusal(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05): an isError answer does not excuse a record that landed."""
    lane = lane_with_calibration()
    lane.refusal("extra_arguments", 2, 3, result=tool_error())
    verdict = judge(lane.log, spec, "refused_calls_change_nothing")
    assert verdict.outcome is Outcome.FAILED
    assert "a result with isError: true, yet witness count moved 2 → 3" in verdict.reason
    assert judge(lane.log, spec, "forbidden_arguments_are_not_accepted").outcome is Outcome.PASSED


def test_an_accepted_forbidden_argument_fails_both_rules(spec: SpecSet) -> None:
    """Spec-mandated (BEH-03, BEH-05): a success for a forbidden argument, and a write."""
    lane = lane_with_calibration()
    lane.refusal("extra_arguments", 2, 3, result=success({"id": "d_9"}))
    assert judge(lane.log, spec, "refused_calls_change_nothing").outcome is Outcome.FAILED
    beh03 = judge(lane.log, spec, "forbidden_arguments_are_not_accepted")
    assert beh03.outcome is Outcome.FAILED
    assert "was accepted (HTTP 200, a successful result); witness count moved 2 → 3" in beh03.reason


def test_a_witness_that_does_not_see_the_write_proves_nothing(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05): calibration left the witness unchanged, so the refusal is not verified."""
    lane = lane_with_calibration(1, 1)
    lane.refusal("extra_arguments", 1, 1, result=tool_error())
    verdict = judge(lane.log, spec, "refused_calls_change_nothing")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "does not see this write" in verdict.reason


def test_a_schema_that_allows_extra_arguments_makes_no_refusal_case(spec: SpecSet) -> None:
    """Spec-mandated (BEH-03): without additionalProperties false the extra argument is legal."""
    lane = Lane()
    lane.listing("writer", ["create_draft"], schema={"type": "object", "properties": {"title": {}}})
    lane.calibrate()
    lane.refusal("extra_arguments", 2, 3, result=success())
    verdict = judge(lane.log, spec, "forbidden_arguments_are_not_accepted")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "does not set additionalProperties: false" in verdict.reason
    assert judge(lane.log, spec, "refused_calls_change_nothing").outcome is Outcome.NOT_VERIFIED


def test_an_unstable_witness_or_a_failed_read_is_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05): a witness that moves on its own, or a read that failed, decides nothing."""
    lane = lane_with_calibration()
    lane.stability(5, 6)
    lane.refusal("extra_arguments", 2, 3, result=tool_error())
    verdict = judge(lane.log, spec, "refused_calls_change_nothing")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "moved on its own" in verdict.reason
    lane = lane_with_calibration()
    lane.refusal("extra_arguments", 2, None, result=tool_error())
    lane.log.add(Observation(id="o-err", time=T0 + 9, kind="witness", data={
        "case": "2026-07-28/http/write/create_draft/refusal/extra_arguments", "read": "after", "witness": "count",
        "error": "GET http://x answered HTTP 500"}))  # fmt: skip
    verdict = judge(lane.log, spec, "refused_calls_change_nothing")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "HTTP 500" in verdict.reason


NOT_AUTHORIZED = {"code": -32001, "message": "unauthorized"}
UNKNOWN_TOOL = {"code": -32602, "message": "Unknown tool"}
HEADER_MISMATCH = {"code": -32020, "message": "Mcp-Name does not match params.name"}


def _every_other_refusal(lane: Lane, after: int) -> None:
    """R3..R6 (AUTH-AND-BEHAVIOUR §3.4): each answered with a refusal, the witness at ``after``."""
    lane.refusal("invalid_token", 2, after, error=NOT_AUTHORIZED, status=401, start=3.0)
    lane.refusal("anonymous", after, after, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=4.0)
    lane.refusal("mismatched_name", after, after, error=HEADER_MISMATCH, status=400, start=5.0, mcp_name="list_drafts")
    lane.refusal("unknown_tool", after, after, error=UNKNOWN_TOOL, called="create_draft_mcp_assay_unknown", start=6.0)


def test_credential_routing_and_unknown_name_refusals_that_changed_nothing_pass(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05, R3..R6): a bad token, no token, a mismatched Mcp-Name, an unknown name."""
    lane = lane_with_calibration()
    _every_other_refusal(lane, 2)
    verdict = judge(lane.log, spec, "refused_calls_change_nothing")
    assert verdict.outcome is Outcome.PASSED, verdict.reason
    for what in ("with an invalid token", "without credentials", "under an Mcp-Name header naming list_drafts",
                 "of the unknown tool create_draft_mcp_assay_unknown with create_draft's arguments"):  # fmt: skip
        assert what in verdict.reason
    assert judge(lane.log, spec, "forbidden_arguments_are_not_accepted").outcome is Outcome.NOT_VERIFIED


def test_a_write_behind_an_invalid_token_fails_the_refusal(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05, R3): the 401 came back and the record landed anyway."""
    lane = lane_with_calibration()
    _every_other_refusal(lane, 3)
    verdict = judge(lane.log, spec, "refused_calls_change_nothing")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/call create_draft with an invalid token was answered with" in verdict.reason
    assert "witness count moved 2 → 3" in verdict.reason
    assert verdict.violations == 1, verdict.reason


def test_a_write_under_a_mismatched_header_or_an_unknown_name_fails(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05, R5 and R6): the server wrote although the request named no callable tool."""
    for kind, extra in (("mismatched_name", {"mcp_name": "list_drafts"}), ("unknown_tool", {})):
        lane = lane_with_calibration()
        called = "create_draft_mcp_assay_unknown" if kind == "unknown_tool" else "create_draft"
        lane.refusal(kind, 2, 3, result=success({"id": "d_9"}), called=called, **extra)
        verdict = judge(lane.log, spec, "refused_calls_change_nothing")
        assert verdict.outcome is Outcome.FAILED and "the call wrote although it must be refused" in verdict.reason
    assert "of the unknown tool create_draft_mcp_assay_unknown" in verdict.reason


def test_a_forged_token_that_changed_nothing_passes_auth_21(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-21): the token is checked before the handler runs."""
    lane = lane_with_calibration()
    _every_other_refusal(lane, 2)
    verdict = judge(lane.log, spec, "invalid_tokens_have_no_side_effect")
    assert verdict.outcome is Outcome.PASSED
    assert "tools/call create_draft with an invalid token: HTTP 401" in verdict.reason
    assert "without credentials" not in verdict.reason  # only the forged-token call is AUTH-21's subject


def test_a_write_behind_a_forged_token_fails_auth_21(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-21): a 401 after the handler wrote is too late."""
    lane = lane_with_calibration()
    _every_other_refusal(lane, 3)
    verdict = judge(lane.log, spec, "invalid_tokens_have_no_side_effect")
    assert verdict.outcome is Outcome.FAILED and "witness count moved 2 → 3" in verdict.reason


def test_auth_21_is_not_verified_without_a_forged_token_call(spec: SpecSet) -> None:
    """Tool-defined: only a configured write tool with a witness can show it; without authorization in use
    it does not apply."""
    lane = lane_with_calibration()
    lane.refusal("extra_arguments", 2, 2, result=tool_error())
    assert judge(lane.log, spec, "invalid_tokens_have_no_side_effect").outcome is Outcome.NOT_APPLICABLE
    lane.refusal("anonymous", 2, 2, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=4.0)
    verdict = judge(lane.log, spec, "invalid_tokens_have_no_side_effect")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "forged token" in verdict.reason


def _reader_calls_the_write_tool(offered: list[str] | None, **answer: object) -> Lane:
    """A protected lane (an anonymous call got 401) where the reader calls create_draft after listing ``offered``."""
    lane = lane_with_calibration()
    if offered is not None:
        lane.listing("reader", offered)
    lane.refusal("anonymous", 2, 2, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=2.5)
    lane.refusal("principal_without_scope", 2, 2, principal="reader", start=4.0, **answer)  # type: ignore[arg-type]
    return lane


def test_a_hidden_tool_the_reader_cannot_call_passes_auth_24(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-24): left out of the reader's list and refused to the reader."""
    verdict = judge(
        _reader_calls_the_write_tool(["list_drafts"], error=INVALID).log, spec, "hidden_tools_are_not_callable"
    )
    assert verdict.outcome is Outcome.PASSED
    assert "create_draft, hidden from reader, refused reader: HTTP 200, error -32602" in verdict.reason


def test_a_hidden_tool_the_reader_can_still_call_fails_auth_24(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-24): hiding a tool is not protecting it."""
    lane = _reader_calls_the_write_tool(["list_drafts"], result=success({"id": "d_2"}))
    verdict = judge(lane.log, spec, "hidden_tools_are_not_callable")
    assert verdict.outcome is Outcome.FAILED
    assert "create_draft is not in reader's tools/list, yet reader's call of it was answered with" in verdict.reason


def test_auth_24_needs_the_readers_own_list_without_the_tool(spec: SpecSet) -> None:
    """Tool-defined: an offered tool, or an uncaptured list, says nothing about hidden tools."""
    offered = _reader_calls_the_write_tool(["list_drafts", "create_draft"], result=success())
    verdict = judge(offered.log, spec, "hidden_tools_are_not_callable")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "is offered to reader" in verdict.reason
    unlisted = judge(_reader_calls_the_write_tool(None, error=INVALID).log, spec, "hidden_tools_are_not_callable")
    assert unlisted.outcome is Outcome.NOT_VERIFIED and "no tools/list as reader was captured" in unlisted.reason


def test_lists_that_differ_by_principal_and_are_private_pass_auth_25(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-25, SHOULD): a shared cache must not hand the writer's list to the reader."""
    lane = lane_with_calibration()
    lane.refusal("anonymous", 2, 2, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=2.5)
    lane.listing("reader", ["list_drafts"])
    verdict = judge(lane.log, spec, "per_principal_lists_are_private")
    assert verdict.outcome is Outcome.PASSED and "tools/list as reader is marked private" in verdict.reason


def test_a_public_list_that_differs_by_principal_fails_auth_25(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-25, SHOULD)."""
    lane = lane_with_calibration()
    lane.refusal("anonymous", 2, 2, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=2.5)
    lane.listing("reader", ["list_drafts"], cache_scope="public")
    verdict = judge(lane.log, spec, "per_principal_lists_are_private")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/list as reader differs from another principal's yet says cacheScope 'public'" in verdict.reason


def test_identical_lists_leave_auth_25_not_verified(spec: SpecSet) -> None:
    """Tool-defined: a list every principal shares may be public; without authorization it does not apply."""
    lane = lane_with_calibration()
    lane.refusal("anonymous", 2, 2, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=2.5)
    lane.listing("reader", ["list_drafts", "create_draft"], cache_scope="public")
    verdict = judge(lane.log, spec, "per_principal_lists_are_private")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "offered the same tools" in verdict.reason
    open_lane = lane_with_calibration()
    open_lane.listing("reader", ["list_drafts"], cache_scope="public")
    assert judge(open_lane.log, spec, "per_principal_lists_are_private").outcome is Outcome.NOT_APPLICABLE


def test_new_refusals_rest_on_the_calibration_too(spec: SpecSet) -> None:
    """Spec-mandated (BEH-05): without a calibration that moved the witness, R3..R6 prove nothing."""
    lane = lane_with_calibration(1, 1)
    _every_other_refusal(lane, 1)
    verdict = judge(lane.log, spec, "refused_calls_change_nothing")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "does not see this write" in verdict.reason


# -- BEH-06 --------------------------------------------------------------------------------------
def test_a_race_without_a_late_write_passes_with_its_timeline(spec: SpecSet) -> None:
    """Spec-mandated (BEH-06): the caller gave up and no record appeared."""
    lane = lane_with_calibration()
    lane.race(2, 2)
    verdict = judge(lane.log, spec, "timed_out_calls_leave_no_late_write")
    assert verdict.outcome is Outcome.PASSED
    assert verdict.reason == (
        "2026-07-28 over http, create_draft: sent +0 ms, gave up +100 ms (closed the response stream), "
        "witness count read +1300 ms: 2 → 2"
    )


def test_a_record_that_lands_after_the_caller_gave_up_is_reported_with_the_timing(spec: SpecSet) -> None:
    """Spec-mandated (BEH-06): a late write is a finding, one per race, each with its timeline."""
    lane = lane_with_calibration()
    lane.race(2, 3, attempt=1)
    lane.race(3, 3, attempt=2, start=7.0)
    lane.race(3, 4, attempt=3, start=9.0)
    verdict = judge(lane.log, spec, "timed_out_calls_leave_no_late_write")
    assert verdict.outcome is Outcome.FAILED and verdict.violations == 2
    details = [item.detail for item in verdict.evidence]
    assert details[0].startswith("2026-07-28 over http, create_draft #1: sent +0 ms, gave up +100 ms")
    assert "witness count read +1300 ms: 2 → 3 — the write landed after the caller gave up" in details[0]
    assert details[1].startswith("2026-07-28 over http, create_draft #3")


def test_a_call_that_answered_before_the_timeout_is_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (BEH-06): a race that was never lost proves nothing, it never passes."""
    lane = lane_with_calibration()
    lane.race(2, 3, answered_after=0.05)
    verdict = judge(lane.log, spec, "timed_out_calls_leave_no_late_write")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "answered after 50 ms, before the client gave up" in verdict.reason


def test_a_timeout_close_to_the_work_is_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (BEH-06): a timeout above a third of the calibrated duration leaves no margin."""
    lane = lane_with_calibration()
    lane.race(2, 3, timeout_ms=250)
    verdict = judge(lane.log, spec, "timed_out_calls_leave_no_late_write")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "250 ms timeout is not below a third of the calibrated 400 ms" in verdict.reason


def test_a_call_too_quick_to_race_is_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (BEH-06): 20 ms of work leaves no useful timeout (configure delay_argument)."""
    lane = Lane()
    lane.listing("writer", ["create_draft"])
    lane.calibrate(duration=0.02)
    lane.race(2, 3, timeout_ms=5)
    verdict = judge(lane.log, spec, "timed_out_calls_leave_no_late_write")
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert "too little work to give up on" in verdict.reason


def test_a_stdio_race_reads_the_give_up_from_the_cancel_notice(spec: SpecSet) -> None:
    """Spec-mandated (BEH-06): on stdio the client gave up when it wrote notifications/cancelled."""
    lane = Lane(era=LEGACY, transport="stdio")
    race = lane.tags("write/create_draft/race", tool="create_draft", phase="race", timeout_ms=100)
    calibrate = lane.tags("write/create_draft/calibrate", tool="create_draft", phase="calibrate")
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    done = {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    lines = [
        stdio_line(Side.CLIENT, init, time=T0),
        stdio_line(Side.SERVER, {"jsonrpc": "2.0", "id": 0, "result": done}, time=T0 + 0.01),
        stdio_line(Side.CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_draft",
                   "arguments": {}}}, time=T0 + 1, probe={"name": "cancel-race", **calibrate}),
        stdio_line(Side.SERVER, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, time=T0 + 1.4),
        stdio_line(Side.CLIENT, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create_draft",
                   "arguments": {}}}, time=T0 + 5, probe={"name": "cancel-race", **race}),
        stdio_line(Side.CLIENT, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
                   time=T0 + 5.1, probe={"name": "cancel-race", **race, "phase": "cancel"}),
    ]  # fmt: skip
    for line in lines:
        lane.log.add(line)
    for case, read, at, value in (("calibrate", "before", 0.9, 0), ("calibrate", "after", 1.5, 1),
                                  ("race", "before", 4.9, 1), ("race", "after", 6.3, 2)):  # fmt: skip
        lane.at(at)
        lane.witness(f"write/create_draft/{case}", read, value, tool="create_draft", phase=case)
    verdict = judge(lane.log, spec, "timed_out_calls_leave_no_late_write")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.reason.startswith(
        "2025-11-25 over stdio, create_draft: sent +0 ms, gave up +100 ms (sent notifications/cancelled), "
        "witness count read +1300 ms: 1 → 2"
    )


# -- BEH-07 --------------------------------------------------------------------------------------
def test_a_handle_presented_by_another_principal_is_refused(spec: SpecSet) -> None:
    """Spec-mandated (BEH-07): the other principal gets a tool error."""
    lane = Lane()
    lane.handle(result=tool_error("no draft 'd_1'"))
    assert judge(lane.log, spec, "handles_do_not_authenticate").outcome is Outcome.PASSED


def test_a_handle_that_opens_someone_elses_record_fails(spec: SpecSet) -> None:
    """Spec-mandated (BEH-07): a result, and the canary in it, for another principal's handle."""
    lane = Lane()
    lane.handle(result=success({"id": "d_1", "body": "mcp-assay-canary-1"}))
    verdict = judge(lane.log, spec, "handles_do_not_authenticate")
    assert verdict.outcome is Outcome.FAILED
    assert "reader presented writer's handle to read_draft" in verdict.reason
    assert "carries the canary" in verdict.reason


def test_a_refusal_that_quotes_the_record_still_leaks(spec: SpecSet) -> None:
    """Spec-mandated (BEH-07): an error that carries the canary gives the contents away."""
    lane = Lane()
    lane.handle(result=tool_error("draft d_1 (mcp-assay-canary-1) belongs to writer"))
    assert judge(lane.log, spec, "handles_do_not_authenticate").outcome is Outcome.FAILED


def test_no_handle_case_is_not_verified(spec: SpecSet) -> None:
    """Spec-mandated (BEH-07): without handle traffic nothing is established."""
    lane = Lane()
    lane.call("list_drafts", {}, probe={"name": "read-tool", **lane.tags("read/x")})
    assert judge(lane.log, spec, "handles_do_not_authenticate").outcome is Outcome.NOT_VERIFIED


def _protected_handle_lane(**answer: object) -> Lane:
    lane = lane_with_calibration()
    lane.refusal("anonymous", 2, 2, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=2.5)
    lane.handle(**answer)  # type: ignore[arg-type]
    return lane


def test_auth_35_judges_2026_handles_like_beh_07(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-35): possession of another principal's handle is not authentication."""
    refused = _protected_handle_lane(result=tool_error("no draft 'd_1'"))
    assert judge(refused.log, spec, "handle_possession_is_not_authentication").outcome is Outcome.PASSED
    served = _protected_handle_lane(result=success({"id": "d_1", "body": "mcp-assay-canary-1"}))
    verdict = judge(served.log, spec, "handle_possession_is_not_authentication")
    assert verdict.outcome is Outcome.FAILED and "carries the canary" in verdict.reason


def test_auth_35_needs_a_handle_and_authorization_in_use(spec: SpecSet) -> None:
    """Tool-defined: no handle case is not verified; an open server makes it not applicable."""
    lane = lane_with_calibration()
    lane.refusal("anonymous", 2, 2, error=NOT_AUTHORIZED, status=401, principal="anonymous", start=2.5)
    verdict = judge(lane.log, spec, "handle_possession_is_not_authentication")
    assert verdict.outcome is Outcome.NOT_VERIFIED and "configure handles" in verdict.reason
    open_lane = Lane()
    open_lane.handle(result=tool_error("no draft"))
    assert judge(open_lane.log, spec, "handle_possession_is_not_authentication").outcome is Outcome.NOT_APPLICABLE


# -- BEH-08 --------------------------------------------------------------------------------------
def test_a_read_that_changes_nothing_passes_and_one_that_writes_fails(spec: SpecSet) -> None:
    """Spec-mandated (BEH-08): reads are reads."""
    lane = Lane()
    lane.read(3, 3)
    assert judge(lane.log, spec, "reads_change_nothing").outcome is Outcome.PASSED
    lane = Lane()
    lane.read(3, 4)
    verdict = judge(lane.log, spec, "reads_change_nothing")
    assert verdict.outcome is Outcome.FAILED and "used as a read, and witness count moved 3 → 4" in verdict.reason
    lane = Lane()
    lane.stability(1, 2)
    lane.read(3, 3)
    assert judge(lane.log, spec, "reads_change_nothing").outcome is Outcome.NOT_VERIFIED


def test_passive_traffic_without_behaviour_cases_is_not_verified(spec: SpecSet) -> None:
    """Tool-defined: the BEH rules need the suite's tagged cases; plain traffic establishes nothing."""
    lane = Lane()
    lane.call("create_draft", {"title": "t"}, probe={})
    for check in ("refused_calls_change_nothing", "timed_out_calls_leave_no_late_write", "reads_change_nothing"):
        assert judge(lane.log, spec, check).outcome is Outcome.NOT_VERIFIED
