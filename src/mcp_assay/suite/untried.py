"""What a run did not try, gathered from the notes its families left in the log, for the report's first screen.

The tools, prompts and resources families each say which listed items they left out and what
would call them (an ``untried`` observation per reason), and which tools they called with
arguments drawn from the ``inputSchema`` (``generated-arguments``). A run tests each revision on
its own, so the same item is usually left out in each: one entry says so once, naming the
revisions only where they differ. What calling such an item would reach is read off the skips
the omission caused (a :class:`~mcp_assay.suite.blocking.Skip` with ``untried`` set): the
requirements the run left not verified for that reason, for the entries whose step would make the
call that was missing (``reaches``; not, say, another tool when one like it was called).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mcp_assay.report.untried import NAMES_KEPT, Generated, Untried
from mcp_assay.suite.blocking import skip_from_observation
from mcp_assay.suite.judging import revision_of_items
from mcp_assay.vocabulary.verdicts import Outcome, Verdict
from mcp_assay.wire.model import Observation
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["coverage_of"]


def _where(found: Sequence[str], tested: Sequence[str]) -> tuple[str, ...]:
    """The revisions an entry holds in; none named when it holds in every revision tested."""
    return () if set(tested) <= set(found) else tuple(found)


def coverage_of(
    log: ExchangeLog, verdicts: Sequence[Verdict], tested: Sequence[str]
) -> tuple[list[Untried], list[Generated]]:
    """The items ``log``'s run listed but did not try, and the tools it called with generated arguments."""
    untried: dict[tuple[str, tuple[str, ...], str, str, bool], tuple[int, list[str]]] = {}
    generated: dict[tuple[str, str, str], list[str]] = {}
    reasons: dict[str, set[str]] = {}
    for revision, item in revision_of_items(log):
        if not isinstance(item, Observation):
            continue
        data = item.data
        if item.kind == "untried":
            names = [str(name) for name in data.get("names", ())]
            key = (
                str(data.get("what", "")), tuple(names[:NAMES_KEPT]), str(data.get("why", "")),
                str(data.get("step", "")), data.get("reaches") is True,
            )  # fmt: skip
            untried.setdefault(key, (len(names), []))[1].append(revision or "")
        elif item.kind == "generated-arguments":
            tools: Any = data.get("tools")
            because: Any = data.get("because")
            for name, arguments in tools.items() if isinstance(tools, dict) else ():
                why = because.get(name) if isinstance(because, dict) else None
                shown = json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
                call = (str(name), shown if len(shown) <= 200 else shown[:199] + "…", str(why or "--generate-args"))
                generated.setdefault(call, []).append(revision or "")
        elif item.kind == "skip":
            skip = skip_from_observation(data)
            if skip.untried:
                reasons.setdefault(skip.untried, set()).add(skip.reason)
    reached: dict[str, list[str]] = {}
    for kind, texts in reasons.items():
        ids: dict[str, None] = {}
        for verdict in verdicts:
            if verdict.outcome is Outcome.NOT_VERIFIED and verdict.reason in texts:
                ids.update(dict.fromkeys(verdict.requirements))
        reached[kind] = list(ids)
    entries = [
        Untried(
            kind=kind,
            names=names,
            why=why,
            step=step,
            revisions=_where(found, tested),
            count=count,
            requirements=tuple(reached.get(kind, ())) if reaches else (),
        )  # fmt: skip
        for (kind, names, why, step, reaches), (count, found) in untried.items()
    ]
    calls = [
        Generated(tool=tool, arguments=arguments, because=because, revisions=_where(found, tested))
        for (tool, arguments, because), found in generated.items()
    ]
    return entries, calls
