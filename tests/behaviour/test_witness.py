"""Witness reads: a value or a named failure, each recorded as an observation (never a silent None)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp_assay.cases import Facts
from mcp_assay.spec import SpecSet
from mcp_assay.suite.behaviour.config import BehaviourConfig, Witness
from mcp_assay.suite.behaviour.lanes import Lane
from mcp_assay.suite.behaviour.witness import Read, WitnessReader
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.wire.model import Observation


async def _no_connection(**_: Any) -> Any:
    raise AssertionError("a command or HTTP witness opens no MCP connection")


def read(spec: SpecSet, witness: Witness) -> tuple[Read, Observation]:
    revision = spec.require("2026-07-28")
    lane = Lane(revision, "http", SuiteConfig(url="http://127.0.0.1:9/mcp"), BehaviourConfig(), _no_connection)
    recorded: list[Observation] = []
    reader = WitnessReader(lane, recorded.append, lambda prefix: f"{prefix}1")
    result = asyncio.run(reader.read(witness, case="c1", read="before", step=Facts(tool="create_draft")))
    (observation,) = recorded
    return result, observation


def command(code: str, **options: Any) -> Witness:
    return Witness(name="w", kind="command", argv=(sys.executable, "-c", code), **options)


def test_a_command_witness_is_reduced_by_its_extract_and_recorded(spec: SpecSet) -> None:
    """Tool-defined: stdout parsed as JSON, reduced by the path, and recorded with the case tags."""
    result, observation = read(spec, command("print('{\"drafts\": [1, 2, 3]}')", extract="drafts|len"))
    assert result.ok and result.value == 3
    assert observation.kind == "witness"
    assert observation.data == {
        "case": "c1", "read": "before", "witness": "w", "via": "command", "lane": "2026-07-28",
        "transport": "http", "tool": "create_draft", "value": 3,
    }  # fmt: skip


def test_a_command_without_extract_is_its_stripped_output(spec: SpecSet) -> None:
    """Tool-defined: the default value of a command witness is what it printed, stripped."""
    result, _ = read(spec, command("print('  7 ')"))
    assert result.value == "7"


def test_failing_reads_are_named_not_taken_as_unchanged(spec: SpecSet) -> None:
    """Tool-defined: exit codes, timeouts, output that does not fit, and unreachable URLs are read errors."""
    failed, observation = read(spec, command("import sys; sys.stderr.write('locked'); sys.exit(3)"))
    assert failed.error == f"{sys.executable} exited with code 3: locked"
    assert "value" not in observation.data and observation.data["error"] == failed.error
    slow, _ = read(spec, command("import time; time.sleep(5)", timeout_ms=200))
    assert slow.error == f"{sys.executable} did not finish within 200 ms"
    shapeless, _ = read(spec, command("print('not json')", extract="count"))
    assert shapeless.error is not None and "printed no JSON" in shapeless.error
    missing, _ = read(spec, command("print('{}')", extract="count"))
    assert missing.error == "extract 'count': no key 'count' at the top"
    http = Witness(name="w", kind="http", url="http://127.0.0.1:9/count", timeout_ms=500)
    unreachable, _ = read(spec, http)
    assert unreachable.error is not None and unreachable.error.startswith("GET http://127.0.0.1:9/count failed")
