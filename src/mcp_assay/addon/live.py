"""Judge traffic while it flows: records in; a recording, live findings and a report out.

The mitmproxy addon and the stdio tap describe what they see as recording records (the
``mcp-assay.recording/1`` shapes of :mod:`mcp_assay.recording.records`), unredacted, the moment it
happens. A :class:`LiveSession` takes each record on a worker thread, so the proxy's event loop
and the tap's relay threads never wait for judging, and

* writes it, redacted, to the recording (streamed, so memory for the file stays flat);
* feeds it to the same :class:`~mcp_assay.recording.records.Assembler` that reads recordings back, so the
  exchange log judged live is the log ``mcp-assay validate`` rebuilds from the recording;
* when an exchange finishes, runs the message checks on its messages and prints its line, stamped
  with when it ended (so the stamps run in order), then what failed in it, each finding marked by
  how it counts (``✗`` a MUST, ``⚠`` a SHOULD, ``ℹ`` a note), and writes an edge audit line for each
  request that finished;
* at the end, judges the whole log with every check and builds the report, which is *not judged*
  when no peer ever answered (:mod:`mcp_assay.recording.presence`).

Traffic that crossed a gateway's hops is judged hop by hop and both together, each failure naming the
party at fault (:mod:`mcp_assay.spec.gateway`); live lines say the hop.
"""

from __future__ import annotations

import datetime as _dt
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from rich.console import Console
from rich.text import Text

from mcp_assay.recording.audit import AuditTrail, audit_data, audit_line, audit_lines
from mcp_assay.recording.notes import SessionNotes
from mcp_assay.recording.presence import PeerPresence
from mcp_assay.recording.records import Assembler, RecordingWriter, observation_record, redact_record
from mcp_assay.recording.redaction import Redactor
from mcp_assay.report.about import Stats, Target
from mcp_assay.report.baseline import Baseline
from mcp_assay.report.build import build_report
from mcp_assay.report.model import FailOn, Report
from mcp_assay.report.sdk_signs import SdkSigns
from mcp_assay.report.sdks import AUTO, SdkChoice
from mcp_assay.spec.checks import Check, Finding
from mcp_assay.spec.gateway import GatewayJudge
from mcp_assay.spec.newer import NewerRevisions
from mcp_assay.spec.requirements import glossary
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.verdicts import Severity, Side, Source, whose
from mcp_assay.wire.jsonrpc import Kind, Message, parse_message
from mcp_assay.wire.model import EndReason, Exchange, HttpExchange, Observation, StdioLine
from mcp_assay.wire.traffic import ExchangeLog

__all__ = ["FINDING_MARKS", "LIVE_MODES", "LiveSession", "Printer"]

log = logging.getLogger("mcp_assay.live")

LIVE_MODES = ("all", "findings", "off")
"""``all``: a line per exchange and per streamed event, plus findings; ``findings``: only
findings; ``off``: nothing until the report."""


FINDING_MARKS = {Severity.MUST: ("✗", "red"), Severity.SHOULD: ("⚠", "yellow"), Severity.INFO: ("ℹ", "blue")}
"""The mark (and its colour) a live finding starts with, by how it counts: a note is not a failure."""


# -- live output -----------------------------------------------------------------------------------
def _clock(moment: float) -> str:
    return _dt.datetime.fromtimestamp(moment).strftime("%H:%M:%S.%f")[:-3]


def _short(ident: str) -> str:
    return ident[:8]


def _ended(exchange: Exchange) -> float | None:
    """When an exchange finished (an HTTP one when it ended, else when it was seen): its line is printed then."""
    if isinstance(exchange, HttpExchange) and exchange.ending is not None:
        return max(exchange.ending.time, exchange.time)
    return getattr(exchange, "time", None)


