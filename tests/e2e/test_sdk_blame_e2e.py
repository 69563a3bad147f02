"""Telling the server's own code from its SDK's, from the command line (issue 27).

A user's own server on the official Python SDK with a bug of its own (``tests/peers/sdk_own_bug_server.py``: its
``structuredContent`` breaks its outputSchema) shows that bug as the server's own and the SDK's known findings as
the SDK's, counted apart in the verdict line; ``--accept-sdk-findings`` accepts the SDK's and leaves the exit status
to the server's own; ``--sdk`` names the SDK instead of recognizing it, ``--sdk none`` turns this off, and a
malformed ``--sdk`` is one usage error before any work. The unmodified SDK servers (every failure the SDK's) are
checked by ``test_suite_e2e.py`` and ``test_probes_e2e.py``, the reference clients by ``test_inject_sdk_e2e.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.report.sdks import known_sdk
from tests.peers.process import HERE, free_port, http_server, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

OWN_BUG = HERE / "sdk_own_bug_server.py"
PYTHON = known_sdk("mcp")
assert PYTHON is not None
MCP = f"mcp {PYTHON.version}"
SDK_TOOLS = ["--tool-args", '{"add": {"a": 1, "b": 2}, "progress_tool": {"steps": 3}, "chatty": {}}']


def run(spec_path: Path, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """``mcp-assay run`` with a JSON report and the terminal one: the exit code, the report, the terminal text."""
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    result = CliRunner().invoke(
        cli,
        ["run", *args, "--spec-dir", str(spec_path), "--report", f"json:{report}", "--report", "terminal",
         "--stream-budget-ms", "800"],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    assert result.exit_code == data["verdict"]["exit_code"], data["verdict"]
    return result.exit_code, data, result.output


def failures(report: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    """Each MUST-level requirement whose failure decides the verdict (not accepted) -> the SDK finding its failures
    carry (``None``: the server's own)."""
    found: dict[str, dict[str, Any] | None] = {}
    for item in report["results"]:
        if item["outcome"] == "failed" and item["severity"] == "must" and item["known"] is None:
            for ident in item["requirements"]:
                found[ident] = item.get("sdk")
    return found


def test_a_server_on_the_python_sdk_shows_its_own_bug_apart_from_the_sdks_findings(
    spec_path: Path, tmp_path: Path
) -> None:
    """Issue 27: the SDK is recognized from what the server showed (and the report says so), the server's own bug
    (TOOL-10) is its own, the SDK's findings are marked with SDK, version, spec clause; the verdict line counts
    them apart; the terminal lists the server's own failure first and names the flag that accepts the SDK's."""
    port = free_port()
    with http_server([sys.executable, str(OWN_BUG), "http", str(port)], port) as server:
        code, report, output = run(spec_path, tmp_path, "-u", server.url, "--record", str(tmp_path / "own.jsonl"))
    assert code == 1
    (recognized,) = report["sdks"]
    assert (recognized["side"], recognized["name"], recognized["version"], recognized["how"]) == (
        "server", "mcp", PYTHON.version, "recognized"
    )  # fmt: skip
    assert any("'Bad Request: Missing session ID'" in sign for sign in recognized["signs"]), recognized["signs"]
    marked = failures(report)
    assert marked["TOOL-10"] is None  # the server's own
    assert {ident for ident, sdk in marked.items() if sdk is not None} == {"HTTP-09", "RPC-13"}
    http_09 = marked["HTTP-09"]
    assert http_09 is not None and (http_09["name"], http_09["version"]) == ("mcp", PYTHON.version)
    assert http_09["clause"].startswith("basic/transports/streamable-http") and http_09["behaviour"]
    assert report["verdict"]["text"].endswith(f"; 2 known in {MCP}, 1 in the server's own code.")
    assert "sdk       server: Python SDK (mcp) recognized from" in output
    assert f"known in {MCP} (Python SDK), not the server's own code · spec: " in output
    assert output.index("✗ TOOL-10") < output.index("✗ HTTP-09")  # the server's own first
    assert "--accept-sdk-findings accepts them" in output
    assert output.rstrip().endswith(f"2 known in {MCP}, 1 in the server's own code.")
    again = tmp_path / "again.json"  # the recording judged again: the same signs, the same attribution
    result = CliRunner().invoke(
        cli, ["validate", str(tmp_path / "own.jsonl"), "--spec-dir", str(spec_path), "--report", f"json:{again}"]
    )
    offline = json.loads(again.read_text(encoding="utf-8"))
    assert result.exit_code == 1 and offline["verdict"]["text"] == report["verdict"]["text"]
    assert [item["name"] for item in offline["sdks"]] == ["mcp"]


def test_accepting_the_sdk_findings_leaves_the_exit_status_to_the_servers_own(spec_path: Path, tmp_path: Path) -> None:
    """Issue 27, over stdio: RPC-12 and RPC-13 are the SDK's stdio transport's; accepted, they are KNOWN and no
    longer decide the exit status, while the server's own TOOL-10 still fails the run."""
    command = f"{sys.executable} {OWN_BUG} stdio"
    code, report, output = run(spec_path, tmp_path, "-c", command, "--accept-sdk-findings")
    assert code == 1
    assert set(failures(report)) == {"TOOL-10"}  # the only failure left deciding
    known = [item for item in report["results"] if item["outcome"] == "failed" and item.get("sdk")]
    assert {ident for item in known for ident in item["requirements"]} >= {"RPC-12", "RPC-13"}
    assert all(item["known"] and "--accept-sdk-findings" in item["known"] for item in known)
    assert report["verdict"]["text"].endswith(
        f"; 0 known in {MCP}, 1 in the server's own code; 2 failures known in {MCP} accepted."
    )


def test_an_unmodified_sdk_server_passes_once_its_sdks_findings_are_accepted(spec_path: Path, tmp_path: Path) -> None:
    """Issue 27: every MUST failure of the official Python SDK server over stdio is the SDK's: accepted, the run
    exits 0, and the verdict still says what was accepted."""
    code, report, _ = run(
        spec_path, tmp_path, "-c", " ".join(sdk_server_command()), *SDK_TOOLS, "--accept-sdk-findings"
    )
    assert code == 0, report["verdict"]
    assert report["verdict"]["code"] == "conformant-in-part"
    assert report["verdict"]["text"].endswith(f"; 3 failures known in {MCP} accepted.")
    assert report["summary"]["known"] >= 3 and report["summary"]["failed"] == 0


def test_sdk_names_the_sdk_and_none_turns_attribution_off(spec_path: Path, tmp_path: Path) -> None:
    """Issue 27: --sdk NAME@VERSION replaces recognition (the report says it was named), and --sdk none marks no
    failure as an SDK's (the verdict line has no SDK count then)."""
    command = f"{sys.executable} {OWN_BUG} stdio"
    _, named, _ = run(spec_path, tmp_path, "-c", command, "--only", "RPC", "--sdk", f"mcp@{PYTHON.version}")
    assert [(item["name"], item["how"], item["signs"]) for item in named["sdks"]] == [("mcp", "named", [])]
    assert failures(named)["RPC-12"] is not None and failures(named)["RPC-13"] is not None
    _, off, _ = run(spec_path, tmp_path, "-c", command, "--only", "RPC", "--sdk", "none")
    assert "sdks" not in off and all(sdk is None for sdk in failures(off).values())
    assert "known in" not in off["verdict"]["text"]
    _, other, _ = run(
        spec_path, tmp_path, "-c", command, "--only", "RPC", "--sdk", "@modelcontextprotocol/server@2.4.0"
    )
    assert all(sdk is None for sdk in failures(other).values())  # the TypeScript SDK's findings are not these
    assert "0 known in @modelcontextprotocol/server 2.4.0, 2 in the server's own code" in other["verdict"]["text"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("mcp", "expected NAME@VERSION (e.g. mcp@2.3.0) or none"),
        ("mcp@0.0.1", "knows the findings of mcp"),
        ("nosuchsdk@1.0", "knows no findings of 'nosuchsdk'"),
    ],
)
def test_a_malformed_sdk_is_one_usage_error_before_any_work(value: str, says: str) -> None:
    """Issue 27: exit 2, one line naming --sdk and what is known, before anything is sent (nothing listens at the
    URL: with any work done the run would have said 'not judged', exit 3)."""
    result = CliRunner().invoke(cli, ["run", "-u", "http://127.0.0.1:9/mcp", "--sdk", value])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "--sdk" in errors[0] and says in errors[0], result.output
    assert "not judged" not in result.output
