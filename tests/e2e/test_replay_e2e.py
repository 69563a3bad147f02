"""A replay for every finding, from every source, that pastes; and `mcp-assay replay`, which checks a fix.

Tool-defined (issue 27, "A replay for every finding, from every source"). Each test drives one source
of findings from the command line against live peers: a suite run over stdio (the official Python SDK
server, both revisions), a suite run and a proxy session over HTTP (the deliberately broken server, one
fault per path), the stdio tap (the broken stdio server, a 2025 and a 2026 session), a run that presents
a token, and the recordings those sessions wrote, judged again by `validate`. Every replay any format
shows is one the JSON report holds, whole; each is pasted into bash against the live peer and must get
the answer its evidence describes; and `mcp-assay replay` reproduces a finding against the broken peer
(exit 1) and reports it fixed against the fixed one (exit 0).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.pasting import evidence_by_replay, http_reproduced, paste, report_args, shown, stdio_reproduced
from tests.peers.assay import assay_proxy, wait_until_exchanges_end
from tests.peers.broken.http_client import drive
from tests.peers.process import HERE as PEERS
from tests.peers.process import PYTHON, free_port, http_server, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(360)]

BROKEN_STDIO = f"{PYTHON} {PEERS / 'broken' / 'stdio_server.py'}"
FIXED_STDIO = f"{BROKEN_STDIO} --fixed"
TOKEN = "replay-e2e-token-7f3a91"
Reproduced = Callable[[Mapping[str, Any], str], "str | None"]


def assay(
    *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "MCP_ASSAY_TOKEN")}
    return subprocess.run(
        [PYTHON, "-m", "mcp_assay", *args], input=stdin, capture_output=True, text=True, timeout=240, check=False,
        env={**environ, "COLUMNS": "100", **(env or {})}, stdin=None if stdin is not None else subprocess.DEVNULL,
    )  # fmt: skip


def every_format_shows_replays_the_report_holds(folder: Path, brief: str) -> dict[str, Any]:
    """Each format's replays are ones the JSON report holds, printed whole; returns the JSON report."""
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    held = set(evidence_by_replay(report))
    assert held, "no failure has a replay"
    for name, replays in shown(folder, brief).items():
        assert replays, f"the {name} report shows no replay"
        strangers = [replay for replay in replays if replay not in held]
        assert not strangers, f"the {name} report shows a replay the JSON report does not hold: {strangers[0]}"
    return dict(report)


def every_replay_reproduces(
    report: Mapping[str, Any], reproduced: Reproduced, env: Mapping[str, str] | None = None
) -> int:
    """Paste every replay of a failure into bash: it succeeds and gets what each piece of evidence showing it
    describes. Returns how many were pasted."""
    environ = {**os.environ, **(env or {})}
    for command, pairs in evidence_by_replay(report).items():
        done = paste(command, environ)
        # a stream the capture had left open is read for a few seconds, then curl says it stopped (28)
        stopped = done.returncode == 28 and "--max-time" in command
        assert done.returncode == 0 or stopped, (
            f"the pasted replay failed ({done.returncode}): {done.stderr[-500:]}\n{command}"
        )
        for result, item in pairs:
            problem = reproduced(item, done.stdout)
            assert problem is None, f"{result['check']}: {problem}\n{command}"
    return len(evidence_by_replay(report))


def finding(report: Mapping[str, Any], check: str, revision: str | None = None) -> str:
    ids = [r["id"] for r in report["results"] if r["check"] == check and r["revision"] == revision]
    assert len(ids) == 1, (check, revision, ids)
    return str(ids[0])


