"""Behaviour (BEH-): what a principal is offered, what a refusal changed, whether a cancelled call wrote.

These rules judge the behaviour cases of the active suite (:mod:`mcp_assay.suite.behaviour`):
the exchanges it tags with a ``case`` and the ``witness`` observations it records around them (a
user-named read — an MCP tool, an HTTP route, a shell command — whose value moves when a write
lands). Storage, not the server's word, is the evidence: a refusal that answers politely after
doing the work fails, and a call the client gave up on whose record appears afterwards is a late
write a retrying agent would duplicate.

A case rests on its calibration: one accepted call of the same write tool, in the same era and
over the same transport, must have moved the witness, or the witness cannot see this write and
the case is *not verified*. So is a case whose witness moved on its own between two reads, or
whose read failed. The user's expected tool table travels in an ``expectation`` observation, so
a recording is judged exactly as the run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from mcp_assay.checks import Context, Finding, failed, log_check, passed, unverified
from mcp_assay.jsonrpc import Kind, Message
from mcp_assay.spec.rules._common import error_code
from mcp_assay.verdicts import Level, Outcome, Side
from mcp_assay.wire import Exchange, HttpExchange, Observation, StdioLine

__all__ = [
    "forbidden_arguments_are_not_accepted",
    "handles_do_not_authenticate",
    "principals_are_offered_the_expected_tools",
    "reads_change_nothing",
    "refused_calls_change_nothing",
    "timed_out_calls_leave_no_late_write",
]

WITNESS = "witness"
MIN_RACE_MS = 60
"""Below this calibrated duration a race says nothing: no client timeout leaves time for a cancel to act."""
EXPECTATION = "expectation"


# -- what the suite recorded ---------------------------------------------------------------------
@dataclass
class Case:
    """One behaviour case: its tagged client messages and its witness reads."""

    id: str
    tags: dict[str, Any] = field(default_factory=dict)
    messages: list[tuple[Message, Mapping[str, Any]]] = field(default_factory=list)
    """Client requests and notifications the case sent (witness reads left out), with their probe tags."""
    reads: dict[str, Observation] = field(default_factory=dict)

    def sent(self, name: str, phase: str | None = None) -> list[Message]:
        return [
            message
            for message, probe in self.messages
            if probe.get("name") == name and (phase is None or probe.get("phase") == phase)
        ]

    def read(self, which: str) -> Observation | None:
        return self.reads.get(which)

    @property
    def lane(self) -> str:
        return f"{self.tags.get('era', '?')} over {self.tags.get('transport', '?')}"


class Cases:
    """Every behaviour case in a log, by id."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.size = len(ctx.log)
        self.by_id: dict[str, Case] = {}
        self.expected: dict[str, list[str]] | None = None
        for item in ctx.log:
            if isinstance(item, Observation):
                self._observation(item)
                continue
            probe = getattr(item, "probe", None)
            if not isinstance(probe, Mapping) or not isinstance(probe.get("case"), str):
                continue
            if probe.get("name") == "witness-read":
                continue
            for message in _client_messages(item):
                case = self._case(str(probe["case"]), probe)
                case.messages.append((message, probe))

    def _case(self, ident: str, tags: Mapping[str, Any]) -> Case:
        case = self.by_id.get(ident)
        if case is None:
            case = self.by_id[ident] = Case(ident)
        for key in ("era", "transport", "tool", "phase", "refusal", "principal", "witness", "handle", "attempt"):
            if key in tags and key not in case.tags:
                case.tags[key] = tags[key]
        return case

    def _observation(self, item: Observation) -> None:
        data = item.data
        if item.kind == EXPECTATION and isinstance(data.get("tools_by_principal"), dict):
            table = data["tools_by_principal"]
            self.expected = {str(k): [str(t) for t in v] for k, v in table.items() if isinstance(v, list)}
        elif item.kind == WITNESS and isinstance(data.get("case"), str) and isinstance(data.get("read"), str):
            case = self._case(data["case"], data)
            case.reads[data["read"]] = item

    def with_phase(self, phase: str) -> list[Case]:
        return [case for case in self.by_id.values() if case.tags.get("phase") == phase and case.messages]

    def calibration(self, case: Case) -> Case | None:
        """The calibration of the write tool ``case`` concerns, in the same era and transport."""
        for other in self.by_id.values():
            if other.tags.get("phase") != "calibrate":
                continue
            if all(other.tags.get(key) == case.tags.get(key) for key in ("era", "transport", "tool")):
                return other
        return None

    def stability(self, case: Case, witness: str) -> Case | None:
        ident = f"{case.tags.get('era')}/{case.tags.get('transport')}/stability/{witness}"
        return self.by_id.get(ident)


