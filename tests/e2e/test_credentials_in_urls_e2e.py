"""Credentials written into URLs, and secrets that JSON escapes, never reach what mcp-assay writes (issue 28).

Real processes throughout: ``mcp-assay proxy --upstream http://alice:PASSWORD@host/mcp`` in front of the
official-SDK server behind HTTP Basic authentication, with the SDK client through it; ``mcp-assay run`` from a
``user:password@`` URL, its recording judged again by ``validate``; ``run --secret`` with a value holding ``"``
and ``\\``, and ``MCP_ASSAY_SECRETS`` holding a secret with spaces; the stdio tap started by a command that
names a ``--secret``. Each test looks for the secret in every spelling it may take (as it is, JSON-escaped,
percent-encoded, base64) in stdout, stderr, the reports and the recording.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_assay.recording.redaction import spellings
from tests.peers.assay import ROOT, assay_proxy, wait_until_exchanges_end
from tests.peers.process import PYTHON, RunningServer, free_port, http_server, sdk_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

PASSWORD = "hunter2-pw-5c1e"
USER = "alice"


def every_spelling(*secrets: str) -> set[str]:
    """What must appear nowhere: each secret as mcp-assay may spell it, and the Basic credential it makes."""
    forms = {form for secret in secrets for form in spellings(secret)}
    forms |= {base64.b64encode(f"{USER}:{secret}".encode()).decode() for secret in secrets}
    return forms


def assert_nowhere(forms: set[str], *texts: str) -> None:
    for text in texts:
        leaked = sorted(form for form in forms if form in text)
        assert leaked == [], (leaked, text[:2000])


@pytest.fixture
def basic_server(tmp_path: Path) -> Iterator[tuple[RunningServer, Path]]:
    """The SDK test server behind Basic authentication as alice:PASSWORD; the file logs each Authorization it got."""
    port, log = free_port(), tmp_path / "authorization.log"
    command = [PYTHON, "-m", "tests.peers.basic_auth_server", str(port), f"{USER}:{PASSWORD}", str(log)]
    with http_server(command, port) as server:
        yield server, log


async def _session(url: str, headers: dict[str, str] | None = None) -> list[str]:
    async with httpx2.AsyncClient(timeout=30, headers=headers or {}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="auto") as client:
            tools = await client.list_tools()
            written = await client.call_tool("slow_write", {"tag": "via-proxy", "delay_ms": 1})
            return [tool.name for tool in tools.tools] + [getattr(block, "text", "") for block in written.content]


def test_a_proxy_upstream_with_user_and_password_forwards_them_as_basic_and_writes_them_nowhere(
    basic_server: tuple[RunningServer, Path], spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined (issue 28): `proxy --upstream http://user:pw@host/mcp` listens, the server gets the credentials
    as Basic authorization on each request that carries none of its own (a client's own header is passed on as it
    is), SIGTERM ends it with the verdict's exit code, and the password is in no report, recording header, live
    line or debug log line, in any spelling."""
    server, log = basic_server
    upstream = f"http://{USER}:{PASSWORD}@127.0.0.1:{server.port}/mcp"
    recording, report, page = tmp_path / "session.jsonl", tmp_path / "report.json", tmp_path / "report.html"
    args = ("--spec-dir", str(spec_path), "--record", str(recording), "--report", f"json:{report}",
            "--report", f"html:{page}", "--report", "terminal")  # fmt: skip
    with assay_proxy(upstream, *args, env={"MCP_ASSAY_LOG_LEVEL": "debug"}) as proxy:
        answers = anyio.run(_session, proxy.url)
        own = {"authorization": "Bearer the-clients-own", "accept": "application/json"}
        refused = httpx2.post(proxy.url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=own, timeout=30)
        wait_until_exchanges_end(recording)
        proxy.process.send_signal(signal.SIGTERM)
        code = proxy.process.wait(60)
        proxy.stop()
    assert "slow_write" in answers and "wrote via-proxy" in answers
    assert refused.status_code == 401  # the client's own credentials went to the server unchanged
    basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    sent = log.read_text(encoding="utf-8").splitlines()
    assert basic in sent and "Bearer the-clients-own" in sent
    document = json.loads(report.read_text(encoding="utf-8"))
    assert code == document["verdict"]["exit_code"] and code in (0, 1), proxy.output[-3000:]
    assert f"→ http://{USER}:REDACTED@127.0.0.1:{server.port}/mcp" in proxy.output
    assert document["target"]["description"].startswith(f"http://{USER}:REDACTED@127.0.0.1")
    assert any("as Basic authorization" in note for note in document["notes"])
    header = json.loads(recording.read_text(encoding="utf-8").splitlines()[0])
    assert "DEBUG" in proxy.output and header["source"].startswith(f"http://{USER}:REDACTED@")
    assert_nowhere(every_spelling(PASSWORD), proxy.output, report.read_text(encoding="utf-8"),
                   page.read_text(encoding="utf-8"), recording.read_text(encoding="utf-8"))  # fmt: skip


