"""The edges of `mcp-assay run` signing itself in (issue 18), from the command line as a user runs it.

The CLI runs in a subprocess; the protected resource (:mod:`tests.peers.oauth_resource`: a 401 with a
challenge, and its metadata) and the stand-in authorization server (the stub) listen on real sockets
in this process. A sign-in that fails stops the run: exit 3, one line naming the step, and a report
whose verdict is *not judged* (``--without-token`` keeps the old way: the cases that need no token).
Plain http to a host that is not loopback, the resource's or the authorization server's, is refused
before anything is sent there (one line, exit 2) unless ``--allow-insecure-http``; those cases need a
non-loopback address of this machine, which they listen on.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.policy import PresetClient, StubPolicy
from mcp_assay.suite.stub.server import StubServer
from tests.peers.assay import ROOT
from tests.peers.oauth_resource import Resource, serving
from tests.peers.process import PYTHON, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

CC = ("authorization_code", "client_credentials", "refresh_token")
NOT_JUDGED = "mcp-assay: not judged — the OAuth sign-in failed at "
GO_ON = "(--without-token runs the cases that need no token)"
PRM_PATH = "/.well-known/oauth-protected-resource/mcp"
PUBLIC = (
    "choosing a grant: the registered client is public (token_endpoint_auth_method none), so client_credentials cannot "
    "be used; only a browser sign-in (authorization_code) is left"
)


@contextmanager
def stub(policy: StubPolicy, host: str = "127.0.0.1") -> Iterator[StubServer]:
    port = free_port()
    server = StubServer(host, port, f"http://{host}:{port}", SigningKey.generate(), SigningKey.generate(),
                        ["notes:read"], policy=policy)  # fmt: skip
    try:
        yield server
    finally:
        server.close()


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None

    def last(self, stream: str) -> str:
        lines = [line for line in getattr(self, stream).splitlines() if line.strip()]
        return lines[-1] if lines else ""


def assay(tmp_path: Path, spec_path: Path, url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    """``mcp-assay run -u URL`` with no token, in a subprocess, with a terminal and a JSON report."""
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    command = [PYTHON, "-m", "mcp_assay", "run", "-u", url, "--spec-dir", str(spec_path), "--timeout", "3",
               "--stream-budget-ms", "300", "--report", "terminal", "--report", f"json:{report}", *args]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=100,
                          env={**os.environ, "COLUMNS": "400", **(env or {})})  # fmt: skip
    data = json.loads(report.read_text(encoding="utf-8")) if report.exists() else None
    return Result(done.returncode, done.stdout, done.stderr, data)


def lan_address() -> str:
    """An address of this machine that is not loopback (the one its default route leaves from)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the route
        except OSError:
            pytest.skip("this machine has no network interface but loopback")
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("this machine has no network interface but loopback")
    return address


def _no_metadata(resource: Resource) -> Resource:
    resource.documents[PRM_PATH] = None
    return resource


@pytest.mark.parametrize(
    ("policy", "args", "env", "step"),
    [
        pytest.param(StubPolicy(grant_types=CC, metadata_issuer="https://somewhere-else.example"), [], {},
                     "authorization server metadata: refused: ", id="wrong-issuer"),
        pytest.param(StubPolicy(), ["--no-interactive"], {},
                     "choosing a grant: only a browser sign-in (authorization_code) is possible, and --no-interactive "
                     "forbids it", id="no-browser-allowed"),
        pytest.param(StubPolicy(grant_types=CC, public_registration=True), [], {},
                     f"{PUBLIC}, and nobody is there to answer it", id="public-client-unattended"),
        pytest.param(StubPolicy(grant_types=CC, public_registration=True), ["--no-interactive"], {},
                     f"{PUBLIC}, and --no-interactive forbids it", id="public-client-no-interactive"),
        pytest.param(StubPolicy(grant_types=CC, registration=False,
                                clients=(PresetClient("ci-runner", "the-right-secret-1f2e"),)),
                     ["--client-id", "ci-runner"], {"MCP_ASSAY_CLIENT_SECRET": "a-wrong-secret-9a8b"},
                     "token request: ", id="wrong-client-secret"),
        pytest.param(StubPolicy(), ["--interactive", "--no-browser", "--auth-timeout", "300"], {},
                     "authorization: no redirect to http://127.0.0.1:", id="no-redirect"),
        pytest.param(None, [], {}, "protected resource metadata: no Protected Resource Metadata document at ",
                     id="no-metadata"),
    ],
)  # fmt: skip
def test_a_sign_in_that_fails_stops_the_run_with_exit_3_and_one_line_naming_the_step(
    spec_path: Path, tmp_path: Path, policy: StubPolicy | None, args: list[str], env: dict[str, str], step: str
) -> None:
    """Tool-defined (issue 18): no token, no judgement: the run ends at the failed step, says which in one line, and
    its report is not judged (exit 3), with no conformance verdict."""
    with stub(policy or StubPolicy(grant_types=CC)) as server:
        resource = Resource(server.grants.issuer)
        with serving(_no_metadata(resource) if policy is None else resource):
            result = assay(tmp_path, spec_path, resource.url, *args, env=env)
    assert result.code == 3, (result.stdout, result.stderr)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(NOT_JUDGED + step) and lines[0].endswith(GO_ON), lines
    assert result.report is not None and result.report["verdict"]["code"] == "not-judged"
    assert result.report["verdict"]["exit_code"] == 3 and step in result.report["verdict"]["unjudged"]
    assert not [item for item in result.report["results"] if item["outcome"] in ("passed", "failed")]
    assert f"sign-in failed at {step}" in result.stderr and "goes on without a token" not in result.stderr
    assert resource.seen[0] == "POST /mcp" and resource.seen.count("POST /mcp") == 1  # nothing else was sent


