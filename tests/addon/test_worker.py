"""The judging worker process the proxy and the tap feed."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from mcp_assay.addon.worker import RemoteSession, WorkerSettings
from mcp_assay.recording import end_record, http_record, read_recording, response_record
from mcp_assay.wire import EndReason, Headers, HttpRequest
from tests.factories import modern_headers, request_body, result_body


def _settings(tmp_path: Path, spec_path: Path) -> WorkerSettings:
    return WorkerSettings(
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
