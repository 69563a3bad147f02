"""The behaviour cases the active suite recorded, and how a case's witness moved.

The suite (:mod:`mcp_assay.suite.behaviour`) sends each case's exchanges with the facts of the step
(:class:`~mcp_assay.cases.Facts`: the behaviour case they belong to, the lane, the principal, the tool) and
records ``witness`` observations around them, carrying the same facts (a user-named read — an MCP tool, an HTTP route, a
shell command — whose value moves when a write lands). Storage, not the server's word, is the
evidence.

A case rests on its calibration: one accepted call of the same write tool, in the same era and
over the same transport, must have moved the witness, or the witness cannot see this write and
the case is *not verified*. So is a case whose witness moved on its own between two reads, or
whose read failed. The user's expected tool table travels in an ``expectation`` observation, so
a recording is judged exactly as the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_assay.cases import NO_FACTS, Case, Facts, Phase
from mcp_assay.cases import behaviour as behaviour_cases
from mcp_assay.spec.checks import Finding, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.vocabulary.verdicts import Outcome, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Exchange, HttpExchange, Observation, Probe, StdioLine

__all__ = [
    "Answer",
    "BehaviourCase",
    "Cases",
    "Movement",
    "answer_of",
    "baseline_problem",
    "cases",
    "first_answer",
    "http_status",
    "movement",
    "shown",
    "summarised",
]

WITNESS = "witness"
EXPECTATION = "expectation"


SHARED = ("lane", "transport", "tool", "phase", "refusal", "principal", "witness", "handle", "attempt")
"""The facts a behaviour case takes from the first of its requests or witness reads that carries them."""


@dataclass
class BehaviourCase:
    """One behaviour case: its client messages and its witness reads."""

    id: str
    facts: Facts = NO_FACTS
    """What its requests and reads say of it (:data:`SHARED`)."""
    messages: list[tuple[Message, Probe]] = field(default_factory=list)
    """Client requests and notifications the case sent (witness reads left out), with their probe tags."""
    reads: dict[str, Observation] = field(default_factory=dict)

    def sent(self, *cases: Case, phase: Phase | None = None) -> list[Message]:
        """What the behaviour case sent as one of ``cases`` (at ``phase`` of it, when given)."""
        return [
            message
            for message, probe in self.messages
            if probe.of_case(*cases) and (phase is None or probe.facts.phase is phase)
        ]

    def probe_of(self, request: Message) -> Probe | None:
        """The probe tag the case sent ``request`` with."""
        return next((probe for message, probe in self.messages if message is request), None)

    def read(self, which: str) -> Observation | None:
        return self.reads.get(which)

    @property
    def lane(self) -> str:
        return f"{self.facts.lane or '?'} over {self.facts.transport or '?'}"

    @property
    def tool(self) -> str:
        return self.facts.tool or "?"

    @property
    def principal(self) -> str:
        return self.facts.principal or "?"


class Cases:
    """Every behaviour case in a log, by id."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.by_id: dict[str, BehaviourCase] = {}
        self.expected: dict[str, list[str]] | None = None
        for item in ctx.log:
            if isinstance(item, Observation):
                self._observation(item)
                continue
            probe = item.probe
            if probe is None or probe.facts.case is None or probe.case is behaviour_cases.WITNESS_READ:
                continue
            for message in _client_messages(item):
                case = self._case(probe.facts.case, probe.facts)
                case.messages.append((message, probe))

    def _case(self, ident: str, facts: Facts) -> BehaviourCase:
        case = self.by_id.get(ident)
        if case is None:
            case = self.by_id[ident] = BehaviourCase(ident)
        missing = {key: getattr(facts, key) for key in SHARED if getattr(case.facts, key) is None}
        case.facts = replace(case.facts, **{key: value for key, value in missing.items() if value is not None})
        return case

    def _observation(self, item: Observation) -> None:
        data = item.data
        if item.kind == EXPECTATION and isinstance(data.get("tools_by_principal"), dict):
            table = data["tools_by_principal"]
            self.expected = {str(k): [str(t) for t in v] for k, v in table.items() if isinstance(v, list)}
        elif item.kind == WITNESS and isinstance(data.get("case"), str) and isinstance(data.get("read"), str):
            case = self._case(data["case"], Facts.from_record(data))
            case.reads[data["read"]] = item

    def with_phase(self, phase: Phase) -> list[BehaviourCase]:
        return [case for case in self.by_id.values() if case.facts.phase is phase and case.messages]

    def calibration(self, case: BehaviourCase) -> BehaviourCase | None:
        """The calibration of the write tool ``case`` concerns, in the same era and transport."""
        for other in self.by_id.values():
            if other.facts.phase is not Phase.CALIBRATE:
                continue
            if all(getattr(other.facts, key) == getattr(case.facts, key) for key in ("lane", "transport", "tool")):
                return other
        return None

    def stability(self, case: BehaviourCase, witness: str) -> BehaviourCase | None:
        ident = f"{case.facts.lane}/{case.facts.transport}/stability/{witness}"
        return self.by_id.get(ident)


