"""`run --serve`: the run starts the HTTP server itself, reads what it listens on, and stops it."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcp_assay.suite.launch import LaunchedServer, launch
from mcp_assay.vocabulary.errors import Unreachable
from tests.peers.process import HERE, PYTHON, free_port, sdk_server_command

ROOT = HERE.parent.parent

pytestmark = pytest.mark.timeout(120)


def _closed(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) != 0


async def _serve(argv: list[str], port: int, timeout: float = 30.0) -> tuple[LaunchedServer, dict[str, object]]:
    server = await launch(argv, f"http://127.0.0.1:{port}/mcp", timeout=timeout)
    try:
        return server, server.observation_data()
    finally:
        await server.stop()


@pytest.mark.parametrize(("flags", "address"), [((), "127.0.0.1"), (("--bind-all",), "0.0.0.0")])
def test_the_listening_addresses_of_a_launched_sdk_server_are_read_and_it_is_stopped(
    flags: tuple[str, ...], address: str
) -> None:
    """Tool-defined: /proc tells where the server's process tree listens; the whole group is stopped after."""
    port = free_port()
    server, data = anyio.run(_serve, sdk_server_command(*flags, port=port), port)
    assert data["addresses"] == [f"{address}:{port}"]
    assert str(data["command"]).endswith(" sdk_server.py")
    assert server.process.returncode is not None
    assert _closed(port)


@pytest.mark.parametrize(
    ("argv", "timeout", "said"),
    [
        ([PYTHON, "-c", "import sys; print('no config file, giving up'); sys.exit(4)"], 30.0, "exited with code 4"),
        ([PYTHON, "-c", "import time; time.sleep(60)"], 0.5, "did not accept connections within 0.5 s"),
        (["/nonexistent/mcp-server"], 30.0, "could not start it"),
    ],
)
def test_a_server_that_never_comes_up_is_one_clear_error(argv: list[str], timeout: float, said: str) -> None:
    """Tool-defined: exit 3 material, with the server's own last words, and nothing left running."""
    port = free_port()
    with pytest.raises(Unreachable) as caught:
        anyio.run(lambda: launch(argv, f"http://127.0.0.1:{port}/mcp", timeout=timeout))
    assert said in str(caught.value)
    if "exited" in said:
        assert "no config file, giving up" in str(caught.value)


def _run(*args: str, report: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "mcp_assay", "run", *args, "--report", f"json:{report}"],
        capture_output=True, text=True, timeout=90, cwd=ROOT,
    )  # fmt: skip


@pytest.mark.e2e
@pytest.mark.parametrize(("flags", "outcome"), [((), "passed"), (("--bind-all",), "failed")])
def test_run_serve_judges_auth_31_on_a_real_server_and_stops_it(
    flags: tuple[str, ...], outcome: str, tmp_path: Path
) -> None:
    """Spec-mandated (AUTH-31), end to end: `mcp-assay run -u URL --serve CMD` on the SDK server, bound to
    loopback and to every interface; a SHOULD failure leaves the exit code 0 under --fail-on must."""
    port = free_port()
    report = tmp_path / "report.json"
    command = shlex.join(sdk_server_command(*flags, port=port))
    done = _run("-u", f"http://127.0.0.1:{port}/mcp", "--serve", command, "--only", "tools,AUTH-31", report=report)
    assert done.returncode == 0, done.stderr
    results = json.loads(report.read_text())["results"]
    verdicts = [result for result in results if "AUTH-31" in result["requirements"]]
    assert sorted(verdict["revision"] for verdict in verdicts) == ["2025-11-25", "2026-07-28"]  # one per revision
    for verdict in verdicts:
        assert verdict["outcome"] == outcome, verdict["reason"]
    audit = json.loads(report.read_text())["audit"]
    assert any(line["method"] == "tools/list" for line in audit)  # the tools family was sent
    assert _closed(port)


@pytest.mark.e2e
def test_run_serve_errors_come_before_any_work(tmp_path: Path) -> None:
    """Tool-defined: --serve without --url is a usage error (2); a server that dies first is exit 3."""
    usage = _run("-c", f"{PYTHON} -c pass", "--serve", "python server.py", report=tmp_path / "a.json")
    assert usage.returncode == 2 and "--serve" in usage.stderr
    port = free_port()
    dying = f"{sys.executable} -c 'import sys; sys.exit(7)'"
    died = _run("-u", f"http://127.0.0.1:{port}/mcp", "--serve", dying, report=tmp_path / "b.json")
    assert died.returncode == 3 and "exited with code 7" in died.stdout  # the one not-judged line, last