class Printer:
    """Live lines, to a rich console (the CLI) or to a logger (inside mitmdump)."""

    def __init__(
        self, mode: str = "all", *, console: Console | None = None, logger: logging.Logger | None = None
    ) -> None:
        self.mode = mode if mode in LIVE_MODES else "all"
        self.console = console
        self.logger = logger or log

    def _emit(self, text: Text, *, level: int = logging.INFO, at: float | None = None) -> None:
        if self.console is not None:
            if at is not None:
                text = Text.assemble((f"{_clock(at)} ", "dim"), text)
            self.console.print(text, highlight=False, soft_wrap=True)
        else:  # mitmproxy's log already stamps every line
            self.logger.log(level, "%s", text.plain)

    def note(self, text: str) -> None:
        if self.mode != "off":
            self._emit(Text(text, style="cyan"))

    def exchange(self, exchange: Exchange, log: ExchangeLog, redactor: Redactor) -> None:
        if self.mode != "all":
            return
        line = Text()
        if isinstance(exchange, HttpExchange):
            request = exchange.request
            line.append(f"{request.method} {redactor.url(request.path)}")
            first = exchange.request_message
            if first is not None:
                line.append(f" · {first.describe()}", style="bold")
            response = exchange.response
            if response is not None:
                line.append(f" → {response.status} {response.content_type or 'no content type'}")
                if response.is_event_stream:
                    line.append(f" · {len([e for e in response.events if e.carries_message])} events")
            if exchange.ending is not None and exchange.ending.reason is not EndReason.COMPLETE:
                line.append(f" · {exchange.ending.reason.value}", style="yellow")
            revision = log.exchange_revision(exchange.id)
        elif isinstance(exchange, StdioLine):
            arrow = "client → server" if exchange.sender is Side.CLIENT else "server → client"
            line.append(f"stdio {arrow} · ")
            line.append(exchange.message.describe(), style="bold")
            revision = log.revision(exchange.message)
        else:
            line.append(f"{type(exchange).__name__} {_short(exchange.id)}")
            revision = None
        if revision:
            line.append(f" ({revision})", style="dim")
        if exchange.probe is not None:
            line.append(f" [{'injected by mcp-assay' if exchange.probe.injected else 'probe'}: {exchange.probe.name}]")
        if exchange.hop is not None:
            line = Text.assemble((f"{exchange.hop.value} ", "magenta"), line)
        self._emit(Text(redactor.text(line.plain)), at=_ended(exchange))

    def event(self, record: Mapping[str, Any], redactor: Redactor) -> None:
        if self.mode != "all":
            return
        data = record.get("data")
        if not isinstance(data, str) or not data.strip():
            return
        label = parse_message(data, sender=Side.SERVER, time=0.0).describe()
        text = f"  ⇢ event: {label} (stream {_short(str(record.get('x')))})"
        self._emit(Text(redactor.text(text), style="dim"), at=float(record.get("t") or time.time()))

    def finding(self, check: Check, message: Message, finding: Finding, redactor: Redactor) -> None:
        if self.mode == "off":
            return
        mark, style = FINDING_MARKS.get(check.severity, FINDING_MARKS[Severity.MUST])
        line = Text(f"  {mark} ", style=style)
        line.append(f"{', '.join(check.requirements)} ", style="bold")
        line.append(f"{check.title} ")
        line.append(f"[{whose(finding.party, check.side)} · {check.severity.value}] ", style="dim")
        line.append(redactor.text(finding.detail or message.describe()))
        self._emit(line, level=logging.WARNING)


_STOP = object()
WINDOW = 2_000
"""Exchanges judged per window of a live session: the report is due within one window's judging of Ctrl-C."""


