"""Cancellation notices (CAN-02..07): how each transport signals a cancellation, and what it names.

On 2026 Streamable HTTP a POSTed ``notifications/cancelled`` means nothing (a server may accept
or refuse it): the client cancels by closing the stream. On stdio the notice repeats the request
id with its JSON type. A notice names a request its sender issued; a 2026 server sends one only
to end a listen stream, and ends subscriptions explicitly.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from mcp_assay.spec.checks import Finding, failed, log_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.cancellation._scope import cancel_notices, judged_cancellations, post_answer
from mcp_assay.spec.rules.shared.common import http_exchange, params_of
from mcp_assay.spec.rules.shared.reads import ANY_CANCELLATION
from mcp_assay.spec.rules.shared.stream_facts import CANCELLED, LISTEN, describe_id, request_id_of, same_id
from mcp_assay.spec.rules.shared.streams import index
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Message


@log_check(
    requirements="CAN-02",
    level=Level.MAY,
    side=Side.SERVER,
    subject="cancellation notices POSTed on 2026 HTTP",
    features={"per_request_version"},
    because="the server's half over HTTP: a POSTed notifications/cancelled is accepted or refused",
    follows={CANCELLED},
)
def http_cancel_notices_are_accepted_or_refused(ctx: Context) -> Iterator[Finding]:
    """A POSTed notifications/cancelled is answered 202 (accepted) or with a 4xx refusal, never a response."""
    for notice in cancel_notices(ctx):
        exchange = http_exchange(notice, ctx)
        if exchange is None or exchange.response is None:
            continue
        status, answers = post_answer(exchange)
        with_id = [m for m in answers if m.id is not MISSING and m.id is not None]
        if status == 202 and not answers:
            yield passed(notice)
        elif status is not None and 400 <= status < 500 and not with_id:
            yield passed(notice, f"the notice was refused with HTTP {status}")
        elif with_id:
            yield failed(with_id[0], f"the notice was answered with {with_id[0].describe()} (HTTP {status})")
        else:
            yield failed(notice, f"the notice got HTTP {status}; expected 202 or a 4xx")


@log_check(
    requirements="CAN-02",
    level=Level.MAY,
    side=Side.CLIENT,
    subject="2026 HTTP cancellations",
    features={"per_request_version"},
    because="the client's half over HTTP: it cancels by closing the response stream",
    follows=ANY_CANCELLATION,
)
def http_clients_cancel_by_closing_the_stream(ctx: Context) -> Iterator[Finding]:
    """2026 HTTP clients cancel by closing the response stream; a POSTed notifications/cancelled is only noted."""
    idx = index(ctx)
    for notice in cancel_notices(ctx):
        if notice.transport == "http":
            yield failed(
                notice,
                "noted: the client POSTed notifications/cancelled; on 2026 HTTP closing the response stream is the "
                "cancellation signal and the server may ignore the notice",
            )
    for cancellation in judged_cancellations(idx.cancellations, ctx, "disconnect"):
        yield passed(cancellation.request)


@log_check(
    requirements="CAN-03",
    level=Level.MUST,
    subject="stdio cancellations",
    features={"per_request_version"},
    follows={CANCELLED},
)
def stdio_cancellations_repeat_the_request_id_exactly(ctx: Context) -> Iterator[Finding]:
    """A stdio cancellation names the request id with the same JSON type and value (1 is not "1")."""
    idx = index(ctx)
    for notice in cancel_notices(ctx):
        wanted = request_id_of(notice)
        if wanted is MISSING:
            continue  # the schema rule (CAN-05) reports a missing requestId
        if idx.cancelled_request(notice) is not None:
            yield passed(notice)
            continue
        loose = idx.requests_named_loosely(notice)
        if loose:
            yield failed(
                notice,
                f"requestId {describe_id(wanted)} does not match the id {describe_id(loose[-1].id)} of "
                f"{loose[-1].describe()}",
            )


@log_check(
    requirements="CAN-04",
    level=Level.MUST,
    side=Side.BOTH,
    subject="cancellation notices",
    because="in 2025-11-25 either side may cancel a request it issued",
    follows={CANCELLED},
)
def cancellations_name_requests_their_sender_issued(ctx: Context) -> Iterator[Finding]:
    """A notifications/cancelled names a request its sender issued earlier (2025: in the same direction).

    A cancellation that crosses the answer is a tolerated race and passes."""
    idx = index(ctx)
    for notice in cancel_notices(ctx, sent_by=None):
        if notice.sender is Side.SERVER and idx.revision_has(notice, "per_request_version"):
            continue  # a 2026 server's cancellations are CAN-06's concern
        wanted = request_id_of(notice)
        if wanted is MISSING or not isinstance(params_of(notice), dict):
            continue
        target = idx.cancelled_request(notice)
        who = "client" if notice.sender is Side.CLIENT else "server"
        if target is not None:
            answer = idx.first_answer(target)
            if answer is not None and idx.before(answer, notice):
                yield passed(notice, f"the cancellation of {target.describe()} crossed its answer (a tolerated race)")
            else:
                yield passed(notice)
            continue
        loose = idx.requests_named_loosely(notice)
        hint = f"; {loose[-1].describe()} has the id {describe_id(loose[-1].id)}" if loose else ""
        yield failed(notice, f"the {who} cancelled id {describe_id(wanted)}, which it never used for a request{hint}")


@log_check(
    requirements="CAN-05",
    level=Level.MUST,
    subject="cancellation notices",
    features={"handshake"},
    follows={CANCELLED},
)
def legacy_cancellations_name_a_request(ctx: Context) -> Iterator[Finding]:
    """A 2025 notifications/cancelled carries requestId (only tasks go without, and tasks use tasks/cancel)."""
    for notice in cancel_notices(ctx, sent_by=None):
        if request_id_of(notice) is MISSING:
            yield failed(notice, "notifications/cancelled carries no requestId")
        else:
            yield passed(notice)


@log_check(
    requirements="CAN-06",
    level=Level.MUST_NOT,
    subject="server cancellation notices",
    features={"per_request_version"},
    follows={CANCELLED},
)
def servers_cancel_only_listen_requests(ctx: Context) -> Iterator[Finding]:
    """A 2026 server sends notifications/cancelled only to end an open subscriptions/listen."""
    idx = index(ctx)
    for notice in cancel_notices(ctx, sent_by=Side.SERVER):
        wanted = request_id_of(notice)
        listens = [
            listen
            for listen in idx.open_listens(notice)
            if same_id(listen.id, wanted) and (notice.transport != "http" or idx.listen_carrying(notice) is listen)
        ]
        if listens:
            yield passed(notice)
        else:
            named = idx.cancelled_request(_as_client(notice)) if wanted is not MISSING else None
            what = f" it names {named.describe()}" if named is not None else ""
            yield failed(
                notice,
                f"the server sent notifications/cancelled for id {describe_id(wanted)}, not an open listen;{what}",
            )


def _as_client(notice: Message) -> Message:
    """The notice seen as if the client had sent it, to look the id up among the client's requests."""
    return replace(notice, sender=Side.CLIENT)


@log_check(
    requirements="CAN-07",
    level=Level.SHOULD,
    subject="subscriptions the server ended",
    features={"listen_subscriptions"},
    follows={LISTEN},
)
def servers_end_subscriptions_explicitly(ctx: Context) -> Iterator[Finding]:
    """A server ending a subscription sends the listen result or notifications/cancelled first (A2: either)."""
    idx = index(ctx)
    for listen in idx.listens:
        if not ctx.in_scope(listen.request):
            continue
        if listen.ended_by in ("result", "server-cancel"):
            yield passed(listen.request)
        elif listen.ended_by == "server-close":
            yield failed(
                listen.request,
                f"the server closed the stream of {listen.request.describe()} without a listen result or "
                "notifications/cancelled",
            )
