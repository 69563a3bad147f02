"""Judge traffic while it flows: records in; a recording, live findings and a report out.

The mitmproxy addon and the stdio tap describe what they see as recording records (the
``mcp-assay.recording/1`` shapes of :mod:`mcp_assay.recording`), unredacted, the moment it
happens. A :class:`LiveSession` takes each record on a worker thread, so the proxy's event loop
and the tap's relay threads never wait for judging, and

* writes it, redacted, to the recording (streamed, so memory for the file stays flat);
* feeds it to the same :class:`~mcp_assay.recording.Assembler` that reads recordings back, so the
  exchange log judged live is the log ``mcp-assay validate`` rebuilds from the recording;
* when an exchange finishes, runs the message checks on its messages and prints what failed,
  and writes an edge audit line for each request that finished;
* at the end, judges the whole log with every check and builds the report.
"""

from __future__ import annotations

import base64
import datetime as _dt
import itertools
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from mcp_assay.audit import audit_data, audit_line, audit_lines
from mcp_assay.checks import REGISTRY, Check, Context, Finding, evaluate
from mcp_assay.jsonrpc import Kind, Message, parse_message
from mcp_assay.recording import Assembler, RecordingWriter
from mcp_assay.redaction import Redactor
from mcp_assay.report.baseline import Baseline, apply_baseline
from mcp_assay.report.model import FailOn, Report, SchemaInfo, traffic_stats
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.traffic import ExchangeLog
from mcp_assay.verdicts import Outcome, Side, Source, Verdict
from mcp_assay.wire import EndReason, Exchange, HttpExchange, HttpRequest, Observation, StdioLine

__all__ = [
    "LIVE_MODES",
    "LiveSession",
    "Printer",
    "body_fields",
    "end_record",
    "exit_record",
    "http_record",
    "line_record",
    "observation_record",
    "redact_record",
    "response_record",
]

log = logging.getLogger("mcp_assay.live")

LIVE_MODES = ("all", "findings", "off")
"""``all``: a line per exchange and per streamed event, plus findings; ``findings``: only
findings; ``off``: nothing until the report."""


# -- records ---------------------------------------------------------------------------------------
def body_fields(body: bytes, key: str = "body") -> dict[str, str]:
    """A body as a record field: UTF-8 text when it is text, base64 otherwise."""
    try:
        return {key: body.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{key}_b64" if key == "body" else "b64": base64.b64encode(body).decode()}


def http_record(
    ident: str, request: HttpRequest, *, connection: str = "", probe: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "http", "x": ident, "t": request.time, "conn": connection, "method": request.method,
        "url": request.url, "headers": [list(pair) for pair in request.headers],
    }  # fmt: skip
    if request.body:
        record.update(body_fields(request.body))
    if probe is not None:
        record["probe"] = dict(probe)
    return record


def response_record(
    ident: str, status: int, reason: str, headers: Iterable[tuple[str, str]], time: float
) -> dict[str, Any]:
    return {
        "type": "response", "x": ident, "t": time, "status": status, "reason": reason,
        "headers": [list(pair) for pair in headers],
    }  # fmt: skip


def end_record(ident: str, reason: EndReason, time: float, detail: str = "") -> dict[str, Any]:
    return {"type": "end", "x": ident, "t": time, "reason": reason.value, "detail": detail}


def line_record(ident: str, connection: str, sender: Side, time: float, raw: bytes) -> dict[str, Any]:
    return {"type": "line", "x": ident, "t": time, "conn": connection, "from": sender.value, **body_fields(raw, "text")}


def exit_record(
    ident: str, connection: str, time: float, code: int | None, stdin_closed: float | None, signals: Iterable[str]
) -> dict[str, Any]:
    return {
        "type": "exit", "x": ident, "t": time, "conn": connection, "code": code,
        "stdin_closed": stdin_closed, "signals": list(signals),
    }  # fmt: skip


def observation_record(
    ident: str, time: float, kind: str, data: Mapping[str, Any], connection: str = ""
) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "observation", "x": ident, "t": time, "kind": kind, "data": dict(data)}
    if connection:
        record["conn"] = connection
    return record


def redact_record(record: Mapping[str, Any], redactor: Redactor) -> dict[str, Any]:
    """The record as it may be written to disk: credentials learnt from it, then scrubbed."""
    out = dict(record)
    kind = record.get("type")
    if kind in ("http", "response"):
        pairs = [(str(name), str(value)) for name, value in record.get("headers", [])]
        for name, value in pairs:
            redactor.learn_header(name, value)
        if kind == "http":
            redactor.learn_url(str(record.get("url", "")))
            out["url"] = redactor.url(str(record.get("url", "")))
        out["headers"] = [list(pair) for pair in redactor.headers(pairs)]
    for key in ("body", "text"):
        if isinstance(record.get(key), str):
            out[key] = redactor.body(record[key])
    for key in ("data", "comment", "detail"):
        if isinstance(record.get(key), str):
            out[key] = redactor.text(record[key])
    if kind == "observation":
        out["data"] = json.loads(redactor.text(json.dumps(record.get("data", {}))))
    return out


