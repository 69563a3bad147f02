"""`mcp-assay tap` as a real client's stdio server: the official Python SDK client spawns the tap,
the tap spawns the Python SDK server; and the tap's own promises (a clean stdout, stderr passed
on, exit codes and signals forwarded) checked with small scripted servers.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_assay.cli import cli
from mcp_assay.recording.records import read_recording
from mcp_assay.wire.model import ProcessExit, StdioLine
from tests.peers.once import built_once
from tests.peers.process import HERE as PEERS
from tests.peers.process import PYTHON

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

MODES = ("auto", "legacy", "2026-07-28")
WAIT = 20.0


def tap_command(spec_path: Path, folder: Path, name: str, *server: str) -> list[str]:
    return [
        PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path.resolve()),
        "--record", str(folder / f"{name}.jsonl"), "--report", f"json:{folder / f'{name}.json'}", "--", *server,
    ]  # fmt: skip


@dataclass
class TapRun:
    folder: Path
    versions: dict[str, str] = field(default_factory=dict)
    answers: dict[str, list[str]] = field(default_factory=dict)
    listen_delay: float = -1.0
    stderr: str = ""

    def report(self, mode: str) -> dict[str, Any]:
        return dict(json.loads((self.folder / f"{mode}.json").read_text()))

    def recording(self, mode: str) -> Path:
        return self.folder / f"{mode}.jsonl"


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def _drive(spec_path: Path, run: TapRun) -> None:
    with (run.folder / "stderr.txt").open("w") as errlog:
        for mode in MODES:
            command = tap_command(spec_path, run.folder, mode, PYTHON, str(PEERS / "sdk_server.py"), "stdio")
            params = StdioServerParameters(command=command[0], args=command[1:])
            async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
                await client.list_tools()
                added = await client.call_tool("add", {"a": 20, "b": 22})
                stepped = await client.call_tool("progress_tool", {"steps": 2}, progress_callback=_progress)
                read = await client.read_resource("greeting://tap")
                prompt = await client.get_prompt("summarize", {"text": "taps"})
                run.answers[mode] = [
                    getattr(added.content[0], "text", ""),
                    getattr(stepped.content[0], "text", ""),
                    getattr(read.contents[0], "text", ""),
                    str(len(prompt.messages)),
                ]
                run.versions[mode] = str(client.protocol_version)
                if mode == "2026-07-28":
                    async with client.listen(tools_list_changed=True) as subscription:
                        started = time.time()
                        await client.call_tool("touch_tools", {})
                        with anyio.fail_after(5):
                            await subscription.__anext__()
                        run.listen_delay = time.time() - started


def _tap_run(spec_path: Path, folder: Path) -> None:
    """The SDK client's three sessions through the tap, their reports and recordings, its stderr and what the client
    got (``run.json``) written to ``folder``."""
    run = TapRun(folder)
    anyio.run(_drive, spec_path, run)
    deadline = time.monotonic() + WAIT
    while not all((run.folder / f"{mode}.json").exists() for mode in MODES) and time.monotonic() < deadline:
        time.sleep(0.05)
    got = {"versions": run.versions, "answers": run.answers, "listen_delay": run.listen_delay}
    (folder / "run.json").write_text(json.dumps(got), encoding="utf-8")


@pytest.fixture(scope="module")
def tap_run(tmp_path_factory: pytest.TempPathFactory, spec_path: Path) -> TapRun:
    """Run once per test run, whichever worker asks first (``tests/peers/once.py``): the tests only read it."""
    folder = built_once(tmp_path_factory, "tap-sdk-client", lambda folder: _tap_run(spec_path, folder))
    got = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    stderr = (folder / "stderr.txt").read_text()
    return TapRun(folder, dict(got["versions"]), dict(got["answers"]), float(got["listen_delay"]), stderr)


def test_the_sdk_client_works_through_the_tap_in_every_mode(tap_run: TapRun) -> None:
    """Tool-defined: the tap is a drop-in stdio server for auto, legacy and pinned clients."""
    assert tap_run.versions == {"auto": "2026-07-28", "legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
    for answers in tap_run.answers.values():
        assert answers == ["42", "did 2 steps", "Hello, tap!", "1"]


def test_each_tap_report_lists_what_was_judged(tap_run: TapRun) -> None:
    """Tool-defined: each report covers its connection's revision; the audit names each call."""
    for mode, revision in (("auto", "2026-07-28"), ("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")):
        report = tap_run.report(mode)
        assert report["target"]["kind"] == "tap" and report["target"]["transport"] == "stdio"
        judged = {rev for result in report["results"] for rev in result["revisions"]}
        assert judged == {revision}, mode
        calls = [line["tool"] for line in report["audit"] if line["method"] == "tools/call"]
        assert calls[:2] == ["add", "progress_tool"]
        assert all(line["status"] is None for line in report["audit"])
    statuses = {item["id"]: item["outcome"] for item in tap_run.report("legacy")["requirements"]}
    assert statuses["HS-04"] == "passed" and statuses["STDIO-02"] == "passed"


