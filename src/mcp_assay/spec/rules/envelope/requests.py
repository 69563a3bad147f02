"""The request envelope (META-01..04, 09, 10): what every 2026 request carries besides its method.

A 2026-07-28 request names its protocol version and the client's capabilities in
``params._meta`` and should say which client sent it. The server side of the envelope is judged
too: a ``-32021`` must name capabilities the request really lacked, and the self-reported
``clientInfo`` must not change what a server answers.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from mcp_assay.spec.checks import Finding, failed, log_check, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.envelopes import (
    answer_to,
    canonical,
    client_capabilities,
    http_status,
    place_of,
    request_meta,
)
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE, ANY_PAIRING
from mcp_assay.vocabulary.protocol import ErrorCode, MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import MISSING, Kind, Message

_CLIENT_REQUESTS: dict[str, Any] = {
    "features": {"per_request_version"},
    "sent_by": Side.CLIENT,
    "kinds": {Kind.REQUEST},
}


@message_check(
    requirements="META-01", level=Level.MUST, subject="client requests", **_CLIENT_REQUESTS, methods=ANY_ENVELOPE
)
def requests_carry_params_with_meta(message: Message, ctx: Context) -> Finding:
    """Every 2026 request has a params object holding a _meta object."""
    if message.params is MISSING:
        return failed(message, f"{message.describe()} has no params (2026 requests need params._meta)")
    if not isinstance(message.params, dict):
        return failed(message, f"{message.describe()} has params of type {type(message.params).__name__}")
    meta = message.params.get("_meta", MISSING)
    if meta is MISSING:
        return failed(message, f"{message.describe()} has params without _meta")
    if not isinstance(meta, dict):
        return failed(message, f"{message.describe()} has a params._meta of type {type(meta).__name__}")
    return passed(message)


_CAPABILITIES_AT = f"_meta[{MetaKey.CLIENT_CAPABILITIES}]"
"""Where a request's declared capabilities sit, as an issue's path names it."""


@message_check(
    requirements="META-02", level=Level.MUST, subject="client requests", **_CLIENT_REQUESTS, methods=ANY_ENVELOPE
)
def requests_declare_client_capabilities(message: Message, ctx: Context) -> Finding | None:
    """Every 2026 request declares its client capabilities in _meta (an object; {} means none)."""
    meta = request_meta(message)
    if meta is None:
        return None  # no _meta at all is META-01's finding
    value = meta.get(MetaKey.CLIENT_CAPABILITIES, MISSING)
    if value is MISSING:
        return failed(message, f"{message.describe()} does not declare {MetaKey.CLIENT_CAPABILITIES}")
    if not isinstance(value, dict):
        return failed(message, f"{MetaKey.CLIENT_CAPABILITIES} is a {type(value).__name__}, not an object")
    revision = ctx.revision(message)
    if revision is not None and "ClientCapabilities" in revision.validator.defs:
        issues = revision.validator.validate_def("ClientCapabilities", value, prefix=_CAPABILITIES_AT)
        if issues:
            return failed(message, "; ".join(issue.render() for issue in issues[:3]))
    return passed(message)


@message_check(
    requirements="META-03", level=Level.SHOULD, subject="client requests", **_CLIENT_REQUESTS, methods=ANY_ENVELOPE
)
def requests_identify_the_client(message: Message, ctx: Context) -> Finding | None:
    """Every 2026 request names the client software in _meta clientInfo, with string name and version."""
    meta = request_meta(message)
    if meta is None:
        return None
    info = meta.get(MetaKey.CLIENT_INFO, MISSING)
    if info is MISSING:
        return failed(message, f"{message.describe()} carries no {MetaKey.CLIENT_INFO}")
    if not isinstance(info, dict):
        return failed(message, f"{MetaKey.CLIENT_INFO} is a {type(info).__name__}, not an object")
    missing = [field for field in ("name", "version") if not isinstance(info.get(field), str)]
    if missing:
        return failed(message, f"{MetaKey.CLIENT_INFO} lacks a string {' and '.join(missing)}")
    return passed(message)


@message_check(
    requirements="META-04",
    level=Level.MUST,
    subject="requests naming a log level",
    **_CLIENT_REQUESTS,
    methods=ANY_ENVELOPE,
)
def requested_log_levels_are_defined_levels(message: Message, ctx: Context) -> Finding | None:
    """A _meta logLevel, when present, is one of the eight syslog level names."""
    meta = request_meta(message)
    if meta is None or MetaKey.LOG_LEVEL not in meta:
        return None
    revision = ctx.revision(message)
    levels: list[str] = []
    if revision is not None:
        definition = revision.validator.defs.get("LoggingLevel", {})
        levels = list(definition.get("enum", [])) if isinstance(definition, dict) else []
    value = meta[MetaKey.LOG_LEVEL]
    if value in levels:
        return passed(message)
    return failed(message, f"{MetaKey.LOG_LEVEL} is {json.dumps(value)}; expected one of {', '.join(sorted(levels))}")


def _undeclared(required: dict[str, Any], declared: dict[str, Any]) -> bool:
    """True when ``required`` names something ``declared`` lacks."""
    for name, detail in required.items():
        if name not in declared:
            return True
        if isinstance(detail, dict) and isinstance(declared[name], dict):
            if any(sub not in declared[name] for sub in detail):
                return True
    return False


@log_check(
    requirements="META-09",
    level=Level.MUST,
    subject="missing-capability errors",
    features={"missing_capability_error"},
    follows=ANY_PAIRING,
)
def missing_capability_errors_name_what_is_missing(ctx: Context) -> Iterator[Finding]:
    """A -32021 error names, in data.requiredCapabilities, capabilities the request did not declare (HTTP 400).

    Triggered by any -32021 answer, e.g. the active suite's call of a tool that needs elicitation
    or sampling sent with ``clientCapabilities: {}``."""
    for message in ctx.log.messages():
        if (
            message.kind is not Kind.ERROR
            or message.sender is not Side.SERVER
            or error_code(message) != ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
        ):
            continue
        error = message.error if isinstance(message.error, dict) else {}
        data = error.get("data")
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        if not isinstance(required, dict):
            yield failed(message, "-32021 without an object data.requiredCapabilities")
            continue
        if not required:
            yield failed(message, "-32021 with an empty data.requiredCapabilities names nothing the client lacks")
            continue
        status = http_status(message, ctx)
        if status is not None and status != 400:
            yield failed(message, f"-32021 was sent with HTTP {status}, expected 400")
            continue
        request = ctx.log.request_of(message)
        declared = client_capabilities(request) if request is not None else None
        if declared is not None and not _undeclared(required, declared):
            yield failed(
                message,
                f"-32021 asks for {canonical(required)}, which the request already declared ({canonical(declared)})",
            )
            continue
        yield passed(message)


IDENTITY_INDEPENDENT_METHODS = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "prompts/get"}
)


def _without_client_info(params: dict[str, Any]) -> str:
    meta = {key: value for key, value in (params.get("_meta") or {}).items() if key != MetaKey.CLIENT_INFO}
    return canonical({**params, "_meta": meta})


def _comparable(result: dict[str, Any]) -> str:
    return canonical({key: value for key, value in result.items() if key != "_meta"})


@log_check(
    requirements="META-10",
    level=Level.SHOULD_NOT,
    subject="repeated requests with different clientInfo",
    features={"per_request_version"},
    follows=ANY_PAIRING,
)
def answers_do_not_depend_on_client_info(ctx: Context) -> Iterator[Finding]:
    """The same request sent with different clientInfo (or none: it is optional) gets the same result.

    Triggered when the log holds one discover, list or prompts/get request twice with only
    ``clientInfo`` changed or left out (the active suite sends both). A request refused while the
    same request naming another client, or none, was served fails too: the server took the
    self-reported identity for a condition of service."""
    named: list[tuple[Message, str]] = []
    for request in ctx.messages(kinds={Kind.REQUEST}, sent_by=Side.CLIENT):
        if request.method not in IDENTITY_INDEPENDENT_METHODS or not isinstance(request.params, dict):
            continue
        meta = request_meta(request)
        if meta is not None:
            named.append((request, _identity(meta)))
    if len({identity for _, identity in named}) < 2:
        return  # every such request named one client: none was sent under two identities
    groups: dict[tuple[str, str | None, str], list[tuple[str, Message]]] = defaultdict(list)
    for request, identity in named:
        assert isinstance(request.params, dict)
        answer = answer_to(request, ctx)
        if answer is None or answer.kind not in (Kind.RESULT, Kind.ERROR):
            continue
        key = (place_of(request, ctx), request.method, _without_client_info(request.params))
        groups[key].append((identity, answer))
    for (_place, method, _params), answers in groups.items():
        served = [(identity, answer) for identity, answer in answers if isinstance(answer.result, dict)]
        if len({identity for identity, _ in answers}) < 2 or not served:
            continue
        first_identity, first = served[0]
        assert isinstance(first.result, dict)
        for identity, answer in answers:
            if identity == first_identity:
                continue
            if answer.kind is Kind.ERROR:
                yield failed(
                    answer,
                    f"{method} was refused ({error_text(answer)}) for {identity}, though it was served for "
                    f"{first_identity}",
                )
            elif isinstance(answer.result, dict) and _comparable(first.result) != _comparable(answer.result):
                yield failed(answer, f"{method} answered differently for {identity} than for {first_identity}")
            else:
                yield passed(answer)


def _identity(meta: dict[str, Any]) -> str:
    """How a request named its client, for findings."""
    if MetaKey.CLIENT_INFO not in meta:
        return "a request without clientInfo"
    return f"clientInfo {canonical(meta[MetaKey.CLIENT_INFO])}"


def error_text(answer: Message) -> str:
    code = error_code(answer)
    return f"error {code}" if code is not None else "an error"
