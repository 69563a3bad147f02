"""The mitmproxy addon: judge the MCP traffic a proxy carries, without touching it.

Load it into mitmdump (``mitmdump -s "$(mcp-assay addon-path)" --mode reverse:http://…``) or
let ``mcp-assay proxy`` run mitmproxy with it. The addon only observes: it never answers for a
server, never edits a message, and a defect inside it is logged while the traffic keeps flowing.

Event streams are the one place where observing needs care: mitmproxy buffers a response body
until it ends, which would hold back every event of a ``subscriptions/listen`` stream or a
2025-11-25 ``GET`` stream. For ``text/event-stream`` answers the addon therefore sets
``flow.response.stream`` to a pass-through function that returns each network chunk unchanged and
feeds a copy to an incremental SSE parser, so events reach the client as they arrive and reach
the checks at the same moment.

Everything the addon sees becomes a recording record handed to a judging worker process
(:mod:`mcp_assay.addon.worker`), which records, judges, prints live findings and writes the
report, so mitmproxy's event loop spends well under a millisecond per exchange on the addon.

A peer decides how much it sends, the addon how much of it is kept: of one body or event stream at
most :data:`ANSWER_LIMIT` bytes are recorded and judged. What follows passes through untouched; the
exchange then ends as one whose events were lost, so no failure rests on what was not kept, and a
note says which exchange was cut.

A server mitmproxy cannot connect to is said once per outage (a warning naming its address and the
error) and recorded as an ``upstream-unreachable`` observation: a session whose upstream never answered
is not judged, and its report says why (:mod:`mcp_assay.recording.presence`).

A gateway is watched from both sides at once: mitmproxy listens at the gateway's front (``--mode
reverse:http://gateway@8080``) and at its back (``--mode reverse:http://upstream@8081``, the address the
gateway is told its upstream is), and ``mcp_assay_gateway_back`` names the back listener (its port, or its
whole mode). Every flow then carries its hop (:class:`~mcp_assay.wire.model.Hop`, from the listener it arrived
on: ``flow.client_conn.proxy_mode``), and the worker judges each hop on its own and both together
(:mod:`mcp_assay.spec.gateway`). ``mcp_assay_hop`` instead gives every flow one hop, for a capture of one
side whose other side another capture holds (a stdio server behind the gateway, under ``mcp-assay tap
--hop back``): ``mcp-assay validate`` judges the two recordings together.

With ``mcp_assay_probe_server`` the companion :attr:`Assay.server_probe` sends the suite's probe
families to the server on a live client's revision and credentials, into the same session.
With ``mcp_assay_inject`` the companion :attr:`Assay.injector` (registered before this addon)
answers, holds or reshapes a few flows on the server's behalf; this addon records each such flow
as the client got it, tagged with the injection's probe (:meth:`Injector.probe_of`), so the recording
and every report say "injected by mcp-assay" and the engine never judges that answer as the
server's.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

from rich.console import Console

from mcp_assay.addon.flows import (
    Decision,
    classify_request,
    ending_of,
    is_event_stream,
    request_of,
    response_body,
    response_head,
    response_says_mcp,
)
from mcp_assay.addon.inject.http import CLIENT_LEFT, PENDING, WHOLE, Injector
from mcp_assay.addon.live import LIVE_MODES, LiveSession, Printer
from mcp_assay.addon.marked import marked_probe
from mcp_assay.addon.server_probe import ServerProbe
from mcp_assay.addon.worker import Finished, RemoteSession, WorkerSettings, finish
from mcp_assay.recording.presence import UNREACHABLE
from mcp_assay.recording.records import (
    RecordingWriter,
    body_fields,
    end_record,
    event_record,
    http_record,
    observation_record,
    response_record,
)
from mcp_assay.recording.redaction import REDACTED, Redactor
from mcp_assay.report import check_writable
from mcp_assay.report.about import Target
from mcp_assay.report.baseline import Baseline, read_baseline
from mcp_assay.report.brief import parse_show
from mcp_assay.report.model import FailOn
from mcp_assay.report.sdks import AUTO, parse_sdk
from mcp_assay.spec import SpecSet, load_spec
from mcp_assay.spec.collector import set_aside_what_is_loaded
from mcp_assay.spec.engine import registered_checks
from mcp_assay.spec.provenance import provenance
from mcp_assay.vocabulary.errors import AssayError
from mcp_assay.wire.model import EVENTS_LOST, EndReason, Headers, Hop
from mcp_assay.wire.sse import SseEvent, SseParser, parse_sse
from mcp_assay.wire.traffic import url_endpoint

__all__ = ["ANSWER_LIMIT", "Assay"]

log = logging.getLogger("mcp_assay.addon")

FAIL_ON_CHOICES = [item.value for item in FailOn]
HOP_CHOICES = ["", *(hop.value for hop in Hop)]
ANSWER_LIMIT = 16 * 1024 * 1024
"""Bytes of one request body, response body or event stream (decoded) the addon records and judges."""


def _address(address: Any) -> str:
    """``host:port`` of a mitmproxy connection address (``[host]:port`` for IPv6)."""
    if isinstance(address, tuple) and len(address) >= 2:
        host = str(address[0])
        return f"[{host}]:{address[1]}" if ":" in host else f"{host}:{address[1]}"
    return str(address or "?")


def _connect_error(text: str) -> str:
    """asyncio's ``[Errno 111] Connect call failed ('127.0.0.1', 9)`` as the operating system says it."""
    match = re.match(r"\[Errno (\d+)\]", text)
    return os.strerror(int(match.group(1))).lower() if match else text


