"""`mcp-assay run -u URL -t TOKEN` against a server that protects itself with a static token of its own
(``tests/peers/auth_server.py --static``: a plain ``Bearer realm`` challenge, ``403`` for a wrong token, no
Protected Resource Metadata). Authorization is optional in MCP and HTTP servers only SHOULD follow its OAuth
profile (AUTH-AND-BEHAVIOUR §0.3.3), so the profile's items are recommendations with that reason, not MUST
failures; AUTH-10 (a 401 carries a challenge) holds for any scheme and is judged at its own level.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from tests.peers.process import HERE, PYTHON, free_port, http_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TOKEN = "own-scheme-e2e-token-5be0c2a7"
GRADED = {"AUTH-01", "AUTH-04", "AUTH-11", "AUTH-13"}
"""What the static-token server breaks of MCP's OAuth profile: no PRM, so none discoverable; a challenge without
scope; 403 instead of 401 for a wrong token."""


def test_a_static_token_server_gets_the_oauth_profile_as_recommendations(spec_path: Path, tmp_path: Path) -> None:
    """Spec-mandated (AUTH-AND-BEHAVIOUR §0.3.3): the run exits 0 (no MUST failed), lists AUTH-01, AUTH-04,
    AUTH-11 and AUTH-13 as recommendations in both revisions, each with the reason, and never prints the token."""
    port = free_port()
    command = [PYTHON, str(HERE / "auth_server.py"), str(port), TOKEN, "--static"]
    report = tmp_path / "report.json"
    with http_server(command, port) as server:
        result = CliRunner().invoke(
            cli,
            ["run", "-u", server.url, "-t", TOKEN, "--only", "AUTH", "--spec-dir", str(spec_path),
             "--report", "terminal", "--show", "all", "--report", f"json:{report}"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["verdict"]["exit_code"] == 0 and data["verdict"]["code"] == "conformant-in-part", data["verdict"]
    assert data["revisions"]["tested"] == ["2026-07-28", "2025-11-25"]
    failed = [item for item in data["results"] if item["outcome"] == "failed"]
    assert not [item["check"] for item in failed if item["severity"] == "must"]
    for revision in data["revisions"]["tested"]:
        mine = [item for item in failed if item["revision"] == revision]
        assert {ident for item in mine for ident in item["requirements"]} == GRADED, revision
        for item in mine:
            assert item["severity"] == "should" and "scheme of its own" in (item["graded"] or ""), item
            assert "(graded SHOULD: " in item["reason"], item
    challenge = next(
        item for item in data["results"] if item["check"] == "refusals_carry_a_bearer_challenge"
    )  # AUTH-10: the plain Bearer challenge is there, and the requirement keeps its level
    assert challenge["outcome"] == "passed" and challenge["severity"] == "must"
    assert "\nFAILED" not in result.output, result.output
    recommended = result.output.split("\nSHOULD (", 1)[1].split("\nPASSED", 1)[0]
    assert "[AUTH-13 · server · active]" in recommended and "got HTTP 403, not 401" in recommended
    assert "[AUTH-01 · server · active]" in recommended and "(graded SHOULD: " in recommended
    assert TOKEN not in result.output and TOKEN not in report.read_text(encoding="utf-8")
