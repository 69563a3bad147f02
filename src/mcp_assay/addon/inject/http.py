"""The mitmproxy side of ``--inject``: answer, hold or reshape one flow per case, and mark it.

:class:`Injector` is an addon of its own, registered *before* the observing :class:`~mcp_assay.addon.assay.Assay`
so that what the observer records is what the client gets. It acts only through mitmproxy's own
means: a response set in the ``request`` hook answers in the server's place (the request never
goes upstream), an awaitable returned from ``responseheaders`` holds an answer back, a buffered
answer's body is replaced in ``response``, and a header list is rewritten in place. Every flow it
touches is marked in ``flow.metadata`` (the case's name: a flow file keeps it), with a comment and a
mark; the observer asks :meth:`Injector.probe_of` for the :class:`~mcp_assay.wire.model.Probe` itself (one
process: the object, not a record of it) and writes it into the recording.

Without ``mcp_assay_inject`` the hooks return at their first line: forwarding is unchanged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcp_assay.addon.idle_hooks import offer_flow_hooks
from mcp_assay.addon.inject.actions import CutStream, HoldBack, Reply, Respell
from mcp_assay.addon.inject.families.cut import Resumable, cut_legacy
from mcp_assay.addon.inject.fault import Fault
from mcp_assay.addon.inject.plan import DEFAULT_HOLD_MS, Plan, unmet_note
from mcp_assay.addon.inject.points import AnswerHead, RequestFacts
from mcp_assay.addon.inject.registry import build_plan, family_names, parse_families
from mcp_assay.cases import Facts, FaultKind
from mcp_assay.recording.records import observation_record
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.protocol import HeaderKey, MediaType
from mcp_assay.wire.model import Probe

__all__ = ["CLIENT_LEFT", "INJECTED", "Injector", "PENDING", "WHOLE"]

log = logging.getLogger("mcp_assay.inject")

INJECTED = "mcp_assay_injected"
"""``flow.metadata`` key: the name of the case this flow carries (the :class:`Probe` is :meth:`Injector.probe_of`'s)."""
PENDING = "mcp_assay_inject_pending"
"""``flow.metadata`` key: a case may land on this flow once its answer's head is known."""
CLIENT_LEFT = "mcp_assay_client_left"
"""``flow.metadata`` key: when the client left while its answer was held (it never got it)."""
WHOLE = "mcp_assay_inject_whole"
"""``flow.metadata`` key: the answer is whole, not streamed through (mcp-assay made it, or reads it whole to cut it)."""
POLL_S = 0.02
ENDPOINT = "http"
"""Where a reaction is awaited: the next request to the proxied endpoint."""


FLOW_HOOKS = ("request", "responseheaders", "response", "error")
"""The injector's per-flow hooks: offered to mitmproxy only while a plan asks for faults."""


class Injector:
    """Injects the faults ``mcp_assay_inject`` names into the flows the plan chooses."""

    def __init__(
        self,
        *,
        window: Callable[[], Sequence[str]] = lambda: (),
        notify: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.window = window
        """The revision names mcp-assay knows, newest first (what a refusal offers by default)."""
        self.notify = notify
        """Where an ``injection`` observation goes (the observer's feed), so the report names each fault."""
        self.plan: Plan | None = None
        self._holding: dict[str, Fault] = {}
        self._pending: dict[str, tuple[RequestFacts, tuple[Fault, ...]]] = {}
        self._cutting: dict[str, tuple[Fault, CutStream, RequestFacts]] = {}
        self._resumable: dict[str, tuple[Resumable, Fault, CutStream]] = {}
        self._probes: dict[str, Probe] = {}
        """The tag of every flow an injection touched, by flow id (at most one per case and era a session)."""
        self._count = 0
        offer_flow_hooks(self, FLOW_HOOKS, active=False)  # until a plan asks for faults

    # -- options -------------------------------------------------------------------------------------
    def load(self, loader: Any) -> None:
        loader.add_option(
            "mcp_assay_inject", str, "",
            f"Inject faults toward the client, on the server's behalf: a comma-separated list of {family_names()}, "
            "or all (default: none; forwarding is unchanged).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_inject_hold_ms", int, DEFAULT_HOLD_MS,
            "How long the hold family holds an answer back (ms): past the client's timeout, bounded.",
        )  # fmt: skip

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx
        from mitmproxy import exceptions as _exceptions

        exceptions: Any = _exceptions
        if not updated & {"mcp_assay_inject", "mcp_assay_inject_hold_ms"}:
            return
        try:
            families = parse_families(ctx.options.mcp_assay_inject)
            self.plan = build_plan(
                families, transport="http", hold_ms=ctx.options.mcp_assay_inject_hold_ms, window=self.window()
            )
        except ConfigError as exc:
            raise exceptions.OptionsError(str(exc)) from exc
        offer_flow_hooks(self, FLOW_HOOKS, active=self.plan is not None)

    # -- hooks ---------------------------------------------------------------------------------------
    def request(self, flow: Any) -> None:
        if self.plan is None:
            return
        try:
            if flow.request.method == "GET":
                self._resume(flow)
            elif flow.request.method == "POST":
                self._offer(flow, self.plan)
        except Exception:
            log.exception("mcp-assay: could not inject into a request; it goes on unchanged")

    def responseheaders(self, flow: Any) -> Any:
        if self.plan is None:
            return None
        ident = str(flow.id)
        try:
            case = self._holding.pop(ident, None)
            if case is not None:
                return self._hold(flow, self.plan.hold_ms)
            pending = self._pending.pop(ident, None)
            if pending is not None:
                self._decide(flow, *pending)
        except Exception:
            log.exception("mcp-assay: could not inject into an answer; it goes on unchanged")
        return None

    def response(self, flow: Any) -> None:
        if self.plan is None:
            return
        try:
            self._learn(flow)
            chosen = self._cutting.pop(str(flow.id), None)
            if chosen is not None:
                self._cut(flow, *chosen)
        except Exception:
            log.exception("mcp-assay: could not cut an answer; it goes on unchanged")

    def error(self, flow: Any) -> None:
        ident = str(flow.id)
        for table in (self._holding, self._pending, self._cutting):
            table.pop(ident, None)

    def done(self) -> None:
        plan = self.plan
        if plan is None:
            return
        for case in plan.unmet():
            self._observe(case.probe(), "", unmet_note(case))

    # -- deciding ------------------------------------------------------------------------------------
    def _offer(self, flow: Any, plan: Plan) -> None:
        body = flow.request.get_content(strict=False) or b""
        facts = RequestFacts.of(body, transport="http", headers=dict(flow.request.headers.items()))
        if facts is None:
            return
        # the reaction to an injection is the client's next request to the endpoint, on whatever connection
        # its HTTP stack picks (a client may well open a new one after a 4xx)
        reacting = ENDPOINT in plan.reacting and facts.is_request
        case = plan.claim(facts, ENDPOINT)
        if case is None:
            candidates = plan.candidates(facts, reaction=reacting)
            if candidates:
                self._pending[str(flow.id)] = (facts, candidates)
                flow.metadata[PENDING] = True
            return
        self._act(flow, case, facts, plan)

    def _act(self, flow: Any, case: Fault, facts: RequestFacts, plan: Plan) -> None:
        action = case.action
        if isinstance(action, Reply):
            if not plan.window:  # the observer loads the schemas after this addon was configured
                plan.window = tuple(self.window())
            made = action.make(facts, plan)
            self._answer(flow, action.status, made.body, action.content_type)
            self._mark(flow, case.probe(made.facts), case.noted(facts))
        elif isinstance(action, HoldBack):
            self._holding[str(flow.id)] = case
            self._mark(flow, case.probe(Facts(hold_ms=plan.hold_ms)), case.noted(facts))

    def _decide(self, flow: Any, facts: RequestFacts, candidates: tuple[Fault, ...]) -> None:
        plan = self.plan
        response = flow.response
        assert plan is not None
        head = AnswerHead(
            status=response.status_code,
            content_type=response.headers.get(HeaderKey.CONTENT_TYPE, ""),
            http1=str(response.http_version).upper().startswith("HTTP/1"),
            names=frozenset(name.lower() for name in response.headers.keys()),
        )
        for case in candidates:
            action = case.action
            if not action.accepts(head) or not plan.confirm(case, ENDPOINT):
                continue
            if isinstance(action, CutStream):
                self._cutting[str(flow.id)] = (case, action, facts)
                flow.metadata[WHOLE] = True
                self._mark(flow, case.probe(Facts(retry_ms=action.retry_ms)), case.noted(facts))
            elif isinstance(action, Respell):
                fields = response.headers.fields
                response.headers.fields = tuple((action.respelled(name), value) for name, value in fields)
                self._mark(flow, case.probe(), case.noted(facts))
            return

    # -- acting --------------------------------------------------------------------------------------
    @staticmethod
    def _answer(flow: Any, status: int, body: bytes, content_type: str = MediaType.JSON) -> None:
        from mitmproxy import http

        headers: dict[str, str] = {HeaderKey.CONTENT_TYPE: content_type}
        if content_type == MediaType.EVENT_STREAM:
            headers["cache-control"] = "no-cache"
        flow.response = http.Response.make(status, body, headers)
        flow.metadata[WHOLE] = True  # made whole here: there is nothing to stream through

    async def _hold(self, flow: Any, hold_ms: int) -> None:
        """Keep the answer back for ``hold_ms``, or until the client leaves (then it never gets it)."""
        deadline = time.monotonic() + hold_ms / 1000
        while time.monotonic() < deadline:
            left = flow.client_conn.timestamp_end
            if left is not None:
                flow.metadata[CLIENT_LEFT] = float(left)
                return
            await asyncio.sleep(POLL_S)
        flow.response.timestamp_start = time.time()

    def _cut(self, flow: Any, case: Fault, action: CutStream, facts: RequestFacts) -> None:
        body = flow.response.get_content(strict=False) or b""
        split = cut_legacy(body, facts.ident, action.retry_ms)
        if split is None:
            log.info("mcp-assay: the event stream of %s carried no answer to keep back; passed on whole", facts.method)
            return
        sent, resumable = split
        flow.response.content = sent
        self._resumable[resumable.event_id] = (resumable, case, action)

    def _resume(self, flow: Any) -> None:
        last = flow.request.headers.get(HeaderKey.LAST_EVENT_ID)
        kept = self._resumable.pop(last, None) if last else None
        if kept is None:
            return
        resumable, case, action = kept
        self._answer(flow, 200, resumable.rest, MediaType.EVENT_STREAM)
        resumption = case.tag_case_named(
            action.resumption, "the rest of the stream mcp-assay cut, handed to the client that resumed it"
        )
        probe = case.probe(fault=FaultKind.RESUMED, case=resumption)
        self._mark(flow, probe, f"resumed the stream cut at event {last!r}")

    def _learn(self, flow: Any) -> None:
        """Remember the versions a discover answer advertised (what a later refusal offers)."""
        plan = self.plan
        if plan is None or plan.advertised or flow.response is None or flow.request.method != "POST":
            return
        if b"server/discover" not in (flow.request.raw_content or b""):
            return
        try:
            answer = json.loads(flow.response.get_content(strict=False) or b"")
        except ValueError:
            return
        if isinstance(answer, dict):
            plan.learn_discover(answer.get("result"))

    def probe_of(self, flow: Any) -> Probe | None:
        """The tag of the injection that touched ``flow``, if one did."""
        return self._probes.get(str(flow.id))

    def _mark(self, flow: Any, probe: Probe, what: str) -> None:
        self._probes[str(flow.id)] = probe
        flow.metadata[INJECTED] = probe.name
        flow.comment = f"injected by mcp-assay: {probe.name} ({what})"
        flow.marked = ":syringe:"
        self._observe(probe, str(flow.id), f"injected {probe.name}: {what}")

    def _observe(self, probe: Probe, exchange: str, detail: str) -> None:
        if self.notify is None:
            return
        self._count += 1
        data = {"case": probe.name, "era": probe.facts.era, "exchange": exchange, "detail": detail}
        self.notify(observation_record(f"inject{self._count}", time.time(), "injection", data))
