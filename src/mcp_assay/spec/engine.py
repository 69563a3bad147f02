"""Judging traffic with the registered checks: what applies, what was found, one verdict per check.

The engine alone decides what applies. A caller says what it wants judged with a :class:`Scope`
(``mcp-assay run``: one server, at the revisions it tests, its client being mcp-assay itself;
the proxy, the tap and ``validate``: everything the traffic carries), hands exchanges to a
:class:`Judge` as they finish and asks for the verdicts at the end:

* message checks run on each message once, when its exchange is added, and only the checks whose
  declaration asks for it (sender, kinds, methods, gates): one dispatch index, built as messages of a
  new gate key, sender, kind and method are met; a failure among them is what the proxy prints live,
  and what the report counts;
* log checks run over the exchange log when the verdicts are asked for (at the end of each window),
  each only where the window holds something it follows (one pass over the window finds what);
* every finding is folded into a tally of bounded size per check (how many passed and failed,
  the first failures with their evidence, the last pass, the first open question), in the order
  the messages crossed the wire, so a verdict never needs the findings again. Passes are counted:
  what folding needs of a subject is worked out once for every check that judges it, and passes a
  rule hands over at once (:class:`~mcp_assay.spec.checks.Passes`) get a finding only if kept.

The gates (revision features, transport, server capability) run before a check and alone make a
verdict *not applicable*; an exception inside a check makes it *not verified*, never a crash. A
failure of a requirement the catalogue grades lower under some condition (a :class:`Grading` its
entry names) is graded here, once for every rule; a verdict counts at that lower grade only when
every failure it holds was graded so.
"""

from __future__ import annotations

import heapq
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_assay.cases import Explored
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec import rules
from mcp_assay.spec.checks import (
    GRADINGS,
    REGISTRY,
    Check,
    Finding,
    Grade,
    Passes,
    Result,
    accepts_method,
    follows_any,
    forget_passes,
    not_applicable,
    routed_method,
    unverified,
    window_follows,
)
from mcp_assay.spec.context import Context, GateKey
from mcp_assay.spec.evidence import make_evidence
from mcp_assay.spec.partial import MAX_EVIDENCE, Kept, Partial, Place, TallyState, verdict_of
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.spec.window import carried
from mcp_assay.vocabulary.verdicts import Evidence, Outcome, Party, Severity, Side, Source, Verdict
from mcp_assay.wire.jsonrpc import Kind, Message, parser_limit
from mcp_assay.wire.model import EVENTS_LOST, Exchange, HttpExchange, Probe, StdioLine
from mcp_assay.wire.traffic import ExchangeLog

__all__ = [
    "ALL_SIDES",
    "REQUIREMENT_PATTERN",
    "Blame",
    "FindingListener",
    "Judge",
    "OnlyChecks",
    "Pending",
    "Scope",
    "evaluate",
    "registered_checks",
    "select_checks",
    "split_only",
]

log = logging.getLogger(__name__)

TAIL = 64
"""Exchanges at the end of a window carried into the next, so relations across the cut are seen whole."""
ALL_SIDES = frozenset(Side)
_RANK = {Severity.INFO: 0, Severity.SHOULD: 1, Severity.MUST: 2}

FindingListener = Callable[[Check, Message, Finding], None]
"""Called with every failure a message check finds, as it is found (the proxy prints them live)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A party at fault that only later traffic settles (:data:`Blame` may return one): ``now`` until
    :meth:`Judge.verdicts` asks ``settle`` (a gateway's back hop cannot tell a fault the gateway relayed from the
    client's request until that request is judged on the front hop, which finishes later)."""

    now: Party | None
    settle: Callable[[], Party | None]
    void: Callable[[], bool] | None = None
    """True once later traffic shows the failure is no one's conduct (a gateway relaying a request mcp-assay made
    malformed on purpose): it is then not counted."""


Blame = Callable[[Check, Finding | None], "Party | Pending | None"]
"""Who is at fault for a failure (called with the failure), and whose conduct a check judges at all (called with
``None``): given to a judge of one hop of a gateway, where a finding's side alone does not say who did it."""
MAX_PENDING = 1_000
"""Failures of one check whose party waits to be settled; past it the oldest is settled with what is known."""


