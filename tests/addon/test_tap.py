"""The stdio tap, embedded: byte-exact relaying, causal recording, stderr and exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from mcp_assay.addon.live import LiveSession
from mcp_assay.addon.tap import Tap
from mcp_assay.recording import RecordingWriter, read_recording
from mcp_assay.redaction import Redactor
from mcp_assay.spec import SpecSet
from mcp_assay.verdicts import Side
from mcp_assay.wire import Observation, ProcessExit, StdioLine

ECHO = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.stderr.write("server says bye\\n")
sys.exit(3)
"""


def _tap(tmp_path: Path, spec: SpecSet, stdin: bytes, script: str) -> tuple[Tap, io.BytesIO, io.BytesIO, int, Path]:
    record = tmp_path / "tap.jsonl"
    redactor = Redactor()
    session = LiveSession(spec, redactor=redactor, recorder=RecordingWriter(record, redactor, source="test"))
    out, err = io.BytesIO(), io.BytesIO()
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
    assert out.getvalue() == sent
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
