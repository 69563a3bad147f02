"""The judging worker process the proxy and the tap feed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_assay.addon.worker import HURRY_GRACE, RemoteSession, WorkerSettings
from mcp_assay.recording.records import end_record, http_record, read_recording, response_record
from mcp_assay.wire.model import EndReason, Headers, HttpRequest
from tests.factories import modern_headers, request_body, result_body


def _settings(tmp_path: Path, spec_path: Path, orphaned: str = "hurry") -> WorkerSettings:
    return WorkerSettings(
        orphaned=orphaned,
        spec_dir=str(spec_path),
        record=str(tmp_path / "worker.jsonl"),
        reports=[f"json:{tmp_path / 'worker.json'}"],
        live="off",
        stream="stderr",
        secrets=["worker-secret-123"],
        target={"kind": "proxy", "description": "unit"},
    )


def _exchange(session: RemoteSession, ident: str, result: dict[str, object]) -> None:
    body = request_body("tools/list", 1)
    request = HttpRequest(
        method="POST",
        url="http://127.0.0.1:1/mcp?token=worker-secret-123",
        headers=Headers(modern_headers(body)),
        body=json.dumps(body).encode(),
        time=1.0,
    )
    session.feed(http_record(ident, request))
    session.feed(response_record(ident, 200, "OK", [("content-type", "application/json")], 1.1))
    session.feed({"type": "body", "x": ident, "t": 1.2, "body": json.dumps(result_body(result, 1))})
    session.feed(end_record(ident, EndReason.COMPLETE, 1.2))


def test_the_worker_records_judges_and_reports_what_it_is_fed(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: records go in; a redacted recording, a report and the exit code come out."""
    session = RemoteSession(_settings(tmp_path, spec_path))
    _exchange(session, "x1", {"tools": []})  # no resultType: a MUST failure
    finished = session.close()
    assert finished.exit_code == 1 and finished.error == ""
    assert finished.written == [str(tmp_path / "worker.json")]
    report = json.loads((tmp_path / "worker.json").read_text())
    assert {item["id"]: item["outcome"] for item in report["requirements"]}["RES-01"] == "failed"
    assert len(read_recording(tmp_path / "worker.jsonl").log.http_exchanges()) == 1
    assert "worker-secret-123" not in (tmp_path / "worker.jsonl").read_text()


def test_a_ctrl_c_reaching_the_worker_does_not_cost_the_report(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: the worker ignores SIGINT/SIGTERM and finishes when its input ends."""
    session = RemoteSession(_settings(tmp_path, spec_path))
    _exchange(session, "x1", {"resultType": "complete", "tools": []})
    deadline = time.monotonic() + 10
    while not (tmp_path / "worker.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.02)  # the recording exists once the worker is running (signals are set first)
    session.process.send_signal(signal.SIGINT)
    session.process.send_signal(signal.SIGTERM)
    finished = session.close()
    assert finished.error == "" and (tmp_path / "worker.json").is_file()


def test_feeding_a_worker_that_died_neither_blocks_nor_raises(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: if judging dies, the traffic keeps flowing; the close reports the loss."""
    session = RemoteSession(_settings(tmp_path, spec_path))
    session.process.kill()
    session.process.wait(10)
    for number in range(200):
        _exchange(session, f"x{number}", {"resultType": "complete", "tools": []})
    finished = session.close()
    assert finished.exit_code == 3 and finished.error


def _busy(tmp_path: Path, spec_path: Path, count: int = 600, orphaned: str = "hurry") -> RemoteSession:
    """A worker with more to judge than it can finish in the first second."""
    session = RemoteSession(_settings(tmp_path, spec_path, orphaned))
    for number in range(count):
        _exchange(session, f"x{number}", {"resultType": "complete", "tools": []})
    return session


def test_a_worker_cut_short_writes_the_report_from_what_it_judged_and_says_so(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: past the finish timeout the report is written at once; the checks not run are not verified."""
    session = _busy(tmp_path, spec_path)
    started = time.monotonic()
    finished = session.close(deadline=0.0)
    assert time.monotonic() - started < HURRY_GRACE
    assert finished.error == "" and session.process.returncode == 0
    report = json.loads((tmp_path / "worker.json").read_text())
    assert any("judging was cut short by the finish timeout" in note for note in report["notes"]), report["notes"]
    not_run = [result for result in report["results"] if "judging was cut short" in result["reason"]]
    assert not_run and {result["outcome"] for result in not_run} == {"not_verified"}
    assert report["verdict"]["code"] != "conformant"
    # what was not judged is still evidence: every exchange fed is in the recording, redacted
    recording = (tmp_path / "worker.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in recording.splitlines()]
    assert sum(1 for record in records if record.get("type") == "http") == 600
    assert "worker-secret-123" not in recording
    if report["stats"]["exchanges"] < 600:
        assert any("were not judged (they are in the recording)" in note for note in report["notes"])


def test_a_worker_that_does_not_finish_in_its_grace_is_killed_and_no_report_claimed(
    tmp_path: Path, spec_path: Path
) -> None:
    """Tool-defined: no process is left behind; the session says that no report was written."""
    session = _busy(tmp_path, spec_path)
    finished = session.close(deadline=0.0, grace=0.0)
    assert finished.exit_code == 3 and "killed" in finished.error
    assert session.process.returncode == -signal.SIGKILL
    assert not (tmp_path / "worker.json").exists()


_PARENT = """
import json, sys, time
from pathlib import Path

import pytest
sys.path.insert(0, sys.argv[2])
from tests.addon.test_worker import _busy
session = _busy(Path(sys.argv[1]), Path(sys.argv[3]), orphaned=sys.argv[4])
deadline = time.monotonic() + 10
while session.waiting() and time.monotonic() < deadline:  # the feeder sends in batches: let the first ones go
    time.sleep(0.01)
print(session.process.pid, flush=True)
time.sleep(60)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")  # a zombie waiting for whoever adopted it has exited all the same


def _orphan(tmp_path: Path, spec_path: Path, orphaned: str) -> int:
    """Start a parent feeding a busy worker, SIGKILL the parent; the worker's pid."""
    root = Path(__file__).resolve().parents[2]
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(tmp_path), str(root), str(spec_path), orphaned], stdout=subprocess.PIPE
    )
    assert parent.stdout is not None
    with parent.stdout:
        worker = int(parent.stdout.readline())
    parent.kill()
    parent.wait(10)
    return worker


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _gone(pid)


