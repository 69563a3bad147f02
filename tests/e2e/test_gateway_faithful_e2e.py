"""The faithful build of the test gateway adds no finding: ``mcp-assay run`` through it (in front of the SDK server over
HTTP, and as a bridge spawning the SDK server on stdio) fails no MUST requirement that the SDK server alone does not
fail over HTTP. Gateway tests rely on it: a failure through the faithful build is the upstream's, and one that only a
seeded fault brings is the fault's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from tests.peers.gateway.probe import Probe
from tests.peers.topology import gateway_chain, upstream_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

NARROW = ["--timeout", "3", "--stream-budget-ms", "800"]
"""As the corpus runs (the peers answer in milliseconds); the bridge gets the default timeout: every 2025 session it
opens spawns a stdio server, which takes seconds on a busy machine."""


def must_failures(url: str, spec_path: Path, report: Path, narrow: bool = True) -> set[tuple[str, str]]:
    options = NARROW if narrow else []
    result = CliRunner().invoke(
        cli, ["run", "-u", url, *options, "--spec-dir", str(spec_path), "--report", f"json:{report}"]
    )
    assert result.exit_code in (0, 1), result.output
    found: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return {
        (str(item.get("revision")), ident)
        for item in found["results"]
        if item["outcome"] == "failed" and item["severity"] == "must"
        for ident in item["requirements"]
    }


def test_the_faithful_gateway_and_bridge_fail_nothing_the_server_alone_passes(spec_path: Path, tmp_path: Path) -> None:
    with upstream_server("sdk") as server:
        alone = must_failures(server.url, spec_path, tmp_path / "alone.json")
    with gateway_chain(upstream="sdk") as gateway:
        relayed = must_failures(gateway.url, spec_path, tmp_path / "gateway.json")
    with gateway_chain(upstream="sdk", stdio=True) as bridge:
        with Probe(bridge.url) as probe:  # the shared 2026 server is spawned before the run's clock starts
            assert probe.modern("tools/list").status == 200
        bridged = must_failures(bridge.url, spec_path, tmp_path / "bridge.json", narrow=False)
    assert alone, "the SDK server's own known failures (pinned by the SDK baseline) make the comparison meaningful"
    assert relayed - alone == set(), sorted(relayed - alone)
    assert bridged - alone == set(), sorted(bridged - alone)
