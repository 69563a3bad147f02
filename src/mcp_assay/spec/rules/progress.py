"""Progress (PROG-): tokens, and the notifications/progress that quote them.

A request opts into progress with ``params._meta.progressToken`` (a string or an integer). The
other side may then send ``notifications/progress`` quoting that token, with the same JSON type,
while the request is in flight, with ``progress`` growing each time, and nothing once the final
response went out. On 2026 HTTP the notifications travel only on that request's own SSE stream.
In 2025 both sides may ask for progress (servers send requests too), so these rules look at both
directions there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import is_int, params_of
from mcp_assay.spec.rules.shared.envelopes import same_client
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE, ANY_PAIRING
from mcp_assay.spec.rules.shared.stream_facts import PROGRESS, describe_id, loosely_same_id, meta_value, same_id
from mcp_assay.spec.rules.shared.streams import StreamIndex, index
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message, id_key
from mcp_assay.wire.traffic import MessageKey, message_key

TOKEN = "progressToken"


def _token(request: Message) -> Any:
    return meta_value(request, TOKEN)


def _quoted(progress: Message) -> Any:
    return params_of(progress).get(TOKEN, MISSING)


def _other(side: Side) -> Side:
    return Side.CLIENT if side is Side.SERVER else Side.SERVER


def _progress(ctx: Context) -> Iterator[Message]:
    for message in ctx.messages(kinds={Kind.NOTIFICATION}):
        if message.method == PROGRESS and _quoted(message) is not MISSING:
            yield message


def _owner(progress: Message, idx: StreamIndex, ctx: Context) -> tuple[Message | None, bool]:
    """The in-flight request the progress is about, and whether any earlier request used its token (found once
    per notification and window: the progress rules each ask it of every notification)."""
    owners = ctx.view(_Owners).found
    known = owners.get(progress.key)
    if known is None:
        known = owners[progress.key] = _find_owner(progress, idx)
    return known


class _Owners:
    """What :func:`_owner` found, by the key of the progress notification asked about."""

    def __init__(self, ctx: Context) -> None:
        self.found: dict[MessageKey, tuple[Message | None, bool]] = {}


def _find_owner(progress: Message, idx: StreamIndex) -> tuple[Message | None, bool]:
    token = _quoted(progress)
    carrier = idx.carrier_request(progress)
    if carrier is not None and carrier.sender is not progress.sender and same_id(_token(carrier), token):
        return (carrier if idx.in_flight(carrier, progress) else None), True
    return idx.request_with_token(token, progress, _other(progress.sender))


def _judge_progress(
    ctx: Context, *, token_used: bool, judge: Callable[[Message, StreamIndex], Finding | None]
) -> Iterator[Finding]:
    """Pass each progress for a request in flight; leave each other one to ``judge``.

    ``judge`` sees only the progress whose token an earlier request did (``token_used``) or did not
    use: a finished request's token is PROG-05's, a token no request gave is PROG-03's."""
    idx = index(ctx)
    for progress in _progress(ctx):
        owner, used = _owner(progress, idx, ctx)
        if owner is not None:
            yield passed(progress)
        elif used == token_used:
            found = judge(progress, idx)
            if found is not None:
                yield found


def _task_augmented(request: Message) -> bool:
    return isinstance(request.params, dict) and isinstance(request.params.get("task"), dict)


@message_check(
    requirements="PROG-01",
    level=Level.MUST,
    side=Side.BOTH,
    subject="requests with a progress token",
    kinds={Kind.REQUEST},
    because="in 2025-11-25 either side may send a request carrying a progress token",
    methods=ANY_ENVELOPE,
)
def progress_tokens_are_strings_or_integers(message: Message, ctx: Context) -> Finding | None:
    """A progressToken is a string or an integer."""
    token = _token(message)
    if token is MISSING:
        return None
    if isinstance(token, str) or is_int(token):
        return passed(message)
    return failed(message, f"{message.describe()} uses progressToken {describe_id(token)}")


@log_check(
    requirements="PROG-02",
    level=Level.MUST,
    side=Side.BOTH,
    subject="requests with a progress token",
    because="in 2025-11-25 either side may send a request carrying a progress token",
    follows=ANY_PAIRING,
)
def progress_tokens_are_unique_among_requests_in_flight(ctx: Context) -> Iterator[Finding]:
    """A sender never gives two requests in flight at the same time the same progress token."""
    idx = index(ctx)
    earlier: dict[tuple[str, Side, Any], list[Message]] = defaultdict(list)
    for request in ctx.messages(kinds={Kind.REQUEST}):
        token = _token(request)
        key = id_key(token) if token is not MISSING else None
        if key is None:
            continue
        same = earlier[(idx.place(request), request.sender, key)]
        # a request answered (or cancelled: a 2025 notice, a 2026 disconnect) before this one stays so for every
        # later one: drop it for good
        same[:] = [other for other in same if idx.in_flight(other, request) and not _cancelled(other, request, idx)]
        clash = [other for other in same if same_client(other, request)]  # two clients may share a 2026 endpoint
        same.append(request)
        if clash:
            yield failed(
                request,
                f"{request.describe()} reuses progressToken {describe_id(token)} of {clash[0].describe()}, "
                "which was still in flight",
            )
        else:
            yield passed(request)


