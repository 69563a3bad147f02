"""Multi round-trip requests (2026-07-28): what a server does when it needs input from the client.

The suite declares no client capabilities on ordinary calls, so a server that needs elicitation,
sampling or roots must answer ``-32021`` naming them (or complete without them) — the rules judge
that from the tool calls already made. Where a call was refused that way, it is repeated declaring
the capabilities asked for; where that (or any call) yields an ``input_required`` result, the
retry cases run: a retry with no answers (a new ``input_required`` expected), one with an extra
answer key (ignored), one with malformed answers (``-32602``) and one with a tampered
``requestState`` (rejected). Only tools the suite was allowed to call are retried.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_assay.cases import mrtr as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.probes.tools import call_tool
from mcp_assay.suite.transports import Reply
from mcp_assay.vocabulary.protocol import Era, ErrorCode

__all__ = ["FAMILY"]

RETRY_REQUIREMENTS = frozenset().union(*(case.feeds for case in cases.CASES if case is not cases.WITH_CAPABILITIES))
"""What the retries feed: left unjudged when no call asked for input."""


def _answer(request: Any) -> dict[str, Any]:
    """A harmless answer to one input request: decline elicitation, a canned sampling reply, no roots."""
    method = request.get("method") if isinstance(request, dict) else None
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "mcp-assay canned reply"},
            "model": "mcp-assay",
            "stopReason": "endTurn",
        }
    if method == "roots/list":
        return {"roots": []}
    return {"action": "decline"}


def _tampered(state: str) -> str:
    last = state[-1]
    return state[:-1] + ("A" if last != "A" else "B")


def _interim(reply: Reply) -> bool:
    return reply.ok and reply.result.get("resultType") == "input_required"


async def run(ctx: SuiteContext) -> None:
    if not ctx.tool_calls:
        ctx.skip(
            "no tool was called, so no multi round-trip request could be started",
            requirements=RETRY_REQUIREMENTS | cases.WITH_CAPABILITIES.feeds,
        )
        return
    interim: list[tuple[str, Mapping[str, Any], Mapping[str, Any], Reply]] = [
        (name, arguments, {}, reply) for name, arguments, reply in ctx.tool_calls if _interim(reply)
    ]
    for name, arguments, reply in ctx.tool_calls:
        if reply.error_code != ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY or reply.error is None:
            continue
        data = reply.error.get("data")
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        if not isinstance(required, dict):
            continue
        again = await call_tool(
            ctx, name, arguments, case=cases.WITH_CAPABILITIES,
            intent=f"tools/call {name} declaring the capabilities its -32021 asked for", capabilities=required,
        )  # fmt: skip
        if _interim(again):
            interim.append((name, arguments, required, again))
    if not interim:
        ctx.skip(
            "no tool the suite called asked for client input (no input_required result), "
            "so the retry cases could not run",
            requirements=RETRY_REQUIREMENTS,
        )
        return
    name, arguments, capabilities, reply = interim[0]
    result = reply.result
    requests = result.get("inputRequests") if isinstance(result.get("inputRequests"), dict) else {}
    state = result.get("requestState") if isinstance(result.get("requestState"), str) else None
    base: dict[str, Any] = {}
    if state is not None:
        base["requestState"] = state
    answers = {key: _answer(request) for key, request in requests.items()}
    if requests:
        await call_tool(
            ctx, name, arguments, case=cases.MRTR_INCOMPLETE_RETRY,
            capabilities=capabilities, extra={**base, "inputResponses": {}},
        )  # fmt: skip
    await call_tool(
        ctx, name, arguments, case=cases.MRTR_EXTRA_RESPONSES,
        capabilities=capabilities,
        extra={**base, "inputResponses": {**answers, "mcp-assay-extra": {"action": "cancel"}}},
    )  # fmt: skip
    await call_tool(
        ctx, name, arguments, case=cases.MRTR_MALFORMED_RESPONSES,
        capabilities=capabilities, extra={**base, "inputResponses": "mcp-assay"},
    )  # fmt: skip
    if state:
        await call_tool(
            ctx, name, arguments, case=cases.MRTR_TAMPERED_STATE,
            capabilities=capabilities, extra={"requestState": _tampered(state), "inputResponses": answers},
        )  # fmt: skip
    else:
        ctx.skip(
            "the input_required result carried no requestState to tamper with",
            requirements=cases.MRTR_TAMPERED_STATE.feeds,
        )


FAMILY = ProbeFamily(
    name="mrtr",
    cases=cases.CASES,
    run=run,
    eras=frozenset({Era.MODERN}),
    capability="tools",
    description="multi round-trip requests (input_required)",
)
