"""Files a session writes, from the command line: `--record` never overwrites a recording (the second
session of the same path goes to a numbered sibling and says so), and a report's missing folders are
created. `tap`, `proxy` (which sets the addon's ``mcp_assay_record``) and `run`, each run twice.

Tool-defined (issue 18, "small ones": "`--record` never overwrites a recording", "a missing report
folder is created").
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcp_assay.recording.records import read_recording
from tests.peers.assay import assay_proxy
from tests.peers.process import PYTHON, free_port, sdk_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

WAIT = 60.0
NOTICE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}'


def _second_goes_to_a_sibling(first: str, second: str, record: Path) -> None:
    sibling = record.with_name(f"{record.stem}-2{record.suffix}")
    assert "exists already" not in first
    assert f"{record} exists already; this recording goes to {sibling}" in second
    assert read_recording(record).header["format"] == read_recording(sibling).header["format"]


def test_tap_record_twice_keeps_both_sessions(spec_path: Path, tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    said = []
    for session in range(2):
        report = tmp_path / f"new-{session}" / "sub" / "report.json"  # its folders do not exist yet
        server = f"import sys; print({NOTICE!r}); print('session {session}', file=sys.stderr)"
        done = subprocess.run(
            [PYTHON, "-m", "mcp_assay", "tap", "--spec-dir", str(spec_path), "--record", str(record),
             "--report", f"json:{report}", "--", PYTHON, "-c", server],
            input=b"", capture_output=True, timeout=WAIT, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        said.append(done.stderr.decode())
        assert json.loads(report.read_text())["target"]["recording"] == str(
            record if session == 0 else tmp_path / "session-2.jsonl"
        )
    _second_goes_to_a_sibling(*said, record)
    texts = [
        [item.data["text"] for item in read_recording(path).log if getattr(item, "kind", "") == "stderr"]
        for path in (record, tmp_path / "session-2.jsonl")
    ]
    assert texts == [["session 0"], ["session 1"]]


def test_proxy_record_twice_keeps_both_sessions(spec_path: Path, tmp_path: Path) -> None:
    record = tmp_path / "proxy.jsonl"
    said = []
    for session in range(2):
        report = tmp_path / f"new-{session}" / "report.json"
        args = ("--spec-dir", str(spec_path), "--record", str(record), "--report", f"json:{report}")
        with assay_proxy(f"http://127.0.0.1:{free_port()}/mcp", *args) as proxy:
            pass
        assert proxy.returncode == 3  # no traffic: not judged, but the recording and the report are written
        said.append(proxy.output)
        assert report.is_file()
    _second_goes_to_a_sibling(*said, record)


def test_run_record_twice_keeps_both_sessions(spec_path: Path, tmp_path: Path) -> None:
    record = tmp_path / "run.jsonl"
    server = " ".join(sdk_server_command())
    said = []
    for session in range(2):
        report = tmp_path / f"new-{session}" / "report.json"
        done = subprocess.run(
            [PYTHON, "-m", "mcp_assay", "run", "-c", server, "--only", "STDIO-01", "--spec-dir", str(spec_path),
             "--record", str(record), "--report", f"json:{report}"],
            capture_output=True, timeout=WAIT, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        said.append(done.stderr.decode())
        assert report.is_file()
    _second_goes_to_a_sibling(*said, record)
    assert len(read_recording(record).log) > 0 and len(read_recording(tmp_path / "run-2.jsonl").log) > 0
