"""The tap as a client's configuration names it (issue 27): the client's own environment, not the shell's.

The official SDK client passes the server it starts only a few variables (``get_default_environment``:
HOME, PATH, USER …), so ``MCP_ASSAY_SPEC_DIR`` exported in the shell that runs the client never reaches the
tap. The entry ``docs/live-traffic.md`` shows, read from the page with its paths filled in, starts the tap
with ``--spec-dir`` in its arguments and works; the same entry without ``--spec-dir`` finds no schema (the
HOME the client passes holds no cache), which is the evidence of the issue.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.peers.process import HERE

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

PAGE = HERE.parent.parent / "docs" / "live-traffic.md"


def documented_entry() -> dict[str, Any]:
    """The client configuration entry the tap's section shows."""
    blocks = re.findall(r"```json\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    (entry,) = [json.loads(block) for block in blocks if "mcpServers" in block]
    (server,) = entry["mcpServers"].values()
    return dict(server)


def filled(entry: dict[str, Any], spec_path: Path, folder: Path) -> tuple[str, list[str]]:
    """The entry with its /path/to/ placeholders made real: this mcp-assay, the test's schemas and files."""
    places = {
        "/path/to/mcp-assay/.venv/bin/mcp-assay": str(Path(sys.executable).parent / "mcp-assay"),
        "/path/to/spec": str(spec_path.resolve()),
        "/path/to/weather/server.py": str(HERE / "first_server.py"),
        "/path/to/": f"{folder}/",
        "python": sys.executable,
    }

    def fill(word: str) -> str:
        for placeholder, value in places.items():
            if word == placeholder or (placeholder.endswith("/") and placeholder in word):
                return word.replace(placeholder, value)
        return word

    return fill(entry["command"]), [fill(word) for word in entry["args"]]


async def use(command: str, args: list[str], home: Path, errlog: Path) -> list[str]:
    """What a client that starts ``command`` the SDK's way (its default environment, HOME moved) can list."""
    params = StdioServerParameters(command=command, args=args, env={"HOME": str(home)})
    with errlog.open("w") as stream, anyio.fail_after(60):
        async with Client(stdio_client(params, errlog=stream)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]


def test_the_documented_client_entry_starts_the_tap_with_its_schemas(
    spec_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_ASSAY_SPEC_DIR", str(spec_path.resolve()))  # the shell's: the client drops it
    home = tmp_path / "home"
    home.mkdir()
    command, args = filled(documented_entry(), spec_path, tmp_path)
    assert "--spec-dir" in args
    assert anyio.run(use, command, args, home, tmp_path / "err.txt") == ["forecast"]
    report = tmp_path / "weather.json"
    for _ in range(200):  # the tap writes its report once the client has gone
        if report.exists():
            break
        anyio.run(anyio.sleep, 0.1)
    assert json.loads(report.read_text())["target"]["kind"] == "tap"
    at = args.index("--spec-dir")
    without = args[:at] + args[at + 2 :]
    with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's error for a server that closed at once
        anyio.run(use, command, without, home, tmp_path / "err-without.txt")
    assert "no MCP schema is available" in (tmp_path / "err-without.txt").read_text()