def _client_messages(item: Exchange) -> list[Message]:
    if isinstance(item, HttpExchange):
        message = item.request_message
        return [message] if message is not None and message.kind in (Kind.REQUEST, Kind.NOTIFICATION) else []
    if isinstance(item, StdioLine) and item.sender is Side.CLIENT:
        return [item.message] if item.message.kind in (Kind.REQUEST, Kind.NOTIFICATION) else []
    return []


def cases(ctx: Context) -> Cases:
    """The behaviour cases of ``ctx.log`` (built once per log, shared by every behaviour rule)."""
    return ctx.view(Cases)


def _value(observation: Observation | None) -> tuple[bool, Any, str]:
    """(ok, value, why not) of a witness read."""
    if observation is None:
        return False, None, "the read was not taken"
    if "error" in observation.data:
        return False, None, str(observation.data["error"])
    return True, observation.data.get("value"), ""


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Movement:
    """What a case's two witness reads say, or why they say nothing."""

    witness: str
    before: Any = None
    after: Any = None
    problem: str | None = None

    @property
    def moved(self) -> bool:
        return self.problem is None and self.before != self.after

    def describe(self) -> str:
        verb = "moved" if self.moved else "stayed"
        return f"witness {self.witness} {verb} {shown(self.before)} → {shown(self.after)}"


def movement(case: BehaviourCase, index: Cases) -> Movement:
    """The witness reads of ``case``, with the checks every witness-based verdict rests on."""
    before_read, after_read = case.read("before"), case.read("after")
    some = before_read or after_read
    witness = str(some.data.get("witness", "?")) if some is not None else "?"
    result = Movement(witness)
    stable = index.stability(case, witness)
    if stable is not None:
        ok1, first, _ = _value(stable.read("first"))
        ok2, second, _ = _value(stable.read("second"))
        if ok1 and ok2 and first != second:
            result.problem = (
                f"witness {witness} moved on its own ({shown(first)} then {shown(second)}); "
                "isolate the test environment"
            )
            return result
    ok, before, why = _value(before_read)
    if not ok:
        result.problem = f"the witness read before the call failed: {why}"
        return result
    ok, after, why = _value(after_read)
    if not ok:
        result.problem = f"the witness read after the call failed: {why}"
        return result
    result.before, result.after = before, after
    return result


def baseline_problem(case: BehaviourCase, index: Cases) -> str | None:
    """Why the write tool's calibration cannot carry ``case`` (``None`` when it can)."""
    tool = case.tool
    calibration = index.calibration(case)
    if calibration is None:
        return f"no calibration call of {tool} was made in {case.lane}"
    moved = movement(calibration, index)
    if moved.problem is not None:
        return f"calibration of {tool}: {moved.problem}"
    if not moved.moved:
        return (
            f"an accepted call of {tool} left witness {moved.witness} at {shown(moved.before)}: "
            "it does not see this write, so nothing it shows proves anything"
        )
    return None


def first_answer(request: Message, ctx: Context) -> Message | None:
    answers = [message for message in ctx.log.responses_to(request) if message.kind.is_response]
    return min(answers, key=lambda message: message.time) if answers else None


def http_status(request: Message, ctx: Context) -> int | None:
    exchange = ctx.log.get(request.exchange)
    if isinstance(exchange, HttpExchange) and exchange.response is not None:
        return exchange.response.status
    return None


@dataclass
class Answer:
    """How the server answered a call: ``success``, ``tool-error``, ``protocol-error``, ``http-refusal``, ``none``."""

    kind: str
    text: str
    message: Message | None = None

    @property
    def succeeded(self) -> bool:
        return self.kind == "success"


def answer_of(request: Message, ctx: Context) -> Answer:
    answer = first_answer(request, ctx)
    status = http_status(request, ctx)
    where = f"HTTP {status}, " if status is not None else ""
    if answer is None:
        if status is not None and status >= 400:
            return Answer("http-refusal", f"HTTP {status} without a JSON-RPC answer")
        return Answer("none", f"{where}no answer")
    if answer.kind is Kind.ERROR:
        return Answer("protocol-error", f"{where}error {error_code(answer)}", answer)
    result = answer.result if isinstance(answer.result, dict) else {}
    if result.get("isError") is True:
        return Answer("tool-error", f"{where}a result with isError: true", answer)
    return Answer("success", f"{where}a successful result", answer)


def summarised(findings: Iterator[Finding]) -> Iterator[Finding]:
    """Failures one by one; otherwise one pass whose detail lists every case (a pass shows one reason only)."""
    items = list(findings)
    failures = [finding for finding in items if finding.outcome is Outcome.FAILED]
    if failures:
        yield from failures
        return
    passes = [finding for finding in items if finding.outcome is Outcome.PASSED]
    if not passes:
        yield from items
        return
    lines = [f.detail if f.outcome is Outcome.PASSED else f"not verified: {f.detail}" for f in items if f.detail]
    yield passed(passes[-1].subject, "; ".join(lines))
