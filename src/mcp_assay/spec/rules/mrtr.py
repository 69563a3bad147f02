"""Multi round-trip requests (MRTR-): ``input_required`` results, retries, and the 2025 leftovers.

In 2026-07-28 a server that needs input answers ``tools/call``, ``resources/read`` or
``prompts/get`` with an ``InputRequiredResult``; the client retries the same request with
``inputResponses`` and the ``requestState`` it was given. A *retry* here is a client request that
carries either member; its *original* is the earlier request whose ``input_required`` answer
issued that ``requestState`` (or, without one, the latest such request with the same method and
the same ``name``/``uri``).

The active suite provokes the server-side rules with retries tagged ``mrtr-incomplete-retry``,
``mrtr-extra-responses``, ``mrtr-malformed-responses`` and ``mrtr-tampered-state``, and the
capability rule with ``mrtr-missing-capability``; it marks them ``invalid`` so the client-side
rules do not hold them against it. The same rules judge such retries when a real client sends them.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp_assay.checks import Context, Finding, failed, message_check, passed, unverified
from mcp_assay.jsonrpc import MISSING, Kind, Message
from mcp_assay.spec.rules._common import error_code, http_exchange
from mcp_assay.spec.rules._server_features import ENVELOPE_CODES, answered_method, is_input_required, is_uri
from mcp_assay.spec.rules.channels import probe_named
from mcp_assay.spec.rules.pagination import first_answer, server_key
from mcp_assay.spec.toolschema import review_schema
from mcp_assay.traffic import ExchangeLog
from mcp_assay.verdicts import Level, Side

MRTR_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})
INPUT_REQUEST_DEFS = {
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}
INPUT_RESPONSE_DEFS = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"


# -- helpers -------------------------------------------------------------------------------------
def _params(message: Message) -> dict[str, Any]:
    return message.params if isinstance(message.params, dict) else {}


def _target(message: Message) -> Any:
    params = _params(message)
    return params.get("uri") if message.method == "resources/read" else params.get("name")


def is_retry(message: Message) -> bool:
    params = _params(message)
    return message.kind is Kind.REQUEST and ("inputResponses" in params or "requestState" in params)


_PAIRS: weakref.WeakKeyDictionary[ExchangeLog, tuple[int, list[tuple[Message, Message]]]] = weakref.WeakKeyDictionary()


def _input_required_pairs(ctx: Context) -> list[tuple[Message, Message]]:
    """(client request, its input_required answer) in time order."""
    cached = _PAIRS.get(ctx.log)
    if cached is None or cached[0] != len(ctx.log):
        pairs = []
        for message in ctx.log.messages():
            if message.kind is Kind.REQUEST and message.sender is Side.CLIENT and message.method in MRTR_METHODS:
                answer = first_answer(message, ctx)
                if answer is not None and is_input_required(answer) and isinstance(answer.result, dict):
                    pairs.append((message, answer))
        cached = (len(ctx.log), pairs)
        _PAIRS[ctx.log] = cached
    return cached[1]


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
    state = _params(retry).get("requestState")
    if isinstance(state, str):
        by_state = [pair for pair in candidates if pair[1].result.get("requestState") == state]
        if by_state:
            request, answer = by_state[-1]
            same = request.method == retry.method and _target(request) == _target(retry)
            return Original(request, answer, same)
    same_target = [pair for pair in candidates if pair[0].method == retry.method and _target(pair[0]) == _target(retry)]
    if same_target:
        return Original(*same_target[-1], True)
    return None


def _retry_and_original(message: Message, ctx: Context) -> tuple[Message, Original] | None:
    """For a server answer: the retry it answers and that retry's original (same request only)."""
    request = ctx.log.request_of(message)
    if request is None or not is_retry(request):
        return None
    original = original_of(request, ctx)
    if original is None or not original.same_request:
        return None
    return request, original


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


def _client_capabilities(request: Message) -> dict[str, Any] | None:
    meta = _params(request).get("_meta")
    caps = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return caps if isinstance(caps, dict) else None


def _uncovered_requests(answer: Message, request: Message) -> list[str] | None:
    caps = _client_capabilities(request)
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


def _input_required_answer(message: Message, ctx: Context) -> Message | None:
    """The request an input_required answer replies to."""
    if not is_input_required(message) or not isinstance(message.result, dict):
        return None
    return ctx.log.request_of(message)


