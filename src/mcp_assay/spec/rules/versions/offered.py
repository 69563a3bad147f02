"""What a 2026 server offers (VER-18, 20..22): declared extensions, advertised capabilities, removed methods.

Extension keys in ``capabilities.extensions`` follow the ``_meta`` key grammar; a method whose
capability discover did not advertise, or one 2026 removed (``ping``, ``logging/setLevel``,
``resources/subscribe`` …), gets ``-32601`` with HTTP 404, and a 2026 client never sends the
removed ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from mcp_assay.spec.checks import Every, Finding, failed, log_check, message_check, passed
from mcp_assay.spec.context import Context
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.spec.rules.shared.common import error_code
from mcp_assay.spec.rules.shared.envelopes import (
    answer_to,
    client_capabilities,
    http_status,
    meta_key_problem,
    meta_version,
)
from mcp_assay.spec.rules.shared.reads import ANY_ENVELOPE, ANY_VERSION
from mcp_assay.spec.rules.versions._eras import (
    MODERN,
    advertised_discover,
    code_text,
    declared_modern_only,
    modern_requests,
    modern_versions,
    server_capabilities,
    well_formed_requests,
)
from mcp_assay.vocabulary.protocol import Era, ErrorCode, MetaKey
from mcp_assay.vocabulary.verdicts import Level, Side
from mcp_assay.wire.jsonrpc import Kind, Message
from mcp_assay.wire.traffic import ExchangeLog

CAPABILITY_OF_PREFIX = (
    ("tools/", "tools"),
    ("prompts/", "prompts"),
    ("resources/", "resources"),
    ("completion/complete", "completions"),
)


@message_check(
    requirements="VER-18",
    level=Level.MUST,
    subject="declared extensions",
    features={"capability_extensions"},
    methods=ANY_ENVELOPE,
)
def extension_keys_are_prefixed_meta_keys(message: Message, ctx: Context) -> Finding | None:
    """capabilities.extensions keys follow the _meta key grammar with a mandatory prefix; values are objects."""
    extensions: Any = None
    if message.sender is Side.CLIENT and message.kind is Kind.REQUEST:
        caps = client_capabilities(message)
        extensions = caps.get("extensions") if caps is not None else None
        where = f"{MetaKey.CLIENT_CAPABILITIES}.extensions"
    elif message.sender is Side.SERVER and message.kind is Kind.RESULT and isinstance(message.result, dict):
        request = ctx.log.request_of(message)
        if request is None or request.method not in ("server/discover", "initialize"):
            return None
        caps = message.result.get("capabilities")
        extensions = caps.get("extensions") if isinstance(caps, dict) else None
        where = "capabilities.extensions"
    else:
        return None
    if extensions is None:
        return None
    if not isinstance(extensions, dict):
        return failed(message, f"{where} is a {type(extensions).__name__}, not an object")
    for key, value in extensions.items():
        problem = meta_key_problem(key, prefix_required=True)
        if problem is not None:
            return failed(message, f"{where}: {problem}")
        if not isinstance(value, dict):
            return failed(message, f"{where}[{key!r}] is a {type(value).__name__}, not an object")
    return passed(message)


def _capability_for(method: str | None) -> str | None:
    if method is None:
        return None
    for prefix, capability in CAPABILITY_OF_PREFIX:
        if method.startswith(prefix):
            return capability
    return None


def _expect_method_not_found(answer: Message, ctx: Context, what: str) -> Finding:
    status = http_status(answer, ctx)
    if answer.kind is Kind.RESULT:
        return failed(answer, f"{what} was served with a result")
    if error_code(answer) != ErrorCode.METHOD_NOT_FOUND:
        return failed(answer, f"{what} got {code_text(answer)}, expected -32601")
    if status is not None and status != 404:
        return failed(answer, f"{what} got -32601 with HTTP {status}, expected 404")
    return passed(answer)


@log_check(
    requirements="VER-20",
    level=Level.SHOULD,
    subject="requests outside the advertised capabilities",
    **MODERN,
    follows=ANY_VERSION,
)
def unadvertised_capabilities_get_method_not_found(ctx: Context) -> Iterator[Finding]:
    """A method whose capability discover did not advertise (tools, prompts, resources, completions) gets -32601/404."""
    for request in well_formed_requests(ctx):
        capability = _capability_for(request.method)
        if capability is None:
            continue
        caps = server_capabilities(advertised_discover(ctx, request))
        if caps is None or capability in caps:
            continue
        answer = answer_to(request, ctx)
        if answer is not None:
            yield _expect_method_not_found(
                answer, ctx, f"{request.method} without an advertised {capability} capability"
            )


def _removed_methods(ctx: Context, *, notifications: bool) -> frozenset[str]:
    """Client methods a handshake revision defines and no modern revision does (the tasks extension aside)."""
    old: set[str] = set()
    new: set[str] = set()
    for revision in ctx.spec.all:
        validator = revision.validator
        methods = set(validator.client_requests)
        if notifications:
            methods |= validator.client_notifications
        (new if revision.era is Era.MODERN else old).update(methods)
    return frozenset(method for method in old - new if "tasks/" not in method)


@log_check(
    requirements="VER-21",
    level=Level.SHOULD,
    subject="removed methods sent with a 2026 envelope",
    **MODERN,
    follows=ANY_VERSION,
)
def removed_methods_are_unknown_to_modern_requests(ctx: Context) -> Iterator[Finding]:
    """ping, logging/setLevel, resources/(un)subscribe and tasks/* with a 2026 envelope get -32601 (HTTP 404).

    Triggered by such requests (the active suite sends them). An initialize with a 2026 envelope
    may be served by a dual-era server (A21), not by one declared modern-only (``run --modern-only``);
    when refused, it must be -32601 too."""
    removed = _removed_methods(ctx, notifications=False) | _tasks_methods(ctx)
    modern = modern_versions(ctx)
    for request in modern_requests(ctx):
        if request.method not in removed or meta_version(request) not in modern:
            continue
        answer = answer_to(request, ctx)
        if answer is None:
            continue
        if request.method.startswith("tasks/"):
            caps = server_capabilities(advertised_discover(ctx, request)) or {}
            extensions = caps.get("extensions")
            if isinstance(extensions, dict) and MetaKey.TASKS_EXTENSION in extensions:
                continue
        if request.method == "initialize" and answer.kind is Kind.RESULT and not declared_modern_only(ctx):
            continue
        yield _expect_method_not_found(answer, ctx, f"{request.method} with a 2026 envelope")


@lru_cache(maxsize=4)
def _modern_and_removed(spec: SpecSet) -> tuple[frozenset[str], frozenset[str]]:
    """The modern versions and the client methods they removed (notifications too), worked out once per set of
    revisions (a process judges with one or two), not per message."""
    ctx = Context(ExchangeLog(), spec)
    return modern_versions(ctx), _removed_methods(ctx, notifications=True)


def _tasks_methods(ctx: Context) -> frozenset[str]:
    methods: set[str] = set()
    for revision in ctx.spec.all:
        methods |= {method for method in revision.validator.client_requests if method.startswith("tasks/")}
    return frozenset(methods)


@message_check(
    requirements="VER-22",
    level=Level.MUST_NOT,
    subject="client messages with a 2026 envelope",
    sent_by=Side.CLIENT,
    kinds={Kind.REQUEST, Kind.NOTIFICATION},
    **MODERN,
    methods=Every("it judges the method itself and passes every other, so every method is its business"),
)
def modern_clients_do_not_send_removed_methods(message: Message, ctx: Context) -> Finding | None:
    """A client speaking 2026 never sends initialize, ping, logging/setLevel, resources/(un)subscribe and the like."""
    version = meta_version(message)
    if version is None:
        return None
    modern, removed = _modern_and_removed(ctx.spec)
    if version not in modern:
        return None
    if message.method in removed:
        return failed(message, f"{message.method} was removed in {version} but was sent with a {version} envelope")
    return passed(message)
