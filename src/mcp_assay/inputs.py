"""Read captured traffic from files, whatever tool captured it, into one exchange log.

``mcp-assay validate`` accepts mcp-assay's own JSONL recordings (:data:`RECORDING`) and the capture
formats of other tools (mitmproxy flow files and HAR, whose readers live in
:mod:`mcp_assay.addon.importers` because reading flows takes mitmproxy); the caller names the readers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_assay.errors import RecordingError
from mcp_assay.recording import read_recording
from mcp_assay.traffic import ExchangeLog
from mcp_assay.wire import Exchange

__all__ = ["RECORDING", "Loaded", "Reader", "load_inputs"]


@dataclass
class Loaded:
    """Exchanges read from one file, and what was odd about the file."""

    exchanges: list[Exchange]
    problems: list[str] = field(default_factory=list)
    kind: str = "recording"


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


def load_inputs(
    paths: Sequence[str | Path], readers: Sequence[Reader] = (RECORDING,)
) -> tuple[ExchangeLog, list[str], list[str]]:
    """Read every file into one log with the first reader that recognises it; return the log, the
    problems found, and each file's kind."""
    log = ExchangeLog()
    problems: list[str] = []
    kinds: list[str] = []
    for number, raw in enumerate(paths, start=1):
        path = Path(raw)
        if not path.is_file():
            raise RecordingError(f"{path}: no such file")
        for reader in readers:
            try:
                matches = reader.sniff(path)
            except OSError as exc:
                raise RecordingError(f"{path}: cannot read ({exc})") from exc
            if not matches:
                continue
            loaded = reader.read(path, "" if len(paths) == 1 else f"f{number}:")
            for exchange in loaded.exchanges:
                log.add(exchange)
            problems.extend(f"{path.name}: {problem}" for problem in loaded.problems)
            kinds.append(loaded.kind or reader.name)
            break
        else:
            names = [reader.name for reader in sorted(readers, key=lambda reader: reader is not RECORDING)]
            expected = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
            raise RecordingError(f"{path}: not a recording mcp-assay can read ({expected} expected)")
    return log, problems, kinds