def _decoder(encoding: str) -> Callable[[bytes], bytes] | None:
    """An incremental decoder for a streamed body's content-encoding (``None``: cannot decode)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return lambda chunk: chunk
    if encoding in ("gzip", "x-gzip", "deflate"):
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)
        return inflater.decompress
    return None


def _log_level(options: Any) -> int | None:
    """The level the judging worker logs at: what the proxy shows. mitmdump sets its root logger to DEBUG and
    lets its terminal log filter at ``termlog_verbosity``, so there that option says it; ``mcp-assay proxy``
    (no terminal log) configures the root logger itself, and ``None`` keeps that."""
    try:
        verbosity = options.termlog_verbosity
    except (AttributeError, KeyError):
        return None
    level = logging.getLevelName(str(verbosity).upper())
    return level if isinstance(level, int) else None


_RECORDED = ("mode", "listen_host", "listen_port", "upstream_auth")
"""mitmproxy's own options a recording's header names when they were set (besides every ``mcp_assay_*`` one)."""


def _recorded_options(options: Any) -> dict[str, Any]:
    """The options this session runs with that differ from their defaults, for the recording's header (the
    recording writer redacts them; the secrets and ``upstream_auth`` are replaced whole here)."""
    shown: dict[str, Any] = {}
    for name in sorted(options.keys()):
        if not (name.startswith("mcp_assay_") or name in _RECORDED) or not options.has_changed(name):
            continue
        value = getattr(options, name)
        if name in ("mcp_assay_secrets", "upstream_auth"):
            value = [REDACTED for _ in value] if isinstance(value, list | tuple) else REDACTED
        shown[name] = list(value) if isinstance(value, list | tuple) else value
    return shown


@dataclass
class _FlowState:
    """What the addon keeps about one flow while it is in flight."""

    ident: str
    decision: Decision
    held: list[dict[str, Any]] = field(default_factory=list)
    """Records of an undecided flow, written once the response shows it is MCP (or, for a flow an
    injection may land on, once its answer's head shows whether it did)."""
    awaiting_injection: bool = False
    parser: SseParser | None = None
    decode: Callable[[bytes], bytes] | None = None
    response_started: bool = False
    streamed: bool = False
    teed: int = 0
    """Decoded bytes of the event stream parsed so far."""
    cut: str = ""
    """Set when a body or the stream passed :data:`ANSWER_LIMIT`: what was not kept."""
    head: Headers | None = None
    """The answer's header fields, read once at ``responseheaders`` (the ``response`` hook asks them again)."""


class Assay:
    """Judges MCP traffic passing through mitmproxy; writes a recording and a report."""

    def __init__(
        self,
        *,
        in_process: bool = False,
        script: bool = False,
        stream: str = "stdout",
        spec: SpecSet | None = None,
        description: str | None = None,
        reports: Sequence[str] = (),
        console: Console | None = None,
    ) -> None:
        self._in_process = in_process
        """Judge on a thread of this process (tests) instead of a worker process (real use)."""
        self._script = script
        """Loaded by mitmdump (``-s``): mitmdump's exit status is then the verdict's (``mcp_assay_exit_code``)."""
        self._set_aside = in_process
        """Whether the loaded heap was set aside from the garbage collector's passes (only a real proxy's process
        does it, once it runs: :func:`~mcp_assay.spec.collector.set_aside_what_is_loaded`)."""
        self._stream = stream
        self._spec = spec
        self._spec_key: tuple[Any, ...] | None = None
        self._description = description
        self._default_reports = list(reports)
        self._reports: list[str] = []
        self._baseline: Baseline | None = None
        self._sdk = AUTO
        self._show: frozenset[str] = frozenset()
        self._console = console
        self._flows: dict[str, _FlowState] = {}
        self._down: set[str] = set()
        """Servers that refused a connection and have not accepted one since (each is said once per outage)."""
        self._unreachable = 0
        self._endpoints: set[str] = set()
        self._hops: tuple[str, str] = ("", "")
        """``mcp_assay_hop`` and ``mcp_assay_gateway_back`` as last configured (mitmproxy's options copy their
        values on every read)."""
        self.session: LiveSession | RemoteSession | None = None
        self.finished: Finished | None = None
        """What the session produced at ``done`` (exit code and files), for ``mcp-assay proxy``."""
        self.injector = Injector(window=self._window, notify=self._feed)
        """The fault injector: register it before this addon (it acts only when ``mcp_assay_inject`` is set)."""
        self.server_probe = ServerProbe(spec=lambda: self._spec, notify=self._feed)
        """Probes the server on a live client's revision and credentials (only with ``mcp_assay_probe_server``);
        register it before this addon, so that its last probes are judged before the report."""

    # -- options -------------------------------------------------------------------------------------
    def load(self, loader: Any) -> None:
        loader.add_option(
            "mcp_assay_report", Sequence[str], [],
            "Where the mcp-assay conformance report goes when mitmproxy stops, as FORMAT[:PATH] "
            "(terminal, json, markdown, html, junit, tap, sarif). Without PATH, terminal goes to stdout and "
            "files to the temp dir; a PATH that is a folder gets the timestamped name in it. Default: terminal.",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_record", Optional[str], None,  # noqa: UP045 - mitmproxy compares the typespec
            "Write every MCP exchange to this JSONL recording as it happens (redacted).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_fail_on", str, FailOn.MUST.value,
            "Which failed requirements count against conformance in the report verdict.",
            choices=FAIL_ON_CHOICES,
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_baseline", Optional[str], None,  # noqa: UP045
            "Known findings (mcp-assay.baseline/1 YAML) the report accepts, each with its reason.",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_sdk", Sequence[str], [],
            "The SDK the peers are built on, as NAME@VERSION (e.g. mcp@2.3.0), instead of recognizing it from what "
            "they show; none: attribute no failure to an SDK.",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_accept_sdk_findings", bool, False,
            "Accept the failures that are known findings of the SDK a peer is built on (they no longer decide the "
            "exit status).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_show", Sequence[str], [],
            "Listings the terminal report gives in full: failed, not-verified, should, notes, known, passed, or all. "
            "Default: the failures by cause, one line per SHOULD finding, the counts.",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_write_baseline", Optional[str], None,  # noqa: UP045
            "Also write a baseline accepting every failure of the session to this file (fill in each reason).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_spec_dir", Optional[str], None,  # noqa: UP045
            "Folder of <revision>/schema.json files (default: $MCP_ASSAY_SPEC_DIR, then the mcp-assay cache).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_spec_path", Sequence[str], [],
            "Use this schema.json even if it matches no pin, as [REVISION=]PATH.",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_secrets", Sequence[str], [],
            "Extra secret values to scrub from the recording, the report and the log "
            "(bearer tokens, cookies and ?token= values are scrubbed anyway).",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_finish_timeout", int, 0,
            "Seconds judging may take once mitmproxy stops; past them the report is written from what was "
            "judged, and says so. 0: as long as judging takes (a second Ctrl-C cuts it short too).",
        )  # fmt: skip
        if self._script:
            loader.add_option(
                "mcp_assay_exit_code", bool, True,
                "Exit with the verdict's exit code when mitmdump stops, as mcp-assay proxy does: 0 conformant (or "
                "conformant in part), 1 a requirement failed at mcp_assay_fail_on, 3 nothing judged. false: "
                "mitmproxy's own exit status (0). The JSON report's verdict.exit_code says the same.",
            )  # fmt: skip
        loader.add_option(
            "mcp_assay_gateway_back", str, "",
            "The listener that is a gateway's upstream (its port, or its whole --mode spec): flows arriving there are "
            "the gateway's back hop (the gateway as a client of the real server), every other flow its front hop "
            "(clients of the gateway). Empty: no gateway is watched.",
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_hop", str, "",
            "Give every flow this hop of a gateway (front or back) when the other hop is captured elsewhere "
            "(mcp-assay tap --hop back); mcp-assay validate judges both recordings together. Empty: none.",
            choices=HOP_CHOICES,
        )  # fmt: skip
        loader.add_option(
            "mcp_assay_live", str, "all",
            "Live output: a line per exchange and findings (all), only findings, or off.",
            choices=list(LIVE_MODES),
        )  # fmt: skip

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx
        from mitmproxy import exceptions as _exceptions

        exceptions: Any = _exceptions
        options = ctx.options
        try:
            if options.mcp_assay_fail_on not in FAIL_ON_CHOICES:
                raise exceptions.OptionsError(
                    f"mcp_assay_fail_on: {options.mcp_assay_fail_on!r} is not one of {', '.join(FAIL_ON_CHOICES)}"
                )
            if options.mcp_assay_finish_timeout < 0:
                raise exceptions.OptionsError("mcp_assay_finish_timeout: seconds, 0 or more")
            if options.mcp_assay_hop not in HOP_CHOICES:
                raise exceptions.OptionsError(f"mcp_assay_hop: {options.mcp_assay_hop!r} is not front or back")
            if options.mcp_assay_gateway_back and options.mcp_assay_hop:
                raise exceptions.OptionsError(
                    "mcp_assay_hop and mcp_assay_gateway_back exclude each other: with both listeners every flow's hop "
                    "comes from the listener it arrived on"
                )
            if options.mcp_assay_live not in LIVE_MODES:
                raise exceptions.OptionsError(
                    f"mcp_assay_live: {options.mcp_assay_live!r} is not one of {', '.join(LIVE_MODES)}"
                )
            self._hops = (options.mcp_assay_hop, options.mcp_assay_gateway_back)  # read for every flow
            if "mcp_assay_report" in updated:
                for value in options.mcp_assay_report:
                    check_writable(value)
                self._reports = list(options.mcp_assay_report)
            if "mcp_assay_record" in updated and options.mcp_assay_record:
                folder = Path(options.mcp_assay_record).expanduser().parent
                if not folder.is_dir():
                    raise exceptions.OptionsError(f"mcp_assay_record: folder {folder} does not exist")
            if "mcp_assay_show" in updated:
                self._show = parse_show(options.mcp_assay_show)
            if "mcp_assay_baseline" in updated:
                self._baseline = read_baseline(options.mcp_assay_baseline, registered_checks())
            if updated & {"mcp_assay_sdk", "mcp_assay_accept_sdk_findings"}:
                self._sdk = parse_sdk(options.mcp_assay_sdk, accept=options.mcp_assay_accept_sdk_findings)
            key = (options.mcp_assay_spec_dir, tuple(options.mcp_assay_spec_path))
            if self._spec is None or (self._spec_key is not None and key != self._spec_key):
                self._spec = load_spec(
                    spec_dir=options.mcp_assay_spec_dir,
                    spec_paths=options.mcp_assay_spec_path,
                    spec_dir_name="mcp_assay_spec_dir",
                )
                self._spec_key = key
            elif self._spec_key is None:
                self._spec_key = key
        except AssayError as exc:
            raise exceptions.OptionsError(str(exc)) from exc
        if self.session is not None and updated & {"mcp_assay_record", "mcp_assay_spec_dir", "mcp_assay_spec_path"}:
            log.warning("mcp-assay: recording and schema options take effect when mitmproxy restarts")

    def running(self) -> None:
        self._ensure_session()
        if not self._set_aside:  # mitmproxy's own process, everything loaded: collector.py says why
            self._set_aside = True
            set_aside_what_is_loaded()
        if self._script:
            self._exit_with_the_verdict()

    def _exit_with_the_verdict(self) -> None:
        """Make mitmdump exit with the verdict's exit code, as ``mcp-assay proxy`` does.

        mitmproxy decides its own exit status (0 once it ran) and has no API for an addon to set it. Raising
        ``SystemExit`` from this addon's ``done`` would skip the ``done`` of every addon after it (``-w`` and
        ``hardump`` write their files there), so the master's ``done`` is wrapped instead: once every addon's
        ``done`` has run, ``SystemExit(code)`` leaves ``master.run()``, ``asyncio.run`` and mitmdump's entry
        point, which is how mitmproxy's own startup checks exit too."""
        from mitmproxy import ctx

        master: Any = ctx.master
        done = master.done

        async def done_then_exit() -> None:
            await done()
            if ctx.options.mcp_assay_exit_code:
                raise SystemExit(self.finished.exit_code if self.finished is not None else 3)

        master.done = done_then_exit

    def _ensure_session(self) -> LiveSession | RemoteSession:
        if self.session is not None:
            return self.session
        from mitmproxy import ctx

        options = ctx.options
        target = Target(kind="proxy", description=self._source(options))
        record = str(Path(options.mcp_assay_record).expanduser()) if options.mcp_assay_record else None
        if not self._in_process:
            self.session = RemoteSession(
                log_level=_log_level(options),
                settings=WorkerSettings(
                    spec_dir=options.mcp_assay_spec_dir,
                    spec_paths=list(options.mcp_assay_spec_path),
                    record=record,
                    record_source=self._source(options),
                    record_options=_recorded_options(options),
                    secrets=list(options.mcp_assay_secrets),
                    live=options.mcp_assay_live,
                    reports=self._reports or self._default_reports,
                    stream=self._stream,
                    fail_on=options.mcp_assay_fail_on,
                    baseline=self._baseline.path if self._baseline is not None else None,
                    show=sorted(self._show),
                    write_baseline=options.mcp_assay_write_baseline,
                    sdk=list(options.mcp_assay_sdk),
                    accept_sdk_findings=options.mcp_assay_accept_sdk_findings,
                    target=target.to_json(),
                ),
            )
            return self.session
        if self._spec is None:
            self._spec = load_spec(spec_dir=options.mcp_assay_spec_dir, spec_paths=options.mcp_assay_spec_path)
        redactor = Redactor(secrets=options.mcp_assay_secrets)
        about = {**provenance(self._spec), "options": _recorded_options(options)}
        recorder = RecordingWriter(record, redactor, source=self._source(options), about=about) if record else None
        printer = Printer(options.mcp_assay_live, console=self._console)
        self.session = LiveSession(
            self._spec,
            redactor=redactor,
            recorder=recorder,
            printer=printer,
            target=target,
            fail_on=FailOn(options.mcp_assay_fail_on),
            baseline=self._baseline,
            sdk=self._sdk,
        )
        return self.session

    def _window(self) -> list[str]:
        return [revision.name for revision in self._spec.window] if self._spec is not None else []

    def _source(self, options: Any) -> str:
        if self._description:
            return self._description
        modes = ", ".join(str(mode) for mode in getattr(options, "mode", []) or [])
        return f"mitmproxy ({modes or 'regular'})"

    # -- hooks ---------------------------------------------------------------------------------------
    def request(self, flow: Any) -> None:
        try:
            request = request_of(flow)
            decision = classify_request(request.method, request.url, request.headers, request.body, self._endpoints)
            if decision is Decision.NOT:
                return
            state = _FlowState(ident=str(flow.id), decision=decision)
            self._flows[state.ident] = state
            if len(request.body) > ANSWER_LIMIT:
                state.cut = f"the request body of {len(request.body)} bytes"
                request = replace(request, body=b"")
            metadata = flow.metadata
            probe = self.injector.probe_of(flow) or marked_probe(request.headers)
            record = http_record(
                state.ident, request, connection=str(flow.client_conn.id), probe=probe, hop=self._hop_of(flow)
            )
            state.awaiting_injection = bool(metadata.get(PENDING))
            if decision is Decision.MCP:
                self._endpoints.add(url_endpoint(request.url))
            if decision is Decision.MCP and not state.awaiting_injection:
                self._feed(record)
            else:
                state.held.append(record)
            metadata["mcp_assay"] = {"exchange": state.ident}
        except Exception:
            log.exception("mcp-assay: could not observe a request; it was forwarded unchanged")

    def responseheaders(self, flow: Any) -> None:
        state = self._flows.get(str(flow.id))
        if state is None or flow.response is None:
            return
        if state.awaiting_injection:
            self._injection_decided(state, flow)
        if flow.metadata.get(CLIENT_LEFT) is not None:
            return  # the client left while mcp-assay held this answer back: it never got it
        head = None
        try:
            head = response_head(flow)
            headers = head[2]
            if is_event_stream(headers) and not flow.metadata.get(WHOLE):
                # first of all: an event stream that is not streamed would be held back until it ends
                self._tee(state, flow, headers.get("content-encoding") or "")
        except Exception:
            log.exception("mcp-assay: could not tee an event stream; it is passed on unobserved")
            if not flow.response.stream and not flow.metadata.get(WHOLE):
                flow.response.stream = True
        try:
            status, reason, headers, started = head if head is not None else response_head(flow)
            state.response_started = True
            state.head = headers
            record = response_record(state.ident, status, reason, headers, started)
            if state.streamed and state.decision is Decision.MAYBE:
                self._decide(state, flow)
            if state.decision is Decision.MCP:
                self._feed(record)
            else:
                state.held.append(record)
        except Exception:
            log.exception("mcp-assay: could not observe a response head; the response is forwarded unchanged")

    def _injection_decided(self, state: _FlowState, flow: Any) -> None:
        """The injector has seen the answer's head: tag the held request with the case it chose, if any."""
        state.awaiting_injection = False
        probe = self.injector.probe_of(flow)
        if probe is not None and state.held and state.held[0].get("type") == "http":
            state.held[0]["probe"] = probe.to_record()  # the held records go to the judging worker as records
        if state.decision is Decision.MCP:
            held, state.held = state.held, []
            for record in held:
                self._feed(record)

    def _tee(self, state: _FlowState, flow: Any, encoding: str) -> None:
        """Stream the event stream through unchanged, parsing a copy as it passes."""
        ident = state.ident

        def on_event(event: SseEvent) -> None:
            self._feed(event_record(ident, event))

        state.parser = SseParser(on_event)
        state.decode = _decoder(encoding)
        state.streamed = True
        if state.decode is None:
            log.warning("mcp-assay: cannot decode a %s event stream; its events are not judged", encoding)

        def tee(chunk: bytes) -> bytes:
            try:
                parser, decode = state.parser, state.decode
                if parser is not None and decode is not None:
                    if chunk:
                        data = decode(chunk)
                        state.teed += len(data)
                        if state.teed > ANSWER_LIMIT:  # past the limit the stream flows on unparsed
                            state.parser = None
                            state.cut = f"the event stream past its first {ANSWER_LIMIT} bytes"
                        else:
                            parser.feed(data, time.time())
                    else:
                        parser.close(time.time())
                        state.parser = None
            except Exception:
                state.parser = None
                log.exception("mcp-assay: stopped parsing an event stream; it keeps flowing unchanged")
            return chunk

        flow.response.stream = tee

    def response(self, flow: Any) -> None:
        try:
            state = self._flows.pop(str(flow.id), None)
            if state is None or flow.response is None:
                return
            left = flow.metadata.get(CLIENT_LEFT)
            if left is not None and state.decision is Decision.MCP:
                self._feed(end_record(state.ident, EndReason.CLIENT_DISCONNECT, float(left), "left while held"))
                return
            headers = state.head if state.head is not None else response_head(flow)[2]
            body = None if state.streamed else response_body(flow, headers)
            if state.decision is Decision.MAYBE:
                if not response_says_mcp(headers, body):
                    return
                self._decide(state, flow)
            end = float(flow.response.timestamp_end or time.time())
            if body and len(body) > ANSWER_LIMIT:
                state.cut = state.cut or f"the response body of {len(body)} bytes"
                body = None
            if body and is_event_stream(headers):
                for event in parse_sse(body, time=end):  # an event stream read whole (an injected one)
                    self._feed(event_record(state.ident, event))
            elif body:
                self._feed({"type": "body", "x": state.ident, "t": end, **body_fields(body)})
            if state.cut:
                self._end_cut(state, end)
            else:
                self._feed(end_record(state.ident, EndReason.COMPLETE, end))
        except Exception:
            log.exception("mcp-assay: could not observe a response; it was forwarded unchanged")

    def error(self, flow: Any) -> None:
        try:
            state = self._flows.pop(str(flow.id), None)
            if state is None or state.decision is not Decision.MCP:
                return
            if state.awaiting_injection:
                self._injection_decided(state, flow)
            if state.parser is not None:
                parser, state.parser = state.parser, None
                parser.close(time.time())
            if state.cut:
                self._end_cut(state, time.time())
                return
            reason, detail = ending_of(flow, response_started=state.response_started)
            left = flow.metadata.get(CLIENT_LEFT)
            self._feed(end_record(state.ident, reason, float(left) if left is not None else time.time(), detail))
        except Exception:
            log.exception("mcp-assay: could not observe a failed flow")

    def server_connect_error(self, data: Any) -> None:
        """mitmproxy could not connect to a server: say so once per outage, and record it (a session whose
        upstream never answered is not judged, and the report says why)."""
        try:
            server = data.server
            address = _address(server.address)
            error = _connect_error(str(server.error or "the connection failed"))
            self._unreachable += 1
            record = observation_record(
                f"unreachable:{self._unreachable}", time.time(), UNREACHABLE, {"address": address, "error": error}
            )
            self._feed(record)
            if address not in self._down:
                self._down.add(address)
                log.warning(
                    "mcp-assay: cannot connect to the server at %s (%s); clients get no answer from it until it "
                    "accepts connections again", address, error,
                )  # fmt: skip
        except Exception:
            log.exception("mcp-assay: could not observe a failed server connection")

    def server_connected(self, data: Any) -> None:
        self._down.discard(_address(getattr(data.server, "address", None)))

    def done(self) -> None:
        session = self.session
        if session is None:
            return
        self._flows.clear()
        try:
            from mitmproxy import ctx

            if isinstance(session, RemoteSession):
                self.finished = session.close(deadline=ctx.options.mcp_assay_finish_timeout or None)
            else:
                stream = sys.stderr if self._stream == "stderr" else sys.stdout
                self.finished = finish(
                    session, self._reports or self._default_reports, stream, show=sorted(self._show),
                    write_baseline=ctx.options.mcp_assay_write_baseline,
                )  # fmt: skip
            if self.finished.error:
                log.error("mcp-assay: no report: %s", self.finished.error)
        except Exception:
            log.exception("mcp-assay: could not write the report")

    # -- helpers -------------------------------------------------------------------------------------
    def _hop_of(self, flow: Any) -> Hop | None:
        """The hop of a gateway a flow crossed: from the listener it arrived on when both are watched."""
        hop, back = self._hops
        if hop:
            return Hop(hop)
        if not back:
            return None
        mode = getattr(flow.client_conn, "proxy_mode", None)
        if mode is None:
            return Hop.FRONT
        port = getattr(mode, "custom_listen_port", None)
        return Hop.BACK if back in (getattr(mode, "full_spec", None), str(port)) else Hop.FRONT

    def _end_cut(self, state: _FlowState, end: float) -> None:
        """End an exchange the addon kept only part of: judged as one whose events were lost, and noted."""
        kept = f"{state.cut} was passed on but not kept (the addon keeps {ANSWER_LIMIT} bytes of one answer)"
        self._feed(end_record(state.ident, EndReason.OPEN, end, f"{kept}; judged as if {EVENTS_LOST}"))
        detail = f"exchange {state.ident}: {kept}; no failure rests on what was not kept"
        self._feed(observation_record(f"cut:{state.ident}", end, "note", {"detail": detail}))

    def _decide(self, state: _FlowState, flow: Any) -> None:
        state.decision = Decision.MCP
        self._endpoints.add(url_endpoint(flow.request.url))
        held, state.held = state.held, []
        for record in held:
            self._feed(record)

    def _feed(self, record: Mapping[str, Any]) -> None:
        session = self.session
        (session if session is not None else self._ensure_session()).feed(record)

    def note(self, record: Mapping[str, Any]) -> None:
        """Hand the session a record a companion made (an observation the report notes)."""
        try:
            self._feed(record)
        except Exception:
            log.exception("mcp-assay: could not note what a companion did")
