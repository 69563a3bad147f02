"""Multi round-trip requests (MRTR-01..06): what an ``input_required`` result may ask for.

Only ``tools/call``, ``resources/read`` and ``prompts/get`` may be answered with an
``InputRequiredResult``; it asks for something (``inputRequests``, ``requestState`` or both),
its embedded requests are well formed under unique keys, and it never asks for input the
request's ``clientCapabilities`` do not cover: lacking a capability, a server answers ``-32021``
or completes. The active suite provokes the capability rule by calling again, declaring the capabilities
a ``-32021`` asked for, a tool that answered one (``with-capabilities``).
"""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.spec.checks import Finding, failed, message_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.mrtr._retries import INPUT_REQUEST_DEFS, MRTR_METHODS
from mcp_assay.spec.rules.shared.common import error_code, http_exchange
from mcp_assay.spec.rules.shared.envelopes import client_capabilities
from mcp_assay.spec.rules.shared.reads import ANY_INPUT_REQUIRED
from mcp_assay.spec.rules.shared.server_features import answered_method, is_input_required
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message

_INPUT_REQUIRED_RESULTS: dict[str, Any] = {
    "features": {"input_required"}, "sent_by": Side.SERVER, "kinds": {Kind.RESULT},
}  # fmt: skip
"""Gates of the rules judging a server's results (the ``input_required`` ones among them)."""


def _uncovered(input_request: Any, caps: dict[str, Any]) -> str | None:
    """The client capability an input request needs that ``caps`` does not declare."""
    if not isinstance(input_request, dict):
        return None
    method = input_request.get("method")
    raw_params = input_request.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    if method == "elicitation/create":
        elicitation = caps.get("elicitation")
        if not isinstance(elicitation, dict):
            return "elicitation"
        if params.get("mode") == "url":
            return None if "url" in elicitation else "elicitation.url"
        form = "form" in elicitation or not ({"form", "url"} & set(elicitation))
        return None if form else "elicitation.form"
    if method == "sampling/createMessage":
        sampling = caps.get("sampling")
        if not isinstance(sampling, dict):
            return "sampling"
        if ("tools" in params or "toolChoice" in params) and "tools" not in sampling:
            return "sampling.tools"
        return None
    if method == "roots/list":
        return None if "roots" in caps else "roots"
    return None


def _uncovered_requests(answer: Message, request: Message) -> list[str] | None:
    caps = client_capabilities(request)
    result = answer.result if isinstance(answer.result, dict) else {}
    requests = result.get("inputRequests")
    if caps is None:
        return None
    found = []
    for key, value in requests.items() if isinstance(requests, dict) else []:
        need = _uncovered(value, caps)
        if need is not None:
            found.append(f"{key!r} needs {need}")
    return found


def _asked(message: Message) -> dict[str, Any] | None:
    """The result of an input_required answer (``None`` for any other message, or a result that is no object)."""
    return message.result if is_input_required(message) and isinstance(message.result, dict) else None


def _input_required_answer(message: Message, ctx: Context) -> Message | None:
    """The request an input_required answer replies to."""
    return ctx.log.request_of(message) if _asked(message) is not None else None


@message_check(
    requirements="MRTR-01",
    level=Level.MUST_NOT,
    subject="input_required results",
    **_INPUT_REQUIRED_RESULTS,
    methods=ANY_INPUT_REQUIRED,
)
def input_required_only_answers_supported_methods(message: Message, ctx: Context) -> Finding | None:
    """resultType "input_required" answers only tools/call, resources/read and prompts/get."""
    if not is_input_required(message):
        return None
    answered = answered_method(message, ctx)
    if answered is None:
        return unverified("the request this input_required result answers was not captured", message)
    revision = ctx.revision(message)
    allowed = (revision.validator.input_required_methods if revision is not None else None) or MRTR_METHODS
    if answered[1] in allowed:
        return passed(message)
    return failed(message, f"{answered[1]} was answered with resultType input_required")


@message_check(
    requirements="MRTR-02",
    level=Level.MUST,
    subject="input_required results",
    **_INPUT_REQUIRED_RESULTS,
    methods=ANY_INPUT_REQUIRED,
)
def input_required_results_ask_for_something(message: Message, ctx: Context) -> Finding | None:
    """An InputRequiredResult carries inputRequests, requestState, or both."""
    result = _asked(message)
    if result is None:
        return None
    if "inputRequests" in result or "requestState" in result:
        return passed(message)
    return failed(message, "an input_required result carries neither inputRequests nor requestState")