def registered_checks() -> list[Check]:
    """Every check the rule areas declare (importing :mod:`mcp_assay.spec.rules` registered them)."""
    assert rules.AREAS  # the import above is what registers them
    return list(REGISTRY.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """What a caller asks to be judged. The engine applies it; callers never filter verdicts themselves."""

    revisions: tuple[Revision, ...] = ()
    """The revisions under test; empty: whatever revisions the traffic carries."""
    sides: frozenset[Side] = ALL_SIDES
    """The sides under judgement; a check of another side is not applicable, for ``sides_reason``."""
    sides_reason: str = ""
    established: bool = True
    """False when a run meant to test ``revisions`` could not establish any of them with the target."""
    transport: str = ""
    """The target's transport, for a run that established nothing."""


# -- tallies ---------------------------------------------------------------------------------------
Order = tuple[float, int, int]
"""Where a finding sits in the traffic: its subject's time, the subject's capture position, the finding's rank."""
Origin = tuple[Source | None, str | None]
"""Where a finding's subject came from and its revision: one object per value (:meth:`Judge._facts_of`)."""


@dataclass(order=True, slots=True)
class _Ranked:
    order: Order
    finding: Finding = field(compare=False)
    evidence: Evidence | None = field(compare=False, default=None)
    related: tuple[Evidence, ...] | None = field(compare=False, default=None)
    """The evidence of what the finding names beside its subject (made with :attr:`evidence`)."""


@dataclass(slots=True)
class _Tally:
    """Everything a verdict needs from the findings of one check, in bounded space."""

    exchanges_in_scope: int = 0
    """For a log check: exchanges that passed its gates (it runs when there are any, or messages)."""
    failures: list[_Ranked] = field(default_factory=list)
    """A max-heap (by negated order) of the earliest failures, with their evidence."""
    failed: int = 0
    graded: int = 0
    """Failures the catalogue's gate grades lower (the verdict counts at :attr:`grade` when all of them are)."""
    grade: Grade | None = None
    """The highest of those grades, with the first reason given for it."""
    failed_sources: set[Source | None] = field(default_factory=set)
    first_failure: _Ranked | None = None
    passes: int = 0
    last_pass: _Ranked | None = None
    pending: _Ranked | None = None
    unread: _Ranked | None = None
    """The first failure an unread message made *not verified*: other instances passing never hide it."""
    inapplicable: _Ranked | None = None
    sources: set[Source | None] = field(default_factory=set)
    """Where the findings came from: a probe, an injected answer, or (``None``) the peers' own traffic."""
    revisions: set[str] = field(default_factory=set)
    broken: str | None = None
    by_party: dict[Party | None, _Tally] = field(default_factory=dict)
    """With a :data:`Blame`: the failures, by the party at fault (each a tally of failures only)."""
    unsettled: list[tuple[_Ranked, Source | None, Pending]] = field(default_factory=list)
    """Failures whose party is :class:`Pending`, with their source, in the order they were found."""
    broken_at: int = 0
    """The position (a log check: the window) at which the check raised."""
    grade_order: Order | None = None
    """Where the finding that set :attr:`grade` was folded."""
    origin: Origin | None = None
    """The source and revision of the pass counted last (in :attr:`sources` and :attr:`revisions` already): a pass
    of the same kind, as nearly every pass is, adds nothing to them."""


_Run = tuple[Check, _Tally, Callable[..., Result], bool]
"""A message check as the loop over a message's checks sees it: the check, its tally, its function, and whether it
judges the client (then a message mcp-assay broke on purpose is kept from it)."""
PASSED = Outcome.PASSED
_UNASKED = object()
"""Where a message's plain pass came from, before it was asked (:meth:`Judge._fold_found`)."""


@dataclass(slots=True)
class _Gated:
    """Messages that shared one gate key: how many, where the first one was, and which checks run on them."""

    count: int = 0
    first: Order = (math.inf, 0, 0)
    runs: dict[tuple[Side, Kind, str | None], tuple[_Run, ...]] = field(default_factory=dict)
    """The message checks a message of this gate key, sender, kind and (routed) method visits (:meth:`Judge._runs`)."""


@dataclass(slots=True)
class _Facts:
    """A finding's subject as folding sees it (the same for every check that judges it; never changed once made,
    but not frozen: one is made per message, and a frozen class's constructor costs twice as much)."""

    subject: Message | Exchange | None
    """Held, so that the id the facts are cached under stays this subject's."""
    exchange: Exchange | None
    probed: bool
    """The exchange carries mcp-assay's own tag (only then may the subject say nothing of a check's side)."""
    carried: bool
    """Judged in the window before, or waiting for the next: context here."""
    source: Source | None
    explored: Explored | None
    revision: str | None
    origin: Origin
    """:attr:`source` and :attr:`revision`, the one object for this value (compared by identity)."""
    plain: bool
    """Neither probed nor carried nor explored: a pass about it counts for every check, at its own order."""


class Judge:
    """Judges exchanges as they are added; :meth:`verdicts` gives one verdict per check."""

    def __init__(
        self,
        spec: SpecSet,
        *,
        checks: Iterable[Check] | None = None,
        scope: Scope | None = None,
        settings: Mapping[str, Any] | None = None,
        redactor: Redactor | None = None,
        source: Source = Source.PASSIVE,
        on_failure: FindingListener | None = None,
        log: ExchangeLog | None = None,
        window: int | None = None,
        tail: int = TAIL,
        on_window: Callable[[ExchangeLog, frozenset[str]], None] | None = None,
        blame: Blame | None = None,
        before_window: Callable[[], None] | None = None,
        share: tuple[int, int] = (0, 1),
    ) -> None:
        self.spec = spec
        self.checks = list(checks) if checks is not None else registered_checks()
        self.scope = scope or Scope()
        self.redactor = redactor or Redactor()
        self.source = source
        self.on_failure = on_failure
        self.log = log if log is not None else ExchangeLog()
        self.settings = settings
        self.ctx = Context(self.log, spec, settings, clients_judged=Side.CLIENT in self.scope.sides)
        self.window = window
        """Judge in windows of about this many exchanges (``None``: the whole log at once)."""
        self.tail = tail
        self.on_window = on_window
        """Called with each window's log (and the ids it carried from the one before) before it is dropped."""
        self.blame = blame
        """Who is at fault for each failure (a judge of one hop of a gateway); ``None``: the side says it."""
        self.before_window = before_window
        """Called before a window's log checks run (a gateway's front hop first closes its back hop's window)."""
        self.share = share
        """``(i, n)``: judge only the windows ``w`` with ``w % n == i`` (every window is read, for what the next one
        carries, and every message counted at its gates); ``n`` judges of shares ``0 .. n-1`` of the same traffic
        together find what one judge finds (:func:`mcp_assay.spec.partial.merge`)."""
        if not 0 <= share[0] < share[1] or (share[1] > 1 and window is None):
            raise ValueError(f"share {share[0]} of {share[1]}: a judge shares windows of a log judged in windows")
        if share[1] > 1 and blame is not None:
            raise ValueError("a judge of a gateway's hop is not shared: who is at fault depends on the other hop")
        self._tallies = {check.name: _Tally() for check in self.checks}
        self._message_checks = [check for check in self.checks if check.scope == "message"]
        self._gates: dict[GateKey, _Gated] = {}
        self._admissions: dict[tuple[str, GateKey], tuple[bool, str]] = {}
        """Every check's admission of every gate key met (kept across windows)."""
        self._position = 0
        self._exchanges_by_gate: Counter[tuple[str, str | None]] = Counter()
        self._excluded: list[Verdict] = []
        self._windows = 0
        self._context: set[str] = set()
        self._deferred: frozenset[str] = frozenset()
        """Exchanges a window carried over from the one before: judged already, context only."""
        self._unread_ids: dict[str, str | None] = {}
        """Per exchange of the window with a failure: what mcp-assay's parser could not read there."""
        self.stopped = ""
        """Why judging stopped before every check ran (empty when it did not)."""
        self.exchanges_seen = 0
        self.observations_seen = 0
        """Exchanges that carried traffic (observations left out), over every window."""
        self.messages_seen = 0
        self._facts: dict[int, _Facts] = {}
        self._origins: dict[Origin, Origin] = {}
        self.check_calls = 0
        """Message checks called, over every window (counted work: what the dispatch index leaves to run)."""
        self.log_check_calls = 0
        """Log checks run, over every window (one that follows nothing a window holds does not run there)."""
        self._finished = False

    # -- feeding ---------------------------------------------------------------------------------
    def add(self, exchange: Exchange) -> None:
        """Add one finished exchange to the log and run the message checks on what it carried.

        With a :attr:`window`, a log that has grown to it is judged and replaced by the next
        window once no request waits for its answer (at twice the window, whatever waits)."""
        self._finished = False
        self.log.add(exchange)
        self._note(exchange)
        judged = self._owned()
        for message in exchange.messages:
            if judged:
                self._judge_message(message)
            else:
                self._count_message(message)
        if self.window is not None and len(self.log) - len(self._context) >= self.window:
            self._close_window()

    def close_window(self) -> None:
        """Judge the window so far and start the next one now (a gateway's hops close theirs together)."""
        if len(self.log) - len(self._context):
            self._close_window()

    def _close_window(self) -> None:
        """Fold this window's log checks into the tallies, keep the evidence, start the next window.

        Requests still waiting for an answer are judged by the log checks of the next window, where
        the answer may arrive; everything else carried over is context there, judged already."""
        if self.before_window is not None:
            self.before_window()
        handed = carried(self.log, tail=self.tail)
        self._deferred = handed.pending
        if self._owned():
            self._run_log_checks()
        self._deferred = frozenset()
        for tally in self._tallies.values():
            failures = [ranked for part in (tally, *tally.by_party.values()) for ranked in part.failures]
            failures += [ranked for ranked, _, _ in tally.unsettled]
            for ranked in (*failures, tally.last_pass, tally.pending, tally.unread):
                if ranked is not None and ranked.finding.subject is not None:
                    self._evidence(ranked)
                    self._related(ranked)
        if self.on_window is not None:
            self.on_window(self.log, frozenset(self._context | handed.pending))
        self.ctx.release()
        self.log = ExchangeLog()
        self._unread_ids.clear()
        for exchange in handed.exchanges:
            self.log.add(exchange)
        self.ctx = Context(self.log, self.spec, self.settings, clients_judged=self.ctx.clients_judged)
        self._context = {exchange.id for exchange in handed.exchanges} - handed.pending
        self._windows += 1

    def _owned(self) -> bool:
        """Whether this judge judges the current window (:attr:`share`)."""
        index, shares = self.share
        return shares == 1 or self._windows % shares == index

    @property
    def carried_ids(self) -> frozenset[str]:
        """Exchanges of the current window carried over from the one before."""
        return frozenset(self._context)

    @property
    def windows(self) -> int:
        """How many windows were judged and dropped so far."""
        return self._windows

    @classmethod
    def of(cls, log: ExchangeLog, spec: SpecSet, **options: Any) -> Judge:
        """A judge of a log that is already complete (messages judged in the order they crossed the wire)."""
        judge = cls(spec, log=log, **options)
        for exchange in log:
            judge._note(exchange)
        for message in log.messages():
            judge._judge_message(message)
        return judge

    def _note(self, exchange: Exchange) -> None:
        if isinstance(exchange, HttpExchange):
            for name, value in exchange.request.headers:
                self.redactor.learn_header(name, value)
            self.redactor.learn_url(exchange.request.url)
        if not exchange.transport:
            self.observations_seen += 1
        else:
            self.exchanges_seen += 1
            self.messages_seen += len(exchange.messages)
            self._exchanges_by_gate[(exchange.transport, self.log.exchange_revision(exchange.id))] += 1

    def _count_message(self, message: Message) -> tuple[int, GateKey, _Gated]:
        """Give a message its position and count it at its gate key (every message, judged here or not)."""
        position = self._position
        self._position += 1
        ctx = self.ctx
        key = ctx.gate_key(message)
        gated = self._gates.get(key)
        if gated is None:
            gated = self._gates[key] = _Gated(first=(message.time, position, 0))
            for check in self.checks:  # once per gate key: a handful in any capture
                self._admissions[(check.name, key)] = ctx.admission(check, message)
        gated.count += 1
        return position, key, gated

    def _judge_message(self, message: Message) -> None:
        self._facts.clear()
        position, key, gated = self._count_message(message)
        ctx = self.ctx
        route = (message.sender, message.kind, routed_method(message, self.log.request_of))
        runs = gated.runs.get(route)
        if runs is None:  # the dispatch index: built once per gate key, sender, kind and method met
            runs = gated.runs[route] = self._runs(key, route)
        self.check_calls += len(runs)
        # only a message mcp-assay had a hand in (its gate key says so) can be one it broke on purpose
        invalid: bool | None = None if key[3] else False
        at: Order = (message.time, position, 0)
        plain: Origin | None = None  # where a pass about the message came from, when it counts alike for every check
        asked = False
        kept: _Ranked | None = None  # the pass kept as the latest by the checks that passed it (one, shared)
        try:
            for check, tally, judge, of_client in runs:  # a check that raised is in no run any more (_broken)
                if of_client and invalid is not False:
                    if invalid is None:
                        invalid = ctx.deliberately_invalid(message)
                    if invalid:
                        continue
                ctx.check = check  # the running check, for the context's gates (set back to None below)
                try:
                    result = judge(message, ctx)
                    if result is None:
                        continue
                    if type(result) is not Finding:  # most calls return one finding, or none: no list is made
                        result = _normalise(result)
                except Exception as exc:  # a defect in a check must never stop the judging
                    ctx.check = None
                    self._broken(check, tally, exc, position)
                    continue
                if type(result) is Finding:
                    if result.outcome is PASSED:  # the commonest finding by far
                        if result.subject is message:
                            if not asked:
                                plain, asked = self._plain_origin(message), True
                            if plain is not None:  # counted as _fold_pass counts it, without asking per check
                                tally.passes += 1
                                if plain is not tally.origin:
                                    _count_origin(tally, plain)
                                last = tally.last_pass
                                if last is None or at > last.order:
                                    if kept is None or kept.finding is not result:
                                        kept = _Ranked(at, result)
                                    tally.last_pass = kept
                                continue
                        ctx.check = None
                        self._fold_pass(check, tally, result, at)
                        continue
                    found: Iterable[Finding | Passes] = (result,)
                else:
                    found = result  # type: ignore[assignment]  # _normalise made it a list (mypy sees the union)
                ctx.check = None
                self._fold_found(check, tally, message, found, position, plain if asked else _UNASKED)
        finally:
            ctx.check = None

    def _fold_found(
        self,
        check: Check,
        tally: _Tally,
        message: Message,
        found: Iterable[Finding | Passes],
        position: int,
        plain: Origin | None | object,
    ) -> None:
        """Fold what one message check found on ``message`` other than its one plain pass (``plain``: where a plain
        pass of the message came from, when it was asked already)."""
        rank = 0
        latest: tuple[int, Finding] | None = None  # the rank and finding of the latest plain pass among them
        for finding in found:
            if isinstance(finding, Passes):
                rank = self._fold_passes(check, tally, finding, message.time, position, rank)
                continue
            if finding.outcome is PASSED and finding.subject is message:  # one pass of several
                if plain is _UNASKED:
                    plain = self._plain_origin(message)
                if plain is not None:  # counted as _fold counts it; kept once the check's findings end
                    tally.passes += 1
                    if plain is not tally.origin:
                        _count_origin(tally, plain)  # type: ignore[arg-type]  # an Origin: neither None nor unasked
                    latest = (rank, finding)
                    rank += 1
                    continue
            folded = self._fold(check, tally, finding, (message.time, position, rank))
            rank += 1
            if folded is not None and folded.outcome is Outcome.FAILED and self.on_failure is not None:
                self.on_failure(check, message, folded)
        if latest is not None:
            order = (message.time, position, latest[0])
            if tally.last_pass is None or order > tally.last_pass.order:
                tally.last_pass = _Ranked(order, latest[1])

    def _plain_origin(self, message: Message) -> Origin | None:
        """Where a pass about ``message`` came from (its source and revision), when the pass counts alike for every
        check (its facts would be :attr:`_Facts.plain`); ``None`` when it does not (its facts decide then)."""
        exchange = self.log.get(message.exchange)
        source = None
        if exchange is not None:
            if exchange.probe is not None or exchange.id in self._context or exchange.id in self._deferred:
                return None  # probed, or carried
            probe = self._probe(exchange, message)  # over stdio, an answer's request line may carry a tag
            if probe is not None:
                if probe.explored is not None:
                    return None
                source = _source_of(probe)
        revision = self.log.revision(message)
        return self._origins.setdefault((source, revision), (source, revision))

    def _runs(self, key: GateKey, route: tuple[Side, Kind, str | None]) -> tuple[_Run, ...]:
        """The message checks a message of this gate key and route visits, each with what the loop over them needs
        (its tally, its function, whether it judges the client), so the loop looks nothing up per check."""
        sender, kind, method = route
        return tuple(
            (check, self._tallies[check.name], check.func, check.side is not Side.SERVER)
            for check in self._message_checks
            if self._tallies[check.name].broken is None
            and self._admissions[(check.name, key)][0]
            and (check.sent_by is None or sender is check.sent_by)
            and (check.kinds is None or kind in check.kinds)
            and accepts_method(check.methods, method)
        )

    def _in_scope(self, check: Check) -> tuple[int, str | None]:
        """How many messages passed ``check``'s gates, and the most common reason others did not."""
        count = 0
        reasons: dict[str, tuple[int, Order]] = {}
        for key, gated in self._gates.items():
            ok, why = self._admissions[(check.name, key)]
            if ok:
                count += gated.count
            else:
                seen, first = reasons.get(why, (0, gated.first))
                reasons[why] = (seen + gated.count, min(first, gated.first))
        main = min(reasons.items(), key=lambda item: (-item[1][0], item[1][1]))[0] if reasons else None
        return count, main

    def _broken(self, check: Check, tally: _Tally, exc: Exception, at: int) -> None:
        log.exception("check %s raised", check.name)
        tally.broken = f"the check itself failed ({self.redactor.text(f'{type(exc).__name__}: {exc}')})"
        tally.broken_at = at
        for gated in self._gates.values():
            gated.runs.clear()  # made again without the check, which runs no more

    # -- folding ---------------------------------------------------------------------------------
    def _fold_passes(self, check: Check, tally: _Tally, passes: Passes, first: float, second: int, rank: int) -> int:
        """Count passes handed over at once (a finding is made only for the one kept); the next free rank."""
        latest: tuple[Order, _Facts] | None = None
        known = self._facts
        for subject in passes.subjects:
            order = (first, second, rank)
            rank += 1
            facts = known.get(id(subject))
            if facts is not None and facts.plain:  # counted as below, without asking
                _count_pass(tally, facts)
                if latest is None or order > latest[0]:
                    latest = (order, facts)
                continue
            facts = self._judged_facts(check, tally, subject, order)
            if facts is not None:
                order = self._counted(tally, facts, order)
                if latest is None or order > latest[0]:
                    latest = (order, facts)
        if latest is not None and (tally.last_pass is None or latest[0] > tally.last_pass.order):
            tally.last_pass = _Ranked(latest[0], Finding(Outcome.PASSED, passes.detail, latest[1].subject))
        return rank

    def _fold_pass(self, check: Check, tally: _Tally, finding: Finding, order: Order) -> None:
        """:meth:`_fold` of a message check's pass: counted, and kept while the latest (the facts of its subject
        decide first whether it is this window's and the check's to count, as there)."""
        facts = self._judged_facts(check, tally, finding.subject, order)
        if facts is not None:
            order = self._counted(tally, facts, order)
            if tally.last_pass is None or order > tally.last_pass.order:
                tally.last_pass = _Ranked(order, finding)

    def _judged_facts(
        self, check: Check, tally: _Tally, subject: Message | Exchange | None, order: Order
    ) -> _Facts | None:
        """The facts of a finding's subject, or ``None`` when the finding is not this window's to count."""
        facts = self._facts_of(subject)
        if facts.probed:  # only an exchange mcp-assay had a hand in can be foreign to a check
            foreign = self.ctx.not_theirs(check, subject) or self.ctx.off_version(check, subject)
            if foreign:  # mcp-assay's own part of the traffic says nothing of the side (or revision) this check judges
                if tally.inapplicable is None or order < tally.inapplicable.order:
                    tally.inapplicable = _Ranked(order, not_applicable(foreign))
                return None
        if facts.carried:
            return None  # judged in the window it crossed the wire in, or waiting to be judged in the next
        return facts

    @staticmethod
    def _counted(tally: _Tally, facts: _Facts, order: Order) -> Order:
        """Count one pass (where it came from, its revision); where it ranks among the check's findings."""
        _count_pass(tally, facts)
        return _ranked(facts.explored, order)

    def _fold(self, check: Check, tally: _Tally, finding: Finding, order: Order) -> Finding | None:
        """Count one finding into the check's tally; the finding as counted (``None``: not this window's)."""
        subject = finding.subject
        facts = self._judged_facts(check, tally, subject, order)
        if facts is None:
            return None
        if finding.outcome is Outcome.PASSED:  # most findings: counted, and kept only while the latest
            order = self._counted(tally, facts, order)
            if tally.last_pass is None or order > tally.last_pass.order:
                tally.last_pass = _Ranked(order, finding)
            return finding
        exchange = facts.exchange
        if finding.outcome is Outcome.FAILED and isinstance(exchange, HttpExchange) and exchange.events_lost:
            # what the stream carried is unknown: a reader of another tool's capture must not guess it
            finding = unverified(f"{finding.detail}; but {EVENTS_LOST}, so this cannot be judged", subject)
        unread = False
        if finding.outcome is Outcome.FAILED and exchange is not None:
            limit = self._unread(exchange)
            if limit is not None:  # a limit of mcp-assay's parser, not the peer's invalid JSON
                finding = unverified(
                    f"{finding.detail}; but mcp-assay could not read a message there ({limit})", subject
                )
                unread = True
        if finding.outcome is Outcome.FAILED and finding.clause is not None:
            finding = self._clause_graded(check, finding)
        if finding.outcome is Outcome.FAILED and check.graded:
            finding = self._graded(check, finding)
        graded_at = order
        order = _ranked(facts.explored, order)
        tally.sources.add(facts.source)
        if facts.revision:
            tally.revisions.add(facts.revision)
        if finding.outcome is Outcome.FAILED and self.blame is not None:
            party = self._blamed(check, finding)
            if isinstance(party, Pending):
                finding = replace(finding, party=party.now)
                tally.unsettled.append((_Ranked(order, finding), facts.source, party))
                if len(tally.unsettled) > MAX_PENDING:
                    self._settle(tally, tally.unsettled.pop(0))
                return finding
            finding = replace(finding, party=party)
            tally = tally.by_party.setdefault(finding.party, _Tally())
        ranked = _Ranked(order, finding)
        if finding.outcome is Outcome.FAILED:
            _count_failure(tally, ranked, facts.source, graded_at)
        elif finding.outcome is Outcome.PASSED:
            tally.passes += 1
            if tally.last_pass is None or order > tally.last_pass.order:
                tally.last_pass = ranked
        elif finding.outcome is Outcome.NOT_VERIFIED:
            if tally.pending is None or order < tally.pending.order:
                tally.pending = ranked
            if unread and (tally.unread is None or order < tally.unread.order):
                tally.unread = ranked
        elif tally.inapplicable is None or order < tally.inapplicable.order:
            tally.inapplicable = ranked
        return finding

    def _settle(self, tally: _Tally, unsettled: tuple[_Ranked, Source | None, Pending]) -> None:
        """Count a failure whose party waited (its evidence was made while its window was open)."""
        ranked, source, pending = unsettled
        try:
            if pending.void is not None and pending.void():
                return
            party = pending.settle()
        except Exception:
            log.exception("settling who is at fault raised")
            party = pending.now
        finding = replace(ranked.finding, party=party)
        settled = _Ranked(ranked.order, finding, evidence=ranked.evidence, related=ranked.related)
        _count_failure(tally.by_party.setdefault(party, _Tally()), settled, source)

    def _blamed(self, check: Check, finding: Finding | None) -> Party | Pending | None:
        """Who is at fault for ``finding`` (whose conduct ``check`` judges, for ``None``); a defect in the blame
        leaves it unsaid rather than stopping the judging."""
        if self.blame is None:
            return None
        try:
            return self.blame(check, finding)
        except Exception:
            log.exception("blaming a finding of %s raised", check.name)
            return None

    def _facts_of(self, subject: Message | Exchange | None) -> _Facts:
        """What folding needs to know of a finding's subject, worked out once however many checks judge it (the
        cache lives while one message is judged, or one window's log checks run: the log does not change then)."""
        facts = self._facts.get(id(subject))
        if facts is None:
            exchange = self.log.get(subject.exchange) if isinstance(subject, Message) else subject
            probe = self._probe(exchange, subject)
            explored = probe.explored if probe is not None else None
            probed = exchange is not None and exchange.probe is not None
            carried = exchange is not None and (exchange.id in self._context or exchange.id in self._deferred)
            source = Source.EXPLORED if explored is not None else _source_of(probe)
            revision = self.log.revision(subject) if isinstance(subject, Message) else None
            origin = self._origins.setdefault((source, revision), (source, revision))
            facts = self._facts[id(subject)] = _Facts(
                subject, exchange, probed, carried, source, explored, revision, origin,
                plain=not probed and not carried and explored is None,
            )  # fmt: skip
        return facts

    def _probe(self, exchange: Exchange | None, subject: Message | Exchange | None) -> Probe | None:
        """Why mcp-assay had a hand in the exchange a finding is about: its own tag, or over stdio, where a server's
        answer is a line of its own, the tag of the request line it answers (``None``: the peers' own traffic)."""
        probe = exchange.probe if exchange is not None else None
        if probe is None and isinstance(exchange, StdioLine) and isinstance(subject, Message):
            request = self.log.request_of(subject) if subject.sender is Side.SERVER else None
            line = self.log.get(request.exchange) if request is not None else None
            probe = line.probe if line is not None else None
        return probe

    @staticmethod
    def _clause_graded(check: Check, finding: Finding) -> Finding:
        """``finding`` graded at the severity the catalogue gives the clause it names (a clause the check did not
        declare is a defect of the rule: the failure keeps its full weight)."""
        assert finding.clause is not None
        if finding.clause not in check.clauses:
            log.error("check %s names clause %r it does not declare", check.name, finding.clause)
            return finding
        grade = check.clauses[finding.clause]
        return finding if grade is None else replace(finding, grade=grade)

    def _graded(self, check: Check, finding: Finding) -> Finding:
        """``finding`` with the grade of the first of the check's gradings that holds for it (if any does)."""
        for name in check.graded:
            grading = GRADINGS[name]
            try:
                why = grading.holds(self.ctx, finding)
            except Exception:  # a defect in a grading leaves the failure at its full weight
                log.exception("grading %s raised", name)
                continue
            if why:
                severity = min(check.severity, grading.severity, key=_RANK.__getitem__)
                if finding.grade is not None and _RANK[finding.grade.severity] <= _RANK[severity]:
                    return finding  # graded lower already (an inferred clause)
                return replace(finding, grade=Grade(severity, why))
        return finding

    def _unread(self, exchange: Exchange) -> str | None:
        """Why mcp-assay's parser could not read a message of ``exchange``, if it could not (asked once each)."""
        if exchange.id not in self._unread_ids:
            self._unread_ids[exchange.id] = next(filter(None, map(parser_limit, exchange.messages)), None)
        return self._unread_ids[exchange.id]

    def _evidence(self, ranked: _Ranked) -> Evidence:
        """The evidence of a kept finding, made once (findings that were not kept never cost any)."""
        if ranked.evidence is None:
            ranked.evidence = self._made(ranked.finding.subject, ranked.finding.detail)
        return ranked.evidence

    def _related(self, ranked: _Ranked) -> tuple[Evidence, ...]:
        """The evidence of what a kept finding names beside its subject (the other hop of a gateway), made once."""
        if ranked.related is None:
            ranked.related = tuple(self._made(subject, "") for subject in ranked.finding.related)
        return ranked.related

    def _every_evidence(self, ranked: _Ranked) -> tuple[Evidence, ...]:
        return (self._evidence(ranked), *self._related(ranked))

    def _made(self, subject: Message | Exchange | None, detail: str) -> Evidence:
        evidence = make_evidence(subject, detail, self.ctx, self.redactor)
        exchange = self.log.get(subject.exchange) if isinstance(subject, Message) else subject
        hop = exchange.hop if exchange is not None else None
        return replace(evidence, hop=hop.value) if hop is not None else evidence

    # -- verdicts --------------------------------------------------------------------------------
    def verdicts(self, stop: Callable[[], str | None] | None = None, *, log_checks: bool = True) -> list[Verdict]:
        """Run the log checks over the (last window of the) log, then one verdict per check, the scope applied.

        Once ``stop`` returns a reason (a second Ctrl-C, a deadline), no further log check runs: those
        are *not verified*, saying why, and :attr:`stopped` says how many. ``log_checks=False``: they ran
        already (:meth:`run_log_checks`)."""
        if log_checks:
            self.finish(stop)
        for tally in self._tallies.values():
            while tally.unsettled:
                self._settle(tally, tally.unsettled.pop(0))
        return [
            self._scoped(check, verdict)
            for check in self.checks
            for verdict in self._verdicts_of(check, self._tallies[check.name])
        ]

    def _verdicts_of(self, check: Check, tally: _Tally) -> list[Verdict]:
        """The check's verdict; with a :data:`Blame`, one failed verdict per party at fault when it failed."""
        if self.blame is None:
            return [self._verdict_of(check, tally)]
        parts = [part for part in tally.by_party.values() if part.failed]
        if tally.broken is not None or not parts:
            judged = self._blamed(check, None)
            party = judged.now if isinstance(judged, Pending) else judged
            return [replace(self._verdict_of(check, tally), party=party)]
        parts.sort(key=lambda part: part.first_failure.order if part.first_failure is not None else (math.inf, 0, 0))
        verdicts = []
        for part in parts:
            whole = replace(part, passes=tally.passes, last_pass=tally.last_pass, sources=tally.sources | part.sources)
            whole.revisions = tally.revisions
            whole.exchanges_in_scope = tally.exchanges_in_scope
            party = part.first_failure.finding.party if part.first_failure is not None else None
            verdicts.append(replace(self._verdict_of(check, whole), party=party))
        return verdicts

    def run_log_checks(self, stop: Callable[[], str | None] | None = None) -> None:
        """Run the log checks over the (last window of the) log now, before :meth:`verdicts` (``log_checks=False``):
        a gateway's hops run theirs first, then settle who is at fault."""
        self.finish(stop)

    def finish(self, stop: Callable[[], str | None] | None = None) -> None:
        """Run the log checks over the last window (when it is this judge's share), once."""
        if not self._finished:
            self._finished = True
            if self._owned():
                self._run_log_checks(stop)

    def partial(self, *, recording: int = 0) -> Partial:
        """This judge's state before its verdicts, for :func:`mcp_assay.spec.partial.merge` (the last window judged
        first): the tallies with their evidence made, what decides *not applicable*, the credentials learnt.

        A judge of a gateway's hop has none: who is at fault for its failures is settled against the other hop's
        judge, in the same process (``mcp-assay validate`` judges such recordings together, there)."""
        if self.blame is not None:
            raise ValueError("a judge of a gateway's hop gives its verdicts, not a partial state")
        self.finish()
        place = _placer(recording)
        return Partial(
            checks=tuple(check.name for check in self.checks),
            tallies={check.name: self._state(self._tallies[check.name], place, recording) for check in self.checks},
            gates={key: (gated.count, place(gated.first)) for key, gated in self._gates.items()},
            admissions=dict(self._admissions),
            traffic=self._traffic(),
            source=self.source,
            secrets=self.redactor.secrets,
            counts={
                "exchanges": self.exchanges_seen,
                "observations": self.observations_seen,
                "messages": self.messages_seen,
                "windows": self._windows + 1,
                "check_calls": self.check_calls,
                "log_check_calls": self.log_check_calls,
            },
            recording=recording,
            share=self.share[0],
            shares=self.share[1],
        )

    def _traffic(self) -> bool:
        return bool(self._position or len(self.log) or self._windows)

    def _state(self, tally: _Tally, place: Callable[[Order], Place], recording: int) -> TallyState:
        """A tally without the traffic: every finding a verdict may quote, its evidence made."""

        def kept(
            ranked: _Ranked | None, *, evidence: bool = True, negated: bool = False, related: bool = False
        ) -> Kept | None:
            if ranked is None:
                return None
            finding = ranked.finding
            made = self._evidence(ranked) if evidence and (finding.subject is not None or negated) else None
            beside = self._related(ranked) if related and made is not None else ()
            return Kept(
                place(_negated(ranked.order) if negated else ranked.order), finding.outcome, finding.detail,
                finding.blocked_by, finding.grade, made, finding.subject is not None, beside,
            )  # fmt: skip

        failures = [kept(item, negated=True, related=True) for item in sorted(tally.failures, reverse=True)]
        return TallyState(
            failures=tuple(item for item in failures if item is not None),
            failed=tally.failed,
            graded=tally.graded,
            grade=tally.grade,
            grade_place=place(tally.grade_order) if tally.grade_order is not None else None,
            failed_sources=frozenset(tally.failed_sources),
            first_failure=kept(tally.first_failure, evidence=False),
            passes=tally.passes,
            last_pass=kept(tally.last_pass, related=True),
            pending=kept(tally.pending),
            unread=kept(tally.unread),
            inapplicable=kept(tally.inapplicable, evidence=False),
            sources=frozenset(tally.sources),
            revisions=frozenset(tally.revisions),
            exchanges_in_scope=tally.exchanges_in_scope,
            broken=tally.broken,
            broken_at=(recording, tally.broken_at) if tally.broken is not None else None,
        )

    def _run_log_checks(self, stop: Callable[[], str | None] | None = None) -> None:
        left = [check for check in self.checks if check.scope == "log"]
        present = window_follows(self.log, self.log.request_of)
        self._facts.clear()
        try:
            self._run_each(left, present, stop)
        finally:
            self._facts.clear()
            forget_passes()

    def _run_each(self, left: list[Check], present: frozenset[str], stop: Callable[[], str | None] | None) -> None:
        for number, check in enumerate(left):
            why = stop() if stop is not None else None
            if why:
                for skipped in left[number:]:
                    self._tallies[skipped.name].broken = f"not judged: judging was cut short ({why})"
                self.stopped = f"judging was cut short by {why}: {len(left) - number} checks did not run"
                return
            tally = self._tallies[check.name]
            if tally.broken is None:
                self._run_log_check(check, tally, self._windows, present)

    @property
    def excluded_failures(self) -> list[Verdict]:
        """Failed verdicts of checks the scope's sides leave out (the suite reports them as its own defects)."""
        return list(self._excluded)

    def _run_log_check(self, check: Check, tally: _Tally, window: int, present: frozenset[str]) -> None:
        exchanges_in_scope = 0 if check.gate.capability else self._exchanges_in_scope(check)
        if not (self._in_scope(check)[0] or exchanges_in_scope):
            return
        tally.exchanges_in_scope = exchanges_in_scope
        if not follows_any(check.follows, present):
            return  # the window holds nothing the check follows
        self.log_check_calls += 1
        self.ctx.check = check
        try:
            found = _normalise(check.func(self.ctx))
        except Exception as exc:  # a defect in a check must never stop the report
            self._broken(check, tally, exc, window)
            return
        finally:
            self.ctx.check = None
        rank = 0
        facts_of, known = self._facts_of, self._facts
        latest: tuple[int, Finding] | None = None  # the rank and finding of the run's latest plain pass
        for finding in found:
            if type(finding) is Finding and finding.outcome is Outcome.PASSED:  # most findings of a log check
                facts = known.get(id(finding.subject)) or facts_of(finding.subject)
                if facts.plain:  # counted as _fold counts it, kept once the run ends rather than at every pass
                    _count_pass(tally, facts)
                    latest = (rank, finding)
                    rank += 1
                    continue
            if isinstance(finding, Passes):
                rank = self._fold_passes(check, tally, finding, math.inf, window, rank)
            else:
                self._fold(check, tally, finding, (math.inf, window, rank))
                rank += 1
        if latest is not None:
            order = (math.inf, window, latest[0])
            if tally.last_pass is None or order > tally.last_pass.order:
                tally.last_pass = _Ranked(order, latest[1])

    def _exchanges_in_scope(self, check: Check) -> int:
        """Exchanges carrying traffic that pass the check's transport and revision gates (observations carry none)."""
        count = 0
        for (transport, revision), number in self._exchanges_by_gate.items():
            if transport in check.gate.transports and check.gate.admits(self.spec.get(revision))[0]:
                count += number
        return count

    def _verdict_of(self, check: Check, tally: _Tally) -> Verdict:
        return verdict_of(
            check,
            self._state(tally, _placer(0), 0),
            source=self.source,
            traffic=self._traffic(),
            in_scope=self._in_scope(check),
            redact=self.redactor.text,
        )

    # -- the scope -------------------------------------------------------------------------------
    def _scoped(self, check: Check, verdict: Verdict) -> Verdict:
        scope = self.scope
        if not scope.revisions:
            return verdict
        if not scope.established:
            return self._unreached(check, verdict)
        admissions = [check.gate.admits(revision) for revision in scope.revisions]
        ok = any(admission[0] for admission in admissions)
        why = "" if ok else admissions[0][1]
        if ok and check.side not in scope.sides:
            ok, why = False, scope.sides_reason
            if verdict.outcome is Outcome.FAILED:
                self._excluded.append(verdict)
        if ok or verdict.outcome is Outcome.NOT_APPLICABLE:
            return verdict
        return replace(verdict, outcome=Outcome.NOT_APPLICABLE, reason=why, evidence=(), violations=0, judged=0)

    def _unreached(self, check: Check, verdict: Verdict) -> Verdict:
        """No revision could be established: a check the run meant to apply is not verified, others do not apply."""
        scope = self.scope
        if check.side not in scope.sides:
            return replace(verdict, outcome=Outcome.NOT_APPLICABLE, reason=scope.sides_reason)
        if verdict.outcome in (Outcome.PASSED, Outcome.FAILED):
            return verdict  # what the server did send (answers no revision could be read from) is judged as it is
        ok, why = check.gate.admits(scope.revisions[0])
        if ok and scope.transport and scope.transport not in check.gate.transports:
            ok, why = False, f"{scope.transport} has no such requirement"
        outcome = Outcome.NOT_VERIFIED if ok else Outcome.NOT_APPLICABLE
        return replace(verdict, outcome=outcome, reason=why or verdict.reason)


def _count_pass(tally: _Tally, facts: _Facts) -> None:
    """Count one pass of a subject with these facts: how many, where they came from, their revisions."""
    tally.passes += 1
    if facts.origin is not tally.origin:
        _count_origin(tally, facts.origin)


def _count_origin(tally: _Tally, origin: Origin) -> None:
    """Count where a pass came from and its revision, when they differ from the pass counted last's."""
    tally.origin = origin
    source, revision = origin
    tally.sources.add(source)
    if revision:
        tally.revisions.add(revision)


def _count_failure(tally: _Tally, ranked: _Ranked, source: Source | None, graded_at: Order | None = None) -> None:
    """Count one failure into ``tally`` (of one party, with a :data:`Blame`): how many, its grade, the earliest, and
    the earliest few with their evidence (``graded_at``: where it was folded, when its rank moved it elsewhere)."""
    finding, order = ranked.finding, ranked.order
    tally.failed += 1
    if finding.grade is not None:
        tally.graded += 1
        if tally.grade is None or _RANK[finding.grade.severity] > _RANK[tally.grade.severity]:
            tally.grade = finding.grade
            tally.grade_order = graded_at if graded_at is not None else order
    tally.failed_sources.add(source)
    if tally.first_failure is None or order < tally.first_failure.order:
        tally.first_failure = ranked
    if len(tally.failures) < MAX_EVIDENCE or order < _negated(_top(tally.failures)):
        heapq.heappush(tally.failures, _Ranked(_negated(order), finding, ranked.evidence, ranked.related))
        if len(tally.failures) > MAX_EVIDENCE:
            heapq.heappop(tally.failures)


def _source_of(probe: Probe | None) -> Source | None:
    """Where a finding came from, when mcp-assay had a hand in its exchange (``None``: the peers' own traffic)."""
    if probe is None:
        return None
    return Source.INJECTED if probe.injected else Source.ACTIVE


def _ranked(explored: Explored | None, order: Order) -> Order:
    """A finding's place among a check's evidence: an explored call made while searching or shrinking ranks after
    every other, so a verdict shows first the shrunk input ``run --explore`` reported (and the fixed cases')."""
    if explored is not None and not explored.reported:
        return (math.inf, _AFTER_EVERY_WINDOW, order[2])
    return order


_AFTER_EVERY_WINDOW = 2**62
"""The window position of explored calls made while searching: after every finding of every window."""


def _placer(recording: int) -> Callable[[Order], Place]:
    """Where a finding of this judge sits among the recordings judged (this one's place: ``recording``)."""

    def place(order: Order) -> Place:
        return (order[0], recording, order[1], order[2])

    return place


def _top(heap: list[_Ranked]) -> Order:
    """The latest of the kept failures (the heap holds negated orders)."""
    return heap[0].order


def _negated(order: Order) -> Order:
    return (-order[0], -order[1], -order[2])


def _normalise(result: Result) -> list[Finding | Passes]:
    """A check's findings as a list (passes of nothing left out)."""
    if result is None:
        return []
    if isinstance(result, Finding | Passes):
        result = (result,)
    return [item for item in result if item is not None and not (isinstance(item, Passes) and not item.subjects)]


def evaluate(
    log: ExchangeLog,
    spec: SpecSet,
    *,
    checks: Iterable[Check] | None = None,
    scope: Scope | None = None,
    settings: Mapping[str, Any] | None = None,
    redactor: Redactor | None = None,
    source: Source = Source.PASSIVE,
) -> list[Verdict]:
    """Judge a complete ``log`` with every registered check (or the ones given); one verdict per check."""
    judge = Judge.of(log, spec, checks=checks, scope=scope, settings=settings, redactor=redactor, source=source)
    return judge.verdicts()


@dataclass(frozen=True, slots=True)
class OnlyChecks:
    """What ``--only`` says about checks: the ones its requirement IDs, prefixes and check names select, and the
    words that name no check (probe families, for ``run``)."""

    checks: list[Check] | None
    """The selected checks; ``None`` when ``--only`` names no requirement and no check (every check judges)."""
    others: tuple[str, ...] = ()
    """The words that are neither a requirement ID or prefix (upper case) nor a check's name."""
    unmatched: tuple[str, ...] = ()
    """Requirement IDs or prefixes no check cites."""


REQUIREMENT_PATTERN = re.compile(r"[A-Z]+(-\d{0,2})?")
"""A requirement ID or prefix as ``--only`` takes it: upper case (``VER``, ``HTTP-2``, ``AUTH-09``)."""


def split_only(only: str | None) -> OnlyChecks:
    """Read ``--only``: a requirement ID or prefix (upper case) selects every check citing a requirement it starts,
    a check's whole name selects that check; any other word is left to the caller (``run``: a probe family)."""
    words = [part.strip() for part in (only or "").split(",") if part.strip()]
    registered = registered_checks()
    by_name = {check.name: check for check in registered}
    chosen: dict[str, Check] = {}
    others: list[str] = []
    unmatched: list[str] = []
    named = False
    for word in words:
        if REQUIREMENT_PATTERN.fullmatch(word):
            named = True
            found = [check for check in registered if any(req.startswith(word) for req in check.requirements)]
            if not found:
                unmatched.append(word)
            chosen.update((check.name, check) for check in found)
        elif word in by_name:
            named = True
            chosen[word] = by_name[word]
        else:
            others.append(word)
    selected = [check for check in registered if check.name in chosen] if named else None
    return OnlyChecks(selected, tuple(others), tuple(unmatched))


def select_checks(only: str | None) -> list[Check] | None:
    """The checks ``--only`` selects by requirement ID, prefix or check name; ``None`` when it names none."""
    return split_only(only).checks
