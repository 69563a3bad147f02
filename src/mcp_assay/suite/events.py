"""What a suite run reports as it goes: the CLI turns these into progress, and the last into a report."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_assay.recording.audit import AuditLine
from mcp_assay.report.about import Stats, Target
from mcp_assay.report.sdk_signs import SdkSigns
from mcp_assay.report.untried import Generated, Untried
from mcp_assay.suite.oauth.steps import Line
from mcp_assay.vocabulary.verdicts import Verdict
from mcp_assay.wire.model import Exchange

__all__ = [
    "Event",
    "ExchangeRecorded",
    "ExploreProgress",
    "FamilyFinished",
    "FamilyStarted",
    "RevisionSelected",
    "RunFinished",
    "RunStarted",
    "SignInStep",
    "StderrLine",
]


@dataclass(frozen=True, slots=True)
class RunStarted:
    target: str
    transport: str
    families: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RevisionSelected:
    revisions: tuple[str, ...]
    """The revisions the run tests, newest first (empty: none could be established)."""
    note: str


@dataclass(frozen=True, slots=True)
class FamilyStarted:
    family: str
    revision: str = ""
    """The revision whose cases the family sends (the revisions a run tests proceed side by side)."""


@dataclass(frozen=True, slots=True)
class FamilyFinished:
    family: str
    skipped: str | None = None
    """Why the family (or part of it) could not run, if it could not."""
    revision: str = ""


@dataclass(frozen=True, slots=True)
class ExchangeRecorded:
    exchange: Exchange
    judged: bool
    """False for traffic kept out of the judged log (selection traffic of another era)."""


@dataclass(frozen=True, slots=True)
class ExploreProgress:
    """One line of ``run --explore``'s progress (the seed first): printed on stderr whatever the terminal."""

    revision: str
    text: str


@dataclass(frozen=True, slots=True)
class StderrLine:
    text: str


@dataclass(frozen=True, slots=True)
class SignInStep:
    """One line of the run signing itself in (secrets already scrubbed): printed whatever the terminal."""

    kind: Line
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """The run is over: its verdicts, and what its report says about what was judged."""

    verdicts: tuple[Verdict, ...]
    """Every check's verdict in every revision tested (each names its revision)."""
    target: Target
    """What was run against: ``kind``, ``description``, ``transport``, the credentials used, what it offered."""
    tested: tuple[str, ...]
    """The revisions tested, newest first."""
    revision_note: str
    notes: tuple[str, ...] = ()
    audit: tuple[AuditLine, ...] = ()
    stats: Stats = field(default_factory=Stats)
    unjudged: str | None = None
    """Why there was nothing to judge (no MCP server there, or none that could be driven): the report then makes
    no conformance statement and the exit code is 3."""
    untried: tuple[Untried, ...] = ()
    """Listed tools, prompts and resources the run did not call, get or read, and what would."""
    generated: tuple[Generated, ...] = ()
    """Tools the run called with arguments drawn from their inputSchema."""
    signs: SdkSigns | None = field(default=None, compare=False)
    """What the server showed of the SDK it is built on (its error texts, its tool schemas ...)."""


Event = (
    RunStarted
    | RevisionSelected
    | FamilyStarted
    | FamilyFinished
    | ExchangeRecorded
    | StderrLine
    | SignInStep
    | ExploreProgress
    | RunFinished
)
