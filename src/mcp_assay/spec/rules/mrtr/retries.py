"""Retries of multi round-trip requests (MRTR-07..15): how a client retries, and how a server answers.

A client retries with a fresh id, repeats the original request, echoes ``requestState`` exactly
and answers each input request with the right result shape; the state stays with the request
that produced it. A server asks again when input is still missing, ignores responses it did not
ask for, refuses malformed ones with ``-32602`` and rejects a tampered ``requestState``.

The active suite provokes the server-side rules with retries tagged ``mrtr-incomplete-retry``,
``mrtr-extra-responses``, ``mrtr-malformed-responses`` and ``mrtr-tampered-state``, and marks
them ``invalid`` so the client-side rules do not hold them against it. The same rules judge such
retries when a real client sends them.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.cases import mrtr as cases
from mcp_assay.spec.checks import Finding, failed, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.mrtr._retries import Original, is_retry, original_of, retry_and_original, target_of
from mcp_assay.spec.rules.shared.answers import expects_invalid_params, refused_at_envelope
from mcp_assay.spec.rules.shared.common import error_code, params_of
from mcp_assay.spec.rules.shared.reads import ANY_INPUT_REQUIRED
from mcp_assay.spec.rules.shared.selected import sent_as
from mcp_assay.spec.rules.shared.server_features import is_input_required
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message

INPUT_RESPONSE_DEFS = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}


_ANSWERS_TO_RETRIES: dict[str, Any] = {
    "features": {"input_required"}, "sent_by": Side.SERVER, "kinds": {Kind.RESULT, Kind.ERROR},
}  # fmt: skip
"""Gates of the rules judging a server's answers to retries."""

_RETRIES: dict[str, Any] = {
    "features": {"input_required"}, "sent_by": Side.CLIENT, "kinds": {Kind.REQUEST},
}  # fmt: skip
"""Gates of the rules judging a client's retries."""


def _provided(retry: Message) -> Any:
    return params_of(retry).get("inputResponses", MISSING)


def _answered_retry(message: Message, ctx: Context) -> tuple[Message, Original] | None:
    """For a server answer that did not refuse the envelope: the retry it answers and that retry's original."""
    return None if refused_at_envelope(message) else retry_and_original(message, ctx)


@message_check(
    requirements="MRTR-12",
    level=Level.SHOULD,
    subject="answers to incomplete retries",
    **_ANSWERS_TO_RETRIES,
    methods=ANY_INPUT_REQUIRED,
)
def incomplete_retries_get_a_new_input_required_result(message: Message, ctx: Context) -> Finding | None:
    """A retry lacking input the server still needs gets a new InputRequiredResult, not an error.

    Triggered by a retry whose ``inputResponses`` leaves out keys the original ``inputRequests``
    asked for (e.g. ``inputResponses: {}``), or one tagged ``mrtr-incomplete-retry``."""
    found = _answered_retry(message, ctx)
    if found is None:
        return None
    retry, original = found
    provided = _provided(retry)
    asked = set(original.input_requests or {})
    missing = asked - set(provided) if isinstance(provided, dict) else set()
    if not missing and not sent_as(retry, ctx, cases.MRTR_INCOMPLETE_RETRY):
        return None
    if is_input_required(message):
        return passed(message)
    if message.kind is Kind.ERROR:
        return failed(message, f"a retry without {sorted(missing)[:3] or 'all inputs'} got error {error_code(message)}")
    return None


@message_check(
    requirements="MRTR-13",
    level=Level.SHOULD,
    subject="answers to retries with extra inputResponses",
    **_ANSWERS_TO_RETRIES,
    methods=ANY_INPUT_REQUIRED,
)
def extra_input_responses_are_ignored(message: Message, ctx: Context) -> Finding | None:
    """inputResponses keys the server did not ask for are ignored, and the retry still goes through.

    Triggered by a retry that answers every requested key and adds others, or one tagged
    ``mrtr-extra-responses``."""
    found = _answered_retry(message, ctx)
    if found is None:
        return None
    retry, original = found
    provided = _provided(retry)
    if not isinstance(provided, dict):
        return None
    asked = set(original.input_requests or {})
    extra = set(provided) - asked
    complete = asked <= set(provided)
    if not (extra and complete) and not sent_as(retry, ctx, cases.MRTR_EXTRA_RESPONSES):
        return None
    if message.kind is Kind.ERROR:
        return failed(
            message, f"a retry with unrequested inputResponses {sorted(extra)[:3]} got error {error_code(message)}"
        )
    return passed(message)


def _malformed_responses(retry: Message, original: Original | None, ctx: Context) -> str | None:
    provided = _provided(retry)
    if provided is MISSING:
        return None
    if not isinstance(provided, dict):
        return f"inputResponses is a JSON {type(provided).__name__}, not an object"
    revision = ctx.revision(retry)
    asked = original.input_requests if original is not None else None
    if revision is None or asked is None:
        return None
    for key, value in provided.items():
        method = asked.get(key, {}).get("method") if isinstance(asked.get(key), dict) else None
        definition = INPUT_RESPONSE_DEFS.get(method) if isinstance(method, str) else None
        if definition is None:
            continue
        issues = revision.validator.validate_def(definition, value, prefix=f"params.inputResponses.{key}")
        if issues:
            return f"{issues[0].render()} (a {method} answer must be a {definition})"
    return None


