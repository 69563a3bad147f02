"""Resources and templates: the lists, reading a sample, and reads that must fail.

Up to ``--resource-sample`` listed resources are read (all of them from the list, not just the
first: a resource the server listed but cannot read is a finding). A URI that does not exist must
get an error (``-32602`` in 2026-07-28, never ``contents: []``), and a malformed URI must be refused.
Templates are listed but not expanded: filling in their variables would be inventing arguments.

Two faults no requirement names are noted in the report instead of passing unseen: a listed
resource whose read fails (RSRC-10 only asks that an internal failure be ``-32603``, which says
nothing of why the server lists what it cannot serve), and two templates under one ``name``
(templates are told apart by ``uriTemplate``; the name is what a person picks them by).
In 2025-11-25, ``resources/subscribe`` and ``unsubscribe`` are exercised where advertised.
"""

from __future__ import annotations

import uuid
from typing import Any

from mcp_assay.cases import resources as cases
from mcp_assay.cases.model import left_unsent
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.probes._lists import list_again, walk

__all__ = ["FAMILY"]


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    listing = await walk(ctx, "resources/list", cases.LIST)
    ctx.listings["resources/list"] = listing
    templates = await walk(ctx, "resources/templates/list", cases.TEMPLATES)
    ctx.listings["resources/templates/list"] = templates
    _note_shared_names(ctx, templates.items)
    if listing.ok:
        await list_again(ctx, "resources/list", cases.LIST_AGAIN)
        uris = [item["uri"] for item in listing.items if isinstance(item.get("uri"), str)]
        sample = uris[: ctx.config.resource_sample]
        for uri in sample:
            reply = await client.request(
                "resources/read", {"uri": uri}, probe=ctx.probe(cases.READ, f"read listed resource {uri}")
            )
            if not reply.ok:
                ctx.observe(
                    "note",
                    detail=f"the listed resource {uri[:120]} could not be read: {reply.describe()} — the server lists "
                    "a resource it cannot serve (no requirement names this; RSRC-10 judges only the error code)",
                )
        setting = ctx.config.resource_sample
        ctx.observe("note", detail=f"read {len(sample)} of {len(uris)} listed resources (--resource-sample {setting})")
        if len(uris) > len(sample):
            why, step = f"past the --resource-sample of {setting}", f"--resource-sample {min(len(uris), 10_000)}"
            ctx.observe("untried", what="resources", names=uris[len(sample) :], why=why, step=step, reaches=True)
        if not sample:
            ctx.skip(
                "the server lists no resources to read" if not uris else "--resource-sample is 0",
                case=cases.READ,
                untried="resources" if uris else None,
            )
        if uris and ctx.flag("resources", "subscribe") and ctx.revision.has("resource_subscribe"):
            await client.request(
                "resources/subscribe", {"uri": uris[0]}, probe=ctx.probe(cases.SUBSCRIBE, f"subscribe to {uris[0]}")
            )
            await client.request(
                "resources/unsubscribe",
                {"uri": uris[0]},
                probe=ctx.probe(cases.UNSUBSCRIBE, f"unsubscribe {uris[0]}"),
            )
    else:
        answer = listing.error.describe() if listing.error is not None else "nothing"
        ctx.skip(
            f"resources/list answered {answer}, so there was nothing to read",
            requirements=left_unsent(cases.CASES, cases.LIST),
            blocked_by="RSRC-02",
        )
    missing = f"file:///mcp-assay/does-not-exist-{uuid.uuid4().hex[:12]}"
    await client.request(
        "resources/read",
        {"uri": missing},
        probe=ctx.probe(cases.MISSING_RESOURCE),
    )
    await client.request(
        "resources/read",
        {"uri": "not a uri"},
        probe=ctx.probe(cases.MALFORMED_URI),
    )
    ctx.skip(
        "the suite does not try to read files outside a server's tree (it cannot tell a refused escape "
        "from a missing file without reading something it should not)",
        requirements={"RSRC-13"},
    )


def _note_shared_names(ctx: SuiteContext, templates: list[dict[str, Any]]) -> None:
    """A note for each template name that more than one template carries."""
    by_name: dict[str, list[str]] = {}
    for item in templates:
        if isinstance(item.get("name"), str):
            by_name.setdefault(item["name"], []).append(str(item.get("uriTemplate")))
    for name, uris in by_name.items():
        if len(uris) > 1:
            ctx.observe(
                "note",
                detail=f"resources/templates/list names {len(uris)} templates {name[:80]!r} "
                f"({', '.join(uri[:80] for uri in uris[:3])}): a person choosing by name cannot tell them apart "
                "(no requirement asks for unique template names; PAGE-04 compares uriTemplate)",
            )


FAMILY = ProbeFamily(
    name="resources",
    cases=cases.CASES,
    run=run,
    capability="resources",
    description="resources/list, templates, reads",
)
