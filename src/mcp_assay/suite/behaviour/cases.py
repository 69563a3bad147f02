"""The behaviour cases of one lane: lists per principal, refusals, handles, reads, and the cancel race.

Each case only produces traffic and witness reads; the rules in
:mod:`mcp_assay.spec.rules.behaviour.principals` judge them. Every exchange a case sends carries its
:mod:`mcp_assay.cases.behaviour` case and the facts of the step (:class:`~mcp_assay.cases.Facts`: the
behaviour case it belongs to, its era and transport, the principal and tool), and every witness read is
an observation with the same facts, so a recording of the run is judged exactly as the run.

A write tool is first *calibrated*: one accepted call (with the cancellation delay, if any) must
move its witness, or nothing about that tool can be proved. Then each refusal is sent between two
witness reads, and finally the race: the call is made with a client timeout shorter than its work,
the client gives up the way the era and transport say (2026 HTTP: close the response stream;
2025 HTTP and stdio: ``notifications/cancelled``), waits the settle time, and reads the witness.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from mcp_assay.cases import NO_FACTS, Facts, Phase, Refusal
from mcp_assay.cases import behaviour as cases
from mcp_assay.suite.behaviour.config import Handle, ReadTool, Witness, WriteTool
from mcp_assay.suite.behaviour.extract import ExtractError, apply_extract, parse_extract
from mcp_assay.suite.behaviour.lanes import Client, Lane, Unavailable, refusable
from mcp_assay.suite.behaviour.witness import Read, WitnessReader
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.era_clients import ModernClient, encode_header_value
from mcp_assay.suite.outgoing import encode, validate_outgoing
from mcp_assay.suite.transports import Reply, StreamControl
from mcp_assay.suite.transports.stdio import StdioTransport
from mcp_assay.vocabulary.errors import CredentialsRefused, NoAnswer
from mcp_assay.vocabulary.protocol import Header
from mcp_assay.wire.jsonrpc import id_key
from mcp_assay.wire.model import Probe

__all__ = ["LaneRun", "RACE_REQUIREMENTS", "REFUSAL_REQUIREMENTS"]

REFUSAL_REQUIREMENTS = frozenset().union(*(case.feeds for case in cases.REFUSALS.values()))
RACE_REQUIREMENTS = cases.CANCEL_RACE.feeds
SESSION_REQUIREMENTS = cases.SESSION_OTHER_PRINCIPAL.feeds
LIST_REQUIREMENTS = cases.PRINCIPAL_LIST.feeds
HANDLE_REQUIREMENTS = cases.HANDLE_USE.feeds
READ_REQUIREMENTS = cases.READ_TOOL.feeds
DEFAULT_SETTLE_FLOOR_MS = 1_000
SETTLE_CEILING_MS = 10_000
CANARY_PREFIX = "mcp-assay-canary-"


@dataclass
class Calibration:
    """The accepted call a write tool's cases rest on."""

    before: Read
    after: Read
    duration: float
    """Seconds from sending the call to its answer."""
    reply: Reply | None

    @property
    def moved(self) -> bool:
        return self.before.ok and self.after.ok and self.before.value != self.after.value


@dataclass(frozen=True)
class RaceCall:
    """The call a race gives up on: the tool and arguments, its time budget, and the step its traffic belongs to."""

    tool: WriteTool
    arguments: Mapping[str, Any]
    probe: Probe
    timeout: float
    """Seconds the client waits before giving up."""
    token: str
    """The call's progress token."""
    case: str
    step: Facts


@dataclass(frozen=True)
class Attempt:
    """One call that must be refused: who sends it, how, and what the report calls it."""

    kind: Refusal
    """Which refusal it is (its case, and the name BEH-05 gives it)."""
    what: str
    client: Client
    principal: str | None
    arguments: Mapping[str, Any]
    extra: tuple[str, ...] | None = None
    called: str | None = None
    """The tool named in the body, when it is not the write tool."""
    headers: Mapping[str, str] | None = None
    mcp_name: str | None = None


def _remember_tools(client: Client, reply: Reply) -> None:
    """Keep the tools a 2026 listing offered, for the ``Mcp-Param-*`` headers and ``Mcp-Name`` of later calls."""
    tools = reply.result.get("tools") if reply.ok else None
    if isinstance(tools, list) and isinstance(client, ModernClient):
        client.tools.update({t["name"]: t for t in tools if isinstance(t, dict) and "name" in t})