# -- live output -----------------------------------------------------------------------------------
def _clock(moment: float) -> str:
    return _dt.datetime.fromtimestamp(moment).strftime("%H:%M:%S.%f")[:-3]


def _short(ident: str) -> str:
    return ident[:8]


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
        self._emit(Text(redactor.text(line.plain)), at=getattr(exchange, "time", None))

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
        line = Text("  ✗ ", style="red" if check.severity.value == "must" else "yellow")
        line.append(f"{', '.join(check.requirements)} ", style="bold")
        line.append(f"{check.title} ")
        line.append(f"[{check.side.value} · {check.severity.value}] ", style="dim")
        line.append(redactor.text(finding.detail or message.describe()))
        self._emit(line, level=logging.WARNING)


def _not_run(check: Check) -> Verdict:
    """The verdict of a check that judging stopped before (never a pass: nothing was established)."""
    return Verdict(
        check=check.name, title=check.title, requirements=check.requirements, level=check.level,
        severity=check.severity, side=check.side, area=check.area, outcome=Outcome.NOT_VERIFIED,
        source=Source.PASSIVE, reason="not judged: judging was cut short before this check ran", tags=check.tags,
    )  # fmt: skip


REVISION_NOTE = "attributed per message from the traffic (per-request _meta and headers; initialize per session)"


# -- the session -----------------------------------------------------------------------------------
_STOP = object()


def schema_infos(spec: SpecSet) -> list[SchemaInfo]:
    return [
        SchemaInfo(r.name, r.schema.origin.value, str(r.schema.path), r.schema.sha256, r.schema.pinned)
        for r in spec.window
    ]