def _cancelled(request: Message, at: Message, idx: StreamIndex) -> bool:
    """The sender gave ``request`` up before ``at``: its token is free again."""
    cancellation = idx.cancel_of.get(message_key(request))
    return cancellation is not None and cancellation.time < at.time


@log_check(
    requirements="PROG-03",
    level=Level.MUST,
    side=Side.BOTH,
    subject="progress notifications",
    because="in 2025-11-25 either side may report progress on the other's request",
    follows={PROGRESS},
)
def progress_names_a_request_in_flight(ctx: Context) -> Iterator[Finding]:
    """Each notifications/progress quotes (type and value) the token of a request still in flight."""
    yield from _judge_progress(ctx, token_used=False, judge=_unknown_token)


def _unknown_token(progress: Message, idx: StreamIndex) -> Finding:
    """Progress whose token no earlier request gave: a token of another JSON type, or none at all."""
    token = _quoted(progress)
    requester = _other(progress.sender)
    loose = [
        request
        for request in idx.requests.get((idx.place(progress), requester), ())
        if idx.before(request, progress) and loosely_same_id(_token(request), token)
    ]
    if loose:
        return failed(
            progress,
            f"progressToken {describe_id(token)} changes the type of the token "
            f"{describe_id(_token(loose[-1]))} of {loose[-1].describe()}",
        )
    carrier = idx.carrier_request(progress)
    where = f" on the stream of {carrier.describe()}, which sent no progressToken" if carrier is not None else ""
    return failed(progress, f"progress for token {describe_id(token)}, which no request in flight gave{where}")


@log_check(
    requirements="PROG-04",
    level=Level.MUST,
    side=Side.BOTH,
    subject="progress sequences",
    because="in 2025-11-25 either side may report progress on the other's request",
    follows={PROGRESS},
)
def progress_increases_with_every_notification(ctx: Context) -> Iterator[Finding]:
    """For one request's token, params.progress strictly increases from notification to notification."""
    idx = index(ctx)
    last: dict[MessageKey, tuple[float, Message]] = {}
    broken: set[MessageKey] = set()
    for progress in _progress(ctx):
        value = params_of(progress).get("progress")
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue  # the schema rule (PROG-06) reports a non-numeric progress
        owner, _used = _owner(progress, idx, ctx)
        if owner is None:
            continue
        key = message_key(owner)
        previous = last.get(key)
        last[key] = (value, progress)
        if previous is not None and value <= previous[0] and key not in broken:
            broken.add(key)
            yield failed(
                progress, f"progress went from {previous[0]:g} to {value:g} for {owner.describe()} (must increase)"
            )
    for key, (_value, progress) in last.items():
        if key not in broken:
            yield passed(progress)


@log_check(
    requirements="PROG-05",
    level=Level.MUST,
    side=Side.BOTH,
    subject="progress notifications",
    because="in 2025-11-25 either side may report progress on the other's request",
    follows={PROGRESS},
)
def no_progress_after_the_final_response(ctx: Context) -> Iterator[Finding]:
    """No progress for a token after its request's final response (2025 task requests excepted)."""
    yield from _judge_progress(ctx, token_used=True, judge=_late_progress)


def _late_progress(progress: Message, idx: StreamIndex) -> Finding | None:
    """Progress quoting the token of a request that had already finished."""
    token = _quoted(progress)
    finished = [
        request
        for request in idx.requests_with_token(token, idx.place(progress), _other(progress.sender))
        if idx.before(request, progress)
    ]
    request = finished[-1]
    if _task_augmented(request):
        return None  # progress may continue until the task ends
    answer = idx.first_answer(request)
    late = f" {progress.time - answer.time:.2f} s" if answer is not None else ""
    return failed(progress, f"progress for {request.describe()} arrived{late} after its final response")


@log_check(
    requirements="PROG-07",
    level=Level.MUST,
    subject="progress notifications on HTTP",
    features={"per_request_version"},
    follows={PROGRESS},
)
def progress_travels_on_its_request_stream(ctx: Context) -> Iterator[Finding]:
    """On 2026 HTTP a request's progress travels only on that request's own SSE stream."""
    idx = index(ctx)
    for progress in _progress(ctx):
        if progress.sender is not Side.SERVER:
            continue
        carrier = idx.carrier_request(progress)
        token = _quoted(progress)
        if carrier is not None and same_id(_token(carrier), token):
            yield passed(progress)
            continue
        listen = idx.listen_carrying(progress)
        if listen is not None:
            where = f"the listen stream of {listen.request.describe()}"
        elif carrier is not None:
            where = f"the stream of {carrier.describe()}"
        else:
            where = "a stream that answers no request"
        yield failed(progress, f"progress for token {describe_id(token)} travelled on {where}")