# -- server rules --------------------------------------------------------------------------------
@message_check(
    requirements="MRTR-01",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="input_required results",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
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
    side=Side.SERVER,
    subject="input_required results",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def input_required_results_ask_for_something(message: Message, ctx: Context) -> Finding | None:
    """An InputRequiredResult carries inputRequests, requestState, or both."""
    if not is_input_required(message) or not isinstance(message.result, dict):
        return None
    if "inputRequests" in message.result or "requestState" in message.result:
        return passed(message)
    return failed(message, "an input_required result carries neither inputRequests nor requestState")


@message_check(
    requirements="MRTR-03",
    level=Level.MUST,
    side=Side.SERVER,
    subject="input_required results",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def input_requests_are_well_formed(message: Message, ctx: Context) -> Finding | None:
    """Each inputRequests value is an embedded elicitation, sampling or roots request; requestState is a string."""
    revision = ctx.revision(message)
    if not is_input_required(message) or not isinstance(message.result, dict) or revision is None:
        return None
    result = message.result
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
    side=Side.SERVER,
    subject="input_required results with inputRequests",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def input_request_keys_are_unique(message: Message, ctx: Context) -> Finding | None:
    """Keys inside one inputRequests object never repeat (judged on the raw JSON text)."""
    if not is_input_required(message) or not isinstance(message.result, dict):
        return None
    if "inputRequests" not in message.result:
        return None
    repeated = _duplicate_input_keys(message.raw) if any(p.code == "duplicate-keys" for p in message.problems) else []
    if repeated:
        return failed(message, f"inputRequests repeats the key(s) {', '.join(map(repr, sorted(set(repeated))))}")
    return passed(message)


@message_check(
    requirements="MRTR-05",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="input_required results with inputRequests",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
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
    side=Side.SERVER,
    subject="answers needing a capability the client lacks",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
)
def missing_capabilities_get_minus_32021_or_a_completion(message: Message, ctx: Context) -> Finding | None:
    """Lacking a client capability it needs, a server answers -32021 (with data.requiredCapabilities) or completes.

    Triggered by every ``-32021`` answer and every ``input_required`` answer to a request whose
    ``clientCapabilities`` do not cover what is asked; the active suite provokes it by calling the
    input-needing tool or prompt with ``clientCapabilities: {}`` (probe name
    ``mrtr-missing-capability``)."""
    answered = answered_method(message, ctx)
    if answered is None or answered[1] not in MRTR_METHODS:
        return None
    request = answered[0]
    if message.kind is Kind.ERROR:
        if error_code(message) != -32021:
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
    if probe_named(request, ctx, "mrtr-missing-capability"):
        return passed(message)
    return None


@message_check(
    requirements="MRTR-16",
    level=Level.MUST_NOT,
    side=Side.SERVER,
    subject="server messages",
    features={"input_required"},
    sent_by=Side.SERVER,
)
def retired_elicitation_mechanisms_are_not_used(message: Message, ctx: Context) -> Finding | None:
    """No notifications/elicitation/complete, -32042, elicitationId in URL elicitations, or server-sent requests."""
    if message.kind is Kind.NOTIFICATION:
        if message.method == "notifications/elicitation/complete":
            return failed(message, "the server sent notifications/elicitation/complete, retired in 2026-07-28")
        return passed(message)
    if message.kind is Kind.REQUEST:
        if message.method in INPUT_REQUEST_DEFS:
            return failed(message, f"the server sent a {message.method} request instead of an input_required result")
        return None
    if message.kind is Kind.ERROR:
        if error_code(message) == -32042:
            return failed(message, "the server answered -32042 (URLElicitationRequiredError), retired in 2026-07-28")
        return None
    if is_input_required(message) and isinstance(message.result, dict):
        requests = message.result.get("inputRequests")
        for key, value in requests.items() if isinstance(requests, dict) else []:
            params = value.get("params") if isinstance(value, dict) else None
            if isinstance(params, dict) and params.get("mode") == "url" and "elicitationId" in params:
                return failed(message, f"the URL elicitation {key!r} carries elicitationId, retired in 2026-07-28")
        return passed(message)
    return None


@message_check(
    requirements="MRTR-17",
    level=Level.MUST,
    side=Side.SERVER,
    subject="elicitation requests",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
)
def elicitation_requests_are_well_formed(message: Message, ctx: Context) -> Iterator[Finding]:
    """Elicitations carry a message; form mode a requestedSchema, URL mode mode "url" and a valid url."""
    if not is_input_required(message) or not isinstance(message.result, dict):
        return
    requests = message.result.get("inputRequests")
    for key, value in requests.items() if isinstance(requests, dict) else []:
        if not isinstance(value, dict) or value.get("method") != "elicitation/create":
            continue
        params = value.get("params")
        if not isinstance(params, dict):
            yield failed(message, f"elicitation {key!r} has no params object")
            continue
        problems = []
        if not isinstance(params.get("message"), str):
            problems.append("no message")
        mode = params.get("mode", "form")
        if mode == "url":
            url = params.get("url")
            if not is_uri(url):
                problems.append(f"url {url!r} is not a valid URL"[:120])
        elif mode == "form":
            schema = params.get("requestedSchema")
            if not isinstance(schema, dict):
                problems.append("form mode without a requestedSchema object")
            else:
                review = review_schema(schema)
                if review.problems:
                    problems.append(f"requestedSchema is invalid: {review.problems[0]}")
        else:
            problems.append(f"mode {mode!r} is neither form nor url"[:80])
        yield failed(message, f"elicitation {key!r}: {'; '.join(problems)}") if problems else passed(message)


def _provided(retry: Message) -> Any:
    return _params(retry).get("inputResponses", MISSING)


def _refused_at_envelope(message: Message) -> bool:
    return message.kind is Kind.ERROR and error_code(message) in ENVELOPE_CODES


@message_check(
    requirements="MRTR-12",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="answers to incomplete retries",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
)
def incomplete_retries_get_a_new_input_required_result(message: Message, ctx: Context) -> Finding | None:
    """A retry lacking input the server still needs gets a new InputRequiredResult, not an error.

    Triggered by a retry whose ``inputResponses`` leaves out keys the original ``inputRequests``
    asked for (e.g. ``inputResponses: {}``), or one tagged ``mrtr-incomplete-retry``."""
    found = _retry_and_original(message, ctx)
    if found is None or _refused_at_envelope(message):
        return None
    retry, original = found
    provided = _provided(retry)
    asked = set(original.input_requests or {})
    missing = asked - set(provided) if isinstance(provided, dict) else set()
    if not missing and not probe_named(retry, ctx, "mrtr-incomplete-retry"):
        return None
    if is_input_required(message):
        return passed(message)
    if message.kind is Kind.ERROR:
        return failed(message, f"a retry without {sorted(missing)[:3] or 'all inputs'} got error {error_code(message)}")
    return None


@message_check(
    requirements="MRTR-13",
    level=Level.SHOULD,
    side=Side.SERVER,
    subject="answers to retries with extra inputResponses",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
)
def extra_input_responses_are_ignored(message: Message, ctx: Context) -> Finding | None:
    """inputResponses keys the server did not ask for are ignored, and the retry still goes through.

    Triggered by a retry that answers every requested key and adds others, or one tagged
    ``mrtr-extra-responses``."""
    found = _retry_and_original(message, ctx)
    if found is None or _refused_at_envelope(message):
        return None
    retry, original = found
    provided = _provided(retry)
    if not isinstance(provided, dict):
        return None
    asked = set(original.input_requests or {})
    extra = set(provided) - asked
    complete = asked <= set(provided)
    if not (extra and complete) and not probe_named(retry, ctx, "mrtr-extra-responses"):
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
    side=Side.SERVER,
    subject="answers to malformed inputResponses",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
)
def malformed_input_responses_get_invalid_params(message: Message, ctx: Context) -> Finding | None:
    """A retry whose inputResponses is malformed (not an object, wrong answer shapes) gets -32602.

    Triggered by a retry whose ``inputResponses`` is not an object or answers a request with the
    wrong result shape, or one tagged ``mrtr-malformed-responses``."""
    request = ctx.log.request_of(message)
    if request is None or not is_retry(request) or _refused_at_envelope(message):
        return None
    original = original_of(request, ctx)
    reason = _malformed_responses(request, original if original is None or original.same_request else None, ctx)
    if reason is None and not probe_named(request, ctx, "mrtr-malformed-responses"):
        return None
    reason = reason or "the probe's malformed inputResponses"
    if message.kind is Kind.RESULT:
        return failed(message, f"a retry with malformed inputResponses ({reason}) was answered with a result"[:400])
    code = error_code(message)
    if code == -32602:
        return passed(message)
    return failed(message, f"a retry with malformed inputResponses got code {code}, expected -32602")


@message_check(
    requirements="MRTR-15",
    level=Level.MUST,
    side=Side.SERVER,
    subject="answers to retries with a tampered requestState",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT, Kind.ERROR},
)
def tampered_request_state_is_rejected(message: Message, ctx: Context) -> Finding | None:
    """A retry whose requestState was altered is rejected (an error or a fresh InputRequiredResult).

    Triggered by a retry whose ``requestState`` differs from the one its original's answer issued,
    or one tagged ``mrtr-tampered-state``."""
    found = _retry_and_original(message, ctx)
    if found is None or _refused_at_envelope(message):
        return None
    retry, original = found
    issued = original.result.get("requestState")
    sent = _params(retry).get("requestState")
    tampered = isinstance(issued, str) and isinstance(sent, str) and sent != issued
    if not tampered and not probe_named(retry, ctx, "mrtr-tampered-state"):
        return None
    result = message.result
    if message.kind is Kind.RESULT and not is_input_required(message):
        if not (isinstance(result, dict) and result.get("isError") is True):
            return failed(message, "a retry with a tampered requestState completed as if the state were genuine")
    return passed(message)


