"""Recordings are tamper-evident: a digest chain through every record, verified before a recording is judged.

Tool-defined (issue 28, "Evidence that can be checked"): the header names the tool, the catalogue's and the
schemas' digests and the options (redacted); every record ends with the running digest of the records up to it;
``verify_recording`` says whether the chain is whole and names the record where it breaks; a recording edited by
one byte, anywhere, fails verification with that record named; the report names the recording's sha256; redaction
happens before digesting, so the recording that is shared is the one that verifies; an older recording without a
chain still validates, said to be unverifiable.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_assay import __version__
from mcp_assay.cli import cli
from mcp_assay.recording.records import (
    CHAIN_FORMAT,
    RecordingWriter,
    chain_link,
    read_recording,
    records_of,
    verify_recording,
)
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec import load_spec
from mcp_assay.spec.provenance import catalogue_digest, provenance
from mcp_assay.wire.model import Ending, EndReason, Headers, HttpExchange, HttpRequest, HttpResponse

SECRET = "chain-secret-4d1a"


def _exchange(number: int) -> HttpExchange:
    body = json.dumps({"jsonrpc": "2.0", "id": number, "method": "tools/list", "params": {"cursor": SECRET}})
    request = HttpRequest(
        method="POST", url="http://127.0.0.1:9/mcp", time=1_700_000_000.0 + number, body=body.encode(),
        headers=Headers([("content-type", "application/json"), ("authorization", f"Bearer {SECRET}")]),
    )  # fmt: skip
    answer = json.dumps({"jsonrpc": "2.0", "id": number, "result": {"tools": []}}).encode()
    response = HttpResponse(
        status=200, headers=Headers([("content-type", "application/json")]), time=request.time + 0.1, body=answer
    )
    return HttpExchange.build(
        id=f"x{number}", request=request, response=response,
        ending=Ending(reason=EndReason.COMPLETE, time=request.time + 0.2),
    )  # fmt: skip


def write(path: Path, spec_path: Path, count: int = 3) -> RecordingWriter:
    redactor = Redactor(secrets=[SECRET])
    about = {**provenance(load_spec(spec_dir=str(spec_path))), "options": {"--secret": ["[REDACTED]"], "--only": "x"}}
    writer = RecordingWriter(path, redactor, source=f"test {SECRET}", about=about)
    for number in range(1, count + 1):
        writer.exchange(_exchange(number))
    writer.close()
    return writer


def test_the_header_names_the_tool_the_digests_and_the_options(tmp_path: Path, spec_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write(path, spec_path)
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["tool"] == f"mcp-assay {__version__}" and header["integrity"] == CHAIN_FORMAT
    assert header["catalogue"] == catalogue_digest() and header["catalogue"].startswith("sha256:")
    spec = load_spec(spec_dir=str(spec_path))
    assert header["schemas"] == {revision.name: f"sha256:{revision.schema.sha256}" for revision in spec.window}
    assert header["options"] == {"--secret": ["[REDACTED]"], "--only": "x"}
    assert header["source"] == "test [REDACTED]"  # the header is redacted like every record


def test_every_record_carries_the_running_digest_and_the_chain_is_whole(tmp_path: Path, spec_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = write(path, spec_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    previous = ""
    for line in lines:
        record = json.loads(line)
        assert list(record)[-1] == "chain"  # the last member, so a line is its record without it plus the link
        without = line[: line.rindex(',"chain":')] + "}"
        assert (
            record["chain"]
            == chain_link(previous, without)
            == hashlib.sha256(f"{previous}\n{without}".encode()).hexdigest()
        )
        previous = record["chain"]
    assert json.loads(lines[-1])["type"] == "close" and json.loads(lines[-1])["records"] == len(lines)
    result = verify_recording(path)
    assert (result.state, result.records, result.closed, result.breaks) == ("whole", len(lines), True, [])
    assert result.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() == writer.sha256
    assert writer.evidence() == {"file": str(path), "records": len(lines), "chain": "whole", "sha256": writer.sha256}
    assert SECRET not in path.read_text(encoding="utf-8")  # redacted before it was digested: this file verifies
    assert len(read_recording(path).log.http_exchanges()) == 3  # and reads as a recording always did


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(where=st.floats(0, 1, exclude_max=True), byte=st.integers(0, 255))
def test_a_recording_edited_by_one_byte_fails_with_the_record_named(
    where: float, byte: int, tmp_path_factory: pytest.TempPathFactory, spec_path: Path
) -> None:
    """Any one byte changed, anywhere (a value, a key, a digest, a line end): verification names that line."""
    folder = tmp_path_factory.mktemp("edit")
    path = folder / "r.jsonl"
    write(path, spec_path)
    data = bytearray(path.read_bytes())
    position = int(where * len(data))
    if data[position] == byte:
        byte = (byte + 1) % 256
    data[position] = byte
    edited = folder / "edited.jsonl"
    edited.write_bytes(bytes(data))
    line = data[:position].count(b"\n") + 1
    result = verify_recording(edited)
    assert result.state == "broken", (position, byte)
    assert result.breaks[0].startswith(f"line {line}"), (line, result.breaks)


def test_a_removed_record_names_the_line_after_it_and_a_cut_recording_says_it_was_cut(
    tmp_path: Path, spec_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    write(path, spec_path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    removed = tmp_path / "removed.jsonl"
    removed.write_text("".join(lines[:3] + lines[4:]), encoding="utf-8")
    result = verify_recording(removed)
    assert (
        result.breaks[0].startswith("line 4 (") and "was changed, or a record before it was removed" in result.breaks[0]
    )
    assert any("the closing record counts" in text for text in result.breaks)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-2]), encoding="utf-8")  # a capture that was killed: the chain holds, unclosed
    result = verify_recording(cut)
    assert (result.state, result.closed) == ("whole", False)
    assert "no closing record" in result.summary()


def test_validate_says_whether_the_chain_is_whole_before_judging_and_the_report_names_the_digest(
    tmp_path: Path, spec_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    writer = write(path, spec_path)
    data = bytearray(path.read_bytes())
    data[data.index(b'"method":"POST"', data.index(b'"x":"x2"')) + 10] = ord("U")  # POST -> PUST, exchange x2
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes(bytes(data))
    for file, state in ((path, "whole"), (edited, "broken")):
        report = tmp_path / f"{file.stem}.json"
        result = CliRunner().invoke(
            cli,
            ["validate", str(file), "--spec-dir", str(spec_path), "--report", f"json:{report}", "--fail-on", "never"],
        )
        assert result.exit_code == 0, result.output
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"{file.name}: sha256:{hashlib.sha256(file.read_bytes()).hexdigest()}")
        (evidence,) = json.loads(report.read_text(encoding="utf-8"))["target"]["evidence"]
        assert evidence["chain"] == state and evidence["sha256"] == hashlib.sha256(file.read_bytes()).hexdigest()
    assert "chain whole" in CliRunner().invoke(cli, ["validate", str(path), "--spec-dir", str(spec_path)]).stderr
    broken = CliRunner().invoke(cli, ["validate", str(edited), "--spec-dir", str(spec_path)], env={"COLUMNS": "500"})
    assert "CHAIN BROKEN: line 6 (the http record of exchange 'x2')" in broken.stderr
    (line,) = [line for line in broken.stdout.splitlines() if line.startswith("evidence  ")]
    assert "edited.jsonl sha256:" in line and "DIGEST CHAIN BROKEN: line 6 (the http record of exchange 'x2')" in line
    assert writer.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_older_recording_without_a_chain_still_validates_and_is_said_to_be_unverifiable(
    tmp_path: Path, spec_path: Path
) -> None:
    path = tmp_path / "old.jsonl"
    lines = [json.dumps({"type": "recording", "format": "mcp-assay.recording/1", "tool": "mcp-assay 0.0.9"})]
    lines += [json.dumps(record) for record in records_of(_exchange(1))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = verify_recording(path)
    assert (result.state, result.records) == ("unchained", len(lines))
    validated = CliRunner().invoke(cli, ["validate", str(path), "--spec-dir", str(spec_path), "--fail-on", "never"])
    assert validated.exit_code == 0, validated.output
    assert "no digest chain" in validated.stderr and "cannot be verified" in validated.stdout


def test_a_recording_whose_url_kept_the_older_bracketed_marker_still_validates(tmp_path: Path, spec_path: Path) -> None:
    """Issue 28's evidence: `run` from a user:pw@ URL wrote `alice:[REDACTED]@`, which parses as an IPv6 literal, and
    `validate` of that recording ended in an internal error. Such a file (written before the fix) is read with the
    marker in today's form, and judged."""
    path = tmp_path / "old-userinfo.jsonl"
    records = [json.loads(json.dumps(record)) for record in records_of(_exchange(1))]
    records[0]["url"] = "http://alice:[REDACTED]@127.0.0.1:9/mcp"
    lines = [json.dumps({"type": "recording", "format": "mcp-assay.recording/1", "source": "mcp-assay run x"})]
    path.write_text("\n".join([*lines, *(json.dumps(record) for record in records)]) + "\n", encoding="utf-8")
    (exchange,) = read_recording(path).log.http_exchanges()
    assert exchange.request.url == "http://alice:REDACTED@127.0.0.1:9/mcp" and exchange.request.path == "/mcp"
    validated = CliRunner().invoke(cli, ["validate", str(path), "--spec-dir", str(spec_path), "--fail-on", "never"])
    assert validated.exit_code == 0 and "internal error" not in validated.output, validated.output


