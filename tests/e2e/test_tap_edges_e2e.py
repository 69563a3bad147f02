"""`mcp-assay tap` at its edges, as a client would meet them: a server command that is not there or dies
before it says anything (nothing to judge: one line, exit 3), and the server and the client ending in
every order (the tap survives each, keeps the server's exit code and writes its report). Every run is a
real `python -m mcp_assay tap` process between this test (the client) and a scripted server.

Tool-defined throughout (issue 18: "a verdict only where there is something to judge", "the tap
survives any order of exits").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.recording.records import read_recording
from mcp_assay.wire.model import Observation, ProcessExit
from tests.peers.process import PYTHON

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

WAIT = 30.0
ROUNDS = 4
"""How many times each order of exits is tried (the crash it replaces happened 7 times out of 7)."""
REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
LATE = b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n'
ANSWER = '{"jsonrpc":"2.0","id":1,"result":{}}'
ANSWER_THEN_EXIT = f"import sys\nsys.stdin.readline()\nprint({ANSWER!r}, flush=True)\nsys.exit(5)\n"
"""A server that answers one request and exits 5 on its own, whatever the client does next."""
ANSWER_THEN_EOF = (
    f"import sys\nsys.stdin.readline()\nprint({ANSWER!r}, flush=True)\nsys.stdin.read()\n"
    'sys.stderr.write(\'server: stdin closed, bye\\n\')\nprint(\'{"jsonrpc":"2.0","method":"x/late"}\', flush=True)\n'
)
"""A server that answers one request, then exits 0 once its stdin ends (writing a last line to each pipe)."""


@dataclass
class Tapped:
    folder: Path
    name: str
    process: subprocess.Popen[bytes]

    @property
    def report_path(self) -> Path:
        return self.folder / f"{self.name}.json"

    def report(self) -> dict[str, Any]:
        return dict(json.loads(self.report_path.read_text()))

    @property
    def recording(self) -> Path:
        return self.folder / f"{self.name}.jsonl"

    def close(self) -> None:
        """The client's ends of the pipes, once the tap has exited."""
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


PROGRESS = "mcp-assay: judging the session for the report…"
"""A status line the tap prints when the judging process takes over 2 s (on a loaded machine, even for a
one-line report): it is not part of any answer asserted here."""


def _said(err: str | bytes) -> list[str]:
    """What the tap said on stderr, line by line, without the status line above."""
    text = err.decode() if isinstance(err, bytes) else err
    return [line for line in text.splitlines() if not line.startswith(PROGRESS)]


def _tap(spec_path: Path, folder: Path, name: str, *server: str, reports: tuple[str, ...] = ()) -> Tapped:
    command = [
        PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path), "--record", str(folder / f"{name}.jsonl"),
        "--report", f"json:{folder / f'{name}.json'}", *reports, "--", *server,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return Tapped(folder, name, process)


def _one_line(spec_path: Path, *server: str, stdin: bytes = b"") -> tuple[int, str, bytes]:
    """Run the tap with no file report: its exit code, its stderr and its stdout."""
    command = [PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path), "--", *server]
    done = subprocess.run(command, input=stdin, capture_output=True, timeout=WAIT, check=False)
    return done.returncode, done.stderr.decode(), done.stdout


# -- nothing to judge ---------------------------------------------------------------------------------
def test_a_command_not_on_the_path_is_one_line_and_exit_3(spec_path: Path) -> None:
    code, err, out = _one_line(spec_path, "mcp-assay-no-such-server-x7")
    assert code == 3 and out == b""
    assert _said(err) == [
        "mcp-assay: not judged — the server command could not be started (mcp-assay-no-such-server-x7: command not "
        "found)"
    ]


