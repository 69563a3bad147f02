"""Streamable HTTP, server side (HTTP-09..21, 26): how a 2026 server treats mirrored request headers.

These requirements are *active*: they say how a server must answer a request whose
``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` or ``Mcp-Param-*`` headers disagree with
the body, are missing, or are spelled unusually. The rules judge the answer whenever such a
request appears in the log, whoever sent it, so the same code grades the active suite's probes
and a real client's mistakes seen by the proxy.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, log_check, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.http._exchanges import MODERN_HTTP, body_modern, http_eras, request_posts
from mcp_assay.spec.rules.http._header_audit import (
    answer_text,
    audit,
    expect_acceptance,
    expect_rejection,
    judge_acceptance,
    judge_audits,
    modern_audits,
)
from mcp_assay.spec.rules.shared.common import params_of
from mcp_assay.spec.rules.shared.reads import ANY_EXCHANGE_HTTP
from mcp_assay.vocabulary.protocol import HeaderKey
from mcp_assay.vocabulary.verdicts import Level, Outcome, Side
from mcp_assay.wire.jsonrpc import Kind
from mcp_assay.wire.model import HttpExchange
from mcp_assay.wire.traffic import endpoint_of

OLD_VERSIONS = ("2025-03-26", "2024-11-05")
"""Handshake versions from before the MCP-Protocol-Version header existed."""


@log_check(
    requirements="HTTP-09",
    level=Level.MUST,
    subject="version header mismatches",
    **MODERN_HTTP,
    off_version=True,
    follows=ANY_EXCHANGE_HTTP,
)
def version_header_mismatch_is_rejected(ctx: Context) -> Iterator[Finding]:
    """A request whose MCP-Protocol-Version header disagrees with its body version gets 400 and -32020.

    Triggered by any request POST where the header and ``params._meta`` name different versions
    and at least one of them is a 2026-style revision (a body carrying the 2026 envelope must be
    served statelessly under 2026 rules, whatever the header says)."""
    modern = http_eras(ctx).modern
    for exchange, _ in request_posts(ctx):
        if exchange.id not in modern:
            continue
        result = audit(exchange, ctx)
        if result is not None:
            finding = expect_rejection(result, ("version-mismatch",))
            if finding is not None:
                yield finding


@log_check(
    requirements=("HTTP-12", "BEH-02"),
    level=Level.MUST,
    subject="requests lacking routing headers",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def missing_routing_headers_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A request without Mcp-Method (or without Mcp-Name where one is required) gets 400 and -32020.

    Triggered by a 2026 request POST lacking ``Mcp-Method``, or a ``tools/call``,
    ``prompts/get`` or ``resources/read`` lacking ``Mcp-Name``."""
    return judge_audits(ctx, ("method-missing", "name-missing"))


