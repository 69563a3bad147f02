"""`mcp-assay validate --cluster ADDRESS` on a Dask LocalCluster of two worker processes: the local report.

Tool-defined (issue 31). The units travel to the workers as Dask tasks (the schemas scattered once),
their results come back and are reduced here; the report must be the one `--jobs 1` writes, apart
from its timings. A scheduler that does not answer is one line and exit 3, never a report.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from distributed import LocalCluster

import mcp_assay.scale.cluster as cluster_module
from mcp_assay.cli import cli
from tests.scale.test_validate_jobs import DATA, SESSIONS, _without_timings


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield str(cluster.scheduler_address)


def test_a_cluster_of_two_workers_gives_the_local_report(spec_path: Path, tmp_path: Path, scheduler: str) -> None:
    for name in SESSIONS:
        shutil.copy(DATA / name, tmp_path / name)
    reports = {}
    for where in (["--jobs", "1"], ["--cluster", scheduler]):
        report = tmp_path / f"{where[0].strip('-')}.json"
        args = ["validate", str(tmp_path), *where, "--spec-dir", str(spec_path), "--report", f"json:{report}"]
        result = CliRunner().invoke(cli, args, prog_name="mcp-assay")
        assert result.exit_code == 1, result.output
        reports[where[0]] = _without_timings(report)
    assert reports["--cluster"] == reports["--jobs"]
    assert reports["--jobs"]["target"]["inputs"] == ["recording"] * 3


def test_no_scheduler_at_the_address_is_one_line_and_exit_3(
    spec_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", "1s")
    report = tmp_path / "r.json"
    args = ["validate", str(DATA / SESSIONS[0]), "--cluster", "tcp://127.0.0.1:9", "--spec-dir", str(spec_path)]
    result = CliRunner().invoke(cli, [*args, "--report", f"json:{report}"], prog_name="mcp-assay")
    assert result.exit_code == 3, result.output
    assert "no Dask scheduler answers at tcp://127.0.0.1:9" in result.output
    assert "Traceback" not in result.output and not report.exists()
