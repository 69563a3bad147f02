"""The authorization probes against scripted servers behind httpx.MockTransport: what they send, where
they send it, and what the rules make of a protected, an open and a lockout server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcp_assay.report.model import Report
from mcp_assay.spec import SpecSet
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.probes.auth import may_fetch
from mcp_assay.suite.runner import arun
from mcp_assay.vocabulary.verdicts import Outcome
from tests.peers.broken_suite.core import Server
from tests.suite.scripted import Handler, mock, respond

URL = "http://127.0.0.1:9/mcp"
TOKEN = "scripted-token-71c2e0aa"
PRM_URL = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
PRM = {"resource": URL, "authorization_servers": ["https://as.example"], "scopes_supported": ["mcp"]}


def gated(
    *, metadata: str = PRM_URL, refuse_after: int | None = None, seen: list[httpx.Request] | None = None
) -> Handler:
    """The scripted server behind a bearer gate that accepts only TOKEN and publishes PRM."""
    inner = respond(Server())
    served = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal served
        if seen is not None:
            seen.append(request)
        if request.url.path == "/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(200, json=PRM)
        if request.url.path.startswith("/.well-known/"):
            return httpx.Response(404, json={"error": "not_found"})
        challenge = f'Bearer resource_metadata="{metadata}", scope="mcp"'
        if request.headers.get("authorization") != f"Bearer {TOKEN}" or (
            refuse_after is not None and served >= refuse_after
        ):
            error = ', error="invalid_token"' if "authorization" in request.headers else ""
            return httpx.Response(401, headers={"www-authenticate": challenge + error}, json={"error": "unauthorized"})
        served += 1
        return await inner(request)

    return handler


def run(spec: SpecSet, handler: Handler, **settings: Any) -> Report:
    config = SuiteConfig(url=URL, **{"timeout": 2.0, "stream_budget_ms": 300, "only": "AUTH", **settings})
    return asyncio.run(arun(config, spec, mock=mock(handler)))


def outcomes(report: Report) -> dict[str, Outcome]:
    return {verdict.check: verdict.outcome for verdict in report.results if verdict.area == "Authorization"}


def test_a_protected_server_passes_the_stub_free_authorization_items(spec: SpecSet) -> None:
    """Spec-mandated (AUTH-01..13, 20, 28, 29): every probe refused with a complete challenge, PRM served."""
    report = run(spec, gated(), token=TOKEN)
    results = outcomes(report)
    for check in (
        "protected_resource_metadata_is_served",
        "protected_resource_metadata_names_authorization_servers",
        "protected_resource_metadata_names_this_server",
        "protected_resource_metadata_is_discoverable",
        "advertised_resource_metadata_resolves",
        "unauthenticated_requests_get_401",
        "refusals_carry_a_bearer_challenge",
        "unauthorized_challenges_name_scopes",
        "challenge_error_codes_follow_rfc_6750",
        "invalid_tokens_get_401",
        "malformed_credentials_are_not_served",
        "query_string_tokens_are_refused",
        "unauthenticated_requests_are_not_served",
        "authorization_urls_use_https",
    ):
        assert results[check] is Outcome.PASSED, check
    assert Outcome.FAILED not in results.values()


def test_the_run_token_goes_only_to_the_target_and_never_to_a_metadata_url(spec: SpecSet) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §2.8): metadata is fetched without credentials; foreign URLs are refused."""
    seen: list[httpx.Request] = []
    report = run(spec, gated(metadata="http://metadata.example/prm", seen=seen), token=TOKEN)
    assert {request.url.host for request in seen} == {"127.0.0.1"}
    for request in seen:
        if request.url.path.startswith("/.well-known/"):
            assert "authorization" not in request.headers
        if TOKEN in str(request.url):
            assert request.url.path == "/mcp"
    assert any("was not fetched (plain http to a host that is not loopback)" in note for note in report.notes)
    assert TOKEN not in json.dumps(report.to_json())


def test_an_open_server_makes_the_authorization_items_not_applicable(spec: SpecSet) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §0.3): served without a token and no PRM: no token probes, no findings."""
    seen: list[httpx.Request] = []
    inner = respond(Server())

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.startswith("/.well-known/"):
            return httpx.Response(404)
        return await inner(request)

    report = run(spec, handler, token=TOKEN)
    results = outcomes(report)
    server_side = {check: result for check, result in results.items() if "client" not in check}
    assert set(server_side.values()) == {Outcome.NOT_APPLICABLE}, server_side
    assert any("does not implement it" in note for note in report.notes)
    assert not [request for request in seen if request.headers.get("authorization", "").startswith("Basic")]


def test_a_server_that_locks_the_run_out_earns_no_passes(spec: SpecSet) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §2.4): refusals after the controls stopped being served are not verified."""
    report = run(spec, gated(refuse_after=3), token=TOKEN)
    results = outcomes(report)
    for check in ("invalid_tokens_get_401", "malformed_credentials_are_not_served", "query_string_tokens_are_refused"):
        assert results[check] is Outcome.NOT_VERIFIED, check
    reasons = {verdict.check: verdict.reason for verdict in report.results}
    assert "control request" in reasons["malformed_credentials_are_not_served"]


def test_without_a_token_of_its_own_the_query_probe_is_skipped_with_the_reason(spec: SpecSet) -> None:
    """Tool-defined: an open server needs no token, and nothing can be put in the query string without one."""
    inner = respond(Server())

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(200, json=PRM)
        if request.url.path.startswith("/.well-known/"):
            return httpx.Response(404)
        return await inner(request)

    report = run(spec, handler)
    results = outcomes(report)
    assert results["unauthenticated_requests_are_not_served"] is Outcome.FAILED  # PRM exists, tools/list is public
    reasons = {verdict.check: verdict.reason for verdict in report.results}
    assert "no request the suite can build needs a token" in reasons["malformed_credentials_are_not_served"]


@pytest.mark.parametrize(
    ("url", "target", "allowed"),
    [
        ("http://127.0.0.1:9/.well-known/x", "http://127.0.0.1:9/mcp", True),
        ("https://auth.example/prm", "https://mcp.example/mcp", True),
        ("http://localhost:8080/prm", "http://127.0.0.1:9/mcp", True),
        ("http://auth.example/prm", "https://mcp.example/mcp", False),
        ("https://10.0.0.5/prm", "https://mcp.example/mcp", False),
        ("https://169.254.169.254/latest", "https://mcp.example/mcp", False),
        ("https://10.0.0.5/prm", "https://10.0.0.7/mcp", True),
        ("http://127.0.0.1:80/prm", "https://mcp.example/mcp", False),
        ("file:///etc/passwd", "https://mcp.example/mcp", False),
    ],
)
def test_the_suite_fetches_only_urls_its_client_hygiene_allows(url: str, target: str, allowed: bool) -> None:
    """Tool-defined (AUTH-AND-BEHAVIOUR §2.8): https or loopback http; no private ranges for a public target."""
    assert (may_fetch(url, target) is None) is allowed