@message_check(
    requirements="MRTR-03",
    level=Level.MUST,
    subject="input_required results",
    **_INPUT_REQUIRED_RESULTS,
    methods=ANY_INPUT_REQUIRED,
)
def input_requests_are_well_formed(message: Message, ctx: Context) -> Finding | None:
    """Each inputRequests value is an embedded elicitation, sampling or roots request; requestState is a string."""
    revision = ctx.revision(message)
    result = _asked(message)
    if result is None or revision is None:
        return None
    problems: list[str] = []
    if "requestState" in result and not isinstance(result["requestState"], str):
        problems.append("requestState is not a string")
    requests = result.get("inputRequests", {})
    if not isinstance(requests, dict):
        problems.append("inputRequests is not an object")
        requests = {}
    for key, value in requests.items():
        where = f"result.inputRequests.{key}"
        method = value.get("method") if isinstance(value, dict) else None
        definition = INPUT_REQUEST_DEFS.get(method) if isinstance(method, str) else None
        if definition is None:
            problems.append(
                f"{where}: {json.dumps(method)} is not elicitation/create, sampling/createMessage or roots/list"
            )
            continue
        extra = sorted({"jsonrpc", "id"} & set(value))
        if extra:
            problems.append(f"{where} carries {', '.join(extra)}, which embedded requests must not")
        problems.extend(issue.render() for issue in revision.validator.validate_def(definition, value, prefix=where))
    if problems:
        return failed(message, "; ".join(problems[:4])[:600])
    return passed(message)


def _duplicate_input_keys(raw: bytes) -> list[str]:
    duplicates: dict[int, list[str]] = {}

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        repeated = []
        for key, value in pairs:
            if key in obj:
                repeated.append(key)
            obj[key] = value
        if repeated:
            duplicates[id(obj)] = repeated
        return obj

    try:
        payload = json.loads(raw, object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return []
    result = payload.get("result") if isinstance(payload, dict) else None
    requests = result.get("inputRequests") if isinstance(result, dict) else None
    return duplicates.get(id(requests), []) if isinstance(requests, dict) else []


@message_check(
    requirements="MRTR-04",
    level=Level.MUST,
    subject="input_required results with inputRequests",
    **_INPUT_REQUIRED_RESULTS,
    methods=ANY_INPUT_REQUIRED,
)
def input_request_keys_are_unique(message: Message, ctx: Context) -> Finding | None:
    """Keys inside one inputRequests object never repeat (judged on the raw JSON text)."""
    result = _asked(message)
    if result is None or "inputRequests" not in result:
        return None
    repeated = _duplicate_input_keys(message.raw) if any(p.code == "duplicate-keys" for p in message.problems) else []
    if repeated:
        return failed(message, f"inputRequests repeats the key(s) {', '.join(map(repr, sorted(set(repeated))))}")
    return passed(message)


@message_check(
    requirements="MRTR-05",
    level=Level.MUST_NOT,
    subject="input_required results with inputRequests",
    **_INPUT_REQUIRED_RESULTS,
    methods=ANY_INPUT_REQUIRED,
)
def input_requests_stay_within_client_capabilities(message: Message, ctx: Context) -> Finding | None:
    """A server asks only for input the original request's clientCapabilities cover."""
    request = _input_required_answer(message, ctx)
    if request is None or "inputRequests" not in message.result:
        return None
    uncovered = _uncovered_requests(message, request)
    if uncovered is None:
        return unverified("the request carried no clientCapabilities to compare with", message)
    if uncovered:
        return failed(message, f"input requested beyond the client's capabilities: {'; '.join(uncovered[:3])}")
    return passed(message)


@message_check(
    requirements="MRTR-06",
    level=Level.MUST,
    subject="answers needing a capability the client lacks",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
    methods=ANY_INPUT_REQUIRED,
)
def missing_capabilities_get_minus_32021_or_a_completion(message: Message, ctx: Context) -> Finding | None:
    """Lacking a client capability it needs, a server answers -32021 (with data.requiredCapabilities) or completes.

    Triggered by every ``-32021`` answer and every ``input_required`` answer to a request whose
    ``clientCapabilities`` do not cover what is asked (a completion says nothing either way)."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] not in MRTR_METHODS:
        return None
    request = answered[0]
    if message.kind is Kind.ERROR:
        if error_code(message) != ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY:
            return None
        data = message.error.get("data") if isinstance(message.error, dict) else None
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        if not isinstance(required, dict):
            return failed(message, "-32021 carries no data.requiredCapabilities object")
        exchange = http_exchange(message, ctx)
        if exchange is not None and exchange.response is not None and exchange.response.status != 400:
            return failed(message, f"-32021 came with HTTP {exchange.response.status}, not 400")
        return passed(message)
    if is_input_required(message):
        uncovered = _uncovered_requests(message, request)
        if uncovered:
            return failed(
                message,
                f"instead of -32021 or a completion, the server asked for input the client cannot give: {uncovered[0]}",
            )
        return None
    return None
