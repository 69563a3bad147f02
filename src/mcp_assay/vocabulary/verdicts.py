"""The vocabulary every part of mcp-assay shares to say how a requirement fared.

A check (passive rule or active probe) produces a :class:`Verdict`; the report merges verdicts;
writers render them. Keeping these types in one small module is what lets the proxy, the stdio
tap, the active suite and an offline recording all speak about conformance the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any

from mcp_assay.vocabulary.replays import Replay

__all__ = [
    "Evidence",
    "ExitCode",
    "ExploredInput",
    "Level",
    "Outcome",
    "Party",
    "RequirementText",
    "SchemaInfo",
    "SdkFinding",
    "Severity",
    "Side",
    "Source",
    "Verdict",
    "whose",
]


class ExitCode(IntEnum):
    """The process exit status of every command, and ``verdict.exit_code`` in every report: one value."""

    CONFORMANT = 0
    """No failure that counts (``--fail-on``): conformant, or conformant in part."""
    FAILED = 1
    """A requirement at the ``--fail-on`` level failed (or a stale baseline entry)."""
    USAGE = 2
    """The user's input is unusable: a flag, a config file, a path."""
    NOT_JUDGED = 3
    """Nothing to judge: no MCP peer (missing, dead, not MCP, outside the window), no traffic, or a defect of
    mcp-assay itself. Never 0 or 1, which would be a conformance statement."""


class Level(StrEnum):
    """The requirement keyword (RFC 2119) the catalogue gives an entry."""

    MUST = "MUST"
    MUST_NOT = "MUST NOT"
    SHOULD = "SHOULD"
    SHOULD_NOT = "SHOULD NOT"
    MAY = "MAY"

    @property
    def severity(self) -> Severity:
        """What a violation of this keyword means before any catalogue adjustment."""
        if self in (Level.MUST, Level.MUST_NOT):
            return Severity.MUST
        if self in (Level.SHOULD, Level.SHOULD_NOT):
            return Severity.SHOULD
        return Severity.INFO


class Severity(StrEnum):
    """How a failed verdict counts: against conformance, as a recommendation, or as a note."""

    MUST = "must"
    SHOULD = "should"
    INFO = "info"

    def lowered(self) -> Severity:
        """One step down, for inferred or ambiguous requirements."""
        return {Severity.MUST: Severity.SHOULD, Severity.SHOULD: Severity.INFO}.get(self, Severity.INFO)


class Outcome(StrEnum):
    """What a check established."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_VERIFIED = "not_verified"
    NOT_APPLICABLE = "not_applicable"


class Side(StrEnum):
    """Whose behaviour a check judges."""

    SERVER = "server"
    CLIENT = "client"
    BOTH = "both"
    PROXY = "proxy"


class Party(StrEnum):
    """Who is at fault for a finding when mcp-assay watched a gateway between the peers.

    The gateway is a server on its front hop and a client on its back hop; a fault the upstream's own
    answer already carried on the back hop stays the upstream server's however faithfully the gateway
    relayed it, and one that appears between the hops is the gateway's (:mod:`mcp_assay.wire.hops`)."""

    CLIENT = "client"
    GATEWAY = "gateway"
    SERVER = "server"


class Source(StrEnum):
    """Where the evidence of a verdict came from."""

    PASSIVE = "passive"
    """Observed: traffic between the peers themselves."""
    ACTIVE = "active"
    """Probed: requests mcp-assay sent itself (the suite, or the proxy probing a server)."""
    INJECTED = "injected"
    """A client's reaction to an answer mcp-assay made up or reshaped on the server's behalf."""
    EXPLORED = "explored"
    """Found only by exploring: calls with arguments mcp-assay drew from a tool's inputSchema (``run --explore``)."""


