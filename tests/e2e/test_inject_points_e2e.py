"""Every injection case on stdio meets its point against the reference client it is meant for.

The HTTP cases are met by the official Python SDK's and the TypeScript SDK v2's clients in
``test_inject_sdk_e2e.py`` (its list of cases is the registry's). Here the official Python SDK client
spawns ``mcp-assay tap --inject FAMILY`` in front of the SDK server, once per family that has a case on
stdio and per era its cases land in (a tap is one session, and each case fires once per session): a
2026-07-28 client for the modern cases, a legacy one for the 2025 ones. The families, eras and cases
are read from the registry, so a new fault on stdio that a reference client never meets ("never met its
point") fails here, with the note the tap wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_assay.addon.inject import FAULTS
from mcp_assay.addon.inject.fault import Fault, FaultFamily
from mcp_assay.vocabulary.protocol import Era
from tests.peers.inproc_proxy import injected_in
from tests.peers.once import built_once
from tests.peers.process import HERE as PEERS
from tests.peers.process import PYTHON

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

HOLD_MS = 200
"""Short: the point is met when the answer is held, whatever the client does next."""
MODE = {Era.MODERN: "2026-07-28", Era.HANDSHAKE: "legacy"}
STDIO_FAULTS = tuple(case for case in FAULTS if "stdio" in case.transports)


@dataclass(frozen=True)
class Session:
    family: FaultFamily
    era: Era

    @property
    def name(self) -> str:
        return f"{self.family.name}-{self.era.value}"


SESSIONS = sorted({Session(case.family, case.era) for case in STDIO_FAULTS}, key=lambda item: item.name)


async def _connect(command: list[str], mode: str, errlog: TextIO) -> None:
    """One client session as an application makes it; a fault may end it (a refused version, a counter-offer)."""
    params = StdioServerParameters(command=command[0], args=command[1:])
    try:
        with anyio.fail_after(20):
            async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
                await client.list_tools()
                await client.call_tool("add", {"a": 1, "b": 2})
    except Exception:  # noqa: BLE001 - the client giving up after a fault is its reaction, not this test's concern
        return


async def _drive(spec_path: Path, folder: Path) -> None:
    """The sessions side by side (each its own tap, server and client): the wait is one session's."""
    with (folder / "stderr.txt").open("w") as errlog:
        async with anyio.create_task_group() as group:
            for session in SESSIONS:
                group.start_soon(_session, spec_path, folder, session, errlog)


async def _session(spec_path: Path, folder: Path, session: Session, errlog: TextIO) -> None:
    command = [
        PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path.resolve()), "--inject", session.family.name,
        "--inject-hold-ms", str(HOLD_MS), "--live", "off", "--record", str(folder / f"{session.name}.jsonl"),
        "--report", f"json:{folder / session.name}.json", "--", PYTHON, str(PEERS / "sdk_server.py"), "stdio",
    ]  # fmt: skip
    await _connect(command, MODE[session.era], errlog)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> Path:
    """The sessions, run once per test run whichever worker asks first (``tests/peers/once.py``): the tests only
    read their reports and recordings."""
    return built_once(tmp_path_factory, "inject-points", lambda made: anyio.run(_drive, spec_path, made))


def _notes(folder: Path, session: Session) -> list[str]:
    report = folder / f"{session.name}.json"
    for _ in range(200):  # the tap writes its report as it exits, just after the client closed it
        if report.exists() and report.stat().st_size:
            break
        anyio.run(anyio.sleep, 0.05)
    return [str(note) for note in json.loads(report.read_text()).get("notes", [])]


@pytest.mark.parametrize("session", SESSIONS, ids=[session.name for session in SESSIONS])
def test_each_stdio_case_meets_its_point_against_the_python_sdk_client(folder: Path, session: Session) -> None:
    """Tool-defined (issue 30): each case of the family in this era fired in the session, and none is left saying
    it never met its point."""
    expected: list[Fault] = [case for case in STDIO_FAULTS if case.family is session.family and case.era is session.era]
    notes = _notes(folder, session)
    met = injected_in(folder / f"{session.name}.jsonl")
    missing = [case.name for case in expected if (case.name, case.era.value) not in met]
    assert missing == [], [note for note in notes if "never met its point" in note] or notes
    assert not [note for note in notes if "never met its point" in note and session.era.value in note], notes


def test_the_sessions_cover_every_stdio_case() -> None:
    """The sessions are derived from the registry: every stdio case lands in one of them."""
    assert {(case.family, case.era) for case in STDIO_FAULTS} == {(item.family, item.era) for item in SESSIONS}
    assert STDIO_FAULTS, "no injection case on stdio: the registry lost them"
