"""The stdio tap, embedded: byte-exact relaying, causal recording, stderr and exit codes."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp_assay.addon.live import LiveSession
from mcp_assay.addon.tap import STDERR_LINE_LIMIT, STDERR_RECORD_LIMIT, Tap
from mcp_assay.recording.records import RecordingWriter, read_recording
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.model import Observation, ProcessExit, StdioLine
from tests.peers.process import HERE as PEERS

HOSTILE = str(PEERS / "hostile_server.py")
MiB = 1024 * 1024

ECHO = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.stderr.write("server says bye\\n")
sys.exit(3)
"""


class _Client(io.BytesIO):
    """The client's end of the tap's stdout: keeps what it was sent after the tap ended it."""

    ended = False

    def close(self) -> None:
        self.ended = True


def _tap(tmp_path: Path, spec: SpecSet, stdin: bytes, script: str) -> tuple[Tap, _Client, io.BytesIO, int, Path]:
    record = tmp_path / "tap.jsonl"
    redactor = Redactor()
    session = LiveSession(spec, redactor=redactor, recorder=RecordingWriter(record, redactor, source="test"))
    out, err = _Client(), io.BytesIO()
    tap = Tap(
        [sys.executable, "-c", script], session, stdin=io.BytesIO(stdin), stdout=out, stderr=err, forward_signals=False
    )
    code = tap.run()
    session.close()
    return tap, out, err, code, record


