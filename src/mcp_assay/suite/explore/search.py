"""Exploring one tool: sending candidates, telling new failures from known ones, shrinking each and reporting it.

A :class:`ToolRun` sends every call through the suite's own ``tools/call`` (so the rate limit, the
answer cap and the recording apply), tags it with how it came about (:class:`~mcp_assay.cases.Explored`:
the tool, its seed, its role — ``search``, ``shrink`` or ``reported`` — and the arguments' kind), and
asks the :class:`~mcp_assay.suite.explore.oracle.Oracle` what failed. :mod:`.family` decides what to send.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_assay.cases import Explored, ExploreRole, Facts
from mcp_assay.cases import explore as cases
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.explore.oracle import NO_ANSWER, Failure, Oracle, Verdict
from mcp_assay.suite.explore.schemas import inside, violations
from mcp_assay.suite.explore.shrink import Shrunk, shrink
from mcp_assay.suite.probes.tools import call_tool
from mcp_assay.suite.transports import Reply
from mcp_assay.vocabulary.errors import NoAnswer, ServerExited, Unreachable

__all__ = ["HANG_SHRINK_CALLS", "INSIDE", "MAX_FAILURES", "SHRINK_CALLS", "Candidate", "Found", "ToolRun", "as_json"]

SHRINK_CALLS = 24
"""Calls one failure's shrinking may make at most, besides the search's budget (and its reported call)."""
HANG_SHRINK_CALLS = 4
"""Calls shrinking an unanswered call may make: each one that still hangs costs a whole --timeout."""
MAX_FAILURES = 8
"""Distinct failures shrunk per tool; others found are judged but not shrunk."""
INSIDE = "inside"
"""The kind of arguments that satisfy the inputSchema (any other kind names the constraint they break)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One set of arguments to send, and where it came from."""

    arguments: dict[str, Any]
    kind: str
    """``inside``, or the constraint it breaks."""
    origin: str
    """``kept``, ``edge``, ``mutation`` or ``drawn``."""
    words: str = ""


@dataclass
class Found:
    """A distinct failure of one tool: what failed on the first call that showed it (one cause often fails
    several checks at once), that call, and (once shrunk) the reported one."""

    failures: tuple[Failure, ...]
    first: Candidate
    shrunk: Shrunk | None = None
    reported: Verdict | None = None
    reply: Reply | None = None
    exchange: str | None = None

    @property
    def failure(self) -> Failure:
        """The failure shrinking keeps: a check's before a signal read off the transport."""
        return sorted(self.failures, key=lambda failure: failure.signal)[0]