def test_a_worker_whose_parent_is_killed_writes_its_report_and_exits_on_its_own(
    tmp_path: Path, spec_path: Path
) -> None:
    """Tool-defined: a SIGKILLed proxy leaves no judging process behind, and the report is kept (cut short)."""
    worker = _orphan(tmp_path, spec_path, "hurry")
    assert _wait_gone(worker, HURRY_GRACE + 5)
    report = json.loads((tmp_path / "worker.json").read_text())
    assert any("cut short by the process that fed it ended" in note for note in report["notes"]), report["notes"]


def test_a_tap_worker_whose_tap_is_killed_finishes_the_whole_report(tmp_path: Path, spec_path: Path) -> None:
    """Tool-defined: clients kill the tap once they closed its stdin; its worker still judges everything."""
    worker = _orphan(tmp_path, spec_path, "finish")
    assert _wait_gone(worker, 120)
    report = json.loads((tmp_path / "worker.json").read_text())
    assert not any("cut short" in note for note in report["notes"]), report["notes"]
    assert not any("cut short" in result["reason"] for result in report["results"])
    assert report["stats"]["exchanges"] > 0  # what reached it before its tap died (the rest died with the tap)


def test_status_lines_the_parent_asks_for_are_said_until_the_report_begins(capsys: pytest.CaptureFixture[str]) -> None:
    """Tool-defined: "judging the session for the report…" is the worker's to say, so it can never follow the
    verdict line on the terminal; a hurry request on the same pipe still hurries."""
    import os

    from mcp_assay.addon.worker import _Hurry, _StatusLines

    status = _StatusLines()
    hurry = _Hurry("finish", status.say)  # "hurry" would end this process once the pipe ends
    read, write = os.pipe()
    os.write(write, b"qi")
    os.close(write)
    hurry.listen(read)  # reads both bytes, then the end of the pipe
    os.close(read)
    assert hurry() == "a second interrupt (Ctrl-C or SIGTERM) while the report was being written"
    status.report_begins()
    status.say("mcp-assay: judging the session for the report…")
    assert capsys.readouterr().err == (
        "mcp-assay: judging the session for the report… (interrupt to write it from what has been judged so far)\n"
    )


def test_a_record_that_is_not_json_data_is_left_out_alone_and_said_once(
    tmp_path: Path, spec_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A defect of ours (a record holding what JSON cannot carry) costs that record, never its batch-mates."""
    session = RemoteSession(_settings(tmp_path, spec_path))
    session.feed({"type": "note", "x": "bad", "t": 1.0, "data": object()})
    _exchange(session, "x1", {"resultType": "complete", "tools": []})
    session.feed({"type": "note", "x": "bad2", "t": 1.3, "data": {1, 2}})
    _exchange(session, "x2", {"resultType": "complete", "tools": []})
    finished = session.close()
    assert finished.error == ""
    assert [exchange.id for exchange in read_recording(tmp_path / "worker.jsonl").log.http_exchanges()] == ["x1", "x2"]
    said = [record for record in caplog.records if "could not be written as JSON" in record.getMessage()]
    assert len(said) == 1 and "note record" in said[0].getMessage()