def test_every_byte_is_relayed_unchanged_in_both_directions(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: the tap is invisible: odd bytes, CRLF, blank lines and an unterminated tail pass as sent."""
    sent = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}\n'
        b"\n"
        b'{"jsonrpc":"2.0","id":2,"method":"x"}\r\n'
        b"\xff\xfe not utf-8\n"
        b'{"jsonrpc":"2.0","method":"notifications/x"}'
    )
    _, out, _, code, record = _tap(tmp_path, spec, sent, ECHO)
    assert code == 3
    assert out.getvalue() == sent and out.ended  # ended once the server was gone, as the server's own pipe would be
    lines = [item for item in read_recording(record).log if isinstance(item, StdioLine)]
    assert b"".join(line.raw for line in lines if line.sender is Side.CLIENT) == sent
    assert b"".join(line.raw for line in lines if line.sender is Side.SERVER) == sent


def test_each_line_is_recorded_before_it_is_relayed(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: the recording's order is causal: a request always precedes its echo."""
    sent = b"".join(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/list"}).encode() + b"\n" for n in range(20))
    _, _, _, _, record = _tap(tmp_path, spec, sent, ECHO)
    order = [(item.sender, item.message.id) for item in read_recording(record).log if isinstance(item, StdioLine)]
    for ident in range(20):
        assert order.index((Side.CLIENT, ident)) < order.index((Side.SERVER, ident))


def test_stderr_passes_through_and_is_kept_as_text(tmp_path: Path, spec: SpecSet) -> None:
    """Spec-mandated (STDIO-11): stderr is log text, relayed and recorded, never judged as protocol."""
    _, _, err, _, record = _tap(tmp_path, spec, b"", ECHO)
    assert err.getvalue() == b"server says bye\n"
    recorded = read_recording(record).log
    (note,) = [item for item in recorded if isinstance(item, Observation) and item.kind == "stderr"]
    assert note.data == {"text": "server says bye"}
    assert recorded.messages() == []


def test_the_exit_record_names_the_code_and_when_stdin_closed(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: the process exit is evidence for shutdown rules (STDIO-08, STDIO-09)."""
    tap, _, _, code, record = _tap(tmp_path, spec, b"", "import sys; sys.stdin.read(); sys.exit(0)")
    (exit_,) = [item for item in read_recording(record).log if isinstance(item, ProcessExit)]
    assert code == 0 and exit_.code == 0
    assert exit_.stdin_closed_at is not None and exit_.stdin_closed_at <= exit_.time
    assert exit_.connection == tap.connection and exit_.signals == ()


class _Records:
    """Where the tap's records go in these tests: a plain list (the tap's own memory is what is measured)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def feed(self, record: Mapping[str, Any]) -> None:
        self.records.append(dict(record))

    def kind(self, kind: str) -> list[dict[str, Any]]:
        return [record for record in self.records if record.get("kind") == kind]


class _Counted(io.RawIOBase):
    """The terminal the tap passes stderr to: counts the bytes, keeps none."""

    def __init__(self) -> None:
        self.count = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.count += len(data)
        return len(data)


def _flood(mode: str, size: int) -> tuple[_Records, _Counted, int]:
    records, passed = _Records(), _Counted()
    tap = Tap(
        [sys.executable, HOSTILE, "stdio", mode, str(size)], records, stdin=io.BytesIO(b""), stdout=io.BytesIO(),
        stderr=passed, forward_signals=False,
    )  # fmt: skip
    tracemalloc.start()
    try:
        assert tap.run() == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return records, passed, peak


def test_a_stderr_line_without_end_costs_the_line_limit_and_is_counted() -> None:
    """Tool-defined: 16 MB of stderr with no newline is passed on whole, kept as one cut line, and noted;
    the tap's work per read stays constant (it no longer re-splits what it has read so far)."""
    records, passed, peak = _flood("raw", 16_000_000)
    assert passed.count == 16_000_000
    assert peak < 2 * MiB, f"peak {peak / MiB:.1f} MiB"
    (line,) = records.kind("stderr")
    assert len(line["data"]["text"]) == STDERR_LINE_LIMIT + 1 and line["data"]["text"].endswith("…")
    (note,) = records.kind("note")
    assert "16000000 bytes of stderr" in note["data"]["detail"]


def test_a_stderr_flood_in_lines_is_recorded_up_to_its_limit_and_the_rest_counted() -> None:
    """Tool-defined: every byte is passed on; STDERR_RECORD_LIMIT bytes of it are recorded; the note counts the rest."""
    records, passed, peak = _flood("lines", 16_000_000)
    assert passed.count == 16_000_000
    recorded = records.kind("stderr")
    assert sum(len(record["data"]["text"]) for record in recorded) <= STDERR_RECORD_LIMIT
    assert peak < 24 * MiB, f"peak {peak / MiB:.1f} MiB"
    (note,) = records.kind("note")
    assert f"{160_000 - len(recorded)} more line(s)" in note["data"]["detail"]


def test_lines_the_client_writes_after_the_server_exited_are_recorded_as_undelivered(tmp_path: Path) -> None:
    """Tool-defined: once the server is gone, what the client still writes is kept as undelivered, never as a
    line the server was sent."""
    read, write = os.pipe()
    records = _Records()
    with open(read, "rb") as stdin:
        with open(write, "wb", buffering=0) as client:
            script = "import sys; sys.stdin.readline(); print('{}', flush=True)"
            tap = Tap([sys.executable, "-c", script], records, stdin=stdin, stdout=io.BytesIO(), stderr=io.BytesIO(),
                      forward_signals=False)  # fmt: skip
            runner = threading.Thread(target=tap.run)
            runner.start()
            client.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
            runner.join(10)
            assert not runner.is_alive()  # the server has exited
            client.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
        # the client's end is closed: the relay reads to the end and stops; only then is its stdin closed
        deadline = time.monotonic() + 5
        while tap.stdin_closed_at is None and time.monotonic() < deadline:
            time.sleep(0.01)
    sent = [record for record in records.records if record["type"] == "line" and record["from"] == "client"]
    assert [json.loads(record["text"])["id"] for record in sent] == [1]
    undelivered = records.kind("undelivered")
    assert [json.loads(record["data"]["text"])["id"] for record in undelivered] == [2, 3]


class _ClosedUnderTheReader(io.BytesIO):
    """A client stdin that fails as a closed pipe does when another thread closes it mid-read."""

    def readline(self, size: int | None = -1) -> bytes:
        raise ValueError("PyMemoryView_FromBuffer(): info->buf must not be NULL")


def test_a_client_stdin_that_fails_under_the_reader_ends_the_relay_cleanly() -> None:
    """Tool-defined: a failing client stdin is the end of the client's input, never an exception in a relay
    thread; the server's stdin is closed and the server's exit is recorded."""
    records = _Records()
    script = "import sys; sys.stdin.read(); print('{}', flush=True)"
    tap = Tap([sys.executable, "-c", script], records, stdin=_ClosedUnderTheReader(), stdout=io.BytesIO(),
              stderr=io.BytesIO(), forward_signals=False)  # fmt: skip
    assert tap.run() == 0
    assert tap.stdin_closed_at is not None
    assert [record["type"] for record in records.records][-1] == "exit"
