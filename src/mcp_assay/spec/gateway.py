"""Judging a gateway from both sides: each hop on its own, what only both show, and who is at fault.

Traffic that crossed a gateway's hops (:class:`~mcp_assay.wire.Hop`) is judged by three judges at once:
the *front* judge sees the client and the gateway (the gateway as a server), the *back* judge the
gateway and the upstream server (the gateway as a client), each with every ordinary rule, as if it
were the only hop; the *gateway* judge sees both hops with the ``GW`` rules only (what the gateway
changed on the way: :mod:`mcp_assay.spec.rules.gateway`). Traffic with no hop (a plain proxy, a
recording made before hops existed) goes to a judge of its own, exactly as it always did.

Every failure names the party at fault (:class:`~mcp_assay.verdicts.Party`):

* on the front hop, the client for a check of the client (or, for a check of both sides, what the client sent),
  else the gateway, **unless the upstream's own
  answer already carried the fault**: when the same check failed on what the gateway relayed (the back
  answer of the matched request, :meth:`~mcp_assay.hops.Correlation.counterparts`), the fault is the
  upstream server's. The back hop is judged first for this: the gateway's answer follows the
  upstream's, so when a front answer is judged the back one has been (windows of the two hops close
  together, the back one first);
* on the back hop, the gateway for a check of the client (what it sent upstream), the upstream server for a
  check of the server (what it answered);
* a ``GW`` rule's failure is always the gateway's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from mcp_assay.hops import Correlation
from mcp_assay.jsonrpc import Message
from mcp_assay.redaction import Redactor
from mcp_assay.spec.checks import Check, Finding
from mcp_assay.spec.engine import FindingListener, Judge, Scope, registered_checks
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.traffic import ExchangeLog
from mcp_assay.verdicts import Party, Side, Source, Verdict
from mcp_assay.wire import Exchange, Hop, StdioLine

__all__ = ["GATEWAY_PREFIX", "GatewayJudge", "is_gateway_check"]

GATEWAY_PREFIX = "GW-"
"""The catalogue's prefix of the rules that compare a gateway's two hops."""
REMEMBERED = 100_000
"""Upstream failures remembered for telling a relayed fault from the gateway's own (the oldest go first)."""


def is_gateway_check(check: Check) -> bool:
    """A rule that compares both hops of a gateway (it runs only where both were watched)."""
    return any(ident.startswith(GATEWAY_PREFIX) for ident in check.requirements)


_JUDGED = {
    Hop.FRONT: {Side.SERVER: Party.GATEWAY, Side.PROXY: Party.GATEWAY, Side.CLIENT: Party.CLIENT},
    Hop.BACK: {Side.SERVER: Party.SERVER, Side.PROXY: Party.GATEWAY, Side.CLIENT: Party.GATEWAY},
}
"""Whose conduct a check of each side judges on each hop."""


def _clients(check: Check, finding: Finding) -> bool:
    """Whether a failure is the client's side of its hop: a check of the client, or of both sides about what the
    client sent (a check of the server is the server's whatever message it names, often the request it answered)."""
    if check.side is Side.CLIENT:
        return True
    if check.side is not Side.BOTH:
        return False
    subject = finding.subject
    return isinstance(subject, Message | StdioLine) and subject.sender is Side.CLIENT


