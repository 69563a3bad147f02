"""A listen stream watching a configured write: the notifications it brings are judged (issue 13 §4).

The broken-suite server runs in process behind httpx.MockTransport, serving resource subscriptions:
``append_note`` changes ``file:///broken/notes.txt`` and every listen stream subscribed to it hears
``notifications/resources/updated``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.behaviour.config import parse_behaviour
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import NOTES, Server
from tests.suite.scripted import mock, respond

CHECK = "listen_notifications_carry_the_subscription_id"


ONLY = "listen-writes,SUB-08"
"""The case and the requirement these tests are about; a pass needs the whole run (a narrowed run's pass is not
verified: a family left out could contradict it)."""


def run(spec: SpecSet, server: Server, write_tools: dict[str, Any] | None, only: str | None = ONLY) -> Report:
    behaviour = parse_behaviour({"write_tools": write_tools}) if write_tools is not None else None
    config = SuiteConfig(
        url="http://127.0.0.1:9/mcp", tool_args={"echo": {"message": "hi"}}, timeout=2.0, stream_budget_ms=300,
        behaviour=behaviour, only=only,
    )  # fmt: skip
    return asyncio.run(arun(config, spec, mock=mock(respond(server))))


def sub_08(report: Report) -> tuple[Outcome, str]:
    """SUB-08 as the 2026-07-28 run judged it; listen streams do not exist in 2025-11-25."""
    verdicts = [verdict for verdict in report.results if "SUB-08" in verdict.requirements]
    modern = [verdict for verdict in verdicts if verdict.revision == "2026-07-28"]
    assert len(modern) == 1, [(verdict.check, verdict.revision) for verdict in verdicts]
    assert all(verdict.outcome is Outcome.NOT_APPLICABLE for verdict in verdicts if verdict not in modern)
    verdicts = modern
    return verdicts[0].outcome, verdicts[0].reason


WRITE = {"append_note": {"arguments": {"text": "hello"}, "changes": [NOTES["uri"]]}}


def test_a_write_while_listening_brings_a_notification_that_names_its_subscription(spec: SpecSet) -> None:
    """Spec-mandated (SUB-08): the write's notifications/resources/updated names the listen id."""
    report = run(spec, Server(subscribe=True), WRITE, only=None)
    assert sub_08(report)[0] is Outcome.PASSED
    assert not [note for note in report.notes if "no notification reached the stream" in note]


def test_a_notification_without_the_subscription_id_fails_sub_08(spec: SpecSet) -> None:
    """Spec-mandated (SUB-08): every notification on a listen stream carries the subscription id."""
    outcome, reason = sub_08(run(spec, Server("updated-without-subscription-id"), WRITE))
    assert outcome is Outcome.FAILED and "notifications/resources/updated" in reason


def test_without_a_write_tool_naming_what_it_changes_sub_08_is_not_verified_and_says_how(spec: SpecSet) -> None:
    """Tool-defined: the case needs `changes` on a write tool; a tool the user did not name is never called."""
    outcome, reason = sub_08(run(spec, Server(subscribe=True), None))
    assert outcome is Outcome.NOT_VERIFIED and "changes: [<uri>, …]" in reason


def test_a_server_without_resource_subscriptions_is_not_asked_to_notify(spec: SpecSet) -> None:
    """Tool-defined: without resources.subscribe the stream cannot subscribe, so the case is not verified."""
    outcome, reason = sub_08(run(spec, Server(), WRITE))
    assert outcome is Outcome.NOT_VERIFIED and "does not advertise resources.subscribe" in reason


def test_a_write_that_brings_no_notification_is_noted(spec: SpecSet) -> None:
    """Tool-defined: a served write that a subscriber never hears of is worth a note."""
    quiet = {"append_note": {"arguments": {"text": "hello"}, "changes": ["file:///broken/readme.txt"]}}
    report = run(spec, Server(subscribe=True), quiet)
    assert any("append_note was served while a subscription to file:///broken/readme.txt" in note
               for note in report.notes), report.notes  # fmt: skip


@pytest.mark.parametrize("changes", ["file:///x", ["not a uri"], [3]])
def test_changes_must_be_a_list_of_uris(changes: Any) -> None:
    """Tool-defined: checked when the config is read."""
    with pytest.raises(ConfigError, match=r"write_tools\.append_note\.changes: expected a list of resource URIs"):
        parse_behaviour({"write_tools": {"append_note": {"changes": changes}}})