def _client_messages(item: Exchange) -> list[Message]:
    if isinstance(item, HttpExchange):
        message = item.request_message
        return [message] if message is not None and message.kind in (Kind.REQUEST, Kind.NOTIFICATION) else []
    if isinstance(item, StdioLine) and item.sender is Side.CLIENT:
        return [item.message] if item.message.kind in (Kind.REQUEST, Kind.NOTIFICATION) else []
    return []


_CACHE: WeakKeyDictionary[Context, Cases] = WeakKeyDictionary()


def cases(ctx: Context) -> Cases:
    cached = _CACHE.get(ctx)
    if cached is None or cached.size != len(ctx.log):
        cached = _CACHE[ctx] = Cases(ctx)
    return cached


# -- reading the evidence ------------------------------------------------------------------------
def _value(observation: Observation | None) -> tuple[bool, Any, str]:
    """(ok, value, why not) of a witness read."""
    if observation is None:
        return False, None, "the read was not taken"
    if "error" in observation.data:
        return False, None, str(observation.data["error"])
    return True, observation.data.get("value"), ""


def _shown(value: Any) -> str:
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
        return f"witness {self.witness} {verb} {_shown(self.before)} → {_shown(self.after)}"


def movement(case: Case, index: Cases) -> Movement:
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
                f"witness {witness} moved on its own ({_shown(first)} then {_shown(second)}); "
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


