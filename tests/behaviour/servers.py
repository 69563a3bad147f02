"""Running the behaviour cases end to end: the drafts server builds, configs, and one suite run.

Servers run as subprocesses on loopback (free ports, bounded waits); the suite runs in-process
through the CLI, and each run writes
a JSON report, the terminal report and a recording for re-validation. ``--only`` names the
behaviour checks, so the behaviour family runs (plus the tools family, which feeds BEH-03 too).
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from mcp_assay.cli import cli
from tests.peers.process import free_port, http_server

ROOT = Path(__file__).resolve().parents[2]
DRAFTS = ROOT / "examples" / "servers" / "drafts_server.py"
EXAMPLE = ROOT / "examples" / "mcp-assay.yaml"
TOKENS = {"reader": "reader-token-5b1e7a", "writer": "writer-token-9c2d4f"}
CHECKS = {
    "BEH-03": "forbidden_arguments_are_not_accepted",
    "BEH-04": "principals_are_offered_the_expected_tools",
    "BEH-05": "refused_calls_change_nothing",
    "BEH-06": "timed_out_calls_leave_no_late_write",
    "BEH-07": "handles_do_not_authenticate",
    "BEH-08": "reads_change_nothing",
    "AUTH-21": "invalid_tokens_have_no_side_effect",
    "AUTH-24": "hidden_tools_are_not_callable",
    "AUTH-25": "per_principal_lists_are_private",
    "AUTH-33": "sessions_are_bound_to_their_principal",
    "AUTH-35": "handle_possession_is_not_authentication",
}
"""The check of :mod:`mcp_assay.spec.rules.behaviour.principals` for each requirement."""
PRECEDENCE = {"failed": 3, "passed": 2, "not_verified": 1, "not_applicable": 0}
ONLY = ",".join(CHECKS.values())
"""``--only`` for these checks alone (other rule areas cite BEH-01/03/09 and would pull in their families)."""


def environment(store: Path) -> dict[str, str]:
    return {
        "DRAFTS_READER_TOKEN": TOKENS["reader"],
        "DRAFTS_WRITER_TOKEN": TOKENS["writer"],
        "DRAFTS_STORE": str(store),
    }


@contextmanager
def drafts_http(build: str, store: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, str(DRAFTS), "--build", build, "--store", str(store)]
    for role, token in TOKENS.items():
        command += ["--token", f"{role}={token}"]
    with http_server([*command, "http", str(port)], port) as server:
        yield server.url


def drafts_stdio(build: str, store: Path) -> str:
    return f"{sys.executable} {DRAFTS} --build {build} --store {store} stdio"


def example(**cancellation: Any) -> dict[str, Any]:
    """The shipped example config, with its cancellation block adjusted."""
    data: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data = copy.deepcopy(data)
    data["write_tools"]["create_draft"]["cancellation"].update(cancellation)
    return data


@dataclass
class Run:
    exit_code: int
    output: str
    report: dict[str, Any]
    text: str
    recording: Path

    def result(self, requirement: str) -> dict[str, Any]:
        """The result of this module's check for ``requirement`` (other rule areas cite some BEH IDs too).

        A run has one per revision it tested; they are merged the way a report merges a requirement (a
        failure wins, then a pass), with the reasons and evidence of every revision that had that outcome."""
        check = CHECKS[requirement]
        found = [item for item in self.report["results"] if item["check"] == check]
        assert found and len({item["revision"] for item in found}) == len(found), (requirement, check)
        winner = max(found, key=lambda item: PRECEDENCE[item["outcome"]])
        alike = [item for item in found if item["outcome"] == winner["outcome"]]
        return {
            **winner,
            "reason": "; ".join(item["reason"] for item in alike),
            "evidence": [evidence for item in alike for evidence in item["evidence"]],
            "violations": sum(item["violations"] for item in found),
            "judged": sum(item["judged"] for item in found),
        }

    def outcome(self, requirement: str) -> str:
        return str(self.result(requirement)["outcome"])

    def details(self, requirement: str) -> list[str]:
        return [str(item.get("detail", "")) for item in self.result(requirement)["evidence"]]

    def behaviour(self) -> dict[str, str]:
        """Outcome of every behaviour-case check."""
        return {requirement: self.outcome(requirement) for requirement in CHECKS if requirement.startswith("BEH-")}

    def notes(self, prefix: str) -> list[str]:
        return [note for note in self.report["notes"] if note.startswith(prefix)]


def run_suite(
    spec_path: Path,
    tmp_path: Path,
    target: list[str],
    config: dict[str, Any],
    env: dict[str, str],
    *extra: str,
    only: str | None = None,
) -> Run:
    number = len(list(tmp_path.glob("run-*.yaml")))
    base = tmp_path / f"run-{number}"
    config_path = base.with_suffix(".yaml")
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    report, text, recording = base.with_suffix(".json"), base.with_suffix(".txt"), base.with_suffix(".jsonl")
    only = only or ONLY
    result = CliRunner().invoke(
        cli,
        ["run", *target, "--config", str(config_path), "--spec-dir", str(spec_path), "--only", only,
         "--report", f"json:{report}", "--report", f"terminal:{text}", "--record", str(recording), *extra],
        env=env,
    )  # fmt: skip
    assert result.exit_code in (0, 1) and report.exists(), (result.output, result.exception)
    return Run(
        exit_code=result.exit_code,
        output=result.output,
        report=json.loads(report.read_text(encoding="utf-8")),
        text=text.read_text(encoding="utf-8"),
        recording=recording,
    )


def revalidate(spec_path: Path, tmp_path: Path, run: Run) -> dict[str, Any]:
    """``mcp-assay validate`` on the run's recording, as a JSON report."""
    out = tmp_path / f"validate-{run.recording.stem}.json"
    result = CliRunner().invoke(
        cli, ["validate", str(run.recording), "--spec-dir", str(spec_path), "--only", ONLY, "--report", f"json:{out}"]
    )
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def verdicts(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Outcome and reason of every BEH-citing check in a report."""
    return {
        item["check"]: (item["outcome"], item["reason"])
        for item in report["results"]
        if any(requirement.startswith("BEH") for requirement in item["requirements"])
    }
