"""`mcp-assay run` where there is no MCP server to judge: one line that says why, exit 3, and no verdict.

Issue 18 ("a verdict only where there is something to judge"), tool-defined. Every row puts a real
target on loopback (or none), runs the real command in a subprocess with the terminal report and a
JSON one, and asserts: exactly one terminal line, ``mcp-assay: not judged — <why>``, with the cause
in it; no conformance verdict anywhere in the output; exit 3; and the JSON report's verdict
``not-judged`` with exit code 3 and the same why. The rows where a server *is* there (a forced
revision, a server that cuts only some answers short) end in a verdict instead.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.spec import SpecSet
from tests.peers.process import HERE, PYTHON, free_port, http_server, stop, wait_for_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ROOT = HERE.parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
PREFIX = "mcp-assay: not judged — "


@dataclass
class Ran:
    """One `mcp-assay run`: its exit status, what it printed, and its JSON report."""

    code: int
    stdout: str
    stderr: str
    report: dict[str, Any]


def run(tmp_path: Path, *args: str, terminal: bool = True) -> Ran:
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    reports = ["--report", "terminal"] if terminal else []
    done = subprocess.run(
        [PYTHON, "-m", "mcp_assay", "run", "--timeout", "3", *args, *reports, "--report", f"json:{report}"],
        capture_output=True, text=True, timeout=90, cwd=ROOT, env=ENV,
    )  # fmt: skip
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    assert done.returncode == data["verdict"]["exit_code"], (done.returncode, data["verdict"], done.stderr)
    return Ran(done.returncode, done.stdout, done.stderr, data)


def not_judged(ran: Ran) -> str:
    """The run's one line, after checking that it is all the terminal got and that nothing was judged."""
    lines = ran.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), ran.stdout + ran.stderr
    for text in (ran.stdout, ran.stderr):
        assert "Verdict:" not in text and "conformant" not in text, text
    assert ran.code == 3
    why = lines[0].removeprefix(PREFIX)
    assert ran.report["verdict"] == {"code": "not-judged", "text": f"not judged — {why}", "exit_code": 3,
                                     "unjudged": why}  # fmt: skip
    return why


def stdio(*argv: str) -> str:
    return shlex.join([PYTHON, *argv])


@contextmanager
def absent_http(mode: str) -> Iterator[str]:
    """A target of :mod:`tests.peers.absent` on a free port; yields its /mcp URL."""
    port = free_port()
    command = [PYTHON, "-m", "tests.peers.absent", "http", str(port), mode]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}) as server:
        yield server.url


# -- nothing there ------------------------------------------------------------------------------------
def test_nothing_listening_at_the_address_is_said_with_what_to_check(tmp_path: Path) -> None:
    """Tool-defined: a refused connection is "nothing listens", not a ConnectError in a report header."""
    port = free_port()
    why = not_judged(run(tmp_path, "-u", f"http://127.0.0.1:{port}/mcp"))
    assert why == f"nothing listens at 127.0.0.1:{port} (connection refused) — is the server running?"


def test_a_host_name_that_does_not_resolve_is_named(tmp_path: Path) -> None:
    """Tool-defined: a DNS failure names the host (``.invalid`` never resolves, RFC 6761)."""
    why = not_judged(run(tmp_path, "-u", "http://mcp-assay-test.invalid/mcp"))
    assert why.startswith("the host name mcp-assay-test.invalid could not be resolved (")
    assert why.endswith(") — is the host in the URL right?")


