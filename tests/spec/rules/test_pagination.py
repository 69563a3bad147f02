"""Pagination (PAGE-): each rule passes good traffic, fails bad traffic, and says when it cannot tell."""

from __future__ import annotations

from typing import Any

from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Outcome
from tests.factories import judge, legacy_call, legacy_session, log_of
from tests.spec.rules._capability_builders import ADD, ECHO, failing, prompts_list, tools_list

SECOND = {**ECHO, "name": "second"}


def outcome(spec: SpecSet, check: str, *items: Any) -> Outcome:
    return judge(log_of(*items), spec, check).outcome


def test_string_cursors_pass_page_01(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-01)."""
    walk = (tools_list([ADD], next_cursor="c1"), tools_list([ECHO], cursor="c1", ident=2))
    assert outcome(spec, "cursors_are_strings", *walk) is Outcome.PASSED


def test_numeric_cursors_fail_page_01(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-01): a number is not a cursor, in either direction."""
    server = tools_list([ADD], next_cursor=2)  # type: ignore[arg-type]
    verdict = judge(log_of(server), spec, "cursors_are_strings")
    assert verdict.outcome is Outcome.FAILED
    assert "nextCursor" in verdict.reason
    client = tools_list([ECHO], cursor=2)  # type: ignore[arg-type]
    assert outcome(spec, "cursors_are_strings", client) is Outcome.FAILED


def test_page_01_is_not_verified_without_list_traffic(spec: SpecSet) -> None:
    assert outcome(spec, "cursors_are_strings", failing("tools/call", {"name": "x"}, -32602)) is Outcome.NOT_VERIFIED


def test_sending_back_an_issued_cursor_passes_page_02(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-02)."""
    walk = (tools_list([ADD], next_cursor="c1"), tools_list([ECHO], cursor="c1", ident=2))
    assert outcome(spec, "clients_send_only_cursors_the_server_issued", *walk) is Outcome.PASSED


def test_an_altered_or_foreign_cursor_fails_page_02(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-02): byte-for-byte, and from the same method."""
    altered = (tools_list([ADD], next_cursor="c1"), tools_list([ECHO], cursor="c2", ident=2))
    assert outcome(spec, "clients_send_only_cursors_the_server_issued", *altered) is Outcome.FAILED
    prompts = failing("prompts/list", {}, -32603)  # the server has no prompts page to offer
    foreign = (tools_list([ADD], next_cursor="c1"), prompts, failing("prompts/list", {"cursor": "c1"}, -32602))
    verdict = judge(log_of(*foreign), spec, "clients_send_only_cursors_the_server_issued")
    assert verdict.outcome is Outcome.FAILED
    assert "tools/list" in verdict.reason


def test_a_cursor_of_unknown_origin_is_not_verified_for_page_02(spec: SpecSet) -> None:
    """Tool-defined: the capture may have started after the page that issued it."""
    assert outcome(spec, "clients_send_only_cursors_the_server_issued", tools_list([ECHO], cursor="c9")) is (
        Outcome.NOT_VERIFIED
    )


def test_following_an_empty_cursor_passes_page_03(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-03): "" is a cursor in 2026."""
    walk = (tools_list([ADD], next_cursor=""), tools_list([ECHO], cursor="", ident=2))
    assert outcome(spec, "clients_follow_empty_string_cursors", *walk) is Outcome.PASSED


def test_stopping_at_an_empty_cursor_while_following_others_fails_page_03(spec: SpecSet) -> None:
    walk = (
        tools_list([ADD], next_cursor="c1"),
        tools_list([ECHO], cursor="c1", next_cursor="", ident=2),
    )
    assert outcome(spec, "clients_follow_empty_string_cursors", *walk) is Outcome.FAILED


def test_page_03_is_not_verified_when_the_client_never_follows_cursors(spec: SpecSet) -> None:
    assert outcome(spec, "clients_follow_empty_string_cursors", tools_list([ADD], next_cursor="")) is (
        Outcome.NOT_VERIFIED
    )


def test_a_terminating_walk_without_repeats_passes_page_04(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-04)."""
    walk = (tools_list([ADD], next_cursor="c1"), tools_list([ECHO], cursor="c1", ident=2))
    assert outcome(spec, "cursors_are_stable_and_walks_terminate", *walk) is Outcome.PASSED


