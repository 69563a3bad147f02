"""Completion: a completion for a real prompt or template argument, and one for a prompt that does not exist."""

from __future__ import annotations

import re
from typing import Any

from mcp_assay.cases import completion as cases
from mcp_assay.suite.context import ProbeFamily, SuiteContext

__all__ = ["FAMILY"]

_VARIABLE = re.compile(r"\{[+#./;?&]?([A-Za-z0-9_]+)")


def _reference(ctx: SuiteContext) -> tuple[dict[str, Any], str] | None:
    prompts = ctx.listings.get("prompts/list")
    if prompts is not None:
        for prompt in prompts.items:
            arguments = prompt.get("arguments")
            if isinstance(prompt.get("name"), str) and isinstance(arguments, list):
                for argument in arguments:
                    if isinstance(argument, dict) and isinstance(argument.get("name"), str):
                        return {"type": "ref/prompt", "name": prompt["name"]}, argument["name"]
    templates = ctx.listings.get("resources/templates/list")
    if templates is not None:
        for template in templates.items:
            uri = template.get("uriTemplate")
            if isinstance(uri, str):
                match = _VARIABLE.search(uri)
                if match:
                    return {"type": "ref/resource", "uri": uri}, match.group(1)
    return None


async def run(ctx: SuiteContext) -> None:
    client = ctx.client
    found = _reference(ctx)
    if found is None:
        ctx.skip(
            "no prompt argument or resource template variable to complete",
            requirements={"COMP-03", "COMP-04", "COMP-05"},
            case=cases.COMPLETE,
        )
    else:
        ref, argument = found
        await client.request(
            "completion/complete",
            {"ref": ref, "argument": {"name": argument, "value": ""}},
            probe=ctx.probe(cases.COMPLETE, f"completion for argument {argument!r}"),
        )
    await client.request(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "mcp-assay-no-such-prompt"}, "argument": {"name": "x", "value": ""}},
        probe=ctx.probe(cases.COMPLETION_UNKNOWN_PROMPT),
    )


FAMILY = ProbeFamily(
    name="completion",
    cases=cases.CASES,
    run=run,
    capability="completions",
    description="completion/complete",
    needs=("prompts", "resources"),
)
