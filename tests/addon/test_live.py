"""The live session: records in; recording, live findings, audit lines and report out."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from mcp_assay.addon.live import LiveSession, Printer
from mcp_assay.recording.records import (
    RecordingWriter,
    end_record,
    http_record,
    line_record,
    observation_record,
    read_recording,
    redact_record,
    response_record,
)
from mcp_assay.recording.redaction import REDACTED, Redactor
from mcp_assay.report.about import Target
from mcp_assay.spec import SpecSet
from mcp_assay.spec.engine import evaluate
from mcp_assay.vocabulary.verdicts import Outcome, Side
from mcp_assay.wire.model import EndReason, Headers, HttpRequest, Observation
from tests.factories import META_KEY, error_body, meta, modern_headers, request_body, result_body

URL = "http://127.0.0.1:8000/mcp"


def _session(tmp_path: Path, spec: SpecSet, *, threaded: bool = False) -> tuple[LiveSession, io.StringIO, Path]:
    out = io.StringIO()
    record = tmp_path / "live.jsonl"
    redactor = Redactor()
    session = LiveSession(
        spec,
        redactor=redactor,
        recorder=RecordingWriter(record, redactor, source="test"),
        printer=Printer("all", console=Console(file=out, width=200, color_system=None)),
        target=Target(kind="proxy", description="unit"),
        threaded=threaded,
    )
    return session, out, record


def _post(session: LiveSession, ident: str, body: dict[str, object], answer: dict[str, object], t: float) -> None:
    raw = json.dumps(body).encode()
    request = HttpRequest(method="POST", url=URL, headers=Headers(modern_headers(body)), body=raw, time=t)
    session.feed(http_record(ident, request, connection="c1"))
    session.feed(response_record(ident, 200, "OK", [("content-type", "application/json")], t + 0.01))
    session.feed({"type": "body", "x": ident, "t": t + 0.02, "body": json.dumps(answer)})
    session.feed(end_record(ident, EndReason.COMPLETE, t + 0.02))


def test_a_finished_exchange_is_printed_with_its_findings_as_it_finishes(tmp_path: Path, spec: SpecSet) -> None:
    """Spec-mandated (RES-01): a 2026 result without resultType is reported live, before the report."""
    session, out, _ = _session(tmp_path, spec)
    _post(session, "x1", request_body("tools/list", 1), result_body({"tools": []}, 1), 1_800_000_000.0)
    printed = out.getvalue()
    assert "POST /mcp · request tools/list id=1 → 200 application/json (2026-07-28)" in printed
    assert "✗ RES-01" in printed
    assert session.live_failures >= 1
    session.close()


def test_the_log_judged_live_is_the_log_the_recording_gives_back(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: re-validating the recording reproduces the live verdicts exactly."""
    session, _, record = _session(tmp_path, spec, threaded=True)
    _post(session, "x1", request_body("tools/list", 1), result_body({"resultType": "complete", "tools": []}, 1), 1.0)
    _post(session, "x2", request_body("prompts/get", 2, {"name": "p"}), result_body({"messages": []}, 2), 2.0)
    session.close()
    live = {(v.check, v.outcome, v.judged, v.violations) for v in session.report().results}
    again = {(v.check, v.outcome, v.judged, v.violations) for v in evaluate(read_recording(record).log, spec)}
    assert live == again


