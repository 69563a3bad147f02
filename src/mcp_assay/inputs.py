"""Read captured traffic from files, whatever tool captured it, into one exchange log.

``mcp-assay validate`` accepts mcp-assay's own JSONL recordings; other capture formats register
a sniffer here so that a capture someone already has can be judged without conversion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_assay.errors import RecordingError
from mcp_assay.recording import read_recording
from mcp_assay.traffic import ExchangeLog
from mcp_assay.wire import Exchange

__all__ = ["Loaded", "Reader", "load_inputs", "register_reader"]


@dataclass
class Loaded:
    """Exchanges read from one file, and what was odd about the file."""

    exchanges: list[Exchange]
    problems: list[str] = field(default_factory=list)
    kind: str = "recording"


Reader = Callable[[Path, str], Loaded]
"""Reads one file, prefixing exchange ids with the given string; raises :class:`RecordingError`
if the file is not of its format."""

_READERS: list[tuple[str, Callable[[Path], bool], Reader]] = []


def register_reader(name: str, sniff: Callable[[Path], bool], reader: Reader) -> None:
    """Add a capture format: ``sniff`` says whether a file is of it, ``reader`` reads it."""
    _READERS.append((name, sniff, reader))


def _read_jsonl(path: Path, prefix: str) -> Loaded:
    recording = read_recording(path, prefix=prefix)
    return Loaded(list(recording.log), recording.problems, "recording")


def _is_jsonl(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(1)
    return head == b"{"


register_reader("recording", _is_jsonl, _read_jsonl)


def _register_importers() -> None:
    """Other tools' capture formats (mitmproxy flows, HAR) register themselves when first needed."""
    import mcp_assay.importers  # noqa: F401


def load_inputs(paths: Sequence[str | Path]) -> tuple[ExchangeLog, list[str], list[str]]:
    """Read every file into one log; return the log, the problems found, and each file's kind."""
    _register_importers()
    log = ExchangeLog()
    problems: list[str] = []
    kinds: list[str] = []
    for number, raw in enumerate(paths, start=1):
        path = Path(raw)
        if not path.is_file():
            raise RecordingError(f"{path}: no such file")
        for name, sniff, reader in reversed(_READERS):
            try:
                matches = sniff(path)
            except OSError as exc:
                raise RecordingError(f"{path}: cannot read ({exc})") from exc
            if not matches:
                continue
            loaded = reader(path, "" if len(paths) == 1 else f"f{number}:")
            for exchange in loaded.exchanges:
                log.add(exchange)
            problems.extend(f"{path.name}: {problem}" for problem in loaded.problems)
            kinds.append(loaded.kind or name)
            break
        else:
            raise RecordingError(
                f"{path}: not a recording mcp-assay can read "
                "(an mcp-assay JSONL recording, a mitmproxy flow file or a HAR file expected)"
            )
    return log, problems, kinds