@log_check(
    requirements=("HTTP-13", "BEH-02"),
    level=Level.MUST,
    subject="mismatched routing headers",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def mismatched_routing_headers_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A request whose Mcp-Method or plain Mcp-Name differs from the body (case included) gets 400 and -32020.

    Triggered by a 2026 request POST whose ``Mcp-Method`` is not exactly the body ``method``
    (``TOOLS/LIST`` included) or whose plain ``Mcp-Name`` is not exactly the body ``name``/``uri``
    (⚠A27: exact strings, no URI normalisation). The suite's ``mcp-name-mismatch`` probe puts a
    listed tool's name in ``Mcp-Name`` and a name that does not exist in the body (BEH-02): an
    unknown-tool answer means the server dispatched on the body without checking the header."""
    return judge_audits(ctx, ("method-mismatch", "name-mismatch"))


@log_check(
    requirements="HTTP-14", level=Level.MUST, side=Side.SERVER, subject="requests with unusual header-name case",
    **MODERN_HTTP, because="the server's half: a server accepts the headers in any case (a client's spelling is free)",
    follows=ANY_EXCHANGE_HTTP,
)  # fmt: skip
def header_names_are_matched_case_insensitively(ctx: Context) -> Iterator[Finding]:
    """Standard headers are recognised whatever the case of their names (mcp-method, MCP-NAME ...).

    Triggered by a 2026 request POST whose standard header names are spelled in a different case
    and whose headers otherwise agree with the body: it must not be rejected with -32020."""
    return judge_acceptance(ctx, "name-case")


@log_check(
    requirements="HTTP-16",
    level=Level.MUST,
    subject="Base64-sentinel header values",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def sentinel_values_are_decoded_before_comparison(ctx: Context) -> Iterator[Finding]:
    """A correct =?base64?…?= Mcp-Name or Mcp-Param value is accepted; one decoding to another value gets -32020.

    Triggered by a 2026 request POST whose ``Mcp-Name`` or ``Mcp-Param-*`` value uses the
    Base64 sentinel form."""
    for result in modern_audits(ctx):
        finding = expect_rejection(result, ("name-bad-sentinel", "param-bad-sentinel"))
        if finding is None:
            finding = expect_acceptance(result, "name-sentinel") or expect_acceptance(result, "param-sentinel")
        if finding is not None:
            yield finding


@log_check(
    requirements="HTTP-17", level=Level.MUST, subject="header values with invalid characters",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)  # fmt: skip
def header_values_with_invalid_characters_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A standard or recognised Mcp-Param header holding raw non-ASCII or control characters gets 400.

    Triggered by a 2026 request POST whose ``MCP-Protocol-Version``, ``Mcp-Method``,
    ``Mcp-Name`` or recognised ``Mcp-Param-*`` value holds characters outside visible ASCII,
    space and tab; a bare 400 from the HTTP stack counts as a rejection."""
    return judge_audits(ctx, ("invalid-characters",), bare_400_ok=True)


@log_check(
    requirements="HTTP-19",
    level=Level.MUST,
    subject="tools/call parameter headers",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)
def missing_or_mismatched_parameter_headers_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A tools/call whose marked argument lacks its Mcp-Param header, or whose plain header differs, gets -32020.

    Triggered by a 2026 ``tools/call`` POST for a tool whose ``inputSchema`` marks properties with
    ``x-mcp-header`` (the definition comes from ``tools/list`` in the log)."""
    for result in modern_audits(ctx):
        finding = expect_rejection(result, ("param-missing", "param-mismatch"))
        if finding is not None:
            yield finding
        elif result.request.method == "tools/call" and not result.params_known:
            if any(name.lower().startswith(HeaderKey.PARAM_PREFIX) for name in result.exchange.request.headers.names()):
                yield unverified(
                    "a tools/call carried Mcp-Param headers, but the tool's definition was not seen or is invalid",
                    result.request,
                )


@log_check(
    requirements="HTTP-20", level=Level.MUST_NOT, 
    subject="calls with null or absent marked arguments", **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)  # fmt: skip
def absent_arguments_need_no_parameter_header(ctx: Context) -> Iterator[Finding]:
    """A tools/call whose marked argument is null or absent is not refused for lacking its Mcp-Param header.

    Triggered by a 2026 ``tools/call`` POST for a tool with ``x-mcp-header`` marks where a marked
    argument is null or absent and its header is (correctly) omitted."""
    return judge_acceptance(ctx, "param-omitted")


@log_check(
    requirements="HTTP-21", level=Level.SHOULD, subject="numerically equal integer headers",
    **MODERN_HTTP,
    follows=ANY_EXCHANGE_HTTP,
)  # fmt: skip
def integer_parameter_headers_compare_numerically(ctx: Context) -> Iterator[Finding]:
    """An integer Mcp-Param header such as 42.0 matches the body value 42.

    Triggered by a 2026 ``tools/call`` POST whose marked integer argument is mirrored in a
    different but numerically equal spelling."""
    return judge_acceptance(ctx, "param-numeric")


def _old_clients_served(ctx: Context) -> dict[str, bool]:
    """Per endpoint, whether it served (``True``) or turned away (``False``) a client older than 2025-06-18."""
    served: dict[str, bool] = {}
    for other in ctx.log.http_exchanges():
        request = other.request_message
        if request is None or request.method != "initialize":
            continue
        offered = params_of(request).get("protocolVersion")
        if offered not in OLD_VERSIONS:
            continue
        endpoint = endpoint_of(other)
        for answer in other.response_messages:
            if answer.kind is Kind.RESULT and isinstance(answer.result, dict):
                accepted = answer.result.get("protocolVersion") == offered
                served[endpoint] = served.get(endpoint, False) or accepted
            elif answer.kind is Kind.ERROR:
                served.setdefault(endpoint, False)
    return served


def _serves_pre_2025_06_18(ctx: Context, exchange: HttpExchange) -> bool | None:
    """Whether the log shows this endpoint serving clients older than 2025-06-18 (``None``: no evidence)."""
    return ctx.view(_old_clients_served).get(endpoint_of(exchange))


@log_check(
    requirements="HTTP-26", level=Level.MUST, subject="request POSTs without a version header",
    **MODERN_HTTP,
    off_version=True,
    follows=ANY_EXCHANGE_HTTP,
)  # fmt: skip
def requests_without_a_version_header_are_rejected(ctx: Context) -> Iterator[Finding]:
    """A 2026 request without MCP-Protocol-Version gets 400 and -32020, unless the server serves pre-2025-06-18 clients.

    Triggered by a request POST whose body carries a 2026 ``_meta`` version but no
    ``MCP-Protocol-Version`` header. A server that serves clients older than 2025-06-18 may treat
    it as ``2025-03-26`` instead; that is accepted when the log shows it serving such a client."""
    for exchange, request in request_posts(ctx):
        if exchange.request.headers.get(HeaderKey.PROTOCOL_VERSION) is not None or not body_modern(exchange, ctx):
            continue
        result = audit(exchange, ctx)
        if result is None:
            continue
        finding = expect_rejection(result, ("version-missing",))
        if finding is None:
            continue
        if finding.outcome is not Outcome.FAILED:
            yield finding
            continue
        legacy = _serves_pre_2025_06_18(ctx, exchange)
        answer = answer_text(exchange)
        if legacy:
            yield passed(request, f"no version header: answered {answer}, as the 2025-03-26 assumption allows")
        elif legacy is None:
            yield unverified(
                f"no version header: answered {answer}; that is allowed only from a server that serves clients "
                "older than 2025-06-18, and the log shows no initialize for 2025-03-26 or 2024-11-05",
                request,
            )
        else:
            yield finding
