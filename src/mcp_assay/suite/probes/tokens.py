"""Token validation (AUTH-16..19): tokens the target would accept, each changed in one property.

Needs the ``stub`` section of the config: a stand-in authorization server whose key the target
trusts (:mod:`mcp_assay.suite.stub`), which the run keeps open from its first request to its
last (:class:`~mcp_assay.suite.stub.lifetime.StubSession`). The family:

1. sends the protected request with a valid control token (``auth-stub-control``: right issuer,
   audience and key, valid now). Not served: nothing below can be attributed, so the family stops
   and says how to make the target trust the stub;
2. sends the same request once per variant, grouped by what it changes (lifetime, audience,
   issuer, signature and algorithm), with the control again after each group, so every refusal
   sits between two served controls;
3. reads what the stub noted: a fetch of the untrusted key set a ``jku`` header pointed to is
   recorded as a ``stub-fetch`` observation, evidence on its own.

Every variant is a stub token case of :mod:`mcp_assay.cases.tokens`, which names the requirement its
refusal establishes and the control it sits between; the rules in :mod:`mcp_assay.spec.rules.auth.tokens`
judge it (and AUTH-13 its status). Tokens are redacted like any credential.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from mcp_assay.cases import Case, Facts
from mcp_assay.cases import tokens as cases
from mcp_assay.spec.rules.auth.facts import canonical_uri
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import LegacyClient, ModernClient, encode_header_value
from mcp_assay.suite.probes.auth import Prober, ask, protected_method
from mcp_assay.suite.stub.config import StubConfig
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.server import FOREIGN_JWKS_PATH, SINK_PATH
from mcp_assay.suite.stub.tokens import control_token, variants
from mcp_assay.suite.transports import Reply
from mcp_assay.vocabulary.protocol import Header

__all__ = ["CONTROL", "FAMILY", "REQUIREMENTS"]

CONTROL = cases.STUB_CONTROL
SCOPE_CONTROL = cases.SCOPE_CONTROL
SCOPE_REQUIREMENTS = frozenset().union(
    *(case.feeds for case in (cases.SCOPE_LACKING, cases.SCOPE_HEADER_ROUTED, cases.SCOPE_BROAD))
)
PASSTHROUGH_REQUIREMENTS = cases.PASSTHROUGH.feeds
REQUIREMENTS = frozenset().union(*(case.feeds for case in cases.CASES))
SINK_SETTLE_S = 0.3
"""How long after the passthrough call's answer the sink's notes are read (an upstream call may trail it)."""
STUB_HINT = (
    "add a `stub` section to the config and make the target trust its key (docs/authorization.md: Token validation)"
)


async def run(ctx: SuiteContext) -> None:
    stub = ctx.stub
    if stub is None:
        ctx.skip(f"the token-validation probes need a stand-in authorization server: {STUB_HINT}",
                 requirements=REQUIREMENTS)  # fmt: skip
        return
    prober = Prober(ctx)
    try:
        started = len(stub.notes())
        await _run(ctx, prober, stub.config, stub.foreign)
        for note in stub.notes()[started:]:
            if note.get("path") == FOREIGN_JWKS_PATH:
                ctx.observe("stub-fetch", url=f"{stub.config.issuer}{FOREIGN_JWKS_PATH}", **note)
    finally:
        await prober.close()


async def _run(ctx: SuiteContext, prober: Prober, stub: StubConfig, foreign: SigningKey) -> None:
    method = protected_method(ctx)
    client = prober.client(prober.own.anonymous())
    audience = stub.audience or canonical_uri(prober.endpoint)
    first = await _control(ctx, client, method, stub, audience)
    if not first.ok:
        ctx.skip(
            f"the target did not serve {method} with the stub's control token ({first.describe()}): make it trust "
            f"issuer {stub.issuer} (keys at {stub.jwks_uri}) and audience {audience}, or set stub.audience",
            requirements=REQUIREMENTS,
        )
        return
    probes = variants(stub.key, foreign, stub.issuer, audience, stub.all_scopes, f"{stub.issuer}{FOREIGN_JWKS_PATH}")
    for _, group in groupby(probes, key=lambda variant: variant.requirement):
        for variant in group:
            await ask(
                ctx, client, method, variant.case, f"{method} with a stub token, {variant.variant}: not served",
                variant=variant.variant, authorization=f"Bearer {variant.token}",
            )  # fmt: skip
        await _control(ctx, client, method, stub, audience)
    await _passthrough(ctx, client, stub, audience)
    if stub.tool_scopes:
        await _scopes(ctx, client, stub, audience)
    else:
        ctx.skip(f"no stub.tool_scopes in the config, so no call lacks a scope it needs ({STUB_HINT})",
                 requirements=SCOPE_REQUIREMENTS)  # fmt: skip


@dataclass(frozen=True)
class _ToolCall:
    """One mapped tool, called with tokens holding chosen scopes."""

    ctx: SuiteContext
    client: ModernClient | LegacyClient
    stub: StubConfig
    audience: str
    tool: str
    needed: tuple[str, ...]
    arguments: Mapping[str, Any]

    async def send(
        self, case: Case, scopes: tuple[str, ...], intent: str, *, mcp_name: str | None = None, broad: str | None = None
    ) -> Reply:
        """``tools/call`` of the tool with a token holding ``scopes``; ``mcp_name`` puts another tool in the header."""
        token = control_token(self.stub.key, self.stub.issuer, self.audience, scopes)
        variant = f"scope {' '.join(scopes) or '(none)'}"
        facts = Facts(variant=variant, tool=self.tool, needs=tuple(self.needed), mcp_name=mcp_name, broad=broad)
        probe = self.ctx.probe(case, intent, facts=facts)
        params = {"name": self.tool, "arguments": dict(self.arguments)}
        headers = {Header.AUTHORIZATION: f"Bearer {token}"}
        if mcp_name is not None:
            headers[Header.NAME] = encode_header_value(mcp_name)
        return await self.client.request("tools/call", params, probe=probe, headers=headers, allow_refusal=True)


async def _scopes(ctx: SuiteContext, client: ModernClient | LegacyClient, stub: StubConfig, audience: str) -> None:
    """AUTH-22/15/23: each mapped tool called with every scope but its own, and with a broad scope alone."""
    everything = stub.all_scopes
    for tool, needed in sorted(stub.tool_scopes.items()):
        arguments = ctx.config.tool_args.get(tool)
        if arguments is None:
            ctx.skip(f"stub.tool_scopes names {tool}, but --tool-args does not: the suite does not invent arguments",
                     requirements=SCOPE_REQUIREMENTS)  # fmt: skip
            continue
        call = _ToolCall(ctx, client, stub, audience, tool, needed, arguments)
        control = f"tools/call {tool} with every configured scope: served"
        await call.send(SCOPE_CONTROL, everything, control)
        lacking = tuple(scope for scope in everything if scope not in needed)
        intent = f"tools/call {tool} without {' '.join(needed)}: not performed"
        await call.send(cases.SCOPE_LACKING, lacking, intent)
        allowed = _callable_with(ctx, stub, lacking, tool)
        if isinstance(client, ModernClient) and allowed is not None:
            intent = f"tools/call {tool} under Mcp-Name {allowed}, which the token may call: refused"
            await call.send(cases.SCOPE_HEADER_ROUTED, lacking, intent, mcp_name=allowed)
        elif isinstance(client, ModernClient):
            ctx.skip(f"no other tool the token lacking {' '.join(needed)} may call is known, to name in Mcp-Name "
                     f"(list it in stub.tool_scopes or --tool-args)",
                     requirements=cases.SCOPE_HEADER_ROUTED.feeds)  # fmt: skip
        for broad, narrow in stub.implies.items():
            if broad not in needed and set(needed) <= set(narrow):
                intent = f"tools/call {tool} holding only {broad}, which implies {' '.join(needed)}: served"
                await call.send(cases.SCOPE_BROAD, (broad,), intent, broad=broad)
        await call.send(SCOPE_CONTROL, everything, control)


def _callable_with(ctx: SuiteContext, stub: StubConfig, scopes: tuple[str, ...], besides: str) -> str | None:
    """A tool a token holding ``scopes`` may call (mapped within them, or needing none), other than ``besides``."""
    listed = list(ctx.client.tools) if isinstance(ctx.client, ModernClient) else []
    for name in [*sorted(stub.tool_scopes), *sorted(ctx.config.tool_args), *sorted(listed)]:
        if name != besides and set(stub.tool_scopes.get(name, ())) <= set(scopes):
            return name
    return None


async def _passthrough(ctx: SuiteContext, client: ModernClient | LegacyClient, stub: StubConfig, audience: str) -> None:
    """AUTH-27: the passthrough tool, called with a fresh stub token; whatever reached the sink meanwhile is noted."""
    tool = stub.passthrough_tool
    if tool is None or ctx.config.tool_args.get(tool) is None or ctx.stub is None:
        why = "no stub.passthrough_tool" if tool is None else f"--tool-args names no arguments for {tool}"
        ctx.skip(f"{why}: the suite needs a tool that calls an upstream API the target points at the stub's sink "
                 f"({stub.issuer}{SINK_PATH})", requirements=PASSTHROUGH_REQUIREMENTS)  # fmt: skip
        return
    session = ctx.stub
    token = control_token(stub.key, stub.issuer, audience, stub.all_scopes)
    started = len(session.notes())
    intent = f"tools/call {tool}: its upstream request carries no copy of the token"
    probe = ctx.probe(cases.PASSTHROUGH, intent, facts=Facts(tool=tool))
    params = {"name": tool, "arguments": dict(ctx.config.tool_args[tool])}
    await client.request("tools/call", params, probe=probe, headers={Header.AUTHORIZATION: f"Bearer {token}"},
                         allow_refusal=True)  # fmt: skip
    await asyncio.sleep(SINK_SETTLE_S)
    for note in session.notes()[started:]:
        carried = note.get("carried")
        if not str(note.get("path", "")).startswith(SINK_PATH) or not isinstance(carried, dict):
            continue
        places = [place for place in ("headers", "query", "body") if token in str(carried.get(place, ""))]
        ctx.observe("stub-sink", method=note.get("method"), path=note.get("path"), user_agent=note.get("user_agent"),
                    tool=tool, carried_token_in=places)  # fmt: skip


async def _control(
    ctx: SuiteContext, client: ModernClient | LegacyClient, method: str, stub: StubConfig, audience: str
) -> Reply:
    token = control_token(stub.key, stub.issuer, audience, stub.all_scopes)
    return await ask(
        ctx, client, method, CONTROL, f"{method} with the stub's valid control token: served",
        variant="a valid token from the stub", authorization=f"Bearer {token}",
    )  # fmt: skip


FAMILY = ProbeFamily(
    name="tokens",
    cases=cases.CASES,
    run=run,
    transports=frozenset({"http"}),
    description="token validation with a stand-in authorization server: audience, issuer, signature, lifetime",
    exclusive=lambda config: config.stub is not None,
    needs=("tools",),
)
