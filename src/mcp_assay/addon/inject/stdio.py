"""The stdio tap's side of ``--inject``: answer or hold back lines on the server's behalf.

On stdio the actions that exist are a reply (the tap writes the answer line itself, a ``-32022``
say, and never passes the request on) and a hold (the tap passes the request on and keeps the
server's answer line back for ``--inject-hold-ms`` before writing it); a case whose action needs a
status, headers or an event stream has no stdio transport (:class:`~.fault.Fault` refuses it). A server restart
is not injected: the tap *is* the process the client started, so a server that died would end
the tap, and the client's restart would start another tap with a recording of its own.

Both lines of an injected exchange carry the case's :class:`~mcp_assay.wire.model.Probe`: the client's
request (for a refusal the server never saw it; for a hold it tells the rules which request was
held) and the answer the tap wrote or delayed, which is never judged as the server's.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_assay.addon.inject.actions import HoldBack, Reply
from mcp_assay.addon.inject.fault import Fault
from mcp_assay.addon.inject.plan import Plan, unmet_note
from mcp_assay.addon.inject.points import RequestFacts
from mcp_assay.cases import Facts
from mcp_assay.recording.records import observation_record
from mcp_assay.wire.jsonrpc import id_key
from mcp_assay.wire.model import Probe

__all__ = ["Answer", "Hold", "StdioInjector"]


@dataclass(frozen=True, slots=True)
class Answer:
    """Answer the client's line on the server's behalf: the request is not passed on."""

    probe: Probe
    line: bytes


@dataclass(frozen=True, slots=True)
class Hold:
    """Pass the request on, and keep its answer back for ``seconds``."""

    probe: Probe


class StdioInjector:
    """Decides, line by line, what the tap injects (thread-safe: the relays call it from two threads)."""

    def __init__(self, plan: Plan, notify: Callable[[Mapping[str, Any]], None]) -> None:
        self.plan = plan
        self.notify = notify
        self._held: dict[object, Probe] = {}
        self._lock = threading.Lock()
        self._count = 0

    @property
    def hold_seconds(self) -> float:
        return self.plan.hold_ms / 1000

    def client_line(self, raw: bytes) -> Answer | Hold | None:
        """What to do with a line the client wrote (``None``: relay it as usual)."""
        facts = RequestFacts.of(raw, transport="stdio")
        if facts is None:
            return None
        case = self.plan.claim(facts, "stdio")
        if case is None:
            return None
        action = case.action
        if isinstance(action, Reply):
            made = action.make(facts, self.plan)
            self._observe(case, case.noted(facts))
            return Answer(case.probe(made.facts), made.body + b"\n")
        if isinstance(action, HoldBack):
            probe = case.probe(Facts(hold_ms=self.plan.hold_ms))
            with self._lock:
                self._held[id_key(facts.ident)] = probe
            self._observe(case, case.noted(facts))
            return Hold(probe)
        return None  # a case the tap cannot apply never gets here: it has no stdio transport

    def server_line(self, raw: bytes) -> Probe | None:
        """The hold's tag when this server line answers a held request (then it is to be delayed)."""
        if not self._held:
            return None
        try:
            payload = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(payload, dict) or "id" not in payload or ("result" not in payload and "error" not in payload):
            return None
        with self._lock:
            return self._held.pop(id_key(payload.get("id")), None)

    def done(self) -> None:
        for case in self.plan.unmet():
            self._observe(case, "", unmet=True)

    def _observe(self, case: Fault, what: str, *, unmet: bool = False) -> None:
        self._count += 1
        detail = unmet_note(case, via="tap") if unmet else f"injected {case.name}: {what}"
        data = {"case": case.name, "era": case.era.value, "detail": detail}
        self.notify(observation_record(f"inject{self._count}", time.time(), "injection", data))
