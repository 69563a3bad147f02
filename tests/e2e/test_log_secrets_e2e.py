"""No secret in the log at any level: what mcp-assay and its libraries (httpx, httpcore, mitmproxy)
log passes the same redaction as the reports.

Real processes at ``--log-level debug``: ``run`` against the official Python SDK server with an
``?api_key=`` in the URL and the token sent in the query (``--auth-mode query``), and ``proxy`` in
front of it with a client whose URL carries a key, and ``run --verbose`` against a stdio server that
prints a ``--secret`` value on its stderr. Their output must not hold a secret, while the lines that
would have carried them are still there.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import httpx2
import pytest

from tests.peers.assay import ROOT, assay_proxy
from tests.peers.process import PYTHON, sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

API_KEY = "apikey-7d1e5c0b9a"
TOKEN = "query-token-3b8f2e6a41"
SECRET = "tenant-secret-6e2a9d13c4"


def test_run_at_debug_level_logs_no_key_and_no_token_from_the_url(spec_path: os.PathLike[str]) -> None:
    """Tool-defined: httpx's request line at info level, httpcore's trace at debug: both redacted."""
    with sdk_http_server() as server:
        result = subprocess.run(
            [
                PYTHON, "-m", "mcp_assay", "--log-level", "debug", "run", "-u", f"{server.url}?api_key={API_KEY}",
                "--auth-mode", "query", "-t", TOKEN, "--only", "tools", "--spec-dir", str(spec_path),
                "--report", "json:-", "--fail-on", "never",
            ],
            capture_output=True, cwd=ROOT, timeout=100, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr[-2000:]
    assert "HTTP Request: POST" in stderr and "api_key=" in stderr  # the lines are logged, the values are not
    assert API_KEY not in stderr and TOKEN not in stderr
    assert API_KEY not in result.stdout.decode() and TOKEN not in result.stdout.decode()


def test_the_proxy_at_debug_level_logs_no_key_from_a_clients_url(spec_path: os.PathLike[str]) -> None:
    """Tool-defined: mitmproxy's own debug lines and the judging worker's pass the same redaction."""
    with sdk_http_server() as server:
        with assay_proxy(server.url, "--spec-dir", str(spec_path), "--secret", TOKEN, "--fail-on", "never",
                         env={"MCP_ASSAY_LOG_LEVEL": "debug"}) as proxy:  # fmt: skip
            answer = httpx2.post(
                f"{proxy.url}?api_key={API_KEY}",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                headers={"accept": "application/json, text/event-stream", "x-token": TOKEN},
                timeout=30,
            )
            assert answer.status_code < 500
        proxy.stop()
    assert "DEBUG" in proxy.output
    assert API_KEY not in proxy.output and TOKEN not in proxy.output


def test_a_secret_given_with_secret_reaches_no_log_line_and_no_verbose_stderr(
    spec_path: os.PathLike[str], tmp_path: os.PathLike[str]
) -> None:
    """Tool-defined (issue 18, --secret): a stdio server that prints the secret on its stderr, started by a command
    that names it, at --log-level debug --verbose: the server's stderr lines and every log line are shown scrubbed,
    and the secret is nowhere in stdout, stderr, the report or the recording."""
    folder = Path(tmp_path)
    report, recording = folder / "report.json", folder / "run.jsonl"
    server = f"echo 'booting with key {SECRET}' >&2; exec {PYTHON} -m tests.peers.broken_suite.app stdio"
    result = subprocess.run(
        [
            PYTHON, "-m", "mcp_assay", "--log-level", "debug", "run", "-c", shlex.join(["sh", "-c", server]),
            "--secret", SECRET, "--verbose", "--only", "tools", "--tool-args", '{"echo": {"message": "hi"}}',
            "--spec-dir", str(spec_path), "--report", "terminal", "--report", f"json:{report}", "--record",
            str(recording), "--fail-on", "never",
        ],
        capture_output=True, cwd=ROOT, timeout=100, env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "300"},
    )  # fmt: skip
    stdout, stderr = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, stderr[-2000:]
    assert "server stderr: booting with key [REDACTED]" in stderr and "mcp-assay DEBUG" in stderr
    for text in (stdout, stderr, report.read_text(encoding="utf-8"), recording.read_text(encoding="utf-8")):
        assert SECRET not in text
