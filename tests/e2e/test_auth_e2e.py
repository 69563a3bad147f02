"""Authorization end to end: `mcp-assay run` and `mcp-assay proxy` against a protected server on the
Python SDK (``tests/peers/auth_server.py``) in a correct and a sloppy build, and against the plain SDK
server, which uses no authorization at all.

The correct build passes every AUTH item the suite can judge without a stub authorization server;
the sloppy one (bare 401, no metadata, query tokens and any bearer string accepted) fails exactly the
items those faults break; the open server leaves them all not applicable. The token never reaches a
report, a recording or the output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_assay.cli import cli
from tests.peers.assay import assay_proxy, wait_until_exchanges_end
from tests.peers.process import HERE, PYTHON, free_port, http_server, sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TOKEN = "auth-e2e-token-6d1f0b93c4"
CAN_PASS = {
    "AUTH-01", "AUTH-02", "AUTH-03", "AUTH-04", "AUTH-05", "AUTH-06", "AUTH-07", "AUTH-08", "AUTH-09", "AUTH-10",
    "AUTH-11", "AUTH-12", "AUTH-13", "AUTH-20", "AUTH-28", "AUTH-29", "AUTH-30", "AUTH-48",
}  # fmt: skip
"""What a suite run can establish about a correct server without a stub authorization server."""
SLOPPY_FAILS = {"AUTH-01", "AUTH-04", "AUTH-10", "AUTH-13", "AUTH-20", "AUTH-28"}


@contextmanager
def protected(build: str) -> Iterator[str]:
    port = free_port()
    command = [PYTHON, str(HERE / "auth_server.py"), str(port), TOKEN, build]
    with http_server(command, port) as server:
        yield server.url


def run(spec_path: Path, folder: Path, *args: str) -> tuple[dict[str, Any], str, str]:
    """``mcp-assay run``: the JSON report, the recording and the console output."""
    report, recording = folder / "report.json", folder / "recording.jsonl"
    result = CliRunner().invoke(
        cli,
        ["run", *args, "--spec-dir", str(spec_path), "--report", f"json:{report}", "--record", str(recording),
         "--stream-budget-ms", "800"],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return json.loads(report.read_text()), recording.read_text(), result.output


def revalidated(spec_path: Path, folder: Path, recording: str) -> dict[str, str]:
    """The AUTH outcomes `mcp-assay validate` gives the run's recording (credentials already redacted in it)."""
    path, out = folder / "again.jsonl", folder / "again.json"
    path.write_text(recording)
    result = CliRunner().invoke(cli, ["validate", "--spec-dir", str(spec_path), str(path), "--report", f"json:{out}"])
    assert result.exit_code in (0, 1), result.output
    return auth_outcomes(json.loads(out.read_text()))


def auth_outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {item["check"]: item["outcome"] for item in report["results"] if item["area"] == "Authorization"}


def by_requirement(report: dict[str, Any]) -> dict[str, set[str]]:
    """Requirement ID -> the outcomes of the checks that cite it."""
    outcomes: dict[str, set[str]] = {}
    for item in report["results"]:
        for requirement in item["requirements"]:
            outcomes.setdefault(requirement, set()).add(item["outcome"])
    return outcomes


def failed(report: dict[str, Any]) -> set[str]:
    return {ident for ident, outcomes in by_requirement(report).items() if "failed" in outcomes}