def test_a_record_with_a_member_this_version_does_not_know_is_chained_verified_and_read(
    tmp_path: Path, spec_path: Path
) -> None:
    """Tool-defined: the chain covers each line as written, so a record carrying a member added later (a gateway's
    `hop`, say) verifies and reads like any other, and editing that member breaks the chain like any byte."""
    path = tmp_path / "hop.jsonl"
    writer = RecordingWriter(path, Redactor(), source="test", about=provenance(load_spec(spec_dir=str(spec_path))))
    for record in records_of(_exchange(1)):
        writer.write({**record, "hop": "back"} if record["type"] == "http" else record)
    writer.close()
    text = path.read_text(encoding="utf-8")
    assert '"hop":"back"' in text and verify_recording(path).state == "whole"
    assert len(read_recording(path).log.http_exchanges()) == 1
    edited = tmp_path / "edited.jsonl"
    edited.write_text(text.replace('"hop":"back"', '"hop":"front"'), encoding="utf-8")
    result = verify_recording(edited)
    assert result.state == "broken" and result.breaks[0].startswith("line 2 (the http record of exchange 'x1')")


def test_blank_lines_of_any_whitespace_are_no_records_and_leave_the_chain_whole(
    tmp_path: Path, spec_path: Path
) -> None:
    """Tool-defined: a line of whitespace (ASCII's or Unicode's: a no-break space, a line separator, an
    information separator) between records is no record; the chain and the count hold (verification reads a
    line's bytes, and its text only where it must)."""
    path = tmp_path / "r.jsonl"
    write(path, spec_path)
    lines = path.read_bytes().split(b"\n")
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_bytes(b"\n".join([*lines[:2], b" \t", "\u00a0\u2028\x1c".encode(), *lines[2:]]))
    result = verify_recording(spaced)
    assert (result.state, result.closed, result.records) == ("whole", True, len(lines) - 1)
    stray = tmp_path / "stray.jsonl"
    stray.write_bytes(b"\n".join([*lines[:2], "\u00a0x".encode(), *lines[2:]]))
    assert verify_recording(stray).breaks[0].startswith("line 3 carries no chain digest")
