"""A real client's OAuth flow judged through `mcp-assay proxy --mode regular` (AUTH-39..47, 49).

The official Python SDK client, with its OAuth provider, is pointed at a JWT-validating SDK server
(``tests/peers/jwt_server.py``) that trusts the stand-in authorization server; every request it
makes (the MCP traffic, discovery, registration, the browser's authorization request and the code
exchange) goes through the forward proxy, which judges the flow, keeps its credentials out of
the recording, and gives the same verdicts when the recording is judged again offline.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.server import StubServer
from tests.peers.assay import RunningProxy, assay_forward_proxy, wait_until_exchanges_end
from tests.peers.oauth_client import Mode, OAuthRun, run_oauth_client
from tests.peers.process import HERE, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

FLOW_CHECKS = {
    "clients_discover_prm_where_told": "AUTH-39",
    "clients_discover_authorization_servers_in_order": "AUTH-40",
    "clients_name_the_resource": "AUTH-41",
    "clients_use_pkce_s256": "AUTH-42",
    "clients_check_the_response_issuer": "AUTH-43",
    "clients_send_state": "AUTH-44",
    "clients_ask_for_the_challenged_scopes": "AUTH-45",
    "clients_register_in_the_prescribed_form": "AUTH-46",
    "client_ids_stay_with_their_issuer": "AUTH-47",
    "authorization_responses_carry_iss": "AUTH-49",
    "response_issuers_are_advertised": "AUTH-49",
}
ONLY_2026 = {
    "clients_check_the_response_issuer",
    "client_ids_stay_with_their_issuer",
    "authorization_responses_carry_iss",
    "response_issuers_are_advertised",
    "clients_register_in_the_prescribed_form",  # no URL-form client id, and application_type is 2026's
}


@dataclass
class FlowRun:
    mode: Mode
    client: OAuthRun
    proxy: RunningProxy
    report: dict[str, Any]
    recording: Path


@pytest.fixture(scope="module", params=["2026-07-28", "legacy"])
def flow_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, spec_path: Path
) -> Iterator[FlowRun]:
    mode: Mode = request.param
    folder = tmp_path_factory.mktemp(f"oauth-{mode}")
    recording, report = folder / "flow.jsonl", folder / "report.json"
    port = free_port()
    stub = StubServer("127.0.0.1", port, f"http://127.0.0.1:{port}", SigningKey.generate(), SigningKey.generate())
    try:
        target_port = free_port()
        command = [sys.executable, str(HERE / "jwt_server.py"), str(target_port), stub.grants.issuer]
        with http_server(command, target_port, env={"PYTHONPATH": str(HERE.parent.parent)}) as target:
            with assay_forward_proxy(
                "--record", str(recording), "--report", f"json:{report}", "--spec-dir", str(spec_path),
            ) as proxy:  # fmt: skip
                proxy_url = f"http://127.0.0.1:{proxy.port}"
                client = anyio.run(lambda: run_oauth_client(target.url, mode, proxy=proxy_url, timeout=60.0))
                wait_until_exchanges_end(recording)  # the client's last disconnects reached the proxy
    finally:
        stub.close()
    yield FlowRun(mode, client, proxy, json.loads(report.read_text()), recording)


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {result["check"]: result["outcome"] for result in report["results"] if result["check"] in FLOW_CHECKS}


def test_the_sdk_clients_flow_passes_every_flow_rule_that_binds_it(flow_run: FlowRun) -> None:
    """Spec-mandated (AUTH-39..47, 49): the SDK discovers PRM where the challenge says, the stub's metadata
    in order, registers, authorizes with resource, S256 PKCE, state and the challenged scope, and (2026)
    redeems a code whose iss matches; the 2026-only rules do not bind its 2025 era."""
    assert flow_run.client.tools, "the client got through"
    outcomes = _outcomes(flow_run.report)
    assert set(outcomes) == set(FLOW_CHECKS)
    for check, outcome in outcomes.items():
        expected = "not_applicable" if flow_run.mode == "legacy" and check in ONLY_2026 else "passed"
        assert outcome == expected, (check, outcome)


def test_no_flow_step_is_misread_as_mcp_traffic(flow_run: FlowRun) -> None:
    """Tool-defined: registration JSON, token forms, metadata GETs with the client's version header and a
    request retried after its 401 are not held against the client or the server as JSON-RPC or HTTP faults."""
    failed = {
        requirement
        for result in flow_run.report["results"]
        if result["outcome"] == "failed"
        for requirement in result["requirements"]
    }
    assert not {item for item in failed if item.split("-")[0] in ("AUTH", "RPC", "HS", "VER")}, failed
    assert "HTTP-32" not in failed


def test_the_flows_credentials_never_reach_the_recording(flow_run: FlowRun) -> None:
    """Tool-defined: the access and refresh tokens, the code and the client secret are scrubbed where they
    first appear (a JSON answer, a redirect, a form body), and everywhere after."""
    written = flow_run.recording.read_text() + json.dumps(flow_run.report) + flow_run.proxy.output
    token = flow_run.client.token
    assert token is not None
    secrets = [
        token.access_token,
        token.refresh_token,
        *(redirect.get("code") for redirect in flow_run.client.redirects),
    ]
    client_info = flow_run.client.client_info
    if client_info is not None and client_info.client_secret:
        secrets.append(client_info.client_secret)
    assert all(secret and len(secret) >= 6 for secret in secrets)
    for secret in secrets:
        assert secret not in written
    assert "/register" in written and "/token" in written and "code_challenge_method=S256" in written


def test_the_recording_gives_the_same_flow_verdicts_offline(flow_run: FlowRun, spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: what the proxy recorded of the flow is judged again with the same outcomes."""
    out = tmp_path / "offline.json"
    result = CliRunner().invoke(
        cli, ["validate", "--spec-dir", str(spec_path), str(flow_run.recording), "--report", f"json:{out}"]
    )
    assert result.exit_code in (0, 1), result.output
    assert _outcomes(json.loads(out.read_text())) == _outcomes(flow_run.report)
