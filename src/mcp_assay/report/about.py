"""What a report says about what it judged: the target, and how much traffic there was.

Tool-defined. Each producer of a report (the suite, the proxy and the tap, ``validate``, the demo)
fills in the fields it knows; the writers read them by name. A field left ``None`` is absent: the
JSON form leaves it out, and reading the JSON back gives the same value, so a report re-rendered
or merged by ``mcp-assay report`` says what the original said.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Self

__all__ = ["Stats", "Target", "evidence_lines", "newer_line"]

UNKNOWN = "?"
"""What a header shows for a target field no producer filled in."""


class _JsonFields:
    """The JSON form of a dataclass whose fields are all optional: the set ones, in declaration order."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        """The fields that are set, in declaration order (the order the JSON report has always had)."""
        values = {field.name: getattr(self, field.name) for field in fields(self)}  # type: ignore[arg-type]
        return {name: value for name, value in values.items() if value is not None}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        """The fields ``data`` (the JSON form) holds; a damaged report is a :class:`TypeError`."""
        if not isinstance(data, Mapping):
            raise TypeError(f"expected an object, not a JSON {type(data).__name__}")
        names = {field.name for field in fields(cls)}  # type: ignore[arg-type]
        return cls(**{key: value for key, value in data.items() if key in names})


@dataclass(frozen=True, slots=True, kw_only=True)
class Target(_JsonFields):
    """What was judged."""

    kind: str | None = None
    """``suite``, ``proxy``, ``tap``, ``recording``, ``demo`` or ``merged``."""
    description: str | None = None
    """The URL, the command or the files, as the user named them (redacted)."""
    transport: str | None = None
    """``streamable-http``, ``stdio``, or the transports a capture held."""
    credentials: str | None = None
    """What the suite presented, without the values."""
    offered: Mapping[str, str] | None = None
    """The revisions the server offered to the suite, and where it said so."""
    inputs: list[str] | None = None
    """The kinds of file ``validate`` read (recording, HAR, mitmproxy flows)."""
    proxy: str | None = None
    """The demo's proxy."""
    client: str | None = None
    """The demo's client."""
    recording: str | None = None
    """Where the traffic was recorded."""
    unknown_revisions: Mapping[str, str] | None = None
    """Revisions newer than the window the server offered or accepted, and how it showed it (nothing new in them
    is judged: the report says so first)."""
    evidence: list[Mapping[str, Any]] | None = None
    """The files the verdicts rest on, so they can be checked later: each recording written or judged (``file``), its
    ``sha256``, its ``records`` and what its digest chain says (``chain``: ``whole``, ``broken`` with its
    ``breaks``, or ``unchained``)."""
    served: str | None = None
    """The command ``run --serve`` started, and stopped when the run ended: a replay needs it started again."""

    @property
    def replay_caveat(self) -> str | None:
        """What a reader must know before pasting a replay of this report, or ``None``."""
        if not self.served:
            return None
        return f"--serve stopped the server when the run ended: start it again before pasting a replay ({self.served})"

    @property
    def shown_kind(self) -> str:
        return self.kind if self.kind is not None else UNKNOWN

    @property
    def shown_description(self) -> str:
        return self.description if self.description is not None else UNKNOWN

    def redacted(self, text: Callable[[str], str]) -> Target:
        """Every text field passed through ``text`` (a redactor's)."""
        changed: dict[str, Any] = {key: text(value) for key, value in self.to_json().items() if isinstance(value, str)}
        return replace(self, **changed)


def newer_line(target: Target, window: Sequence[str]) -> str | None:
    """The report's line on revisions newer than the window the server speaks, or ``None``: what it speaks, what
    mcp-assay knows, and how to learn whether newer schemas are published."""
    found = target.unknown_revisions
    if not found:
        return None
    spoken = "; ".join(f"{revision} ({how})" for revision, how in sorted(found.items()))
    known = " and ".join(sorted(window)) or "no revision"
    return (
        f"the server speaks {spoken}; mcp-assay knows {known}, so whatever is new in it is not judged "
        "(mcp-assay spec pull --check says whether newer schemas are published)"
    )


def evidence_lines(target: Target, *, short: bool = False) -> list[str]:
    """One line per file of ``target.evidence``, for a report's opening lines: the file, its sha256 (which
    ``sha256sum`` prints too; ``short``: its first 16 digits, for a terminal) and what its chain says."""
    lines = []
    for item in target.evidence or ():
        value = str(item.get("sha256") or "")
        digest = f"sha256:{value[:16] + '…' if short else value}" if value else "sha256 not known"
        chain = item.get("chain")
        if chain == "whole":
            state = f"digest chain whole ({item.get('records', '?')} records)"
            if item.get("closed") is False:
                state += ", no closing record (cut short)"
        elif chain == "broken":
            state = "DIGEST CHAIN BROKEN: " + "; ".join(str(text) for text in item.get("breaks", []))
        else:
            state = "no digest chain: cannot be verified"
        lines.append(f"{item.get('file', '?')} {digest}, {state}")
    return lines


@dataclass(frozen=True, slots=True, kw_only=True)
class Stats(_JsonFields):
    """How much a report judged, and how long it took."""

    exchanges: int | None = None
    """HTTP exchanges, stdio lines and process exits."""
    observations: int | None = None
    """What the tool saw beside the traffic: audit lines, stderr, notes."""
    messages: int | None = None
    """JSON-RPC messages."""
    requests: int | None = None
    """Requests the suite sent."""
    windows: int | None = None
    """Windows of a long capture ``validate`` judged one after the other."""
    captured_s: float | None = None
    """How long the proxy or the tap captured."""
    live_findings: int | None = None
    """Failures the proxy or the tap printed as they happened."""
    duration_ms: int | None = None
    """How long judging took (a suite run: the whole run)."""