def replay(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return assay("replay", *args, env=env)


@pytest.fixture(scope="module")
def broken_http() -> Iterator[str]:
    """The broken Streamable HTTP server: its base URL (``/<scenario>/mcp``; ``/ok/mcp`` has no fault)."""
    port = free_port()
    with http_server([PYTHON, str(PEERS / "broken" / "http_server.py"), str(port)], port, path="/") as server:
        yield server.url.rstrip("/")


def two_that_prove_it(report: Mapping[str, Any]) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """The replay of the 2025 line cut short on purpose (the handshake first, then silence) and of a request the
    2026 server answered (no handshake, an answer): the two a stdio run's replays need to prove they paste, each
    pasted starting the server once. Every other replay is the same builder's output for another line."""
    pairs = [(command, *pair) for command, found in evidence_by_replay(report).items() for pair in found]
    cut = next(p for p in pairs if p[1]["revision"] == "2025-11-25" and "invalid_json_on_purpose=" in p[0])
    answered = next(p for p in pairs if p[1]["revision"] == "2026-07-28" and "server → client" in p[2]["summary"])
    return {command: [(result, item)] for command, result, item in (cut, answered)}


def test_replays_of_a_stdio_run_paste_and_replay_checks_the_fix(spec_path: Path, tmp_path: Path) -> None:
    """A run over stdio against the SDK server, both revisions: every replay in every format is one the JSON
    report holds; pasted, the 2025 invalid-JSON line and an answered 2026 request start the server, send the
    handshake its revision needs (2025-11-25) or none (2026-07-28), the line, and show the silence or the
    answer the finding describes; `replay` of the invalid-JSON finding fails against the SDK server and
    passes against a server that answers -32700, opening a 2025 session with the handshake."""
    server = " ".join(sdk_server_command())
    run = assay("run", "-c", server, "--only", "RPC-12,RPC-13,PRM-07", "--spec-dir", str(spec_path), "--report",
                "terminal", *report_args(tmp_path))  # fmt: skip
    assert run.returncode == 1, run.stderr
    report = every_format_shows_replays_the_report_holds(tmp_path, run.stdout)
    assert len(evidence_by_replay(report)) >= 8
    chosen = two_that_prove_it(report)
    for command, pairs in chosen.items():
        assert ('"method":"initialize"' in command) == (pairs[0][0]["revision"] == "2025-11-25"), command
        done = paste(command)
        assert done.returncode == 0, f"the pasted replay failed ({done.returncode}): {done.stderr[-500:]}\n{command}"
        for result, item in pairs:
            problem = stdio_reproduced(item, done.stdout)
            assert problem is None, f"{result['check']}: {problem}\n{command}"
    check = "malformed_input_gets_an_error_answer"
    modern, legacy = (finding(report, check, revision) for revision in ("2026-07-28", "2025-11-25"))
    assert "invalid_json_on_purpose=" in run.stdout, "the line cut short on purpose says what it is"
    path = str(tmp_path / "report.json")
    again = replay(path, modern, "--spec-dir", str(spec_path))
    assert again.returncode == 1, again.stdout + again.stderr
    assert "still failing — malformed_input_gets_an_error_answer fails on the replay" in again.stdout
    fixed = replay(path, legacy, "--spec-dir", str(spec_path), "--command", FIXED_STDIO)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "fixed — malformed_input_gets_an_error_answer passes on the replay" in fixed.stdout
    assert '"method":"initialize"' in fixed.stdout, "a 2025 replay opens with the handshake"
    several = replay(path, "RPC-12", "--spec-dir", str(spec_path))
    assert several.returncode == 2 and modern in several.stderr and legacy in several.stderr, several.stderr


def test_every_replay_of_a_proxy_session_and_its_recording_pastes_and_replay_checks_the_fix(
    broken_http: str, spec_path: Path, tmp_path: Path
) -> None:
    """Passive findings: the proxy between the scripted client and the broken server. Every replay in every
    format is the client's own request, sent to the server (not the proxy); `validate` of the recording shows
    the same replays; `replay` reproduces a server's fault at its path and reports it fixed at /ok/mcp, and
    says there is nothing to judge for a fault of the client's."""
    proxy_folder, recording = tmp_path / "proxy", tmp_path / "session.jsonl"
    proxy_folder.mkdir()
    with assay_proxy(
        broken_http + "/", "--spec-dir", str(spec_path), "--record", str(recording), "--live", "off",
        "--report", "terminal", *report_args(proxy_folder), path="/",
    ) as proxy:  # fmt: skip
        anyio.run(drive, proxy.url.rstrip("/"))
        wait_until_exchanges_end(recording)
    assert proxy.returncode == 1, proxy.output
    report = every_format_shows_replays_the_report_holds(proxy_folder, proxy.output)
    assert all(f":{proxy.port}/" not in command for command in evidence_by_replay(report)), "sent to the server"
    assert every_replay_reproduces(report, http_reproduced) >= 15
    validated = tmp_path / "validated"
    validated.mkdir()
    judged = assay("validate", str(recording), "--spec-dir", str(spec_path), "--report", "terminal",
                   *report_args(validated))  # fmt: skip
    assert judged.returncode == 1, judged.stderr
    again = every_format_shows_replays_the_report_holds(validated, judged.stdout)
    assert set(evidence_by_replay(again)) == set(evidence_by_replay(report))  # the same commands, pasted above
    path = str(proxy_folder / "report.json")
    results = finding(report, "results_name_their_result_type")
    broken = replay(path, results, "--spec-dir", str(spec_path))
    assert broken.returncode == 1 and "still failing" in broken.stdout, broken.stdout + broken.stderr
    assert "/results/mcp" in broken.stdout
    fixed = replay(path, results, "--spec-dir", str(spec_path), "--url", f"{broken_http}/ok/mcp")
    assert fixed.returncode == 0 and "fixed — results_name_their_result_type passes" in fixed.stdout, fixed.stdout
    client = replay(path, finding(report, "requests_carry_params_with_meta"), "--spec-dir", str(spec_path))
    assert client.returncode == 3 and "judges the client" in client.stderr, client.stderr


def test_an_active_http_finding_is_reproduced_and_reported_fixed(
    broken_http: str, spec_path: Path, tmp_path: Path
) -> None:
    """A run over HTTP: `replay` re-sends the probe that found the fault, judged at its revision; `--serve` starts
    the fixed server for the replay."""
    run = assay("run", "-u", f"{broken_http}/jsonrpc/mcp", "--only", "RPC-15", "--spec-dir", str(spec_path),
                "--report", f"json:{tmp_path / 'run.json'}")  # fmt: skip
    assert run.returncode == 1, run.stderr
    report = json.loads((tmp_path / "run.json").read_text())
    ident = finding(report, "unknown_methods_get_method_not_found", "2026-07-28")
    broken = replay(str(tmp_path / "run.json"), ident, "--spec-dir", str(spec_path))
    assert broken.returncode == 1 and "at 2026-07-28" in broken.stdout, broken.stdout + broken.stderr
    port = free_port()  # the fixed endpoint on a server --serve starts for the replay and stops after
    serve = f"{PYTHON} {PEERS / 'broken' / 'http_server.py'} {port}"
    fixed = replay(str(tmp_path / "run.json"), ident, "--spec-dir", str(spec_path), "--url",
                   f"http://127.0.0.1:{port}/ok/mcp", "--serve", serve)  # fmt: skip
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
TAP_SESSIONS: dict[str, list[dict[str, Any]]] = {
    "2025-11-25": [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ],
    "2026-07-28": [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}},
    ],
}  # fmt: skip
"""What a client writes to the broken stdio server through the tap, per revision."""