def test_the_correct_build_passes_every_item_the_suite_can_judge(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (AUTH-01..13, 20, 28..30, 48): a complete run against the correct build."""
    with protected("--correct") as url:
        report, recording, output = run(spec_path, tmp_path, "-u", url, "-t", TOKEN)
    outcomes = by_requirement(report)
    for requirement in sorted(CAN_PASS):
        assert outcomes[requirement] == {"passed"}, (requirement, outcomes[requirement])
    assert not {ident for ident in failed(report) if ident.startswith("AUTH")}
    assert outcomes["AUTH-50"] == {"not_verified"}  # no OpenID discovery document to read
    for text in (json.dumps(report), recording, output):
        assert TOKEN not in text
    assert revalidated(spec_path, tmp_path, recording) == auth_outcomes(report)


def test_the_correct_build_in_2025_holds_its_sessions_to_the_token(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (AUTH-09, AUTH-32, AUTH-34): a session id without the token gets 401."""
    with protected("--correct") as url:
        report, _, _ = run(
            spec_path, tmp_path, "-u", url, "-t", TOKEN, "--spec-version", "2025-11-25", "--only", "AUTH"
        )
    outcomes = by_requirement(report)
    assert outcomes["AUTH-32"] == {"passed"} and outcomes["AUTH-34"] == {"passed"} and outcomes["AUTH-09"] == {"passed"}
    assert not {ident for ident in failed(report) if ident.startswith("AUTH")}


def test_the_sloppy_build_fails_the_items_its_faults_break(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated: bare 401 (AUTH-10), no PRM (AUTH-01, AUTH-04), any bearer string (AUTH-13, AUTH-20),
    query tokens (AUTH-28, policy)."""
    with protected("--sloppy") as url:
        report, recording, output = run(spec_path, tmp_path, "-u", url, "-t", TOKEN, "--only", "AUTH")
    assert {ident for ident in failed(report) if ident.startswith("AUTH")} == SLOPPY_FAILS
    assert by_requirement(report)["AUTH-09"] == {"passed"}
    for text in (json.dumps(report), recording, output):
        assert TOKEN not in text
    assert revalidated(spec_path, tmp_path, recording) == auth_outcomes(report)


def test_a_server_without_authorization_leaves_the_items_not_applicable(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §0.3): the SDK fixture uses no authorization; a token given anyway
    changes nothing, and no AUTH item fails."""
    with sdk_http_server() as server:
        report, _, _ = run(spec_path, tmp_path, "-u", server.url, "-t", TOKEN, "--only", "AUTH")
    auth = auth_outcomes(report)
    assert set(auth.values()) == {"not_applicable"}, auth
    assert any("does not implement it" in note for note in report["notes"])


# -- passive: the SDK client through mcp-assay proxy ----------------------------------------------------
async def _drive(url: str) -> int:
    """An anonymous request first (a second client), then the SDK client with the token on every request."""
    async with httpx2.AsyncClient(timeout=10, headers={"user-agent": "anonymous-probe"}) as raw:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        answer = await raw.post(url, json=body, headers={"accept": "application/json, text/event-stream"})
    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="auto") as client:
            tools = await client.list_tools()
            await client.call_tool("add", {"a": 1, "b": 2})
            assert [tool.name for tool in tools.tools] == ["add"]
    return answer.status_code


@pytest.mark.parametrize("build", ["--correct", "--sloppy"])
def test_the_proxy_judges_a_token_carrying_client_and_the_servers_refusals(
    spec_path: Path, tmp_path: Path, build: str
) -> None:
    """Spec-mandated (AUTH-09..12, AUTH-36, AUTH-37) from real traffic: the client keeps its token on every
    request and out of the URI; the server's 401 is judged for its challenge."""
    recording, report_path = tmp_path / "proxy.jsonl", tmp_path / "proxy.json"
    with protected(build) as url:
        with assay_proxy(
            url, "--record", str(recording), "--report", f"json:{report_path}", "--spec-dir", str(spec_path),
            "--fail-on", "never",
        ) as proxy:  # fmt: skip
            status = anyio.run(_drive, proxy.url)
            wait_until_exchanges_end(recording)  # the client's last disconnects reached the proxy
    assert status == 401
    report = json.loads(report_path.read_text())
    outcomes = by_requirement(report)
    assert outcomes["AUTH-36"] == {"passed"} and outcomes["AUTH-37"] == {"passed"}
    assert outcomes["AUTH-09"] == {"passed"}
    if build == "--correct":
        assert outcomes["AUTH-10"] == {"passed"} and outcomes["AUTH-11"] == {"passed"}
        assert outcomes["AUTH-12"] == {"passed"} and outcomes["AUTH-04"] == {"passed"}
        assert not {ident for ident in failed(report) if ident.startswith("AUTH")}
    else:
        assert {ident for ident in failed(report) if ident.startswith("AUTH")} == {"AUTH-10"}
    assert outcomes["AUTH-01"] == {"not_verified"}  # the proxy keeps MCP traffic only
    for text in (report_path.read_text(), recording.read_text(), proxy.output):
        assert TOKEN not in text


def test_a_server_with_a_public_listing_fails_no_status_code_requirement_on_protocol_invalid_probes(
    spec_path: Path, tmp_path: Path
) -> None:
    """Issue 28: a protected server that serves tools/list without credentials answers the suite's protocol-invalid
    probes (a bad version, no _meta, a wrong Accept, "jsonrpc": "1.0") with 400/406 for that protocol reason; those
    are no evidence against AUTH-09 (or AUTH-32), and a full run and ``--only AUTH-09`` agree on AUTH-09."""
    (tmp_path / "full").mkdir()
    with protected("--public-list") as url:
        full, _, output = run(spec_path, tmp_path / "full", "-u", url)
        narrowed = CliRunner().invoke(
            cli, ["run", "-u", url, "--only", "AUTH-09", "--spec-dir", str(spec_path), "--report",
                  f"json:{tmp_path / 'only.json'}"],
        )  # fmt: skip
    assert narrowed.exit_code == 3 and "nothing" in narrowed.output.lower(), (
        narrowed.output
    )  # nothing failed, none passed
    only = json.loads((tmp_path / "only.json").read_text())

    def auth_09(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
        return {
            item["revision"]: (item["outcome"], item["reason"])
            for item in report["results"]
            if item["check"] == "unauthenticated_requests_get_401"
        }

    assert set(auth_09(full)) == {"2026-07-28", "2025-11-25"}, auth_09(full)
    for revision, (outcome, reason) in auth_09(full).items():
        assert outcome == "not_verified" and "public (see AUTH-29)" in reason, (revision, reason)
        assert auth_09(only)[revision][0] == outcome, auth_09(only)
    failed = by_requirement(full)
    assert "failed" not in failed["AUTH-09"] and "failed" not in failed["AUTH-32"], output
    assert "failed" in failed["AUTH-29"]  # serving tools/list without credentials is what AUTH-29 (SHOULD) flags
