"""When the proxy starts probing the server: a served request shows the revision, the URL and the credentials."""

from __future__ import annotations

import json

from mcp_assay.addon.server_probe import PROBE_FAMILIES, opening_of
from mcp_assay.suite.probes import family_names
from mcp_assay.vocabulary.protocol import Era

URL = "http://127.0.0.1:8000/mcp?token=q-secret"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def body(method: str, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


def test_a_served_2026_request_opens_probing_on_its_revision_with_its_credentials() -> None:
    """Tool-defined: the credential-bearing headers and the URL (with its query) are what the probes send."""
    headers = {"Authorization": "Bearer t-secret", "Accept": "application/json", "X-Api-Key": "k-secret"}
    opening = opening_of("POST", URL, headers, body("tools/list", {"_meta": META}), 200)
    assert opening is not None
    assert (opening.era, opening.revision, opening.url) == ("modern", "2026-07-28", URL)
    assert dict(opening.headers) == {"Authorization": "Bearer t-secret", "X-Api-Key": "k-secret"}


def test_a_2025_initialize_opens_probing_on_the_version_it_offered() -> None:
    """Tool-defined."""
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    opening = opening_of("POST", URL, {}, body("initialize", params), 200)
    assert opening is not None and (opening.era, opening.revision) == (Era.HANDSHAKE, "2025-11-25")


def test_refused_requests_notifications_and_other_traffic_open_nothing() -> None:
    """Tool-defined: only an answered request shows what the server serves."""
    assert opening_of("POST", URL, {}, body("tools/list", {"_meta": META}), 400) is None
    notice = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert opening_of("POST", URL, {}, notice, 202) is None
    assert opening_of("GET", URL, {}, b"", 200) is None
    assert opening_of("POST", URL, {}, b"not json", 200) is None
    assert opening_of("POST", URL, {}, body("tools/list", {}), 200) is None  # neither era can be told


def test_the_probe_families_are_the_suites_own() -> None:
    """Tool-defined: the proxy reuses the suite's families by name."""
    assert set(PROBE_FAMILIES) <= set(family_names())
