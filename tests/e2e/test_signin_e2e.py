"""`mcp-assay run` with no token against the stub-protected example server signs itself in, as a user runs it.

``tests/peers/jwt_server.py`` (the SDK app behind a JWT gate) trusts the stub, which ``mcp-assay stub serve``
keeps up with the policy of each case (config file): client_credentials offered or not, registration open or
closed (then a preset client), a wrong issuer in its metadata, a denied consent. The run is the real CLI in a
subprocess; the browser of the authorization-code grant is this test, reading the URL the run prints with
``--no-browser`` and following its redirects to the run's loopback receiver. A signed-in run must judge
everything a run given a valid stub token judges; a failed one the challenge and the metadata, and name the
step. No token, code, verifier or secret may reach the output, the report or the recording.
"""

from __future__ import annotations

import json
import os
import pty
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import yaml

from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.tokens import control_token
from tests.peers.process import HERE, free_port, http_server, stop, wait_for_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

CLI = [sys.executable, "-m", "mcp_assay"]
ROOT = HERE.parent.parent
CC = ["authorization_code", "client_credentials", "refresh_token"]
CLIENT_SECRET = "e2e-runner-secret-51f0c3d8"
NO_CREDENTIAL = ("AUTH-01", "AUTH-02", "AUTH-04", "AUTH-05", "AUTH-10", "AUTH-11")
WAIT = 60.0


@dataclass
class Setup:
    url: str
    issuer: str
    key: SigningKey
    folder: Path


