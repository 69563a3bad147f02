"""The explore family: each allowed tool called with arguments drawn from its schema, failures shrunk and kept.

Per revision tested, after every fixed case (the family comes last and has the server to itself):

1. the tools to explore: those the server annotates ``readOnlyHint: true``, and those named with
   ``--explore-tool`` (the only way a tool that may write is explored);
2. for each, one call with the plainest valid arguments (what fails there fails without exploring, and
   is the fixed cases' to report), then, within ``--explore-budget`` calls and ``--explore-time``: the
   failing examples kept from earlier runs, values on the schema's edges (:mod:`.edges`), arguments
   breaking one constraint (:mod:`.mutate`) and hypothesis's draws (:mod:`.draws`), in turn;
3. each call judged as it is answered (:mod:`.oracle`); every distinct failure found is shrunk
   (:mod:`.shrink`), sent once more as the reported call (tagged with how it came about: the evidence
   shows its first input, the shrink steps and the replay) and kept for next time (:mod:`.examples`);
   :mod:`.search` does the sending, the telling apart and the shrinking for one tool.

Every call is ordinary traffic of the run: recorded, judged at the end by every check, and reported with
the source ``explored`` where exploring alone found the failure (a ``-32603`` to arguments inside the
schema is TOOL-15's: the tool failed on an input it accepts). What no check judges — an HTTP 5xx, a
``-32603`` to arguments outside the schema, a call outside the schema left unanswered — is a note with
the shrunk input and its replay.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from typing import Any

from mcp_assay.cases import ExploreRole
from mcp_assay.cases import explore as cases
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.engine import select_checks
from mcp_assay.spec.evidence import replay_of
from mcp_assay.suite.context import ProbeFamily, SuiteContext
from mcp_assay.suite.events import ExploreProgress
from mcp_assay.suite.explore import draws
from mcp_assay.suite.explore.edges import edges, full, plain
from mcp_assay.suite.explore.examples import Example, ExampleStore, explore_cache
from mcp_assay.suite.explore.mutate import mutations
from mcp_assay.suite.explore.oracle import INTERNAL_ERROR, NO_ANSWER, SERVER_ERROR, Oracle
from mcp_assay.suite.explore.schemas import canonical, inside, violations
from mcp_assay.suite.explore.search import INSIDE, Candidate, Found, ToolRun, as_json
from mcp_assay.suite.explore.seeds import tool_seed
from mcp_assay.suite.explore.witness import guard_for
from mcp_assay.suite.probes._lists import by_name, walk
from mcp_assay.vocabulary.errors import RateLimited, ServerExited, Unreachable
from mcp_assay.vocabulary.replays import shell_line
from mcp_assay.wire.model import HttpExchange, StdioLine
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["FAMILY"]

DRAW_SHARE = 3
"""Drawing from a tool's schema may take this fraction (one in ``DRAW_SHARE``) of the exploration's time left."""
WHY_A_NOTE = {
    INTERNAL_ERROR: "a -32603 refuses arguments outside the schema (TOOL-14 takes that), but hides why",
    SERVER_ERROR: "no requirement of the catalogue judges an HTTP 5xx to a tools/call by itself",
    NO_ANSWER: "RPC-05 judges unanswered requests inside the schema, and this one broke it on purpose",
}
"""Why a signal read off the transport is a note and not a finding (what the catalogue says of it)."""


def _interleaved(*sources: list[Candidate]) -> Iterator[Candidate]:
    for group in itertools.zip_longest(*sources):
        yield from (candidate for candidate in group if candidate is not None)


async def _candidates(ctx: SuiteContext, run: ToolRun, kept: list[Example]) -> list[Candidate]:
    """What to send, in order: the kept failures first, then edges, one-constraint breaks and draws in turn."""
    schema = run.schema
    valid = [Candidate(arguments, INSIDE, "edge", words) for words, arguments in edges(schema)]
    base = full(schema) or plain(schema)
    broken = [
        Candidate(item.arguments, item.constraint, "mutation", item.description)
        for item in (mutations(schema, base) if base is not None else [])
    ]
    drawn = await _drawn(schema, run)
    if drawn.reason:
        ctx.observe("note", detail=f"explore {ctx.revision.name}: {run.name}: {drawn.reason}")
    from_draws = [Candidate(arguments, INSIDE, "drawn") for arguments in drawn.arguments]
    first = [
        Candidate(example.arguments, example.kind, "kept")
        for example in kept
        if (inside(schema, example.arguments) if example.kind == INSIDE else violations(schema, example.arguments))
    ]
    seen: set[str] = set()
    queue = []
    for candidate in [*first, *_interleaved(valid, broken, from_draws)]:
        key = canonical(candidate.arguments)
        if key not in seen:
            seen.add(key)
            queue.append(candidate)
    return queue


async def _drawn(schema: dict[str, Any], run: ToolRun) -> draws.Drawn:
    """hypothesis's draws for ``schema``, within a third of the time left: drawing is CPU work (setting up the
    strategy alone can take seconds on a busy machine), and the calls must keep the rest of the bound. A draw not
    done by then is left to end on its own (it stops at its deadline) and the search goes on without it."""
    share = max(run.deadline - time.monotonic(), 0.0) / DRAW_SHARE
    pending = asyncio.ensure_future(
        asyncio.to_thread(draws.draw, schema, run.budget, run.seed, time.monotonic() + share)
    )
    try:
        return await asyncio.wait_for(asyncio.shield(pending), timeout=share)
    except TimeoutError:
        return draws.Drawn((), "hypothesis drew nothing in the share of --explore-time drawing may take")


def _read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def _chosen(ctx: SuiteContext, tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The tools to explore (read-only ones and the named ones, in listed order), and named ones not listed."""
    named = set(ctx.config.explore_tool)
    listed = by_name(tools)
    chosen = [tool for name, tool in listed.items() if _read_only(tool) or name in named]
    return chosen, sorted(named - set(listed))