class LiveSession:
    """One capture: records fed in from any thread, judged on a worker thread, one report at the end."""

    def __init__(
        self,
        spec: SpecSet | Callable[[], SpecSet],
        *,
        redactor: Redactor,
        recorder: RecordingWriter | None = None,
        printer: Printer | None = None,
        target: Mapping[str, Any] | None = None,
        fail_on: FailOn = FailOn.MUST,
        baseline: Baseline | None = None,
        threaded: bool = True,
    ) -> None:
        self._spec_source = spec
        self._spec: SpecSet | None = spec if isinstance(spec, SpecSet) else None
        self.redactor = redactor
        self.recorder = recorder
        self.printer = printer or Printer("off")
        self.target = dict(target or {})
        self.fail_on = fail_on
        self.baseline = baseline
        self.log = ExchangeLog()
        self.notes: list[str] = []
        self.started = time.time()
        self.live_failures = 0
        self._assembler = Assembler()
        self._ctx: Context | None = None
        self._checks: list[Check] | None = None
        self._checks_broken = False
        self._audited: set[str] = set()
        self._closed = False
        self._cut_short = False
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

    def _run(self) -> None:
        try:
            self._context()  # load the rules and schemas before the first exchange finishes
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
                self.recorder.write(redact_record(record, self.redactor))
            else:
                redact_record(record, self.redactor)  # still learn the credentials for the report
            if record.get("type") == "event":
                self.printer.event(record, self.redactor)
            for exchange in self._assembler.feed(record):
                self._finished(exchange)
        except Exception:  # the capture must survive a defect here; the traffic is already relayed
            log.exception("mcp-assay could not process a %s record", record.get("type"))

    def _finished(self, exchange: Exchange, *, live: bool = True) -> None:
        self.log.add(exchange)
        if isinstance(exchange, Observation):
            detail = exchange.data.get("detail")
            if exchange.kind == "note" and isinstance(detail, str):  # a capture limit reached, for instance
                self.notes.append(self.redactor.text(detail))
            return
        if live:
            self.printer.exchange(exchange, self.log, self.redactor)
            self._judge(exchange)
        self._audit(exchange)

    def _context(self) -> tuple[Context, list[Check]]:
        if self._ctx is None or self._checks is None:
            if self._checks_broken:
                return Context(self.log, self.spec), []
            try:
                from mcp_assay.spec import rules  # noqa: F401 - registers the checks

                self._ctx = Context(self.log, self.spec)
            except Exception as exc:
                self._checks_broken = True
                self.notes.append(f"live judging was off: the checks could not be loaded ({exc})")
                raise
            self._checks = [check for check in REGISTRY.values() if check.scope == "message"]
        return self._ctx, self._checks

    def _judge(self, exchange: Exchange) -> None:
        ctx, checks = self._context()
        for message in exchange.messages:
            for check in checks:
                if check.sent_by is not None and message.sender is not check.sent_by:
                    continue
                if check.kinds is not None and message.kind not in check.kinds:
                    continue
                ctx.check = check
                try:
                    if not ctx.in_scope(message, check):
                        continue
                    if check.side is not Side.SERVER and ctx.deliberately_invalid(message):
                        continue
                    result = check.func(message, ctx)
                except Exception:  # a defect in a check is reported by the final evaluation
                    log.debug("check %s raised on a live message", check.name, exc_info=True)
                    continue
                finally:
                    ctx.check = None
                findings = [result] if isinstance(result, Finding) else list(result or ())
                for finding in findings:
                    if finding is not None and finding.outcome is Outcome.FAILED:
                        self.live_failures += 1
                        self.printer.finding(check, message, finding, self.redactor)

    def _audit(self, exchange: Exchange) -> None:
        """Write an audit line for every client request this exchange finished."""
        requests: list[Message] = []
        for message in exchange.messages:
            if message.sender is Side.CLIENT and message.kind is Kind.REQUEST:
                if isinstance(exchange, HttpExchange):
                    requests.append(message)
            elif message.kind.is_response and message.sender is Side.SERVER:
                request = self.log.request_of(message)
                if request is not None and request.transport == "stdio":
                    requests.append(request)
        for request in requests:
            self._write_audit(request)

    def _write_audit(self, request: Message) -> None:
        key = f"{request.exchange}#{request.index}"
        if key in self._audited:
            return
        self._audited.add(key)
        line = audit_line(request, self.log)
        record = observation_record(f"audit:{key}", time.time(), "audit", audit_data(line), connection="")
        if self.recorder is not None:
            self.recorder.write(redact_record(record, self.redactor))
        for exchange in self._assembler.feed(record):
            self.log.add(exchange)

    # -- the end ---------------------------------------------------------------------------------------
    def cut_short(self, reason: str, unread: int = 0) -> None:
        """Judging stops early (see :mod:`mcp_assay.addon.worker`): exchanges still open are left out, since
        their ends may be among the records not read, and the report says so."""
        self._cut_short = True
        self.notes.append(
            f"judging was cut short by {reason}: {unread} record(s) that arrived after that were not read, "
            "and exchanges still in flight were left out"
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
                self.notes.append("judging did not keep up with the traffic; the last records were not judged")
        try:
            for exchange in self._assembler.close():
                if not self._cut_short:
                    self._finished(exchange, live=False)
            for line in audit_lines(self.log):
                if line.outcome == "no-result":
                    request = next(
                        (m for m in self.log.messages() if m.exchange == line.exchange and m.index == 0), None
                    )
                    if request is not None:
                        self._write_audit(request)
        except Exception:
            log.exception("mcp-assay could not finish the capture cleanly")
        if self.recorder is not None:
            self.recorder.close()

    def report(self, stop: Callable[[], str] | None = None) -> Report:
        """Judge the whole log with every check (call :meth:`close` first).

        Once ``stop`` returns a reason no further check runs; those left are reported not verified."""
        started = time.perf_counter()
        spec = self.spec
        from mcp_assay.spec import rules  # noqa: F401 - registers the checks

        checks = list(REGISTRY.values())
        wanted = checks if stop is None else itertools.takewhile(lambda _check: not stop(), checks)
        verdicts = evaluate(self.log, spec, checks=wanted, redactor=self.redactor, source=Source.PASSIVE)
        skipped = checks[len(verdicts) :]
        if skipped and stop is not None:
            self.notes.append(
                f"judging was cut short by {stop()}: {len(skipped)} of {len(checks)} checks did not run "
                "and are reported not verified"
            )
            verdicts += [_not_run(check) for check in skipped]
        target = {
            key: self.redactor.text(value) if isinstance(value, str) else value for key, value in self.target.items()
        }
        target.setdefault("transport", ", ".join(sorted(self.log.transports())) or "none")
        if self.recorder is not None:
            target["recording"] = str(self.recorder.path)
        notes = [
            *(
                f"an unpinned schema was used for {revision.name} ({revision.schema.path})"
                for revision in spec.unpinned
            ),
            *self.notes,
            *self._assembler.problems,
        ]
        report = Report(
            results=verdicts,
            target=target,
            revision=None,
            revision_note=REVISION_NOTE,
            window=[revision.name for revision in spec.window],
            schemas=schema_infos(spec),
            notes=notes,
            audit=audit_lines(self.log),
            stats={
                **traffic_stats(self.log),
                "messages": len(self.log.messages()),
                "captured_s": round(time.time() - self.started, 3),
                "live_findings": self.live_failures,
                "duration_ms": round((time.perf_counter() - started) * 1000),
            },
            fail_on=self.fail_on,
        )
        if self.baseline is not None:
            apply_baseline(report, self.baseline)
        return report