# -- client rules --------------------------------------------------------------------------------
def _retry_subject(message: Message, ctx: Context) -> Original | None:
    if not is_retry(message):
        return None
    original = original_of(message, ctx)
    return original if original is not None and original.same_request else None


@message_check(
    requirements="MRTR-07",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="retries",
    features={"input_required"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
)
def retries_echo_request_state_exactly(message: Message, ctx: Context) -> Finding | None:
    """A retry returns requestState exactly as issued, and carries none when none was issued."""
    original = _retry_subject(message, ctx)
    if original is None:
        return None
    issued = original.result.get("requestState", MISSING)
    sent = _params(message).get("requestState", MISSING)
    if issued is MISSING and sent is not MISSING:
        return failed(message, "the retry carries a requestState although the server issued none")
    if issued is not MISSING and sent != issued:
        what = "omits it" if sent is MISSING else "changed it"
        return failed(message, f"the server issued a requestState but the retry {what}")
    return passed(message)


@message_check(
    requirements="MRTR-08",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="retries",
    features={"input_required"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
)
def retries_use_a_fresh_id(message: Message, ctx: Context) -> Finding | None:
    """A retry uses a JSON-RPC id different from the original request's."""
    original = _retry_subject(message, ctx)
    if original is None:
        return None
    if message.id_key == original.request.id_key:
        return failed(message, f"the retry reuses id {message.id!r} of the request it retries")
    return passed(message)


@message_check(
    requirements="MRTR-09",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="retries",
    features={"input_required"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
)
def retries_repeat_the_original_request(message: Message, ctx: Context) -> Finding | None:
    """A retry repeats the original method, name or uri, and arguments, adding only inputResponses and requestState."""
    original = _retry_subject(message, ctx)
    if original is None:
        return None
    before = _params(original.request).get("arguments", MISSING)
    after = _params(message).get("arguments", MISSING)
    if before != after:
        return failed(message, "the retry's arguments differ from the original request's")
    return passed(message)


@message_check(
    requirements="MRTR-10",
    level=Level.MUST,
    side=Side.CLIENT,
    subject="retries answering inputRequests",
    features={"input_required"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
)
def input_responses_match_their_requests(message: Message, ctx: Context) -> Finding | None:
    """Each inputResponses entry has the result shape of the input request it answers.

    ElicitResult for elicitation/create, CreateMessageResult for sampling/createMessage,
    ListRootsResult for roots/list. Keys left unanswered are not failed here: the server may
    simply ask again (MRTR-12)."""
    original = _retry_subject(message, ctx)
    if original is None or original.input_requests is None or "inputResponses" not in _params(message):
        return None
    reason = _malformed_responses(message, original, ctx)
    if reason is not None:
        return failed(message, reason)
    return passed(message)


@message_check(
    requirements="MRTR-11",
    level=Level.MUST_NOT,
    side=Side.CLIENT,
    subject="requests carrying requestState or inputResponses",
    features={"input_required"},
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST},
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
    return failed(
        message,
        f"{message.method} carries the requestState issued to {original.request.method} {_target(original.request)!r}"[
            :300
        ],
    )


# -- 2025 ----------------------------------------------------------------------------------------
@message_check(
    requirements="MRTR-18",
    level=Level.MUST,
    side=Side.SERVER,
    subject="URL elicitation required errors",
    features={"url_elicitation_error"},
    sent_by=Side.SERVER,
    kinds={Kind.ERROR},
)
def url_elicitation_errors_list_url_elicitations(message: Message, ctx: Context) -> Finding | None:
    """A -32042 error lists URL-mode elicitations in data.elicitations, each with an elicitationId (2025)."""
    if error_code(message) != -32042:
        return None
    data = message.error.get("data") if isinstance(message.error, dict) else None
    elicitations = data.get("elicitations") if isinstance(data, dict) else None
    if not isinstance(elicitations, list) or not elicitations:
        return failed(message, "-32042 carries no data.elicitations list")
    for position, item in enumerate(elicitations):
        if not isinstance(item, dict):
            return failed(message, f"data.elicitations[{position}] is not an object")
        problems = []
        if item.get("mode") != "url":
            problems.append(f'mode is {json.dumps(item.get("mode"))}, not "url"')
        if not isinstance(item.get("elicitationId"), str):
            problems.append("no elicitationId")
        if not is_uri(item.get("url")):
            problems.append("no valid url")
        if not isinstance(item.get("message"), str):
            problems.append("no message")
        if problems:
            return failed(message, f"data.elicitations[{position}]: {', '.join(problems)}")
    return passed(message)