@dataclass
class ToolRun:
    """Exploring one tool in one revision."""

    ctx: SuiteContext
    name: str
    schema: dict[str, Any]
    seed: int
    oracle: Oracle
    deadline: float
    budget: int
    calls: int = 0
    found: list[Found] = field(default_factory=list)
    known: set[str] = field(default_factory=set)
    """Failures already found (a check's name, with the constraint broken for a call outside the schema)."""
    baseline: frozenset[str] = frozenset()
    plainest: Candidate | None = None
    """The plainest valid arguments, answered normally (what tells a hang from a server that stays stuck)."""
    fatal: Candidate | None = None
    """The arguments after which the server stopped serving, if it did."""
    outside_sent: int = 0
    outside_refused: int = 0
    """Search calls outside the schema, and how many of them were refused (an error, or a result with isError)."""

    # -- one call ----------------------------------------------------------------------------------
    async def send(self, candidate: Candidate, role: ExploreRole, **story: Any) -> tuple[Verdict, Reply | None]:
        """Call the tool with ``candidate``'s arguments, tagged with how they came about (``story``: more fields of
        :class:`~mcp_assay.cases.Explored`), and judge the call."""
        ctx = self.ctx
        recorded = len(ctx.router.recorded(ctx.buffer))
        tag = Explored(tool=self.name, seed=self.seed, role=role, kind=candidate.kind, **story)
        what = "inside its inputSchema" if candidate.kind == INSIDE else f"breaking its inputSchema ({candidate.kind})"
        reply: Reply | None
        self.calls += 1
        try:
            reply = await call_tool(
                ctx, self.name, candidate.arguments, case=cases.EXPLORE,
                intent=f"tools/call {self.name} with arguments {what}, drawn by --explore",
                invalid=candidate.kind != INSIDE, facts=Facts(explored=tag),
            )  # fmt: skip
        except NoAnswer as exc:
            ctx.observe("no-answer", detail=str(exc), exchange=exc.exchange, family=ctx.family)
            reply = None
        except (ServerExited, Unreachable):
            self.fatal = candidate  # the runner reports the server gone (BEH-09); the note names this input
            raise
        verdict = self.oracle.judge_call(ctx.router.recorded(ctx.buffer)[recorded:], reply)
        return verdict, reply

    # -- the search ----------------------------------------------------------------------------------
    async def search(self, queue: list[Candidate]) -> None:
        """Send the candidates in turn, within the budget and the time bound; note each distinct failure."""
        for candidate in queue:
            if self.calls >= self.budget or time.monotonic() >= self.deadline:
                return
            verdict, reply = await self.send(candidate, ExploreRole.SEARCH, origin=candidate.origin)
            if candidate.kind != INSIDE:
                self.outside_sent += 1
                self.outside_refused += _refused(reply)
            new = []
            for failure in verdict.failures:
                # one finding per check and per constraint broken: an unenforced bound and an unenforced length
                # are two faults, though TOOL-14 judges both
                key = failure.name if candidate.kind == INSIDE else f"{failure.name} ({candidate.kind})"
                if failure.name not in self.baseline and key not in self.known:
                    self.known.add(key)
                    new.append(failure)
            if new:
                self.found.append(Found(tuple(new), candidate))

    # -- shrinking -----------------------------------------------------------------------------------
    def _allowed(self, first: Candidate) -> Callable[[dict[str, Any]], bool]:
        """What a smaller candidate must keep: inside the schema, or outside it at the same places."""
        if first.kind == INSIDE:
            return lambda arguments: inside(self.schema, arguments)
        where = violations(self.schema, first.arguments)
        return lambda arguments: violations(self.schema, arguments) == where

    async def shrink_all(self) -> None:
        """Shrink each distinct failure (at most :data:`MAX_FAILURES`), then send its shrunk arguments as reported;
        none once the time bound is reached (the failure stands as the search found it)."""
        for found in self.found[:MAX_FAILURES]:
            if time.monotonic() >= self.deadline:
                return
            hang = found.failure.name == NO_ANSWER  # each try of a hang costs a whole --timeout
            stuck: list[bool] = []

            async def still_fails(
                arguments: dict[str, Any],
                first: Candidate = found.first,
                name: str = found.failure.name,
                stuck: list[bool] = stuck,
            ) -> bool:
                if stuck:
                    return False
                verdict, _ = await self.send(replace(first, arguments=arguments), ExploreRole.SHRINK)
                if name not in verdict.names:
                    return False
                if name == NO_ANSWER and not await self._still_serving():
                    stuck.append(True)  # a server stuck on the first hang hangs every call: nothing smaller counts
                    return False
                return True

            found.shrunk = await shrink(
                found.first.arguments, still_fails, allowed=self._allowed(found.first),
                max_calls=HANG_SHRINK_CALLS if hang else SHRINK_CALLS, deadline=self.deadline,
            )  # fmt: skip
            if stuck:
                found.shrunk = replace(found.shrunk, stopped="the server no longer answered its plainest call")
            if time.monotonic() >= self.deadline and hang:
                continue  # a reported hang would wait out a whole --timeout past the bound
            recorded = len(self.ctx.router.recorded(self.ctx.buffer))
            found.reported, found.reply = await self.send(
                replace(found.first, arguments=found.shrunk.arguments), ExploreRole.REPORTED,
                origin=found.first.origin, found=tuple(failure.name for failure in found.failures),
                generated=as_json(found.first.arguments), steps=tuple(found.shrunk.steps),
                shrink_calls=found.shrunk.calls, stopped=found.shrunk.stopped, words=found.first.words,
            )  # fmt: skip
            calls = [item for item in self.ctx.router.recorded(self.ctx.buffer)[recorded:] if item.probe is not None]
            found.exchange = calls[0].id if calls else None

    async def _still_serving(self) -> bool:
        """Whether the server still answers the plainest call (no plainest call known: assumed so)."""
        if self.plainest is None:
            return True
        verdict, _ = await self.send(self.plainest, ExploreRole.SHRINK)
        return verdict.answered


def _refused(reply: Reply | None) -> int:
    if reply is None:
        return 0
    if reply.error is not None:
        return 1
    return 1 if isinstance(reply.result, dict) and reply.result.get("isError") is True else 0


def as_json(value: Any, limit: int = 2000) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"
