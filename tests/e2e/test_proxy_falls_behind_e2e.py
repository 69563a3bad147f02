"""A proxy whose judging cannot keep up still forwards and records everything, and says what it left.

Tool-defined (issue 31, "a proxy that never falls behind"): the judging worker is slowed on purpose
(``MCP_ASSAY_TEST_JUDGE_DELAY``) and its backlog made small (``MCP_ASSAY_TEST_BACKLOG``), and a real
``mcp-assay proxy`` is flooded. Every request is answered; the worker never holds more than its bound;
the report names how many exchanges were left unjudged live and that ``mcp-assay validate`` of the
recording judges them; the recording holds every exchange, and ``validate`` of it judges them all.
Counted work (requests, exchanges, records), never wall time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from tests.bench.bench_saturation import fast_server, flood, worker_status
from tests.peers.assay import assay_proxy

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

REQUESTS = 100
BOUND = 20


def test_a_flooded_proxy_whose_judging_lags_forwards_records_everything_and_leaves_the_rest_to_validate(
    tmp_path: Path, spec_path: Path
) -> None:
    recording, report, status = tmp_path / "flood.jsonl", tmp_path / "flood.json", tmp_path / "status.json"
    env = {
        "MCP_ASSAY_TEST_JUDGE_DELAY": "0.02",
        "MCP_ASSAY_TEST_BACKLOG": str(BOUND),
        "MCP_ASSAY_WORKER_STATUS": str(status),
    }
    options = ["--record", str(recording), "--report", f"json:{report}", "--live", "off", "--fail-on", "never"]
    with fast_server() as port:
        with assay_proxy(f"http://127.0.0.1:{port}/mcp", *options, "--spec-dir", str(spec_path), env=env) as proxy:
            assert flood(proxy.port, "/mcp", REQUESTS) == REQUESTS  # judging's lag never held a request back
            assert proxy.stop() == 0
    counts = worker_status(status)
    assert counts["received"] == REQUESTS * 4  # request, answer head, body, end: all read and recorded
    assert counts["most_queued"] <= 2 * BOUND  # the bound held (twice it only for exchanges judging began)
    data = json.loads(report.read_text(encoding="utf-8"))
    judged_live = data["stats"]["exchanges"]
    notes = [note for note in data["notes"] if "did not keep up" in note]
    assert len(notes) == 1, data["notes"]
    left = int(re.search(r"(\d+) exchange\(s\)", notes[0]).group(1))  # type: ignore[union-attr]
    assert left == counts["unjudged"] > 0
    assert judged_live + left == REQUESTS  # what was judged and what was left: every exchange, once
    assert f"mcp-assay validate {recording}" in notes[0]
    assert data["verdict"]["code"] != "conformant", data["verdict"]  # what was left unjudged is never a pass
    assert f"{left} exchange(s) were left unjudged live" in data["verdict"].get("left_out", "")
    # the recording is whole, and validate finishes the job
    records = [json.loads(line) for line in recording.read_text(encoding="utf-8").splitlines()]
    assert sum(1 for record in records if record.get("type") == "http") == REQUESTS
    validated = tmp_path / "validated.json"
    result = CliRunner().invoke(
        cli, ["validate", str(recording), "--spec-dir", str(spec_path), "--report", f"json:{validated}", "--fail-on",
              "never", "--jobs", "1"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    judged = json.loads(validated.read_text(encoding="utf-8"))
    assert judged["stats"]["exchanges"] == REQUESTS
    assert not [note for note in judged["notes"] if "did not keep up" in note]