def baseline_problem(case: Case, index: Cases) -> str | None:
    """Why the write tool's calibration cannot carry ``case`` (``None`` when it can)."""
    tool = case.tags.get("tool", "?")
    calibration = index.calibration(case)
    if calibration is None:
        return f"no calibration call of {tool} was made in {case.lane}"
    moved = movement(calibration, index)
    if moved.problem is not None:
        return f"calibration of {tool}: {moved.problem}"
    if not moved.moved:
        return (
            f"an accepted call of {tool} left witness {moved.witness} at {_shown(moved.before)}: "
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


def _advertised_schema(tool: str, ctx: Context) -> dict[str, Any] | None:
    """The inputSchema of ``tool`` from any tools/list result in the log (the latest wins)."""
    found: dict[str, Any] | None = None
    for message in ctx.log.messages():
        if message.kind is not Kind.RESULT or not isinstance(message.result, dict):
            continue
        request = ctx.log.request_of(message)
        if request is None or request.method != "tools/list":
            continue
        tools = message.result.get("tools")
        for item in tools if isinstance(tools, list) else ():
            if isinstance(item, dict) and item.get("name") == tool and isinstance(item.get("inputSchema"), dict):
                found = item["inputSchema"]
    return found


def _forbidden(extra: list[str], schema: Mapping[str, Any] | None) -> tuple[bool, str]:
    """Whether the schema forbids every extra argument, and if not, why not."""
    if schema is None:
        return False, "no tools/list result describes the tool, so its inputSchema is unknown"
    raw = schema.get("properties")
    properties: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    allowed = [name for name in extra if name in properties]
    if allowed:
        return False, f"its inputSchema defines {', '.join(allowed)}, so the arguments are not forbidden"
    if schema.get("additionalProperties") is not False or schema.get("patternProperties"):
        return False, "its inputSchema does not set additionalProperties: false, so extra arguments are allowed"
    return True, ""


def _extra(request: Message, case: Case) -> list[str]:
    for message, probe in case.messages:
        if message is request and isinstance(probe.get("extra"), list):
            return [str(item) for item in probe["extra"]]
    return []


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


# -- BEH-04 --------------------------------------------------------------------------------------
@log_check(
    requirements="BEH-04",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="tool lists captured per principal",
)
def principals_are_offered_the_expected_tools(ctx: Context) -> Iterator[Finding]:
    """Each principal's tools/list offers exactly the tools the user's expected table names for it.

    Triggered by the behaviour cases' ``principal-list`` requests (one walk per principal of
    ``expect.tools_by_principal``, in every era). A tool offered beyond the table — a write tool
    shown to a reader — and a tool the table expects but the list leaves out are both findings."""
    return summarised(_principals_are_offered_the_expected_tools(ctx))


def _principals_are_offered_the_expected_tools(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    expected = index.expected or {}
    for case in index.by_id.values():
        requests = case.sent("principal-list")
        if not requests:
            continue
        principal = str(case.tags.get("principal", "?"))
        wanted = expected.get(principal)
        if wanted is None:
            continue
        offered: list[str] = []
        refused: str | None = None
        for request in requests:
            answer = answer_of(request, ctx)
            if answer.kind != "success" or answer.message is None:
                refused = answer.text
                break
            tools = answer.message.result.get("tools") if isinstance(answer.message.result, dict) else None
            offered += [t["name"] for t in tools or () if isinstance(t, dict) and isinstance(t.get("name"), str)]
        subject = first_answer(requests[0], ctx) or requests[0]
        if refused is not None and not offered:
            if wanted:
                yield failed(subject, f"{case.lane}: tools/list as {principal} answered {refused}; expected {wanted}")
            else:
                yield passed(subject)
            continue
        extra = sorted(set(offered) - set(wanted))
        missing = sorted(set(wanted) - set(offered))
        if extra:
            yield failed(
                subject,
                f"{case.lane}: {principal} is offered {', '.join(extra)}, which the expected table does not list "
                f"for {principal}",
            )
        if missing:
            yield failed(subject, f"{case.lane}: {principal} is not offered {', '.join(missing)}, which it expects")
        if not extra and not missing:
            yield passed(subject, f"{case.lane}: {principal} is offered {', '.join(sorted(offered)) or 'no tools'}")


# -- BEH-05 / BEH-03 -----------------------------------------------------------------------------
def _refusal_cases(ctx: Context) -> Iterator[tuple[Case, Message]]:
    for case in cases(ctx).with_phase("refusal"):
        for request in case.sent("refusal"):
            if request.kind is Kind.REQUEST:
                yield case, request


def _what(case: Case, request: Message) -> str:
    tool = case.tags.get("tool", "?")
    if case.tags.get("refusal") == "extra_arguments":
        return f"tools/call {tool} with the forbidden argument(s) {', '.join(_extra(request, case)) or '?'}"
    return f"tools/call {tool} as {case.tags.get('principal', '?')}, who must not be able to use it"


@log_check(
    requirements="BEH-05",
    level=Level.MUST,
    side=Side.SERVER,
    subject="refused calls with witness reads",
)
def refused_calls_change_nothing(ctx: Context) -> Iterator[Finding]:
    """A call that must be refused (forbidden arguments, a principal without the scope) changes nothing in storage.

    Triggered by the behaviour cases' ``refusal`` calls: the witness is read before the call and
    ``settle_ms`` after it. A refusal is proved with storage, never with the answer: a polite
    error after doing the work fails. Not verified unless the write tool's calibration moved the
    same witness in the same era and transport."""
    return summarised(_refused_calls_change_nothing(ctx))


def _refused_calls_change_nothing(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    for case, request in _refusal_cases(ctx):
        problem = baseline_problem(case, index)
        if problem is not None:
            yield unverified(f"{case.lane}: {problem}", request)
            continue
        if case.tags.get("refusal") == "extra_arguments":
            forbidden, why = _forbidden(_extra(request, case), _advertised_schema(str(case.tags.get("tool")), ctx))
            if not forbidden:
                yield unverified(f"{case.lane}: {case.tags.get('tool')}: {why}", request)
                continue
        moved = movement(case, index)
        answer = answer_of(request, ctx)
        if moved.problem is not None:
            yield unverified(f"{case.lane}: {moved.problem}", request)
        elif moved.moved:
            yield failed(
                request,
                f"{case.lane}: {_what(case, request)} was answered with {answer.text}, yet {moved.describe()}: "
                "the call wrote although it must be refused",
            )
        else:
            yield passed(request, f"{case.lane}: {_what(case, request)}: {answer.text}; {moved.describe()}")


@log_check(
    requirements="BEH-03",
    level=Level.MUST,
    side=Side.SERVER,
    subject="write calls with forbidden arguments",
)
def forbidden_arguments_are_not_accepted(ctx: Context) -> Iterator[Finding]:
    """A write tool called with an argument its strict inputSchema forbids does not succeed.

    Triggered by the behaviour cases' ``extra_arguments`` refusal: the tool's advertised schema
    sets ``additionalProperties: false``, and the call adds an argument it does not define. A
    successful result means the input was not validated (the witness reads say whether it also
    wrote); a result with ``isError: true`` or a JSON-RPC error passes (which channel is the
    better one is judged elsewhere)."""
    return summarised(_forbidden_arguments_are_not_accepted(ctx))


def _forbidden_arguments_are_not_accepted(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    for case, request in _refusal_cases(ctx):
        if case.tags.get("refusal") != "extra_arguments":
            continue
        extra = _extra(request, case)
        forbidden, why = _forbidden(extra, _advertised_schema(str(case.tags.get("tool")), ctx))
        if not forbidden:
            yield unverified(f"{case.lane}: {case.tags.get('tool')}: {why}", request)
            continue
        answer = answer_of(request, ctx)
        if answer.kind == "none":
            yield unverified(f"{case.lane}: the call got no answer", request)
        elif answer.succeeded:
            moved = movement(case, index)
            storage = f"; {moved.describe()}" if moved.problem is None else ""
            yield failed(
                answer.message or request,
                f"{case.lane}: {_what(case, request)} was accepted ({answer.text}){storage}",
            )
        else:
            yield passed(answer.message or request, f"{case.lane}: {_what(case, request)}: {answer.text}")


# -- BEH-06 --------------------------------------------------------------------------------------
@dataclass
class Race:
    """The timeline of one cancel race, read from the traffic and the witness reads."""

    case: Case
    request: Message
    timeout_ms: int | None
    gave_up: float | None = None
    how: str = ""
    answered: Message | None = None

    def at(self, moment: float) -> str:
        return f"+{round((moment - self.request.time) * 1000)} ms"


def _race(case: Case, request: Message, ctx: Context) -> Race:
    probe = next((tags for message, tags in case.messages if message is request), {})
    timeout = probe.get("timeout_ms")
    race = Race(case, request, timeout if isinstance(timeout, int) else None)
    exchange = ctx.log.get(request.exchange)
    if isinstance(exchange, HttpExchange) and exchange.client_disconnected and exchange.ending is not None:
        race.gave_up, race.how = exchange.ending.time, "closed the response stream"
    for notice in case.sent("cancel-race", "cancel"):
        if notice.method == "notifications/cancelled" and notice.time >= request.time:
            race.gave_up, race.how = notice.time, "sent notifications/cancelled"
            break
    race.answered = first_answer(request, ctx)
    return race


def _calibrated_ms(case: Case, ctx: Context) -> float | None:
    calibration = cases(ctx).calibration(case)
    if calibration is None:
        return None
    for request in calibration.sent("cancel-race", "calibrate") + calibration.sent("write-baseline", "calibrate"):
        answer = first_answer(request, ctx)
        if answer is not None:
            return (answer.time - request.time) * 1000
    return None


@log_check(
    requirements="BEH-06",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="cancel races",
)
def timed_out_calls_leave_no_late_write(ctx: Context) -> Iterator[Finding]:
    """A write the client gave up on (timeout, then the era's cancellation) leaves no record behind.

    Triggered by the behaviour cases' ``cancel-race``: the write tool is called with a client
    timeout shorter than its calibrated duration, the client gives up (2026 HTTP: it closes the
    response stream; 2025 HTTP and stdio: ``notifications/cancelled``), waits ``settle_ms`` and
    reads the witness. A record that appears after the caller gave up is reported with the timing
    (sent, gave up, witnessed): a retrying agent will create a duplicate. Not verified when the
    call answered before the timeout, or the timeout was not well below the work."""
    return summarised(_timed_out_calls_leave_no_late_write(ctx))


def _timed_out_calls_leave_no_late_write(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    for case in index.with_phase("race"):
        for request in case.sent("cancel-race", "race"):
            if request.kind is Kind.REQUEST:
                yield _judge_race(case, request, index, ctx)


def _judge_race(case: Case, request: Message, index: Cases, ctx: Context) -> Finding:
    attempt = case.tags.get("attempt")
    head = f"{case.lane}, {case.tags.get('tool', '?')}" + (f" #{attempt}" if isinstance(attempt, int) else "")

    def pending(reason: str) -> Finding:
        return unverified(f"{head}: {reason}", request)

    problem = baseline_problem(case, index)
    if problem is not None:
        return pending(problem)
    race = _race(case, request, ctx)
    calibrated = _calibrated_ms(case, ctx)
    if calibrated is not None and calibrated < MIN_RACE_MS:
        return pending(
            f"the calibrated call took {round(calibrated)} ms, too little work to give up on; configure "
            "cancellation.delay_argument so the call takes a few hundred milliseconds"
        )
    if race.timeout_ms is not None and calibrated is not None and race.timeout_ms > calibrated / 3 + 1:
        return pending(
            f"the {race.timeout_ms} ms timeout is not below a third of the calibrated {round(calibrated)} ms, so a "
            "cancel could arrive after the work is done; lower cancellation.timeout_ms or raise delay_argument"
        )
    if race.answered is not None and (race.gave_up is None or race.answered.time <= race.gave_up):
        elapsed = round((race.answered.time - request.time) * 1000)
        return pending(
            f"the call answered after {elapsed} ms, before the client gave up"
            + (f" at {race.timeout_ms} ms" if race.timeout_ms is not None else "")
            + "; configure cancellation.delay_argument so the work outlasts the timeout"
        )
    if race.gave_up is None:
        return pending("the client never gave up on the call")
    moved = movement(case, index)
    if moved.problem is not None:
        return pending(moved.problem)
    after = case.read("after")
    witnessed = race.at(after.time) if after is not None else "?"
    line = (
        f"{head}: sent +0 ms, gave up {race.at(race.gave_up)} ({race.how}), "
        f"witness {moved.witness} read {witnessed}: {_shown(moved.before)} → {_shown(moved.after)}"
    )
    if moved.moved:
        return failed(request, f"{line} — the write landed after the caller gave up; a retry would create a duplicate")
    return passed(request, line)


# -- BEH-07 --------------------------------------------------------------------------------------
def _contains(message: Message | None, canary: Any) -> bool:
    if message is None or not isinstance(canary, str) or not canary:
        return False
    return canary in message.raw.decode("utf-8", "replace") if message.raw else False


@log_check(
    requirements="BEH-07",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="handles presented by another principal",
)
def handles_do_not_authenticate(ctx: Context) -> Iterator[Finding]:
    """A handle minted for one principal gets another principal nothing: no result, no contents.

    Triggered by the behaviour cases' ``handle-use``: one principal creates a record (with a
    canary in a string argument) and another presents its handle. A successful answer fails, and
    so does any answer that carries the canary; a tool error or a protocol error passes."""
    return summarised(_handles_do_not_authenticate(ctx))


def _handles_do_not_authenticate(ctx: Context) -> Iterator[Finding]:
    for case in cases(ctx).by_id.values():
        for request in case.sent("handle-use"):
            if request.kind is not Kind.REQUEST:
                continue
            probe = next((tags for message, tags in case.messages if message is request), {})
            owner, principal = probe.get("owner", "?"), probe.get("principal", "?")
            answer = answer_of(request, ctx)
            leaked = _contains(answer.message, probe.get("canary"))
            what = f"{case.lane}: {principal} presented {owner}'s handle to {probe.get('tool', '?')}"
            if answer.kind == "none":
                yield unverified(f"{what} and got no answer", request)
            elif answer.succeeded or leaked:
                detail = " and the answer carries the canary from the record" if leaked else ""
                yield failed(answer.message or request, f"{what} and got {answer.text}{detail}")
            else:
                yield passed(answer.message or request, f"{what}: {answer.text}")


# -- BEH-08 --------------------------------------------------------------------------------------
@log_check(
    requirements="BEH-08",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="reads with witness reads",
)
def reads_change_nothing(ctx: Context) -> Iterator[Finding]:
    """A tool used as a read changes nothing a witness read can see (read_tools in the config).

    Triggered by the behaviour cases' ``read-tool`` calls, between two witness reads."""
    return summarised(_reads_change_nothing(ctx))


def _reads_change_nothing(ctx: Context) -> Iterator[Finding]:
    index = cases(ctx)
    for case in index.with_phase("read"):
        for request in case.sent("read-tool"):
            moved = movement(case, index)
            tool = case.tags.get("tool", "?")
            if moved.problem is not None:
                yield unverified(f"{case.lane}: {moved.problem}", request)
            elif moved.moved:
                yield failed(request, f"{case.lane}: tools/call {tool}, used as a read, and {moved.describe()}")
            else:
                yield passed(request, f"{case.lane}: {tool}: {moved.describe()}")
