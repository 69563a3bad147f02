"""Which answers belong to another requirement's case: a rule's exclusions read from the cases, not listed by hand.

A probe case the suite sends to provoke one answer (an unknown prompt, a missing argument) is picked out
by the rules of the requirements it feeds (:attr:`~mcp_assay.cases.Judging.SELECTED`). A broader rule over
the same method (any failed ``prompts/get`` is reported as ``-32603``) must leave such an answer to them;
asking the case what it feeds, instead of naming each case, keeps a new case out of the broader rule with
no edit to it. :func:`sent_as` is the plain question every such rule starts from: was this exchange sent as
one of these cases?
"""

from __future__ import annotations

from mcp_assay.cases import Case, Judging
from mcp_assay.spec.context import Context
from mcp_assay.wire.jsonrpc import Message

__all__ = ["selected_for_another", "sent_as"]


def selected_for_another(request: Message, ctx: Context, requirement: str) -> bool:
    """The exchange carrying ``request`` was sent as a case other rules pick out, one that does not feed
    ``requirement``: its answer is theirs to judge."""
    probe = ctx.probe(request)
    if probe is None or probe.injected or not probe.case.registered:
        return False
    case = probe.case.root
    return case.judging is Judging.SELECTED and requirement not in case.feeds


def sent_as(message: Message, ctx: Context, *cases: Case) -> bool:
    """The exchange carrying ``message`` was made by one of ``cases``."""
    probe = ctx.probe(message)
    return probe is not None and probe.of_case(*cases)
