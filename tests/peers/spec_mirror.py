"""A loopback HTTP server standing in for the upstream schema repository (``--mirror`` / MCP_ASSAY_SPEC_MIRROR).

It serves ``<revision>/schema.json`` from a local spec folder, and at ``/index.json`` the folder's listing in
the shape of GitHub's contents API (what ``spec pull --check --index`` reads), and logs every path asked for,
so a test can check what was fetched, and that nothing was when nothing should be.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SpecMirror:
    """Where the mirror listens (as a ``{revision}`` URL template) and what it was asked for."""

    template: str
    hits: list[str] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    """The ``Authorization`` header of each request that carried one."""


@contextmanager
def spec_mirror(folder: Path) -> Iterator[SpecMirror]:
    """Serve ``folder/<revision>/schema.json`` on a free loopback port until the block ends."""
    mirror = SpecMirror("")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            path = self.path.partition("?")[0]
            mirror.hits.append(path)
            if self.headers.get("authorization"):
                mirror.authorizations.append(self.headers["authorization"])
            if path == "/index.json":  # the schema folder's listing, as GitHub's contents API gives it
                names = sorted(child.name for child in folder.iterdir() if (child / "schema.json").is_file())
                listing = json.dumps([{"name": name, "type": "dir"} for name in names]).encode()
                self.send_response(200)
                self.send_header("content-length", str(len(listing)))
                self.end_headers()
                self.wfile.write(listing)
                return
            revision = path.strip("/").split("/")[0]
            file = folder / revision / "schema.json"
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
    mirror.template = f"http://127.0.0.1:{server.server_address[1]}/{{revision}}/schema.json"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield mirror
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
