"""`spec pull` downloads the pinned schemas and refuses anything whose hash does not match."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_assay.spec.pull import pull_schemas
from mcp_assay.spec.sources import Pin, load_pins


@pytest.fixture()
def mirror(spec_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that serves <revision>/schema.json from the spec folder and logs hits."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            hits.append(self.path)
            revision = self.path.strip("/").split("/")[0]
            file = spec_path / revision / "schema.json"
            if not file.is_file():
                self.send_response(404)
                self.end_headers()
                return
            body = file.read_bytes()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{{revision}}/schema.json", hits
    finally:
        server.shutdown()
        server.server_close()


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
