"""The facts of one sending of a case that some rules read: who sent it, in which lane, with what.

A case says what is sent and why; a sending adds what only the moment knows: the principal a
behaviour case acted as, the tool a scope probe called, the words for the credential a probe
presented, what an injection did to the exchange and how long it held an answer, how ``run
--explore`` came to a call's arguments. They travel typed on the :class:`~mcp_assay.wire.model.Probe` and
are recorded flat beside the probe's name, one key per field (``principal``, ``phase``, ``tool``,
``fault`` ...; an explored call's story is one object under ``explored``), as recordings always
kept them; :meth:`Facts.from_record` reads them back from any recording, older ones included, and
leaves out a value of the wrong type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any

from mcp_assay.vocabulary.protocol import Era

__all__ = ["NO_FACTS", "ExploreRole", "Explored", "Facts", "FaultKind", "Phase", "Refusal"]


class Phase(StrEnum):
    """Which step of a behaviour case a request (or witness read) belongs to."""

    CALIBRATE = "calibrate"
    """An accepted call of a write tool, which must move its witness."""
    REFUSAL = "refusal"
    RACE = "race"
    CANCEL = "cancel"
    """Giving up on a race's call with ``notifications/cancelled``."""
    READ = "read"


class Refusal(StrEnum):
    """How a behaviour refusal case tries a write it must refuse (``write_tools.<tool>.refusals``)."""

    EXTRA_ARGUMENTS = "extra_arguments"
    PRINCIPAL_WITHOUT_SCOPE = "principal_without_scope"
    INVALID_TOKEN = "invalid_token"
    ANONYMOUS = "anonymous"
    MISMATCHED_NAME = "mismatched_name"
    UNKNOWN_TOOL = "unknown_tool"


class FaultKind(StrEnum):
    """One kind of thing ``--inject`` does to an exchange (what the reaction rules select injected exchanges by,
    :func:`mcp_assay.wire.faults.fault_kind_of`)."""

    ANSWERED = "answered"
    """Answered in the server's place: the request never reached the server."""
    HELD = "held"
    """The server's answer was kept from the client for a while (or until the client left)."""
    RESPELLED = "respelled"
    """The answer's header names were respelled in another legal case."""
    CUT = "cut"
    """The server's event stream was ended before its final response, the rest kept for a resumption."""
    RESUMED = "resumed"
    """The rest of a cut stream, handed to the client that resumed it."""