def test_a_server_that_accepts_and_never_answers_is_named_with_the_time_it_had(tmp_path: Path) -> None:
    """Tool-defined: a socket that takes connections but never answers is silence, bounded by --timeout."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)  # the kernel completes the handshakes; nobody reads
        port = listener.getsockname()[1]
        why = not_judged(run(tmp_path, "-u", f"http://127.0.0.1:{port}/mcp", "--timeout", "1"))
    assert why == (
        f"127.0.0.1:{port} accepted the connection but sent no answer to server/discover or initialize within 1 s"
    )


def test_https_to_a_plain_http_server_names_the_failed_handshake(tmp_path: Path) -> None:
    """Tool-defined: a TLS handshake answered in plain HTTP is said as such, with the scheme to check."""
    port = free_port()
    command = [PYTHON, "-m", "tests.peers.broken_suite.app", "http", str(port)]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}):
        address = f"127.0.0.1:{port}"
        why = not_judged(run(tmp_path, "-u", f"https://{address}/mcp"))
    assert why.startswith(f"the TLS handshake with {address} failed (")
    assert why.endswith(") — does the server speak https at this address (http:// for plain HTTP)?")


# -- a server, but not an MCP endpoint ------------------------------------------------------------------
def test_the_right_server_at_the_wrong_path_points_at_mcp(tmp_path: Path) -> None:
    """Tool-defined: 404 with no JSON-RPC in it is a wrong path, not "not conformant — HTTP-07, HTTP-25"."""
    port = free_port()
    command = [PYTHON, "-m", "tests.peers.broken_suite.app", "http", str(port)]
    with http_server(command, port, env={"PYTHONPATH": str(ROOT)}):
        url = f"http://127.0.0.1:{port}/other"
        why = not_judged(run(tmp_path, "-u", url))
    assert why == (
        f"{url} answered HTTP 404 (Not Found): the server is there, but no MCP endpoint at /other — MCP endpoints "
        "are usually at /mcp"
    )


def test_a_path_that_refuses_post_is_a_wrong_path_too(tmp_path: Path) -> None:
    """Tool-defined: a web page that answers POST with 405 does not take MCP requests."""
    with absent_http("get-only") as url:
        why = not_judged(run(tmp_path, "-u", url))
    assert why == (
        f"{url} answered HTTP 405 (Method Not Allowed) to POST: /mcp does not take MCP requests — is its MCP "
        "endpoint mounted at another path?"
    )


def test_a_plain_web_server_is_quoted_not_judged(tmp_path: Path) -> None:
    """Tool-defined: `python -m http.server` answers POST with an HTML 501 page: said as such, not HTTP-07."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        why = not_judged(run(tmp_path, "-u", url))
    finally:
        stop(process)
    assert why.startswith(f"{url} answered, but not in JSON-RPC: server/discover, ")
    assert "got HTTP 501 Unsupported method ('POST') (text/html, not JSON): '<!DOCTYPE HTML>" in why
    assert why.endswith(" — is it an MCP server?")


# -- a command that is not a server ---------------------------------------------------------------------
def test_a_command_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    """Tool-defined: the missing program is named, with what to check; nothing else is printed."""
    why = not_judged(run(tmp_path, "-c", "mcp-assay-no-such-server --port 3"))
    assert why == "command not found: mcp-assay-no-such-server — is it installed and on PATH?"


def test_a_command_that_is_not_executable_is_one_line(tmp_path: Path) -> None:
    """Tool-defined: a script without its execute bit is named, with the two ways to run it."""
    script = tmp_path / "server.py"
    script.write_text("print('hi')\n")
    script.chmod(script.stat().st_mode & ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
    why = not_judged(run(tmp_path, "-c", str(script)))
    assert why == (
        f"{script} is not executable (permission denied) — make it executable, or name its interpreter first "
        "(python server.py)"
    )


def test_a_process_that_exits_before_answering_shows_its_code_and_last_words(tmp_path: Path) -> None:
    """Tool-defined: the exit code and the last stderr lines are the answer, without --verbose."""
    words = "starting\\nTraceback (most recent call last):\\nKeyError: API_KEY\\n"
    code = f"import sys; sys.stderr.write('{words}'); sys.exit(2)"
    why = not_judged(run(tmp_path, "-c", stdio("-c", code)))
    assert why == (
        "the server process exited with code 2 before answering; its stderr ended: starting | "
        "Traceback (most recent call last): | KeyError: API_KEY"
    )


def test_a_process_that_prints_something_else_is_quoted(tmp_path: Path) -> None:
    """Tool-defined: a banner where JSON-RPC belongs is quoted; the process never answered in time."""
    code = "import sys, time; print('Listening on stdio...', flush=True); time.sleep(30)"
    why = not_judged(run(tmp_path, "-c", stdio("-c", code), "--timeout", "1"))
    assert why == (
        "the server printed something that is not JSON-RPC on stdout: 'Listening on stdio...'; it answered "
        "neither server/discover nor initialize within 1 s"
    )


# -- a server outside the window ------------------------------------------------------------------------
@pytest.mark.parametrize("revision", ["2025-06-18", "2024-11-05"])
def test_a_server_speaking_only_an_older_revision_is_named_with_the_flag_that_judges_it(
    tmp_path: Path, spec: SpecSet, revision: str
) -> None:
    """Tool-defined: its revision and the window are named, and the suggested --spec-version really judges it."""
    command = stdio("-m", "tests.peers.absent", "stdio", revision)
    window = " and ".join(item.name for item in spec.window)
    handshake = next(item.name for item in spec.window if item.era == "handshake")
    why = not_judged(run(tmp_path, "-c", command))
    assert why == (
        f"the server speaks only {revision} (per initialize); mcp-assay judges {window} — to judge it against "
        f"{handshake} anyway: --spec-version {handshake}"
    )
    forced = run(tmp_path, "-c", command, "--spec-version", handshake)
    assert forced.code in (0, 1) and forced.report["verdict"]["code"] != "not-judged", forced.report["verdict"]
    assert forced.report["revisions"]["tested"] == [handshake]
    assert f"initialize negotiates {revision}" in forced.report["revisions"]["note"]


# -- answers cut short ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode", "cut"),
    [("cut-every", "JSON cut short"), ("drop-every", "the connection closed before the body was complete")],
)
def test_a_server_that_cuts_every_answer_short_is_not_judged(tmp_path: Path, mode: str, cut: str) -> None:
    """Tool-defined: never one usable JSON-RPC answer is no MCP server to judge (never "conformant in part")."""
    with absent_http(mode) as url:
        why = not_judged(run(tmp_path, "-u", url))
    assert why.startswith(f"{url} answered, but never in usable JSON-RPC: server/discover, ")
    assert f"got HTTP 200 Answer (application/json, {cut}): " in why


