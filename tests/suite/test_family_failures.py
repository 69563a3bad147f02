"""A probe family that fails inside mcp-assay ends as *not verified*; the run goes on and reports.

Whatever a server answers, the suite must not crash on it: a defect of the suite's own code that an
answer uncovers is named as such (a defect of mcp-assay, not of the server), the family's cases are
not verified, the other families still run and the report is written.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest

from mcp_assay.cases import tools as tool_cases
from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite import plan
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.probes import FAMILIES
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import Handler, mock, respond

URL = "http://127.0.0.1:9/mcp"
TWINS = [
    {
        "name": "twin",
        "description": "Needs an argument; read-only.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        "annotations": {"readOnlyHint": True},
    },
    {"name": "twin", "description": "Needs nothing.", "inputSchema": {"type": "object", "properties": {}}},
]


def _run(spec: SpecSet, handler: Handler, **settings: Any) -> Report:
    config = SuiteConfig(url=URL, **{"timeout": 2.0, "stream_budget_ms": 300, **settings})
    return asyncio.run(arun(config, spec, mock=mock(handler)))


def _listing_twins(inner: Handler) -> Handler:
    """The conformant scripted server, except that tools/list names two tools alike."""

    async def handler(request: httpx.Request) -> httpx.Response:
        response = await inner(request)
        body = json.loads(request.content) if request.content else None
        if isinstance(body, dict) and body.get("method") == "tools/list" and response.status_code == 200:
            answer = json.loads(response.content)
            if isinstance(answer.get("result"), dict):
                answer["result"]["tools"] = TWINS
                return httpx.Response(200, headers={"content-type": "application/json"}, json=answer)
        return response

    return handler


def _verdict(report: Report, check: str) -> Any:
    return next(item for item in report.results if item.check == check)


def test_two_tools_with_one_name_end_in_a_report(spec: SpecSet) -> None:
    """Tool-defined: a tools/list naming two tools alike (TOOL-08 fails it) is judged, not a crash.

    The bad-arguments case takes the required argument of the tool it chose, not of its twin."""
    report = _run(spec, _listing_twins(respond(Server())), only="TOOL")
    assert report.tested[:1] == ["2026-07-28"]
    unique = _verdict(report, "tool_names_are_well_formed_and_unique")
    assert unique.outcome is Outcome.FAILED and "twin" in unique.reason
    assert not [item for item in report.results if "defect of mcp-assay" in item.reason]


def test_an_exception_inside_a_family_is_not_verified_and_the_run_goes_on(
    spec: SpecSet, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Tool-defined: a bug in a probe family is named as mcp-assay's own, its cases are not verified, the
    next family still runs and the report is written; the traceback goes to the log, not to the user."""

    async def broken(ctx: SuiteContext) -> None:
        await ctx.client.request("tools/list", {}, probe=ctx.probe(tool_cases.LIST, "tools/list"))
        raise IndexError("list index out of range")

    tools = ProbeFamily(name="tools", cases=(tool_cases.CALL,), run=broken, capability="tools")
    prompts = next(family for family in FAMILIES if family.name == "prompts")
    monkeypatch.setattr(plan, "FAMILIES", (tools, prompts))
    with caplog.at_level(logging.ERROR, logger="mcp_assay"):
        report = _run(spec, respond(Server()), prompt_args={"greet": {"who": "x"}})
    blocked = _verdict(report, "tool_results_match_the_schema")
    assert blocked.outcome is Outcome.NOT_VERIFIED
    assert "defect of mcp-assay" in blocked.reason and "IndexError" in blocked.reason
    assert _verdict(report, "prompt_results_match_the_schema").outcome is Outcome.PASSED
    assert any("IndexError" in record.getMessage() or record.exc_info for record in caplog.records)
