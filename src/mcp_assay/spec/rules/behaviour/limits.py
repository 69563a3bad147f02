"""Behaviour, whether anything limits how fast a tool can be called (BEH-11).

Judged on the suite's opt-in burst (``rate_limit_probe``): the calls count as limited when one is
answered ``429 Too Many Requests``, or with an error (a JSON-RPC error or a tool result with
``isError``) that says it is a rate limit. A burst that was served whole is reported as an
informational note (the requirement is a MAY, and a small burst proves little either way).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mcp_assay.cases import burst
from mcp_assay.spec.checks import Finding, failed, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import http_exchange
from mcp_assay.spec.rules.shared.reads import ANY_BEHAVIOUR
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.jsonrpc import Kind, Message

_LIMIT_WORDS = re.compile(r"rate.?limit|too many|throttl|quota|slow down", re.IGNORECASE)


def _burst_requests(ctx: Context) -> list[Message]:
    requests = []
    for message in ctx.log.messages():
        exchange = ctx.log.get(message.exchange)
        probe = exchange.probe if exchange is not None else None
        if message.kind is Kind.REQUEST and probe is not None and probe.case is burst.RATE_LIMIT:
            requests.append(message)
    return requests


def _limited(request: Message, ctx: Context) -> str | None:
    """How this call was limited, or ``None`` when it was served (or failed for another reason)."""
    exchange = http_exchange(request, ctx)
    if exchange is not None and exchange.response is not None and exchange.response.status == 429:
        retry = exchange.response.headers.get(HeaderKey.RETRY_AFTER)
        return "HTTP 429" + (f" (Retry-After: {retry})" if retry else " without Retry-After")
    for answer in ctx.log.responses_to(request):
        if answer.kind is Kind.ERROR and isinstance(answer.error, dict):
            text = str(answer.error.get("message", ""))
            if _LIMIT_WORDS.search(text):
                return f"error {answer.error.get('code')}: {text[:120]}"
        result = answer.result if answer.kind is Kind.RESULT else None
        if isinstance(result, dict) and result.get("isError") is True and _LIMIT_WORDS.search(str(result)):
            return "a tool result with isError that names a limit"
    return None


@log_check(requirements="BEH-11", level=Level.MAY, subject="burst calls", follows=ANY_BEHAVIOUR)
def tool_calls_are_rate_limited(ctx: Context) -> Iterator[Finding]:
    """A burst of calls to one tool meets a rate limit (a 429 or an error that says so)."""
    requests = _burst_requests(ctx)
    if not requests:
        yield unverified(
            "not probed: finding a rate limit takes load, so the burst is opt-in (rate_limit_probe in the config)"
        )
        return
    limited = [(request, how) for request in requests if (how := _limited(request, ctx)) is not None]
    if limited:
        first, how = limited[0]
        position = requests.index(first) + 1
        yield passed(
            first, f"{len(limited)} of {len(requests)} burst calls were limited, the first ({how}) as call {position}"
        )
    else:
        spread = requests[-1].time - requests[0].time
        yield failed(
            requests[-1],
            f"all {len(requests)} calls of the burst (over {spread:.1f} s) were let through: nothing limited them",
        )
