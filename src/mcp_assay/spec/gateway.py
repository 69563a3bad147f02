"""Judging a gateway from both sides: each hop on its own, what only both show, and who is at fault.

Traffic that crossed a gateway's hops (:class:`~mcp_assay.wire.model.Hop`) is judged by three judges at once:
the *front* judge sees the client and the gateway (the gateway as a server), the *back* judge the
gateway and the upstream server (the gateway as a client), each with every ordinary rule, as if it
were the only hop; the *gateway* judge sees both hops with the ``GW`` rules only (what the gateway
changed on the way: :mod:`mcp_assay.spec.rules.gateway`). Traffic with no hop (a plain proxy, a
recording made before hops existed) goes to a judge of its own, exactly as it always did.

Every failure names the party at fault (:class:`~mcp_assay.vocabulary.verdicts.Party`):

* on the front hop, the client for a check of the client (or, for a check of both sides, what the client sent),
  else the gateway, **unless the upstream's own
  answer already carried the fault**: when the same check failed on what the gateway relayed (the back
  answer of the matched request, :meth:`~mcp_assay.wire.hops.Correlation.counterparts`), or the gateway passed that
  message on as the upstream said it (same content, the client's id: the back hop may lack the context to judge
  it, as a stdio server spawned for one request that listed no tools there), the fault is the upstream
  server's. The back hop is judged first for this: the gateway's answer follows the
  upstream's, so when a front answer is judged the back one has been (windows of the two hops close
  together, the back one first);
* on the back hop, the upstream server for a check of the server (what it answered), the gateway for a check of
  the client (what it sent upstream), **unless the client's own request already carried the fault**: when the
  same check failed on the front request the gateway relayed, the fault is the client's. That request finishes
  after its upstream twin, so this is settled when the verdicts are made (:class:`~mcp_assay.spec.engine.Pending`);
* a fault of the server on the front hop with no matched request (a notification on a ``GET`` stream) is the
  upstream's when the same check failed on a message of the same content the upstream sent shortly before; a
  front fault no upstream fault explains yet is settled when the verdicts are made, since an upstream stream
  still open (a ``GET`` stream the gateway keeps) is judged only when it ends;
* a ``GW`` rule's failure is always the gateway's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.checks import Check, Finding
from mcp_assay.spec.engine import FindingListener, Judge, Pending, Scope, registered_checks
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.verdicts import Party, Side, Source, Verdict
from mcp_assay.wire.hops import Correlation, canonical
from mcp_assay.wire.jsonrpc import Message
from mcp_assay.wire.model import Exchange, Hop, HttpExchange, StdioLine
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["GATEWAY_PREFIX", "GatewayJudge", "is_gateway_check"]

GATEWAY_PREFIX = "GW-"
"""The catalogue's prefix of the rules that compare a gateway's two hops."""
REMEMBERED = 100_000
RELAYED_WITHIN = 10.0
"""Seconds a relayed copy of an upstream message may follow it (matched by what it said, where nothing else matches
it: a notification on a stream opened for no request)."""
SLACK = 0.05
"""Upstream failures remembered for telling a relayed fault from the gateway's own (the oldest go first)."""


def is_gateway_check(check: Check) -> bool:
    """A rule that compares both hops of a gateway (it runs only where both were watched)."""
    return any(ident.startswith(GATEWAY_PREFIX) for ident in check.requirements)