@message_check(
    requirements="MRTR-14",
    level=Level.SHOULD,
    subject="answers to malformed inputResponses",
    **_ANSWERS_TO_RETRIES,
    methods=ANY_INPUT_REQUIRED,
)
def malformed_input_responses_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A retry whose inputResponses is malformed (not an object, wrong answer shapes) gets -32602.

    Triggered by a retry whose ``inputResponses`` is not an object or answers a request with the
    wrong result shape, or one tagged ``mrtr-malformed-responses``."""
    request = ctx.log.request_of(message)
    if request is None or not is_retry(request) or refused_at_envelope(message):
        return None
    original = original_of(request, ctx)
    reason = _malformed_responses(request, original if original is None or original.same_request else None, ctx)
    if reason is None and not sent_as(request, ctx, cases.MRTR_MALFORMED_RESPONSES):
        return None
    reason = reason or "the probe's malformed inputResponses"
    answered = f"a retry with malformed inputResponses ({reason}) was answered with a result"[:400]
    return expects_invalid_params(message, "a retry with malformed inputResponses", on_result=answered)


@message_check(
    requirements="MRTR-15",
    level=Level.MUST,
    subject="answers to retries with a tampered requestState",
    **_ANSWERS_TO_RETRIES,
    methods=ANY_INPUT_REQUIRED,
)
def tampered_request_state_is_rejected(message: Message, ctx: Context) -> Finding | None:
    """A retry whose requestState was altered is rejected (an error or a fresh InputRequiredResult).

    Triggered by a retry whose ``requestState`` differs from the one its original's answer issued,
    or one tagged ``mrtr-tampered-state``."""
    found = _answered_retry(message, ctx)
    if found is None:
        return None
    retry, original = found
    issued = original.result.get("requestState")
    sent = params_of(retry).get("requestState")
    tampered = isinstance(issued, str) and isinstance(sent, str) and sent != issued
    if not tampered and not sent_as(retry, ctx, cases.MRTR_TAMPERED_STATE):
        return None
    result = message.result
    if message.kind is Kind.RESULT and not is_input_required(message):
        if not (isinstance(result, dict) and result.get("isError") is True):
            return failed(message, "a retry with a tampered requestState completed as if the state were genuine")
    return passed(message)


def _retry_subject(message: Message, ctx: Context) -> Original | None:
    if not is_retry(message):
        return None
    original = original_of(message, ctx)
    return original if original is not None and original.same_request else None


@message_check(requirements="MRTR-07", level=Level.MUST, subject="retries", **_RETRIES, methods=ANY_INPUT_REQUIRED)
def retries_echo_request_state_exactly(message: Message, ctx: Context) -> Finding | None:
    """A retry returns requestState exactly as issued, and carries none when none was issued."""
    original = _retry_subject(message, ctx)
    if original is None:
        return None
    issued = original.result.get("requestState", MISSING)
    sent = params_of(message).get("requestState", MISSING)
    if issued is MISSING and sent is not MISSING:
        return failed(message, "the retry carries a requestState although the server issued none")
    if issued is not MISSING and sent != issued:
        what = "omits it" if sent is MISSING else "changed it"
        return failed(message, f"the server issued a requestState but the retry {what}")
    return passed(message)


@message_check(requirements="MRTR-08", level=Level.MUST, subject="retries", **_RETRIES, methods=ANY_INPUT_REQUIRED)
def retries_use_a_fresh_id(message: Message, ctx: Context) -> Finding | None:
    """A retry uses a JSON-RPC id different from the original request's."""
    original = _retry_subject(message, ctx)
    if original is None:
        return None
    if message.id_key == original.request.id_key:
        return failed(message, f"the retry reuses id {message.id!r} of the request it retries")
    return passed(message)


@message_check(requirements="MRTR-09", level=Level.MUST, subject="retries", **_RETRIES, methods=ANY_INPUT_REQUIRED)
def retries_repeat_the_original_request(message: Message, ctx: Context) -> Finding | None:
    """A retry repeats the original method, name or uri, and arguments, adding only inputResponses and requestState."""
    original = _retry_subject(message, ctx)
    if original is None:
        return None
    before = params_of(original.request).get("arguments", MISSING)
    after = params_of(message).get("arguments", MISSING)
    if before != after:
        return failed(message, "the retry's arguments differ from the original request's")
    return passed(message)


@message_check(
    requirements="MRTR-10",
    level=Level.MUST,
    subject="retries answering inputRequests",
    **_RETRIES,
    methods=ANY_INPUT_REQUIRED,
)
def input_responses_match_their_requests(message: Message, ctx: Context) -> Finding | None:
    """Each inputResponses entry has the result shape of the input request it answers.

    ElicitResult for elicitation/create, CreateMessageResult for sampling/createMessage,
    ListRootsResult for roots/list. Keys left unanswered are not failed here: the server may
    simply ask again (MRTR-12)."""
    original = _retry_subject(message, ctx)
    if original is None or original.input_requests is None or "inputResponses" not in params_of(message):
        return None
    reason = _malformed_responses(message, original, ctx)
    if reason is not None:
        return failed(message, reason)
    return passed(message)


@message_check(
    requirements="MRTR-11",
    level=Level.MUST_NOT,
    subject="requests carrying requestState or inputResponses",
    **_RETRIES,
    methods=ANY_INPUT_REQUIRED,
)
def request_state_stays_with_its_request(message: Message, ctx: Context) -> Finding | None:
    """requestState and inputResponses appear only on the retry of the request that produced them."""
    if not is_retry(message):
        return None
    original = original_of(message, ctx)
    if original is None:
        return unverified("no input_required answer matching this retry was captured", message)
    if original.same_request:
        return passed(message)
    issued_to = f"{original.request.method} {target_of(original.request)!r}"
    return failed(message, f"{message.method} carries the requestState issued to {issued_to}"[:300])
