"""Judging each explored call as it is answered, with the rules that judge all traffic.

Shrinking needs to know, call by call, whether a smaller input still fails the same way. The
oracle does not decide that itself: it is a :class:`~mcp_assay.spec.engine.Judge` over the
revision's traffic so far (the listing that defines the tools, the capabilities, the session), to
which each explored exchange is added as it is recorded; the message checks the run judges with
(``--only`` applies) run on it, and the failures they find for the server's side are the call's.
What no message check sees is read off the transport: an answer that never came (RPC-05 judges it
for a call inside the schema), an HTTP 5xx, and ``-32603`` (an internal error: TOOL-15 judges it for
arguments inside the schema, a signal tells of it for the others). The run's own judging, at the
end, judges the same exchanges again with every check, log checks included: the oracle only steers
the search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcp_assay.spec.checks import Check, Finding
from mcp_assay.spec.engine import Judge, Scope
from mcp_assay.spec.revisions import Revision, SpecSet
from mcp_assay.suite.judging import CLIENT_IS_US, SERVER_SIDES
from mcp_assay.suite.transports import Reply
from mcp_assay.wire.jsonrpc import Message
from mcp_assay.wire.model import Exchange
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["INTERNAL_ERROR", "NO_ANSWER", "SERVER_ERROR", "Failure", "Oracle", "Verdict"]

NO_ANSWER = "no-answer"
SERVER_ERROR = "http-5xx"
INTERNAL_ERROR = "internal-error"
"""Signals the oracle reads off the transport (they name no check): a hang, an HTTP 5xx, a ``-32603``."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One thing that went wrong with one call: a failed check, or a signal read off the transport."""

    name: str
    """The check's name, or one of :data:`NO_ANSWER`, :data:`SERVER_ERROR`, :data:`INTERNAL_ERROR`."""
    requirements: tuple[str, ...]
    detail: str

    @property
    def signal(self) -> bool:
        """Read off the transport, not found by a check: reported as a note with its evidence."""
        return not self.requirements


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one explored call came to."""

    failures: tuple[Failure, ...]
    answered: bool = True

    @property
    def names(self) -> frozenset[str]:
        return frozenset(failure.name for failure in self.failures)


class Oracle:
    """Judges explored exchanges one call at a time, in the context of one revision's traffic."""

    def __init__(self, spec: SpecSet, revision: Revision, context: Sequence[Exchange], checks: Sequence[Check] | None):
        scope = Scope(revisions=(revision,), sides=SERVER_SIDES, sides_reason=CLIENT_IS_US)
        self._found: list[Failure] = []
        self.judge = Judge(
            spec, log=ExchangeLog(context), checks=checks, scope=scope, on_failure=self._failed
        )  # fmt: skip

    def _failed(self, check: Check, message: Message, finding: Finding) -> None:
        if check.side in SERVER_SIDES:
            self._found.append(Failure(check.name, check.requirements, finding.detail))

    def judge_call(self, exchanges: Sequence[Exchange], reply: Reply | None) -> Verdict:
        """The failures the checks find in ``exchanges`` (one call's traffic), and what the transport showed."""
        self._found = []
        for exchange in exchanges:
            self.judge.add(exchange)
        found = list(dict.fromkeys(self._found))
        if reply is None:
            found.append(Failure(NO_ANSWER, (), "no answer came within --timeout"))
            return Verdict(tuple(found), answered=False)
        if reply.status is not None and reply.status >= 500:
            found.append(Failure(SERVER_ERROR, (), f"HTTP {reply.status}: the server failed instead of answering"))
        if reply.error_code == -32603:
            message = reply.error.get("message") if reply.error is not None else None
            lines = str(message).strip().splitlines() if message is not None else []
            text = lines[0][:200] if lines else "no message"
            text += f" (a message of {len(lines)} lines)" if len(lines) > 1 else ""
            found.append(Failure(INTERNAL_ERROR, (), f"-32603 (internal error): {text}"))
        return Verdict(tuple(found))