JUDGED_IN_CONTEXT = frozenset({"cancelled_requests_are_not_answered"})
"""Checks whose failure on the front rests on what the client did there (a cancellation), not on what the answer
says: an answer the gateway passed on unchanged is the upstream's fault only if the back hop failed it too (the
upstream got the cancellation and answered anyway), never merely because its content is the upstream's."""

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
        self._upstream_content: OrderedDict[tuple[str, str], float] = OrderedDict()
        """(check, what the failing message said) of those failures, with when: a relayed copy has other ids."""
        self._client_faults: OrderedDict[tuple[str, str, int], None] = OrderedDict()
        """(check, exchange, message index or -1) of every front-hop failure the client is at fault for."""
        self._front_probes: OrderedDict[str, None] = OrderedDict()
        """The front-hop exchanges whose request mcp-assay (or a harness marking it) made malformed on purpose."""
        self._front_of: OrderedDict[tuple[str, int], tuple[str, int]] = OrderedDict()
        """The front message (exchange, index; -1: the exchange) each back one relayed."""

    # -- feeding -----------------------------------------------------------------------------------
    def add(self, exchange: Exchange) -> None:
        hop = exchange.hop
        if hop is None:
            self.plain.add(exchange)
            return
        self._open()
        assert self.front is not None and self.back is not None and self.gateway is not None
        self.correlation.add(exchange)
        self._map(exchange)
        probe = exchange.probe
        if hop is Hop.FRONT and probe is not None and probe.invalid and not probe.injected:
            _keep(self._front_probes, [exchange.id])
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

    def _map(self, exchange: Exchange) -> None:
        """Note which front message each back one relayed, as soon as the correlation pairs them."""
        correlation = self.correlation
        twin = correlation.twin_of(exchange.id)
        if twin is not None:
            front, back = (exchange, twin) if exchange.hop is Hop.FRONT else (twin, exchange)
            self._note_front(back.id, 0, front.id, 0)
            self._note_front(back.id, -1, front.id, -1)
        message = exchange.request_message if isinstance(exchange, HttpExchange) else getattr(exchange, "message", None)
        call = correlation.call_of(message) if isinstance(message, Message) else None
        relay = correlation.relay_of(call) if call is not None else None
        if relay is not None and relay.back is not None:
            ask, sent = relay.front.request, relay.back.request
            self._note_front(sent.exchange, sent.index, ask.exchange, ask.index)
            self._note_front(sent.exchange, -1, ask.exchange, -1)

    def _note_front(self, back: str, back_index: int, front: str, front_index: int) -> None:
        self._front_of[(back, back_index)] = (front, front_index)
        while len(self._front_of) > REMEMBERED:
            self._front_of.popitem(last=False)

    # -- blame -------------------------------------------------------------------------------------
    def front_blame(self, check: Check, finding: Finding | None) -> Party | Pending | None:
        """Who is at fault for a failure on the front hop (see the module); whose conduct a check judges there."""
        if finding is None:
            return _JUDGED[Hop.FRONT].get(check.side)
        if _clients(check, finding):
            _keep(self._client_faults, _keys(check, finding.subject))
            return Party.CLIENT
        subject = finding.subject
        if self._relayed(check, subject):
            return Party.SERVER
        # what the upstream sent on a stream still open upstream is judged when that stream ends: settle later
        return Pending(Party.GATEWAY, lambda: Party.SERVER if self._relayed(check, subject) else Party.GATEWAY)

    def _back_blame(self, check: Check, finding: Finding | None) -> Party | Pending | None:
        if finding is None:
            return _JUDGED[Hop.BACK].get(check.side)
        if check.side is Side.PROXY:
            return Party.GATEWAY
        if _clients(check, finding):
            subject = finding.subject
            return Pending(Party.GATEWAY, lambda: self._settle(check, subject), lambda: self._relays_a_probe(subject))
        self._remember(check, finding.subject)
        return Party.SERVER

    def _settle(self, check: Check, subject: Message | Exchange | None) -> Party:
        """Whose a fault of the gateway's request upstream is: the client's when its own request carried it."""
        for key in _positions(subject):
            front = self._front_of.get(key)
            if front is not None and (check.name, *front) in self._client_faults:
                return Party.CLIENT
        return Party.GATEWAY

    def _relays_a_probe(self, subject: Message | Exchange | None) -> bool:
        """Whether the gateway's request upstream relayed a probe malformed on purpose on the front (tagged there, as a
        suite run tags the relayed copy itself): what mcp-assay made the gateway send is not its conduct as a client."""
        return any(
            front is not None and front[0] in self._front_probes
            for front in (self._front_of.get(key) for key in _positions(subject))
        )

    def _remember(self, check: Check, subject: Message | Exchange | None) -> None:
        _keep(self._upstream_faults, _keys(check, subject))
        if isinstance(subject, Message) and not subject.kind.is_response:
            content = self._upstream_content
            content[(check.name, _content(subject))] = subject.time
            while len(content) > REMEMBERED:
                content.popitem(last=False)

    def _relayed(self, check: Check, subject: Message | Exchange | None) -> bool:
        """Whether the upstream's answer already carried this fault: the same check failed on what the gateway
        relayed (the matched message on the back hop, or, for a fault of a whole exchange, the back exchange)."""
        faults = self._upstream_faults
        if isinstance(subject, Message):
            counterparts = self.correlation.counterparts(subject)
            if any((check.name, other.exchange, other.index) in faults for other in counterparts):
                return True
            if (
                subject.sender is Side.SERVER
                and check.name not in JUDGED_IN_CONTEXT
                and any(self._unchanged(subject, other) for other in counterparts)
            ):
                return True  # passed on as the upstream said it (which the back hop could not judge: no context)
            if counterparts:
                return False
        twin = self.correlation.twin_of(subject.exchange if isinstance(subject, Message) else subject.id) if (
            subject is not None
        ) else None  # fmt: skip
        if twin is not None:
            return (check.name, twin.id, -1) in faults
        if isinstance(subject, Message) and subject.sender is Side.SERVER and not subject.kind.is_response:
            sent = self._upstream_content.get((check.name, _content(subject)))
            return sent is not None and subject.time - RELAYED_WITHIN <= sent <= subject.time + SLACK
        return False

    def _unchanged(self, relayed: Message, upstream: Message) -> bool:
        """Whether the gateway passed a message of the upstream's on as it was: the same content, and for an answer
        the client's own id (a fault of the id is the gateway's however faithful the rest)."""
        if relayed.kind.is_response and not (relayed.id is None and upstream.id is None):  # null: the upstream's own
            call = self.correlation.call_of(relayed)
            if call is None or relayed.id_key != call.request.id_key:
                return False
        return _content(relayed) == _content(upstream)

    # -- verdicts ----------------------------------------------------------------------------------
    def verdicts(self, stop: Callable[[], str | None] | None = None) -> list[Verdict]:
        """Every judge's verdicts (the back hop's first), each naming whose conduct it judged.

        Both hops run their log checks before either makes its verdicts: the back hop's failures of the server
        say what the front relayed, the front hop's failures of the client what the back relayed."""
        judges = self.judges
        hops = [judge for judge in (self.back, self.front) if judge is not None and judge in judges]
        for judge in hops:
            judge.run_log_checks(stop)
        found: list[Verdict] = []
        for judge in judges:
            found += judge.verdicts(stop=stop, log_checks=judge not in hops)
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


