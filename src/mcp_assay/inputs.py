"""Read captured traffic from files, whatever tool captured it, into one exchange log.

``mcp-assay validate`` accepts mcp-assay's own JSONL recordings (:data:`RECORDING`) and the capture
formats of other tools (mitmproxy flow files and HAR, whose readers live in
:mod:`mcp_assay.addon.importers` because reading flows takes mitmproxy); the caller names the readers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_assay.errors import RecordingError
from mcp_assay.recording import read_recording, stream_recording
from mcp_assay.traffic import ExchangeLog
from mcp_assay.wire import Exchange

__all__ = [
    "RECORDING",
    "Inputs",
    "Loaded",
    "Reader",
    "load_inputs",
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
        yield from stream_input(raw, readers, inputs, prefix="" if len(paths) == 1 else f"f{number}:")


def stream_input(raw: str | Path, readers: Sequence[Reader], inputs: Inputs, *, prefix: str = "") -> Iterator[Exchange]:
    """One file's exchanges as they are read, their ids prefixed with ``prefix``; its kind and anything odd in it
    go to ``inputs``. The one place a file of captured traffic is read, whoever judges it."""
    path = Path(raw)
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
    inputs.kinds.append(kind)


def reader_for(path: Path, readers: Sequence[Reader]) -> Reader:
    """The reader of ``path``'s format (told by its content); :class:`RecordingError` when none reads it."""
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
