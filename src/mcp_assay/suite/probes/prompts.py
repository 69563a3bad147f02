"""Prompts: the list, gets the suite may make, an unknown prompt and a missing required argument.

Prompts with required arguments are fetched only with the values given in ``--prompt-args``;
leaving a required argument out is a safe probe (a prompt is a template, not an action) and is
expected to get ``-32602``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_assay.cases import prompts as cases
from mcp_assay.cases.model import left_unsent
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.probes._lists import list_again, walk

__all__ = ["FAMILY"]


def _required(prompt: dict[str, Any]) -> list[str]:
    arguments = prompt.get("arguments")
    if not isinstance(arguments, list):
        return []
    return [
        item["name"]
        for item in arguments
        if isinstance(item, dict) and item.get("required") is True and isinstance(item.get("name"), str)
    ]


def _note_untried(ctx: SuiteContext, prompts: list[dict[str, Any]], needing: list[str], later: list[str]) -> None:
    """Say which listed prompts were not fetched, and the setting that fetches them."""
    if needing:
        first = next(prompt for prompt in prompts if prompt["name"] == needing[0])
        example = json.dumps({needing[0]: {name: "…" for name in _required(first)}}, ensure_ascii=False)
        one = len(needing) == 1
        step = f"--prompt-args '{example}'" + ("" if one else " (one entry per prompt)")
        why = f"need{'s' if one else ''} arguments"
        ctx.observe("untried", what="prompts", names=needing, why=why, step=step, reaches=True)
    if later:
        sample = ctx.config.resource_sample
        step = f"--resource-sample {min(10_000, sample + len(later))}"
        why = f"past the --resource-sample of {sample}"
        ctx.observe("untried", what="prompts", names=later, why=why, step=step, reaches=False)


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    listing = await walk(ctx, "prompts/list", cases.LIST)
    ctx.listings["prompts/list"] = listing
    if not listing.ok:
        answer = listing.error.describe() if listing.error is not None else "nothing"
        ctx.skip(
            f"prompts/list answered {answer}, so there was no prompt to get",
            requirements=left_unsent(cases.CASES, cases.LIST),
            blocked_by="PRM-02",
        )
        return
    prompts = [prompt for prompt in listing.items if isinstance(prompt.get("name"), str)]
    await list_again(ctx, "prompts/list", cases.LIST_AGAIN)
    fetched = 0
    needing: list[str] = []
    later: list[str] = []
    for prompt in prompts:
        name = prompt["name"]
        given = ctx.config.prompt_args.get(name)
        required = _required(prompt)
        if given is None and required:
            needing.append(name)
            continue
        if fetched >= max(1, ctx.config.resource_sample):
            later.append(name)
            continue
        params: dict[str, Any] = {"name": name}
        if given:
            params["arguments"] = dict(given)
        why = "with the arguments given in --prompt-args" if given else "needs no arguments"
        await client.request("prompts/get", params, probe=ctx.probe(cases.GET, f"prompts/get {name} ({why})"))
        fetched += 1
    _note_untried(ctx, prompts, needing, later)
    if not fetched:
        ctx.skip(
            "every listed prompt has required arguments and --prompt-args names none of them — pass "
            "--prompt-args '{\"<prompt>\": {...}}'"
            if prompts
            else "the server lists no prompts",
            requirements={"PRM-06", "PRM-10", "PRM-11"},
            case=cases.GET,
            untried="prompts" if prompts else None,
        )
    await client.request(
        "prompts/get",
        {"name": "mcp-assay-no-such-prompt"},
        probe=ctx.probe(cases.UNKNOWN_PROMPT),
    )
    with_required = next((prompt for prompt in prompts if _required(prompt)), None)
    if with_required is None:
        ctx.skip(
            "no listed prompt has a required argument",
            case=cases.MISSING_PROMPT_ARGUMENT,
        )
        return
    await client.request(
        "prompts/get",
        {"name": with_required["name"]},
        probe=ctx.probe(
            cases.MISSING_PROMPT_ARGUMENT,
            f"prompts/get {with_required['name']} without its required argument(s): -32602",
        ),
    )


FAMILY = ProbeFamily(
    name="prompts",
    cases=cases.CASES,
    run=run,
    capability="prompts",
    description="prompts/list and prompts/get",
)
