"""Elicitation in multi round-trip requests (MRTR-16..18): the 2026 form, and the retired 2025 one.

In 2026-07-28 a server asks for input only inside an ``input_required`` result: no server-sent
requests, no ``notifications/elicitation/complete``, no ``-32042`` and no ``elicitationId``;
each elicitation carries a message and, by mode, a ``requestedSchema`` or a URL. In 2025 a
``-32042`` error lists its URL elicitations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.mrtr._retries import INPUT_REQUEST_DEFS
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.reads import ANY_INPUT_REQUIRED
from mcp_assay.spec.rules.shared.server_features import is_input_required, is_uri
from mcp_assay.spec.toolschema import review_schema
from mcp_assay.vocabulary.protocol import ErrorCode
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message


@message_check(
    requirements="MRTR-16",
    level=Level.MUST_NOT,
    subject="server messages",
    features={"input_required"},
    sent_by=Side.SERVER,
    methods=ANY_INPUT_REQUIRED,
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
        if error_code(message) == ErrorCode.URL_ELICITATION_REQUIRED:
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
    subject="elicitation requests",
    features={"input_required"},
    sent_by=Side.SERVER,
    kinds={Kind.RESULT},
    methods=ANY_INPUT_REQUIRED,
)
def elicitation_requests_are_well_formed(message: Message, ctx: Context) -> Iterator[Finding] | None:
    """Elicitations carry a message; form mode a requestedSchema, URL mode mode "url" and a valid url."""
    if not is_input_required(message) or not isinstance(message.result, dict):
        return None  # most answers: nothing to judge, and no generator made for it
    return _elicitation_findings(message, message.result)


def _elicitation_findings(message: Message, result: dict[str, Any]) -> Iterator[Finding]:
    requests = result.get("inputRequests")
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


@message_check(
    requirements="MRTR-18",
    level=Level.MUST,
    subject="URL elicitation required errors",
    features={"url_elicitation_error"},
    sent_by=Side.SERVER,
    kinds={Kind.ERROR},
    methods=ANY_INPUT_REQUIRED,
)
def url_elicitation_errors_list_url_elicitations(message: Message, ctx: Context) -> Finding | None:
    """A -32042 error lists URL-mode elicitations in data.elicitations, each with an elicitationId (2025)."""
    if error_code(message) != ErrorCode.URL_ELICITATION_REQUIRED:
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
