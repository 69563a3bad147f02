"""`run` and `demo` with no schema on disk: fetch the pinned ones (saying from where), or refuse with --offline.

Upstream cannot be reached from the test machine, so a loopback mirror stands in for it through
``MCP_ASSAY_SPEC_MIRROR`` (the same template ``spec pull --mirror`` takes); the user cache is a
fresh temporary folder (``tests/conftest.py``), and ``MCP_ASSAY_SPEC_DIR`` is unset.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mcp_assay.cli import cli
from mcp_assay.spec.sources import cache_dir, sha256_of
from tests.peers.process import free_port
from tests.peers.spec_mirror import SpecMirror, spec_mirror

REVISIONS = ("2025-11-25", "2026-07-28")


@pytest.fixture
def mirror(spec_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SpecMirror]:
    monkeypatch.delenv("MCP_ASSAY_SPEC_DIR", raising=False)
    with spec_mirror(spec_path) as served:
        monkeypatch.setenv("MCP_ASSAY_SPEC_MIRROR", served.template)
        yield served


def closed_url() -> str:
    """An endpoint nothing listens on: the run stops at the target (exit 3), after the schemas."""
    return f"http://127.0.0.1:{free_port()}/mcp"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "250"})


def test_run_fetches_the_pinned_schemas_into_the_cache_and_says_from_where(mirror: SpecMirror, spec_path: Path) -> None:
    """Tool-defined (issue 14): with no schema on disk, `run` fetches each pinned file, checked against its pin."""
    cache = cache_dir()
    result = invoke("run", "-u", closed_url(), "--report", "tap:-")
    assert result.exit_code == 3, result.output  # the target, not the schemas
    said = " ".join(result.stderr.split())
    assert f"no MCP schema on disk: fetching the 2 pinned schemas into {cache}" in said
    for revision in REVISIONS:
        assert f"{revision} {mirror.template.format(revision=revision)}" in said
        fetched = cache / revision / "schema.json"
        assert sha256_of(fetched) == sha256_of(spec_path / revision / "schema.json")
    assert sorted(mirror.hits) == [f"/{revision}/schema.json" for revision in REVISIONS]
    again = invoke("run", "-u", closed_url(), "--report", "tap:-")
    assert again.exit_code == 3 and "fetching" not in again.stderr
    assert len(mirror.hits) == 2  # the cache is used from then on


@pytest.mark.parametrize("command", ["run", "demo"])
def test_offline_refuses_with_the_remedy_and_fetches_nothing(mirror: SpecMirror, command: str) -> None:
    """Tool-defined (issue 14): --offline with an empty cache is one line naming `mcp-assay spec pull`; exit 3."""
    args = [command, "--offline"] + (["-u", closed_url()] if command == "run" else [])
    result = invoke(*args)
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "--offline forbids fetching them" in lines[0] and "`mcp-assay spec pull`" in lines[0]
    assert mirror.hits == []
    assert not cache_dir().exists()


def test_offline_is_also_read_from_its_environment_twin(mirror: SpecMirror) -> None:
    """Tool-defined: MCP_ASSAY_OFFLINE=1 is --offline."""
    result = CliRunner().invoke(cli, ["run", "-u", closed_url()], env={"MCP_ASSAY_OFFLINE": "1"})
    assert result.exit_code == 3 and "--offline forbids fetching" in result.stderr
    assert mirror.hits == []


def test_a_failed_fetch_says_what_failed_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a mirror without the files is an error naming each revision and the remedy; nothing is kept."""
    monkeypatch.delenv("MCP_ASSAY_SPEC_DIR", raising=False)
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    with spec_mirror(empty) as served:
        monkeypatch.setenv("MCP_ASSAY_SPEC_MIRROR", served.template)
        result = invoke("run", "-u", closed_url())
    assert result.exit_code == 3, result.output
    said = " ".join(result.stderr.split())
    for revision in REVISIONS:
        assert f"failed {revision}: {served.template.format(revision=revision)}: HTTP 404" in said
    assert "the pinned schemas could not be fetched" in said and "mcp-assay spec pull" in said
    assert not any(cache_dir().glob("*/schema.json"))


def test_nothing_is_fetched_when_a_spec_dir_is_given(mirror: SpecMirror, spec_path: Path) -> None:
    """Tool-defined: the user's own schemas are used as they are; the cache is not filled behind their back."""
    result = invoke("run", "-u", closed_url(), "--spec-dir", str(spec_path))
    assert result.exit_code == 3, result.output
    assert "fetching" not in result.stderr and mirror.hits == []