def _last_call(ctx: SuiteContext) -> str | None:
    """The id of the last explored call this revision recorded (what a server that died was last sent)."""
    for item in reversed(ctx.router.recorded(ctx.buffer)):
        if item.probe is not None and item.probe.explored is not None:
            return item.id
    return None


def _replay(ctx: SuiteContext, exchange_id: str | None) -> str:
    """The shell line that sends the call again (over stdio: the server started, its handshake, the line)."""
    recorded = ctx.router.recorded(ctx.buffer)
    for item in reversed(recorded):
        if item.id == exchange_id and isinstance(item, HttpExchange | StdioLine):
            found = replay_of(item, ExchangeLog(recorded), Redactor())
            return shell_line(found) if found is not None else ""
    return ""


async def run(ctx: SuiteContext) -> None:
    """Explore every tool this revision may explore, within the run's budget and time bound; a note sums it up."""
    config = ctx.config
    revision = ctx.revision.name
    if not config.explore:
        return  # the runner leaves the family out of such a run (ProbeFamily.wanted); a caller of its own may not
    if not draws.available():
        ctx.skip(f"not explored: {draws.EXTRA} adds what --explore needs", requirements=(), case=cases.EXPLORE)
        return
    seed = config.seed if config.seed is not None else 0
    listing = ctx.listings.get("tools/list")
    if listing is None or not listing.ok:
        listing = await walk(ctx, "tools/list", cases.LIST)
    if not listing.ok:
        ctx.observe("note", detail=f"explore {revision}: tools/list gave no tools to explore")
        return
    tools, unknown = _chosen(ctx, listing.items)
    if unknown:
        ctx.observe("note", detail=f"explore {revision}: --explore-tool names tools the server does not list: "
                    f"{', '.join(unknown)}")  # fmt: skip
    names = ", ".join(str(tool["name"]) for tool in tools) or "none"
    ctx.router.emit(
        ExploreProgress(
            revision,
            f"explore {revision}: seed {seed} (--seed {seed} reproduces it); tools: {names}; "
            f"{config.explore_budget} calls each at most, {config.explore_time:g} s in all",
        )
    )
    if not tools:
        ctx.observe("note", detail=f"explore {revision}: no tool to explore: none is annotated readOnlyHint: true, "
                    f"and --explore-tool names none (seed {seed})")  # fmt: skip
        return
    deadline = time.monotonic() + config.explore_time
    checks = select_checks(config.only)
    summary: list[str] = []
    for index, tool in enumerate(tools):
        name = str(tool["name"])
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            summary.append(f"{name}: not explored (its inputSchema is not an object)")
            continue
        if time.monotonic() >= deadline:
            summary.append(f"{name}: not explored (--explore-time was spent)")
            continue
        oracle = Oracle(ctx.spec, ctx.revision, ctx.router.recorded(ctx.buffer), checks)
        tool_run = ToolRun(
            ctx, name, schema, tool_seed(seed, revision, name), oracle, _share(deadline, len(tools) - index),
            config.explore_budget,
        )  # fmt: skip
        try:
            summary.append(await _explore(ctx, tool_run, writes=not _read_only(tool)))
        except RateLimited as exc:
            summary.append(f"{name}: stopped, rate-limited past --retry-budget-ms ({exc.detail})")
            break
        except (ServerExited, Unreachable) as exc:
            fatal = tool_run.fatal
            sent = f" when sent {as_json(fatal.arguments, 600)} ({fatal.origin})" if fatal is not None else ""
            replay = _replay(ctx, _last_call(ctx))
            ctx.observe(
                "note",
                detail=f"explore {revision}: {name}: the server stopped serving{sent}: {exc} — not shrunk, since "
                f"nothing answers once the server is gone (BEH-09 reports it; seed {seed})"
                + (f"; replay: {replay}" if replay else ""),
            )
            raise
        _report(ctx, tool_run)
    ctx.observe("note", detail=f"explore {revision}: seed {seed}; " + "; ".join(summary))