class LaneRun:
    """Runs every configured case in one lane."""

    def __init__(self, ctx: SuiteContext, lane: Lane, reader: WitnessReader) -> None:
        self.ctx = ctx
        self.lane = lane
        self.reader = reader
        self.behaviour = lane.behaviour
        self.listed: set[str | None] = set()
        """Principals whose tools/list this lane captured (the rules read tool schemas from it)."""
        self.unstable: dict[str, str] = {}
        """Witnesses whose value moved on its own (name -> the two values), so nothing rests on them."""

    # -- plumbing --------------------------------------------------------------------------------
    def case(self, *parts: str) -> str:
        return "/".join((self.lane.revision_name, self.lane.transport, *parts))

    def skip(self, reason: str, requirements: frozenset[str], case: str) -> None:
        self.ctx.skip(f"{self.lane.label}: {reason}", requirements=requirements, label=case)

    def note(self, text: str) -> None:
        self.ctx.observe("note", detail=text)

    async def client(self, principal: str | None, *, distinct: bool = False) -> Client:
        try:
            return await self.lane.client(principal, distinct=distinct)
        except CredentialsRefused as exc:
            raise Unavailable(f"the server refused principal {principal}'s credentials ({exc})") from None
        except NoAnswer as exc:
            raise Unavailable(f"opening a connection as {principal or 'the run'} got no answer ({exc})") from None

    async def call(
        self,
        client: Client,
        tool: str,
        arguments: Mapping[str, Any],
        probe: Probe,
        *,
        timeout: float | None = None,
        progress: str | None = None,
        **options: Any,
    ) -> Reply:
        """One ``tools/call`` in the lane's era (a progress token in ``_meta`` when asked)."""
        return await client.send(
            self.body(client, tool, arguments, progress), probe, timeout=timeout, **refusable(client), **options
        )

    @staticmethod
    def body(client: Client, tool: str, arguments: Mapping[str, Any], progress: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": tool, "arguments": dict(arguments)}
        if isinstance(client, ModernClient):
            meta = client.meta(progressToken=progress) if progress is not None else None
            return client.build("tools/call", params, meta=meta)
        if progress is not None:
            params["_meta"] = {"progressToken": progress}
        return client.build("tools/call", params)

    async def witness_read(self, witness: Witness, case: str, read: str, step: Facts = NO_FACTS) -> Read:
        return await self.reader.read(witness, case=case, read=read, step=step)

    def witness(self, name: str | None, owner: str, requirements: frozenset[str], case: str) -> Witness | None:
        if name is None:
            self.skip(f"{owner}: no witness configured ({owner}.witness)", requirements, case)
            return None
        if name in self.unstable:
            self.skip(f"witness {name} moved on its own ({self.unstable[name]}); isolate the test environment",
                      requirements, case)  # fmt: skip
            return None
        return self.behaviour.witnesses[name]

    # -- the lane --------------------------------------------------------------------------------
    async def run(self) -> None:
        await self.warm_up()  # already done for every lane at the start; opens only what is still missing
        await self.stability()
        await self.principal_lists()
        await self.guarded(self.session_binding(), SESSION_REQUIREMENTS, "session")
        for tool in self.behaviour.write_tools.values():
            await self.guarded(self.write_tool(tool), REFUSAL_REQUIREMENTS | RACE_REQUIREMENTS, f"write/{tool.name}")
        for handle in self.behaviour.handles.values():
            await self.guarded(self.handle(handle), HANDLE_REQUIREMENTS, f"handle/{handle.name}")
        for read in self.behaviour.read_tools.values():
            await self.guarded(self.read_tool(read), READ_REQUIREMENTS, f"read/{read.name}")

    async def guarded(self, work: Any, requirements: frozenset[str], case: str) -> None:
        try:
            await work
        except Unavailable as exc:
            self.skip(str(exc), requirements, self.case(case))
        except NoAnswer as exc:
            self.ctx.observe("no-answer", detail=str(exc), exchange=exc.exchange, family=self.ctx.family)
            self.skip(f"the server did not answer ({exc})", requirements, self.case(case))

    async def warm_up(self) -> None:
        """Open every principal's connection at once (stdio servers spend their first second importing)."""
        wanted: set[tuple[str | None, bool]] = set()
        for name in self.behaviour.tools_by_principal:
            wanted.add((name, True))
        for tool in self.behaviour.write_tools.values():
            wanted.add((tool.principal, False))
            if tool.refusals.principal_without_scope:
                wanted.add((tool.refusals.principal_without_scope, True))
        for witness in self.behaviour.witnesses.values():
            if witness.kind == "mcp":
                wanted.add((witness.principal, False))
        for handle in self.behaviour.handles.values():
            wanted.update({(handle.create.principal, True), (handle.use.principal, True)})

        async def open_one(name: str | None, distinct: bool) -> None:
            try:
                await self.client(name, distinct=distinct)
            except Unavailable:
                pass  # the case that needs it reports why

        await asyncio.gather(*(open_one(name, distinct) for name, distinct in sorted(wanted, key=str)))

    async def stability(self) -> None:
        """Each witness in use is read twice, ``stability_ms`` apart: a value that moves on its own proves nothing."""
        used = {tool.witness for tool in self.behaviour.write_tools.values()}
        used |= {tool.witness for tool in self.behaviour.read_tools.values()}
        witnesses = [self.behaviour.witnesses[name] for name in sorted(item for item in used if item is not None)]
        if not witnesses:
            return
        first = [await self.witness_read(item, self.case("stability", item.name), "first") for item in witnesses]
        await asyncio.sleep(max(witness.stability_ms for witness in witnesses) / 1000)
        for witness, before in zip(witnesses, first, strict=True):
            after = await self.witness_read(witness, self.case("stability", witness.name), "second")
            if before.ok and after.ok and before.value != after.value:
                self.unstable[witness.name] = f"{before.value!r} then {after.value!r}"

    # -- BEH-04 ----------------------------------------------------------------------------------
    async def principal_lists(self) -> None:
        for name in self.behaviour.tools_by_principal:
            self.listed.add(name)
            case = self.case("tools-by-principal", name)
            try:
                client = await self.client(name, distinct=True)
            except Unavailable as exc:
                self.skip(str(exc), LIST_REQUIREMENTS, case)
                continue
            cursor: str | None = None
            for page in range(1, self.ctx.config.page_limit + 1):
                params: dict[str, Any] | None = {"cursor": cursor} if cursor is not None else None
                if params is None and self.lane.modern:
                    params = {}
                probe = self.lane.probe(
                    cases.PRINCIPAL_LIST,
                    f"tools/list as {name} (page {page})",
                    Facts(case=case, principal=name, page=page),
                )
                reply = await client.request("tools/list", params, probe=probe, **refusable(client))
                if not reply.ok:
                    break
                _remember_tools(client, reply)
                next_cursor = reply.result.get("nextCursor")
                if not isinstance(next_cursor, str):
                    break
                cursor = next_cursor

    # -- AUTH-33 ---------------------------------------------------------------------------------
    async def session_binding(self) -> None:
        """2025 HTTP: a second principal's credentials presented with the session the first one opened."""
        if self.lane.transport != "http" or self.lane.modern:
            return
        names = [name for name, principal in self.behaviour.principals.items() if principal.http]
        owners = [tool.principal for tool in self.behaviour.write_tools.values() if tool.principal in names]
        owner = owners[0] if owners else (names[0] if names else None)
        other = next((name for name in names if name != owner), None)
        if owner is None or other is None:
            self.skip("a session can only be tried with another principal's credentials when the config names two "
                      "principals with a token or headers", SESSION_REQUIREMENTS, self.case("session"))  # fmt: skip
            return
        client = await self.lane.impostor(owner, self.lane.credentials(other), f"2025-session-{other}")
        probe = self.lane.probe(
            cases.SESSION_OTHER_PRINCIPAL, f"tools/list as {other} inside the session {owner} opened: refused",
            Facts(case=self.case("session", owner), principal=other, owner=owner),
        )  # fmt: skip
        await client.request("tools/list", None, probe=probe, **refusable(client))

    # -- BEH-05 / BEH-03 / BEH-06 ----------------------------------------------------------------
    async def write_tool(self, tool: WriteTool) -> None:
        base = f"write/{tool.name}"
        witness = self.witness(tool.witness, f"write_tools.{tool.name}", REFUSAL_REQUIREMENTS | RACE_REQUIREMENTS,
                               self.case(base))  # fmt: skip
        if witness is None:
            return
        racing = tool.cancellation is not None and (
            tool.cancellation.eras is None or self.lane.revision_name in tool.cancellation.eras
        )
        await self.schema_of(tool)
        calibration = await self.calibrate(tool, witness, racing)
        if not calibration.moved:
            answer = calibration.reply.describe() if calibration.reply is not None else "no answer"
            failure = calibration.before.error or calibration.after.error
            why = (
                f"a witness read failed ({failure})"
                if failure
                else f"an accepted call of {tool.name} ({answer}) did not move witness {witness.name}"
            )
            self.skip(
                f"calibration: {why}, so the refusals and cancellation of {tool.name} cannot be proved",
                REFUSAL_REQUIREMENTS | RACE_REQUIREMENTS,
                self.case(base, "calibrate"),
            )
            return
        await self.refusals(tool, witness)
        if tool.cancellation is None:
            self.skip(f"no cancellation configured for {tool.name} (write_tools.{tool.name}.cancellation)",
                      RACE_REQUIREMENTS, self.case(base, "race"))  # fmt: skip
        elif not racing:
            self.skip(f"write_tools.{tool.name}.cancellation.eras leaves {self.lane.revision_name} out",
                      RACE_REQUIREMENTS, self.case(base, "race"))  # fmt: skip
        else:
            for attempt in range(1, tool.cancellation.repeat + 1):
                await self.race(tool, witness, calibration, attempt if tool.cancellation.repeat > 1 else None)

    async def schema_of(self, tool: WriteTool) -> None:
        """List the tools as the write tool's principal unless done already: the rules need its inputSchema."""
        if tool.principal in self.listed:
            return
        self.listed.add(tool.principal)
        client = await self.client(tool.principal)
        params: dict[str, Any] | None = {} if self.lane.modern else None
        probe = self.lane.probe(cases.SCHEMA_LIST, f"tools/list for the inputSchema of {tool.name}",
                                Facts(principal=tool.principal))  # fmt: skip
        _remember_tools(client, await client.request("tools/list", params, probe=probe, **refusable(client)))

    def _arguments(self, tool: WriteTool, racing: bool) -> dict[str, Any]:
        arguments = dict(tool.arguments)
        if racing and tool.cancellation is not None:
            arguments.update(tool.cancellation.delay_argument)
        return arguments

    async def calibrate(self, tool: WriteTool, witness: Witness, racing: bool) -> Calibration:
        case = self.case("write", tool.name, "calibrate")
        step = Facts(tool=tool.name, phase=Phase.CALIBRATE)
        client = await self.client(tool.principal)
        before = await self.witness_read(witness, case, "before", step)
        called = cases.CANCEL_RACE if racing else cases.WRITE_BASELINE
        probe = self.lane.probe(called, f"calibrate: an accepted tools/call {tool.name} must move the witness",
                                step.merged(case=case, principal=tool.principal))  # fmt: skip
        started = time.monotonic()
        reply: Reply | None = await self.call(client, tool.name, self._arguments(tool, racing), probe)
        duration = time.monotonic() - started
        after = await self.witness_read(witness, case, "after", step)
        return Calibration(before=before, after=after, duration=duration, reply=reply)

    async def refusals(self, tool: WriteTool, witness: Witness) -> None:
        """R1..R6 (AUTH-AND-BEHAVIOUR §3.4): each sent between two witness reads; BEH-05 judges the storage."""
        refusals = tool.refusals
        own = await self.client(tool.principal)
        if refusals.extra_arguments:
            extra = tuple(sorted(refusals.extra_arguments))
            what = f"tools/call {tool.name} with arguments its inputSchema forbids ({', '.join(extra)})"
            arguments = {**tool.arguments, **refusals.extra_arguments}
            attempt = Attempt(Refusal.EXTRA_ARGUMENTS, what, own, tool.principal, arguments, extra=extra)
            await self.refusal(tool, witness, attempt)
        else:
            self.skip(f"no forbidden argument configured for {tool.name} "
                      f"(write_tools.{tool.name}.refusals.extra_arguments)", frozenset({"BEH-03"}),
                      self.case("write", tool.name, "refusal", Refusal.EXTRA_ARGUMENTS))  # fmt: skip
        if refusals.principal_without_scope:
            other = refusals.principal_without_scope
            try:
                client = await self.client(other, distinct=True)
            except Unavailable as exc:
                self.skip(str(exc), frozenset({"BEH-05"}),
                          self.case("write", tool.name, "refusal", Refusal.PRINCIPAL_WITHOUT_SCOPE))  # fmt: skip
            else:
                what = f"tools/call {tool.name} as {other}, who must not be able to use it"
                attempt = Attempt(Refusal.PRINCIPAL_WITHOUT_SCOPE, what, client, other, tool.arguments)
                await self.refusal(tool, witness, attempt)
        await self.credential_refusals(tool, witness)
        if self.lane.transport == "http" and self.lane.modern:
            named = self._another_tool(tool, own)
            what = f"tools/call {tool.name} under an Mcp-Name header naming {named}"
            headers: dict[str, str] = {Header.NAME: encode_header_value(named)}
            attempt = Attempt(Refusal.MISMATCHED_NAME, what, own, tool.principal, tool.arguments, headers=headers,
                              mcp_name=named)  # fmt: skip
            await self.refusal(tool, witness, attempt)
        unknown = f"{tool.name}_mcp_assay_unknown"
        what = f"tools/call of the unknown tool {unknown} with {tool.name}'s arguments"
        attempt = Attempt(Refusal.UNKNOWN_TOOL, what, own, tool.principal, tool.arguments, called=unknown)
        await self.refusal(tool, witness, attempt)

    async def credential_refusals(self, tool: WriteTool, witness: Witness) -> None:
        """R3 and R4 over HTTP: the write with a forged credential, and with none (stdio has no credential)."""
        if self.lane.transport != "http":
            return
        credentials = self.lane.credentials(tool.principal)
        forged = credentials.forged(f"mcp-assay-invalid-{uuid.uuid4().hex}")
        if forged is None:
            self.note(f"{self.lane.label}: {tool.name} is called without a credential, so calls with an invalid "
                      "one or none prove nothing and were not sent")  # fmt: skip
            return
        for kind, presented, principal, what in (
            (Refusal.INVALID_TOKEN, forged, tool.principal, f"tools/call {tool.name} with an invalid token"),
            (Refusal.ANONYMOUS, credentials.anonymous(), None, f"tools/call {tool.name} without credentials"),
        ):
            client = await self.lane.impostor(tool.principal, presented, f"{self.lane.revision_name[:4]}-{kind}")
            # a deliberate credential probe (its case is invalid): the client-side rules (AUTH-36) must leave it out
            await self.refusal(tool, witness, Attempt(kind, what, client, principal, tool.arguments))

    def _another_tool(self, tool: WriteTool, client: Client) -> str:
        """A tool name for the ``Mcp-Name`` header that is not the write tool: a read tool when one is known."""
        listed = client.tools if isinstance(client, ModernClient) else {}
        known = [*self.behaviour.read_tools, *sorted(listed), *sorted(self.lane.tools)]
        return next((name for name in known if name != tool.name), "mcp_assay_other_tool")

    async def refusal(self, tool: WriteTool, witness: Witness, attempt: Attempt) -> None:
        case = self.case("write", tool.name, "refusal", attempt.kind)
        step = Facts(tool=tool.name, phase=Phase.REFUSAL, refusal=attempt.kind)
        before = await self.witness_read(witness, case, "before", step)
        probe = self.lane.probe(
            cases.REFUSALS[attempt.kind], f"{attempt.what}: must be refused and change nothing",
            step.merged(case=case, principal=attempt.principal, extra=attempt.extra, mcp_name=attempt.mcp_name),
        )  # fmt: skip
        options: dict[str, Any] = {"headers": attempt.headers} if attempt.headers else {}
        await self.call(attempt.client, attempt.called or tool.name, attempt.arguments, probe, **options)
        await asyncio.sleep(tool.settle_ms / 1000)
        if before.ok:
            await self.witness_read(witness, case, "after", step)

    # -- the race --------------------------------------------------------------------------------
    async def race(self, tool: WriteTool, witness: Witness, calibration: Calibration, attempt: int | None) -> None:
        cancellation = tool.cancellation
        assert cancellation is not None
        case = self.case("write", tool.name, "race" if attempt is None else f"race-{attempt}")
        duration_ms = calibration.duration * 1000
        timeout_ms = cancellation.timeout_ms if cancellation.timeout_ms is not None else max(1, round(duration_ms / 3))
        settle_ms = cancellation.settle_ms
        if settle_ms is None:
            settle_ms = min(SETTLE_CEILING_MS, max(DEFAULT_SETTLE_FLOOR_MS, round(3 * duration_ms)))
        step = Facts(tool=tool.name, phase=Phase.RACE, timeout_ms=timeout_ms, settle_ms=settle_ms,
                     calibrated_ms=round(duration_ms), attempt=attempt)  # fmt: skip
        client = await self.client(tool.principal)
        before = await self.witness_read(witness, case, "before", step)
        arguments = self._arguments(tool, True)
        token = f"mcp-assay-race-{uuid.uuid4().hex[:8]}"
        intent = f"tools/call {tool.name} given up after {timeout_ms} ms: no late write may follow"
        probe = self.lane.probe(cases.CANCEL_RACE, intent, step.merged(case=case, principal=tool.principal))
        timeout = timeout_ms / 1000
        race_call = RaceCall(tool, arguments, probe, timeout, token, case, step)
        sent = time.time()
        if self.lane.transport == "http" and self.lane.modern:
            gave_up, how = await self._race_by_closing(race_call)
        elif self.lane.transport == "http":
            gave_up, how = await self._race_by_notice_http(client, race_call, settle_ms)
        else:
            gave_up, how = await self._race_by_notice_stdio(client, race_call)
        remaining = settle_ms / 1000 - (time.time() - gave_up)
        if remaining > 0:
            await asyncio.sleep(remaining)
        after = await self.witness_read(witness, case, "after", step)
        self.note(self._timeline(tool, witness, sent, gave_up, how, before, after, attempt))

    def _timeline(
        self,
        tool: WriteTool,
        witness: Witness,
        sent: float,
        gave_up: float,
        how: str,
        before: Read,
        after: Read,
        attempt: int | None,
    ) -> str:
        def at(moment: float) -> str:
            return f"+{round((moment - sent) * 1000)} ms"

        reads = f"{before.value!r} → {after.value!r}" if before.ok and after.ok else "a read failed"
        return (
            f"cancel race {self.lane.label}, {tool.name}{f' #{attempt}' if attempt else ''}: sent +0 ms, "
            f"gave up {at(gave_up)} ({how}), "
            f"witness {witness.name} read {at(after.time)}: {reads}"
        )

    async def _race_by_closing(self, race_call: RaceCall) -> tuple[float, str]:
        """2026 HTTP: a connection of its own, closed when the timeout passes (closing the stream cancels)."""
        tool = race_call.tool
        key = self.lane.identity(tool.principal, distinct=False)
        client = await self.lane.new_client(key, connection=f"{self.lane.revision_name[:4]}-race")
        self.lane.keep(client.transport)
        reply = await self.call(
            client, tool.name, race_call.arguments, race_call.probe, progress=race_call.token,
            cancel_after=race_call.timeout,
        )  # fmt: skip
        if reply.closed_by_client:
            return time.time(), "closed the response stream"
        return time.time(), f"answered first: {reply.describe()}"

    async def _race_by_notice_http(self, client: Client, race_call: RaceCall, settle_ms: int) -> tuple[float, str]:
        """2025 HTTP: keep watching the call's stream, and POST notifications/cancelled in the session."""
        watch = race_call.timeout + settle_ms / 1000
        body = self.body(client, race_call.tool.name, race_call.arguments, race_call.token)
        call = asyncio.create_task(
            client.send(
                body, race_call.probe, stream=StreamControl(budget=watch), timeout=watch + 1.0, allow_refusal=True
            )
        )
        done, _ = await asyncio.wait({call}, timeout=race_call.timeout)
        if done:
            reply = call.result()
            if reply.response is not None:
                return time.time(), f"answered first: {reply.describe()}"
        given_up = await self._cancel(client, race_call, body["id"])
        try:
            await call
        except NoAnswer:
            pass  # the stream never opened; the witness decides what happened
        return given_up

    async def _race_by_notice_stdio(self, client: Client, race_call: RaceCall) -> tuple[float, str]:
        """stdio: wait for the answer until the timeout, then write notifications/cancelled."""
        transport = client.transport
        assert isinstance(transport, StdioTransport)
        body = self.body(client, race_call.tool.name, race_call.arguments, race_call.token)
        validate_outgoing(self.lane.revision, encode(body), invalid=False)
        try:
            reply = await transport.send(
                encode(body), probe=race_call.probe.at(self.lane.revision_name), expect=id_key(body["id"]),
                timeout=race_call.timeout,
            )  # fmt: skip
            return time.time(), f"answered first: {reply.describe()}"
        except NoAnswer:
            pass
        return await self._cancel(client, race_call, body["id"])

    async def _cancel(self, client: Client, race_call: RaceCall, request_id: Any) -> tuple[float, str]:
        """Give up on the call ``request_id`` with notifications/cancelled: when the client gave up, and how."""
        gave_up = time.time()
        await client.notify(
            "notifications/cancelled",
            {"requestId": request_id, "reason": "mcp-assay gave up (client timeout)"},
            probe=self.lane.probe(cases.CANCEL_RACE, "cancel the timed-out call", replace(
                race_call.step, case=race_call.case, principal=race_call.tool.principal, phase=Phase.CANCEL)),
        )  # fmt: skip
        return gave_up, "sent notifications/cancelled"

    # -- BEH-07 ----------------------------------------------------------------------------------
    async def handle(self, handle: Handle) -> None:
        case = self.case("handle", handle.name)
        owner = await self.client(handle.create.principal, distinct=True)
        other = await self.client(handle.use.principal, distinct=True)
        canary = f"{CANARY_PREFIX}{uuid.uuid4().hex[:12]}"
        arguments = dict(handle.create.arguments)
        if handle.canary_argument:
            arguments[handle.canary_argument] = canary
        planted = canary if handle.canary_argument else None
        created = await self.call(
            owner, handle.create.tool, arguments,
            self.lane.probe(cases.HANDLE_CREATE, f"{handle.create.principal} creates a {handle.name} with a canary",
                            Facts(case=case, principal=handle.create.principal, tool=handle.create.tool,
                                  canary=planted, handle=handle.name)),
        )  # fmt: skip
        result = created.result
        if not created.ok or result.get("isError") is True:
            self.skip(f"handles.{handle.name}: the create call answered {created.describe()}, so there is no handle",
                      HANDLE_REQUIREMENTS, case)  # fmt: skip
            return
        try:
            value = apply_extract(parse_extract(handle.handle), result)
        except ExtractError as exc:
            self.skip(f"handles.{handle.name}.handle: {exc}", HANDLE_REQUIREMENTS, case)
            return
        used = {key: _substitute(item, value) for key, item in handle.use.arguments.items()}
        await self.call(
            other, handle.use.tool, used,
            self.lane.probe(cases.HANDLE_USE, f"{handle.use.principal} presents {handle.create.principal}'s handle",
                            Facts(case=case, principal=handle.use.principal, tool=handle.use.tool,
                                  owner=handle.create.principal, canary=planted, handle=handle.name)),
        )  # fmt: skip

    # -- BEH-08 ----------------------------------------------------------------------------------
    async def read_tool(self, read: ReadTool) -> None:
        case = self.case("read", read.name)
        witness = self.witness(read.witness, f"read_tools.{read.name}", READ_REQUIREMENTS, case)
        if witness is None:
            return
        step = Facts(tool=read.name, phase=Phase.READ)
        client = await self.client(read.principal)
        before = await self.witness_read(witness, case, "before", step)
        probe = self.lane.probe(cases.READ_TOOL, f"tools/call {read.name}, used as a read: must change nothing",
                                step.merged(case=case, principal=read.principal))  # fmt: skip
        await self.call(client, read.name, read.arguments, probe)
        await asyncio.sleep(read.settle_ms / 1000)
        if before.ok:
            await self.witness_read(witness, case, "after", step)


def _substitute(template: Any, handle: Any) -> Any:
    if template == "{handle}":
        return handle
    if isinstance(template, str) and "{handle}" in template:
        return template.replace("{handle}", str(handle))
    return template