@pytest.mark.parametrize("revision", list(TAP_SESSIONS))
def test_every_replay_of_a_tap_session_pastes_and_replay_checks_the_fix(
    revision: str, spec_path: Path, tmp_path: Path
) -> None:
    """Passive stdio findings: the tap in front of the broken stdio server. Every replay starts the command
    the tap started, with the handshake the session had made (2025-11-25) or none (2026-07-28); `validate` of
    the 2026 session's recording shows the same replays; `replay` of the 2025 session's finding reproduces the
    pretty-printed answer and reports it fixed against the fixed build (one source each: every one starts a
    server)."""
    folder, recording = tmp_path / "tap", tmp_path / "tap.jsonl"
    folder.mkdir()
    lines = "".join(json.dumps(line) + "\n" for line in TAP_SESSIONS[revision])
    tap = assay("tap", "--spec-dir", str(spec_path), "--record", str(recording), "--report", "terminal",
                *report_args(folder), "--",
                *BROKEN_STDIO.split(), stdin=lines)  # fmt: skip
    assert tap.returncode == 0, tap.stderr
    report = every_format_shows_replays_the_report_holds(folder, tap.stderr)  # the tap's terminal is stderr
    commands = list(evidence_by_replay(report))
    assert all(BROKEN_STDIO in command for command in commands)
    assert all(('"initialize"' in command) == (revision == "2025-11-25") for command in commands)
    assert every_replay_reproduces(report, stdio_reproduced) >= 1
    if revision == "2026-07-28":
        validated = tmp_path / "validated"
        validated.mkdir()
        judged = assay("validate", str(recording), "--spec-dir", str(spec_path), *report_args(validated))
        assert judged.returncode == 1, judged.stderr
        again = every_format_shows_replays_the_report_holds(validated, "")
        assert set(evidence_by_replay(again)) == set(commands)
        return
    ident = finding(report, "stdio_messages_take_exactly_one_line")
    broken = replay(str(folder / "report.json"), ident, "--spec-dir", str(spec_path))
    assert broken.returncode == 1 and "still failing" in broken.stdout, broken.stdout + broken.stderr
    fixed = replay(str(folder / "report.json"), ident, "--spec-dir", str(spec_path), "--command", FIXED_STDIO)
    assert fixed.returncode == 0 and "fixed" in fixed.stdout, fixed.stdout + fixed.stderr


