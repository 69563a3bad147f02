"""``--inject`` with scripted clients: each broken one is caught with its requirement ID, the correct ones pass.

One official Python SDK server (stdio through ``mcp-assay tap`` for the stdio families, Streamable
HTTP behind a proxy for the rest); one proxy or tap session per client, running only the family the
client is scripted for (each case fires once per session). The clients are in
``tests/peers/inject_clients.py``. Besides the verdict each broken client earns, every session is
checked for the promise that matters most: no answer mcp-assay injected is ever held against the
server, and the recording judges again to the same verdicts. Each session runs once per test run, however many
test processes read it (``tests/peers/once.py``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_assay.addon.inject import FAULTS
from mcp_assay.cli import cli
from mcp_assay.spec import SpecSet
from tests.peers.assay import wait_until_exchanges_end
from tests.peers.inject_clients import CAUGHT, CORRECT, HTTP_SCENARIOS, STDIO_SCENARIOS, Lines
from tests.peers.inproc_proxy import injected_exchanges, inproc_proxy, outcome
from tests.peers.once import built_once
from tests.peers.process import PYTHON, free_port, http_server, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

HOLD_MS = 800
"""Longer than the scripted clients' patience (0.3 s), short enough for a quick test."""


@dataclass
class Session:
    report: dict[str, Any]
    recording: Path


class Sessions:
    """Each scenario's session, run the first time a test of this run asks for it (in whichever xdist worker) and
    read from its files by every other test: the clients only talk, and a session is judged once, so the tests
    that read one session's report and recording share it. The HTTP scenarios' SDK server starts with the first
    HTTP session a worker runs (and ends with the module)."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, spec: SpecSet, spec_path: Path) -> None:
        self.tmp_path_factory, self.spec, self.spec_path = tmp_path_factory, spec, spec_path
        self.stack = ExitStack()
        self.origin: str | None = None
        self.read: dict[str, Session] = {}

    def __getitem__(self, name: str) -> Session:
        if name not in self.read:
            folder = built_once(self.tmp_path_factory, f"inject-{name}", lambda folder: self.build(name, folder))
            report = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
            self.read[name] = Session(report, folder / f"{name}.jsonl")
        return self.read[name]

    def build(self, name: str, folder: Path) -> None:
        if name in HTTP_SCENARIOS:
            family, client = HTTP_SCENARIOS[name]
            options = {"mcp_assay_inject": family, "mcp_assay_inject_hold_ms": HOLD_MS}
            with inproc_proxy(self.server_origin(), folder, self.spec, options=options, name=name) as proxy:
                client(proxy.url)
                wait_until_exchanges_end(proxy.record)
            return
        family, stdio_client = STDIO_SCENARIOS[name]
        report, recording = folder / f"{name}.json", folder / f"{name}.jsonl"
        command = [
            PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(self.spec_path), "--inject", family,
            "--inject-hold-ms", str(HOLD_MS), "--record", str(recording), "--report", f"json:{report}",
            "--live", "off", "--", *sdk_server_command(),
        ]  # fmt: skip
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        lines = Lines(process)
        try:
            stdio_client(lines)
        finally:
            lines.close()

    def server_origin(self) -> str:
        if self.origin is None:
            port = free_port()
            server = self.stack.enter_context(http_server(sdk_server_command(port=port), port))
            self.origin = server.url.removesuffix("/mcp")
        return self.origin


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory, spec: SpecSet, spec_path: Path) -> Iterator[Sessions]:
    sessions = Sessions(tmp_path_factory, spec, spec_path)
    with sessions.stack:
        yield sessions


@pytest.mark.parametrize(
    ("scenario", "check", "requirement", "source"), CAUGHT, ids=[f"{s}-{r}" for s, _, r, _ in CAUGHT]
)
def test_a_broken_client_is_caught_with_the_requirement_of_its_mistake(
    sessions: Sessions, scenario: str, check: str, requirement: str, source: str
) -> None:
    """Spec-mandated: each client is wrong in one way, and the reaction rule for its family says so."""
    (result,) = [item for item in sessions[scenario].report["results"] if item["check"] == check]
    assert result["outcome"] == "failed", result["reason"]
    assert requirement in result["requirements"] and result["side"] == "client"
    assert result["source"] == source, result


@pytest.mark.parametrize("scenario", sorted(CORRECT))
def test_a_correct_client_passes_its_reactions_and_fails_nothing(sessions: Sessions, scenario: str) -> None:
    """Spec-mandated: the reactions the specification asks for pass, and no client check fails."""
    report = sessions[scenario].report
    for check in CORRECT[scenario]:
        assert outcome(report, check) == "passed", (check, report["notes"])
    failed = [item for item in report["results"] if item["outcome"] == "failed" and item["side"] == "client"]
    assert failed == [], [(item["check"], item["reason"]) for item in failed]


@pytest.mark.parametrize("scenario", sorted([*HTTP_SCENARIOS, *STDIO_SCENARIOS]))
def test_no_injected_answer_is_blamed_on_the_server(sessions: Sessions, scenario: str) -> None:
    """Tool-defined: a server-side result never rests on an exchange mcp-assay answered, and every injection
    says so in the report."""
    session = sessions[scenario]
    marked = injected_exchanges(session.recording)
    assert marked, "the injection never fired"
    for item in session.report["results"]:
        for evidence in item["evidence"] if item["side"] != "client" else ():
            part = marked.get(evidence["exchange"])
            if part is None:
                continue
            # a check of both sides may judge the client's own request in such an exchange, never the answer
            clients_part = part == "client" or (part == "http" and evidence["message"] == 0)
            assert item["side"] == "both" and clients_part, (item["check"], evidence)
    assert any(note.startswith("injected inject-") for note in session.report["notes"])


AGAIN = ["headers-correct", "cut-correct", "hold-broken-request", "stdio-version-broken", "counter-offer-broken"]


@pytest.mark.parametrize("scenario", AGAIN)
def test_the_recording_judges_again_to_the_same_verdicts(
    sessions: Sessions, scenario: str, spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined: `mcp-assay validate` of a session with injected answers reproduces every verdict."""
    session = sessions[scenario]
    again = tmp_path / "again.json"
    result = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(session.recording), "--report", f"json:{again}"]
    )
    assert result.exit_code in (0, 1), result.output
    offline = json.loads(again.read_text())

    def verdicts(report: dict[str, Any]) -> set[tuple[str, str, str, int]]:
        return {(r["check"], r["outcome"], r["source"], r["violations"]) for r in report["results"]}

    assert verdicts(offline) == verdicts(session.report)


