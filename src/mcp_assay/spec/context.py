"""What a check may consult while it judges: the log, the revisions, settings and shared views.

A :class:`Context` is handed to every check. Besides the exchange log it knows which revision of
the window a message belongs to, validates messages against their schema once, and keeps the
*views* several rules build from the same traffic (the 2025 sessions, the list walks, the stream
index ...): :meth:`Context.view` computes one the first time a rule asks and hands the same object
to every later rule, until the log grows. That one cache is why a whole-log evaluation stays
linear however many rules read the same structure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, cast

from mcp_assay.spec.checks import Check, Gate
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.spec.validator import Validation
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.model import Exchange, Probe
from mcp_assay.wire.traffic import ExchangeLog, MessageKey

__all__ = ["ANSWERED_BY_ASSAY", "OFF_VERSION", "SENT_BY_ASSAY", "Context", "GateKey", "admitted"]

ANSWERED_BY_ASSAY = "answered by mcp-assay (an injected fault), not by the server"
SENT_BY_ASSAY = "sent by mcp-assay (a probe), not by the client"
OFF_VERSION = (
    "sent by mcp-assay at another version than the one under test, or none (an off-version probe), which a server "
    "may serve as another revision: it says nothing of how the server treats the revision under test"
)

GateKey = tuple[str, str | None, frozenset[str] | None, str]
"""What decides whether a message passes a check's gates: its transport, the revision it belongs to
(as named on the wire), the capabilities the server advertised for it (``None``: unknown) and mcp-assay's
hand in its exchange (:meth:`Context.hand`)."""

_Question = tuple[Gate, Side, bool, Side | None, frozenset[Kind] | None]
"""What decides the messages :meth:`Context.messages` finds: the check's gate, side and ``off_version``, and the
sender and kinds asked for."""


class Context:
    """What a check may consult: the log, the revisions, settings, cached validation and shared views."""

    def __init__(
        self,
        log: ExchangeLog,
        spec: SpecSet,
        settings: Mapping[str, Any] | None = None,
        *,
        clients_judged: bool = True,
    ) -> None:
        self.log = log
        self.spec = spec
        self.settings: Mapping[str, Any] = settings or {}
        self.check: Check | None = None
        """The check being run (set by the engine), so that :meth:`messages` applies its gates."""
        self.clients_judged = clients_judged
        """Whether clients are under judgement (not in a suite run, whose client is mcp-assay): then a
        probe's requests are out of scope for checks of the client (the engine says so from its scope)."""
        self._validations: dict[MessageKey, Validation] = {}
        self._views: dict[Callable[[Context], Any], tuple[int, Any]] = {}
        self._gate_keys: dict[MessageKey, GateKey] = {}
        self._one_key: dict[GateKey, GateKey] = {}
        """Each gate key met, the one object every message with it shares (a window holds a handful)."""
        self._admissions: dict[tuple[str, GateKey], tuple[bool, str]] = {}
        self._gated: dict[Gate, tuple[int, list[Exchange]]] = {}
        """The exchanges each check gate lets through, with the log's length when they were found."""
        self._passing: dict[_Question, tuple[int, list[Message]]] = {}
        self._rows: tuple[int, list[tuple[Message, int, bool]], list[Message]] | None = None
        """What :meth:`_keyed` found, with the log's length when it was found."""
        """The messages :meth:`messages` found for each question asked, with the log's length when they were found."""

    def release(self) -> None:
        """Drop the views and caches of a window that is over.

        Some views keep this context (to read the log when they advance), which makes a cycle:
        dropping them lets the window's traffic go as soon as the engine lets go of it, rather
        than at the next full garbage collection, which walks every object alive."""
        self._views.clear()
        self._validations.clear()
        self._gate_keys.clear()
        self._one_key.clear()
        self._admissions.clear()
        self._gated.clear()
        self._passing.clear()
        self._rows = None

    # -- shared views ------------------------------------------------------------------------------
    def view[T](self, build: Callable[[Context], T]) -> T:
        """``build(self)``, computed once for the log as it is and shared by every check that asks.

        When the log has grown since, a view that can take in the new traffic (it has an ``advance``
        method) is brought up to date; any other is built again."""
        cached = self._views.get(build)
        if cached is not None and cached[0] == self.log.size:
            return cached[1]  # type: ignore[no-any-return]  # what build made (cast() is a call: this one is hot)
        advance = getattr(cached[1], "advance", None) if cached is not None else None
        if cached is not None and advance is not None:
            value = cached[1]
            advance(self)
        else:
            value = build(self)
        self._views[build] = (self.log.size, value)
        return cast(T, value)

    # -- attribution -------------------------------------------------------------------------------
    def revision(self, message: Message) -> Revision | None:
        """The window revision the message belongs to (``None``: unknown or outside the window)."""
        return self.spec.get(self.log.revision(message))

    def exchange_revision(self, exchange: Exchange) -> Revision | None:
        return self.spec.get(self.log.exchange_revision(exchange.id))

    def validate(self, message: Message) -> Validation | None:
        """Schema validation of a message against its revision (cached); ``None`` if unattributed."""
        revision = self.revision(message)
        if revision is None:
            return None
        key = message.key
        if key not in self._validations:
            self._validations[key] = revision.validator.validate(message, self.log.request_of(message))
        return self._validations[key]

    def capabilities(self, message: Message) -> dict[str, Any] | None:
        advertised = self.log.server_capabilities(message)
        return advertised.value if advertised is not None else None

    # -- gates ---------------------------------------------------------------------------------------
    def gate_key(self, message: Message) -> GateKey:
        """The facts the gates of every check decide on, for one message (worked out once)."""
        key = message.key
        found = self._gate_keys.get(key)
        if found is None:
            caps = self.capabilities(message)
            found = (
                message.transport,
                self.log.revision(message),
                frozenset(caps) if caps is not None else None,
                self.hand(message),
            )
            found = self._gate_keys[key] = self._one_key.setdefault(found, found)
        return found

    def admission(self, check: Check, message: Message) -> tuple[bool, str]:
        """Whether ``message`` passes ``check``'s gates, and why not: decided once per check and gate key."""
        gate = self.gate_key(message)
        found = self._admissions.get((check.name, gate))
        if found is None:
            found = self._admissions[(check.name, gate)] = admitted(check, message, self)
        return found

    # -- what the running check sees ---------------------------------------------------------------
    def in_scope(self, message: Message, check: Check | None = None) -> bool:
        check = check or self.check
        if check is None:
            return True
        return self.admission(check, message)[0]

    def messages(self, *, sent_by: Side | None = None, kinds: Iterable[Kind] | None = None) -> Iterator[Message]:
        """Messages that pass the running check's gates, optionally filtered further.

        Messages mcp-assay itself made malformed on purpose are left out for checks that judge
        the client side. What passes is found once per window for the log as it is and for what it
        depends on (the check's gate, side and whether it judges version negotiation, and the filters),
        shared by every check that asks the same: a window's log checks ask a handful of such questions."""
        wanted = frozenset(kinds) if kinds is not None else None
        check = self.check
        if check is None:
            return (
                message
                for message in self.log.messages()
                if (sent_by is None or message.sender is sent_by) and (wanted is None or message.kind in wanted)
            )
        key = (check.gate, check.side, check.off_version, sent_by, wanted)
        held = self._passing.get(key)
        if held is None or held[0] != self.log.size:
            held = self._passing[key] = (self.log.size, self._admitted(check, sent_by, wanted))
        return iter(held[1])

    def _admitted(self, check: Check, sent_by: Side | None, wanted: frozenset[Kind] | None) -> list[Message]:
        """The messages of :meth:`messages` for ``check``: each gate key's admission decided once (on the first
        message that has it), then the window's messages kept by theirs."""
        rows, firsts = self._keyed()
        admits = [self.admission(check, first)[0] for first in firsts]
        judging_client = check.side is not Side.SERVER  # what mcp-assay broke on purpose is never the client's
        return [
            message
            for message, index, invalid in rows
            if admits[index]
            and not (judging_client and invalid)
            and (sent_by is None or message.sender is sent_by)
            and (wanted is None or message.kind in wanted)
        ]

    def _keyed(self) -> tuple[list[tuple[Message, int, bool]], list[Message]]:
        """The window's messages in wire order, each with the number of its gate key and whether mcp-assay sent it
        malformed on purpose; and the first message of each gate key (found once for the log as it is)."""
        if self._rows is not None and self._rows[0] == self.log.size:
            return self._rows[1], self._rows[2]
        numbers: dict[GateKey, int] = {}
        rows: list[tuple[Message, int, bool]] = []
        firsts: list[Message] = []
        gate_keys = self._gate_keys  # the gate keys, looked up inline: a hot loop
        for message in self.log.messages():
            key = gate_keys.get(message.key) or self.gate_key(message)
            number = numbers.get(key)
            if number is None:
                number = numbers[key] = len(firsts)
                firsts.append(message)
            rows.append((message, number, bool(key[3]) and self.deliberately_invalid(message)))
        self._rows = (self.log.size, rows, firsts)
        return rows, firsts

    def exchanges(self) -> Iterator[Exchange]:
        """Exchanges (any kind) that pass the running check's revision and transport gates (found once per gate for
        the log as it is: the checks that ask share a handful of gates)."""
        check = self.check
        if check is None:
            return iter(list(self.log))
        gate = check.gate
        held = self._gated.get(gate)
        if held is None or held[0] != self.log.size:
            admits: dict[str | None, bool] = {}  # by the revision named on the wire (a window names a few)
            passing = []
            for exchange in self.log:
                if exchange.transport and exchange.transport not in gate.transports:
                    continue
                named = self.log.exchange_revision(exchange.id)
                admitted = admits.get(named)
                if admitted is None:
                    admitted = admits[named] = gate.admits(self.spec.get(named))[0]
                if admitted:
                    passing.append(exchange)
            held = self._gated[gate] = (self.log.size, passing)
        return iter(held[1])

    # -- what mcp-assay itself sent ----------------------------------------------------------------
    def probe(self, subject: Message | Exchange) -> Probe | None:
        """Why mcp-assay sent the exchange that carried ``subject`` (``None`` for ordinary traffic)."""
        exchange = self.log.get(subject.exchange) if isinstance(subject, Message) else subject
        return exchange.probe if exchange is not None else None

    def not_theirs(self, check: Check, subject: Message | Exchange | None) -> str:
        """Why a finding of ``check`` about ``subject`` would say nothing about the side it judges ('': it would).

        The one place mcp-assay's own part in the traffic is kept apart from the peers': an answer
        mcp-assay made up, reshaped or delayed (an injected fault) is never the server's, so
        server-side checks do not see the exchange, and no check judges the answer as the server's;
        the client's request in it stays the client's. A request mcp-assay sent (a probe) is never
        the client's: while clients are under judgement, checks of the client do not see it."""
        if subject is None:
            return ""
        exchange = self.log.get(subject.exchange) if isinstance(subject, Message) else subject
        probe = exchange.probe if exchange is not None else None
        if probe is None:
            return ""
        sender = subject.sender if isinstance(subject, Message) else None
        if probe.injected:
            if check.side is Side.SERVER or (check.side is not Side.CLIENT and sender is not Side.CLIENT):
                return ANSWERED_BY_ASSAY
            return ""
        if self.clients_judged and check.side in (Side.CLIENT, Side.BOTH) and sender is not Side.SERVER:
            return SENT_BY_ASSAY
        return ""

    def off_version(self, check: Check, subject: Message | Exchange | None) -> str:
        """Why a finding of ``check`` about ``subject`` says nothing of the revision under test ('': it may).

        The suite's off-version probes (:attr:`Probe.off_version`) are evidence only for the checks that judge
        version negotiation itself; a check bound to a revision's features judges how the server treats that
        revision, which a request naming another version, or none, does not show."""
        if subject is None or check.off_version or not check.gate.features:
            return ""
        probe = self.probe(subject)
        return OFF_VERSION if probe is not None and probe.off_version else ""

    def hand(self, message: Message) -> str:
        """mcp-assay's part in the exchange that carried ``message``: ``""`` (none: the peers' own traffic),
        else whether it probed or injected, and who sent the message (what :meth:`not_theirs` and
        :meth:`off_version` decide on)."""
        probe = self.probe(message)
        if probe is None:
            return ""
        kind = "injected" if probe.injected else "probed-off-version" if probe.off_version else "probed"
        return f"{kind}:{message.sender}"

    def deliberately_invalid(self, message: Message) -> bool:
        """True for a message mcp-assay sent malformed on purpose (never held against the client)."""
        if message.sender is not Side.CLIENT:
            return False
        probe = self.probe(message)
        return probe is not None and probe.invalid


def admitted(check: Check, message: Message, ctx: Context) -> tuple[bool, str]:
    """Whether ``message`` falls under ``check``'s gates (transport, revision features, capability), and why not."""
    if message.transport not in check.gate.transports:
        return False, f"{message.transport} has no such requirement"
    named = ctx.log.revision(message)
    revision = ctx.spec.get(named)
    if named is not None and revision is None:
        return False, f"revision {named} is outside the window ({ctx.spec.window_names()})"
    ok, why = check.gate.admits(revision)
    if not ok:
        return False, why
    if check.gate.capability:
        caps = ctx.capabilities(message)
        if caps is not None and check.gate.capability not in caps:
            listed = json.dumps(sorted(caps))
            return False, f"the server does not advertise the {check.gate.capability} capability: {listed}"
    foreign = ctx.not_theirs(check, message) or ctx.off_version(check, message)
    if foreign:
        return False, foreign
    return True, ""