@contextmanager
def protected(tmp_path: Path, **policy: Any) -> Iterator[Setup]:
    """`mcp-assay stub serve` with this policy, and the JWT server trusting it."""
    key = SigningKey.generate()
    key.save(tmp_path / "stub-key.pem")
    port = free_port()
    section = {"key_file": str(tmp_path / "stub-key.pem"), "listen": f"127.0.0.1:{port}", **policy}
    config = tmp_path / "stub.yaml"
    config.write_text(yaml.safe_dump({"stub": section}), encoding="utf-8")
    env = {**os.environ, "E2E_CLIENT_SECRET": CLIENT_SECRET}
    with (tmp_path / "stub.out").open("w", encoding="utf-8") as banner:  # what `stub serve` says it offers
        serving = subprocess.Popen([*CLI, "stub", "serve", "--config", str(config)], stdout=banner,
                                   stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    try:
        wait_for_port(port, serving)
        issuer = f"http://127.0.0.1:{port}"
        server_port = free_port()
        command = [sys.executable, str(HERE / "jwt_server.py"), str(server_port), issuer]
        with http_server(command, server_port, env={"PYTHONPATH": str(ROOT)}) as server:
            yield Setup(server.url, issuer, key, tmp_path)
    finally:
        stop(serving)


@dataclass
class Run:
    code: int
    report: dict[str, Any]
    output: str
    recording: str
    strays: list[tuple[int, str]] = field(default_factory=list)
    """What the run's loopback receiver answered a redirect with another state (status, page)."""

    def outcomes(self) -> dict[tuple[str, str | None], str]:
        """Every result's outcome, by check and the revision it was reached in."""
        return {(item["check"], item["revision"]): item["outcome"] for item in self.report["results"]}

    def by_requirement(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for item in self.report["results"]:
            for requirement in item["requirements"]:
                found.setdefault(requirement, set()).add(item["outcome"])
        return found

    def assert_no_secret(self, *secrets: str) -> None:
        for text in (json.dumps(self.report), self.output, self.recording):
            assert "eyJ" not in text, "a JWT reached the output"
            for secret in secrets:
                assert secret not in text


_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _pump_terminal(master: int, lines: queue.Queue[str | None]) -> None:
    """What the run writes to its terminal, line by line, without the terminal's escapes and carriage returns."""
    pending = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the run closed its end of the terminal
            break
        if not chunk:
            break
        *whole, pending = (pending + chunk).split(b"\n")
        for raw in whole:
            lines.put(_ESCAPES.sub("", raw.decode("utf-8", "replace")).replace("\r", "") + "\n")
    if pending:
        lines.put(_ESCAPES.sub("", pending.decode("utf-8", "replace")).replace("\r", ""))
    lines.put(None)


def run(setup: Setup, name: str, *args: str, browser: bool = False, stray: bool = False, terminal: bool = False) -> Run:
    """The CLI in a subprocess; with ``browser``, follow the authorization URL it prints (with ``stray``, after a
    redirect to the run's receiver that carries a forged code and another state). With ``terminal`` its stderr is a
    terminal (a pseudo-terminal this test reads) and ``CI`` is unset: somebody is there to answer a browser."""
    report, recording = setup.folder / f"{name}.json", setup.folder / f"{name}.jsonl"
    command = [*CLI, "run", "-u", setup.url, "--report", f"json:{report}", "--record", str(recording),
               "--stream-budget-ms", "800", *args]  # fmt: skip
    master, stderr = pty.openpty() if terminal else (-1, subprocess.STDOUT)
    env = {key: value for key, value in os.environ.items() if not (terminal and key == "CI")}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env) as process:
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        if terminal:
            os.close(stderr)  # the run holds the other end now
            threading.Thread(target=_pump_terminal, args=(master, lines), daemon=True).start()
        output: list[str] = []
        strays: list[tuple[int, str]] = []
        streams = 2 if terminal else 1
        while streams:
            line = lines.get(timeout=WAIT)
            if line is None:
                streams -= 1
                continue
            output.append(line)
            if browser and line.startswith("    http"):
                if stray:
                    redirect = parse_qs(urlsplit(line.strip()).query)["redirect_uri"][0]
                    forged = httpx.get(f"{redirect}?code=forged-code-77&state=not-this-one", timeout=10.0)
                    strays.append((forged.status_code, forged.text))
                answer = httpx.get(line.strip(), follow_redirects=True, timeout=10.0)
                assert answer.status_code == 200 and "received the authorization answer" in answer.text
        code = process.wait(timeout=WAIT)
    if terminal:
        os.close(master)
    return Run(code, json.loads(report.read_text(encoding="utf-8")), "".join(output), recording.read_text(), strays)


def token_run(setup: Setup) -> Run:
    """The same run given a valid stub token: what a signed-in run must also judge."""
    token = control_token(setup.key, setup.issuer, setup.url, ["notes:read"])
    given = run(setup, "token", "-t", token)
    given.assert_no_secret(token)
    return given


def same_judgement(signed_in: Run, given: Run) -> None:
    """Every check the token run established, the signed-in run established the same way."""
    theirs, ours = given.outcomes(), signed_in.outcomes()
    established = {check for check, outcome in theirs.items() if outcome in ("passed", "failed")}
    differ = {check: (theirs[check], ours.get(check)) for check in established if ours.get(check) != theirs[check]}
    assert not differ, differ
    assert len(established) > 100


def test_client_credentials_with_dynamic_registration_judges_what_a_token_run_judges(tmp_path: Path) -> None:
    """Tool-defined (issue 13 §2, done-when): no token, the server answers 401, the stub offers client_credentials
    and registration: the run registers, takes a token unattended, and judges everything a token run judges."""
    with protected(tmp_path, grant_types=CC) as setup:
        signed_in = run(setup, "cc", "--no-interactive")
        given = token_run(setup)
    assert "endpoint returned 401; discovering OAuth configuration" in signed_in.output
    assert "  signing in with client_credentials: the registered client has a secret (client_secret_basic), so " \
           "nobody needs to answer a browser" in signed_in.output  # fmt: skip
    assert f"  obtained an access token for resource {setup.url}" in signed_in.output
    assert any("the run signed in by itself: client_credentials grant" in note for note in signed_in.report["notes"])
    same_judgement(signed_in, given)
    signed_in.assert_no_secret()


def test_client_credentials_with_a_client_given_and_registration_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined: --client-id and the secret from MCP_ASSAY_CLIENT_SECRET (never on the command line)."""
    clients = [{"client_id": "ci-runner", "client_secret": "${E2E_CLIENT_SECRET}"}]
    with protected(tmp_path, grant_types=CC, registration=False, clients=clients) as setup:
        monkeypatch.setenv("MCP_ASSAY_CLIENT_SECRET", CLIENT_SECRET)
        signed_in = run(setup, "preset", "--client-id", "ci-runner", "--only", "AUTH")
    assert "  using client_id ci-runner (given with --client-id)" in signed_in.output
    outcomes = signed_in.by_requirement()
    for requirement in ("AUTH-09", "AUTH-13", "AUTH-20", "AUTH-28", *NO_CREDENTIAL):
        assert outcomes[requirement] == {"passed"}, (requirement, outcomes[requirement])
    signed_in.assert_no_secret(CLIENT_SECRET)


def test_authorization_code_through_the_browser_judges_what_a_token_run_judges(tmp_path: Path) -> None:
    """Tool-defined (issue 13 §2, done-when): the stub offers no machine grant; with --interactive and
    --no-browser the run prints the authorization URL, a browser (this test) follows it, the code comes back to
    the loopback redirect and is exchanged with its PKCE verifier."""
    with protected(tmp_path) as setup:
        signed_in = run(setup, "ac", "--interactive", "--no-browser", browser=True)
        given = token_run(setup)
    for step in ("  signing in with authorization_code + PKCE: --interactive asks for a browser sign-in",
                 "  open this URL in a browser on this machine to authorize the run:",
                 "  authorization code received; exchanging it for a token"):  # fmt: skip
        assert step in signed_in.output
    same_judgement(signed_in, given)
    signed_in.assert_no_secret()


def test_authorization_code_with_a_preset_public_client_and_registration_closed(tmp_path: Path) -> None:
    """Tool-defined: a client id without a secret is a public client; its loopback redirect matches any port."""
    clients = [{"client_id": "desktop", "redirect_uris": ["http://127.0.0.1/callback"]}]
    with protected(tmp_path, registration=False, clients=clients) as setup:
        signed_in = run(setup, "public", "--interactive", "--no-browser", "--client-id", "desktop", "--only", "AUTH",
                        browser=True)  # fmt: skip
    assert signed_in.by_requirement()["AUTH-13"] == {"passed"}, signed_in.output
    assert "registering a client" not in signed_in.output
    signed_in.assert_no_secret()


def test_dynamic_registration_as_a_public_client_signs_in_with_the_code_and_judges_what_a_token_run_judges(
    tmp_path: Path,
) -> None:
    """Tool-defined (issue 21, done-when): the stub advertises both grants and registers every client as a public
    authorization_code client. At a terminal (stderr a terminal, CI unset, no flag but --no-browser; this test is the
    browser), the run registers once, reads what was registered, never asks for client_credentials, signs in with
    the code and PKCE saying why, and judges what a token run judges: the server served the run's own requests."""
    with protected(tmp_path, grant_types=CC, public_registration=True) as setup:
        signed_in = run(setup, "public-dcr", "--no-browser", browser=True, terminal=True)
        given = token_run(setup)
    assert "/register (every one as a public authorization_code client)" in (tmp_path / "stub.out").read_text()
    output = signed_in.output
    assert "  no client credentials given; registering a client for client_credentials and authorization_code " \
           f"with {setup.issuer}/register for redirect http://127.0.0.1:" in output  # fmt: skip
    assert "  signing in with authorization_code + PKCE: the registered client is public " \
           "(token_endpoint_auth_method none)" in output  # fmt: skip
    assert "requesting a token at" not in output and "falling back" not in output  # client_credentials never asked
    assert f"  obtained an access token for resource {setup.url}" in output
    assert any("the run signed in by itself: authorization_code grant" in note for note in signed_in.report["notes"])
    assert signed_in.report["verdict"]["code"] != "not-judged" and signed_in.code in (0, 1), output
    same_judgement(signed_in, given)
    signed_in.assert_no_secret()


def test_client_credentials_at_a_terminal_is_still_chosen_where_the_client_is_registered_for_it(
    tmp_path: Path,
) -> None:
    """Tool-defined (issue 21): at a terminal both grants are planned and one client is registered for both; the
    server honours it, so the run signs in with client_credentials and nobody is asked to open anything."""
    with protected(tmp_path, grant_types=CC) as setup:
        signed_in = run(setup, "cc-terminal", "--no-browser", "--only", "AUTH", terminal=True)
    output = signed_in.output
    assert "registering a client for client_credentials and authorization_code with " in output
    assert "  signing in with client_credentials: the registered client has a secret (client_secret_basic), so " \
           "nobody needs to answer a browser" in output  # fmt: skip
    assert "open this URL" not in output and f"  obtained an access token for resource {setup.url}" in output
    assert signed_in.by_requirement()["AUTH-13"] == {"passed"}, output
    signed_in.assert_no_secret()


def test_a_grant_refused_at_the_token_endpoint_falls_back_to_the_code_and_says_so_in_one_line(tmp_path: Path) -> None:
    """Tool-defined (issue 21; RFC 6749 §5.2 unauthorized_client): the stub advertises client_credentials and
    registers the client for it, then refuses it at the token endpoint; at a terminal the run falls back to the
    authorization code with the same client, says so once, and the signed-in run is judged."""
    with protected(tmp_path, grant_types=CC, refused_grants=["client_credentials"]) as setup:
        signed_in = run(setup, "fallback", "--no-browser", "--only", "AUTH", browser=True, terminal=True)
    assert "the token endpoint refuses client_credentials all the same" in (tmp_path / "stub.out").read_text()
    lines = signed_in.output.splitlines()
    fallbacks = [line for line in lines if "falling back" in line]
    assert fallbacks == [
        "  falling back to authorization_code + PKCE: the token endpoint refused client_credentials (HTTP 400 "
        "unauthorized_client: client_credentials is advertised but not given to this client (stub policy "
        "refused_grants))"
    ], signed_in.output
    order = [
        "  signing in with client_credentials: ",
        "  requesting a token at ",
        "  falling back to ",
        "  authorization code received; exchanging it for a token",
        "  obtained an access token for resource ",
    ]
    positions = [next(index for index, line in enumerate(lines) if line.startswith(step)) for step in order]
    assert positions == sorted(positions), lines
    assert any("after the token endpoint refused client_credentials" in note for note in signed_in.report["notes"])
    assert signed_in.code in (0, 1) and signed_in.by_requirement()["AUTH-13"] == {"passed"}, signed_in.output
    signed_in.assert_no_secret()


def test_a_wrong_issuer_stops_the_sign_in_and_the_run_judges_what_needs_no_token(tmp_path: Path) -> None:
    """Spec-mandated (RFC 8414 §3.3) and tool-defined: the refusal is printed and names the step; with
    --without-token the challenge and the metadata are judged (passed on this server), the rest is not verified
    with that reason; exit 0. (Without it the run stops there: tests/e2e/test_signin_edges_e2e.py.)"""
    with protected(tmp_path, grant_types=CC, metadata_issuer="https://somewhere-else.example") as setup:
        failed = run(setup, "issuer", "--without-token")
    assert failed.code == 0, failed.output
    refusal = 'declares issuer "https://somewhere-else.example", expected "' + setup.issuer + '"'
    assert "  sign-in failed at authorization server metadata: refused:" in failed.output and refusal in failed.output
    outcomes = failed.by_requirement()
    for requirement in NO_CREDENTIAL:
        assert outcomes[requirement] == {"passed"}, (requirement, outcomes[requirement])
    tools = [item for item in failed.report["results"] if "TOOL-02" in item["requirements"]]
    assert tools and all(item["outcome"] == "not_verified" and refusal in item["reason"] for item in tools)
    failed.assert_no_secret()


def test_a_denied_consent_stops_the_sign_in_at_authorization(tmp_path: Path) -> None:
    """Spec-mandated (RFC 6749 §4.1.2.1): the authorization server's access_denied is reported as its answer; with
    --without-token the cases that need no token are still judged."""
    with protected(tmp_path, consent="deny") as setup:
        denied = run(setup, "deny", "--interactive", "--no-browser", "--only", "AUTH", "--without-token", browser=True)
    assert "  sign-in failed at authorization: the authorization server answered access_denied" in denied.output
    assert denied.by_requirement()["AUTH-10"] == {"passed"}
    assert "only the cases that need no credential were run" in denied.report["revisions"]["note"]
    denied.assert_no_secret()


def test_a_redirect_with_another_state_is_answered_400_and_the_sign_in_waits_for_the_real_one(tmp_path: Path) -> None:
    """Spec-mandated (RFC 6749 §10.12) and tool-defined (issue 18): a redirect whose state is not this sign-in's is
    refused with a 400 that echoes nothing, one stray request does not end the sign-in, and the real redirect that
    follows completes it."""
    with protected(tmp_path) as setup:
        signed_in = run(setup, "stray", "--interactive", "--no-browser", "--only", "AUTH", browser=True, stray=True)
    [(status, page)] = signed_in.strays
    assert status == 400 and "does not belong to the sign-in" in page and "forged-code-77" not in page
    assert "  note: a redirect whose state does not belong to this sign-in was answered 400; still waiting for the " \
           "right one" in signed_in.output  # fmt: skip
    assert f"  obtained an access token for resource {setup.url}" in signed_in.output
    assert signed_in.code in (0, 1) and signed_in.by_requirement()["AUTH-13"] == {"passed"}, signed_in.output
    signed_in.assert_no_secret("forged-code-77")


def test_a_secret_reaches_no_log_line_and_no_output_at_debug_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool-defined (issue 18, --secret): a value the user names is scrubbed from every log line (the HTTP clients'
    request lines at --log-level debug included), the printed steps, the report and the recording, like the client
    secret and the token the sign-in handles; the lines that carried them are still there."""
    tenant = "hush-tenant-5c1d9e07"
    clients = [{"client_id": "ci-runner", "client_secret": "${E2E_CLIENT_SECRET}"}]
    with protected(tmp_path, grant_types=CC, registration=False, clients=clients) as setup:
        monkeypatch.setenv("MCP_ASSAY_LOG_LEVEL", "debug")
        monkeypatch.setenv("MCP_ASSAY_CLIENT_SECRET", CLIENT_SECRET)
        tenanted = replace(setup, url=f"{setup.url}?tenant={tenant}")
        signed_in = run(tenanted, "secret", "--secret", tenant, "--client-id", "ci-runner", "--verbose", "--only",
                        "AUTH")  # fmt: skip
    assert f"  obtained an access token for resource {setup.url}" in signed_in.output, signed_in.output[-3000:]
    assert "mcp-assay DEBUG" in signed_in.output and "HTTP Request: POST" in signed_in.output
    assert "tenant=[REDACTED]" in signed_in.output
    signed_in.assert_no_secret(tenant, CLIENT_SECRET)