@pytest.mark.parametrize("how", [["--without-token"], ["env"]], ids=["flag", "twin"])
def test_without_token_a_failed_sign_in_still_runs_the_cases_that_need_none(
    spec_path: Path, tmp_path: Path, how: list[str]
) -> None:
    """Tool-defined (--without-token, MCP_ASSAY_WITHOUT_TOKEN): the user asked to go on; the challenge and the
    metadata are judged, the rest is not verified naming the step, and the run is judged (exit 0 here)."""
    args, env = (how, {}) if how != ["env"] else ([], {"MCP_ASSAY_WITHOUT_TOKEN": "1"})
    with stub(StubPolicy(grant_types=CC, metadata_issuer="https://somewhere-else.example")) as server:
        with serving(Resource(server.grants.issuer)) as resource:
            result = assay(tmp_path, spec_path, resource.url, "--only", "AUTH", *args, env=env)
    assert result.code == 0, (result.stdout, result.stderr)
    assert "the run goes on without a token (--without-token)" in result.stderr
    assert result.report is not None and result.report["verdict"]["code"] != "not-judged"
    assert "only the cases that need no credential were run" in result.report["revisions"]["note"]
    passed = {req for item in result.report["results"] if item["outcome"] == "passed" for req in item["requirements"]}
    assert {"AUTH-01", "AUTH-10"} <= passed


def test_plain_http_to_a_remote_authorization_server_is_refused_before_anything_is_sent(
    spec_path: Path, tmp_path: Path
) -> None:
    """Tool-defined (issue 18): the client secret and the token would cross the network in clear text: one line, exit
    2, and the authorization server hears nothing; --allow-insecure-http lets the sign-in through, and says so."""
    host = lan_address()
    with stub(StubPolicy(grant_types=CC), host=host) as server, serving(Resource(server.grants.issuer)) as resource:
        refused = assay(tmp_path, spec_path, resource.url)
        heard = server.notes()
        allowed = assay(tmp_path, spec_path, resource.url, "--allow-insecure-http", "--only", "AUTH-0")
        token = [note for note in server.notes() if note["path"] == "/token"]
    origin = server.grants.issuer
    assert refused.code == 2, (refused.stdout, refused.stderr)
    assert refused.last("stderr") == (
        f"mcp-assay: refused: signing in would send credentials in clear text to the authorization server at {origin} "
        "(plain http to a host that is not loopback); use https, or pass --allow-insecure-http to allow it"
    )
    assert not heard and refused.report is None and not refused.stdout.strip()
    assert allowed.code in (0, 1), (allowed.stdout, allowed.stderr)
    assert f"note: credentials go in clear text to the authorization server at {origin}, as --allow-insecure-http " \
           "allows" in allowed.stderr  # fmt: skip
    assert token and f"obtained an access token for resource {resource.url}" in allowed.stderr


def test_plain_http_to_a_remote_mcp_server_is_refused_before_signing_in(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined (issue 18): the token the sign-in would obtain goes to the MCP server, in clear text: one line,
    exit 2, and nobody is asked for a token."""
    host = lan_address()
    with stub(StubPolicy(grant_types=CC)) as server, serving(Resource(server.grants.issuer, host=host)) as resource:
        refused = assay(tmp_path, spec_path, resource.url)
        heard = server.notes()
    origin = resource.url.removesuffix("/mcp")
    assert refused.code == 2, (refused.stdout, refused.stderr)
    assert refused.last("stderr") == (
        f"mcp-assay: refused: signing in would send credentials in clear text to the MCP server at {origin} (plain "
        "http to a host that is not loopback); use https, or pass --allow-insecure-http to allow it"
    )
    assert not heard and resource.seen == ["POST /mcp"] and refused.report is None
