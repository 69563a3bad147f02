"""Read captured traffic from files, whatever tool captured it, into one exchange log.

``mcp-assay validate`` accepts mcp-assay's own JSONL recordings (:data:`RECORDING`) and the capture
formats of other tools (mitmproxy flow files and HAR, whose readers live in
:mod:`mcp_assay.addon.importers` because reading flows takes mitmproxy); the caller names the readers.
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_assay.recording.records import read_recording, stream_recording
from mcp_assay.vocabulary.errors import RecordingError
from mcp_assay.wire.model import Exchange, Observation
from mcp_assay.wire.traffic import ExchangeLog

__all__ = [
    "RECORDING",
    "Inputs",
    "Loaded",
    "Reader",
    "load_inputs",
    "merged_inputs",
    "reader_for",
    "recording_source",
    "stream_input",
    "stream_inputs",
]


@dataclass
class Loaded:
    """Exchanges read from one file, and what was odd about the file."""

    exchanges: list[Exchange]
    problems: list[str] = field(default_factory=list)
    kind: str = "recording"


@dataclass
class Inputs:
    """What reading the files found besides traffic: each file's kind, and anything odd in them."""

    kinds: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Reader:
    """One capture format: whether a file is of it, and how to read it."""

    name: str
    sniff: Callable[[Path], bool]
    read: Callable[[Path, str], Loaded]
    """Reads one file, prefixing exchange ids with the given string; raises :class:`RecordingError`
    if the file is not of its format."""


def _read_jsonl(path: Path, prefix: str) -> Loaded:
    recording = read_recording(path, prefix=prefix)
    return Loaded(list(recording.log), recording.problems, "recording")


def _is_jsonl(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(1)
    return head == b"{"


RECORDING = Reader("an mcp-assay JSONL recording", _is_jsonl, _read_jsonl)
"""mcp-assay's own JSONL recordings."""


def recording_source(path: str | Path) -> str:
    """What made a JSONL recording (its header's ``source``: ``mcp-assay run …``, ``mcp-assay proxy …``), or ``""``."""
    try:
        with Path(path).open(encoding="utf-8", errors="replace") as handle:
            first = handle.readline(65_536)
        header = json.loads(first)
    except (OSError, ValueError):
        return ""
    source = header.get("source") if isinstance(header, dict) and header.get("type") == "recording" else None
    return source if isinstance(source, str) else ""


def stream_inputs(paths: Sequence[str | Path], readers: Sequence[Reader], inputs: Inputs) -> Iterator[Exchange]:
    """Every file's exchanges, one file after another, as they are read: JSONL recordings stream,
    other captures are read whole (they are read whole by their own tools too)."""
    for number, raw in enumerate(paths, start=1):
        yield from _one_file(Path(raw), readers, inputs, "" if len(paths) == 1 else f"f{number}:")


def _one_file(
    path: Path, readers: Sequence[Reader], inputs: Inputs, prefix: str, slot: int | None = None
) -> Iterator[Exchange]:
    """One file's exchanges; its kind goes to ``inputs.kinds`` (at ``slot`` when several files are read at once)."""
    reader = reader_for(path, readers)
    problems: list[str] = []
    if reader is RECORDING:
        yield from stream_recording(path, problems, prefix=prefix)
        kind = "recording"
    else:
        loaded = reader.read(path, prefix)
        yield from loaded.exchanges
        problems.extend(loaded.problems)
        kind = loaded.kind or reader.name
    inputs.problems.extend(f"{path.name}: {problem}" for problem in problems)
    if slot is None:
        inputs.kinds.append(kind)
    else:
        inputs.kinds[slot] = kind


def stream_input(raw: str | Path, readers: Sequence[Reader], inputs: Inputs, *, prefix: str = "") -> Iterator[Exchange]:
    """One file's exchanges as they are read, their ids prefixed with ``prefix``; its kind and anything odd in it
    go to ``inputs`` (a worker of ``validate --jobs`` reads its recording so)."""
    yield from _one_file(Path(raw), readers, inputs, prefix)


def merged_inputs(paths: Sequence[str | Path], readers: Sequence[Reader], inputs: Inputs) -> Iterator[Exchange]:
    """Every file's exchanges merged in the order they finished, each file read as a stream of its own: the hops of
    a gateway captured apart (a proxy's recording of the front, a tap's of the back) are judged as they happened,
    the upstream's answer before the gateway's. Each file is in that order already, so memory holds one exchange
    per file whatever their sizes. Every file is checked before any is read."""
    if len(paths) < 2:
        yield from stream_inputs(paths, readers, inputs)
        return
    for raw in paths:
        reader_for(Path(raw), readers)
    first = len(inputs.kinds)
    inputs.kinds.extend("" for _ in paths)
    streams = [
        _one_file(Path(raw), readers, inputs, f"f{number}:", first + number - 1)
        for number, raw in enumerate(paths, start=1)
    ]
    yield from heapq.merge(*streams, key=_finished_at)


def _finished_at(exchange: Exchange) -> float:
    """Where an exchange goes among several files' (the merge's key). An observation (an audit line, a note) is
    written after the exchange it is about, at a later time than the traffic that follows it in its file: it goes
    as soon as it is read, so that it holds back nothing."""
    if isinstance(exchange, Observation):
        return -math.inf
    ending = getattr(exchange, "ending", None)
    if ending is not None:
        return max(float(ending.time), float(exchange.time))
    return float(getattr(exchange, "time", 0.0))


def reader_for(path: Path, readers: Sequence[Reader]) -> Reader:
    """The reader that reads ``path``; a :class:`RecordingError` when none does (or the file cannot be read)."""
    if not path.is_file():
        raise RecordingError(f"{path}: no such file")
    for reader in readers:
        try:
            if reader.sniff(path):
                return reader
        except OSError as exc:
            raise RecordingError(f"{path}: cannot read ({exc})") from exc
    names = [reader.name for reader in sorted(readers, key=lambda reader: reader is not RECORDING)]
    expected = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
    raise RecordingError(f"{path}: not a recording mcp-assay can read ({expected} expected)")


def load_inputs(
    paths: Sequence[str | Path], readers: Sequence[Reader] = (RECORDING,)
) -> tuple[ExchangeLog, list[str], list[str]]:
    """Read every file into one log; return the log, the problems found, and each file's kind."""
    inputs = Inputs()
    log = ExchangeLog(stream_inputs(paths, readers, inputs))
    return log, inputs.problems, inputs.kinds
