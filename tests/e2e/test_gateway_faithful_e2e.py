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
import yaml
from click.testing import CliRunner

from mcp_assay.cli import cli
from tests.peers.gateway.probe import Probe
from tests.peers.topology import gateway_chain

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

NARROW = ["--timeout", "3", "--stream-budget-ms", "800"]
"""As the corpus runs (the peers answer in milliseconds); the bridge gets the default timeout: every 2025 session it
opens spawns a stdio server, which takes seconds on a busy machine."""


SDK_ARGS = ["--tool-args", '{"add": {"a": 1, "b": 2}, "progress_tool": {"steps": 3}, "chatty": {}}']
"""As test_suite_e2e.py calls the SDK server's tools, so the pinned set is what the same run finds alone."""


def must_failures(url: str, spec_path: Path, report: Path, narrow: bool = True) -> set[tuple[str, str]]:
    options = NARROW if narrow else []
    command = ["run", "-u", url, *options, *SDK_ARGS, "--spec-dir", str(spec_path), "--report", f"json:{report}"]
    result = CliRunner().invoke(cli, command)
    assert result.exit_code in (0, 1), result.output
    found: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return {
        (str(item.get("revision")), ident)
        for item in found["results"]
        if item["outcome"] == "failed" and item["severity"] == "must"
        for ident in item["requirements"]
    }


PINNED = yaml.safe_load(Path(__file__).with_name("suite_expected.yaml").read_text("utf-8"))["python-sdk-http"]
"""The SDK server's own MUST failures over HTTP, per revision: pinned, and held true by test_suite_e2e.py."""


@pytest.mark.parametrize("build", ["gateway", "bridge"])
def test_the_faithful_gateway_and_bridge_fail_nothing_the_server_alone_passes(
    build: str, spec_path: Path, tmp_path: Path
) -> None:
    alone = {(str(revision), ident) for revision, ids in PINNED.items() for ident in ids}
    assert alone, "the SDK server's own known failures make the comparison meaningful"
    if build == "gateway":
        with gateway_chain(upstream="sdk") as gateway:
            relayed = must_failures(gateway.url, spec_path, tmp_path / "gateway.json")
    else:
        with gateway_chain(upstream="sdk", stdio=True) as bridge:
            with Probe(bridge.url) as probe:  # the shared 2026 server is spawned before the run's clock starts
                assert probe.modern("tools/list").status == 200
            relayed = must_failures(bridge.url, spec_path, tmp_path / "bridge.json", narrow=False)
    assert relayed - alone == set(), sorted(relayed - alone)