def test_audit_lines_are_recorded_as_requests_finish(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: HTTP requests are audited when their exchange ends, stdio ones on their answer."""
    session, _, record = _session(tmp_path, spec)
    _post(session, "x1", request_body("tools/list", 1), result_body({"resultType": "complete", "tools": []}, 1), 1.0)
    session.feed(line_record("c1", "stdio:1", Side.CLIENT, 2.0, json.dumps(request_body("tools/list", 7)).encode()))
    session.feed(line_record("c2", "stdio:1", Side.CLIENT, 2.1, json.dumps(request_body("tools/call", 8)).encode()))
    audited = [item.data["request_id"] for item in session.log.observations("audit")]
    assert audited == [1]
    answer = json.dumps(result_body({"resultType": "complete", "tools": []}, 7)).encode()
    session.feed(line_record("s1", "stdio:1", Side.SERVER, 2.2, answer))
    assert [item.data["request_id"] for item in session.log.observations("audit")] == [1, 7]
    session.close()
    recorded = [item for item in read_recording(record).log if isinstance(item, Observation) and item.kind == "audit"]
    assert [(item.data["request_id"], item.data["outcome"]) for item in recorded] == [
        (1, "ok"),
        (7, "ok"),
        (8, "no-result"),
    ]
    assert [line.request_id for line in session.report().audit] == [1, 7, 8]


def test_records_are_written_redacted_and_the_credentials_are_learnt(tmp_path: Path) -> None:
    """Tool-defined: a bearer token is replaced in the header and wherever it reappears."""
    redactor = Redactor()
    body = request_body("tools/call", 1, {"name": "echo", "arguments": {"text": "tok-123456789"}})
    request = HttpRequest(
        method="POST",
        url=f"{URL}?access_token=q-123456789",
        headers=Headers({**modern_headers(body), "authorization": "Bearer tok-123456789"}),
        body=json.dumps(body).encode(),
        time=1.0,
    )
    written = redact_record(http_record("x", request), redactor)
    text = json.dumps(written)
    assert "tok-123456789" not in text and "q-123456789" not in text
    assert ["authorization", f"Bearer {REDACTED}"] in written["headers"]
    event = redact_record({"type": "event", "x": "x", "t": 2.0, "data": "echo tok-123456789"}, redactor)
    assert event["data"] == f"echo {REDACTED}"


def test_audit_observations_alone_never_make_a_stdio_rule_applicable(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: an HTTP capture with audit lines leaves stdio rules not applicable, not unverified."""
    session, _, _ = _session(tmp_path, spec)
    _post(session, "x1", request_body("tools/list", 1), result_body({"resultType": "complete", "tools": []}, 1), 1.0)
    session.close()
    stdio_results = [v for v in session.report().results if any(r.startswith("STDIO-") for r in v.requirements)]
    assert stdio_results and {v.outcome for v in stdio_results} == {Outcome.NOT_APPLICABLE}


def test_a_record_that_cannot_be_processed_does_not_stop_the_session(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: odd records are noted, and later traffic is still judged."""
    session, _, _ = _session(tmp_path, spec)
    session.feed({"type": "body", "x": "never-opened", "t": 1.0, "body": "{}"})
    _post(session, "x1", request_body("tools/list", 1, {"_meta": meta()}), result_body({"tools": []}, 1), 2.0)
    session.close()
    report = session.report()
    assert any("unknown exchange" in note for note in report.notes)
    assert report.stats.exchanges is not None and report.stats.exchanges >= 1
    assert META_KEY in json.dumps(session.log.messages()[0].payload)


def test_the_report_counts_exchanges_and_observations_apart(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: 3 calls are 3 exchanges; their 3 audit lines are observations, not exchanges."""
    session, _, record = _session(tmp_path, spec)
    for number in range(3):
        body = request_body("tools/list", number)
        _post(session, f"x{number}", body, result_body({"tools": []}, number), 1_800_000_000.0 + number)
    session.close()
    stats = session.report().stats
    assert (stats.exchanges, stats.observations, stats.messages) == (3, 3, 6)
    assert len(read_recording(record).log.observations("audit")) == 3


def test_a_note_observed_during_the_capture_is_a_note_of_the_report(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined: what the tap notes (a stderr limit reached) reaches the report's notes, redacted."""
    session, _, _ = _session(tmp_path, spec)
    session.redactor.add_secret("sekrit-123456")
    session.feed(observation_record("e1", 1.0, "note", {"detail": "stderr cut for sekrit-123456"}))
    session.close()
    assert "stderr cut for [REDACTED]" in session.report().notes


def _lines(out: io.StringIO) -> list[str]:
    return [line for line in out.getvalue().splitlines() if line.strip()]


def test_a_finding_follows_the_line_of_its_exchange_and_the_stamps_run_in_order(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined (issue 19): each exchange is printed when it ends, stamped with its end, then its findings."""
    session, out, _ = _session(tmp_path, spec)
    t = 1_800_000_000.0
    raw = json.dumps(request_body("tools/list", 1)).encode()
    request = HttpRequest(method="POST", url=URL, headers=Headers(modern_headers(request_body("tools/list", 1))),
                          body=raw, time=t)  # fmt: skip
    session.feed(http_record("slow", request, connection="c1"))
    session.feed(response_record("slow", 200, "OK", [("content-type", "text/event-stream")], t + 0.1))
    session.feed({"type": "event", "x": "slow", "t": t + 0.2, "data": json.dumps(result_body({"tools": []}, 1))})
    _post(session, "quick", request_body("prompts/list", 2), result_body({"resultType": "complete", "prompts": []}, 2),
          t + 0.3)  # fmt: skip
    session.feed(end_record("slow", EndReason.COMPLETE, t + 0.5))
    lines = _lines(out)
    stamps = [line.split(" ", 1)[0] for line in lines if line[:2].isdigit()]
    assert stamps == sorted(stamps) and len(stamps) == 3, lines
    slow = next(n for n, line in enumerate(lines) if "request tools/list id=1" in line)
    finding = next(n for n, line in enumerate(lines) if "✗ RES-01" in line)
    assert slow < finding, lines  # the 2026 result without resultType is reported under its exchange
    quick = next(n for n, line in enumerate(lines) if "request prompts/list id=2" in line)
    assert quick < slow  # the quick exchange ended first, and is printed first
    session.close()


def test_a_note_is_marked_as_a_note_and_a_should_finding_as_a_should(tmp_path: Path, spec: SpecSet) -> None:
    """Tool-defined (issue 19): a live note does not look like a failure: ℹ for a note, ⚠ for a SHOULD."""
    session, out, _ = _session(tmp_path, spec)
    trace = "Traceback (most recent call last):\n" + "\n".join(f'  File "x.py", line {n}, in f' for n in range(30))
    _post(session, "e1", request_body("tools/list", 1), error_body(-32603, trace, 1), 1_800_000_000.0)
    lines = _lines(out)
    notes = [line for line in lines if "[server · info]" in line]
    assert notes and all(line.lstrip().startswith("ℹ ") for line in notes), lines
    assert not any(line.lstrip().startswith("✗ ") and "· info]" in line for line in lines)
    should = [line for line in lines if "· should]" in line]
    assert all(line.lstrip().startswith("⚠ ") for line in should), lines
    session.close()


def test_a_proxied_server_offering_a_newer_revision_is_named_in_the_report_and_the_recording_is_evidence(
    tmp_path: Path, spec: SpecSet
) -> None:
    """Tool-defined (issue 28): the proxy's report names a revision newer than the window the server listed, and
    the recording it wrote (closed first) by its sha256 and chain."""
    import hashlib

    session, _, record = _session(tmp_path, spec)
    answer = result_body({"supportedVersions": ["2026-07-28", "2027-03-01"], "capabilities": {}}, 1)
    _post(session, "x1", request_body("server/discover", 1), answer, 1_800_000_000.0)
    session.close()
    report = session.report()
    assert report.target.unknown_revisions == {"2027-03-01": "server/discover lists it in supportedVersions"}
    (evidence,) = report.target.evidence or []
    assert evidence["chain"] == "whole" and evidence["sha256"] == hashlib.sha256(record.read_bytes()).hexdigest()
