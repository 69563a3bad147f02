"""One run's shared state: its log and recording, its connections to the target, and what it learnt on the way.

A run is done in steps, each in a module of its own (:mod:`~mcp_assay.suite.setup` readies the
target, :mod:`~mcp_assay.suite.revisions` chooses what to test, :mod:`~mcp_assay.suite.drive`
sends the families, :mod:`~mcp_assay.suite.finish` judges and tells); this is what they hand on
to each other. It holds the run's one redactor, one exchange log (with the router that files
traffic into it one revision's segment at a time) and one id counter, so a recording and the
report of one run agree on every id.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from mcp_assay.recording.records import RecordingWriter
from mcp_assay.recording.redaction import Redactor
from mcp_assay.spec.provenance import provenance
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.suite.absence import Seen
from mcp_assay.suite.config import SuiteConfig
from mcp_assay.suite.context import Router
from mcp_assay.suite.events import Event
from mcp_assay.suite.oauth import SignIn
from mcp_assay.suite.plan import Plan
from mcp_assay.suite.ratelimit import RateLimiter
from mcp_assay.suite.stub.lifetime import StubSession
from mcp_assay.suite.target import Target
from mcp_assay.suite.turns import Turns
from mcp_assay.wire.model import Exchange, Observation
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["BackHop", "RunState"]


BackHop = Callable[[], Sequence[Exchange]]
"""The exchanges a gateway's back hop carried so far (the listener ``run --gateway-back`` starts)."""


class RunState:
    """One run's state, from selection to report."""

    def __init__(
        self,
        config: SuiteConfig,
        spec: SpecSet,
        emit: Callable[[Event], None],
        *,
        plan: Plan,
        mock: httpx.AsyncBaseTransport | None,
        redactor: Redactor,
    ) -> None:
        self.config = config
        self.spec = spec
        self.emit = emit
        self.plan = plan
        self.credentials = config.credentials()
        self.redactor = redactor
        """The run's one redactor: its reports, recording, printed lines and (through the CLI) its log."""
        if config.token:
            self.redactor.add_secret(config.token)  # also one the sign-in or the stub obtained
        self.log = ExchangeLog()
        self.writer = (
            RecordingWriter(
                config.record,
                self.redactor,
                source=f"mcp-assay run {self.shown_target()}",
                about={**provenance(spec), "options": config.recorded_options(self.redactor)},
            )
            if config.record
            else None
        )
        self.router = Router(self.log, self.writer, emit)
        counter = itertools.count(1)
        self.new_id: Callable[[str], str] = lambda prefix: f"{prefix}{next(counter)}"
        self.limiter = RateLimiter(per_minute=config.rate_limit, retry_budget_ms=config.retry_budget_ms)
        self.target = Target(config, spec, self.credentials, self.router, self.new_id, self.limiter, emit, mock)
        self.turns = Turns()
        self.notes: list[str] = []
        self.unjudged: str | None = None
        """Why the run has nothing to judge (no MCP server there, or none that answered usably)."""
        self.skipped: list[str] = []
        """Why families were skipped, in order (the first says why a run that sent no case tested nothing)."""
        self.back_hop: BackHop | None = None
        """What reached the upstream of the gateway under test, asked for when the suite is done (--gateway-back)."""
        self.families_run = 0
        """Families whose cases were sent (none: the run tested nothing, whatever revision it chose)."""
        self.stub: StubSession | None = None
        self.signin: SignIn | None = None
        """How the run signed itself in, when it was given no credential (set by :mod:`~mcp_assay.suite.setup`)."""
        self.tokenless: str | None = None
        """Why the run goes on without a credential the server takes (only the no-credential cases run)."""
        self.started = time.perf_counter()

    def observe(self, kind: str, data: dict[str, Any], buffer: str | None = None) -> None:
        """Record an observation of the run's own: into ``buffer`` (a revision's), else straight into the log."""
        self.router.sink(buffer)(Observation(id=self.new_id("o"), time=time.time(), kind=kind, data=data))

    def shown_target(self) -> str:
        """The target as the run's lines and report show it (secrets scrubbed)."""
        config = self.config
        return self.redactor.url(config.url) if config.url else self.redactor.text(config.target)

    def seen(self) -> Seen:
        """What the run saw of its target, for the line that says why it judged nothing."""
        return Seen(
            target=self.shown_target(), url=self.config.url, items=self.router.everything(),
            stderr=self.target.stderr(), timeout=self.config.timeout,
        )  # fmt: skip