def test_a_command_that_is_not_executable_says_so(spec_path: Path, tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    code, err, _ = _one_line(spec_path, str(script))
    assert code == 3
    assert _said(err) == [
        f"mcp-assay: not judged — the server command could not be started ({script}: not executable "
        "(permission denied))"
    ]


def test_a_server_that_crashes_at_start_gives_its_code_and_last_stderr_lines(spec_path: Path) -> None:
    crash = (
        "import sys\nprint('Traceback (most recent call last):', file=sys.stderr)\n"
        "print('  File \"server.py\", line 1', file=sys.stderr)\nprint('    import fastmcp', file=sys.stderr)\n"
        "print(\"ModuleNotFoundError: No module named 'fastmcp'\", file=sys.stderr)\nsys.exit(1)\n"
    )
    code, err, out = _one_line(spec_path, PYTHON, "-c", crash)
    assert code == 3 and out == b""
    said = _said(err)
    assert said[:4] == [  # the server's own stderr, relayed as it came
        "Traceback (most recent call last):", '  File "server.py", line 1', "    import fastmcp",
        "ModuleNotFoundError: No module named 'fastmcp'",
    ]  # fmt: skip
    assert said[4:] == [
        "mcp-assay: not judged — the server exited with code 1 before it answered anything (the client sent nothing); "
        "its stderr ended: File \"server.py\", line 1 | import fastmcp | ModuleNotFoundError: No module named 'fastmcp'"
    ]
    assert "conformant" not in err and "Verdict" not in err


def test_a_server_that_never_answers_is_not_judged_even_with_client_traffic(spec_path: Path, tmp_path: Path) -> None:
    tapped = _tap(spec_path, tmp_path, "silent", PYTHON, "-c", "import sys; sys.stdin.read()")
    _, err = tapped.process.communicate(REQUEST, timeout=WAIT)
    assert tapped.process.returncode == 3
    why = "the server exited with code 0 before it answered anything (the client sent 1 line(s))"
    assert _said(err) == [  # the files first, then the one line in place of a verdict (issue 19: it ends the output)
        f"json report written to {tapped.report_path}",
        f"mcp-assay: not judged — {why}",
    ]
    verdict = tapped.report()["verdict"]
    assert verdict == {"code": "not-judged", "text": f"not judged — {why}", "exit_code": 3, "unjudged": why}


def test_a_server_killed_before_it_answered_is_not_judged(spec_path: Path) -> None:
    code, err, _ = _one_line(spec_path, PYTHON, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert code == 3
    assert _said(err) == [
        "mcp-assay: not judged — the server was killed by SIGKILL before it answered anything (the client sent nothing)"
    ]


def test_a_report_that_was_judged_is_not_affected(spec_path: Path, tmp_path: Path) -> None:
    """The counterpart: once the server answered, the report is a report and the tap exits with the server's code."""
    tapped = _tap(spec_path, tmp_path, "judged", PYTHON, "-c", ANSWER_THEN_EXIT)
    out, err = tapped.process.communicate(REQUEST, timeout=WAIT)
    assert tapped.process.returncode == 5 and out.decode() == ANSWER + "\n"
    report = tapped.report()
    assert report["verdict"]["code"] != "not-judged" and report["verdict"]["unjudged"] is None
    assert any("the server exited with code 5; the tap ended with the same status" in note for note in report["notes"])


# -- every order of exits -----------------------------------------------------------------------------
def _finished(tapped: Tapped) -> tuple[int, list[str]]:
    """Wait for the tap (the client still holding its stdin), then close the client's pipes."""
    code = tapped.process.wait(WAIT)
    assert tapped.process.stderr is not None
    err = tapped.process.stderr.read().decode()
    tapped.close()
    assert "Fatal Python error" not in err and "Traceback" not in err, err
    return code, _said(err)


def _exit_of(tapped: Tapped) -> ProcessExit:
    (exit_,) = [item for item in read_recording(tapped.recording).log if isinstance(item, ProcessExit)]
    return exit_


def test_the_server_exits_first_while_the_client_still_holds_stdin(spec_path: Path, tmp_path: Path) -> None:
    """The server answers and exits 5; the client reads the end of the tap's stdout, writes two more lines and
    keeps stdin open until the tap has exited. The tap exits 5, writes its report, and records the two lines
    as undelivered (they never reached a server)."""
    for round_ in range(ROUNDS):
        tapped = _tap(spec_path, tmp_path, f"server-first-{round_}", PYTHON, "-c", ANSWER_THEN_EXIT)
        process = tapped.process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(REQUEST)
        process.stdin.flush()
        assert process.stdout.readline().decode() == ANSWER + "\n"
        assert process.stdout.read() == b""  # the tap ends its stdout once the server is gone, as the server's did
        process.stdin.write(LATE)
        process.stdin.flush()
        code, err = _finished(tapped)
        assert code == 5, err
        assert err[0] == f"json report written to {tapped.report_path}", err
        assert err[1].startswith("MCP conformance report"), err  # a file report adds to the terminal one (issue 27)
        assert err[-1].startswith("Verdict: conformant in part"), err  # the verdict line ends every session
        exit_ = _exit_of(tapped)
        assert exit_.code == 5 and exit_.stdin_closed_at is None
        undelivered = [
            item for item in read_recording(tapped.recording).log
            if isinstance(item, Observation) and item.kind == "undelivered"
        ]  # fmt: skip
        assert [json.loads(item.data["text"])["id"] for item in undelivered] == [2, 3]
        assert all(item.data["reason"] == "the server had exited" for item in undelivered)
        assert tapped.report()["stats"]["exchanges"] >= 2


def test_the_client_closes_stdin_first(spec_path: Path, tmp_path: Path) -> None:
    """The usual shutdown: stdin ends, the server writes its last lines and exits 0; the tap relays them and
    exits 0, and the exit record says when stdin closed."""
    for round_ in range(ROUNDS):
        tapped = _tap(spec_path, tmp_path, f"client-first-{round_}", PYTHON, "-c", ANSWER_THEN_EOF)
        out, err = tapped.process.communicate(REQUEST, timeout=WAIT)
        assert tapped.process.returncode == 0, err
        assert out.decode().splitlines() == [ANSWER, '{"jsonrpc":"2.0","method":"x/late"}']
        assert _said(err)[0] == "server: stdin closed, bye" and b"Fatal Python error" not in err
        exit_ = _exit_of(tapped)
        assert exit_.code == 0 and exit_.stdin_closed_at is not None and exit_.stdin_closed_at <= exit_.time
        assert tapped.report_path.is_file()


def test_the_client_and_the_server_end_at_once(spec_path: Path, tmp_path: Path) -> None:
    """The client closes stdin right after its request while the server answers and exits 5 by itself: whichever
    end the tap sees first, it exits 5 and writes its report."""
    for round_ in range(ROUNDS):
        tapped = _tap(spec_path, tmp_path, f"both-{round_}", PYTHON, "-c", ANSWER_THEN_EXIT)
        out, err = tapped.process.communicate(REQUEST, timeout=WAIT)
        assert tapped.process.returncode == 5, err
        assert out.decode() == ANSWER + "\n" and b"Fatal Python error" not in err
        assert _exit_of(tapped).code == 5 and tapped.report_path.is_file()


def test_the_client_dies_and_its_pipes_with_it(spec_path: Path, tmp_path: Path) -> None:
    """The client reads one answer and is gone: stdin ends, and stdout and stderr have no reader. The server's
    last lines go nowhere, yet the tap exits with the server's 0 and every report file is written."""
    for round_ in range(ROUNDS):
        markdown = tmp_path / f"client-dies-{round_}.md"
        tapped = _tap(
            spec_path, tmp_path, f"client-dies-{round_}", PYTHON, "-c", ANSWER_THEN_EOF,
            reports=("--report", f"markdown:{markdown}", "--report", "terminal"),
        )  # fmt: skip
        process = tapped.process
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        process.stdin.write(REQUEST)
        process.stdin.flush()
        assert process.stdout.readline().decode() == ANSWER + "\n"
        for pipe in (process.stdin, process.stdout, process.stderr):
            pipe.close()
        assert process.wait(WAIT) == 0
        assert tapped.report_path.is_file() and markdown.is_file()
        assert _exit_of(tapped).code == 0


def test_a_signal_from_the_client_after_the_server_exited_does_not_cost_the_report(
    spec_path: Path, tmp_path: Path
) -> None:
    """Clients signal the tap once they see the end: the server is gone by then, the tap still writes the report
    and exits with the server's code."""
    tapped = _tap(spec_path, tmp_path, "signalled", PYTHON, "-c", ANSWER_THEN_EXIT)
    process = tapped.process
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(REQUEST)
    process.stdin.flush()
    assert process.stdout.readline().decode() == ANSWER + "\n"
    assert process.stdout.read() == b""
    deadline = time.monotonic() + WAIT
    process.send_signal(signal.SIGTERM)
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    code, err = _finished(tapped)
    assert code == 5 and tapped.report_path.is_file(), err
    assert os.path.getsize(tapped.report_path) > 0


def test_the_one_line_keeps_secrets_out(spec_path: Path) -> None:
    """A server that prints a secret to stderr before dying: it is relayed as the server wrote it (the tap passes
    stderr on), but the not-judged line and the report scrub it, as they do every `--secret`."""
    secret = "tap-secret-4f1e2d"
    command = [
        PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path), "--secret", secret, "--",
        PYTHON, "-c", f"import sys; print('bad token {secret}', file=sys.stderr); sys.exit(2)",
    ]  # fmt: skip
    done = subprocess.run(command, input=b"", capture_output=True, timeout=WAIT, check=False)
    assert done.returncode == 3
    relayed, said = _said(done.stderr)
    assert relayed == f"bad token {secret}"
    assert said.startswith("mcp-assay: not judged — the server exited with code 2") and secret not in said