def _share(deadline: float, tools_left: int) -> float:
    """When this tool's exploring ends: an equal part of the time left, so the first tool never takes every other
    tool's time (a tool done early leaves its rest to the tools after it)."""
    now = time.monotonic()
    return now + max(deadline - now, 0.0) / max(tools_left, 1)


async def _explore(ctx: SuiteContext, run: ToolRun, *, writes: bool) -> str:
    """One tool: its plainest call, the search, the shrinking; a tool that may write has its calls outside the
    schema sent first, between two reads of its witness (:mod:`.witness`)."""
    store = ExampleStore(explore_cache(), f"{ctx.config.target} {ctx.revision.name}", run.name, run.schema)
    base = plain(run.schema)
    already: list[str] = []
    if base is not None:
        plainest = Candidate(base, INSIDE, "plain", "the plainest valid arguments")
        verdict, _ = await run.send(plainest, ExploreRole.SEARCH)
        run.baseline = verdict.names
        already = list(dict.fromkeys(ident for failure in verdict.failures for ident in failure.requirements))
        run.plainest = plainest if verdict.answered else None
    queue = await _candidates(ctx, run, store.load())
    if writes:
        guard, why = guard_for(ctx, run.name)
        if guard is not None:
            await guard.open()
        await run.search([candidate for candidate in queue if candidate.kind != INSIDE])
        why = await guard.verdict(run.outside_sent, run.outside_refused) if guard is not None else why
        ctx.observe("note", detail=f"explore {ctx.revision.name}: {why}")
        queue = [candidate for candidate in queue if candidate.kind == INSIDE]
    await run.search(queue)
    await run.shrink_all()
    kept = [example for found in run.found for example in _kept(found)]
    if kept:
        problem = store.save(kept)
        if problem:
            ctx.observe("note", detail=f"explore {ctx.revision.name}: {run.name}: {problem}")
    shrunk = sum(1 for found in run.found if found.shrunk is not None)
    text = f"{run.name}: {run.calls} calls, {len(run.found)} distinct failure(s) found by exploring, {shrunk} shrunk"
    if already:  # what the plainest call fails is reported (found by --explore where no fixed case called the
        # tool), not counted again as a failure found by exploring: say so, or the two lines disagree
        text = (
            f"{run.name}: {run.calls} calls; its plainest valid call already fails {', '.join(already)} (reported "
            f"from that call); {len(run.found)} other distinct failure(s) found by exploring, {shrunk} shrunk"
        )
    ctx.router.emit(ExploreProgress(ctx.revision.name, f"explore {ctx.revision.name}: {text}"))
    return text


def _kept(found: Found) -> list[Example]:
    """What to keep of one failure for the next run: the input the search saw fail (whatever shrinking made of
    it), and the shrunk input when the reported call failed the same way again (once when shrinking changed
    nothing)."""
    names = tuple(failure.name for failure in found.failures)
    kept = []
    shrunk, reported = found.shrunk, found.reported
    if shrunk is not None and reported is not None and found.failure.name in reported.names:
        kept.append(Example(shrunk.arguments, found.first.kind, names))
    if not kept or canonical(kept[0].arguments) != canonical(found.first.arguments):
        kept.append(Example(found.first.arguments, found.first.kind, names))
    return kept


def _report(ctx: SuiteContext, run: ToolRun) -> None:
    """A note for each failure no check reports (a signal), and for one that did not happen again when confirmed."""
    revision = ctx.revision.name
    for found in run.found:
        shrunk, reported = found.shrunk, found.reported
        if shrunk is None or reported is None:
            continue
        arguments = as_json(shrunk.arguments, 600)
        steps = "; ".join(shrunk.steps) if shrunk.steps else "none smaller failed"
        head = f"explore {revision}: {run.name} with {arguments}"
        if found.failure.name not in reported.names:
            ctx.observe("note", detail=f"{head}: {found.failure.name} did not happen again when the shrunk "
                        f"arguments were sent once more (a flaky failure; seed {run.seed})")  # fmt: skip
            continue
        kind = found.first.kind
        where = "inside its inputSchema" if kind == INSIDE else f"outside its inputSchema ({kind})"
        for signal in (failure for failure in reported.failures if failure.signal):
            if signal.name == NO_ANSWER and kind == INSIDE:
                continue  # RPC-05 reports a call inside the schema left unanswered, with this very evidence
            if signal.name == INTERNAL_ERROR and kind == INSIDE:
                continue  # TOOL-15 reports a tool failing on arguments its schema allows, with this very evidence
            replay = _replay(ctx, found.exchange)
            ctx.observe(
                "note",
                detail=f"{head} ({where}): {signal.detail} — {WHY_A_NOTE.get(signal.name, '')}; drawn as "
                f"{as_json(found.first.arguments, 300)}, shrink steps: {steps}"
                + (f"; replay: {replay}" if replay else ""),
            )


FAMILY = ProbeFamily(
    name="explore",
    cases=cases.CASES,
    run=run,
    capability="tools",
    description="tools called with arguments drawn from their inputSchema (--explore), failures shrunk",
    wanted=lambda config: config.explore,
    exclusive=lambda config: True,
)
