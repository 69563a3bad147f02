"""Methods a server does not serve: unknown ones, removed ones, and ones behind a missing capability.

An unknown method gets ``-32601`` (with ``404`` on 2026-07-28 HTTP). In a 2026-07-28 run the
methods that revision removed (``ping``, ``logging/setLevel``, ``resources/subscribe``,
``initialize``) are asked for with a modern envelope, and a family whose capability the server did
not advertise is asked for once (``-32601`` expected, a SHOULD). ``GET`` and ``DELETE`` on the
2026-07-28 endpoint are expected to get ``405``.
"""

from __future__ import annotations

from typing import Any

from mcp_assay.cases import methods as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import LegacyClient, ModernClient
from mcp_assay.suite.transports import StreamControl
from mcp_assay.vocabulary.protocol import HANDSHAKE_REVISION, Header, MediaType

__all__ = ["FAMILY"]

UNKNOWN = "mcp-assay/no-such-method"

CAPABILITY_METHODS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("tools", "tools/list", {}),
    ("prompts", "prompts/list", {}),
    ("resources", "resources/list", {}),
    (
        "completions",
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": "file:///mcp-assay/{name}"}, "argument": {"name": "name", "value": ""}},
    ),
)


def _handshake_unasked(ctx: SuiteContext) -> bool:
    """``--spec-version`` named the revision under test, so selection never offered ``initialize``.

    Whether the server still serves the handshake era is then unknown, and a dual-era server may
    answer ``initialize`` as it likes (A21; the Python SDK's stdio server refuses it with -32022 on a
    process already serving 2026-07-28), so the removed-``initialize`` case is left out."""
    forced = ctx.config.spec_version
    return forced is not None and forced == ctx.revision.name and ctx.revision.has("per_request_version")


def _removed(ctx: SuiteContext) -> list[tuple[str, dict[str, Any]]]:
    removed: list[tuple[str, dict[str, Any]]] = [
        ("ping", {}),
        ("logging/setLevel", {"level": "info"}),
        ("resources/subscribe", {"uri": "file:///mcp-assay/resource"}),
    ]
    if ctx.config.modern_only or (not ctx.handshake_offered and not _handshake_unasked(ctx)):
        # a dual-era server may serve initialize (A21); only a modern-only one must not know it
        other = next((rev.name for rev in ctx.spec.window if rev is not ctx.revision), HANDSHAKE_REVISION)
        clause = {"protocolVersion": other, "capabilities": {}, "clientInfo": {"name": "mcp-assay", "version": "0"}}
        removed.append(("initialize", clause))
    return removed


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    params: dict[str, Any] | None = {} if ctx.modern else None
    await client.request(
        UNKNOWN,
        params,
        probe=ctx.probe(cases.UNKNOWN_METHOD),
    )
    if isinstance(client, ModernClient):
        for method, method_params in _removed(ctx):
            await client.request(
                method,
                method_params,
                probe=ctx.probe(
                    cases.REMOVED_METHOD, f"{method} does not exist in {ctx.revision.name}: -32601 (404 on HTTP)"
                ),
            )
    for capability, method, method_params in CAPABILITY_METHODS:
        if ctx.advertises(capability) is not False:
            continue
        if capability == "completions" and not ctx.revision.has("completions"):
            continue
        await client.request(
            method,
            dict(method_params) if ctx.modern or method_params else None,
            probe=ctx.probe(cases.NO_CAPABILITY, f"{method} without an advertised {capability} capability: -32601"),
        )
    if ctx.http and isinstance(client, ModernClient):
        for verb, case in cases.HTTP_VERBS.items():
            headers: dict[str, str] = {
                Header.ACCEPT: MediaType.EVENT_STREAM,
                Header.PROTOCOL_VERSION: ctx.revision.name,
            }
            await client.transport.send(
                b"",
                probe=ctx.probe(case).at(ctx.revision.name),
                expect=None,
                headers=headers,
                stream=StreamControl(budget=0.5, stop=lambda messages: True),
                method=verb,
                timeout=ctx.short_timeout,
            )  # type: ignore[call-arg]
    elif ctx.http and isinstance(client, LegacyClient):
        pass  # GET and DELETE belong to the 2025 session lifecycle (handshake family)


FAMILY = ProbeFamily(
    name="methods",
    cases=cases.CASES,
    run=run,
    description="unknown, removed and capability-less methods; GET and DELETE",
)
