"""The demo's drafts server process: started on loopback with its tokens, waited for, stopped whole."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from mcp_assay.demo.processes import DraftsServer
from mcp_assay.vocabulary.errors import Unreachable

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

TOKENS = {"reader": "reader-token-for-the-test", "writer": "writer-token-for-the-test"}


def test_the_server_listens_on_loopback_refuses_strangers_and_stops(tmp_path: Path) -> None:
    """Tool-defined: the tokens reach the server (a stranger gets 401), its test route counts drafts, stop ends it."""
    server = DraftsServer.start("naive", tmp_path, TOKENS)
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert httpx.get(server.count_url, timeout=5).json() == {"count": 0}
        refused = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=5)
        assert refused.status_code == 401
    finally:
        server.stop()
    assert server.process.poll() is not None
    assert (tmp_path / "server.log").is_file()
    assert all(token not in (tmp_path / "server.log").read_text() for token in TOKENS.values())


def test_a_server_that_exits_at_start_is_one_error_with_its_last_words(tmp_path: Path) -> None:
    """Tool-defined: a server that dies before listening is one error naming its exit code and output."""
    with pytest.raises(Unreachable) as raised:
        DraftsServer.start("no-such-build", tmp_path, TOKENS)
    message = str(raised.value)
    assert "exited with code 2" in message and "invalid choice: 'no-such-build'" in message
