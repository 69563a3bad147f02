"""Pagination: cursors that are stable, walks that end, and cursors the server never issued.

The list families already walked every advertised list to the end (at most ``--page-limit``
pages, stopping at a reissued cursor). This family asks for one issued cursor again — the same
page is expected while nothing changed — and sends a cursor the server never issued, which it
SHOULD reject with ``-32602``. On 2026-07-28 HTTP the first issued cursor is also followed on a new
connection: a continuation must not depend on the connection it arrives on (VER-17).
"""

from __future__ import annotations

from mcp_assay.cases import pagination as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.probes._lists import list_params

__all__ = ["FAMILY"]

INVENTED = "mcp-assay-invalid-cursor"
METHODS = (
    ("tools", "tools/list"),
    ("prompts", "prompts/list"),
    ("resources", "resources/list"),
    ("resources", "resources/templates/list"),
)


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    sent = 0
    elsewhere = ctx.modern and ctx.http
    for capability, method in METHODS:
        if not ctx.advertises(capability):
            continue
        listing = ctx.listings.get(method)
        if listing is None or not listing.ok:
            continue
        if listing.cursors:
            await client.request(
                method,
                list_params(ctx, listing.cursors[0]),
                probe=ctx.probe(cases.SAME_CURSOR, f"{method} with an issued cursor again: the same page"),
            )
            fresh = await ctx.fresh_client() if elsewhere else None
            if fresh is not None:
                elsewhere = False
                await fresh.request(
                    method,
                    list_params(ctx, listing.cursors[0]),
                    probe=ctx.probe(
                        cases.CURSOR_NEW_CONNECTION,
                        f"{method} continued with an issued cursor on a new connection: served the same",
                    ),
                )
        await client.request(
            method,
            {"cursor": INVENTED},
            probe=ctx.probe(cases.INVALID_CURSOR, f"{method} with a cursor the server never issued: -32602"),
        )
        sent += 1
    if not sent:
        ctx.skip(
            "no list method was advertised and answered, so there was nothing to paginate",
            requirements=FAMILY.requirements,
        )


FAMILY = ProbeFamily(
    name="pagination",
    cases=cases.CASES,
    run=run,
    description="cursor stability and invented cursors",
    needs=("tools", "prompts", "resources"),
)