@pytest.mark.parametrize("scenario", sorted([*HTTP_SCENARIOS, *STDIO_SCENARIOS]))
def test_each_fired_case_is_judged_as_injected_by_one_of_its_reactions(sessions: Sessions, scenario: str) -> None:
    """Tool-defined (issue 30): a verdict counts as ``injected`` only when a finding of it names the injected
    exchange (the request mcp-assay answered, held or reshaped), not the client's later reaction (a failed verdict:
    when all its failures do). Each case that fired and whose reactions failed has at least one failure that says
    so; a fault rule whose findings all name the reaction instead reads as passive traffic, and fails here (see
    docs/development.md, "Add a fault")."""
    report = sessions[scenario].report
    fired = {note.split(":")[0].removeprefix("injected ") for note in report["notes"] if note.startswith("injected ")}
    by_check = {item["check"]: item for item in report["results"]}
    for name in fired:
        reactions = {reaction.check.__name__ for case in FAULTS if case.name == name for reaction in case.reactions}
        judged = [by_check[check] for check in reactions if check in by_check]
        judged = [item for item in judged if item["outcome"] == "failed"]
        if not judged:
            continue  # a correct client: a pass is injected only when every instance judged is (mixed: passive)
        sources = {item["check"]: item["source"] for item in judged}
        assert "injected" in sources.values(), (name, sources)


def test_every_scenario_says_what_it_shows() -> None:
    """Tool-defined: a scripted client added without its expectation (in ``CAUGHT`` or ``CORRECT``) is noticed."""
    shown = {scenario for scenario, *_ in CAUGHT} | set(CORRECT)
    assert shown == {*HTTP_SCENARIOS, *STDIO_SCENARIOS}