def test_the_terminal_report_and_live_findings_go_to_stderr(tap_run: TapRun) -> None:
    """Tool-defined: stdout is the protocol channel, so the tap says everything on stderr."""
    assert tap_run.stderr.count("json report written to") == len(MODES)


def test_a_listen_notification_arrives_through_the_tap_while_the_listen_is_open(tap_run: TapRun) -> None:
    """Tool-defined: lines are relayed as they come, not at the end of the session."""
    assert 0 <= tap_run.listen_delay < 1.0


def test_the_recordings_revalidate_to_the_same_verdicts(tap_run: TapRun, spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: `mcp-assay validate` on each tap recording reproduces the tap's verdicts."""
    for mode in MODES:
        again = tmp_path / f"{mode}.json"
        result = CliRunner().invoke(
            cli, ["validate", "--spec-dir", str(spec_path), str(tap_run.recording(mode)), "--report", f"json:{again}"]
        )
        assert result.exit_code in (0, 1), result.output

        def verdicts(report: dict[str, Any]) -> set[tuple[str, str, int, int]]:
            return {(r["check"], r["outcome"], r["judged"], r["violations"]) for r in report["results"]}

        assert verdicts(json.loads(again.read_text())) == verdicts(tap_run.report(mode)), mode


def test_the_client_closes_stdin_and_the_exit_is_recorded(tap_run: TapRun) -> None:
    """Tool-defined: the SDK client's shutdown (stdin EOF) reaches the server; the exit is evidence."""
    for mode in MODES:
        log = read_recording(tap_run.recording(mode)).log
        (exit_,) = [item for item in log if isinstance(item, ProcessExit)]
        assert exit_.code == 0 and exit_.stdin_closed_at is not None and exit_.signals == ()
        assert all(isinstance(item.raw, bytes) for item in log if isinstance(item, StdioLine))


# -- the tap's own promises, with scripted servers ----------------------------------------------------
ECHO = "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line); sys.stdout.buffer.flush()\n"
NOTICE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}'
UP = f"print({NOTICE!r}, flush=True)\n"
"""A scripted server's first line: there is a server to judge, so the tap exits as it did (a server that never
answered is not judged, exit 3: tests/e2e/test_tap_edges_e2e.py)."""


def _tap(spec_path: Path, folder: Path, script: str, data: bytes = b"", **kwargs: Any) -> subprocess.Popen[bytes]:
    command = tap_command(spec_path, folder, "scripted", PYTHON, "-c", script)
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_the_tap_writes_only_the_servers_bytes_to_stdout(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: byte-exact relaying through the real command, with the report on stderr."""
    sent = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}\r\n\n\xff\xfe\n{"unterminated": true}'
    process = _tap(spec_path, tmp_path, ECHO)
    out, err = process.communicate(sent, timeout=WAIT)
    assert out == sent
    assert process.returncode == 0
    assert b"json report written to" in err


def test_the_servers_exit_code_and_stderr_are_passed_on(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: the client sees the server's exit code and its stderr, as without the tap."""
    process = _tap(spec_path, tmp_path, UP + "import sys; sys.stderr.write('server log line\\n'); sys.exit(7)")
    _, err = process.communicate(b"", timeout=WAIT)
    assert process.returncode == 7
    assert err.startswith(b"server log line\n")


def test_a_server_killed_by_a_signal_makes_the_tap_die_by_the_same_signal(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: death by signal is forwarded as such, not turned into an exit code."""
    process = _tap(spec_path, tmp_path, UP + "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    process.communicate(b"", timeout=WAIT)
    assert process.returncode == -signal.SIGKILL


def test_signals_sent_to_the_tap_are_forwarded_to_the_server(spec_path: Path, tmp_path: Path) -> None:
    """Tool-defined: SIGTERM to the tap reaches the server once; the recording names it."""
    script = UP + (
        "import signal, sys, time\n"
        "def bye(signum, frame):\n"
        "    sys.stderr.write('server got SIGTERM\\n'); sys.stderr.flush(); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "print('ready', file=sys.stderr, flush=True)\n"
        "time.sleep(30)\n"
    )
    process = _tap(spec_path, tmp_path, script)
    assert process.stderr is not None
    assert process.stderr.readline() == b"ready\n"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=WAIT)
    assert b"server got SIGTERM" in err
    assert process.returncode == 0
    (exit_,) = [item for item in read_recording(tmp_path / "scripted.jsonl").log if isinstance(item, ProcessExit)]
    assert exit_.signals == ("SIGTERM",) and exit_.code == 0


def test_the_tap_refuses_to_put_a_report_on_stdout(spec_path: Path) -> None:
    """Tool-defined: `--report json:-` would corrupt the protocol channel, so it is a usage error."""
    result = CliRunner().invoke(cli, ["tap", "--spec-dir", str(spec_path), "--report", "json:-", "--", "true"])
    assert result.exit_code == 2
    assert "protocol channel" in result.output