def test_loops_duplicates_and_unstable_pages_fail_page_04(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-04): a non-advancing nextCursor makes clients loop."""
    loop = (tools_list([ADD], next_cursor="c1"), tools_list([ECHO], cursor="c1", next_cursor="c1", ident=2))
    verdict = judge(log_of(*loop), spec, "cursors_are_stable_and_walks_terminate")
    assert verdict.outcome is Outcome.FAILED
    assert "loops" in verdict.reason
    duplicate = (tools_list([ADD], next_cursor="c1"), tools_list([ADD], cursor="c1", ident=2))
    assert outcome(spec, "cursors_are_stable_and_walks_terminate", *duplicate) is Outcome.FAILED
    unstable = (
        tools_list([ADD], next_cursor="c1"),
        tools_list([ECHO], cursor="c1", ident=2),
        tools_list([SECOND], cursor="c1", ident=3),
    )
    assert outcome(spec, "cursors_are_stable_and_walks_terminate", *unstable) is Outcome.FAILED


def test_a_prompt_name_listed_twice_on_one_page_fails_page_04(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-04: a walk has no duplicates): prompts/get names one prompt, so two of a name hide one."""
    greet = {"name": "greet", "description": "Greet someone."}
    twice = prompts_list([greet, {**greet, "description": "Greet someone else."}])
    verdict = judge(log_of(twice), spec, "cursors_are_stable_and_walks_terminate")
    assert verdict.outcome is Outcome.FAILED and "prompts/list listed 'greet' twice on page 1" in verdict.reason


def test_page_04_is_not_verified_for_single_page_listings(spec: SpecSet) -> None:
    assert outcome(spec, "cursors_are_stable_and_walks_terminate", tools_list([ADD])) is Outcome.NOT_VERIFIED


def test_an_invalid_cursor_answered_with_minus_32602_passes_page_05(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-05)."""
    answer = failing("tools/list", {"cursor": "mcp-conformance-invalid-cursor"}, -32602)
    assert outcome(spec, "invalid_cursors_get_invalid_params", answer) is Outcome.PASSED


def test_an_invalid_cursor_served_or_answered_otherwise_fails_page_05(spec: SpecSet) -> None:
    served = tools_list([ADD], cursor="whatever", probe={"name": "invalid-cursor", "invalid": True})
    assert outcome(spec, "invalid_cursors_get_invalid_params", served) is Outcome.FAILED
    internal = failing("prompts/list", {"cursor": "mcp-assay-invalid-cursor"}, -32603)
    assert outcome(spec, "invalid_cursors_get_invalid_params", internal) is Outcome.FAILED


def test_page_05_is_not_verified_without_invalid_cursors(spec: SpecSet) -> None:
    assert outcome(spec, "invalid_cursors_get_invalid_params", tools_list([ADD])) is Outcome.NOT_VERIFIED


def test_cursors_reused_within_the_session_pass_and_across_sessions_fail_page_06(spec: SpecSet) -> None:
    """Spec-mandated (PAGE-06): 2025-11-25 cursors belong to their session."""
    first = legacy_call("tools/list", None, {"tools": [ADD], "nextCursor": "c1"}, session="sess-1")
    same = legacy_call("tools/list", {"cursor": "c1"}, {"tools": [ECHO]}, ident=2, session="sess-1")
    setup = legacy_session("sess-1", capabilities={"tools": {}})
    assert outcome(spec, "cursors_stay_in_their_session", setup, first, same) is Outcome.PASSED
    other_setup = legacy_session("sess-2", capabilities={"tools": {}})
    elsewhere = legacy_call("tools/list", {"cursor": "c1"}, {"tools": [ECHO]}, ident=2, session="sess-2")
    assert outcome(spec, "cursors_stay_in_their_session", setup, first, *other_setup, elsewhere) is Outcome.FAILED


def test_page_06_is_not_applicable_to_2026(spec: SpecSet) -> None:
    walk = (tools_list([ADD], next_cursor="c1"), tools_list([ECHO], cursor="c1", ident=2))
    assert outcome(spec, "cursors_stay_in_their_session", *walk) is Outcome.NOT_APPLICABLE