class GatewayJudge:
    """Judges a capture whose traffic may carry hops (see the module); a drop-in for one :class:`Judge`."""

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
        window: int | None = None,
        on_window: Callable[[ExchangeLog, frozenset[str]], None] | None = None,
        judge_front: bool = True,
    ) -> None:
        """``judge_front=False``: the front hop is judged elsewhere (a suite run judges it revision by revision, with
        :meth:`front_blame`); it still feeds the matching and the GW rules."""
        chosen = list(checks) if checks is not None else registered_checks()
        self.judge_front = judge_front
        self._options: dict[str, Any] = {
            "scope": scope, "settings": settings, "redactor": redactor, "source": source,
            "on_failure": on_failure, "window": window, "on_window": on_window,
        }  # fmt: skip
        self.spec = spec
        self.plain = Judge(spec, checks=chosen, **self._options)
        """The judge of traffic with no hop (every rule, as without a gateway)."""
        self._hop_checks = [check for check in chosen if not is_gateway_check(check)]
        self._gateway_checks = [check for check in chosen if is_gateway_check(check)]
        self.front: Judge | None = None
        self.back: Judge | None = None
        self.gateway: Judge | None = None
        self.correlation = Correlation()
        """The hops matched as exchanges finish: what tells a relayed fault from the gateway's own."""
        self._upstream_faults: OrderedDict[tuple[str, str, int], None] = OrderedDict()
        """(check, exchange, message index or -1) of every back-hop failure the upstream server is at fault for."""

    # -- feeding -----------------------------------------------------------------------------------
    def add(self, exchange: Exchange) -> None:
        hop = exchange.hop
        if hop is None:
            self.plain.add(exchange)
            return
        self._open()
        assert self.front is not None and self.back is not None and self.gateway is not None
        self.correlation.add(exchange)
        if hop is Hop.BACK:
            self.back.add(exchange)
        elif self.judge_front:
            self.front.add(exchange)
        self.gateway.add(exchange)

    def _open(self) -> None:
        """The hops' judges, made when the first exchange of a hop arrives."""
        if self.front is not None:
            return
        options = self._options
        self.back = Judge(self.spec, checks=self._hop_checks, blame=self._back_blame, **options)
        back = self.back
        self.front = Judge(
            self.spec, checks=self._hop_checks, blame=self.front_blame, before_window=back.close_window, **options
        )
        gateway_options = {**options, "on_window": None}
        self.gateway = Judge(
            self.spec, checks=self._gateway_checks, blame=lambda check, finding: Party.GATEWAY, **gateway_options
        )

    @property
    def judges(self) -> list[Judge]:
        """Every judge that has traffic, back hop first (its verdicts tell the front's who is at fault)."""
        front = self.front if self.judge_front else None
        found = [judge for judge in (self.back, front, self.gateway) if judge is not None]
        if self.front is None or self.plain.exchanges_seen or self.plain.messages_seen:
            found.append(self.plain)
        return found

    @property
    def hops_seen(self) -> bool:
        """Whether any traffic crossed a gateway's hop."""
        return self.front is not None

    def log_of(self, exchange: Exchange) -> ExchangeLog:
        """The log an exchange was judged in (its hop's, or the plain one)."""
        if exchange.hop is Hop.FRONT and self.front is not None:
            return self.front.log
        if exchange.hop is Hop.BACK and self.back is not None:
            return self.back.log
        return self.plain.log

    # -- blame -------------------------------------------------------------------------------------
    def front_blame(self, check: Check, finding: Finding | None) -> Party | None:
        """Who is at fault for a failure on the front hop (see the module); whose conduct a check judges there."""
        if finding is None:
            return _JUDGED[Hop.FRONT].get(check.side)
        if _clients(check, finding):
            return Party.CLIENT
        return Party.SERVER if self._relayed(check, finding.subject) else Party.GATEWAY

    def _back_blame(self, check: Check, finding: Finding | None) -> Party | None:
        if finding is None:
            return _JUDGED[Hop.BACK].get(check.side)
        if check.side is Side.PROXY or _clients(check, finding):
            return Party.GATEWAY
        self._remember(check, finding.subject)
        return Party.SERVER

    def _remember(self, check: Check, subject: Message | Exchange | None) -> None:
        if subject is None:
            return
        exchange = subject.exchange if isinstance(subject, Message) else subject.id
        faults = self._upstream_faults
        if isinstance(subject, Message):
            faults[(check.name, exchange, subject.index)] = None
        faults[(check.name, exchange, -1)] = None
        while len(faults) > REMEMBERED:
            faults.popitem(last=False)

    def _relayed(self, check: Check, subject: Message | Exchange | None) -> bool:
        """Whether the upstream's answer already carried this fault: the same check failed on what the gateway
        relayed (the matched message on the back hop, or, for a fault of a whole exchange, the back exchange)."""
        faults = self._upstream_faults
        if isinstance(subject, Message):
            counterparts = self.correlation.counterparts(subject)
            if any((check.name, other.exchange, other.index) in faults for other in counterparts):
                return True
            if counterparts:
                return False
        twin = self.correlation.twin_of(subject.exchange if isinstance(subject, Message) else subject.id) if (
            subject is not None
        ) else None  # fmt: skip
        return twin is not None and (check.name, twin.id, -1) in faults

    # -- verdicts ----------------------------------------------------------------------------------
    def verdicts(self, stop: Callable[[], str | None] | None = None) -> list[Verdict]:
        """Every judge's verdicts (the back hop's first), each naming whose conduct it judged."""
        found: list[Verdict] = []
        for judge in self.judges:
            found += judge.verdicts(stop=stop)
        return found

    @property
    def stopped(self) -> str:
        return next((judge.stopped for judge in self.judges if judge.stopped), "")

    @property
    def exchanges_seen(self) -> int:
        return self.plain.exchanges_seen + sum(j.exchanges_seen for j in (self.front, self.back) if j is not None)

    @property
    def observations_seen(self) -> int:
        return self.plain.observations_seen

    @property
    def messages_seen(self) -> int:
        return self.plain.messages_seen + sum(j.messages_seen for j in (self.front, self.back) if j is not None)

    @property
    def windows(self) -> int:
        return max(judge.windows for judge in (self.plain, self.front, self.back) if judge is not None)

    def carried(self) -> list[tuple[ExchangeLog, frozenset[str]]]:
        """Each judge's current log with the ids it carried from its window before (for audit trails)."""
        return [(judge.log, judge.carried_ids) for judge in (self.plain, self.front, self.back) if judge is not None]

    @property
    def excluded_failures(self) -> list[Verdict]:
        return [verdict for judge in self.judges for verdict in judge.excluded_failures]


def with_party(verdicts: Iterable[Verdict], party: Party | None) -> list[Verdict]:
    """``verdicts`` naming ``party`` (where none names one yet)."""
    return [verdict if verdict.party is not None else replace(verdict, party=party) for verdict in verdicts]
