"""`mcp-assay replay`'s answers before it sends anything: which finding, which evidence, which target.

Tool-defined (issue 27). What it does against live peers is in ``tests/e2e/test_replay_e2e.py``; here a
hand-built JSON report gives the cases a person gets wrong: a finding no report prints, one that names
several, evidence with no request, a client's finding, a flag for the other transport, an endpoint with
nothing listening (a run's --serve stopped its server).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mcp_assay.cli import cli
from mcp_assay.report.findings import finding_id
from mcp_assay.vocabulary.replays import Replay, shell_line
from mcp_assay.vocabulary.verdicts import Evidence, Side, Verdict
from tests.report.sample import failed_must, failed_should, sample_report

STDIO = Replay(transport="stdio", command="true", line='{"jsonrpc":"2.0","id":1,"method":"tools/list"}', answer_id="1")
HTTP = Replay(transport="http", method="POST", url="http://127.0.0.1:9/mcp", body="{}", modern=True)


def with_replay(result: Verdict, data: Replay | None) -> Verdict:
    evidence = Evidence(summary="stdio client → server", reproduction=shell_line(data) if data else "", replay=data)
    return replace(result, evidence=(evidence,))


def write(tmp_path: Path, *results: Verdict) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(sample_report(results=list(results)).to_json()), encoding="utf-8")
    return path


def replay(spec_path: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["replay", *args, "--spec-dir", str(spec_path)], env=env)


def test_a_finding_no_report_prints_is_a_usage_error(spec_path: Path, tmp_path: Path) -> None:
    path = write(tmp_path, with_replay(failed_must(), HTTP))
    result = replay(spec_path, str(path), "ffffff0")
    assert result.exit_code == 2 and "FINDING ffffff0: no finding of the report has that id" in result.output


def test_a_name_for_several_findings_lists_their_ids(spec_path: Path, tmp_path: Path) -> None:
    first = with_replay(failed_must(), HTTP)
    second = replace(first, revision="2025-11-25")
    result = replay(spec_path, str(write(tmp_path, first, second)), "RPC-15")
    assert result.exit_code == 2 and finding_id(first) in result.output and finding_id(second) in result.output


def test_a_file_that_is_no_report_is_a_usage_error(spec_path: Path, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello", encoding="utf-8")
    result = replay(spec_path, str(path), "abcd123")
    assert result.exit_code == 2 and "not a readable mcp-assay JSON report" in result.output


def test_evidence_without_a_request_is_nothing_to_judge(spec_path: Path, tmp_path: Path) -> None:
    result = replay(spec_path, str(write(tmp_path, with_replay(failed_must(), None))), finding_id(failed_must()))
    assert result.exit_code == 3 and "has no request to send again" in result.output


def test_a_finding_about_the_client_is_not_sent(spec_path: Path, tmp_path: Path) -> None:
    client = replace(with_replay(failed_must(), HTTP), side=Side.CLIENT)
    result = replay(spec_path, str(write(tmp_path, client)), finding_id(client))
    assert result.exit_code == 3 and "judges the client" in result.output


@pytest.mark.parametrize(
    ("data", "flag", "value", "other"),
    [
        (STDIO, "--url", "http://127.0.0.1:9/mcp", "--command"),
        (STDIO, "--serve", "python server.py --port 9", "--command"),
        (HTTP, "--command", "python server.py", "--url"),
    ],
)
def test_a_flag_for_the_other_transport_is_a_usage_error_and_its_twin_is_left_unused(
    spec_path: Path, tmp_path: Path, data: Replay, flag: str, value: str, other: str
) -> None:
    finding = with_replay(failed_should(), data)
    path = write(tmp_path, finding)
    given = replay(spec_path, str(path), finding_id(finding), flag, value)
    assert given.exit_code == 2 and f"give {other} instead" in given.output
    twin = {"--url": "MCP_ASSAY_URL", "--command": "MCP_ASSAY_COMMAND", "--serve": "MCP_ASSAY_SERVE"}[flag]
    unused = replay(spec_path, str(path), finding_id(finding), env={twin: value})
    assert unused.exit_code == 3, unused.output  # sent to the recorded peer, which is not there: nothing judged


def test_an_endpoint_with_nothing_listening_names_serve(spec_path: Path, tmp_path: Path) -> None:
    """A run's --serve stopped its server when the run ended: replaying its finding says how to start one."""
    finding = with_replay(failed_should(), HTTP)
    result = replay(spec_path, str(write(tmp_path, finding)), finding_id(finding))
    assert result.exit_code == 3 and "nothing listens at 127.0.0.1:9" in result.output, result.output
    assert "give --serve COMMAND to start it for the replay" in result.output