class LiveSession:
    """One capture: records fed in from any thread, judged on a worker thread, one report at the end."""

    def __init__(
        self,
        spec: SpecSet | Callable[[], SpecSet],
        *,
        redactor: Redactor,
        recorder: RecordingWriter | None = None,
        printer: Printer | None = None,
        target: Target | None = None,
        fail_on: FailOn = FailOn.MUST,
        baseline: Baseline | None = None,
        threaded: bool = True,
        sdk: SdkChoice = AUTO,
    ) -> None:
        self._spec_source = spec
        self._spec: SpecSet | None = spec if isinstance(spec, SpecSet) else None
        self.redactor = redactor
        self.recorder = recorder
        self.printer = printer or Printer("off")
        self.target = target if target is not None else Target()
        self.fail_on = fail_on
        self.baseline = baseline
        self.sdk = sdk
        self.signs = SdkSigns()
        """What the peers show of the SDKs they are built on (one sighting per sign: bounded)."""
        self.notes = SessionNotes(redactor.text)
        """What the report says of the session beyond its verdicts (bounded whatever a peer sends)."""
        self.presence = PeerPresence(url=redactor.url)
        self._newer: NewerRevisions | None = None
        """Revisions newer than the window the server speaks (made with the spec, which may load late)."""
        """Whether a peer ever answered: a session where none did is not judged (see
        :mod:`mcp_assay.recording.presence`)."""
        self.started = time.time()
        self.live_failures = 0
        self._assembler = Assembler()
        self._judge: GatewayJudge | None = None
        self._trail = AuditTrail()
        self._live = True
        """Whether the exchange being added is live traffic (not one the capture closed at its end)."""
        self._found: list[tuple[Check, Message, Finding]] = []
        """Findings of the exchange being added, printed once its own line is."""
        self._audited: set[str] = set()
        self._pruned_at = 0
        self._closed = False
        self._cut_short = False
        self._left_out: str | None = None
        self._writing = threading.Lock()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        if threaded:
            self._worker = threading.Thread(target=self._run, name="mcp-assay-live", daemon=True)
            self._worker.start()

    # -- feeding (any thread) --------------------------------------------------------------------------
    def feed(self, record: Mapping[str, Any]) -> None:
        """Hand over one record; never blocks on judging."""
        if self._closed:
            return
        if self._worker is None:
            self._process(record)
        else:
            self._queue.put(record)

    # -- worker ----------------------------------------------------------------------------------------
    @property
    def spec(self) -> SpecSet:
        if self._spec is None:
            source = self._spec_source
            assert callable(source)
            self._spec = source()
        return self._spec

    @property
    def judge(self) -> GatewayJudge:
        """The judge of this session (the rules and schemas load when it is first needed)."""
        if self._judge is None:
            self._judge = GatewayJudge(
                self.spec,
                redactor=self.redactor,
                source=Source.PASSIVE,
                on_failure=self._failure,
                window=WINDOW,
                on_window=self._trail.take,
            )
        return self._judge

    @property
    def log(self) -> ExchangeLog:
        """The log of the traffic that crossed no gateway hop (each hop's is :meth:`GatewayJudge.log_of`)."""
        return self.judge.plain.log

    def _run(self) -> None:
        try:
            self.judge  # noqa: B018 - load the rules and schemas before the first exchange finishes
        except Exception:
            log.exception("mcp-assay could not load the checks")
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            self._process(item)

    def _process(self, record: Mapping[str, Any]) -> None:
        try:
            if self.recorder is not None:
                self._write(redact_record(record, self.redactor))
            else:
                redact_record(record, self.redactor)  # still learn the credentials for the report
        except Exception:  # the capture must survive a defect here; the traffic is already relayed
            log.exception("mcp-assay could not record a %s record", record.get("type"))
        self.judge_only(record)

    def _write(self, record: Mapping[str, Any]) -> None:
        """Write a (redacted) record to the recording: records from the reading thread, audit lines from the
        judging one (:mod:`mcp_assay.addon.backlog`), one at a time."""
        assert self.recorder is not None
        with self._writing:
            self.recorder.write(record)

    def judge_only(self, record: Mapping[str, Any]) -> None:
        """Judge a record already written to the recording (:meth:`keep_only`), on the judging thread."""
        try:
            if record.get("type") == "event":
                self.printer.event(record, self.redactor)
            for exchange in self._assembler.feed(record):
                self._finished(exchange)
        except Exception:  # the capture must survive a defect here; the traffic is already relayed
            log.exception("mcp-assay could not process a %s record", record.get("type"))

    def _finished(self, exchange: Exchange, *, live: bool = True) -> None:
        self._live = live
        self.presence.see(exchange)
        self.signs.see(exchange)
        self.judge.add(exchange)
        if self._newer is None:
            self._newer = NewerRevisions(self.spec.newest.name)
        self._newer.see(exchange)
        found, self._found = self._found, []
        if isinstance(exchange, Observation):
            note = self.notes.take(exchange)
            if live and note is not None and exchange.kind != "note":
                self.printer.note(f"· {note}")
        elif live:
            self.printer.exchange(exchange, self.judge.log_of(exchange), self.redactor)
        for check, message, finding in found:  # after the line of the exchange they belong to
            self.printer.finding(check, message, finding, self.redactor)
        if not isinstance(exchange, Observation):
            self._audit(exchange)

    def _failure(self, check: Check, message: Message, finding: Finding) -> None:
        """A message check failed as an exchange finished: printed, while the traffic flows, after its line."""
        if self._live:
            self.live_failures += 1
            self._found.append((check, message, finding))

    def _audit(self, exchange: Exchange) -> None:
        """Write an audit line for every client request this exchange finished."""
        requests: list[Message] = []
        log = self.judge.log_of(exchange)
        for message in exchange.messages:
            if message.sender is Side.CLIENT and message.kind is Kind.REQUEST:
                if isinstance(exchange, HttpExchange):
                    requests.append(message)
            elif message.kind.is_response and message.sender is Side.SERVER:
                request = log.request_of(message)
                if request is not None and request.transport == "stdio":
                    requests.append(request)
        for request in requests:
            self._write_audit(request, log)

    def _forget_judged_windows(self) -> None:
        """Once a window is dropped, only requests carried into the next one can still need an audit line."""
        if self._pruned_at != self.judge.windows:
            self._pruned_at = self.judge.windows
            logs = [log for log, _ in self.judge.carried()]
            self._audited = {
                key for key in self._audited if any(log.get(key.partition("#")[0]) is not None for log in logs)
            }

    def _write_audit(self, request: Message, log: ExchangeLog) -> None:
        self._forget_judged_windows()
        key = f"{request.exchange}#{request.index}"
        if key in self._audited:
            return
        self._audited.add(key)
        line = audit_line(request, log)
        record = observation_record(f"audit:{key}", time.time(), "audit", audit_data(line), connection="")
        if self.recorder is not None:
            self._write(redact_record(record, self.redactor))
        for exchange in self._assembler.feed(record):
            self.judge.add(exchange)

    # -- the end ---------------------------------------------------------------------------------------
    def keep_only(self, record: Mapping[str, Any]) -> None:
        """Write a record to the recording without judging it (the worker's reading thread: judging follows
        on another, :mod:`mcp_assay.addon.backlog`, or not at all once it was cut short), so that it stays
        evidence a later ``mcp-assay validate`` can judge; recorded or not, the credentials it shows are learnt."""
        if self._closed:
            return
        try:
            redacted = redact_record(record, self.redactor)
            if self.recorder is not None:
                self._write(redacted)
        except Exception:  # the report comes first; a record that cannot be written is left out
            log.exception("mcp-assay could not record a %s record", record.get("type"))

    def cut_short(self, reason: str, unread: int = 0) -> None:
        """Judging stops early (see :mod:`mcp_assay.addon.worker`): exchanges still open are left out, since
        their ends may be among the records not read, and the report says so."""
        self._cut_short = True
        kept = " (they are in the recording)" if unread and self.recorder is not None else ""
        self.notes.add(
            f"judging was cut short by {reason}: {unread} record(s) that arrived after that were not judged{kept}, "
            "and exchanges still in flight were left out"
        )

    def fell_behind(self, exchanges: int, records: int, since: float | None, *, torn: bool = False) -> None:
        """Judging could not keep up with the traffic (:mod:`mcp_assay.addon.backlog`): the report says how much
        was left unjudged live and how to judge it; ``torn``: an exchange judging had begun lost records, so
        exchanges still open at the end are left out, as when judging is cut short."""
        self._cut_short = self._cut_short or torn
        self._left_out = f"{exchanges} exchange(s) were left unjudged live (judging did not keep up)"
        when = f" from {_clock(since)} on" if since is not None else ""
        if self.recorder is not None:
            rest = (
                f"they are in the recording: `mcp-assay validate {self.recorder.path}` judges every exchange "
                "(the verdicts here cover the traffic before them)"
            )
        else:
            rest = "they were not recorded (--record keeps them for `mcp-assay validate`)"
        self.notes.add(
            f"judging did not keep up with the traffic: {exchanges} exchange(s) ({records} record(s)){when} were "
            f"left unjudged live; {rest}"
        )

    def close(self, timeout: float = 30.0) -> None:
        """Drain the queue, finish exchanges still open, audit unanswered requests, close the file."""
        if self._closed:
            return
        self._closed = True
        if self._worker is not None:
            self._queue.put(_STOP)
            self._worker.join(timeout)
            if self._worker.is_alive():
                self.notes.add("judging did not keep up with the traffic; the last records were not judged")
        try:
            for exchange in self._assembler.close():
                if not self._cut_short:
                    self._finished(exchange, live=False)
            for judged, _ in self.judge.carried():
                requests = {message.exchange: message for message in judged.messages() if message.index == 0}
                for line in audit_lines(judged):
                    request = requests.get(line.exchange) if line.outcome == "no-result" else None
                    if request is not None:
                        self._write_audit(request, judged)
        except Exception:
            log.exception("mcp-assay could not finish the capture cleanly")
        if self.recorder is not None:
            self.recorder.close()

    def report(self, stop: Callable[[], str | None] | None = None) -> Report:
        """Judge what the log checks need the last window for, and build the report (call :meth:`close` first).

        Once ``stop`` returns a reason no further check runs; those left are reported not verified."""
        started = time.perf_counter()
        verdicts = self.judge.verdicts(stop=stop)
        if self.judge.stopped:
            self.notes.add(self.judge.stopped)
        transports: set[str] = set()
        for log, carried in self.judge.carried():
            self._trail.take(log, carried)
            transports |= log.transports()
        target = self.target.redacted(self.redactor.text)
        if target.transport is None:
            target = replace(target, transport=", ".join(sorted(transports)) or "none")
        if self.recorder is not None:
            target = replace(target, recording=str(self.recorder.path), evidence=[self.recorder.evidence()])
        if self._newer is not None and self._newer.found:
            target = replace(target, unknown_revisions=dict(self._newer.found))
        unjudged = self.presence.unjudged(self.target.kind or "")
        unjudged = self.redactor.text(unjudged) if unjudged is not None else None  # it quotes stderr and commands
        ending = self.presence.exit_note() if unjudged is None else None
        return build_report(
            verdicts,
            target=target,
            schemas=self.spec.schema_infos(),
            notes=[*self.notes.notes(), *self._assembler.problems, *filter(None, [self._trail.note(), ending])],
            audit=list(self._trail.lines),
            stats=Stats(
                exchanges=self.judge.exchanges_seen,
                observations=self.judge.observations_seen,
                messages=self.judge.messages_seen,
                captured_s=round(time.time() - self.started, 3),
                live_findings=self.live_failures,
                duration_ms=round((time.perf_counter() - started) * 1000),
            ),
            fail_on=self.fail_on,
            glossary=glossary(verdicts),
            baseline=self.baseline,
            unjudged=unjudged,
            left_out=self._left_out,
            sdk=self.sdk,
            signs=self.signs,
        )