def test_a_server_that_cuts_only_some_answers_short_gets_findings(tmp_path: Path) -> None:
    """Spec-mandated (RPC-01): usable answers to discover and initialize, the rest cut short — a MUST fails."""
    with absent_http("cut-after-selection") as url:
        ran = run(tmp_path, "-u", url, "--only", "tools,RPC-01")
    assert ran.code == 1 and ran.report["verdict"]["code"] == "not-conformant", ran.report["verdict"]
    failed = {
        requirement
        for item in ran.report["results"]
        if item["outcome"] == "failed"
        for requirement in item["requirements"]
    }
    assert "RPC-01" in failed
    assert ran.report["revisions"]["tested"], ran.report["revisions"]["note"]


# -- nothing tested, and where the line goes ---------------------------------------------------------------
def test_a_run_that_tests_nothing_says_why(tmp_path: Path) -> None:
    """Tool-defined: --only prompts on a server that declares no prompts sends no case: not judged, with that
    reason (not a bare "nothing verified" over a page of not-applicable results)."""
    why = not_judged(run(tmp_path, "-c", stdio("-m", "tests.peers.absent", "stdio", "2025-11-25"), "--only", "prompts"))
    assert why == "nothing was tested: no case --only prompts selects applies to this server"


def test_with_only_files_asked_for_the_line_still_ends_the_output(tmp_path: Path) -> None:
    """Tool-defined: --report json:F alone still tells the user why, where a verdict line would go (issue 19: the
    file paths on stderr, the line last on stdout), and writes F as not judged."""
    port = free_port()
    ran = run(tmp_path, "-u", f"http://127.0.0.1:{port}/mcp", terminal=False)
    assert ran.code == 3 and "json report written to" in ran.stderr
    (last,) = ran.stdout.strip().splitlines()
    assert last == f"{PREFIX}nothing listens at 127.0.0.1:{port} (connection refused) — is the server running?"
    assert ran.report["verdict"]["code"] == "not-judged"


def test_a_serve_command_that_dies_writes_a_not_judged_report(tmp_path: Path) -> None:
    """Tool-defined: --serve that exits before listening is its exit code and output, in the report too."""
    port = free_port()
    dying = stdio("-c", "import sys; print('no config file'); sys.exit(7)")
    why = not_judged(run(tmp_path, "-u", f"http://127.0.0.1:{port}/mcp", "--serve", dying))
    assert why.startswith("--serve ") and f"exited with code 7 before 127.0.0.1:{port} accepted connections" in why
    assert why.endswith("its last output: no config file")


def test_a_stdio_command_that_starts_an_http_server_says_so_with_the_command_to_use(tmp_path: Path) -> None:
    """Issue 27: `run -c` given an HTTP server waited 16 s and blamed an exit code though its stderr said
    "Uvicorn running on http://127.0.0.1:PORT"; it stops as soon as that line shows, naming `-u URL --serve`.
    A --timeout far longer than the subprocess bound proves the run did not wait for an answer."""
    port = free_port()
    command = stdio("tests/peers/first_server.py", "http", str(port))
    why = not_judged(run(tmp_path, "-c", command, "--timeout", "600"))
    assert why.startswith(f"this command started an HTTP server at http://127.0.0.1:{port}, not a stdio server")
    assert f"Uvicorn running on http://127.0.0.1:{port}" in why
    assert why.endswith(f"— use -u http://127.0.0.1:{port}/mcp --serve {shlex.quote(command)} "
                        "(MCP endpoints are usually at /mcp)")  # fmt: skip