class ExploreRole(StrEnum):
    """Why ``run --explore`` sent a call."""

    SEARCH = "search"
    """Looking for a failure."""
    SHRINK = "shrink"
    """Trying a smaller input that may still fail the same way."""
    REPORTED = "reported"
    """The shrunk input, sent once more: the call a finding shows."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Explored:
    """How ``run --explore`` came to one call's arguments (recorded as one object under ``explored``)."""

    tool: str
    seed: int | None = None
    """The tool's own seed (derived from the run's)."""
    role: ExploreRole | None = None
    kind: str = ""
    """``inside`` the inputSchema, or the one constraint the arguments break (``bound``, ``type`` ...)."""
    origin: str = ""
    """Where the arguments came from: ``plain``, ``edge``, ``mutation``, ``drawn`` or ``kept``."""
    found: tuple[str, ...] = ()
    """What the first call with these arguments failed (a reported call's checks or signals)."""
    generated: str = ""
    """The arguments as first sent (JSON); a reported call's own request holds the shrunk ones."""
    steps: tuple[str, ...] = ()
    """Each shrink step taken, in words."""
    shrink_calls: int | None = None
    stopped: str = ""
    """Why shrinking stopped before trying every smaller candidate."""
    words: str = ""
    """What the first arguments were, in words, where their origin says more than its name."""

    @property
    def reported(self) -> bool:
        return self.role is ExploreRole.REPORTED

    def to_record(self) -> dict[str, Any]:
        """The story as a recording keeps it: the tool, and every other field that is set."""
        record: dict[str, Any] = {"tool": self.tool}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name != "tool" and value not in (None, "", ()):
                record[item.name] = list(value) if isinstance(value, tuple) else value
        return record

    @classmethod
    def from_record(cls, value: Any) -> Explored | None:
        """The story read back from a recording (``None`` for anything that names no tool); a value of the wrong
        type is left out."""
        if not isinstance(value, Mapping) or not isinstance(value.get("tool"), str):
            return None
        seed, calls, role = value.get("seed"), value.get("shrink_calls"), value.get("role")
        roles = {item.value: item for item in ExploreRole}

        def text(key: str) -> str:
            found = value.get(key)
            return found if isinstance(found, str) else ""

        def texts(key: str) -> tuple[str, ...]:
            found = value.get(key)
            return tuple(str(part) for part in found) if isinstance(found, list | tuple) else ()

        return cls(
            tool=value["tool"],
            seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
            role=roles.get(role) if isinstance(role, str) else None,
            kind=text("kind"), origin=text("origin"), found=texts("found"), generated=text("generated"),
            steps=texts("steps"),
            shrink_calls=calls if isinstance(calls, int) and not isinstance(calls, bool) else None,
            stopped=text("stopped"), words=text("words"),
        )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Facts:
    """What one sending adds to its case; every field is optional and recorded under its own name."""

    # -- the behaviour lane (suite.behaviour): where, as whom, and which step -----------------------
    lane: str | None = None
    """The revision of a behaviour lane (older recordings kept it under ``era``)."""
    transport: str | None = None
    case: str | None = None
    """The behaviour case a request or witness read belongs to (``<era>/<transport>/write/<tool>/...``)."""
    principal: str | None = None
    owner: str | None = None
    """The principal whose session or handle another principal presented."""
    tool: str | None = None
    phase: Phase | None = None
    refusal: Refusal | None = None
    page: int | None = None
    canary: str | None = None
    """The value a handle case planted, which must not show up in another principal's answer."""
    extra: tuple[str, ...] | None = None
    """Argument names a refusal added that the tool's inputSchema forbids."""
    mcp_name: str | None = None
    """The name an ``Mcp-Name`` header carried instead of the body's."""
    handle: str | None = None
    witness: str | None = None
    read: str | None = None
    """Which witness read: ``before``, ``after``, ``first``, ``second``."""
    timeout_ms: int | None = None
    settle_ms: int | None = None
    calibrated_ms: int | None = None
    attempt: int | None = None
    # -- credential cases (auth, tokens) -------------------------------------------------------------
    variant: str | None = None
    """The words for what a credential case presented (``a bare Bearer scheme without a token`` ...)."""
    needs: tuple[str, ...] | None = None
    """The scopes the called tool needs."""
    broad: str | None = None
    """The one broad scope a token held."""
    # -- other sendings -------------------------------------------------------------------------------
    burst: int | None = None
    """The size of the burst a rate-limit call belongs to."""
    # -- injected exchanges (``--inject``) ------------------------------------------------------------
    era: Era | None = None
    """The era of the client an injected answer was made for (older recordings wrote ``legacy`` for the handshake
    era)."""
    fault: FaultKind | None = None
    """What the injection did to the exchange."""
    hold_ms: int | None = None
    """How long an injected answer was held back."""
    retry_ms: int | None = None
    """The ``retry`` a cut stream announced."""
    supported: tuple[str, ...] | None = None
    """The versions an injected refusal offered."""
    offered: str | None = None
    """The version an injected counter-offer named."""
    # -- run --explore ---------------------------------------------------------------------------------
    explored: Explored | None = None
    """How ``run --explore`` came to a call's arguments."""

    def merged(self, **changes: Any) -> Facts:
        """These facts with ``changes`` (``None`` values leave a field as it is)."""
        return replace(self, **{key: value for key, value in changes.items() if value is not None})

    def with_recorded(self, key: str, value: Any) -> Facts:
        """These facts with ``key`` set as a recording would give it (a key that names no fact changes nothing)."""
        typed = _typed(key, value) if key in _FIELDS else None
        return replace(self, **{key: typed}) if typed is not None else self

    def to_record(self) -> dict[str, Any]:
        """The facts as a recording keeps them: every field that is set, under its own name."""
        record: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if value is None:
                continue
            if isinstance(value, Explored):
                value = value.to_record()
            record[item.name] = list(value) if isinstance(value, tuple) else value
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, skip: frozenset[str] = frozenset()) -> Facts:
        """The facts in a recorded probe (or a witness observation); a value of the wrong type is left out."""
        found: dict[str, Any] = {}
        if "era" in record and "era" not in skip:
            _read_era(record["era"], record, found)
        for item in fields(cls):
            if item.name in skip or item.name not in record or item.name == "era":
                continue
            value = _typed(item.name, record[item.name])
            if value is not None:
                found[item.name] = value
        return cls(**found) if found else NO_FACTS


_INTS = frozenset({"page", "timeout_ms", "settle_ms", "calibrated_ms", "attempt", "burst", "hold_ms", "retry_ms"})
_LISTS = frozenset({"extra", "needs", "supported"})
_ENUMS: dict[str, type[StrEnum]] = {"phase": Phase, "refusal": Refusal, "fault": FaultKind}


def _read_era(value: Any, record: Mapping[str, Any], found: dict[str, Any]) -> None:
    """``era`` as recordings hold it: an :class:`~mcp_assay.vocabulary.protocol.Era` (``legacy`` included), or, in
    recordings
    older than ``lane``, the revision of a behaviour lane."""
    era = Era.read(value)
    if era is not None:
        found["era"] = era
    elif isinstance(value, str) and "lane" not in record:
        found["lane"] = value


def _typed(name: str, value: Any) -> Any:
    if name == "era":
        return value if isinstance(value, Era) else Era.read(value)
    if name == "explored":
        return value if isinstance(value, Explored) else Explored.from_record(value)
    if name in _INTS:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if name in _LISTS:
        if isinstance(value, list | tuple) and all(isinstance(part, str) for part in value):
            return tuple(value)
        return None
    if name in _ENUMS:
        known = {member.value: member for member in _ENUMS[name]}
        return known.get(value) if isinstance(value, str) else None
    return value if isinstance(value, str) else None


NO_FACTS = Facts()
_FIELDS = frozenset(item.name for item in fields(Facts))
