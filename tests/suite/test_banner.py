"""A `run -c` command that starts a web server: the stderr lines that say so, and those that do not (issue 27)."""

from __future__ import annotations

import pytest

from mcp_assay.suite.transports.banner import http_advice, served_url


@pytest.mark.parametrize(
    ("line", "url"),
    [
        ("INFO:     Uvicorn running on http://127.0.0.1:18107 (Press CTRL+C to quit)", "http://127.0.0.1:18107"),
        ("[2026-01-01 10:00:00 +0000] [1] [INFO] Running on http://0.0.0.0:8000 (CTRL + C to quit)",
         "http://0.0.0.0:8000"),
        ("MCP server listening on http://localhost:3000/mcp", "http://localhost:3000/mcp"),
        (" * Running on http://127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("Server listening at http://[::1]:8080.", "http://[::1]:8080"),
        ("Listening on port 3001", "http://127.0.0.1:3001"),
    ],
)  # fmt: skip
def test_a_web_server_announcing_a_local_address_is_recognized(line: str, url: str) -> None:
    assert served_url(line) == url


@pytest.mark.parametrize(
    "line",
    [
        "Starting MCP server over stdio",
        "Connected to upstream API running on https://api.example.com",  # someone else's server
        "Using Ollama at http://localhost:11434",  # a local upstream, named without a listening verb
        "listening on 10.0.0.1:80",
        "Processing request of type CallToolRequest",
    ],
)
def test_lines_of_a_stdio_server_are_not_taken_for_a_web_server(line: str) -> None:
    assert served_url(line) is None


def test_the_advice_names_a_loopback_endpoint_and_the_command_for_serve() -> None:
    assert http_advice("http://0.0.0.0:8000", ["python", "server.py", "http", "8000"]) == (
        "use -u http://127.0.0.1:8000/mcp --serve 'python server.py http 8000' (MCP endpoints are usually at /mcp)"
    )
    assert http_advice("http://localhost:3000/api/mcp", ["node", "s.js"]) == (
        "use -u http://localhost:3000/api/mcp --serve 'node s.js'"
    )
