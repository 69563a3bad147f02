"""`spec pull` downloads the pinned schemas and refuses anything whose hash does not match."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_assay.spec.pull import pull_schemas
from mcp_assay.spec.sources import Pin, load_pins
from tests.peers.spec_mirror import spec_mirror


@pytest.fixture()
def mirror(spec_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that serves <revision>/schema.json from the spec folder and logs hits."""
    with spec_mirror(spec_path) as served:
        yield served.template, served.hits


def test_pull_downloads_each_pinned_revision_and_verifies_it(mirror: tuple[str, list[str]], tmp_path: Path) -> None:
    url, hits = mirror
    results = pull_schemas(tmp_path, mirror=url, timeout=5)
    assert sorted((r.revision, r.status) for r in results) == [
        ("2025-11-25", "downloaded"),
        ("2026-07-28", "downloaded"),
    ]
    assert (tmp_path / "2026-07-28" / "schema.json").is_file()
    again = pull_schemas(tmp_path, mirror=url, timeout=5)
    assert {r.status for r in again} == {"present"}
    assert len(hits) == 2  # nothing fetched the second time


def test_pull_refuses_a_download_whose_hash_does_not_match(mirror: tuple[str, list[str]], tmp_path: Path) -> None:
    url, _ = mirror
    wrong = [Pin(p.revision, p.commit, p.path, "0" * 64, p.url) for p in load_pins().values()]
    results = pull_schemas(tmp_path, mirror=url, timeout=5, pins=wrong)
    assert {r.status for r in results} == {"failed"}
    assert all("does not match pin" in r.detail for r in results)
    assert not (tmp_path / "2026-07-28" / "schema.json").exists()
