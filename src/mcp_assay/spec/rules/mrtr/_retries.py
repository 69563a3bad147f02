"""Multi round-trip requests: which client request is a retry, and which earlier attempt it answers.

In 2026-07-28 a server that needs input answers ``tools/call``, ``resources/read`` or
``prompts/get`` with an ``InputRequiredResult``; the client retries the same request with
``inputResponses`` and the ``requestState`` it was given. A *retry* here is a client request that
carries either member; its *original* is the earlier request whose ``input_required`` answer
issued that ``requestState`` (or, without one, the latest such request with the same method and
the same ``name``/``uri``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.pagination import first_answer, server_key
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.server_features import is_input_required
from mcp_assay.vocabulary.verdicts import Side
from mcp_assay.wire.jsonrpc import Kind, Message

__all__ = [
    "INPUT_REQUEST_DEFS",
    "MRTR_METHODS",
    "Original",
    "is_retry",
    "original_of",
    "retry_and_original",
    "target_of",
]

MRTR_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})
INPUT_REQUEST_DEFS = {
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}


def target_of(message: Message) -> Any:
    params = params_of(message)
    return params.get("uri") if message.method == "resources/read" else params.get("name")


def is_retry(message: Message) -> bool:
    params = params_of(message)
    return message.kind is Kind.REQUEST and ("inputResponses" in params or "requestState" in params)


def _input_required_pairs(ctx: Context) -> list[tuple[Message, Message]]:
    """(client request, its input_required answer) in time order."""
    return ctx.view(_find_input_required_pairs)


def _find_input_required_pairs(ctx: Context) -> list[tuple[Message, Message]]:
    pairs = []
    for message in ctx.log.messages():
        if message.kind is Kind.REQUEST and message.sender is Side.CLIENT and message.method in MRTR_METHODS:
            answer = first_answer(message, ctx)
            if answer is not None and is_input_required(answer) and isinstance(answer.result, dict):
                pairs.append((message, answer))
    return pairs


@dataclass(frozen=True)
class Original:
    """The earlier attempt a retry answers."""

    request: Message
    answer: Message
    same_request: bool
    """Same method and same name/uri as the retry (otherwise the state was carried to another request)."""

    @property
    def result(self) -> dict[str, Any]:
        return self.answer.result if isinstance(self.answer.result, dict) else {}

    @property
    def input_requests(self) -> dict[str, Any] | None:
        value = self.result.get("inputRequests")
        return value if isinstance(value, dict) else None


def original_of(retry: Message, ctx: Context) -> Original | None:
    key = server_key(retry, ctx)
    candidates = [
        (request, answer)
        for request, answer in _input_required_pairs(ctx)
        if request is not retry and answer.time <= retry.time and server_key(request, ctx) == key
    ]
    state = params_of(retry).get("requestState")
    if isinstance(state, str):
        by_state = [pair for pair in candidates if pair[1].result.get("requestState") == state]
        if by_state:
            request, answer = by_state[-1]
            same = request.method == retry.method and target_of(request) == target_of(retry)
            return Original(request, answer, same)
    same_target = [
        pair for pair in candidates if pair[0].method == retry.method and target_of(pair[0]) == target_of(retry)
    ]
    if same_target:
        return Original(*same_target[-1], True)
    return None


def retry_and_original(message: Message, ctx: Context) -> tuple[Message, Original] | None:
    """For a server answer: the retry it answers and that retry's original (same request only)."""
    request = ctx.log.request_of(message)
    if request is None or not is_retry(request):
        return None
    original = original_of(request, ctx)
    if original is None or not original.same_request:
        return None
    return request, original
