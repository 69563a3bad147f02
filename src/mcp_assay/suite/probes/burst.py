"""The rate-limit burst (BEH-11): many calls to one safe tool, fast, to see whether anything limits them.

A server may rate-limit tool invocations, and a security reviewer wants to know whether it does.
Nothing about that can be learnt without sending load, so the case is opt-in: the config file's
``rate_limit_probe`` names a read-only, cheap tool and its arguments, how many calls (``burst``)
and over how many seconds (``window_s``). The calls go out evenly spread over the window, all on
the run's own connection; over HTTP a ``429`` comes back as the answer instead of being waited
out, as every other case does. It runs last, so a limit it trips cannot disturb another family.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_assay.cases import Facts
from mcp_assay.cases import burst as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.era_clients import ModernClient
from mcp_assay.suite.probes.tools import call_params
from mcp_assay.suite.transports import Reply
from mcp_assay.vocabulary.errors import NoAnswer

__all__ = ["FAMILY"]

REQUIREMENTS = cases.RATE_LIMIT.feeds


async def _call(ctx: SuiteContext, index: int, delay: float) -> Reply | None:
    await asyncio.sleep(delay)
    probe_config = ctx.config.rate_limit_probe
    assert probe_config is not None
    client = ctx.client
    params = call_params(ctx, probe_config.tool, dict(probe_config.arguments))
    probe = ctx.probe(
        cases.RATE_LIMIT, f"call {index + 1} of a burst of {probe_config.burst}", facts=Facts(burst=probe_config.burst)
    )
    options: dict[str, Any] = {"answer_rate_limits": True} if ctx.http else {}
    try:
        if isinstance(client, ModernClient):
            return await client.request("tools/call", params, meta=client.meta(), probe=probe, **options)
        return await client.request("tools/call", params, probe=probe, **options)
    except NoAnswer:
        return None


async def run(ctx: SuiteContext) -> None:
    wanted = ctx.config.rate_limit_probe
    if wanted is None:
        ctx.skip(
            "not probed: finding a rate limit takes load, so it is opt-in; name a read-only tool in the config "
            "file's rate_limit_probe (tool, arguments, burst, window_s)",
            requirements=REQUIREMENTS,
        )
        return
    listing = ctx.listings.get("tools/list")
    names = {str(tool.get("name")) for tool in listing.items} if listing is not None else set()
    if listing is not None and listing.ok and wanted.tool not in names:
        ctx.skip(f"rate_limit_probe.tool {wanted.tool!r} is not in the server's tools/list", requirements=REQUIREMENTS)
        return
    spacing = wanted.window_s / wanted.burst
    await asyncio.gather(*(_call(ctx, index, index * spacing) for index in range(wanted.burst)))


FAMILY = ProbeFamily(
    name="burst",
    cases=cases.CASES,
    run=run,
    capability="tools",
    description="an opt-in burst of calls to one safe tool, looking for a rate limit (BEH-11)",
    exclusive=lambda config: config.rate_limit_probe is not None,
)