def _keys(check: Check, subject: Message | Exchange | None) -> list[tuple[str, str, int]]:
    return [(check.name, *position) for position in _positions(subject)]


def _positions(subject: Message | Exchange | None) -> list[tuple[str, int]]:
    """Where a finding's subject sits: its message (exchange, index) and its exchange (exchange, -1)."""
    if isinstance(subject, Message):
        return [(subject.exchange, subject.index), (subject.exchange, -1)]
    if subject is not None:
        return [(subject.id, -1)]
    return []


def _keep[K](index: OrderedDict[K, None], keys: Iterable[K]) -> None:
    for key in keys:
        index[key] = None
    while len(index) > REMEMBERED:
        index.popitem(last=False)


def _content(message: Message) -> str:
    """What a message said, without what a relay changes (its id, ``_meta``): a relayed copy says the same."""
    payload = message.payload if isinstance(message.payload, dict) else {"raw": message.raw.decode("utf-8", "replace")}
    said: dict[str, Any] = {key: value for key, value in payload.items() if key not in ("id", "jsonrpc")}
    for member in ("params", "result"):
        value = said.get(member)
        if isinstance(value, dict) and "_meta" in value:
            said[member] = {key: item for key, item in value.items() if key != "_meta"}
    return canonical(said)[:4096]