QUOTED = 'q"uo\\ted-secret-71'
"""A secret JSON must escape: in a JSON body it is written ``q\\"uo\\\\ted-secret-71``."""
SPACED = "sp ace secret 42"


def test_a_run_from_a_user_and_password_url_with_escaped_and_spaced_secrets_writes_none_and_validates(
    spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined (issue 28), one run standing for two pieces of its evidence:

    * the recording of `run -u http://user:pw@host/mcp` names the URL as http://user:REDACTED@host (still a URL),
      and `validate` judges it like any recording (no internal error);
    * a secret holding `"` and `\\` is sent inside a JSON body (a tool argument the server echoes), where only its
      JSON-escaped form appears, and a secret with spaces: both come from MCP_ASSAY_SECRETS (one per line; a
      --secret flag would win over the twin).

    Neither the password nor either secret survives, whole or in part, in any spelling, in the output (at debug
    level), the JSON report, the recording or validate's output."""
    recording, report = tmp_path / "run.jsonl", tmp_path / "run.json"
    arguments = json.dumps({"slow_write": {"tag": f"{QUOTED} {SPACED} {quote(QUOTED)}", "delay_ms": 1}})
    with sdk_http_server() as server:
        url = server.url.replace("http://", f"http://{USER}:{PASSWORD}@")
        ran = subprocess.run(
            [PYTHON, "-m", "mcp_assay", "--log-level", "debug", "run", "-u", url, "--only", "tools", "--tool-args",
             arguments, "--spec-dir", str(spec_path), "--record", str(recording), "--report", f"json:{report}",
             "--fail-on", "never", "--show", "all"],
            capture_output=True, text=True, cwd=ROOT, timeout=150,
            env={**os.environ, "MCP_ASSAY_SECRETS": f"{QUOTED}\r\n{SPACED}\n"},
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    again = subprocess.run(
        [PYTHON, "-m", "mcp_assay", "validate", str(recording), "--spec-dir", str(spec_path), "--fail-on", "never"],
        capture_output=True, text=True, cwd=ROOT, timeout=100,
    )  # fmt: skip
    assert again.returncode == 0 and "internal error" not in again.stderr, again.stdout[-2000:] + again.stderr
    assert "Verdict:" in again.stdout
    recorded = recording.read_text(encoding="utf-8")
    header = json.loads(recorded.splitlines()[0])
    assert header["source"] == f"mcp-assay run http://{USER}:REDACTED@127.0.0.1:{server.port}/mcp"
    assert "slow_write" in recorded and "[REDACTED]" in recorded  # the call was made, and scrubbed
    parts = [word for word in SPACED.split() if len(word) >= 3]  # a split secret would leak word by word
    written = (ran.stdout, ran.stderr, again.stdout, again.stderr, recorded, report.read_text(encoding="utf-8"))
    assert_nowhere(every_spelling(PASSWORD, QUOTED, SPACED), *written)
    assert not any(f"{parts[0]} {parts[1]}" in text for text in written)


def test_the_taps_recording_header_keeps_no_secret_named_in_the_server_command(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 28): the tap's header names the server command; a --secret in it is scrubbed there too,
    and so is the value of an option named as a credential (--auth-token) that the user did not repeat."""
    secret, unrepeated = "tap-command-secret-8b2", "tap-auth-token-3c9"
    recording, report = tmp_path / "tap.jsonl", tmp_path / "tap.json"
    command = ["sh", "-c", f"exec {shlex.quote(PYTHON)} -m tests.peers.sdk_server stdio", "--api-key", secret,
               "--auth-token", unrepeated]  # fmt: skip
    ping = (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        + "\n"
    )
    tapped = subprocess.run(
        [PYTHON, "-m", "mcp_assay", "tap", "--record", str(recording), "--report", f"json:{report}", "--secret",
         secret, "--spec-dir", str(spec_path), "--", *command],
        input=ping, capture_output=True, text=True, cwd=ROOT, timeout=100,
    )  # fmt: skip
    header = json.loads(recording.read_text(encoding="utf-8").splitlines()[0])
    assert header["source"].startswith("stdio tap: sh -c") and "--api-key [REDACTED]" in header["source"]
    assert "--auth-token [REDACTED]" in header["source"]
    assert header["options"]["--secret"] == ["[REDACTED]"], header
    assert_nowhere(every_spelling(secret, unrepeated), tapped.stderr, recording.read_text(encoding="utf-8"),
                   report.read_text(encoding="utf-8"))  # fmt: skip