def test_a_replay_carries_a_placeholder_never_the_token(spec_path: Path, tmp_path: Path) -> None:
    """Against a server that wants a bearer token: every replay names ${MCP_ASSAY_TOKEN} where the token went,
    the token is nowhere in the reports; pasted with the variable set it reproduces the finding, without it the
    server refuses it; `replay` takes the token from -t or MCP_ASSAY_TOKEN, and asks for it otherwise."""
    port = free_port()
    command = [PYTHON, str(PEERS / "auth_server.py"), str(port), TOKEN, "--correct"]
    with http_server(command, port) as server:
        run = assay("run", "-u", server.url, "-t", TOKEN, "--only", "HTTP-09,PRM-07", "--spec-dir", str(spec_path),
                    "--report", "terminal", *report_args(tmp_path))  # fmt: skip
        assert run.returncode == 1, run.stderr
        report = every_format_shows_replays_the_report_holds(tmp_path, run.stdout)
        written = run.stdout + "".join(path.read_text(encoding="utf-8") for path in tmp_path.glob("report.*"))
        assert TOKEN not in written
        commands = list(evidence_by_replay(report))
        assert any("$MCP_ASSAY_TOKEN" in command for command in commands)
        every_replay_reproduces(report, http_reproduced, env={"MCP_ASSAY_TOKEN": TOKEN})
        unauthorised = next(command for command in commands if "$MCP_ASSAY_TOKEN" in command)
        assert "HTTP/1.1 401" in paste(unauthorised, {**os.environ, "MCP_ASSAY_TOKEN": ""}).stdout
        ident = finding(report, "version_header_mismatch_is_rejected", "2026-07-28")
        path = str(tmp_path / "report.json")
        asked = replay(path, ident, "--spec-dir", str(spec_path))
        assert asked.returncode == 2 and "-t/--token or MCP_ASSAY_TOKEN" in asked.stderr, asked.stderr
        again = replay(path, ident, "--spec-dir", str(spec_path), env={"MCP_ASSAY_TOKEN": TOKEN})
        assert again.returncode == 1 and TOKEN not in again.stdout + again.stderr, again.stdout + again.stderr