@dataclass(frozen=True, slots=True)
class SchemaInfo:
    """Which schema file judged a revision (every report names them)."""

    revision: str
    origin: str
    path: str
    sha256: str
    pinned: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RequirementText:
    """What the catalogue says about one requirement, carried in a report for readers and writers."""

    id: str
    level: str
    side: str
    summary: str
    """mcp-assay's own paraphrase of the requirement."""
    source: str
    """Where the specification says it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExploredInput:
    """How ``run --explore`` came to the arguments of a call it reported: drawn from the tool's inputSchema, then
    shrunk on the live server to the smallest that still failed the same way."""

    tool: str
    seed: int | None = None
    """The tool's own seed (derived from the run's, which the report's notes name)."""
    kind: str = ""
    """``inside`` the inputSchema, or the one constraint the arguments break (``bound``, ``type`` ...)."""
    origin: str = ""
    """Where the first failing arguments came from: ``edge``, ``mutation``, ``drawn`` or ``kept`` (an earlier run)."""
    generated: str = ""
    """The arguments as first sent (JSON, redacted); the exchange's own request holds the shrunk ones."""
    steps: tuple[str, ...] = ()
    """Each shrink step taken, in words."""
    stopped: str = ""
    """Why shrinking stopped before trying every smaller candidate ('' when it tried them all)."""

    @classmethod
    def from_json(cls, data: Any) -> ExploredInput | None:
        """Read back from a JSON report (``None`` for anything else)."""
        if not isinstance(data, dict) or not isinstance(data.get("tool"), str):
            return None
        seed = data.get("seed")
        steps = data.get("steps")
        return cls(
            tool=data["tool"],
            seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
            kind=str(data.get("kind", "")),
            origin=str(data.get("origin", "")),
            generated=str(data.get("generated", "")),
            steps=tuple(str(step) for step in steps) if isinstance(steps, list | tuple) else (),
            stopped=str(data.get("stopped", "")),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """One piece of traffic that supports a verdict, already redacted."""

    summary: str
    """One line naming the exchange, e.g. ``POST /mcp tools/list id=3 -> 200 application/json``."""
    detail: str = ""
    """What was wrong (or right) about it."""
    exchange: str | None = None
    """Id of the exchange in the log and in the recording, so a reader can find it."""
    message: int | None = None
    """Index of the message within its exchange (0 is the request body)."""
    excerpt: str = ""
    """A redacted, truncated rendering of the message."""
    reproduction: str = ""
    """The request again as one shell line (:func:`mcp_assay.vocabulary.replays.shell_line` of :attr:`replay`): a curl
    command,
    or over stdio the server command fed the line; credentials as ``${MCP_ASSAY_TOKEN}``-style placeholders."""
    time: float | None = None
    revision: str | None = None
    explored: ExploredInput | None = None
    """For a call ``run --explore`` reported: its first arguments and the shrink steps that led to these."""
    replay: Replay | None = field(default=None, compare=False)
    """What :attr:`reproduction` sends, as data ``mcp-assay replay`` re-sends (``None``: nothing to re-send)."""
    hop: str | None = None
    """``front`` or ``back``: the side of a gateway the exchange crossed (``None``: no gateway was watched)."""


def whose(party: Party | None, side: Side) -> str:
    """Whose conduct a check judged, as the writers name it: the side, or with a gateway between the peers the
    party (``gateway as server`` on its front hop, ``gateway as client`` on its back hop)."""
    if party is None:
        return side.value
    if party is Party.GATEWAY and side in (Side.SERVER, Side.CLIENT):
        return f"gateway as {side.value}"
    return party.value


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkFinding:
    """The known finding of an SDK a failure matches: the failure is that SDK's, not the peer's own code.

    Shipped with mcp-assay per SDK and version (``report/sdk_findings.yaml``, generated from the findings the
    end-to-end tests pin), and matched only on a peer built on that SDK: recognized from what the peer itself
    showed, or named with ``--sdk``."""

    name: str
    """The SDK's package name, e.g. ``mcp`` or ``@modelcontextprotocol/server``."""
    version: str
    """The version whose known findings the failure matches."""
    label: str = ""
    """What people call it: ``Python SDK``, ``TypeScript SDK v2``."""
    requirement: str = ""
    """The requirement of the known finding."""
    behaviour: str = ""
    """What that SDK version was seen doing (the pinned finding's justification)."""
    clause: str = ""
    """Where the specification says it (the catalogue's source of the requirement)."""
    upstream: str = ""
    """The upstream report (an issue or pull request), where there is one."""
    recognized: str = ""
    """How the SDK was known: what the peer showed, or that ``--sdk`` named it."""

    @property
    def named(self) -> str:
        """``mcp 2.3.0``."""
        return f"{self.name} {self.version}"

    def to_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "version": self.version,
            "label": self.label,
            "requirement": self.requirement,
            "behaviour": self.behaviour,
            "clause": self.clause,
            "upstream": self.upstream,
            "recognized": self.recognized,
        }

    @classmethod
    def from_json(cls, data: Any) -> SdkFinding | None:
        """Read back from a JSON report (``None`` for anything else)."""
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("name"), str)
            or not isinstance(data.get("version"), str)
        ):
            return None
        text = {key: value for key, value in data.items() if isinstance(value, str)}
        return cls(
            name=text["name"],
            version=text["version"],
            label=text.get("label", ""),
            requirement=text.get("requirement", ""),
            behaviour=text.get("behaviour", ""),
            clause=text.get("clause", ""),
            upstream=text.get("upstream", ""),
            recognized=text.get("recognized", ""),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The outcome of one check over one exchange log."""

    check: str
    title: str
    requirements: tuple[str, ...]
    level: Level
    severity: Severity
    side: Side
    outcome: Outcome
    source: Source
    reason: str = ""
    area: str = ""
    evidence: tuple[Evidence, ...] = ()
    revisions: tuple[str, ...] = ()
    """The revisions of the messages the check judged."""
    judged: int = 0
    """How many subjects (messages, exchanges, streams) the check looked at."""
    violations: int = 0
    """How many of them violated the requirement."""
    blocked_by: str | None = None
    """For a not-verified verdict: the check whose failure made this one impossible."""
    tags: tuple[str, ...] = field(default=())
    known: str | None = None
    """For a failed verdict a baseline entry matched: the reason the entry gives (it no longer decides the run)."""
    graded: str | None = None
    """For a failed verdict whose every failure the catalogue's gate grades lower than the check's level (its
    :attr:`severity` is then that lower grade): why, e.g. the server protects itself with a scheme of its own."""
    revision: str | None = None
    """The revision under test when the verdict was reached: a suite run judges each revision the server serves
    on its own, so one check has a verdict per revision. ``None`` when traffic was judged whatever revisions it
    carried (the proxy, the tap, ``validate`` of a capture); :attr:`revisions` says which those were."""
    party: Party | None = None
    """Who is at fault (or, for a result that did not fail, whose conduct it judged) when a gateway stood
    between the peers; ``None`` when there is only one peer to blame."""
    sdk: SdkFinding | None = None
    """For a failed verdict: the known finding of the SDK the peer is built on that it matches (it is that SDK's,
    not the peer's own code), or ``None``. It still counts unless accepted (``--accept-sdk-findings`` or a
    baseline), which sets :attr:`known`."""

    @property
    def whose(self) -> str:
        """Whose conduct the result judges, as the writers name it (:func:`whose`)."""
        return whose(self.party, self.side)

    @property
    def shown_level(self) -> str:
        """The keyword, and the grade it counts at where that differs from the keyword's own (``SHOULD, graded
        INFO`` for a heuristic; ``MUST, graded SHOULD`` for a failure the catalogue's gate grades lower)."""
        if self.severity is self.level.severity:
            return self.level.value
        return f"{self.level.value}, graded {self.severity.value.upper()}"

    @property
    def counts_against(self) -> bool:
        """A MUST-severity failure: the software is not conformant."""
        return self.outcome is Outcome.FAILED and self.severity is Severity.MUST
