"""The stock-client cases without the official SDK, and where the SDK cannot reach the server."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.probes import interop
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import mock, respond


def run(spec: SpecSet) -> Report:
    config = SuiteConfig(url="http://127.0.0.1:9/mcp", timeout=1.0, stream_budget_ms=300, only="sdk")
    return asyncio.run(arun(config, spec, mock=mock(respond(Server()))))


def sdk_verdicts(report: Report) -> dict[str, tuple[Outcome, str]]:
    """The stock-client verdicts of the 2026-07-28 run (the 2025-11-25 run tests them on its own)."""
    return {
        verdict.check: (verdict.outcome, verdict.reason)
        for verdict in report.results
        if "sdk" in verdict.check and verdict.revision == "2026-07-28"
    }


def test_without_the_sdk_the_cases_are_not_verified_and_say_so(spec: SpecSet, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined (issue 13 §3): the SDK is used when importable; without it nothing is claimed."""
    monkeypatch.setattr(interop, "sdk_available", lambda: False)
    found = sdk_verdicts(run(spec))
    assert found["a_stock_sdk_client_discovers_the_server"][0] is Outcome.NOT_VERIFIED
    assert all("the official SDK client is not installed" in reason for outcome, reason in found.values()
               if outcome is Outcome.NOT_VERIFIED), found  # fmt: skip


def test_an_sdk_client_that_cannot_reach_the_server_establishes_nothing(spec: SpecSet) -> None:
    """Tool-defined: the in-process server is not on a socket, so the SDK's own client gets no connection."""
    report = run(spec)
    outcome, reason = sdk_verdicts(report)["a_stock_sdk_client_discovers_the_server"]
    assert outcome is Outcome.NOT_VERIFIED and "could not complete it" in reason
    assert any("stock client: an unconfigured SDK client (mode auto, no headers) did not get through" in note
               for note in report.notes)  # fmt: skip


def test_whether_the_sdk_is_installed_is_known_without_importing_it() -> None:
    """Tool-defined: a run asks before its stock-client cases; a run over stdio skips them, so asking must not
    import the SDK (about 0.7 s of CPU in every run). Modules that are not there are told apart."""
    asked = subprocess.run(
        [sys.executable, "-c", "import sys; from mcp_assay.suite.probes import interop; "
         "print(interop.sdk_available(), 'mcp' in sys.modules, 'mcp.client' in sys.modules)"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert asked.stdout.split() == ["True", "False", "False"], asked.stdout + asked.stderr
    assert interop._findable("json.decoder") and interop._findable("mcp.client.streamable_http")
    assert not interop._findable("mcp.client.no_such_module") and not interop._findable("no_such_package.client")
    assert not interop._findable("json.decoder.not_a_package")


def test_an_sdk_installed_but_not_importable_leaves_the_cases_not_verified(
    spec: SpecSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: an SDK that is found but fails to import is a reason the cases were not run, never a crash."""
    monkeypatch.setitem(sys.modules, "mcp.client.streamable_http", None)  # importing it raises ImportError
    found = sdk_verdicts(run(spec))
    assert found["a_stock_sdk_client_discovers_the_server"][0] is Outcome.NOT_VERIFIED
    assert all("the official SDK client cannot be imported" in reason for outcome, reason in found.values()
               if outcome is Outcome.NOT_VERIFIED), found  # fmt: skip
